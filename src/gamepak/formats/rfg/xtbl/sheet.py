"""A table as a spreadsheet (CSV) or as JSON, and either read back into the table's edits.

CSV: UTF-8 with a byte-order mark (so spreadsheets read it as UTF-8), a header of the columns
(`Table.columns`), one line per row, CRLF line ends, cells quoted as needed (quotes, commas,
newlines). Read back: with or without the mark, CRLF or LF, comma, semicolon or tab.
JSON: `{"table": tag, "key": column, "rows": [...]}`, each row an object of its fields, struct
fields as nested objects, repeated items as lists (as in a JSON cell): lossless.

Importing compares row by row (by the table's key column): a changed cell is set, a row whose
key the table lacks is added, a table row the file lacks is removed. A column the table does
not know, a duplicated key or a cell that is not JSON where JSON is needed is refused naming it.
"""

from __future__ import annotations

import io
import json
import re
from itertools import islice

from ....core.jsontext import JSON_INDENT
from .cells import ROW_NUMBER
from .json_cells import nested_deeper
from .parse import TableError
from .table import Table
from .xmldoc import MAX_DEPTH

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .stream import StreamedTable

MAX_SHEET_BYTES = 256 << 20

# Spreadsheet safety (OWASP's rule against CSV formula injection): a cell a spreadsheet would
# run as a formula (starting with = + - @, a tab or a carriage return) is written with a
# leading `'`, which spreadsheets show as text and do not run; a cell that starts with `'`
# itself gets one more, so that import, which removes one leading `'`, gives every cell back.
# Plain numbers (`-1.5`) are left as they are: a table holds thousands, none runs.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "'")
_PLAIN_NUMBER = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")  # ASCII digits only


