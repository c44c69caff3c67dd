"""RFG tables from strangers and for modders: values XML cannot hold, carriage returns, values
outside a schema's rules, findings new against the original pack, spreadsheet formulas, empty
imports, encodings gamepak does not read, budgets (issues 40, 41, 42)."""

from __future__ import annotations

import csv
import io
import json
import shutil
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_rfg_xtbl import ITEMS, ROWS, weapons

import gamepak
from gamepak.errors import GamepakError
from gamepak.formats.rfg.xtbl import Table, TableError
from gamepak.formats.rfg.xtbl.sheet import apply_rows, read_csv, to_csv

from conftest import in_process_cli, pack_members, sample, write_pack

# -- values a cell cannot hold, and \r ---------------------------------------------------------------


@pytest.mark.parametrize("value", ["a\x01b", "\x1f", "x\ud800y", "\udfff", "\ufffe", "end\uffff"])
def test_a_value_xml_cannot_hold_is_refused_when_set_naming_table_row_and_field(value: str) -> None:
    table = Table(weapons(), "weapons.xtbl")
    with pytest.raises(TableError, match=r"weapons\.xtbl: row pistol, Name: character U\+"):
        table.row("pistol")["Name"] = value
    with pytest.raises(TableError, match=r"weapons\.xtbl: row pistol, Groups: character U\+"):
        table.row("pistol")["Groups"] = json.dumps([value])
    with pytest.raises(TableError, match=r"weapons\.xtbl: new row rifle, Spread: character U\+"):
        table.add_row({"Name": "rifle", "Spread": value})
    assert not table.changed and table.write() is table.data


def test_the_library_never_saves_a_table_that_no_longer_parses(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "table.vpp_pc", {"weapons.xtbl": weapons(), "items.xtbl": ITEMS})
    tables = gamepak.tables.open(pack)
    with pytest.raises(TableError, match="row grenade, Name"):
        tables["weapons.xtbl"].row("grenade")["Name"] = "bad\x0bname"
    assert tables.save() == []
    assert pack_members(pack)["weapons.xtbl"] == weapons()


def test_import_of_a_value_xml_cannot_hold_is_refused_before_writing(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "table.vpp_pc", {"weapons.xtbl": weapons(), "items.xtbl": ITEMS})
    sheets = tmp_path / "sheets"
    assert in_process_cli("table", "export", str(pack), "-o", str(sheets), "--as", "json")[0] == 0
    sheet = sheets / "weapons.xtbl.json"
    document = json.loads(sheet.read_text("utf-8"))
    document["rows"][1]["Magazine_Size"] = "3\x02"
    sheet.write_text(json.dumps(document), "utf-8")
    before = pack.read_bytes()
    code, _, err = in_process_cli("table", "import", str(pack), str(sheets))
    assert code == 1 and "weapons.xtbl: row grenade, Magazine_Size: character U+0002" in err
    assert "not well-formed" not in err and pack.read_bytes() == before


@pytest.mark.parametrize("value", ["a\rb", "a\r\nb", "\r", "tab\there\r\n"])
def test_a_carriage_return_survives_a_round_trip(value: str) -> None:
    table = Table(weapons(), "weapons.xtbl")
    table.row("grenade")["Name"] = value
    table.row("pistol")["Groups"] = json.dumps([value])
    again = Table(table.write(), "weapons.xtbl")
    assert again.rows[1]["Name"] == value
    assert json.loads(again.rows[0]["Groups"]) == [value]


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=20))
def test_any_text_is_either_refused_when_set_or_read_back_as_set(value: str) -> None:
    table = Table(weapons(), "weapons.xtbl")
    try:
        table.row("pistol")["Name"] = value or "x"
    except TableError as exc:
        assert "cannot be held by XML 1.0" in str(exc)
        return
    assert Table(table.write(), "w.xtbl").rows[0]["Name"] == (value or "x")


# -- values outside the schema's rules on import ------------------------------------------------------


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    return write_pack(tmp_path / "table.vpp_pc", {"weapons.xtbl": weapons(), "items.xtbl": ITEMS})


def _exported(pack: Path, tmp_path: Path, kind: str = "csv") -> Path:
    sheets = tmp_path / f"sheets-{kind}"
    code, _, err = in_process_cli("table", "export", str(pack), "-o", str(sheets), "--as", kind)
    assert code == 0, err
    return sheets


