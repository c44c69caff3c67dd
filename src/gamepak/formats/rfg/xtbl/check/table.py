"""`check_table`: every finding of one table, its rows walked in batches and checked a column
at a time."""

from __future__ import annotations

from itertools import chain, compress, groupby, repeat
from operator import is_not, itemgetter

from ..cells import PENDING, ROW_NUMBER
from ..json_cells import items_json
from ..schema import EDITOR_FIELDS
from .findings import Finding
from .rules import json_check, leaf_check, remember

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Container, Iterable
    from typing import Any

    from ..schema import Field
    from ..stream import StreamedTable
    from ..table import Table


BATCH_CELLS = 1 << 14  # the cells of a batch of rows checked a column at a time
_row_number = itemgetter(0)


def check_table(
    table: Table | StreamedTable, references: Callable[[str, list[str]], Container[str] | None] | None = None
) -> list[Finding]:
    """Every finding of one table; `references(file, path)` gives the values a Reference may
    name (None: that table is not at hand, the reference is counted as not checked; a `Later`:
    decided by `resolve_later`, the findings of severity LATER). The rows
    are walked, never all held (a `StreamedTable` holds a chunk of them at a time)."""
    findings: list[Finding] = []
    member = table.member
    schema = table.schema
    key_column = table.key
    numbered = key_column == ROW_NUMBER

    def add(row: str, field: str, value: str, problem: str, severity: str) -> None:
        findings.append(Finding(member, row, field, value, problem, severity))

    def duplicates(column: str, values: Iterable[str]) -> None:
        first: dict[str, int] = {}
        for index, value in enumerate(values):
            if value and value in first:
                # A row is named by its key: its number, or this value (the key column's).
                row = str(index + 1) if numbered else value
                add(row, column, value, f"duplicate key (also row {first[value] + 1})", "error")
            first.setdefault(value, index)

    if not numbered:
        if table.changed:  # else the key column was chosen for holding no value twice
            duplicates(key_column, (cells.get(key_column, "") for cells, _ in table.iter_raw()))
    else:
        # Rows matched by position: only the fields the schema marks unique must be.
        unique: dict[str, list[str]] = {
            field.name: [] for field in schema.fields if field.unique and not field.children
        }
        if unique:
            for cells, _ in table.iter_raw():
                for name, values in unique.items():
                    values.append(cells.get(name, ""))
            for name, values in unique.items():
                duplicates(name, values)
    reference_sets: dict[tuple[str, str], Container[str] | None] = {}

    def lookup(field: Field) -> Container[str] | None:
        assert field.reference is not None
        file, path = field.reference
        cache_key = (file, ".".join(path))
        if cache_key not in reference_sets:
            reference_sets[cache_key] = references(file, path) if references is not None and path else None
        return reference_sets[cache_key]

    checkers = _column_checks(table, lookup)
    described = schema.described
    # The values each column's check found good: a column repeats few values (the game's
    # 130,000 checked cells hold 16,000), so each is checked once, and a batch of rows is
    # checked a column at a time (set operations, no call per cell).
    goods: dict[str, set[str]] = {column: set() for column, check in checkers.items() if check is not None}
    rows = table.iter_raw()
    first = 0  # the number of the batch's first row
    while True:
        # Rows in batches of about BATCH_CELLS cells, held as cells alone: the JSON cells are
        # checked from their elements as each row comes (a streamed table's rows are let go).
        batch: list[dict[str, str]] = []
        held = 0
        records: list[tuple[int, str, Any]] = []  # (row number, column, [(problem, severity, value)])
        for cells, pending in rows:
            if pending:
                index = first + len(batch)
                for column, (element, json_field) in pending.items():
                    if column in checkers:
                        check = checkers[column]
                        if check is not None:
                            found = check(element)
                            if found:
                                records.append((index, column, found))
                    elif described and column.split(".", 1)[0] not in EDITOR_FIELDS:
                        records.append(
                            (index, column, [("not in the schema", "warning", items_json(element, json_field))])
                        )
            batch.append(cells)
            held += len(cells)
            if held >= BATCH_CELLS:
                break
        if not batch:
            break
        for column in dict.fromkeys(chain.from_iterable(batch)):  # the batch's columns, in order
            if column in checkers:
                check = checkers[column]
                if check is None:
                    continue
                column_values = list(map(dict.get, batch, repeat(column)))  # None: not in that row
                good = goods[column]
                bad: dict[str, Any] = {}  # value -> its problems
                for value in set(column_values).difference(good):
                    if value is not None and value != PENDING:  # (a JSON cell is checked above)
                        found = _remembered(check, good, value)
                        if found:
                            bad[value] = found
                if bad:
                    records += [
                        (first + offset, column, bad[cell]) for offset, cell in enumerate(column_values) if cell in bad
                    ]
            elif described and column.split(".", 1)[0] not in EDITOR_FIELDS:
                # (The rows holding it found in C: such a column is in few rows of a batch.)
                column_values = list(map(dict.get, batch, repeat(column)))
                records += [
                    (first + offset, column, [("not in the schema", "warning", cell)])
                    for offset in compress(range(len(column_values)), map(is_not, column_values, repeat(None)))
                    if (cell := column_values[offset]) != PENDING
                ]
        if records:
            # In row order, and in a row in its cells' order (as a walk of each row's cells).
            records.sort(key=_row_number)
            for row_number, group in groupby(records, key=_row_number):
                cells = batch[row_number - first]
                problems = list(group)
                if len(problems) > 1:
                    columns = list(cells)  # (a few problems against many cells: found in C)
                    problems.sort(key=lambda record: columns.index(record[1]))
                key = str(row_number + 1) if numbered else cells.get(key_column, "")
                # (Made here rather than through `add`: a call less for each of thousands.)
                findings += [
                    Finding(member, key, column, bad_value, problem, severity)
                    for _, column, found in problems
                    for problem, severity, bad_value in found
                ]
        first += len(batch)
    return findings


def _column_checks(table: Table | StreamedTable, lookup: Callable[[Field], Container[str] | None]) -> dict[str, Any]:
    """For each column the schema knows, a function value -> [(problem, severity, value)]."""
    checks: dict[str, Any] = {}
    if not table.schema.described:
        return checks
    for column in table.columns:
        field = table.schema.field(column)
        if field is None:
            if column.endswith(".Filename"):
                parent = table.schema.field(column[: -len(".Filename")])
                if parent is not None and parent.kind == "Filename":
                    checks[column] = leaf_check(parent, lookup)
            continue
        if table.is_json(column):
            checks[column] = json_check(field, lookup)
        else:
            checks[column] = leaf_check(field, lookup)
    return checks


def _remembered(check: Callable[[str], Any], good: set[str], value: str) -> Any:
    """`check(value)`, `value` added to `good` (the values `check` found good) when it is."""
    found = check(value)
    if not found:
        remember(good, value)
    return found
