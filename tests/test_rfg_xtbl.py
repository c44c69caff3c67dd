"""RFG tables (.xtbl): the model, check, CSV/JSON round trips, `gamepak table`, verify's hook.

Tables are built here from the shapes the schema documents (formats/rfg/xtbl/schema.py); the
real table.vpp_pc is an extra layer."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.errors import GamepakError
from gamepak.formats.rfg.xtbl import Table, TableError, parallel, summarize
from gamepak.formats.rfg.xtbl.check import ReferenceIndex, check_table
from gamepak.formats.rfg.xtbl.schema import Field, Schema
from gamepak.formats.rfg.xtbl.sheet import apply_rows, read_csv, read_json, to_csv, to_json

from conftest import in_process_cli, pack_members, sample, write_pack

DESCRIPTION = """\
\t<TableDescription>
\t\t<Name>Weapon</Name>
\t\t<Type>TableDescription</Type>
\t\t<Element><Name>Name</Name><Type>String</Type><Description>Unique name.</Description></Element>
\t\t<Element><Name>Magazine_Size</Name><Type>Int</Type></Element>
\t\t<Element><Name>Spread</Name><Type>Float</Type></Element>
\t\t<Element><Name>Weapon_Class</Name><Type>Selection</Type><Choice>bullet</Choice><Choice>thrown</Choice></Element>
\t\t<Element><Name>Flags</Name><Type>Flags</Type><Flag>shatter</Flag><Flag>can fine aim</Flag></Element>
\t\t<Element><Name>Item</Name><Type>Reference</Type>
\t\t\t<Reference><File>items.xtbl</File><Type>Item.Name</Type></Reference></Element>
\t\t<Element><Name>Effect</Name><Type>Filename</Type><Extension>effect</Extension></Element>
\t\t<Element><Name>Groups</Name><Type>List</Type>
\t\t\t<Element><Name>Group</Name><Type>String</Type></Element></Element>
\t\t<Element><Name>Requirements</Name><Type>Grid</Type>
\t\t\t<Element><Name>Requirement</Name><Type>Element</Type>
\t\t\t\t<Element><Name>Stat</Name><Type>String</Type></Element>
\t\t\t\t<Element><Name>Value</Name><Type>Float</Type></Element></Element></Element>
\t\t<Element><Name>Offset</Name><Type>Vector</Type>
\t\t\t<X><Name>X</Name><Type>Float</Type></X><Y><Name>Y</Name><Type>Float</Type></Y>
\t\t\t<Z><Name>Z</Name><Type>Float</Type></Z></Element>
\t\t<Element><Name>Damage</Name><Type>Element</Type>
\t\t\t<Element><Name>Min</Name><Type>Int</Type></Element>
\t\t\t<Element><Name>Max</Name><Type>Int</Type></Element></Element>
\t</TableDescription>
"""
ROWS = """\
\t\t<Weapon>
\t\t\t<Name>pistol</Name>
\t\t\t<Magazine_Size>16</Magazine_Size>
\t\t\t<Spread>1.5</Spread>
\t\t\t<Weapon_Class>bullet</Weapon_Class>
\t\t\t<!-- a comment the game's editor left -->
\t\t\t<Flags>
\t\t\t\t<Flag>shatter</Flag>
\t\t\t</Flags>
\t\t\t<Item>pistol_item</Item>
\t\t\t<Effect><Filename>muzzle.effect</Filename></Effect>
\t\t\t<Groups><Group>a</Group><Group>b</Group></Groups>
\t\t\t<Requirements>
\t\t\t\t<Requirement><Stat>kills</Stat><Value>3</Value></Requirement>
\t\t\t</Requirements>
\t\t\t<Offset><X>0.0</X><Y>1.0</Y><Z>2.0</Z></Offset>
\t\t\t<Damage><Min>5</Min><Max>9</Max></Damage>
\t\t\t<_Editor><Category>Entries</Category></_Editor>
\t\t</Weapon>
\t\t<Weapon>
\t\t\t<Name>grenade</Name>
\t\t\t<Magazine_Size>1</Magazine_Size>
\t\t\t<Weapon_Class>thrown</Weapon_Class>
\t\t</Weapon>
"""


def weapons(rows: str = ROWS, newline: str = "\n", description: str = DESCRIPTION) -> bytes:
    text = f"<root>\n\t<Table>\n{rows}\t</Table>\n\t<TableTemplates></TableTemplates>\n{description}</root>\n"
    return text.replace("\n", newline).encode("utf-8")


ITEMS = b"<root><Table><Item><Name>pistol_item</Name></Item></Table></root>"
# Parses (the tree is read lazily) but its rows cannot be flattened: elements nested too deep.
DEEP = ("<root><Table><Item>" + "<a>" * 300 + "</a>" * 300 + "</Item></Table></root>").encode()


def changed_lines(old: bytes, new: bytes) -> list[tuple[bytes, bytes]]:
    old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    assert len(old_lines) == len(new_lines)
    return [(a, b) for a, b in zip(old_lines, new_lines) if a != b]


# -- the model -------------------------------------------------------------------------------------


def _field(schema: Schema, path: str) -> Field:
    """The field `path` names, which the test's table holds."""
    found = schema.field(path)
    assert found is not None, path
    return found


