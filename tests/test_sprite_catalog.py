"""The catalog's textures table lists Gameloft J2ME sprites: one row per sprite member of a J2ME
pack (format "bsprite", its largest module's size, its modules, frames, anims, palettes and
encoding); a malformed sprite is an errors row; other members and other textures are as before."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sprite_bytes import simple_sprite

import gamepak

from conftest import sample

pytest.importorskip("pyarrow")
from gamepak.catalog import build_catalog
from gamepak.catalog.schema import read_table


def test_sprites_are_rows_of_the_textures_table(tmp_path: Path) -> None:
    root = tmp_path / "in"
    root.mkdir()
    with gamepak.create(root / "gen1.f", "j2me-table") as writer:
        writer.add("0", simple_sprite())
        writer.add("1", b"MThd a tune, not a sprite")
        writer.add("2", simple_sprite()[:-1])  # cut short: an errors row
    out = tmp_path / "out"
    build_catalog([str(root)], str(out), scheduler="synchronous")
    rows = read_table(str(out), "textures").to_pylist()
    assert [
        (
            r["peg"],
            r["name"],
            r["format"],
            r["width"],
            r["height"],
            r["modules"],
            r["frames"],
            r["anims"],
            r["palettes"],
            r["encoding"],
        )
        for r in rows
    ] == [("0", "sprite", "bsprite", 2, 2, 2, 2, 1, 1, "I256")]
    errors = [e for e in read_table(str(out), "errors").to_pylist() if e["stage"] == "textures"]
    assert [e["member"] for e in errors] == ["2"] and "sprite:" in errors[0]["message"]


def test_the_sample_packs_sprites_are_all_listed(tmp_path: Path) -> None:
    root = tmp_path / "in"
    root.mkdir()
    for name in ("gen1.f", "ui.f", "demoSpr.bin", "tipst.f"):
        shutil.copyfile(sample(f"gameloft/{name}"), root / name)
    out = tmp_path / "out"
    build_catalog([str(root)], str(out), scheduler="synchronous")
    rows = read_table(str(out), "textures").to_pylist()
    counts = {
        name: sum(1 for r in rows if r["archive_path"].endswith(name))
        for name in ("gen1.f", "ui.f", "demoSpr.bin", "tipst.f")
    }
    assert counts == {"gen1.f": 10, "ui.f": 5, "demoSpr.bin": 3, "tipst.f": 0}
    assert {r["encoding"] for r in rows} == {"I16", "I127RLE", "I4"}
