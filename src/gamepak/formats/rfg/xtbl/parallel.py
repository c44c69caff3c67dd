"""Many tables checked at once (a pack's hundreds): parsed and checked on two processes when
there is much XML and a second core (`core.forked`), else in this one; the same findings, the
same tables that cannot be read and the same count either way, in member order. Used by
`gamepak table check` and by `verify`'s look at a pack's tables.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from itertools import starmap
from operator import attrgetter

from ....core.collector import collector_paused
from ....errors import GamepakError
from .check import (
    NOT_AT_HAND,
    UNDECIDED,
    DeferredReferences,
    Finding,
    Later,
    ReferenceIndex,
    check_table,
    reference_values,
    resolve_later,
    table_file_name,
)
from .parse import TableError
from .stream import StreamedTable, read_table
from .table import Table

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ....core.forked import Channel
    from .check.references import NotAtHand

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
    tables `members` ((member path, bytes), in order) hold; two processes when worth it.

    Each table is checked as soon as it is parsed and its tree dropped at once (holding every
    tree until the last check cost more memory than the parse itself: page faults, and
    collections walking them). A Reference into a table not read yet is decided at the end
    (`check.DeferredReferences`), from the values each table's References may ask for, taken
    from it before its tree goes: the targets its schema's `<Reference>` elements name, found
    in the bytes of all the tables first (`_guessed_targets`); a target that scan missed is
    read again from its table's bytes (`_Checks.values`)."""
    with collector_paused():  # (the trees are freed by their reference counts)
        edges: dict[str, dict[str, None]] = {}
        targets = _guessed_targets(members, edges)
        order = split_order(members)
        if order is not None:
            from ....core.forked import WorkerNotStarted

            try:
                return _check_split(members, order, targets, edges)
            except WorkerNotStarted:
                pass  # no second process to be had: check in this one
        checks = _Checks(members, targets, stop=True)
        for number in _referenced_first(members, targets, range(len(members)), edges):
            checks.take(number)
        return checks.finish()


def _referenced_first(
    members: list[tuple[str, bytes]],
    targets: dict[str, set[str]],
    order: Iterable[int],
    edges: Mapping[str, Iterable[str]] | None = None,
) -> list[int]:
    """`order` with the tables References name first, and among those a table after the ones
    its own References name (`edges`: {table file name: the names its References name}; in a
    cycle, as `order` meets it): once read, their values are known when the others are checked
    (fewer findings left to decide at the end: the game's tables on one process left 11,800
    into tables they hold, 83 now)."""
    order = list(order)
    names = [table_file_name(member) for member, _ in members]
    named = [number for number in order if names[number] in targets]
    if not named:
        return order
    if edges:
        named = _after_their_targets(named, names, edges)
    chosen = set(named)
    return named + [number for number in order if number not in chosen]


def _after_their_targets(numbers: list[int], names: list[str], edges: Mapping[str, Iterable[str]]) -> list[int]:
    """`numbers` (tables by member number) each placed after the tables of the names its
    References name (`edges`), depth first in the order given (a cycle is cut where it closes)."""
    by_name: dict[str, list[int]] = {}
    for number in numbers:
        by_name.setdefault(names[number], []).append(number)
    placed: list[int] = []
    seen: set[int] = set()
    for first in numbers:
        if first in seen:
            continue
        seen.add(first)
        stack = [(first, iter(edges.get(names[first], ())))]
        while stack:
            number, pending = stack[-1]
            for name in pending:
                after = [other for other in by_name.get(name, ()) if other not in seen]
                if after:
                    seen.update(after)
                    stack += [(other, iter(edges.get(names[other], ()))) for other in reversed(after)]
                    break
            else:
                stack.pop()
                placed.append(number)
    return placed


_FIELDS = attrgetter("member", "row", "field", "value", "problem", "severity")  # Finding's arguments