def test_schema_from_the_table_description() -> None:
    table = Table(weapons(), "weapons.xtbl")
    schema = table.schema
    assert schema.described and schema.row_tag == "Weapon" and table.name == "Weapon"
    kinds = {field.name: field.kind for field in schema.fields}
    assert kinds["Weapon_Class"] == "Selection" and kinds["Requirements"] == "Grid" and kinds["Offset"] == "Vector"
    assert _field(schema, "Weapon_Class").choices == ["bullet", "thrown"]
    assert _field(schema, "Flags").flags == ["shatter", "can fine aim"]
    assert _field(schema, "Item").reference == ("items.xtbl", ["Item", "Name"])
    assert _field(schema, "Effect").extension == "effect"
    assert _field(schema, "Groups").item_tag == "Group" and _field(schema, "Flags").item_tag == "Flag"
    assert [child.name for child in _field(schema, "Offset").children] == ["X", "Y", "Z"]
    assert _field(schema, "Damage.Max").kind == "Int" and _field(schema, "Name").description == "Unique name."


def test_rows_as_cells_with_dotted_and_json_columns() -> None:
    table = Table(weapons(), "weapons.xtbl")
    assert len(table) == 2 and table.key == "Name"
    pistol = table.row("pistol")
    assert pistol["Magazine_Size"] == "16" and pistol["Damage.Min"] == "5" and pistol["Offset.Y"] == "1.0"
    assert pistol["Effect.Filename"] == "muzzle.effect" and pistol["_Editor.Category"] == "Entries"
    assert json.loads(pistol["Flags"]) == ["shatter"] and json.loads(pistol["Groups"]) == ["a", "b"]
    assert json.loads(pistol["Requirements"]) == [{"Stat": "kills", "Value": "3"}]
    assert table.row("grenade")["Spread"] == "" and "Spread" not in table.row("grenade").cells
    assert table.columns[:4] == ["Name", "Magazine_Size", "Spread", "Weapon_Class"]
    assert "_Editor.Category" in table.columns and table.is_json("Requirements")
    with pytest.raises(TableError, match="no row with Name 'rifle'"):
        table.row("rifle")


def test_unchanged_tables_write_their_own_bytes() -> None:
    for data in (
        weapons(),
        weapons(newline="\r\n"),
        ITEMS,
        "<root><Table><R><N>é</N></R></Table></root>".encode("latin-1"),
    ):
        table = Table(data, "t.xtbl")
        table.cells()
        assert table.write() is data


def test_a_changed_cell_changes_only_that_element() -> None:
    for newline in ("\n", "\r\n"):
        data = weapons(newline=newline)
        table = Table(data, "weapons.xtbl")
        table.row("pistol")["Damage.Max"] = "12"
        table.row("grenade")["Magazine_Size"] = "2 & <3>"
        new = table.write()
        assert changed_lines(data, new) == [
            (
                f"\t\t\t<Damage><Min>5</Min><Max>9</Max></Damage>{newline}".encode(),
                f"\t\t\t<Damage><Min>5</Min><Max>12</Max></Damage>{newline}".encode(),
            ),
            (
                f"\t\t\t<Magazine_Size>1</Magazine_Size>{newline}".encode(),
                f"\t\t\t<Magazine_Size>2 &amp; &lt;3&gt;</Magazine_Size>{newline}".encode(),
            ),
        ]
        again = Table(new, "weapons.xtbl")
        assert again.row("grenade")["Magazine_Size"] == "2 & <3>" and again.row("pistol")["Damage.Max"] == "12"


def test_json_cells_rows_added_and_removed() -> None:
    data = weapons()
    table = Table(data, "weapons.xtbl")
    table.row("pistol")["Flags"] = '["shatter", "can fine aim"]'
    table.add_row({"Name": "rifle", "Magazine_Size": "30", "Damage.Min": "1", "Groups": '["x"]', "Spread": ""})
    table.remove_row(table.row("grenade").index)
    new = table.write()
    text = new.decode()
    assert "\t\t\t\t<Flag>shatter</Flag>\n\t\t\t\t<Flag>can fine aim</Flag>\n\t\t\t</Flags>" in text
    assert "grenade" not in text and "<Spread></Spread>" not in text
    again = Table(new, "weapons.xtbl")
    assert [row.key for row in again.rows] == ["pistol", "rifle"]
    rifle = again.row("rifle")
    assert rifle.cells == {"Name": "rifle", "Magazine_Size": "30", "Groups": '["x"]', "Damage.Min": "1"}
    assert "\t\t<Weapon>\n\t\t\t<Name>rifle</Name>\n\t\t\t<Magazine_Size>30</Magazine_Size>\n" in text
    # Everything before the first changed row is the input's own bytes.
    assert new[: data.index(b"<Flags>")] == data[: data.index(b"<Flags>")]


def test_columns_inferred_without_a_schema_and_keys_by_position() -> None:
    data = b"<root><Table><Row><A>1</A><B><C>x</C></B></Row><Row><A>1</A><L><I>1</I><I>2</I></L></Row></Table></root>"
    table = Table(data, "t.xtbl")
    assert not table.schema.described and table.name == "Row"
    assert table.columns == ["A", "B.C", "L"] and table.key == "#"
    assert json.loads(table.rows[1]["L"]) == [{"<I>": "1"}, {"<I>": "2"}]
    assert [row.key for row in table.rows] == ["1", "2"]
    document = json.loads(to_json(table))  # JSON rows of a keyless table: by position too
    document["rows"][0]["A"] = "5"
    assert apply_rows(table, read_json(json.dumps(document).encode(), "t.json", table), "t.json") == [
        "t.xtbl: row 1: A: '1' -> '5'"
    ]
    table.set(1, "L", '[{"<I>": "3"}, {"<I>": "4"}]')
    assert Table(table.write(), "t.xtbl").rows[1]["L"] == '[{"<I>": "3"}, {"<I>": "4"}]'