def test_import_warns_for_a_value_outside_the_choices_and_refuses_it_with_strict(pack: Path, tmp_path: Path) -> None:
    sheets = _exported(pack, tmp_path)
    sheet = sheets / "weapons.xtbl.csv"
    sheet.write_text(sheet.read_text("utf-8-sig").replace(",thrown,", ",laser,"), "utf-8-sig", newline="")
    before = pack.read_bytes()
    code, _, err = in_process_cli("table", "import", str(pack), str(sheets), "--strict")
    assert code == 1 and "Weapon_Class = 'laser': not a choice" in err and "--strict" in err
    assert pack.read_bytes() == before
    code, _, err = in_process_cli("table", "import", str(pack), str(sheets), "--dry-run")
    assert code == 0 and "warning: weapons.xtbl: row grenade: Weapon_Class = 'laser': not a choice" in err
    code, _, err = in_process_cli("table", "import", str(pack), str(sheets))
    assert code == 0 and "warning:" in err and "not a choice" in err
    assert b"<Weapon_Class>laser</Weapon_Class>" in pack_members(pack)["weapons.xtbl"]


def test_import_does_not_warn_for_what_the_table_already_broke(tmp_path: Path) -> None:
    bad = weapons(ROWS.replace(">thrown<", ">laser<"))
    pack = write_pack(tmp_path / "table.vpp_pc", {"weapons.xtbl": bad})
    sheets = _exported(pack, tmp_path)
    sheet = sheets / "weapons.xtbl.csv"
    sheet.write_text(sheet.read_text("utf-8-sig").replace("grenade,1,", "grenade,2,"), "utf-8-sig", newline="")
    code, _, err = in_process_cli("table", "import", str(pack), str(sheets), "--strict")
    assert code == 0 and "warning" not in err and "1 change made" in err


# -- check --base and verify ---------------------------------------------------------------------------


def test_check_base_reports_only_what_is_new(tmp_path: Path) -> None:
    original = weapons(ROWS.replace(">thrown<", ">laser<"))  # the game's own error
    base = write_pack(tmp_path / "base.vpp_pc", {"weapons.xtbl": original, "broken.xtbl": b"<root><Table><R>"})
    modded = tmp_path / "mod.vpp_pc"
    shutil.copyfile(base, modded)
    code, out, err = in_process_cli("table", "check", str(modded))
    assert code == 1 and "laser" in out
    code, out, err = in_process_cli("table", "check", str(modded), "--base", str(base))
    assert code == 0 and out == "" and "0 errors, 0 warnings new against" in err
    tables = gamepak.tables.open(modded)
    tables["weapons.xtbl"].row("pistol")["Magazine_Size"] = "many"
    tables.save()
    code, out, err = in_process_cli("table", "check", str(modded), "--base", str(base), "--json")
    found = json.loads(out)
    assert code == 1 and [(f["row"], f["field"], f["value"]) for f in found] == [("pistol", "Magazine_Size", "many")]
    code, _, err = in_process_cli("verify", str(modded), "--base", str(base))
    assert code == 1 and "1 new value error(s)" in err and "Magazine_Size = 'many'" in err
    assert "broken.xtbl" not in err
    code, _, err = in_process_cli("verify", str(base), "--base", str(base))
    assert code == 0 and "tables:" not in err


def test_verify_folds_the_table_findings_into_one_line(tmp_path: Path) -> None:
    bad_rows = ROWS.replace(">thrown<", ">laser<").replace(">16<", ">x<")
    pack = write_pack(
        tmp_path / "t.vpp_pc",
        {"weapons.xtbl": weapons(bad_rows), "other.xtbl": weapons(bad_rows), "items.xtbl": ITEMS},
    )
    code, _, err = in_process_cli("verify", str(pack))
    lines = [line for line in err.splitlines() if "table" in line]
    assert code == 0 and len(lines) == 1
    assert "tables: 4 value error(s)" in lines[0] and "in 2 table(s)" in lines[0]
    assert f"gamepak table check {pack}" in lines[0]


def test_verify_of_the_real_table_pack_is_a_few_lines_and_nothing_new_against_itself() -> None:
    path = sample("vpp/table.vpp_pc")
    code, _, err = in_process_cli("verify", str(path))
    assert code == 0 and len(err.splitlines()) <= 3, err
    code, out, err = in_process_cli("table", "check", str(path), "--base", str(path))
    assert code == 0 and out == ""


