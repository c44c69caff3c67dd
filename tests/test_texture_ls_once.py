"""`texture ls` of a model of many skins makes each skin's image once (its export path comes from
the image already made, not from a lazy path that made it again for its name), and looks the
kind's line function up once, not once per row. Together they were about half its time.
`texture export` makes each skin's (and sprite frame's) image once too: its file is named from
the name alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from quake_bytes import spr_bytes
from texture_worst_inputs import mdl_many_tiny_skins

from gamepak.content.spec import Verb
from gamepak.formats.quake import mdl
from gamepak.formats.quake.slots import SlotIndex
from gamepak.ops import quake_textures

from conftest import in_process_cli

SKINS = 300


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "many.mdl"
    path.write_bytes(mdl_many_tiny_skins(5 * SKINS))
    return path


def images_made(monkeypatch: pytest.MonkeyPatch, reader: Any) -> list[str]:
    """The name of each image the Quake `reader` module (mdl, spr) makes, as it is made."""
    names: list[str] = []
    real = reader.PaletteImage

    def counted(name: str, *args: Any, **keywords: Any) -> Any:
        names.append(name)
        return real(name, *args, **keywords)

    monkeypatch.setattr(reader, "PaletteImage", counted)
    return names


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of each skin image the MDL reader makes, as it is made."""
    return images_made(monkeypatch, mdl)


def test_listing_makes_each_skin_once(model: Path, made: list[str]) -> None:
    rows = list(quake_textures.list_textures(model))
    assert len(rows) == SKINS
    assert len(made) == SKINS and len(set(made)) == SKINS
    assert [row["image"] for row in rows[:2]] == ["skin0_0", "skin0_1"]


def test_the_path_from_a_made_image_is_the_lazy_one(model: Path) -> None:
    (unit,) = quake_textures.iter_units(model, colours=False)
    assert [unit.path_of(index, image) for index, image in enumerate(unit.images)] == list(unit.image_paths)


def test_ls_looks_the_line_function_up_once(model: Path, made: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    looked_up: list[str] = []
    real = Verb.function

    def function(self: Verb) -> Any:
        looked_up.append(self.function_name)
        return real(self)

    monkeypatch.setattr(Verb, "function", function)
    code, out, err = in_process_cli("texture", "ls", str(model))
    assert code == 0, err
    assert len(out.splitlines()) == SKINS and out.splitlines()[0].endswith("skin0_0")
    assert looked_up.count("ls_line") == 1
    assert len(made) == SKINS


def test_export_makes_each_skin_once(model: Path, made: list[str], tmp_path: Path) -> None:
    """The export names each file from the skin's name alone (`NamedLazy.names`) and makes its
    image once, for the PNG: it made each three times (names pass, path, pixels)."""
    code, _, err = in_process_cli("texture", "export", str(model), "-o", str(tmp_path / "out"))
    assert code == 0, err
    assert len(made) == SKINS and len(set(made)) == SKINS
    written = sorted(path.name for path in (tmp_path / "out").iterdir())
    assert written == sorted(f"skin0_{number}.png" for number in range(SKINS))


def test_export_makes_each_sprite_frame_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gamepak.formats.quake import spr

    frames = images_made(monkeypatch, spr)
    path = tmp_path / "s.spr"
    path.write_bytes(spr_bytes([(1, 1, b"\1"), (2, 1, b"\2\3")], [(0.5, 1, 1, b"\4"), (1.5, 1, 1, b"\5")]))
    code, _, err = in_process_cli("texture", "export", str(path), "-o", str(tmp_path / "out"))
    assert code == 0, err
    assert sorted(frames) == ["frame0", "frame1", "frame2_0", "frame2_1"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [f"{name}.png" for name in sorted(frames)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(1, 4)), min_size=1, max_size=12))
def test_a_name_from_the_index_is_the_name_of_the_made_image(slots: list[int | None]) -> None:
    """`SlotIndex.name_of` (no interval read) names image `index` as `name(locate(index))` does,
    for any run of single images and groups."""
    data = bytes(4 * sum(count or 0 for count in slots))
    index = SlotIndex(data)
    intervals = 0
    for count in slots:
        index.add_slot(None if count is None else intervals)
        for _ in range(count or 1):
            index.add_image(len(index))
        intervals += 4 * (count or 0)
    for number in range(len(index)):
        _, slot, member, _ = index.locate(number)
        assert index.name_of("skin", number) == index.name("skin", slot, member)