def test_a_schema_that_contradicts_its_rows_gives_json_cells() -> None:
    # The schema says Magazine_Size is an Int; a row holds elements there: kept whole, as JSON.
    rows = "\t\t<Weapon><Name>odd</Name><Magazine_Size><A>1</A><A>2</A></Magazine_Size></Weapon>\n"
    table = Table(weapons(rows), "weapons.xtbl")
    assert table.is_json("Magazine_Size")
    assert json.loads(table.row("odd")["Magazine_Size"]) == [{"<A>": "1"}, {"<A>": "2"}]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"<root><Table><R>", "not well-formed"),
        (b"<root><Other/></root>", "no <Table> in its <root>"),
        (b"<level><Table/></level>", "its root is <level>"),
        (b'<!DOCTYPE r [<!ENTITY a "aaaa">]><root><Table>&a;</Table></root>', "DTD"),
        # Found by reading: the DTD was looked for as ASCII bytes, so a UTF-16 table's entities
        # were expanded (1 MB from a 1.2 KB file; more in larger files).
        ('<!DOCTYPE r [<!ENTITY a "aaaa">]><root><Table>&a;</Table></root>'.encode("utf-16"), "DTD"),
        ('<!DOCTYPE r [<!ENTITY a "aaaa">]><root><Table>&a;</Table></root>'.encode("utf-16-be"), "DTD"),
        (b"<root><Table>" + b"<a>" * 300 + b"</a>" * 300 + b"</Table></root>", "nested more than"),
        (
            b'<?xml version="1.0" encoding="klingon"?><root><Table/></root>',
            "declares encoding 'klingon', which gamepak does not read",
        ),
    ],
)
def test_bad_tables_are_refused_naming_the_member(data: bytes, message: str) -> None:
    with pytest.raises(TableError, match=message) as caught:
        Table(data, "bad.xtbl").cells()
    assert str(caught.value).startswith("bad.xtbl: ")


def test_summary_without_the_tree_matches_the_model() -> None:
    nested = ROWS.replace("<Damage>", "<Damage><Weapon>inner</Weapon>")
    for data in (weapons(), weapons(nested), ITEMS):
        table = Table(data, "t.xtbl")
        summary = summarize(data, "t.xtbl")
        assert summary["rows"] == len(table) and summary["table"] == table.name
        assert summary["schema"] == table.schema.described
    assert summarize(weapons(), "w.xtbl")["columns"] == 11
    with pytest.raises(TableError, match="not well-formed"):
        summarize(weapons()[:-20], "w.xtbl")


# -- check -----------------------------------------------------------------------------------------


def test_check_names_each_bad_value() -> None:
    rows = (
        ROWS.replace("<Magazine_Size>16<", "<Magazine_Size>sixteen<")
        .replace("<Spread>1.5<", "<Spread>1,5<")
        .replace("<Weapon_Class>thrown<", "<Weapon_Class>laser<")
        .replace("<Flag>shatter<", "<Flag>glow<")
        .replace("<Item>pistol_item<", "<Item>no_item<")
        .replace("muzzle.effect", "muzzle.png")
        .replace("<Value>3<", "<Value>x<")
        .replace("<_Editor>", "<Unknown>1</Unknown><_Editor>")
    )
    table = Table(weapons(rows), "weapons.xtbl")
    index = ReferenceIndex({"items.xtbl": Table(ITEMS, "items.xtbl")})
    found = {(f.row, f.field, f.value, f.kind, f.severity) for f in check_table(table, index)}
    assert found == {
        ("pistol", "Magazine_Size", "sixteen", "not an integer", "error"),
        ("pistol", "Spread", "1,5", "not a number", "error"),
        ("grenade", "Weapon_Class", "laser", "not a choice", "error"),
        ("pistol", "Flags", "glow", "not a flag", "error"),
        ("pistol", "Item", "no_item", "no such row in items.xtbl", "warning"),
        ("pistol", "Effect.Filename", "muzzle.png", "no .effect extension", "warning"),
        ("pistol", "Requirements", "x", "not a number", "error"),
        ("pistol", "Unknown", "1", "not in the schema", "warning"),
    }
    # Without items.xtbl at hand the reference is not checked, and counted.
    unchecked = ReferenceIndex({})
    assert not [f for f in check_table(table, unchecked) if f.field == "Item"] and unchecked.not_checked == 1
    assert check_table(Table(weapons(), "weapons.xtbl"), index) == []
    # An edited table is checked from its cells' text.
    edited = Table(weapons(), "weapons.xtbl")
    edited.row("pistol")["Flags"] = '["shatter", "glow"]'
    edited.row("pistol")["Requirements"] = '[{"Stat": "a", "Value": "many"}]'
    found_edited = {(f.field, f.value, f.kind) for f in check_table(edited, index)}
    assert found_edited == {("Flags", "glow", "not a flag"), ("Requirements", "many", "not a number")}


# -- CSV and JSON ----------------------------------------------------------------------------------


def test_csv_round_trip_changes_nothing_then_only_the_edited_cell() -> None:
    data = weapons()
    table = Table(data, "weapons.xtbl")
    sheet = to_csv(table)
    assert sheet.startswith(b"\xef\xbb\xbfName,Magazine_Size,") and b"\r\n" in sheet
    assert apply_rows(table, read_csv(sheet, "w.csv"), "w.csv") == [] and table.write() is data
    rows = list(csv.reader(io.StringIO(sheet.decode("utf-8-sig"), newline="")))
    rows[2][rows[0].index("Spread")] = 'say "hi",\nthen go'
    buffer = io.StringIO()
    csv.writer(buffer).writerows(rows)
    changes = apply_rows(table, read_csv(buffer.getvalue().encode(), "w.csv"), "w.csv")
    assert changes == ["weapons.xtbl: row grenade: Spread: '' -> 'say \"hi\",\\nthen go'"]
    assert Table(table.write(), "w.xtbl").row("grenade")["Spread"] == 'say "hi",\nthen go'