# -- encodings gamepak does not read -------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["UTF-7", "Shift_JIS", "EUC-JP", "klingon"])
def test_a_table_in_an_encoding_not_read_is_one_line_and_never_stops_the_others(tmp_path: Path, encoding: str) -> None:
    odd = f'<?xml version="1.0" encoding="{encoding}"?>'.encode() + weapons()
    pack = write_pack(tmp_path / "t.vpp_pc", {"odd.xtbl": odd, "weapons.xtbl": weapons(), "items.xtbl": ITEMS})
    said = f"odd.xtbl: declares encoding '{encoding}', which gamepak does not read"
    code, out, err = in_process_cli("table", "ls", str(pack))
    assert code == 0 and said in out and "weapons.xtbl  <Weapon>" in out and "items.xtbl" in out
    code, out, err = in_process_cli("table", "check", str(pack))
    assert code == 1 and said in out and "internal error" not in err
    code, _, err = in_process_cli("table", "export", str(pack), "-o", str(tmp_path / "out"))
    assert code == 0 and said in err and "exported 2 tables" in err
    code, _, err = in_process_cli("verify", str(pack))
    assert code == 0 and said in err
    from gamepak.formats.rfg.xtbl.xmldoc import XmlDocument

    with pytest.raises(GamepakError, match=said):
        XmlDocument(odd, "odd.xtbl")  # the byte-keeping editor's reader


@pytest.mark.parametrize("encoding", ["UTF-7", "Shift_JIS"])
def test_a_modinfo_in_an_encoding_not_read_is_one_line(tmp_path: Path, encoding: str) -> None:
    mod = tmp_path / "mod" / "files"
    mod.mkdir(parents=True)
    (mod / "modinfo.xml").write_bytes(
        f'<?xml version="1.0" encoding="{encoding}"?><Mod Name="a"><Changes/></Mod>'.encode()
    )
    game = tmp_path / "game"
    game.mkdir()
    write_pack(game / "table.vpp_pc", {"weapons.xtbl": weapons()})
    for command in (("patch", "info", str(tmp_path / "mod")), ("patch", "check", str(game), str(tmp_path / "mod"))):
        code, _, err = in_process_cli(*command)
        assert code == 1 and f"modinfo.xml: declares encoding '{encoding}'" in err, command
        assert len(err.strip().splitlines()) == 1


def test_patch_make_as_modinfo_ships_a_table_it_cannot_read_whole(tmp_path: Path) -> None:
    odd = b'<?xml version="1.0" encoding="UTF-7"?>' + weapons()
    (tmp_path / "base").mkdir()
    (tmp_path / "mod").mkdir()
    write_pack(tmp_path / "base" / "table.vpp_pc", {"weapons.xtbl": weapons(), "odd.xtbl": weapons()})
    write_pack(
        tmp_path / "mod" / "table.vpp_pc", {"weapons.xtbl": weapons(ROWS.replace(">16<", ">17<")), "odd.xtbl": odd}
    )
    code, _, err = in_process_cli(
        "patch", "make", str(tmp_path / "base"), str(tmp_path / "mod"), "-o", str(tmp_path / "p"), "--as", "modinfo"
    )
    assert code == 0 and "odd.xtbl: declares encoding 'UTF-7'" in err and "internal error" not in err


# -- spreadsheet safety, empty imports, sheets of another table -----------------------------------------


@pytest.mark.parametrize(
    "value", ['=HYPERLINK("http://x")', "+cmd", "-2+3", "@SUM(A1)", "\tx", "\rx", "'quoted", "''", "'=1"]
)
def test_csv_export_protects_cells_a_spreadsheet_would_run_and_import_gives_them_back(value: str) -> None:
    table = Table(weapons(), "weapons.xtbl")
    table.row("grenade")["Weapon_Class"] = value
    sheet = to_csv(Table(table.write(), "weapons.xtbl"))
    cells = list(csv.reader(io.StringIO(sheet.decode("utf-8-sig"), newline="")))
    written = cells[2][cells[0].index("Weapon_Class")]
    assert written == "'" + value
    again = Table(table.write(), "weapons.xtbl")
    assert apply_rows(again, read_csv(sheet, "w.csv"), "w.csv") == []


