"""One `.xtbl` table: its schema, its rows as cells, and edits written back byte-minimally.

Reading uses ElementTree (C speed, for listing, checking and exporting hundreds of tables);
writing replays the recorded edits on `xmldoc.XmlDocument`, the tree that keeps every byte,
so a changed cell changes only that element's text. Both trees come from the same expat
parse rules, so the n-th row element of one is the n-th of the other.

Cells: a row as {dotted path: text} (`cells`); a field holding repeated items is one cell of
JSON text (`json_cells`). The tree is read by `parse`; `summary` counts rows without it.
"""

from __future__ import annotations

import contextlib

from .cells import ROW_NUMBER, Level, choose_key, flatten, schema_paths, under
from .json_cells import items_json, parse_json_cell, write_items
from .parse import TableError, parse_xml
from .schema import Field, Schema, parse_schema
from .xmldoc import (
    TAG_REST,
    Element,
    XmlDocument,
    element_count_bound,
    first_non_xml_char,
    indent_before,
    make_parser,
    run_parser,
    source_encoding,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any
    from xml.etree.ElementTree import Element as EtElement


class Table:
    """A parsed `.xtbl`: `schema`, `rows` (each with `.cells`, `.key`), lookup by key, edits, `write()`."""

    def __init__(self, data: bytes, member: str = "table.xtbl") -> None:
        self.member = member
        self.data = data
        root = parse_xml(data, member)
        body = root.find("Table") if root.tag == "root" else None
        if body is None:
            what = "no <Table> in its <root>" if root.tag == "root" else f"its root is <{root.tag}>, not <root>"
            raise TableError(f"{member}: not a table ({what})")
        elements = list(body)
        description = root.find("TableDescription")
        if description is not None:
            schema = parse_schema(description)
            if not schema.row_tag and elements:
                schema.row_tag = elements[0].tag
        else:
            schema = Schema(_most_common(elements), [], described=False)
        self._start(elements, schema)

    def _start(self, elements: list[EtElement], schema: Schema) -> None:
        self._elements = elements
        self.schema = schema
        self._spliced: tuple[bytes, str, dict[int, tuple[int, int]]] | None = None
        self._cells: list[dict[str, str]] | None = None
        self._columns: list[str] = []
        self._json_paths: set[str] = set()
        self._key: str | None = None
        self._edits: list[tuple[Any, ...]] = []
        self._pending: list[tuple[dict[str, str], str, EtElement, Field | None]] = []
        self._rows: list[Row] | None = None

    # -- reading ---------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The tag of the rows (`Weapon`)."""
        return self.schema.row_tag

    @property
    def rows(self) -> list[Row]:
        if self._rows is None:
            cells = self.cells()
            self._rows = [Row(self, index, row) for index, row in enumerate(cells)]
        return self._rows

    def __len__(self) -> int:
        return len(self._elements)

    @property
    def elements(self) -> list[EtElement]:
        """The row elements (ElementTree), in order."""
        return self._elements

    def cells(self) -> list[dict[str, str]]:
        """Each row as {column: text} (see `cells`); absent elements left out."""
        raw = self.raw_cells()
        if self._pending:
            for row, path, element, field in self._pending:
                row[path] = items_json(element, field)
            self._pending = []
        return raw

    def raw_cells(self) -> list[dict[str, str]]:
        """`cells()`, except that a JSON cell not made yet holds PENDING; `pending()` gives its
        element (checking needs the items, not their JSON text: making it is most of the cost)."""
        if self._cells is None:
            self._flatten_all()
        assert self._cells is not None
        return self._cells

    def pending(self) -> list[tuple[dict[str, str], str, EtElement, Field | None]]:
        """(row cells, column, element, field) of each JSON cell `raw_cells` has not made yet."""
        self.raw_cells()
        return self._pending

    def iter_raw(self) -> Iterator[tuple[dict[str, str], dict[str, tuple[EtElement, Field | None]]]]:
        """(cells, {column: (element, field)} of its JSON cells not made yet) per row, as
        `StreamedTable.iter_raw` gives them: `raw_cells()` with `pending()` by row."""
        raw = self.raw_cells()
        by_row: dict[int, dict[str, tuple[EtElement, Field | None]]] = {}
        for cells, path, element, field in self._pending:
            by_row.setdefault(id(cells), {})[path] = (element, field)
        none: dict[str, tuple[EtElement, Field | None]] = {}
        return ((cells, by_row.get(id(cells), none)) for cells in raw)

    def iter_cells(self) -> Iterator[dict[str, str]]:
        """`cells()` as an iterator (as `StreamedTable.iter_cells` gives them)."""
        return iter(self.cells())

    @property
    def columns(self) -> list[str]:
        """The columns: every leaf path of the schema, then paths only the rows show."""
        self.raw_cells()
        return self._columns

    @property
    def key(self) -> str:
        """The column rows are matched by: `Name` when every row has a unique one, else a field
        the schema marks unique (or the first) whose values are all there and unique, else `#`."""
        self.raw_cells()
        assert self._key is not None
        return self._key

    def row(self, key: str) -> Row:
        """The row whose key column holds `key`; TableError when there is none."""
        for row in self.rows:
            if row.key == key:
                return row
        raise TableError(f"{self.member}: no row with {self.key} {key!r}")

    def is_json(self, column: str) -> bool:
        """Whether `column`'s cells hold JSON text (repeated items)."""
        self.raw_cells()
        return column in self._json_paths

    def _flatten_all(self) -> None:
        forced = {path for path, is_json in schema_paths(self.schema.fields, "") if is_json}
        for _ in range(3):  # again when a row shows that a path must be JSON
            conflicts: set[str] = set()
            top = Level("", self.schema.by_name, forced, [])
            cells = []
            for element in self._elements:
                row: dict[str, str] = {}
                flatten(element, top, row, conflicts, 0, self.member)
                cells.append(row)
            if not conflicts - forced:
                break
            forced |= conflicts
        order = [path for path, _ in schema_paths(self.schema.fields, "", forced)]
        seen = set(order)
        for row in cells:
            for path in row:
                if path not in seen:
                    # A path below a JSON column is never a column of its own.
                    seen.add(path)
                    order.append(path)
        self._columns = [path for path in order if not under(path, forced)]
        self._json_paths = forced
        self._cells = cells
        self._pending = top.pending
        self._key = choose_key(self.schema, cells, forced)

    # -- editing ---------------------------------------------------------------------------------

    def set(self, row: int, column: str, value: str) -> None:
        """Set one cell of the row at position `row` (JSON text for a JSON column)."""
        cells = self.cells()[row]
        if cells.get(column, "") == value:
            return
        where = f"{self.member}: row {self.rows[row].key}, {column}"
        if self.is_json(column):
            _refuse_non_xml(parse_json_cell(value, where), where)
        else:
            _refuse_non_xml(value, where)
        cells[column] = value
        self._edits.append(("set", row, column, value))

    def add_row(self, cells: Mapping[str, str]) -> None:
        """Append a row holding `cells` (empty cells left out), laid out like the others."""
        key = cells.get(self.key)
        row = f"new row {key}" if key else "new row"
        for column, value in cells.items():
            where = f"{self.member}: {row}, {column}"
            if value and self.is_json(column):
                _refuse_non_xml(parse_json_cell(value, where), where)
            else:
                _refuse_non_xml(value, where)
        self._edits.append(("add", dict(cells)))

    def remove_row(self, row: int) -> None:
        """Remove the row at position `row` (positions are those before any removal)."""
        self._edits.append(("remove", row))

    @property
    def changed(self) -> bool:
        return bool(self._edits)

    def write(self) -> bytes:
        """The table's bytes: its input when nothing changed, else the input with only the
        edited elements rewritten."""
        if not self._edits:
            return self.data
        if all(edit[0] == "set" for edit in self._edits):
            rewritten = self._write_rows()
            if rewritten is not None:
                return rewritten
        self._check_growth()
        document = _Document(self.data, self.member)
        body = document.table()
        rows = body.elements()
        # Cells in row order (a row's own in the order set), as `_write_rows` writes them: the
        # bytes do not depend on it, but the first refusal named does.
        for _, index, column, value in sorted((edit for edit in self._edits if edit[0] == "set"), key=lambda e: e[1]):
            self._write_cell(document, rows[index], column, value)
        removed = [edit[1] for edit in self._edits if edit[0] == "remove"]
        for index in sorted(set(removed), reverse=True):
            document.remove(rows[index])
        for edit in self._edits:
            if edit[0] == "add":
                element = document.append(body, self.schema.row_tag)
                for column in [*self.columns, *(c for c in edit[1] if c not in self.columns)]:
                    value = edit[1].get(column, "")
                    if value:
                        self._write_cell(document, element, column, value)
        return document.to_bytes()

    def _check_growth(self) -> None:
        """TableError before the rows to add are built when the table would hold more elements
        than a table may (`core.content_limits`): each new row is an element and one per cell
        at least."""
        from ....core.content_limits import ALLOW_LARGE_ADVICE, current

        limit = current().table_elements
        if current().allow_large:
            return
        added = sum(1 + sum(1 for value in edit[1].values() if value) for edit in self._edits if edit[0] == "add")
        total = element_count_bound(self.data) + added
        if added and total > limit:
            rows = sum(edit[0] == "add" for edit in self._edits)
            raise TableError(
                f"{self.member}: {rows} rows added would make {total} elements or more, more than the {limit} a "
                f"table may hold; {ALLOW_LARGE_ADVICE}"
            )

    def _write_rows(self) -> bytes | None:
        """`write()` when every edit sets cells: only the edited rows are parsed keeping their
        bytes (a one-cell import into weapons.xtbl parses one row, not 8,000 elements), the
        rest of the input is copied. None when a row does not start its own line: the whole
        document is parsed then, so that what is appended inside it is laid out as before."""
        cells: dict[int, list[tuple[str, str]]] = {}
        for _, index, column, value in self._edits:
            cells.setdefault(index, []).append((column, value))
        spans = self._row_spans(max(cells) + 1)
        if len(spans) <= max(cells):
            return None
        if any(indent_before(self.data, spans[index][0]) is None for index in cells):
            return None
        # The rows' parents, only to name them in errors as the whole document would.
        body = Element("Table", {}, b"<Table>", Element("root", {}, b"<root>", None))
        pieces = []
        cursor = size = 0
        encoding = "utf-8"
        placed: dict[int, tuple[int, int]] = {}  # where each rewritten row lies in the output
        for index in sorted(cells):
            start, end = spans[index]
            document = _Document(self.data, self.member, span=(start, end))
            document.root.parent = body
            encoding = document.encoding
            for column, value in cells[index]:
                self._write_cell(document, document.root, column, value)
            row = document.to_bytes()
            pieces += [self.data[cursor:start], row]
            size += start - cursor
            placed[index] = (size, size + len(row))
            size += len(row)
            cursor = end
        pieces.append(self.data[cursor:])
        written = b"".join(pieces)
        self._spliced = (written, encoding, placed)
        return written

    def reread(self, data: bytes) -> Table:
        """`Table(data, member)`; when `data` is what `write()` just gave by rewriting rows
        alone, only those rows are parsed again (the rest of the bytes are this table's, so
        are the rest of its tree and its schema): an import checks what it wrote this way."""
        if self._spliced is None or self._spliced[0] is not data:
            return Table(data, self.member)
        _, encoding, placed = self._spliced
        elements = list(self._elements)
        for index, (start, end) in placed.items():
            elements[index] = parse_xml(data[start:end], self.member, encoding)
        again = Table.__new__(Table)
        again.member = self.member
        again.data = data
        again._start(elements, self.schema)
        return again

    def _row_spans(self, wanted: int) -> list[tuple[int, int]]:
        """(start, end) in the input of the first `wanted` row elements (the children of the
        first `<Table>` in `<root>`), found by one pass of expat that only counts depth and
        stops there (the input was found well-formed when the table was read)."""
        data = self.data
        parser = make_parser(self.member, source_encoding(data), TableError)
        spans: list[tuple[int, int]] = []
        depth = 0
        body = 0  # 1 inside the first <Table>, 2 after it
        opened = 0

        def start(name: str, attributes: object) -> None:
            nonlocal depth, body, opened
            depth += 1
            if depth == 3 and body == 1:
                opened = parser.CurrentByteIndex
            elif depth == 2 and body == 0 and name == "Table":
                body = 1

        def end(name: str) -> None:
            nonlocal depth, body
            if depth == 3 and body == 1:
                tag = TAG_REST.match(data, opened + 1)
                if tag is None:
                    raise TableError(f"{self.member}: offset {opened}: cannot find the tag expat reported")
                if tag.group().endswith(b"/>"):
                    spans.append((opened, tag.end()))
                else:
                    spans.append((opened, data.index(b">", parser.CurrentByteIndex) + 1))
                if len(spans) == wanted:
                    raise _Found
            elif depth == 2 and body == 1:
                raise _Found
            depth -= 1

        parser.StartElementHandler = start
        parser.EndElementHandler = end
        with contextlib.suppress(_Found):
            run_parser(parser, data, self.member, TableError)
        return spans

    def _write_cell(self, document: XmlDocument, row: Element, column: str, value: str) -> None:
        element = row
        for part in column.split("."):
            found = element.first(part)
            element = found if found is not None else document.append(element, part)
        if self.is_json(column):
            field = self.schema.field(column)
            document.clear(element)
            items = parse_json_cell(value, f"{self.member}: {column}") if value else []
            write_items(document, element, items, field)
        else:
            document.set_text(element, value)


class _Found(Exception):
    """Stops a pass of expat once it found what it looked for."""


class _Document(XmlDocument):
    error = TableError


class Row:
    """A row of a table: its position, its cells and its key."""

    __slots__ = ("cells", "index", "table")

    def __init__(self, table: Table, index: int, cells: dict[str, str]) -> None:
        self.table = table
        self.index = index
        self.cells = cells

    @property
    def key(self) -> str:
        column = self.table.key
        return str(self.index + 1) if column == ROW_NUMBER else self.cells.get(column, "")

    def __getitem__(self, column: str) -> str:
        return self.cells.get(column, "")

    def __setitem__(self, column: str, value: str) -> None:
        self.table.set(self.index, column, value)

    def get(self, column: str, default: str = "") -> str:
        return self.cells.get(column, default)

    def __repr__(self) -> str:
        return f"<Row {self.table.key}={self.key!r}>"


def _refuse_non_xml(value: Any, where: str) -> None:
    """TableError naming `where` when `value` (a cell's text, or a JSON cell's items: their
    keys and strings) holds a character XML 1.0 cannot hold: written, the table would no
    longer parse."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            position = first_non_xml_char(item)
            if position >= 0:
                code = ord(item[position])
                raise TableError(
                    f"{where}: character U+{code:04X} at position {position} of {item[:40]!r} cannot be held "
                    "by XML 1.0 (control characters but tab and line ends, lone surrogates, U+FFFE, U+FFFF)"
                )
        elif isinstance(item, dict):
            pending += item.keys()
            pending += item.values()
        elif isinstance(item, list):
            pending += item


def _most_common(elements: list[EtElement]) -> str:
    counts: dict[str, int] = {}
    for element in elements:
        counts[element.tag] = counts.get(element.tag, 0) + 1
    return most_common_tag(counts)


def most_common_tag(counts: dict[str, int]) -> str:
    """The tag counted most (the first of those counted most), "" when none was."""
    return max(counts, key=counts.__getitem__) if counts else ""


def open_table(data: bytes, member: str = "table.xtbl") -> Table:
    """Parse one `.xtbl` member's bytes."""
    return Table(data, member)