def test_csv_from_a_spreadsheet_semicolons_without_bom() -> None:
    table = Table(weapons(), "weapons.xtbl")
    sheet = b"Name;Magazine_Size\npistol;17\ngrenade;1\n"
    assert apply_rows(table, read_csv(sheet, "w.csv"), "w.csv") == [
        "weapons.xtbl: row pistol: Magazine_Size: '16' -> '17'"
    ]


@pytest.mark.parametrize(
    ("sheet", "message"),
    [
        ("Name,Magazine_Size\npistol,1\n".encode("utf-16"), "UTF-16"),
        ("Name,Spread\npistol,caf\xe9\n".encode("latin-1"), "line 2, byte .*not UTF-8"),
        (b"Name,Colour\npistol,red\n", "column Colour is not in weapons.xtbl"),
        (b"Name,Magazine_Size\npistol,1\npistol,2\n", "the key Name 'pistol' is on two rows"),
        (b"Name,Magazine_Size\n,1\n", "row 1 has no Name"),
        (b"Name,Groups\npistol,[oops\n", "not JSON"),
        (b'Name,Spread\npistol,"open\n', "line"),
    ],
)
def test_bad_sheets_are_refused(sheet: bytes, message: str) -> None:
    table = Table(weapons(), "weapons.xtbl")
    with pytest.raises(TableError, match=message):
        apply_rows(table, read_csv(sheet, "w.csv"), "w.csv")
        table.write()


def test_json_export_is_lossless() -> None:
    table = Table(weapons(), "weapons.xtbl")
    document = json.loads(to_json(table))
    assert document["key"] == "Name" and document["rows"][0]["Damage"] == {"Min": "5", "Max": "9"}
    assert document["rows"][0]["Requirements"] == [{"Stat": "kills", "Value": "3"}]
    document["rows"][0]["Requirements"].append({"Stat": "deaths", "Value": "1"})
    document["rows"][0]["Damage"]["Min"] = "6"
    rows = read_json(json.dumps(document).encode(), "w.json", table)
    assert len(apply_rows(table, rows, "w.json")) == 2
    again = Table(table.write(), "w.xtbl")
    assert json.loads(again.row("pistol")["Requirements"])[1] == {"Stat": "deaths", "Value": "1"}
    assert again.row("pistol")["Damage.Min"] == "6"


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=("Cs", "Cc")), max_size=30))
def test_any_text_set_in_a_cell_reads_back_and_changes_only_that_line(value: str) -> None:
    data = weapons()
    table = Table(data, "weapons.xtbl")
    table.row("pistol")["Name"] = value or "x"
    new = table.write()
    assert Table(new, "w.xtbl").rows[0]["Name"] == (value or "x")
    changed = changed_lines(data, new) if "\n" not in value and "\r" not in value else []
    assert len(changed) <= 1


@pytest.mark.parametrize("depth", [300, 100_000])
def test_a_json_cell_nested_deeper_than_a_table_may_is_refused(depth: int) -> None:
    # Found by reading: a JSON cell from an imported sheet was parsed with only ValueError
    # caught (100,000 brackets: RecursionError escaped table set and the import's comparison),
    # and 300 levels were written into a table that could not be read back (256 at most).
    deep = "[" * depth + "]" * depth
    table = Table(weapons(), "weapons.xtbl")
    with pytest.raises(TableError, match="nested more than 256 deep"):
        table.row("pistol")["Groups"] = deep
    sheet = to_csv(table).decode("utf-8-sig").replace('"[""a"", ""b""]"', deep).encode()
    with pytest.raises(TableError, match="nested more than 256 deep"):
        apply_rows(table, read_csv(sheet, "w.csv"), "w.csv")
    rows = '{"rows": [{"Name": "pistol", "Damage": ' + '{"Min": ' * depth + "1" + "}" * depth + "}]}"
    with pytest.raises(TableError, match="nested"):
        read_json(rows.encode(), "w.json", table)


def test_schema_fields_no_element_can_be_are_left_out_and_names_repeat_once() -> None:
    # Found by fuzz_read_xtbl: a schema field named `Clame>Item` (or with a tab, or `:ame`)
    # became a column, so an edit wrote `<Clame>Item>`, broken XML, and a tab in a column's
    # name made the CSV export read back split at tabs; a field declared twice was two columns
    # of one name, which the CSV import refuses.
    odd = "".join(
        f"\t\t<Element><Name>{name}</Name><Type>String</Type></Element>\n"
        for name in ("Clame&gt;Item", "F\tlags", ":ame", "Item")
    )
    table = Table(weapons(description=DESCRIPTION.replace("\t</TableDescription>", odd + "\t</TableDescription>")))
    assert not {"Clame>Item", "F\tlags", ":ame"} & set(table.columns)
    assert table.columns.count("Item") == 1 and len(table.schema.fields) == len(set(table.schema.by_name))
    assert apply_rows(table, read_csv(to_csv(table), "w.csv"), "w.csv") == []
    assert table.write() == table.data


@pytest.mark.parametrize("value", ['[{"a b": "1"}]', '[{"<Group>": {"x\\"y": "2"}}]'])
def test_a_json_cell_naming_what_no_element_can_be_is_refused_when_written(value: str) -> None:
    # Found by fuzz_read_xtbl: the keys of a JSON cell's objects became element tags as they
    # were, so `{"a b": "1"}` was written as `<a b>1</a b>`.
    table = Table(weapons(), "weapons.xtbl")
    table.row("pistol")["Groups"] = value
    with pytest.raises(TableError, match="cannot name an element"):
        table.write()


