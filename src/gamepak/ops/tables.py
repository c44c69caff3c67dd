"""RFG tables (`.xtbl`) of a pack, a folder or a loose file: listed, opened, checked, exported
to CSV/JSON and imported back.

A pack's tables are its `.xtbl` members and those of the packs nested in it, named by member
path (`zone.str2_pc/x.xtbl`). A table that cannot be read (not well-formed, no `<Table>`) is
listed with the reason and never stops the others. Changes go back through one crash-safe
`edit` of the pack (or an atomic rewrite of a loose file), each table rewritten byte-minimally.
`gamepak table` is a thin layer over these functions; `open` is `gamepak.tables.open`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator

from ..core.collector import collector_paused
from ..core.files import read_file
from ..errors import GamepakError
from ..formats.rfg.xtbl.parse import TableError
from ..formats.rfg.xtbl.table import Table
from ..formats.rfg.xtbl.xmldoc import MAX_XML_BYTES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..core.archive import Archive
    from ..formats.rfg.xtbl.check import Finding
    from ..formats.rfg.xtbl.stream import StreamedTable

SUFFIX = ".xtbl"
SHEET_KINDS = ("csv", "json")


def is_table_name(name: str) -> bool:
    return name[-5:].lower() == SUFFIX


def iter_members(source: str | os.PathLike[str]) -> Iterator[tuple[str, bytes]]:
    """(member path, bytes) of every table in `source`: a loose `.xtbl`, a folder (its `.xtbl`
    files, by relative path) or a pack (its members and those of nested packs)."""
    path = os.fspath(source)
    _remove_dead_temporaries(path)
    return _tables_in(path)


def _tables_in(path: str) -> Iterator[tuple[str, bytes]]:
    """`iter_members` without clearing what killed runs left (an import's dry run reads so)."""
    if os.path.isdir(path):
        for folder, folders, files in os.walk(path):
            folders.sort()
            for name in sorted(files):
                if is_table_name(name):
                    full = os.path.join(folder, name)
                    yield os.path.relpath(full, path).replace(os.sep, "/"), read_file(full, limit=MAX_XML_BYTES)
        return
    if is_table_name(path):
        yield os.path.basename(path), read_file(path, limit=MAX_XML_BYTES)
        return
    from ..core.opening import open as open_archive

    with open_archive(path) as pack:
        yield from _members_in(pack, "")


def _remove_dead_temporaries(path: str) -> None:
    """Remove the temporaries a killed gamepak process left beside `path` (or in the folder
    `path`): a `table import` killed while writing leaves `.NAME.gamepak-PID-N.tmp`
    (`core.atomic`), which the next command on it removes, as the next edit of a pack does."""
    from ..core.atomic import remove_stale_temporaries

    remove_stale_temporaries(path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path)))


def _members_in(
    archive: Archive, prefix: str, wanted: Callable[[str], bool] | None = None
) -> Iterator[tuple[str, bytes]]:
    """The tables of one archive (read in one pass), then those of the packs nested in it;
    only those whose member path `wanted` accepts, when given (the others are not read: a
    compressed stream is decoded only as far as the last one wanted)."""
    from ..core.nested import nested_formats

    entries = archive.infolist()
    tables = [entry for entry in entries if is_table_name(entry.name)]
    if wanted is not None:
        tables = [entry for entry in tables if wanted(prefix + entry.name)]
    if tables:
        for entry, chunks in archive.iter_data(tables):
            yield prefix + entry.name, b"".join(chunks)
    nested = nested_formats(archive, [entry for entry in entries if not is_table_name(entry.name)])
    for entry in entries:
        if entry.index in nested:
            with archive.open_archive(entry, nested[entry.index]) as inner:
                yield from _members_in(inner, prefix + entry.name + "/", wanted)


class Tables(dict[str, Table]):
    """The tables of a source by member path, those that could not be read in `failures`
    ({member: reason}), and `save()` to write the changed ones back."""

    def __init__(self, source: str) -> None:
        super().__init__()
        self.source = source
        self.failures: dict[str, str] = {}
        self.order: list[str] = []  # every member read, parsed or not, in the source's order

    def find(self, name: str) -> Table | None:
        """A table by member path (any case), or by file name when only one has it."""
        lowered = name.lower().replace("\\", "/")
        for member, table in self.items():
            if member.lower() == lowered:
                return table
        matches = [table for member, table in self.items() if member.rsplit("/", 1)[-1].lower() == lowered]
        return matches[0] if len(matches) == 1 else None

    def save(self) -> list[str]:
        """Write every changed table back into the source (one crash-safe edit of a pack, an
        atomic rewrite of a loose file); returns the members written."""
        changed = {member: table.write() for member, table in self.items() if table.changed}
        _store(self.source, changed)
        return list(changed)


