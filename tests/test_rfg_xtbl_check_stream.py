"""`table check` of many tables checked as each is parsed (its tree dropped at once), References
into tables read later decided at the end: the same findings, failures and count as the check
that holds every tree (`parallel.check_parsed` over a `ReferenceIndex`)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamepak.formats.rfg.xtbl import TableError, parallel
from gamepak.formats.rfg.xtbl.stream import read_table


def holding_every_tree(members: list[tuple[str, bytes]]) -> tuple[list[dict[str, str]], list[Any], int]:
    """What the check that parses every table first, then checks each against an index of all,
    finds: the reference the streamed check is held to."""
    tables: dict[str, Any] = {}
    failures: dict[str, str] = {}
    for member, data in members:
        try:
            tables[member] = read_table(data, member)
        except TableError as exc:
            failures[member] = str(exc)
    found = parallel.check_parsed(tables, failures, [member for member, _ in members])
    return [finding.to_dict() for finding in found[0]], list(found[1].items()), found[2]


def streamed(members: list[tuple[str, bytes]]) -> tuple[list[dict[str, str]], list[Any], int]:
    found = parallel.check_members(members)
    return [finding.to_dict() for finding in found[0]], list(found[1].items()), found[2]


def referring(name: str, file: str, target: str, values: list[str]) -> bytes:
    """A table of `name` rows whose `Other` field is a Reference to `file`'s `target`."""
    rows = "".join(
        f"<{name}><Name>{name}{number}</Name><Other>{value}</Other></{name}>" for number, value in enumerate(values)
    )
    description = (
        f"<TableDescription><Name>{name}</Name>"
        "<Element><Name>Name</Name><Type>String</Type></Element>"
        f"<Element><Name>Other</Name><Type>Reference</Type><Reference><File>{file}</File><Type>{target}</Type>"
        "</Reference></Element></TableDescription>"
    )
    return f"<root><Table>{rows}</Table>{description}</root>".encode()


def test_references_the_byte_scan_cannot_see_are_read_again_from_their_table(monkeypatch: pytest.MonkeyPatch) -> None:
    # `<File>` written with a character reference and `<Type>` in a CDATA section: the scan of
    # the bytes does not find them, the parsed schema does.
    items = b"<root><Table><Item><Name>sword</Name></Item><Item><Name>bow</Name></Item></Table></root>"
    hidden = referring("Weapon", "items&#46;xtbl", "<![CDATA[Item.Name]]>", ["sword", "axe", " bow "])
    members = [("weapons.xtbl", hidden), ("items.xtbl", items)]
    assert "items.xtbl" not in parallel._guessed_targets(members)  # (a wrong guess costs nothing)
    reads: list[str] = []
    real_read = parallel.read_table

    def counted(data: bytes, member: str = "table.xtbl") -> Any:
        reads.append(member)
        return real_read(data, member)

    monkeypatch.setattr(parallel, "read_table", counted)
    found = streamed(members)
    assert found == holding_every_tree(members)
    assert [(finding["member"], finding["value"]) for finding in found[0]] == [("weapons.xtbl", "axe")]
    assert reads == ["weapons.xtbl", "items.xtbl", "items.xtbl"]  # items.xtbl read again, for Item.Name


def test_a_reference_into_a_table_read_later_or_earlier_is_decided_alike() -> None:
    items = b"<root><Table><Item><Name>sword</Name></Item></Table></root>"
    weapons = referring("Weapon", "..\\x\\ITEMS.xtbl", "Item.Name", ["sword", "axe"])
    for members in (
        [("weapons.xtbl", weapons), ("items.xtbl", items)],
        [("items.xtbl", items), ("weapons.xtbl", weapons)],
    ):
        found = streamed(members)
        assert found == holding_every_tree(members)
        assert [finding["value"] for finding in found[0]] == ["axe"]


NAMES = ["a.xtbl", "b.xtbl", "c.xtbl", "sub/a.xtbl"]
VALUES = ["x", "y", "z", " x ", ""]


@st.composite
def packs(draw: st.DrawFn) -> list[tuple[str, bytes]]:
    """A few tables referring to each other's Name and Other columns (some to tables that are
    absent, broken or whose file name another shares), in any order."""
    members = []
    for number in range(draw(st.integers(1, 6))):
        member = draw(st.sampled_from(NAMES))
        if draw(st.integers(0, 5)) == 0:
            data = b"<root><Table><Row>"  # cannot be read
        else:
            file = draw(st.sampled_from([*NAMES, "gone.xtbl", "A.XTBL"]))
            tag = draw(st.sampled_from(["Weapon", "Item"]))
            target = draw(st.sampled_from([f"{tag}.Name", "Weapon.Other", "Item.Name", ""]))
            values = draw(st.lists(st.sampled_from([*VALUES, "Weapon0", "Item1"]), max_size=4))
            data = referring(tag, file, target, values)
        members.append((f"{number}/{member}" if draw(st.booleans()) else member, data))
    # Member paths are unique (the check holding every tree keeps one table per path).
    return list(dict(members).items())


@settings(max_examples=60, deadline=None)
@given(members=packs())
def test_any_pack_checked_as_parsed_finds_what_holding_every_tree_finds(members: list[tuple[str, bytes]]) -> None:
    assert streamed(members) == holding_every_tree(members)


@settings(max_examples=300, deadline=None)
@given(name=st.text(alphabet="aZ_-.:0é \t<>&\"'x", max_size=6))
def test_a_name_taken_without_expat_is_one_expat_takes(name: str) -> None:
    from gamepak.formats.rfg.xtbl.xmldoc import _expat_takes_as_a_name, is_element_name

    assert is_element_name(name) == _expat_takes_as_a_name(name)