@pytest.mark.parametrize("value", ["-1.5", "+2", "-3e-05", ".5", "plain", "a=b"])
def test_numbers_and_harmless_cells_are_written_as_they_are(value: str) -> None:
    table = Table(weapons(), "weapons.xtbl")
    table.row("grenade")["Spread"] = value
    sheet = to_csv(Table(table.write(), "weapons.xtbl")).decode("utf-8-sig")
    assert f",{value}," in sheet and f"'{value}" not in sheet


@pytest.mark.parametrize("kind", ["csv", "json"])
@pytest.mark.parametrize("emptied", ["header-only", "no-rows"])
def test_an_import_that_lists_no_row_is_refused_unless_delete(
    pack: Path, tmp_path: Path, kind: str, emptied: str
) -> None:
    sheets = _exported(pack, tmp_path, kind)
    sheet = sheets / f"weapons.xtbl.{kind}"
    if kind == "csv":
        header = sheet.read_text("utf-8-sig").splitlines()[0]
        sheet.write_text(header + ("\r\n" if emptied == "header-only" else "\r\n,,\r\n"), "utf-8-sig", newline="")
    elif emptied == "header-only":
        document = json.loads(sheet.read_text("utf-8"))
        document["rows"] = []
        sheet.write_text(json.dumps(document), "utf-8")
    else:
        sheet.write_text("[]", "utf-8")
    before = pack.read_bytes()
    code, _, err = in_process_cli("table", "import", str(pack), str(sheets))
    assert code == 1 and "lists no row" in err and "--delete" in err and pack.read_bytes() == before
    code, out, err = in_process_cli("table", "import", str(pack), str(sheets), "--delete")
    assert code == 0 and "row pistol removed" in out and "row grenade removed" in out


def test_a_json_sheet_of_another_table_is_refused(pack: Path, tmp_path: Path) -> None:
    sheets = _exported(pack, tmp_path, "json")
    items = json.loads((sheets / "items.xtbl.json").read_text("utf-8"))
    (sheets / "weapons.xtbl.json").write_text(json.dumps(items), "utf-8")
    before = pack.read_bytes()
    code, _, err = in_process_cli("table", "import", str(pack), str(sheets))
    assert code == 1 and "holds rows of <Item>; weapons.xtbl's rows are <Weapon>" in err
    weapons_sheet = json.loads(_exported(pack, tmp_path / "again", "json").joinpath("weapons.xtbl.json").read_text())
    weapons_sheet["key"] = "Magazine_Size"
    (sheets / "weapons.xtbl.json").write_text(json.dumps(weapons_sheet), "utf-8")
    code, _, err = in_process_cli("table", "import", str(pack), str(sheets))
    assert code == 1 and "keyed by Magazine_Size; weapons.xtbl's rows are matched by Name" in err
    assert pack.read_bytes() == before


# -- budgets -------------------------------------------------------------------------------------------


def _traced(work: Callable[[], object]) -> int:
    """The peak of Python's allocations while `work` runs."""
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_table_of_millions_of_empty_elements_is_refused_before_its_tree_is_built(tmp_path: Path) -> None:
    bomb = b"<root><Table>" + b"<A/>" * 2_000_000 + b"</Table></root>"  # 8 MB (the campaign's: 32 MB)
    pack = write_pack(tmp_path / "t.vpp_pc", {"bomb.xtbl": bomb, "weapons.xtbl": weapons()})
    said = "bomb.xtbl: 2000002 elements in 8000028 bytes, more than the 500000 read"
    listed: list[dict[str, object]] = []
    peak = _traced(lambda: listed.extend(gamepak.tables.list_tables(pack)))
    assert said in str(listed[0]["error"]) and "--allow-large" in str(listed[0]["error"])
    assert listed[1]["rows"] == 2 and peak < 3 * len(bomb)
    peak = _traced(lambda: gamepak.tables.check_tables(pack))
    assert peak < 3 * len(bomb)
    code, out, err = in_process_cli("table", "check", str(pack))
    assert code == 1 and said in out
    code, _, err = in_process_cli("table", "export", str(pack), "-o", str(tmp_path / "out"), "--as", "json")
    assert code == 0 and said in err and "exported 1 table" in err
    with pytest.raises(TableError, match="more than the 500000"):
        Table(bomb, "bomb.xtbl")
    from gamepak.formats.rfg.xtbl.xmldoc import XmlDocument

    with pytest.raises(GamepakError, match="more than the 500000"):
        XmlDocument(bomb, "bomb.xtbl")