def open(source: str | os.PathLike[str], members: Iterable[str] = ()) -> Tables:
    """Every table of `source` (or only `members`: member paths or globs), parsed."""
    source = os.fspath(source)
    return _parsed(source, _selected(source, members))


def _parsed(source: str, members: Iterable[tuple[str, bytes]]) -> Tables:
    tables = Tables(source)
    with collector_paused():
        for member, data in members:
            tables.order.append(member)
            try:
                tables[member] = Table(data, member)
            except TableError as exc:
                tables.failures[member] = str(exc)
    return tables


def _selected(source: str, members: Iterable[str]) -> Iterator[tuple[str, bytes]]:
    from .content_files import selected

    return selected(source, iter_members(source), members, "table")


def list_tables(source: str | os.PathLike[str]) -> list[dict[str, object]]:
    """What `table ls --json` prints: {member, table, rows, columns, schema} per table; a table
    that cannot be read as {member, error}."""
    from ..formats.rfg.xtbl.summary import summarize

    listed: list[dict[str, object]] = []
    for member, data in iter_members(source):
        try:
            listed.append(summarize(data, member))
        except TableError as exc:
            listed.append({"member": member, "error": str(exc)})
    return listed


def export_tables(
    source: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    kind: str = "csv",
    members: Iterable[str] = (),
    overwrite: bool = False,
) -> tuple[list[str], dict[str, str]]:
    """Write each table of `source` (or `members`) under `output` at its member path with
    `.csv`/`.json` added; returns (files written, {member: why it was skipped})."""
    from ..core.names import safe_parts
    from ..formats.rfg.xtbl.sheet import to_csv, to_json
    from .made_files import write_files

    if kind not in SHEET_KINDS:
        raise GamepakError(f"unknown table file kind {kind!r} (csv or json)")
    files: list[tuple[str, bytes]] = []
    failures: dict[str, str] = {}
    with collector_paused():
        tables = list(_selected(os.fspath(source), members))
        for (member, _), converted in zip(tables, _convert_all(tables, to_csv if kind == "csv" else to_json)):
            if isinstance(converted, bytes):
                files.append(("/".join(safe_parts(f"{member}.{kind}")), converted))
            else:
                failures[member] = converted
    written = write_files(output, files, overwrite=overwrite) if files else []
    return written, failures


def _convert_all(
    tables: list[tuple[str, bytes]], convert: Callable[[Table | StreamedTable], bytes]
) -> list[bytes | str]:
    """Each (member, bytes) converted by `convert`, or why it cannot be read (str), in order;
    with much XML and a second core, a forked worker converts part of them (`core.forked`)."""

    from ..formats.rfg.xtbl.stream import read_table

    def one(index: int) -> bytes | str:
        member, data = tables[index]
        try:
            return convert(read_table(data, member))
        except TableError as exc:
            return str(exc)

    from ..formats.rfg.xtbl.parallel import split_order

    order = split_order(tables)
    if order is None:
        return [one(index) for index in range(len(tables))]
    from ..core.forked import Channel, Queue, Worker, WorkerNotStarted

    queue = Queue(order)

    def work(channel: Channel) -> None:
        channel.send({index: one(index) for index in queue})

    try:
        worker = Worker(work, "table export")
    except WorkerNotStarted:
        queue.close()
        return [one(index) for index in range(len(tables))]
    try:
        with worker:
            results = {index: one(index) for index in queue}
            results.update(worker.receive())
    finally:
        queue.close()
    return [results[index] for index in range(len(tables))]


def sheet_files(folder: str) -> dict[str, str]:
    """{member path: file} for every `X.xtbl.csv` / `X.xtbl.json` under `folder`; a member
    with both is refused."""
    found: dict[str, str] = {}
    for directory, folders, files in os.walk(folder):
        folders.sort()
        for name in sorted(files):
            lowered = name.lower()
            kind = next((k for k in SHEET_KINDS if lowered.endswith(f"{SUFFIX}.{k}")), None)
            if kind is None:
                continue
            full = os.path.join(directory, name)
            member = os.path.relpath(full, folder).replace(os.sep, "/")[: -len(kind) - 1]
            if member.lower() in {m.lower() for m in found}:
                raise GamepakError(f"{full}: {member} has both a .csv and a .json file; keep one")
            found[member] = full
    return found