@settings(max_examples=25, deadline=None)
@given(members=packs())
def test_any_pack_checked_on_two_processes_finds_what_holding_every_tree_finds(
    members: list[tuple[str, bytes]],
) -> None:
    # Each process decides the References into the tables it read before sending the others
    # (`_Checks.part`); the parent decides the rest.
    import os

    from gamepak.core.portable import can_fork

    if not can_fork():
        pytest.skip("no fork here")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parallel, "FORK_BYTES", 0)
        patch.setattr(os, "sched_getaffinity", lambda _: {0, 1}, raising=False)
        if len(members) < 4:
            members = members + [(f"pad{number}.xtbl", b"<root><Table/></root>") for number in range(4 - len(members))]
        assert parallel.split_order(members) is not None
        assert streamed(members) == holding_every_tree(members)


def test_the_worker_decides_its_references_into_the_parent_s_tables() -> None:
    """The parent sends the worker the values of the tables it read (`_Checks.known`): the
    worker's part then holds no undecided finding into them, only its own tables' names and
    values, and the parent's merge decides the same findings as one process."""
    from gamepak.formats.rfg.xtbl.check import LATER

    items = b"<root><Table><Item><Name>sword</Name></Item><Item><Name>bow</Name></Item></Table></root>"
    weapons = referring("Weapon", "items.xtbl", "Item.Name", ["sword", "axe", "bow", "bow"])
    members = [("items.xtbl", items), ("weapons.xtbl", weapons)]
    targets = parallel._guessed_targets(members)
    parent = parallel._Checks(members, targets, stop=False)
    worker = parallel._Checks(members, targets, stop=False)
    parent.take(0)  # the parent read items.xtbl
    worker.take(1)  # the worker checked weapons.xtbl: its References wait for items.xtbl
    assert [finding.severity for finding in worker.found[1]] == [LATER] * 4
    worker.learn(parent.known())
    part = worker.part()
    found, _, names, values = part[:4]
    assert [fields[3] for fields in found[1]] == ["axe"]
    assert all(fields[5] != LATER for fields in found[1])
    assert names == {1: "weapons.xtbl"} and set(values) <= {1}  # the parent's own not sent back
    parent.merge(part)
    assert [finding.to_dict() for finding in parent.finish()[0]] == holding_every_tree(members)[0]


def test_the_scan_finds_references_wherever_the_description_is() -> None:
    """The scan starts at the last `<TableDescription` (after the rows, as the game writes
    them); a description before the rows, or none at all, is still scanned."""
    after = referring("Weapon", "items.xtbl", "Item.Name", ["sword"])
    head, description = after.split(b"<TableDescription>")
    before = b"<root><TableDescription>" + description.replace(b"</root>", b"") + head[len(b"<root>") :] + b"</root>"
    bare = b"<root><Reference><File>x.xtbl</File><Type>X.Name</Type></Reference></root>"
    for data in (after, before):
        assert parallel._guessed_targets([("w.xtbl", data)]) == {"items.xtbl": {"Item.Name"}}
    assert parallel._guessed_targets([("b.xtbl", bare)]) == {"x.xtbl": {"X.Name"}}


def later_findings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of findings left undecided (LATER) at each `resolve_later`, recorded."""
    from gamepak.formats.rfg.xtbl.check import LATER

    counts: list[int] = []
    real = parallel.resolve_later

    def counting(findings: list[Any], keys: Any, values: Any) -> Any:
        counts.append(sum(finding.severity == LATER for finding in findings))
        return real(findings, keys, values)

    monkeypatch.setattr(parallel, "resolve_later", counting)
    return counts


def test_a_referenced_table_is_read_before_the_tables_referring_to_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # a -> b -> c, and d -> a: in member order a would be checked before b's values are known,
    # b before c's; read c, b, a, then d, every value is known when its table is checked.
    members = [
        ("a.xtbl", referring("A", "b.xtbl", "B.Name", ["B0", "nope"])),
        ("b.xtbl", referring("B", "c.xtbl", "C.Name", ["C0", "none"])),
        ("c.xtbl", referring("C", "x.xtbl", "", [""])),
        ("d.xtbl", referring("D", "a.xtbl", "A.Name", ["A1", "no"])),
    ]
    edges: dict[str, dict[str, None]] = {}
    targets = parallel._guessed_targets(members, edges)
    assert parallel._referenced_first(members, targets, range(4), edges) == [2, 1, 0, 3]
    counts = later_findings(monkeypatch)
    assert streamed(members) == holding_every_tree(members)
    assert sum(counts) == 0
    assert [f["value"] for f in streamed(members)[0]] == ["nope", "none", "no"]


def test_tables_that_reference_each_other_are_all_read() -> None:
    members = [
        ("a.xtbl", referring("A", "b.xtbl", "B.Name", ["B0"])),
        ("b.xtbl", referring("B", "a.xtbl", "A.Name", ["A0"])),
        ("c.xtbl", referring("C", "c.xtbl", "C.Name", ["C0"])),
    ]
    edges: dict[str, dict[str, None]] = {}
    targets = parallel._guessed_targets(members, edges)
    assert sorted(parallel._referenced_first(members, targets, range(3), edges)) == [0, 1, 2]
    assert streamed(members) == holding_every_tree(members)


def test_a_reference_into_a_table_no_member_holds_is_counted_not_left_to_decide(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    members = [("w.xtbl", referring("W", "..\\dlc\\gone.xtbl", "G.Name", ["a", "b", ""]))]
    counts = later_findings(monkeypatch)
    found = streamed(members)
    assert found == holding_every_tree(members)
    assert found[0] == [] and found[2] == 1  # (the reference field counted as not checked, as before)
    assert sum(counts) == 0
