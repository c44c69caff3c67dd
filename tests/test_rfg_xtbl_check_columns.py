"""`check_table` checks a batch of rows a column at a time, each value once (issue 48.4): the
findings, their order and the references not checked are those of checking every cell of every
row in turn, as it was done before (`cell_by_cell` below), whatever the batch size and however
little the checks remember."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_rfg_xtbl import ITEMS, weapons

import gamepak
from gamepak.formats.rfg.xtbl import Table
from gamepak.formats.rfg.xtbl.cells import PENDING, ROW_NUMBER
from gamepak.formats.rfg.xtbl.check import (
    ReferenceIndex,
    check_table,
    reference_values,
    rules,  # (what the rules remember)
)
from gamepak.formats.rfg.xtbl.check import table as check  # (the walk: its batch size and rules)
from gamepak.formats.rfg.xtbl.json_cells import items_json
from gamepak.formats.rfg.xtbl.schema import EDITOR_FIELDS
from gamepak.formats.rfg.xtbl.stream import StreamedTable, read_table

from conftest import sample


def cell_by_cell(table: Any, references: Any = None) -> list[dict[str, str]]:
    """Every finding of `table`, each cell of each row checked in turn: the walk `check_table`
    made before it checked columns (duplicate keys aside: none of these tables has any)."""
    found: list[dict[str, str]] = []
    sets: dict[tuple[str, str], Any] = {}

    def lookup(field: Any) -> Any:
        file, path = field.reference
        key = (file, ".".join(path))
        if key not in sets:
            sets[key] = references(file, path) if references is not None and path else None
        return sets[key]

    checkers = check._column_checks(table, lookup)
    numbered = table.key == ROW_NUMBER
    for index, (cells, pending) in enumerate(table.iter_raw()):
        key = str(index + 1) if numbered else cells.get(table.key, "")
        for column, value in cells.items():
            problems: Any = ()
            if column in checkers:
                if checkers[column] is not None:
                    problems = checkers[column](pending[column][0] if value == PENDING else value)
            elif table.schema.described and column.split(".", 1)[0] not in EDITOR_FIELDS:
                if value == PENDING:
                    value = items_json(*pending[column])
                problems = [("not in the schema", "warning", value)]
            for problem, severity, bad in problems:
                found.append(
                    {
                        "member": table.member,
                        "row": key,
                        "field": column,
                        "value": bad,
                        "problem": problem,
                        "severity": severity,
                    }
                )
    return found


def findings(table: Any, references: Any = None) -> list[dict[str, str]]:
    return [finding.to_dict() for finding in check_table(table, references)]


# Values of each column, good and bad, repeated across rows (as the game's are).
VALUES = {
    "Magazine_Size": ["16", " 3 ", "sixteen", "1.0", "", "1.5"],
    "Spread": ["1.5", "1,5", "", "nan", "x"],
    "Weapon_Class": ["bullet", "thrown", "laser", " Bullet ", ""],
    "Item": ["pistol_item", "no_item", " pistol_item ", ""],
    "Effect": [
        "<Filename>muzzle.effect</Filename>",
        "<Filename>muzzle.png</Filename>",
        "<Filename>a.effectx</Filename>",
    ],
    "Flags": ["<Flag>shatter</Flag>", "<Flag>glow</Flag><Flag>shatter</Flag>", "<Other/>", ""],
    "Groups": ["<Group>a</Group><Group>b</Group>", "<Stranger>c</Stranger>", ""],
    "Requirements": [
        "<Requirement><Stat>kills</Stat><Value>3</Value></Requirement>",
        "<Requirement><Stat>kills</Stat><Value>x</Value><Odd>1</Odd></Requirement>",
        "<Requirement><Value>3</Value></Requirement><Requirement><Value>y</Value></Requirement>",
    ],
    "Damage": ["<Min>5</Min><Max>9</Max>", "<Min>five</Min><Max>9</Max>", "<Max>9.5</Max>"],
    "Unknown": ["1", "2", ""],
    "Other_Unknown": ["<a>1</a><a>2</a>", "<b>1</b><c>2</c>"],
    "_Editor": ["<Category>Entries</Category>"],
}
COLUMNS = list(VALUES)

rows = st.lists(
    st.lists(st.tuples(st.sampled_from(COLUMNS), st.integers(0, 5)), max_size=8, unique_by=lambda pair: pair[0]),
    max_size=12,
)


def table_of(chosen: list[list[tuple[str, int]]], name_rows: bool) -> bytes:
    text = ""
    for number, cells in enumerate(chosen):
        text += "<Weapon>"
        if name_rows:
            text += f"<Name>weapon{number}</Name>"
        for column, choice in cells:
            values = VALUES[column]
            text += f"<{column}>{values[choice % len(values)]}</{column}>"
        text += "</Weapon>\n"
    return weapons(text)


@pytest.mark.parametrize("batch, remembered", [(1 << 14, 1 << 12), (3, 2), (1, 1)])
@settings(max_examples=60, deadline=None)
@given(chosen=rows, name_rows=st.booleans())
def test_columns_checked_at_once_find_what_each_cell_checked_in_turn_finds(
    batch: int, remembered: int, chosen: list[list[tuple[str, int]]], name_rows: bool
) -> None:
    # (the attributes are set and put back here: a fixture would span every example)
    saved = check.BATCH_CELLS, rules.MEMO_VALUES
    check.BATCH_CELLS, rules.MEMO_VALUES = batch, remembered
    try:
        data = table_of(chosen, name_rows)
        index = ReferenceIndex({"items.xtbl": Table(ITEMS, "items.xtbl")})
        expected = cell_by_cell(Table(data, "weapons.xtbl"), ReferenceIndex({"items.xtbl": Table(ITEMS, "items.xtbl")}))
        assert findings(Table(data, "weapons.xtbl"), index) == expected
        assert findings(StreamedTable(data, "weapons.xtbl"), index) == expected
        # Without the referenced table: the reference columns are counted, not checked.
        alone, again = ReferenceIndex({}), ReferenceIndex({})
        assert findings(Table(data, "weapons.xtbl"), alone) == cell_by_cell(Table(data, "weapons.xtbl"), again)
        assert alone.not_checked == again.not_checked
    finally:
        check.BATCH_CELLS, rules.MEMO_VALUES = saved


def test_findings_of_a_row_come_in_its_cells_order() -> None:
    # Bad values in columns met in another order by each row: each row's findings follow its cells.
    data = weapons(
        "<Weapon><Name>a</Name><Spread>x</Spread><Magazine_Size>y</Magazine_Size><Unknown>1</Unknown></Weapon>\n"
        "<Weapon><Name>b</Name><Unknown>2</Unknown><Magazine_Size>y</Magazine_Size><Spread>x</Spread></Weapon>\n"
    )
    found = [(f["row"], f["field"]) for f in findings(Table(data, "weapons.xtbl"))]
    assert found == [
        ("a", "Spread"),
        ("a", "Magazine_Size"),
        ("a", "Unknown"),
        ("b", "Unknown"),
        ("b", "Magazine_Size"),
        ("b", "Spread"),
    ]


def test_a_value_is_checked_once_per_column(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    leaf_check = check.leaf_check

    def counted(field: Any, lookup: Any) -> Any:
        inner = leaf_check(field, lookup)
        if inner is None:
            return None

        def counting(value: str) -> Any:
            calls.append(value)
            return inner(value)

        return counting

    monkeypatch.setattr(check, "leaf_check", counted)
    monkeypatch.setattr(check, "BATCH_CELLS", 8)  # what a batch met is remembered for the next
    data = weapons(
        "".join(f"<Weapon><Name>w{n}</Name><Magazine_Size>{n % 3}</Magazine_Size></Weapon>" for n in range(300))
    )
    assert findings(Table(data, "weapons.xtbl")) == []
    assert sorted(calls) == ["0", "1", "2"]


def test_reference_values_take_every_element_at_the_path() -> None:
    table = Table(
        b"<root><Table>"
        b"<Item><Name> a </Name><Tags><Tag>x</Tag><Tag>y</Tag></Tags><Tags><Tag>z</Tag></Tags></Item>"
        b"<Other><Name>b</Name></Other><Other><Name>e</Name></Other><Other><Name>f</Name></Other>"
        b"<Item><Name>c</Name><Name>d</Name></Item>"
        b"</Table></root>",
        "items.xtbl",
    )
    assert table.name == "Other"
    assert reference_values(table, ["Item", "Name"]) == {"a", "c", "d"}
    assert reference_values(table, ["Item", "Tags", "Tag"]) == {"x", "y", "z"}
    assert reference_values(table, ["Other", "Name"]) == {"a", "b", "c", "d", "e", "f"}  # the rows' tag: any row
    assert reference_values(table, ["Item", "Missing"]) == set()
    assert reference_values(table, ["Item"]) == {""} and reference_values(table, []) == set()


def test_the_game_tables_checked_by_column_find_what_each_cell_finds() -> None:
    with gamepak.open(sample("vpp/table.vpp_pc")) as pack:
        members = {entry.name: b"".join(chunks) for entry, chunks in pack.iter_data()}
    tables: dict[str, Any] = {}
    for name, data in members.items():
        try:
            tables[name] = read_table(data, name)
        except gamepak.errors.GamepakError:
            continue
    index, again = ReferenceIndex(tables), ReferenceIndex(tables)
    total = 0
    for name, table in tables.items():
        found = [f for f in findings(table, index) if not f["problem"].startswith("duplicate key")]
        assert found == cell_by_cell(table, again), name
        total += len(found)
    assert total > 6000 and index.not_checked == again.not_checked


@pytest.mark.parametrize(
    "row, refused",
    [
        (b"<A>%s</A>" % (b"x" * 40), False),  # few `<`: one count
        (b"<A>abcdefgh</A>", False),  # `<` over the budget, start tags under it
        (b"<A/><!---->", True),  # start tags over it: refused, the comments not counted
    ],
)
def test_the_element_budget_counts_only_what_it_needs(row: bytes, refused: bool) -> None:
    from gamepak.core.content_limits import current
    from gamepak.formats.rfg.xtbl.parse import TableError
    from gamepak.formats.rfg.xtbl.xmldoc import check_element_budget, element_count_bound

    data = b"<root><Table>" + row * 20_000 + b"</Table></root>"
    budget = current().table_element_budget(len(data))
    assert budget is not None  # (no --allow-large here)
    assert data.count(b"<") > budget or not refused
    if not refused:
        check_element_budget(data, "t.xtbl", TableError)
        return
    with pytest.raises(TableError, match=rf"^t\.xtbl: {element_count_bound(data)} elements in {len(data)} bytes"):
        check_element_budget(data, "t.xtbl", TableError)


def test_an_item_value_is_checked_once_per_sub_field(monkeypatch: pytest.MonkeyPatch) -> None:
    # The items of a List/Grid cell repeat few values: each good one is checked once (the JSON
    # cells' rules remember them as the columns' do), a bad one is found in every item holding it.
    calls: list[str] = []
    leaf_check = rules.leaf_check

    def counted(field: Any, lookup: Any) -> Any:
        inner = leaf_check(field, lookup)
        if inner is None or field.name != "Value":
            return inner

        def counting(value: str) -> Any:
            calls.append(value)
            return inner(value)

        return counting

    monkeypatch.setattr(rules, "leaf_check", counted)
    items = "".join(f"<Requirement><Stat>s</Stat><Value>{n % 3}</Value></Requirement>" for n in range(30))
    data = weapons(
        "".join(
            f"<Weapon><Name>w{n}</Name><Requirements>{items}{'<Requirement><Value>x</Value></Requirement>' * 2}"
            "</Requirements></Weapon>"
            for n in range(20)
        )
    )
    found = findings(Table(data, "weapons.xtbl"))
    assert sorted(set(calls)) == ["0", "1", "2", "x"] and calls.count("0") == 1
    assert [(f["row"], f["field"], f["value"]) for f in found] == [
        (f"w{n}", "Requirements", "x") for n in range(20) for _ in range(2)
    ]
