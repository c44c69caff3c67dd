#!/usr/bin/env python3
"""Fuzz the VDrift scene readers (`models.scene.load`): a data folder holding tracks
(`tracks/<name>/objects/list.txt`, `objects.jpk` or loose JOE models, textures, `track.txt`,
`surfaces.txt`, `about.txt`) and cars (`cars/<name>/<name>.car`, its JOE parts and textures,
shared `carparts/`). Every track and car in it is read, summarised and saved as `.glb`, `.gltf`
(images beside it) and `.obj`; a bad folder may only be refused with a gamepak error, and
missing or unreadable parts are warnings.

Names in list.txt and `.car` files must stay inside the folders VDrift looks in: the harness
plants links in `carparts/` that lead out of the data folder (`outside.png`, `outside/`), and
no file outside the data folder may be opened, whether the scene is read confined to it (as
the web viewer reads) or not. Whatever is saved lands in the output folder only.

An input is the data folder in `_fuzzing.unframe`'s framing (paths relative to it).

    python fuzz/fuzz_read_scene.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

import builtins
import os
import shutil
import struct
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from _fuzzing import expected_errors, fuzz, glb_document, scratch_folder, unframe, write_files

SAVED_FORMATS = (".glb", ".gltf", ".obj")


def png(width: int = 2, height: int = 2, alpha: int | None = None) -> bytes:
    """A small PNG (RGB, or RGBA with every pixel at `alpha`), made with zlib alone."""
    channels = 3 if alpha is None else 4
    pixel = bytes([200, 100, 50] + ([] if alpha is None else [alpha]))
    rows = b"".join(b"\0" + pixel * width for _ in range(height))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 6 if channels == 4 else 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def _plant_links(root: str, data: str) -> None:
    """A folder beside the data folder with an image in it, and links to both from carparts/."""
    outside = os.path.join(root, "outside")
    os.makedirs(outside)
    with open(os.path.join(outside, "secret.png"), "wb") as handle:
        handle.write(png())
    parts = os.path.join(data, "carparts")
    os.makedirs(parts, exist_ok=True)
    for name, target in (("outside.png", os.path.join(outside, "secret.png")), ("outside", outside)):
        if not os.path.lexists(os.path.join(parts, name)):
            os.symlink(target, os.path.join(parts, name))


@contextmanager
def files_opened() -> Iterator[list[str]]:
    """The paths opened (by `open` or `os.open`) inside the block, as opened."""
    opened: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def spy_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        handle = real_open(file, *args, **kwargs)
        if isinstance(file, (str, bytes, os.PathLike)):
            opened.append(os.fsdecode(file))
        return handle

    def spy_os_open(path: Any, *args: Any, **kwargs: Any) -> int:
        fd = real_os_open(path, *args, **kwargs)
        if kwargs.get("dir_fd") is None:
            opened.append(os.fsdecode(path))
        return fd

    builtins.open, os.open = spy_open, spy_os_open  # type: ignore[assignment]
    try:
        yield opened
    finally:
        builtins.open, os.open = real_open, real_os_open  # type: ignore[assignment]


def _scene_folders(data: str) -> list[str]:
    found = []
    for kind in ("tracks", "cars"):
        folder = os.path.join(data, kind)
        if os.path.isdir(folder):
            found += [os.path.join(folder, name) for name in sorted(os.listdir(folder))]
    return found


def _check_saved(scene: object, out: str) -> None:
    from gamepak.models import scene as scenes

    for extension in SAVED_FORMATS:
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        written = None
        with expected_errors():
            written = scenes.save(scene, os.path.join(out, f"scene{extension}"))  # type: ignore[arg-type]
        if written is None:
            continue
        real_out = os.path.realpath(out)
        for path in written:
            assert os.path.dirname(os.path.realpath(path)) == real_out, f"{path} was written outside {out}"
        assert sorted(os.listdir(out)) == sorted(os.path.basename(path) for path in written), "files left behind"
        if extension == ".glb":
            with open(written[0], "rb") as handle:
                glb_document(handle.read())


def TestOneInput(data: bytes) -> None:
    from gamepak.models import scene as scenes

    files = unframe(data)
    if files is None:
        return
    root = os.path.join(scratch_folder(), "scene")
    shutil.rmtree(root, ignore_errors=True)
    folder = os.path.join(root, "data")
    if not write_files(folder, files):
        return
    _plant_links(root, folder)
    confine = os.path.realpath(folder)
    for place in _scene_folders(folder):
        if not os.path.isdir(place) or not scenes.is_scene(place):
            continue
        for confined in (False, True):
            scene = None
            with files_opened() as opened, expected_errors():
                scene = scenes.load(place, confine=confine if confined else None)
            # Every folder a scene here looks in lies inside the data folder: confined or not, no
            # link may lead the reader out of it.
            for path in opened:
                real = os.path.realpath(path)
                assert os.path.commonpath([real, confine]) == confine, f"read {real}, outside {confine}"
            if scene is None:
                continue
            scene.summary()
            _check_saved(scene, os.path.join(root, "out"))


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.joepack", "gamepak.models")


if __name__ == "__main__":
    main()