# -- packs, the CLI, verify --------------------------------------------------------------------------


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    broken = b"<root><Table><Row>"
    return write_pack(
        tmp_path / "table.vpp_pc",
        {"weapons.xtbl": weapons(), "items.xtbl": ITEMS, "broken.xtbl": broken, "readme.txt": b"hi"},
    )


def test_library_open_lookup_and_save(pack: Path) -> None:
    tables = gamepak.tables.open(pack)
    assert sorted(tables) == ["items.xtbl", "weapons.xtbl"] and "not well-formed" in tables.failures["broken.xtbl"]
    table = tables.find("WEAPONS.xtbl")
    assert table is not None and table.row("pistol")["Magazine_Size"] == "16"
    table.row("pistol")["Magazine_Size"] = "20"
    assert tables.save() == ["weapons.xtbl"]
    members = pack_members(pack)
    assert changed_lines(weapons(), members["weapons.xtbl"]) == [
        (b"\t\t\t<Magazine_Size>16</Magazine_Size>\n", b"\t\t\t<Magazine_Size>20</Magazine_Size>\n")
    ]
    assert members["items.xtbl"] == ITEMS and members["readme.txt"] == b"hi"


def test_cli_ls_lists_every_table_and_why_one_cannot_be_read(pack: Path) -> None:
    code, out, _ = in_process_cli("table", "ls", str(pack), "--json")
    listed = {item["member"]: item for item in json.loads(out)}
    assert code == 0
    assert listed["weapons.xtbl"] == {
        "member": "weapons.xtbl",
        "table": "Weapon",
        "rows": 2,
        "columns": 11,
        "schema": True,
    }
    assert listed["items.xtbl"]["schema"] is False and listed["items.xtbl"]["rows"] == 1
    assert "not well-formed" in listed["broken.xtbl"]["error"]
    code, out, _ = in_process_cli("table", "ls", str(pack))
    assert code == 0 and "weapons.xtbl  <Weapon>" in out and "cannot be read" in out


def test_cli_export_edit_import_loop(pack: Path, tmp_path: Path) -> None:
    out = tmp_path / "sheets"
    code, _, err = in_process_cli("table", "export", str(pack), "-o", str(out))
    assert code == 0 and "exported 2 tables" in err and "skipped broken.xtbl" in err
    sheet = out / "weapons.xtbl.csv"
    before = pack.read_bytes()
    code, out_text, err = in_process_cli("table", "import", str(pack), str(out))
    assert code == 0 and "nothing changed" in err and pack.read_bytes() == before
    text = sheet.read_text(encoding="utf-8-sig").replace("grenade,1,", "grenade,3,")
    sheet.write_text(text, encoding="utf-8-sig", newline="")
    code, out_text, err = in_process_cli("table", "import", str(pack), str(out), "--dry-run")
    assert code == 0 and "row grenade: Magazine_Size: '1' -> '3'" in out_text and pack.read_bytes() == before
    code, out_text, err = in_process_cli("table", "import", str(pack), str(out))
    assert code == 0 and "1 change made" in err
    assert changed_lines(weapons(), pack_members(pack)["weapons.xtbl"]) == [
        (b"\t\t\t<Magazine_Size>1</Magazine_Size>\n", b"\t\t\t<Magazine_Size>3</Magazine_Size>\n")
    ]


def test_cli_import_refuses_before_writing(pack: Path, tmp_path: Path) -> None:
    sheets = tmp_path / "sheets"
    sheets.mkdir()
    before = pack.read_bytes()
    (sheets / "missing.xtbl.csv").write_bytes(b"Name\nx\n")
    code, _, err = in_process_cli("table", "import", str(pack), str(sheets))
    assert code == 1 and "has no table missing.xtbl" in err
    (sheets / "missing.xtbl.csv").unlink()
    (sheets / "weapons.xtbl.csv").write_bytes(b"Name,Magazine_Size\npistol,99\n")
    (sheets / "items.xtbl.csv").write_bytes(b"Name,Price\npistol_item,3\n")
    code, _, err = in_process_cli("table", "import", str(pack), str(sheets))
    assert code == 1 and "column Price is not in items.xtbl" in err and pack.read_bytes() == before


def test_cli_check_and_verify(pack: Path, tmp_path: Path) -> None:
    code, out, err = in_process_cli("table", "check", str(pack), "--json")
    findings = json.loads(out)
    assert code == 1  # broken.xtbl cannot be read
    assert {"member", "row", "field", "value", "problem"} <= set(findings[0])
    good = write_pack(tmp_path / "good.vpp_pc", {"weapons.xtbl": weapons(), "items.xtbl": ITEMS})
    code, out, err = in_process_cli("table", "check", str(good))
    assert code == 0 and "0 errors" in err
    bad = write_pack(tmp_path / "bad.vpp_pc", {"weapons.xtbl": weapons(ROWS.replace(">thrown<", ">laser<"))})
    code, out, err = in_process_cli("table", "check", str(bad))
    assert code == 1 and "weapons.xtbl: row grenade: Weapon_Class = 'laser': not a choice" in out
    assert "1 reference field not checked" in err
    code, _, err = in_process_cli("verify", str(bad))
    assert code == 0 and "warning" in err and "tables: 1 value error(s)" in err and "in 1 table(s)" in err
    code, _, err = in_process_cli("verify", str(pack))
    assert code == 0 and "table broken.xtbl: not well-formed" in err