def protect_cell(value: str) -> str:
    """`value` as a CSV cell a spreadsheet will not run (see `_FORMULA_STARTS`)."""
    if value.startswith(_FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def unprotect_cell(cell: str) -> str:
    """A CSV cell's value: `protect_cell` undone (one leading `'` removed)."""
    return cell[1:] if cell.startswith("'") else cell


def to_csv(table: Table | StreamedTable) -> bytes:
    """The table as CSV bytes: what `csv.writer` writes (QUOTE_MINIMAL, CRLF), built a line at
    a time: a line without a quote, line end or extra comma is the cells joined (most are);
    only the others are quoted cell by cell (the C writer copies every character one by one,
    half of an export of table.vpp_pc). Encoded a block of lines at a time: the lines of a
    large table are never all held as text."""
    columns = table.columns
    numbered = table.key == ROW_NUMBER
    header = [ROW_NUMBER, *columns] if numbered else columns
    blanks = [""] * len(columns)
    blocks = ["\ufeff".encode()]
    lines = [_csv_line(header)]
    rows = table.iter_cells()
    number = 1
    while True:
        chunk = list(islice(rows, _LINES_A_BLOCK))
        if numbered:
            lines += [
                _csv_line([str(index), *map(cells.get, columns, blanks)])
                for index, cells in enumerate(chunk, start=number)
            ]
        else:
            lines += [_csv_line(list(map(cells.get, columns, blanks))) for cells in chunk]
        number += len(chunk)
        lines.append("")  # every line ends with CRLF
        blocks.append("\r\n".join(lines).encode("utf-8"))
        if len(chunk) < _LINES_A_BLOCK:
            return b"".join(blocks)
        lines = []


_LINES_A_BLOCK = 4096


def _csv_line(values: list[str]) -> str:
    """One CSV line as `csv.writer` writes it (without its line end), its cells protected
    from spreadsheets (`protect_cell`)."""
    if any(value.startswith(_FORMULA_STARTS) for value in values):
        values = [protect_cell(value) for value in values]
    line = ",".join(values)
    if line.count(",") == len(values) - 1 and '"' not in line and "\n" not in line and "\r" not in line:
        return line if line or len(values) != 1 else '""'  # a lone empty cell is quoted, else the line is blank
    return ",".join(
        [
            '"' + value.replace('"', '""') + '"'
            if '"' in value or "," in value or "\n" in value or "\r" in value
            else value
            for value in values
        ]
    )


def to_json(table: Table | StreamedTable) -> bytes:
    """The table as JSON bytes (see the module's docstring): what `json.dumps` of the whole
    document with JSON_INDENT writes, made a row at a time (the rows are never all held as
    objects, nor as text)."""
    head = json.dumps({"table": table.name, "key": table.key, "rows": []}, ensure_ascii=False, indent=JSON_INDENT)
    if not len(table):
        return (head + "\n").encode("utf-8")
    # The row at its depth in the document (two levels in): each of its lines indented more
    # (a newline inside a string is written `\n`: every one in the text ends a line).
    inner = "\n" + " " * (2 * JSON_INDENT)
    blocks = [(head[: -len("[]\n}")] + "[").encode("utf-8")]
    pieces: list[str] = []
    separator = inner
    for cells in table.iter_cells():
        row: dict[str, Any] = {}
        for column, value in cells.items():
            if value and table.is_json(column):
                _put(row, column.split("."), json.loads(value))
            elif "." in column:
                _put(row, column.split("."), value)
            else:
                row[column] = value
        pieces.append(separator)
        _indented(row, inner, pieces)
        separator = "," + inner
        if len(pieces) >= 2 * _LINES_A_BLOCK:
            blocks.append("".join(pieces).encode("utf-8"))
            pieces = []
    pieces.append("\n" + " " * JSON_INDENT + "]\n}\n")
    blocks.append("".join(pieces).encode("utf-8"))
    return b"".join(blocks)


def _indented(value: Any, indent: str, pieces: list[str]) -> None:
    """`value` as `json.dumps(value, ensure_ascii=False, indent=JSON_INDENT)` writes it at
    `indent` ("\n" and the spaces before its lines), appended to `pieces`. json.dumps with an
    indent builds its encoder's closures anew at each call, in reference cycles: a call per
    row, with the collector paused, left gigabytes behind."""
    from json.encoder import encode_basestring as quote  # the C encoder json.dumps uses

    if isinstance(value, str):
        pieces.append(quote(value))
    elif isinstance(value, dict):
        if not value:
            pieces.append("{}")
            return
        inner = indent + " " * JSON_INDENT
        opening = "{" + inner
        for key, item in value.items():
            if item.__class__ is str:  # most values: no call for them
                pieces += [opening, quote(key), ": ", quote(item)]
            else:
                pieces += [opening, quote(key), ": "]
                _indented(item, inner, pieces)
            opening = "," + inner
        pieces += [indent, "}"]
    elif isinstance(value, list):
        if not value:
            pieces.append("[]")
            return
        inner = indent + " " * JSON_INDENT
        opening = "[" + inner
        for item in value:
            pieces.append(opening)
            _indented(item, inner, pieces)
            opening = "," + inner
        pieces += [indent, "]"]
    else:  # numbers, true, false, null: as json.dumps writes them
        pieces.append(json.dumps(value))


def _put(row: dict[str, Any], parts: list[str], value: Any) -> None:
    for part in parts[:-1]:
        inner = row.get(part)
        if not isinstance(inner, dict):
            inner = row[part] = {}
        row = inner
    row[parts[-1]] = value


def _decode(data: bytes, where: str) -> str:
    if len(data) > MAX_SHEET_BYTES:
        raise TableError(f"{where}: {len(data)} bytes, more than the {MAX_SHEET_BYTES} read")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise TableError(f"{where}: UTF-16 text; save it as UTF-8 (CSV UTF-8 in a spreadsheet)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise TableError(
            f"{where}: line {line}, byte {exc.start}: not UTF-8; save it as UTF-8 (CSV UTF-8 in a spreadsheet)"
        ) from None


def _check_rows(count: int, what: str, where: str) -> None:
    """TableError before a sheet's rows are built when it holds more of them (`count` of its
    lines or objects, each row one at least) than a table may hold elements
    (`core.content_limits`): a CSV of a million short rows, read whole, took 2.5 GB."""
    from ....core.content_limits import ALLOW_LARGE_ADVICE, current

    limit = current().table_elements
    if count > limit and not current().allow_large:
        raise TableError(
            f"{where}: {count} {what}, more than the {limit} elements a table may hold; {ALLOW_LARGE_ADVICE}"
        )


def read_csv(data: bytes, where: str) -> list[dict[str, str]]:
    """The rows of a CSV file as {column: text}."""
    import csv

    from ....core.content_limits import current

    text = _decode(data, where)
    _check_rows(text.count("\n"), "lines", where)
    limit = current().table_elements if not current().allow_large else 1 << 62
    first_line = text.split("\n", 1)[0]
    delimiter = max((",", ";", "\t"), key=first_line.count)
    # A cell may hold a whole Grid as JSON (anim_files.xtbl: one of 600 kB).
    csv.field_size_limit(max(csv.field_size_limit(), MAX_SHEET_BYTES))
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise TableError(f"{where}: empty: a header line of columns is needed")
        if len(set(header)) != len(header):
            twice = sorted({name for name in header if header.count(name) > 1})
            raise TableError(f"{where}: the header names {', '.join(twice)} twice")
        rows = []
        # Each row is an element of the table it is imported into, and each cell one more:
        # past the elements a table may hold, the import is refused before more rows are built.
        elements = 0
        for number, values in enumerate(reader, start=2):
            if not any(values):
                continue
            if len(values) > len(header):
                raise TableError(f"{where}: line {number}: {len(values)} cells, the header has {len(header)}")
            elements += 1 + len(values) - values.count("")
            if elements > limit:
                _check_rows(elements, "cells and rows by its line " + str(number), where)
            rows.append(dict(zip(header, map(unprotect_cell, values))))
    except csv.Error as exc:
        raise TableError(f"{where}: line {reader.line_num}: {exc}") from None
    return rows


def read_json(data: bytes, where: str, table: Table) -> list[dict[str, str]]:
    """The rows of a JSON export as {column: text}, struct objects spread over dotted columns."""
    from ....core.json_input import load_json

    text = _decode(data, where)
    _check_rows(text.count("{"), "objects", where)  # a row is one object at least
    document = load_json(text, where, TableError)
    # Rows are spread and their cells written back recursively: no deeper than a table may be.
    if nested_deeper(document, MAX_DEPTH):
        raise TableError(f"{where}: nested more than {MAX_DEPTH} deep")
    rows = document.get("rows") if isinstance(document, dict) else document
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise TableError(f'{where}: needs {{"rows": [objects...]}}')
    if isinstance(document, dict):
        # A sheet of another table imported here would remove every row it lacks.
        named, key = document.get("table"), document.get("key")
        if named is not None and named != table.name:
            raise TableError(f"{where}: holds rows of <{named}>; {table.member}'s rows are <{table.name}>")
        if key is not None and key != table.key:
            raise TableError(f"{where}: its rows are keyed by {key}; {table.member}'s rows are matched by {table.key}")
    flat = []
    for number, row in enumerate(rows, start=1):
        cells: dict[str, str] = {}
        if table.key == ROW_NUMBER:
            cells[ROW_NUMBER] = str(number)  # rows without a key: matched by their position
        _spread(row, "", table, cells)
        flat.append(cells)
    return flat


def _spread(value: dict[str, Any], prefix: str, table: Table, cells: dict[str, str]) -> None:
    for name, inner in value.items():
        column = prefix + name
        if table.is_json(column) or isinstance(inner, list):
            cells[column] = json.dumps(inner, ensure_ascii=False)
        elif isinstance(inner, dict):
            _spread(inner, column + ".", table, cells)
        elif inner is None:
            cells[column] = ""
        else:
            cells[column] = inner if isinstance(inner, str) else json.dumps(inner)


def apply_rows(table: Table, rows: list[dict[str, str]], where: str) -> list[str]:
    """Make `table` hold `rows` (as `read_csv`/`read_json` give them): the changes, one line each."""
    known = set(table.columns)
    key = table.key
    columns: list[str] = []
    if set().union(*rows) - known - {key}:  # (sets: most files name only known columns)
        for row in rows:
            for column in row:
                if column not in known and column != key and column not in columns:
                    columns.append(column)
    if columns:
        unknown = ", ".join(columns)
        raise TableError(f"{where}: column {unknown} is not in {table.member}'s schema or rows")
    changes: list[str] = []
    if key == ROW_NUMBER:
        keyed = {str(index + 1): row for index, row in enumerate(rows)}
        for row in rows:
            if ROW_NUMBER not in row:
                raise TableError(f"{where}: no {ROW_NUMBER} column: {table.member}'s rows are matched by position")
        keys = [row[ROW_NUMBER] for row in rows]
    else:
        keys = [row.get(key, "") for row in rows]
        keyed = {}
        for number, (row_key, row) in enumerate(zip(keys, rows), start=1):
            if not row_key:
                raise TableError(f"{where}: row {number} has no {key} (the key {table.member}'s rows are matched by)")
            if row_key in keyed:
                raise TableError(f"{where}: the key {key} {row_key!r} is on two rows")
            keyed[row_key] = row
    present = {row.key: row for row in table.rows}
    for row_key, new in keyed.items():
        old = present.get(row_key)
        if old is None:
            table.add_row({column: value for column, value in new.items() if column != ROW_NUMBER})
            changes.append(f"{table.member}: row {row_key} added")
            continue
        # Most rows are unchanged: every cell compared at once (absent cells read as empty).
        expected = {**dict.fromkeys(new, ""), **old.cells}
        if ROW_NUMBER in new:
            expected[ROW_NUMBER] = new[ROW_NUMBER]
        if new.items() <= expected.items():
            continue
        for column, value in new.items():
            if column == ROW_NUMBER:
                continue
            before = old.get(column)
            if value != before and not (table.is_json(column) and _same_json(value, before)):
                table.set(old.index, column, value)
                changes.append(f"{table.member}: row {row_key}: {column}: {before!r} -> {value!r}")
    for row_key, old in present.items():
        if row_key not in keyed:
            table.remove_row(old.index)
            changes.append(f"{table.member}: row {row_key} removed")
    return changes


def _same_json(new: str, old: str) -> bool:
    try:
        return bool(json.loads(new or "[]") == json.loads(old or "[]"))
    except (ValueError, RecursionError):  # not the same: setting the cell says what is wrong
        return False
