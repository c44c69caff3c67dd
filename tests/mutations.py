"""The breaks the test audit of issue 43 used, and the tests each one must make fail.

A pytest plugin: with GAMEPAK_BREAK=NAME, `pytest -p mutations` applies that break (a monkeypatch
of the library, or of a test harness) before the tests run. `tests/test_mutations.py` runs each
break's tests under it and checks that every one of them fails; by hand:

    PYTHONPATH=src:tests GAMEPAK_BREAK=vcd-target-copy python -m pytest -p mutations \\
        "tests/test_vcdiff.py::test_a_vcd_target_window_copies_from_what_is_already_written"
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from typing import Any

import pytest


def _quake_import_does_nothing(patch: pytest.MonkeyPatch) -> None:
    import gamepak.ops.quake_textures as quake_textures

    patch.setattr(quake_textures, "import_textures", lambda *args, **kwargs: [])


def _locatext_writer_ignores_changes(patch: pytest.MonkeyPatch) -> None:
    import copy

    import gamepak.ops.locatext as locatext

    real = locatext.apply_translation

    def ignored(table: Any, *args: Any, **kwargs: Any) -> Any:
        return real(copy.deepcopy(table), *args, **kwargs)  # the changes go to a copy nobody writes

    patch.setattr(locatext, "apply_translation", ignored)


def _quake_glb_of_12_bytes(patch: pytest.MonkeyPatch) -> None:
    from gamepak.models import quake

    patch.setattr(quake.GltfBuilder, "finish", lambda self, binary: struct.pack("<4sII", b"glTF", 2, 12))


def _scene_glb_of_4_bytes(patch: pytest.MonkeyPatch) -> None:
    from gamepak.models.scene import gltf

    patch.setattr(gltf, "glb_parts", lambda scene: [b"glTF"])


def _nested_pack_without_its_header(patch: pytest.MonkeyPatch) -> None:
    import gamepak.ops.inspect as inspect

    real = inspect.info_details

    def bare(path: str, opened: Any) -> dict[str, Any]:
        details = real(path, opened)
        return {"header": {}, **{key: None for key in details if key != "header"}}

    patch.setattr(inspect, "info_details", bare)


def _unbounded_preview_read(patch: pytest.MonkeyPatch) -> None:
    from gamepak.web import previews

    def whole(place: Any, limit: int) -> bytes:
        with place.open() as stream:
            return stream.read()

    patch.setattr(previews, "read_all", whole)


def _vcd_target_copy_from_the_start(patch: pytest.MonkeyPatch) -> None:
    from gamepak.formats import vcdiff

    real = vcdiff._read_at
    patch.setattr(
        vcdiff, "_read_at", lambda stream, position, length, output, written: real(stream, 0, length, output, written)
    )


def _kill_after_the_edit(patch: pytest.MonkeyPatch) -> None:
    import test_edit_crash

    real = test_edit_crash.run_child
    patch.setattr(test_edit_crash, "run_child", lambda edit, stop_at, report=None: real(edit, None, report))


def _kill_before_the_edit(patch: pytest.MonkeyPatch) -> None:
    import test_edit_crash

    real = test_edit_crash.run_child
    patch.setattr(test_edit_crash, "run_child", lambda edit, stop_at, report=None: real(edit, stop_at and 1, report))


# name -> (the break, the tests it must make fail)
BREAKS: dict[str, tuple[Callable[[pytest.MonkeyPatch], None], list[str]]] = {
    "quake-import-does-nothing": (
        _quake_import_does_nothing,
        [
            "tests/test_quake_images.py::test_unchanged_export_reimports_byte_for_byte",
            "tests/test_quake_images.py::test_real_files_export_and_reimport_byte_exactly",
            "tests/test_quake_images.py::test_quake2_palette_from_colormap_pcx_and_wal_export",
            "tests/test_quake_images.py::test_wad3_images_use_their_own_palette",
            "tests/test_quake_images.py::test_cli_texture_verbs_on_a_wad",
        ],
    ),
    "locatext-writer-ignores-changes": (
        _locatext_writer_ignores_changes,
        ["tests/test_rfg_locatext.py::test_real_arabic_file_one_string_change"],
    ),
    "quake-glb-of-12-bytes": (
        _quake_glb_of_12_bytes,
        [
            "tests/test_quake_web.py::test_models_and_maps_open_in_the_3d_view",
            "tests/test_quake_models.py::test_export_all_converts_quake_models_and_maps",
        ],
    ),
    "scene-glb-of-4-bytes": (_scene_glb_of_4_bytes, ["tests/test_scenes.py::test_scene_cli_info_and_export"]),
    "nested-pack-without-its-header": (
        _nested_pack_without_its_header,
        ["tests/test_web.py::test_nested_packs_open_as_folders"],
    ),
    "unbounded-preview-read": (_unbounded_preview_read, ["tests/test_web.py::test_bomb_like_members_are_bounded"]),
    "vcd-target-copy": (
        _vcd_target_copy_from_the_start,
        ["tests/test_vcdiff.py::test_a_vcd_target_window_copies_from_what_is_already_written[True]"],
    ),
    "kill-after-the-edit": (_kill_after_the_edit, ["tests/test_edit_crash.py::test_kill_during_in_place_jpk_edit"]),
    "kill-before-the-edit": (_kill_before_the_edit, ["tests/test_edit_crash.py::test_kill_during_in_place_jpk_edit"]),
}

_patch = pytest.MonkeyPatch()


def pytest_configure(config: pytest.Config) -> None:
    name = os.environ.get("GAMEPAK_BREAK")
    if name:
        BREAKS[name][0](_patch)


def pytest_unconfigure(config: pytest.Config) -> None:
    _patch.undo()