class _Checks:
    """What one process found in the tables it took (by member number): their findings (with
    LATER ones undecided), why some cannot be read or checked, the file name of each table
    read, the values its References may name (by dotted path), and the References each table's
    check asked for. `finish` (in the parent, with the worker's part `merge`d) decides."""

    def __init__(self, members: list[tuple[str, bytes]], targets: dict[str, set[str]], *, stop: bool) -> None:
        self.members = members
        self.targets = targets
        self.stop = stop  # raise a check's GamepakError at once (else the first by member number is)
        self.found: dict[int, list[Finding]] = {}
        self.unreadable: dict[int, str] = {}
        self.names: dict[int, str] = {}
        self.values: dict[int, dict[str, set[str]]] = {}
        self.asked: dict[int, list[tuple[str, str]]] = {}
        self.keys: dict[str, tuple[str, str]] = {}
        self.failed: tuple[int, GamepakError] | None = None
        self.learned: set[int] = set()  # the tables the other process read (`learn`)
        # The member number a file name finds in the end, unless that table cannot be read:
        # the last of that name (as ReferenceIndex takes them).
        self.last = {table_file_name(member): number for number, (member, _) in enumerate(members)}

    def ready(self, name: str, path: str) -> set[str] | NotAtHand | None:
        """The values a Reference to `name`'s `path` may name when they are final already: that
        table was read here, and it is the last of its name; NOT_AT_HAND when no member has
        that name."""
        number = self.last.get(name)
        if number is None:
            return NOT_AT_HAND
        held = self.values.get(number) if number is not None and number in self.names else None
        return held.get(path) if held is not None else None

    def take(self, number: int) -> None:
        """Parse member `number`, keep what References may ask of it, check it, drop its tree."""
        member, data = self.members[number]
        try:
            table = read_table(data, member)
        except TableError as exc:
            self.unreadable[number] = str(exc)
            return
        name = self.names[number] = table_file_name(member)
        paths = self.targets.get(name)
        if paths:
            self.values[number] = {path: reference_values(table, path.split(".")) for path in paths}
        references = DeferredReferences(self.ready)
        try:
            self.found[number] = check_table(table, references)
        except TableError as exc:  # its rows cannot be read (say, nested too deep): the others are checked
            self.unreadable[number] = str(exc)
        except GamepakError as exc:
            if self.stop:
                raise
            if self.failed is None or number < self.failed[0]:
                self.failed = (number, exc)
        if references.asked:
            self.asked[number] = references.asked
            self.keys.update(references.keys)

    def known(self) -> tuple[dict[int, str], dict[int, dict[str, set[str]]]]:
        """What the parent sends the worker when its own tables are done: the name of each
        table it read and the values References may ask of it (`learn`)."""
        return self.names, self.values

    def learn(self, known: tuple[dict[int, str], dict[int, dict[str, set[str]]]]) -> None:
        """Take in the other process's `known`: References into its tables are then decided
        here (`part`). The worker's References into the parent's tables were 12,000 findings
        of the game's tables left undecided, each pickled, sent, made again and decided on the
        parent's side of the wait (35 ms); the parent's values are a tenth of that to send."""
        names, values = known
        self.learned.update(names)
        self.names.update(names)
        self.values.update(values)

    def part(self) -> tuple[Any, ...]:
        """What the worker sends the parent: its findings with the LATER ones it can decide
        (into its own tables and those the parent read, `learn`) decided first, and the names
        and values of its own tables (the parent decides its References into them)."""

        def values(name: str, path: str) -> set[str] | Later | None:
            if name not in self.last:
                return None  # no table of that name at all
            held = self.ready(name, path)
            return held if isinstance(held, set) else UNDECIDED

        # Findings sent as tuples of their fields: pickled in C (a `Finding` each took 5 us of
        # Python, 80 ms for the game's tables).
        found = {
            number: list(map(_FIELDS, resolve_later(findings, self.keys, values)))
            for number, findings in self.found.items()
        }
        learned = self.learned
        names = {number: name for number, name in self.names.items() if number not in learned}
        own = {number: held for number, held in self.values.items() if number not in learned}
        return found, self.unreadable, names, own, self.asked, self.keys, self.failed

    def merge(self, part: tuple[Any, ...]) -> None:
        found, unreadable, names, values, asked, keys, failed = part
        self.found.update((number, list(starmap(Finding, fields))) for number, fields in found.items())
        self.unreadable.update(unreadable)
        self.names.update(names)
        self.values.update(values)
        self.asked.update(asked)
        self.keys.update(keys)
        if failed is not None and (self.failed is None or failed[0] < self.failed[0]):
            self.failed = failed

    def finish(self) -> Checked:
        """(findings, {member: why it cannot be read or checked}, References not checked), as
        one process holding every tree finds them, in member order."""
        if self.failed is not None:
            raise self.failed[1]
        # The table a file name finds: the last one read of that name (as ReferenceIndex does).
        latest = {self.names[number]: number for number in sorted(self.names)}

        def values(name: str, path: str) -> set[str] | None:
            number = latest.get(name)
            if number is None:
                return None
            held = self.values.setdefault(number, {})
            if path not in held:  # a target `_guessed_targets` did not see: read its table again
                member, data = self.members[number]
                held[path] = reference_values(read_table(data, member), path.split("."))
            return held[path]

        findings: list[Finding] = []
        for number in sorted(self.found):
            findings += resolve_later(self.found[number], self.keys, values)
        not_checked = sum(name not in latest for asked in self.asked.values() for name, _ in asked)
        members = self.members
        unreadable = {members[number][0]: reason for number, reason in sorted(self.unreadable.items())}
        return findings, unreadable, not_checked