def test_loose_table_and_its_neighbours(tmp_path: Path) -> None:
    (tmp_path / "weapons.xtbl").write_bytes(weapons(ROWS.replace("pistol_item", "gone")))
    (tmp_path / "items.xtbl").write_bytes(ITEMS)
    code, out, _ = in_process_cli("table", "check", str(tmp_path / "weapons.xtbl"))
    assert code == 0 and "no such row in items.xtbl" in out
    with pytest.raises(GamepakError, match="no table nothing.xtbl"):
        gamepak.tables.open(tmp_path, ["nothing.xtbl"])


# -- the real tables ---------------------------------------------------------------------------------


def test_real_table_pack_reads_and_writes_back() -> None:
    path = sample("vpp/table.vpp_pc")
    listed = gamepak.tables.list_tables(path)
    assert len(listed) == 423
    failed = {item["member"]: item["error"] for item in listed if "error" in item}
    assert list(failed) == ["test_suite.xtbl"] and "no <Table>" in str(failed["test_suite.xtbl"])
    tables = gamepak.tables.open(path)
    assert len(tables) == 422
    weapons_table = tables["weapons.xtbl"]
    assert weapons_table.name == "Weapon" and _field(weapons_table.schema, "Weapon_Class").kind == "Selection"
    for member, table in tables.items():
        summary = next(item for item in listed if item["member"] == member)
        assert summary["rows"] == len(table), member
        assert apply_rows(table, read_csv(to_csv(table), member), member) == [], member
        assert apply_rows(table, read_json(to_json(table), member, table), member) == [], member
        assert table.write() is table.data


def test_json_cells_written_directly_match_json_dumps() -> None:
    from gamepak.formats.rfg.xtbl.json_cells import _items, items_json

    data = weapons(ROWS.replace("<Group>b</Group>", '<Group>"b"\\ é</Group><Other><X>1</X></Other>'))
    table = Table(data, "weapons.xtbl")
    pending = table.pending()
    assert pending
    for _, _, element, field in pending:
        assert items_json(element, field) == json.dumps(_items(element, field), ensure_ascii=False)


def _written_whole(table: Table, monkeypatch: pytest.MonkeyPatch) -> bytes | str:
    """What `write()` gives (or the error it raises) when it parses the whole document, with
    no rows-only shortcut."""
    with monkeypatch.context() as patched:
        patched.setattr(Table, "_write_rows", lambda self: None)
        return _written(table)


def _written(table: Table) -> bytes | str:
    try:
        return table.write()
    except TableError as exc:
        return str(exc)


EDITED_SHAPES = [
    weapons(),
    weapons(newline="\r\n"),
    weapons(ROWS.replace("\t\t<Weapon>\n\t\t\t<Name>grenade</Name>", "\t\t<Weapon><Name>grenade</Name>")),
    weapons(ROWS + "\t\t<Weapon/>\n\t\t<Weapon><Name>knife</Name><Spread/></Weapon><!-- c --><Weapon/>\n"),
    b"<root><Table><R><N>1</N><M>2</M></R><R><N>2</N></R></Table></root>",  # rows share a line
    '<?xml version="1.0" encoding="windows-1252"?>\n<root>\n <Table>\n  <R><N>\xe9</N></R>\n </Table>\n</root>'.encode(
        "cp1252"
    ),
]


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(range(len(EDITED_SHAPES))),
    st.lists(
        st.tuples(st.integers(0, 10), st.integers(0, 30), st.sampled_from(["7", "", "a & <b>", "é", '["x"]', "[]"])),
        min_size=1,
        max_size=4,
    ),
)
def test_cells_set_rewrite_only_their_rows_as_the_whole_document_would(
    shape: int, edits: list[tuple[int, int, str]]
) -> None:
    # A fresh monkeypatch per example (hypothesis runs the body many times per test).
    data = EDITED_SHAPES[shape]
    table = Table(data, "t.xtbl")
    for row, column, value in edits:
        with contextlib.suppress(TableError):  # not JSON where JSON is needed
            table.set(row % len(table), table.columns[column % len(table.columns)], value)
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert _written(table) == _written_whole(table, monkeypatch)


def test_every_cell_of_every_row_set_alone_as_the_whole_document_would() -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        for data in EDITED_SHAPES:
            for row in range(len(Table(data, "t.xtbl"))):
                for column in Table(data, "t.xtbl").columns:
                    table = Table(data, "t.xtbl")
                    table.set(row, column, '["x"]' if table.is_json(column) else "7")
                    written = _written(table)
                    assert written == _written_whole(table, monkeypatch), (data, row, column)
                    if isinstance(written, bytes):
                        # Read back parsing only the rewritten rows, as reading it whole does.
                        again, whole = table.reread(written), Table(written, "t.xtbl")
                        assert [len(element) for element in again.elements] == [len(e) for e in whole.elements]
                        assert (again.cells(), again.key, again.columns) == (whole.cells(), whole.key, whole.columns)


