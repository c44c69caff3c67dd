"""`patch make --as modinfo`: table changes as SyncFaction <Edit> blocks that carry only the
changed rows and fields, so two mods of different rows of one table merge."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_rfg_xtbl import ITEMS, weapons

import gamepak
from gamepak.cli import main
from gamepak.formats.rfg.xtbl import Table
from gamepak.ops.patch.xmledit import parse_tree

from conftest import pack_members, write_pack


@pytest.fixture
def game(tmp_path: Path) -> Path:
    data = tmp_path / "game" / "data"
    write_pack(data / "table.vpp_pc", {"weapons.xtbl": weapons(), "items.xtbl": ITEMS, "notes.txt": b"a"})
    return tmp_path / "game"


def modded_copy(game: Path, folder: Path, change: object) -> Path:
    shutil.copytree(game, folder)
    tables = gamepak.tables.open(folder / "data" / "table.vpp_pc")
    change(tables)  # type: ignore[operator]
    tables.save()
    return folder


def weapons_of(game: Path) -> Table:
    return Table(pack_members(game / "data" / "table.vpp_pc")["weapons.xtbl"], "weapons.xtbl")


def make_mod(game: Path, modded: Path, output: Path) -> tuple[int, str]:
    from conftest import in_process_cli

    code, _, err = in_process_cli("patch", "make", str(game), str(modded), "--as", "modinfo", "-o", str(output))
    return code, err


def test_two_mods_of_different_rows_apply_together(game: Path, tmp_path: Path) -> None:
    def stronger_pistol(tables: gamepak.tables.Tables) -> None:
        pistol = tables["weapons.xtbl"].row("pistol")
        pistol["Damage.Max"] = "15"
        pistol["Flags"] = '["shatter", "can fine aim"]'

    def more_grenades(tables: gamepak.tables.Tables) -> None:
        table = tables["weapons.xtbl"]
        table.row("grenade")["Magazine_Size"] = "3"
        table.add_row({"Name": "rifle", "Magazine_Size": "30"})

    code, err = make_mod(game, modded_copy(game, tmp_path / "a", stronger_pistol), tmp_path / "mod_a")
    assert code == 0, err
    modinfo = (tmp_path / "mod_a" / "modinfo.xml").read_text()
    edit = parse_tree(modinfo.encode(), "modinfo.xml").elements()[2].elements()[0]
    assert edit.attribute("LIST_ACTION") == "COMBINE_BY_FIELD:Name"
    assert edit.attribute("File") == "data\\table.vpp_pc\\weapons.xtbl"
    (row,) = edit.elements()
    # Only the key and the changed fields, in the row's order: Flags whole with REPLACE, Damage
    # with only Max.
    assert [child.name for child in row.elements()] == ["Name", "Flags", "Damage"]
    assert row.elements()[1].attribute("LIST_ACTION") == "REPLACE"
    assert [(c.name, c.text()) for c in row.elements()[2].elements()] == [("Max", "15")]
    code, err = make_mod(game, modded_copy(game, tmp_path / "b", more_grenades), tmp_path / "mod_b")
    assert code == 0, err
    modinfo_b = (tmp_path / "mod_b" / "modinfo.xml").read_text()
    assert 'LIST_ACTION="ADD"' in modinfo_b and "<Name>rifle</Name><Magazine_Size>30</Magazine_Size>" in modinfo_b
    assert "Replace" not in modinfo + modinfo_b and "warning" not in err

    before = weapons_of(game).data
    plan = gamepak.patch.apply(game, [tmp_path / "mod_a", tmp_path / "mod_b"])
    assert plan.ok
    merged = weapons_of(game)
    assert merged.row("pistol")["Damage.Max"] == "15" and merged.row("pistol")["Damage.Min"] == "5"
    assert merged.row("pistol")["Flags"] == '["shatter", "can fine aim"]'
    assert merged.row("grenade")["Magazine_Size"] == "3" and merged.row("rifle")["Magazine_Size"] == "30"
    # The rest of the table keeps its bytes: the first changed line is the pistol's Flags.
    assert merged.data[: before.index(b"<Flags>")] == before[: before.index(b"<Flags>")]


def test_what_edits_cannot_say_is_replaced_and_said(game: Path, tmp_path: Path) -> None:
    def remove_grenade(tables: gamepak.tables.Tables) -> None:
        table = tables["weapons.xtbl"]
        table.remove_row(table.row("grenade").index)

    modded = modded_copy(game, tmp_path / "modded", remove_grenade)
    with gamepak.edit(modded / "data" / "table.vpp_pc") as pack:
        pack.replace("notes.txt", b"b")
    code, err = make_mod(game, modded, tmp_path / "mod")
    assert code == 0
    assert "weapons.xtbl: shipped whole as <Replace>: row grenade is removed" in err
    assert "notes.txt: shipped whole as <Replace>: not a table" in err
    modinfo = (tmp_path / "mod" / "modinfo.xml").read_text()
    assert 'NewFile="files\\data\\table.vpp_pc\\weapons.xtbl"' in modinfo
    assert (tmp_path / "mod" / "files" / "data" / "table.vpp_pc" / "notes.txt").read_bytes() == b"b"
    assert main(["patch", "apply", str(game), str(tmp_path / "mod")]) == 0
    assert [row.key for row in weapons_of(game).rows] == ["pistol"]


def test_nothing_changed_writes_no_mod(game: Path, tmp_path: Path) -> None:
    code, err = make_mod(game, modded_copy(game, tmp_path / "same", lambda tables: None), tmp_path / "mod")
    assert code == 1 and "would be empty" in err and not (tmp_path / "mod").exists()