def _guessed_targets(
    members: list[tuple[str, bytes]], edges: dict[str, dict[str, None]] | None = None
) -> dict[str, set[str]]:
    """{table file name: dotted paths} the `<Reference>` elements in the tables' bytes name
    (`<File>` and `<Type>`): what the References of their schemas may ask for, found without
    parsing (about 1% of a check). A guess: one written otherwise (an entity, another
    encoding) is read again at the end, more are harmless. `edges`, when given, gets
    {table file name: {the file names its References name: None}} (in the order found)."""
    targets: dict[str, set[str]] = {}
    for member, data in members:
        # From the last `<TableDescription`: the game writes it after the rows, which are most
        # of the bytes (the scan of the game's tables 14 -> 9 ms); a table without one is
        # scanned whole, and a Reference in an earlier description is only a missed guess.
        start = data.find(b"<Reference>", max(data.rfind(b"<TableDescription"), 0))
        while start >= 0:
            end = data.find(b"</Reference>", start)
            if end < 0:
                break
            element = data[start:end]
            file = _inner(element, b"<File>", b"</File>")
            target = _inner(element, b"<Type>", b"</Type>")
            if file is not None and target is not None:
                path = ".".join(part for part in target.split(".") if part)
                if path:
                    name = table_file_name(file)
                    targets.setdefault(name, set()).add(path)
                    if edges is not None:
                        edges.setdefault(table_file_name(member), {})[name] = None
            start = data.find(b"<Reference>", end)
    return targets


def _inner(element: bytes, opening: bytes, closing: bytes) -> str | None:
    """The stripped text between `opening` and `closing` in `element` (as Latin-1), or None."""
    start = element.find(opening)
    if start < 0:
        return None
    start += len(opening)
    end = element.find(closing, start)
    return element[start:end].decode("latin-1").strip() if end >= 0 else None


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


def _check_split(
    members: list[tuple[str, bytes]],
    order: list[int],
    targets: dict[str, set[str]],
    edges: Mapping[str, Iterable[str]] | None = None,
) -> Checked:
    """`check_members` on two processes (`core.forked`): each takes tables from the queue,
    parses, checks and drops each (`_Checks.take`); the parent then sends the worker what its
    References may ask of the parent's tables (`_Checks.known`), the worker sends what it
    found with those decided, and the parent decides the rest (`_Checks.finish`). Same findings, failures and count
    as one process, in member order."""
    from ....core.forked import Queue, Worker

    checks = _Checks(members, targets, stop=False)
    queue = Queue(_referenced_first(members, targets, order, edges))

    def work(channel: Channel) -> None:
        with collector_paused():
            for number in queue:
                checks.take(number)
            checks.learn(channel.receive())
            channel.send(checks.part())

    try:
        with collector_paused(), Worker(work, "table check") as worker:
            for number in queue:
                checks.take(number)
            # (The worker reads this once its own tables are done: the parent never waits on a
            # full pipe for longer than the worker's last table.)
            worker.send(checks.known())
            checks.merge(worker.receive())
    finally:
        queue.close()
    return checks.finish()


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