def import_tables(
    target: str | os.PathLike[str],
    folder: str | os.PathLike[str],
    *,
    dry_run: bool = False,
    strict: bool = False,
    delete: bool = False,
    warnings: list[str] | None = None,
) -> list[str]:
    """Import a folder laid out as `export_tables` wrote it into `target`: changed cells set,
    rows added and removed, each table rewritten byte-minimally, all in one edit. Returns the
    changes, one line each. Refused before anything is written: a file for a table the target
    lacks (or cannot read), a column the table does not know, a duplicated key, a value XML
    cannot hold, a file that lists no row at all unless `delete` (it would remove every row).
    A value the import makes break its field's rule (not one of a Selection's choices, a number
    that does not parse...) is appended to `warnings`, or refused with `strict`."""
    target, folder = os.fspath(target), os.fspath(folder)
    if not dry_run:  # a dry run is read-only: the next import that may write clears them
        _remove_dead_temporaries(target)
    if not os.path.isdir(folder):
        raise GamepakError(f"{folder}: not a folder (table export writes one to import from)")
    files = sheet_files(folder)
    if not files:
        raise GamepakError(f"{folder}: holds no .xtbl.csv or .xtbl.json file")
    # Only the tables the folder has files for are read and parsed.
    names = {member.lower() for member in files} | {member.rsplit("/", 1)[-1].lower() for member in files}

    def wanted(member: str) -> bool:
        return member.lower() in names or member.rsplit("/", 1)[-1].lower() in names

    if os.path.isdir(target) or is_table_name(target):
        changes, written = _import_into(target, files, _wanted_members(target, wanted), strict, delete, warnings)
        if written and not dry_run:
            _store(target, written)
        return changes
    # A pack: one editor reads the tables and writes them back, the pack locked in between;
    # the read leaves resume points, so the rewrite does not decode the stream again. A dry
    # run's editor only plans (no lock), and refuses what the commit would.
    from .content_files import pack_edit

    with pack_edit(target, dry_run=dry_run) as editor:
        editor.archive.keep_seek_points()
        changes, written = _import_into(
            target, files, _members_in(editor.archive, "", wanted), strict, delete, warnings
        )
        for member, data in written.items():
            editor.replace(member, data)
    return changes


def _wanted_members(source: str, wanted: Callable[[str], bool]) -> Iterator[tuple[str, bytes]]:
    """`iter_members`, of a pack only the tables `wanted` accepts (read no further)."""
    if os.path.isdir(source) or is_table_name(source):
        for member, data in _tables_in(source):
            if wanted(member):
                yield member, data
        return
    from ..core.opening import open as open_archive

    with open_archive(source) as pack:
        yield from _members_in(pack, "", wanted)


def _import_into(
    target: str,
    files: dict[str, str],
    members: Iterable[tuple[str, bytes]],
    strict: bool = False,
    delete: bool = False,
    warnings: list[str] | None = None,
) -> tuple[list[str], dict[str, bytes]]:
    """(the changes, {member: new bytes}) of importing `files` into the tables `members` reads
    (`import_tables` says what `strict`, `delete` and `warnings` do)."""
    from ..formats.rfg.xtbl.sheet import apply_rows, read_csv, read_json

    tables = Tables(target)
    for member, data in members:
        try:
            tables[member] = Table(data, member)
        except TableError as exc:
            tables.failures[member] = str(exc)
    changes: list[str] = []
    written: dict[str, bytes] = {}
    for member, path in files.items():
        table = tables.find(member)
        if table is None:
            reason = tables.failures.get(member)
            raise GamepakError(
                f"{path}: {target} has no table {member}" + (f" that can be read ({reason})" if reason else "")
            )
        data = read_file(path)
        rows = read_csv(data, path) if path.lower().endswith(".csv") else read_json(data, path, table)
        if not rows and len(table) and not delete:
            raise GamepakError(
                f"{path}: lists no row: importing it would remove all {len(table)} rows of {member}; "
                "--delete to remove them"
            )
        table_changes = apply_rows(table, rows, path)
        if not table_changes:
            continue
        removed = sum(change.endswith(" removed") for change in table_changes)
        if removed == len(table) and not delete:
            raise GamepakError(
                f"{path}: lists none of {member}'s {len(table)} rows: importing it would remove every one; "
                "--delete to remove them"
            )
        new = table.write()
        if new == table.data:
            continue  # the same bytes (a cell set to what the XML already says): unchanged
        # What was written must read back as the file says: else the edit could not be kept
        # byte-minimal (or lost something) and is refused.
        again = table.reread(new)
        if apply_rows(again, rows, path):
            raise GamepakError(f"{path}: {member} would not read back as this file says; nothing was written")
        broken = _new_rule_breaks(table, again)
        if broken and strict:
            raise GamepakError(f"{path}: {broken[0]} (--strict; nothing was written)")
        if warnings is not None:
            warnings += broken
        changes += table_changes
        written[table.member] = new
    return changes, written


