"""Many tables checked at once (a pack's hundreds): parsed and checked on two processes when
there is much XML and a second core (`core.forked`), else in this one; the same findings, the
same tables that cannot be read and the same count either way, in member order. Used by
`gamepak table check` and by `verify`'s look at a pack's tables.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ....core.collector import collector_paused
from ....errors import GamepakError
from .check import Finding, ReferenceIndex, check_table, reference_targets, table_file_name
from .parse import TableError
from .stream import StreamedTable, read_table
from .table import Table

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ....core.forked import Channel, Queue

Checked = tuple[list[Finding], dict[str, str], int]


FORK_BYTES = 4 << 20  # less XML than this is parsed in one process


def split_order(tables: list[tuple[str, bytes]]) -> list[int] | None:
    """The order two processes take `tables` in (largest first), or None when one process
    should do it all (little XML, few tables, no second core, no fork)."""
    from ....core.forked import MAX_ITEMS, can_split

    if sum(len(data) for _, data in tables) < FORK_BYTES or not 4 <= len(tables) <= MAX_ITEMS or not can_split():
        return None
    # The parser the worker uses, imported once, before the fork (see `core.forked.can_split`).
    import xml.etree.ElementTree
    import xml.parsers.expat  # noqa: F401

    return sorted(range(len(tables)), key=lambda index: -len(tables[index][1]))


def check_members(members: list[tuple[str, bytes]]) -> Checked:
    """(findings, {member: why it cannot be read or checked}, References not checked) of the
    tables `members` ((member path, bytes), in order) hold; two processes when worth it."""
    with collector_paused():  # every tree is kept until the last finding: no collection walks them
        order = split_order(members)
        if order is not None:
            from ....core.forked import WorkerNotStarted

            try:
                return _check_split(members, order)
            except WorkerNotStarted:
                pass  # no second process to be had: check in this one
        tables: dict[str, Table | StreamedTable] = {}
        failures: dict[str, str] = {}
        for member, data in members:
            try:
                tables[member] = read_table(data, member)
            except TableError as exc:
                failures[member] = str(exc)
        return check_parsed(tables, failures, [member for member, _ in members])


def check_parsed(
    tables: Mapping[str, Table | StreamedTable],
    failures: dict[str, str],
    order: list[str],
    load: Callable[[str], Table | StreamedTable | None] | None = None,
) -> Checked:
    """`check_members` of tables already parsed (`failures`: those that could not be; `order`:
    every member in the source's order; `load`: finds a referenced table the others lack)."""
    index = ReferenceIndex(tables, load)
    findings: list[Finding] = []
    failures = dict(failures)
    parse_failures = len(failures)
    for member, table in tables.items():
        try:
            findings += check_table(table, index)
        except TableError as exc:  # its rows cannot be read (say, nested too deep): the others are checked
            failures[member] = str(exc)
    if len(failures) > parse_failures:  # member order, whichever step each failed at
        position = {member: number for number, member in enumerate(order)}
        failures = dict(sorted(failures.items(), key=lambda item: position.get(item[0], len(position))))
    return findings, failures, index.not_checked


def _check_split(members: list[tuple[str, bytes]], order: list[int]) -> tuple[list[Finding], dict[str, str], int]:
    """`check_members` on two processes (`core.forked`): each parses the tables it takes from the
    queue, then checks them. References between tables are resolved in between: the worker
    says which tables it read and which (table, path) values its tables' References may ask
    for; the parent says which of those tables the worker holds and what it needs from them,
    and each sends the other the values its own tables hold. Same findings, failures and count
    as one process, in member order."""
    from ....core.forked import Queue, Worker

    held: dict[int, Table | StreamedTable] = {}  # the tables this process parsed, by member number

    def parse(queue: Queue) -> tuple[dict[int, str | None], set[tuple[str, str]]]:
        """({member number: why it cannot be read, None when parsed}, the Reference targets)."""
        statuses: dict[int, str | None] = {}
        targets: set[tuple[str, str]] = set()
        for number in queue:
            member, data = members[number]
            try:
                held[number] = table = read_table(data, member)
            except TableError as exc:
                statuses[number] = str(exc)
                continue
            statuses[number] = None
            targets |= reference_targets(table.schema.fields)
        return statuses, targets

    def local_index(tables: dict[str, int]) -> ReferenceIndex:
        """References into `tables` ({file name: member number}, those held here)."""
        return ReferenceIndex({members[number][0]: held[number] for number in tables.values()})

    def values(index: ReferenceIndex, targets: Iterable[tuple[str, str]]) -> dict[tuple[str, str], set[str]]:
        return {(name, path): index(name, path.split(".")) or set() for name, path in targets}

    def check(
        index: ReferenceIndex,
    ) -> tuple[dict[int, list[Finding]], dict[int, str], int, tuple[int, GamepakError] | None]:
        """This process's findings by member number, the tables whose rows cannot be read (by
        member number, why), the references not checked, and the first table (by member number)
        whose check raised another error, with what it raised: one process would have stopped
        there."""
        found: dict[int, list[Finding]] = {}
        unreadable: dict[int, str] = {}
        for number in sorted(held):
            try:
                found[number] = check_table(held[number], index)
            except TableError as exc:
                unreadable[number] = str(exc)
            except GamepakError as exc:
                return found, unreadable, index.not_checked, (number, exc)
        return found, unreadable, index.not_checked, None

    def work(channel: Channel) -> None:
        with collector_paused():
            channel.send(parse(queue))
            tables, asked = channel.receive()
            index = local_index(tables)
            answer = values(index, asked)
            index.know(channel.receive())  # read before answering: both messages may fill a pipe
            channel.send(answer)
            channel.send(check(index))

    queue = Queue(order)
    try:
        with collector_paused(), Worker(work, "table check") as worker:
            statuses, targets = parse(queue)
            their_statuses, their_targets = worker.receive()
            statuses.update(their_statuses)
            # The table a file name finds: the last one read of that name (as ReferenceIndex does).
            found_by = {
                table_file_name(members[number][0]): number for number in sorted(statuses) if statuses[number] is None
            }
            mine = {name: number for name, number in found_by.items() if number in held}
            theirs = {name: number for name, number in found_by.items() if number not in held}
            worker.send((theirs, [target for target in targets if target[0] in theirs]))
            index = local_index(mine)
            worker.send(values(index, [target for target in their_targets if target[0] in mine]))
            index.know(worker.receive())
            found, unchecked, not_checked, failed = check(index)
            held.clear()  # the trees are freed while the worker finishes
            del index
            their_found, their_unchecked, their_not_checked, their_failed = worker.receive()
    finally:
        queue.close()
    failures = [failure for failure in (failed, their_failed) if failure is not None]
    if failures:
        raise min(failures, key=lambda failure: failure[0])[1]
    found.update(their_found)
    findings = [finding for number in sorted(found) for finding in found[number]]
    statuses.update(unchecked)
    statuses.update(their_unchecked)
    unreadable = {members[number][0]: reason for number, reason in sorted(statuses.items()) if reason is not None}
    return findings, unreadable, not_checked + their_not_checked


_LOOKS_LIKE_A_TABLE = re.compile(rb"(?:\xef\xbb\xbf)?\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*<root[\s>/]", re.DOTALL)


def _pack_tables(archive: Any) -> list[tuple[str, bytes]]:
    """(member, bytes) of a pack's own `.xtbl` members that open as the game's tables do (`<root>`)."""
    members = [entry for entry in archive.infolist() if entry.name[-5:].lower() == ".xtbl"]
    tables: list[tuple[str, bytes]] = []
    if members:
        for entry, chunks in archive.iter_data(members):
            data = b"".join(chunks)
            if _LOOKS_LIKE_A_TABLE.match(data):  # else not the game's table XML: nothing to hold it to
                tables.append((entry.name, data))
    return tables


def check_pack_tables(archive: Any, base: Any = None, source: str | None = None) -> list[Any]:
    """`verify`'s table findings for one pack's own tables: one warning per table that cannot
    be read, and every value that breaks its schema folded into one warning (the counts, the
    first, and the command that lists them: the game's own tables hold thousands). With `base`
    (the original pack, open), only what is new against it, and a new value error is an error."""
    from ....core.archive import Problem

    tables = _pack_tables(archive)
    if not tables:
        return []
    findings, failures, _ = check_members(tables)
    if base is not None:
        from .check import new_findings

        base_findings, base_failures, _ = check_members(_pack_tables(base))
        findings = new_findings(findings, base_findings)
        failures = {member: reason for member, reason in failures.items() if base_failures.get(member) != reason}
    problems = [Problem(f"table {reason}", severity="warning", member=member) for member, reason in failures.items()]
    if findings:
        errors = sum(finding.severity == "error" for finding in findings)
        members = len({finding.member for finding in findings})
        new = "new " if base is not None else ""
        command = f"gamepak table check {source or archive.filename}"
        if base is not None:
            command += f" --base {base.filename}"
        problems.append(
            Problem(
                f"tables: {errors} {new}value error(s), {len(findings) - errors} {new}warning(s) against their "
                f"schemas in {members} table(s) (first: {findings[0]}; `{command}` lists them)",
                severity="error" if base is not None and errors else "warning",
            )
        )
    return problems
