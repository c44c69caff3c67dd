"""`texture ls` of a model of many skins makes each skin's image once (its export path comes from
the image already made, not from a lazy path that made it again for its name), and looks the
kind's line function up once, not once per row. Together they were about half its time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from texture_worst_inputs import mdl_many_tiny_skins

from gamepak.content.spec import Verb
from gamepak.formats.quake import mdl
from gamepak.ops import quake_textures

from conftest import in_process_cli

SKINS = 300


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "many.mdl"
    path.write_bytes(mdl_many_tiny_skins(5 * SKINS))
    return path


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of each skin image the MDL reader makes, as it is made."""
    names: list[str] = []
    real = mdl.PaletteImage

    def counted(name: str, *args: Any, **keywords: Any) -> mdl.PaletteImage:
        names.append(name)
        return real(name, *args, **keywords)

    monkeypatch.setattr(mdl, "PaletteImage", counted)
    return names


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