def _new_rule_breaks(before: Table, after: Table) -> list[str]:
    """The values of `after` that break their field's rule as an error (`check`: not one of a
    Selection's choices, a number that does not parse, a Flag not in the list, a duplicate key)
    and did not in `before` (the table as read, edits aside), each as a line."""
    from ..formats.rfg.xtbl.check import check_table, new_findings

    errors = [finding for finding in check_table(after) if finding.severity == "error"]
    if not errors:
        return []  # most imports: the original need not be checked (nor parsed again)
    original = check_table(Table(before.data, before.member))
    return [f"{finding} (the game may not read it)" for finding in new_findings(errors, original)]


def _store(source: str, changed: dict[str, bytes]) -> None:
    """Write changed tables back: one edit of a pack, atomic rewrites of loose files."""
    from .content_files import write_back

    write_back(source, changed, is_table_name)


def check_tables(
    source: str | os.PathLike[str], tables: Tables | None = None, *, base: str | os.PathLike[str] | None = None
) -> tuple[list[Finding], dict[str, str], int]:
    """Every table's values against its schema: (findings, {member: why it could not be read},
    how many Reference values were not checked because their table is not in `source`); with
    `base` (the original `source` was made from), only what `base` does not hold already."""
    if base is not None:
        return check_against(source, base)
    # One pause from the first table parsed to the last finding: a collection in between would
    # walk every tree kept (on one core, 2.3 times the whole check's time).
    with collector_paused():
        return _check_tables(os.fspath(source), tables)


def check_against(
    source: str | os.PathLike[str], base: str | os.PathLike[str]
) -> tuple[list[Finding], dict[str, str], int]:
    """`check_tables(source)` without what `base` (the original it was made from) already has:
    only the findings it does not hold, only the tables that cannot be read for a reason they
    could be read (or failed otherwise) in `base`."""
    from ..formats.rfg.xtbl.check import new_findings

    findings, failures, not_checked = check_tables(source)
    base_findings, base_failures, _ = check_tables(base)
    new_failures = {member: reason for member, reason in failures.items() if base_failures.get(member) != reason}
    return new_findings(findings, base_findings), new_failures, not_checked


def _check_tables(source: str, tables: Tables | None) -> tuple[list[Finding], dict[str, str], int]:
    from ..formats.rfg.xtbl.parallel import check_members, check_parsed
    from ..formats.rfg.xtbl.stream import read_table

    folder = os.path.dirname(source) if is_table_name(source) and not os.path.isdir(source) else None
    if tables is None and folder is None:
        return check_members(list(iter_members(source)))
    if tables is None:
        # Read to be checked only: a large table is walked row by row, never held whole.
        read: dict[str, Table | StreamedTable] = {}
        failures: dict[str, str] = {}
        order: list[str] = []
        for member, data in _selected(source, ()):
            order.append(member)
            try:
                read[member] = read_table(data, member)
            except TableError as exc:
                failures[member] = str(exc)
    else:
        read, failures, order = dict(tables), tables.failures, tables.order

    def beside(name: str) -> Table | StreamedTable | None:
        """A referenced table beside a loose one."""
        candidate = os.path.join(folder, name) if folder is not None else ""
        if not candidate or not os.path.isfile(candidate):
            return None
        try:
            return read_table(read_file(candidate, limit=MAX_XML_BYTES), name)
        except (GamepakError, TableError):
            return None

    return check_parsed(read, failures, order, beside)


def table_view(
    data: bytes, member: str, *, query: str = "", key: str | None = None, offset: int = 0, limit: int = 100
) -> dict[str, object]:
    """One page of a table for the viewer: its columns (name, kind, description, and for a
    Reference the table it names), the rows matching `query` (any cell holding it, case aside)
    or `key`, from `offset`, at most `limit`; each row as (key, cells in column order)."""
    table = Table(data, member)
    columns = []
    for column in table.columns:
        field = table.schema.field(column)
        reference = field.reference[0].replace("\\", "/").rsplit("/", 1)[-1] if field and field.reference else None
        columns.append(
            {
                "name": column,
                "kind": field.kind if field is not None else ("JSON" if table.is_json(column) else ""),
                "description": (field.description or field.display_name) if field is not None else "",
                "reference": reference,
            }
        )
    wanted = query.casefold()
    rows = []
    for row in table.rows:
        if key is not None and row.key != key:
            continue
        if wanted and not any(wanted in value.casefold() for value in row.cells.values()):
            continue
        rows.append((row.key, [row.get(column) for column in table.columns]))
    return {
        "table": table.name,
        "key": table.key,
        "described": table.schema.described,
        "columns": columns,
        "rows": rows[offset : offset + limit],
        "total": len(table),
        "matching": len(rows),
        "offset": offset,
        "limit": limit,
    }