def test_allow_large_lifts_the_element_budget(tmp_path: Path) -> None:
    dense = b"<root><Table>" + b"<A/>" * 3000 + b"</Table></root>"  # 12 KB: 1,024 elements read
    (tmp_path / "dense.xtbl").write_bytes(dense)
    with pytest.raises(TableError, match="more than the 1024 read"):
        Table(dense, "dense.xtbl")
    code, out, _ = in_process_cli("table", "ls", str(tmp_path / "dense.xtbl"))
    assert code == 0 and "cannot be read" in out
    code, out, _ = in_process_cli("table", "ls", str(tmp_path / "dense.xtbl"), "--allow-large")
    assert code == 0 and "3000" in out
    from gamepak.core.content_limits import limits

    with limits(allow_large=True):
        assert len(Table(dense, "dense.xtbl")) == 3000


@pytest.mark.parametrize("kind", ["csv", "json"])
def test_an_import_adding_a_million_rows_is_refused_before_they_are_built(
    pack: Path, tmp_path: Path, kind: str
) -> None:
    sheets = _exported(pack, tmp_path, kind)
    sheet = sheets / f"weapons.xtbl.{kind}"
    if kind == "csv":
        sheet.write_bytes(sheet.read_bytes() + b"".join(b"r%d,1\r\n" % number for number in range(1_000_000)))
    else:
        document = json.loads(sheet.read_text("utf-8"))
        sheet.write_text(
            json.dumps({**document, "rows": document["rows"] + [{"Name": f"r{n}"} for n in range(1_000_000)]}),
            "utf-8",
        )
    before = pack.read_bytes()
    codes: list[tuple[int, str, str]] = []
    peak = _traced(lambda: codes.append(in_process_cli("table", "import", str(pack), str(sheets), "--dry-run")))
    code, _, err = codes[0]
    assert code == 1 and "more than the 500000 elements a table may hold" in err and "--allow-large" in err
    assert peak < 4 * sheet.stat().st_size and pack.read_bytes() == before


def test_rows_added_past_the_element_budget_are_refused_before_they_are_built() -> None:
    from gamepak.core.content_limits import limits

    table = Table(weapons(), "weapons.xtbl")
    for number in range(100):
        table.add_row({"Name": f"r{number}", "Spread": "1"})
    refused = "100 rows added would make 405 elements or more, more than the 150"
    with limits(table_elements=150), pytest.raises(TableError, match=refused):
        table.write()
    with limits(table_elements=150, allow_large=True):
        assert len(Table(table.write(), "w.xtbl")) == 102


@pytest.mark.parametrize(
    "document",
    [
        b"<root><Table><A><x/><y/></A><B><x/></B><A/></Table></root>",
        b'<root xmlns:p="u"><Table><p:A><p:x/></p:A></Table></root>',
        b"<root><Table/></root>",
        b"<root><Other/><Table><R><c>1</c></R></Table><Table><Z/></Table></root>",
        b"<root><Table><R><Table><Q/></Table></R></Table></root>",
    ],
)
def test_ls_of_a_table_without_schema_counts_without_the_tree(document: bytes) -> None:
    from gamepak.formats.rfg.xtbl import summarize

    table = Table(document, "m.xtbl")
    tags = {child.tag for element in table.elements for child in element}
    expected = {"member": "m.xtbl", "table": table.name, "rows": len(table), "columns": len(tags), "schema": False}
    assert summarize(document, "m.xtbl") == expected


def test_ls_of_the_largest_table_the_budget_lets_through_stays_near_its_size() -> None:
    from gamepak.formats.rfg.xtbl import summarize

    dense = b"<root><Table>" + b"<A>abcdefgh</A>" * 200_000 + b"</Table></root>"  # 3 MB, 15 bytes an element
    found: list[dict[str, object]] = []
    peak = _traced(lambda: found.append(summarize(dense, "dense.xtbl")))
    assert found[0]["rows"] == 200_000 and peak < 2 * len(dense)  # the tree took 12 times its bytes


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=12))
def test_a_protected_cell_never_starts_a_formula_and_reads_back_as_it_was(value: str) -> None:
    from gamepak.formats.rfg.xtbl.sheet import protect_cell, unprotect_cell

    written = protect_cell(value)
    assert unprotect_cell(written) == value
    if written.startswith(("=", "+", "-", "@", "\t", "\r")):
        assert written.isascii() and float(written) is not None  # a plain number, left as it is