def test_rows_only_rewrite_of_the_real_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    tables = gamepak.tables.open(sample("vpp/table.vpp_pc"))
    shortcut = 0
    for member, table in tables.items():
        if not len(table):
            continue
        leaf = next((c for c in table.columns if not table.is_json(c)), None)
        for index in {0, len(table) // 2, len(table) - 1}:
            if leaf is not None:
                table.set(index, leaf, "gamepak & <test>")
        table.set(len(table) - 1, table.columns[-1], "[]" if table.is_json(table.columns[-1]) else "1")
        try:
            shortcut += table._write_rows() is not None
        except TableError:
            shortcut += 1  # taken, and refused as the whole document refuses it
        assert _written(table) == _written_whole(table, monkeypatch), member
    assert shortcut > 300  # most of the game's rows start their own line


def _count_forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pids of the workers forked from now on (os.fork watched)."""
    forks: list[int] = []
    real_fork = os.fork

    def counted_fork() -> int:
        pid = real_fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counted_fork)
    return forks


def test_export_on_two_processes_writes_what_one_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gamepak.ops.tables as tables_ops

    members = {f"t{number:02}.xtbl": weapons(ROWS.replace("grenade", f"grenade{number}")) for number in range(12)}
    members["broken.xtbl"] = b"<root><Table><Row>"
    source = write_pack(tmp_path / "table.vpp_pc", members)
    alone = tables_ops.export_tables(source, tmp_path / "alone", kind="json")
    forks = _count_forks(monkeypatch)
    monkeypatch.setattr(parallel, "FORK_BYTES", 0)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _: {0, 1})
    both = tables_ops.export_tables(source, tmp_path / "both", kind="json")
    assert len(forks) == 1
    assert [Path(path).relative_to(tmp_path / "both") for path in both[0]] == [
        Path(path).relative_to(tmp_path / "alone") for path in alone[0]
    ]
    assert both[1] == alone[1] and list(both[1]) == ["broken.xtbl"]
    for path in alone[0]:
        assert Path(path).read_bytes() == (tmp_path / "both" / Path(path).relative_to(tmp_path / "alone")).read_bytes()

    # A failure in the worker reaches the caller as itself; nothing is written.
    parent = os.getpid()

    def failing(table: Table) -> bytes:
        if os.getpid() != parent:
            raise MemoryError("out of memory in " + table.member)
        time.sleep(0.05)  # leaves the worker tables to take
        return b""

    monkeypatch.setattr("gamepak.formats.rfg.xtbl.sheet.to_csv", failing)
    with pytest.raises(MemoryError, match="out of memory in t"):
        tables_ops.export_tables(source, tmp_path / "failed", kind="csv")
    assert not (tmp_path / "failed").exists() and len(forks) == 2


def _crossed_pack(tmp_path: Path) -> Path:
    """Tables whose References cross between the processes that read them (see
    `_dealt`: the parent reads the even member numbers): to a table of the same pack (the last
    readable one of a file name wins: a nested pack's), to a path below the rows, to a table
    the pack lacks; bad values; tables that cannot be read."""
    references = (
        "\t\t<Element><Name>Gone</Name><Type>Reference</Type>"
        "<Reference><File>gone.xtbl</File><Type>G.Name</Type></Reference></Element>\n"
        "\t\t<Element><Name>Tag</Name><Type>Reference</Type>"
        "<Reference><File>..\\tags\\ITEMS.xtbl</File><Type>Item.Tags.Tag</Type></Reference></Element>\n"
        "\t\t<Element><Name>Base</Name><Type>Reference</Type>"
        "<Reference><File>weapons1.xtbl</File><Type>Weapon.Name</Type></Reference></Element>\n"
    )
    description = DESCRIPTION.replace("\t</TableDescription>", references + "\t</TableDescription>")
    members = {}
    for number in range(10):  # members 0-9
        rows = (
            ROWS.replace("grenade", f"grenade{number}")
            .replace("<Item>pistol_item<", f"<Item>item{number % 3}<")
            .replace("<_Editor>", f"<Gone>x</Gone><Tag>t{number % 4}</Tag><Base>grenade{number % 5}</Base><_Editor>")
        )
        if number % 4 == 1:
            rows = rows.replace(">thrown<", ">laser<")
        members[f"weapons{number}.xtbl"] = weapons(rows * (1 + number % 3), description=description)
    members["items.xtbl"] = b"<root><Table><Item><Name>item0</Name><Tags><Tag>t0</Tag></Tags></Item></Table></root>"
    members["broken.xtbl"] = b"<root><Table><Row>"
    zone = b"<root><Table><Item><Name>item1</Name><Tags><Tag>t1</Tag><Tag>t2</Tag></Tags></Item></Table></root>"
    members["zone.str2_pc"] = write_pack(tmp_path / "zone.str2_pc", {"items.xtbl": zone}).read_bytes()  # 12
    late = {"items.xtbl": b"<root><Table><Item>", "notable.xtbl": b"<root/>"}  # never found by name
    members["late.str2_pc"] = write_pack(tmp_path / "late.str2_pc", late).read_bytes()
    return write_pack(tmp_path / "table.vpp_pc", members)


def _dealt(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables split between two processes, dealt rather than taken: the parent reads the even
    member numbers, the worker the odd ones."""
    import gamepak.core.forked as forked

    monkeypatch.setattr(parallel, "FORK_BYTES", 0)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _: {0, 1})
    parent = os.getpid()

    class Dealt(forked.Queue):
        def __init__(self, order: list[int]) -> None:
            super().__init__(order)
            self.order = order

        def __iter__(self) -> Iterator[int]:
            side = 0 if os.getpid() == parent else 1
            return iter(sorted(number for number in self.order if number % 2 == side))

    monkeypatch.setattr(forked, "Queue", Dealt)


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """A hang fails the test instead of stopping the run."""
    import signal

    def expired(*_: object) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_check_on_two_processes_finds_what_one_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gamepak.core.forked as forked
    import gamepak.ops.tables as tables_ops

    def summary(found: tuple[list[Any], dict[str, str], int]) -> tuple[list[dict[str, str]], list[Any], int]:
        return [finding.to_dict() for finding in found[0]], list(found[1].items()), found[2]

    source = _crossed_pack(tmp_path)
    alone = summary(tables_ops.check_tables(source))
    problems = {(finding["member"], finding["value"], finding["problem"]) for finding in alone[0]}
    assert ("weapons0.xtbl", "item0", "no such row in items.xtbl (Item.Name)") in problems  # zone's items.xtbl won
    assert ("weapons3.xtbl", "t3", "no such row in ..\\tags\\ITEMS.xtbl (Item.Tags.Tag)") in problems
    assert ("weapons2.xtbl", "grenade2", "no such row in weapons1.xtbl (Weapon.Name)") in problems
    named = {(member, value) for member, value, _ in problems}
    assert not named & {("weapons1.xtbl", "item1"), ("weapons2.xtbl", "t2"), ("weapons6.xtbl", "grenade1")}
    assert ("weapons1.xtbl", "laser", "not a choice (choices: bullet, thrown)") in problems
    assert [member for member, _ in alone[1]] == ["broken.xtbl", "late.str2_pc/items.xtbl", "late.str2_pc/notable.xtbl"]
    assert alone[2] == 10  # gone.xtbl, once per table

    forks = _count_forks(monkeypatch)
    real_queue = forked.Queue
    _dealt(monkeypatch)
    with _deadline(60):
        assert summary(tables_ops.check_tables(source)) == alone
    # Taken from the queue as they come, as outside the tests.
    monkeypatch.setattr(forked, "Queue", real_queue)
    with _deadline(60):
        assert summary(tables_ops.check_tables(source)) == alone
    assert len(forks) == 2


def test_no_second_process_to_be_had_means_one_process_does_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # fork failing (EAGAIN: no processes left; ENOMEM) is no reason to fail a check or an export.
    import errno

    import gamepak.ops.tables as tables_ops

    source = _crossed_pack(tmp_path)
    alone = tables_ops.check_tables(source)
    exported = tables_ops.export_tables(source, tmp_path / "alone", kind="csv")
    tries: list[int] = []

    def no_fork() -> int:
        tries.append(1)
        raise OSError(errno.EAGAIN, "Resource temporarily unavailable")

    monkeypatch.setattr(parallel, "FORK_BYTES", 0)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _: {0, 1})
    monkeypatch.setattr(os, "fork", no_fork)
    open_fds = (lambda: len(os.listdir("/proc/self/fd"))) if os.path.isdir("/proc/self/fd") else (lambda: 0)
    fd_count = open_fds()
    found = tables_ops.check_tables(source)
    assert [finding.to_dict() for finding in found[0]] == [finding.to_dict() for finding in alone[0]]
    assert found[1:] == alone[1:]
    again = tables_ops.export_tables(source, tmp_path / "again", kind="csv")
    assert again[1] == exported[1] and len(again[0]) == len(exported[0])
    assert len(tries) == 2  # both tried a second process
    assert open_fds() == fd_count  # and left no pipe open


def test_check_on_two_processes_reports_the_workers_failures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import signal

    import gamepak.ops.tables as tables_ops

    source = _crossed_pack(tmp_path)
    _dealt(monkeypatch)
    parent = os.getpid()
    real_check = parallel.check_table

    # Tables whose rows cannot be read, met by either process, are reported as one process
    # reports them (in member order), and the others are still checked.
    bad, good = weapons(ROWS.replace(">thrown<", ">laser<")), weapons(ROWS)
    members = {"bad.xtbl": bad, "deep1.xtbl": DEEP, "deep2.xtbl": DEEP, "good.xtbl": good, "deep4.xtbl": DEEP}
    many = write_pack(tmp_path / "deep.vpp_pc", {**members, "broken.xtbl": b"<root><Table><Row>"})
    with _deadline(60):
        split = tables_ops.check_tables(many)
    assert list(split[1]) == ["deep1.xtbl", "deep2.xtbl", "deep4.xtbl", "broken.xtbl"]
    assert split[1]["deep2.xtbl"] == "deep2.xtbl: elements nested more than 256 deep"
    assert {finding.member for finding in split[0]} == {"bad.xtbl"}
    monkeypatch.setattr(parallel, "FORK_BYTES", 1 << 40)
    one = tables_ops.check_tables(many)
    assert ([str(finding) for finding in one[0]], one[1:]) == ([str(finding) for finding in split[0]], split[1:])
    monkeypatch.setattr(parallel, "FORK_BYTES", 0)

    def failing(table: Table, references: Any = None) -> Any:
        if os.getpid() != parent:
            raise MemoryError(f"out of memory in {table.member}")
        return real_check(table, references)

    monkeypatch.setattr(parallel, "check_table", failing)
    with _deadline(60), pytest.raises(MemoryError, match="out of memory in weapons1.xtbl"):
        tables_ops.check_tables(source)

    def killed(table: Table, references: Any = None) -> Any:
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return real_check(table, references)

    monkeypatch.setattr(parallel, "check_table", killed)
    with _deadline(60), pytest.raises(GamepakError, match="table check: the worker process was killed by signal 9"):
        tables_ops.check_tables(source)


def test_a_table_whose_rows_cannot_be_read_is_reported_and_the_others_checked(tmp_path: Path) -> None:
    """A table that parses but whose rows are nested too deep to read is one error of `table
    check` and one warning of `verify`, naming it; the pack's other tables are still checked."""
    bad = weapons(ROWS.replace(">thrown<", ">laser<"))
    pack = write_pack(tmp_path / "t.vpp_pc", {"deep.xtbl": DEEP, "bad.xtbl": bad})
    code, out, err = in_process_cli("table", "check", str(pack))
    assert code == 1
    assert "error: deep.xtbl: elements nested more than 256 deep" in out
    assert "bad.xtbl" in out and "laser" in out
    assert "1 error: table cannot be read" in err
    code, out, err = in_process_cli("verify", str(pack))
    assert code == 0
    assert "warning: " in err and "table deep.xtbl: elements nested more than 256 deep" in err
    assert "tables: 1 value error(s)" in err and "bad.xtbl: row grenade" in err
