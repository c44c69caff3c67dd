"""One `.xtbl` table: its schema, its rows as cells, and edits written back byte-minimally.

Reading uses ElementTree (C speed, for listing, checking and exporting hundreds of tables);
writing replays the recorded edits on `xmldoc.XmlDocument`, the tree that keeps every byte,
so a changed cell changes only that element's text. Both trees come from the same expat
parse rules, so the n-th row element of one is the n-th of the other.

Cells: a row as {dotted path: text}. A leaf field is its element's text (`Name`); a field
holding one child per sub-field is spread over dotted columns (`Damage_Scaling_Max.NPC_Damage`);
a field holding repeated items (List, Grid, Flags, a ComboElement's choice, or any element
whose children repeat a tag) is one cell of JSON text: a list of the items' values, an item
whose tag is not the field's item tag written as {"<tag>": value}. A value is the element's
text, or an object of its children when their tags differ, else a list as above.
"""

from __future__ import annotations

import contextlib
import json
import re
from json.encoder import encode_basestring as _quote  # the C encoder json.dumps uses

from .schema import EDITOR_FIELDS, REPEATED_KINDS, Field, Schema, parse_schema
from .xmldoc import (
    MAX_DEPTH,
    MAX_XML_BYTES,
    TAG_REST,
    Element,
    XmlDocument,
    XmlError,
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

JSON_KINDS = REPEATED_KINDS | {"ComboElement"}
PENDING = "\x00"  # a JSON cell not made yet (see Table.raw_cells)
ROW_NUMBER = "#"  # the key of a table whose rows have no unique field: the row's position (1-based)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused while many tables are parsed and kept: each
    ElementTree element is a tracked object, and every collection walks all the trees kept so
    far (keeping table.vpp_pc's 423 trees took three times their parsing). At the end what was
    made is moved out of the collector's sight (`gc.freeze`), else the next collection would
    walk it all once more (a third of `table check`): trees hold no cycles, and reference
    counting frees them as usual."""
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.freeze()
            gc.enable()


class TableError(XmlError):
    """A table that cannot be read, or an edit it cannot take."""


def parse_xml(data: bytes, where: str, encoding: str | None = None) -> EtElement:
    """`data` as an ElementTree (in `encoding` when given, else as the document says);
    TableError when it is not well-formed, declares a DTD or is too large."""
    import xml.etree.ElementTree as ET

    if len(data) > MAX_XML_BYTES:
        raise TableError(f"{where}: {len(data)} bytes, more than the {MAX_XML_BYTES} a table may hold")
    encoding = encoding or source_encoding(data)
    if b"<!DOCTYPE" in data:
        # Refused by expat's DTD handler before any entity is declared or expanded.
        run_parser(make_parser(where, encoding, TableError), data, where, TableError)
    parser = ET.XMLParser(encoding=encoding)
    try:
        parser.feed(data)
        return parser.close()
    except ET.ParseError as exc:
        raise TableError(f"{where}: not well-formed XML ({exc})") from None
    except (LookupError, UnicodeError) as exc:  # an encoding Python does not know, or bytes not in it
        raise TableError(f"{where}: its declared encoding cannot be read ({exc})") from None


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
        """Each row as {column: text} (see the module's docstring); absent elements left out."""
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
        forced = {path for path, is_json in _schema_paths(self.schema.fields, "") if is_json}
        for _ in range(3):  # again when a row shows that a path must be JSON
            conflicts: set[str] = set()
            top = _Level("", self.schema.by_name, forced, [])
            cells = []
            for element in self._elements:
                row: dict[str, str] = {}
                _flatten(element, top, row, conflicts, 0, self.member)
                cells.append(row)
            if not conflicts - forced:
                break
            forced |= conflicts
        order = [path for path, _ in _schema_paths(self.schema.fields, "", forced)]
        seen = set(order)
        for row in cells:
            for path in row:
                if path not in seen:
                    # A path below a JSON column is never a column of its own.
                    seen.add(path)
                    order.append(path)
        self._columns = [path for path in order if not _under(path, forced)]
        self._json_paths = forced
        self._cells = cells
        self._pending = top.pending
        self._key = _choose_key(self.schema, cells, forced)

    # -- editing ---------------------------------------------------------------------------------

    def set(self, row: int, column: str, value: str) -> None:
        """Set one cell of the row at position `row` (JSON text for a JSON column)."""
        cells = self.cells()[row]
        if cells.get(column, "") == value:
            return
        if self.is_json(column):
            _parse_json_cell(value, f"{self.member}: row {row + 1}, {column}")
        cells[column] = value
        self._edits.append(("set", row, column, value))

    def add_row(self, cells: Mapping[str, str]) -> None:
        """Append a row holding `cells` (empty cells left out), laid out like the others."""
        for column, value in cells.items():
            if value and self.is_json(column):
                _parse_json_cell(value, f"{self.member}: new row, {column}")
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
            items = _parse_json_cell(value, f"{self.member}: {column}") if value else []
            _write_items(document, element, items, field)
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


# -- cells -----------------------------------------------------------------------------------------


def _most_common(elements: list[EtElement]) -> str:
    counts: dict[str, int] = {}
    for element in elements:
        counts[element.tag] = counts.get(element.tag, 0) + 1
    return max(counts, key=counts.__getitem__) if counts else ""


def _schema_paths(fields: list[Field], prefix: str, forced: set[str] | None = None) -> Iterator[tuple[str, bool]]:
    """(dotted path, is a JSON column) for each column the schema's fields give."""
    for field in fields:
        path = prefix + field.name
        if field.kind in JSON_KINDS or (forced is not None and path in forced):
            yield path, True
        elif field.children and field.kind != "ComboElement":
            yield from _schema_paths(field.children, path + ".", forced)
        else:
            yield path, False


def _under(path: str, json_paths: set[str]) -> bool:
    """Whether `path` lies strictly below one of `json_paths`."""
    cut = path.rfind(".")
    while cut > 0:
        if path[:cut] in json_paths:
            return True
        cut = path.rfind(".", 0, cut)
    return False


class _Level:
    """What `_flatten` needs at one depth of the schema: the fields by tag, and which tags take
    the slow path (JSON cells, structs); built once per table."""

    __slots__ = ("children", "fields", "forced", "json_tags", "pending", "prefix", "special")

    def __init__(self, prefix: str, fields: dict[str, Field], forced: set[str], pending: list[Any]) -> None:
        self.pending = pending  # the JSON cells to make, shared by every level
        self.prefix = prefix
        self.fields = fields
        self.forced = forced
        cut = len(prefix)
        self.json_tags = {tag for tag, field in fields.items() if field.kind in JSON_KINDS}
        self.json_tags |= {path[cut:] for path in forced if path.startswith(prefix) and "." not in path[cut:]}
        self.special = self.json_tags | {tag for tag, field in fields.items() if field.children}
        self.children: dict[str, _Level] = {}

    def child(self, tag: str) -> _Level:
        level = self.children.get(tag)
        if level is None:
            field = self.fields.get(tag)
            sub = field.by_name if field is not None else {}
            level = self.children[tag] = _Level(self.prefix + tag + ".", sub, self.forced, self.pending)
        return level


def _flatten(
    element: EtElement, level: _Level, cells: dict[str, str], conflicts: set[str], depth: int, where: str
) -> None:
    """One row (or struct) element into `cells` as {dotted path: text}: the hot loop of reading
    a table, so a leaf the schema has nothing special about takes three dictionary operations."""
    if depth > MAX_DEPTH:
        raise TableError(f"{where}: elements nested more than {MAX_DEPTH} deep")
    prefix = level.prefix
    special = level.special
    structs: set[str] | None = None
    for child in element:
        tag = child.tag
        path = prefix + tag
        if tag not in special and not len(child):
            if path in cells:
                # The tag repeats: its parent holds items, so it is one JSON cell.
                conflicts.add(prefix[:-1] if prefix else path)
                continue
            cells[path] = child.text or ""
        elif tag in level.json_tags:
            if path in cells:
                conflicts.add(prefix[:-1] if prefix else path)
                continue
            cells[path] = PENDING
            level.pending.append((cells, path, child, level.fields.get(tag)))
        elif len(child):
            if structs is None:
                structs = set()
            if tag in structs:
                conflicts.add(prefix[:-1] if prefix else path)
                continue
            structs.add(tag)
            field = level.fields.get(tag)
            if field is not None and not field.children and field.kind != "String" and not field.inferred:
                conflicts.add(path)  # the schema says a leaf, the row holds elements
            _flatten(child, level.child(tag), cells, conflicts, depth + 1, where)
        elif child.text:
            cells[path] = child.text  # a struct field holding text only


def value_of(element: EtElement, depth: int = 0) -> Any:
    """An element's value as JSON: its text, an object of its children when their tags differ,
    else a list of {"<tag>": value}."""
    if not len(element):
        return element.text or ""
    if depth > MAX_DEPTH:
        raise TableError(f"<{element.tag}>: elements nested more than {MAX_DEPTH} deep")
    depth += 1
    value = {child.tag: (value_of(child, depth) if len(child) else child.text or "") for child in element}
    if len(value) == len(element):
        return value
    return [{f"<{child.tag}>": value_of(child, depth)} for child in element]


class _JsonKeys(dict[str, str]):
    """A tag's JSON text as it prefixes a value, made once per tag: `"tag": ` for an object's
    member, `{"<tag>": ` for a tagged item (`wrap`)."""

    def __init__(self, wrap: bool) -> None:
        super().__init__()
        self.wrap = wrap

    def __missing__(self, tag: str) -> str:
        key = self[tag] = "{" + _quote(f"<{tag}>") + ": " if self.wrap else _quote(tag) + ": "
        return key


_MEMBER_KEYS = _JsonKeys(wrap=False)
_ITEM_KEYS = _JsonKeys(wrap=True)


def _value_json(element: EtElement, depth: int = 0) -> str:
    """`json.dumps(value_of(element), ensure_ascii=False)`, written directly (half the time: a
    table export makes thousands of these; anim_files.xtbl's one cell holds 60,000 elements).
    Most elements hold two or three children: `map` over them costs more than it saves."""
    if not len(element):
        return _quote(element.text or "")
    if depth > MAX_DEPTH:
        raise TableError(f"<{element.tag}>: elements nested more than {MAX_DEPTH} deep")
    depth += 1
    if len({child.tag for child in element}) == len(element):
        return (
            "{"
            + ", ".join(
                [
                    _MEMBER_KEYS[child.tag] + (_value_json(child, depth) if len(child) else _quote(child.text or ""))
                    for child in element
                ]
            )
            + "}"
        )
    return "[" + ", ".join([_ITEM_KEYS[child.tag] + _value_json(child, depth) + "}" for child in element]) + "]"


def items_json(element: EtElement, field: Field | None) -> str:
    """A JSON cell's text: `json.dumps(_items(element, field), ensure_ascii=False)`."""
    if field is not None and field.kind == "ComboElement":
        return _value_json(element)
    item_tag = field.item_tag if field is not None else None
    items = [
        (_value_json(child, 1) if len(child) else _quote(child.text or ""))
        if child.tag == item_tag
        else _ITEM_KEYS[child.tag] + _value_json(child, 1) + "}"
        for child in element
    ]
    return "[" + ", ".join(items) + "]"


def _items(element: EtElement, field: Field | None) -> Any:
    """A JSON cell's value: a repeated field's items (the item tag's bare), or the value."""
    if field is not None and field.kind == "ComboElement":
        return value_of(element)
    item_tag = field.item_tag if field is not None else None
    return [
        (value_of(child, 1) if len(child) else child.text or "")
        if child.tag == item_tag
        else {f"<{child.tag}>": value_of(child, 1)}
        for child in element
    ]


def _parse_json_cell(value: str, where: str) -> Any:
    try:
        return json.loads(value) if value.strip() else []
    except ValueError as exc:
        raise TableError(f"{where}: not JSON ({exc.args[0]}): {value[:60]!r}") from None


_TAG = re.compile(r"<([A-Za-z_][\w.\-]*)>")


def _write_items(document: XmlDocument, element: Element, value: Any, field: Field | None) -> None:
    """Write a JSON cell's value into the emptied `element`."""
    if field is not None and field.kind == "ComboElement":
        _write_value(document, element, value, field)
        return
    if not isinstance(value, list):
        raise TableError(f"{document.where}: {element.path()}: a list of items is needed, not {value!r}")
    item_tag = field.item_tag if field is not None else None
    for item in value:
        tag, item_value = _tagged(item, item_tag, document.where, element)
        child = document.append(element, tag)
        _write_value(document, child, item_value, field.child(tag) if field is not None else None)


def _tagged(item: Any, item_tag: str | None, where: str, element: Element) -> tuple[str, Any]:
    if isinstance(item, dict) and len(item) == 1:
        ((key, inner),) = item.items()
        match = _TAG.fullmatch(key)
        if match:
            return match.group(1), inner
    if item_tag is None:
        raise TableError(f'{where}: {element.path()}: an item needs its tag, as {{"<Tag>": value}}: {item!r}')
    return item_tag, item


def _write_value(document: XmlDocument, element: Element, value: Any, field: Field | None) -> None:
    if isinstance(value, dict):
        for tag, inner in value.items():
            child = document.append(element, tag)
            _write_value(document, child, inner, field.child(tag) if field is not None else None)
    elif isinstance(value, list):
        for item in value:
            tag, inner = _tagged(item, field.item_tag if field is not None else None, document.where, element)
            child = document.append(element, tag)
            _write_value(document, child, inner, field.child(tag) if field is not None else None)
    elif value is None:
        return
    else:
        document.set_text(element, value if isinstance(value, str) else json.dumps(value))


def _choose_key(schema: Schema, cells: list[dict[str, str]], json_paths: set[str]) -> str:
    def unique(column: str) -> bool:
        values = [row.get(column, "") for row in cells]
        return all(values) and len(set(values)) == len(values)

    if not cells:
        return "Name" if "Name" in schema.by_name or not schema.fields else schema.fields[0].name
    candidates = ["Name"]
    candidates += [field.name for field in schema.fields if field.unique and field.kind not in JSON_KINDS]
    candidates += [field.name for field in schema.fields if not field.children and field.kind not in JSON_KINDS]
    candidates += [column for column in cells[0] if "." not in column]
    for column in candidates:
        if column not in EDITOR_FIELDS and column not in json_paths and unique(column):
            return column
    return ROW_NUMBER


def open_table(data: bytes, member: str = "table.xtbl") -> Table:
    """Parse one `.xtbl` member's bytes."""
    return Table(data, member)


_DESCRIBED_ROW = re.compile(rb"<TableDescription>\s*<Name>\s*([^<\s]+)\s*</Name>")
_FIRST_ROW = re.compile(rb"<Table>\s*(?:<!--.*?-->\s*)*<([A-Za-z_][^\s/>]*)", re.DOTALL)


def summarize(data: bytes, member: str) -> dict[str, Any]:
    """{member, table, rows, columns, schema} without building the tree: `table ls` of hundreds
    of tables. The XML is checked well-formed (expat, no handler called per element); rows are
    the row tag's elements directly inside `<Table>` (found from that tag's start and end
    tags alone), columns the schema's top fields (or, without one, the rows' distinct child tags)."""
    if len(data) > MAX_XML_BYTES:
        raise TableError(f"{member}: {len(data)} bytes, more than the {MAX_XML_BYTES} a table may hold")
    run_parser(make_parser(member, source_encoding(data), TableError), data, member, TableError)
    start = data.find(b"<TableDescription>")
    described = _DESCRIBED_ROW.search(data, start) if start >= 0 else None
    if described is None:
        table = Table(data, member)
        tags = {child.tag for element in table.elements for child in element}
        return {"member": member, "table": table.name, "rows": len(table), "columns": len(tags), "schema": False}
    body = data.find(b"<Table>")
    end = _matching_end(data, body, b"Table") if body >= 0 else -1
    if end < 0 or not re.match(rb"(?:\xef\xbb\xbf)?(?:<\?xml[^>]*>)?\s*<root[\s>]", data):
        Table(data, member)  # raises what is wrong
    row_tag = described.group(1)
    rows = _count_top(data, body + len(b"<Table>"), end, row_tag)
    close = _matching_end(data, start, b"TableDescription")
    columns = _count_top(data, start + len(b"<TableDescription>"), close, b"Element")
    return {
        "member": member,
        "table": row_tag.decode("utf-8", "replace"),
        "rows": rows,
        "columns": columns,
        "schema": True,
    }


def _count_top(data: bytes, start: int, end: int, tag: bytes) -> int:
    """How many `tag` elements lie at the top level of data[start:end], from the start and end
    tags of that name alone (a row holding an element of its own tag counts once)."""
    count = depth = 0
    for match in _tag_pattern(tag).finditer(data, start, end):
        if match.group(1):
            depth -= 1
        elif match.group(2):
            count += depth == 0
        else:
            count += depth == 0
            depth += 1
    return count


def _matching_end(data: bytes, start: int, tag: bytes) -> int:
    """Where the end tag of the `tag` element starting at `start` begins (-1: none)."""
    depth = 0
    for match in _tag_pattern(tag).finditer(data, start):
        if match.group(1):
            depth -= 1
            if depth == 0:
                return match.start()
        elif not match.group(2):
            depth += 1
    return -1


def _tag_pattern(tag: bytes) -> re.Pattern[bytes]:
    """The start, end and empty tags of one name (group 1 `/` for an end, group 2 for `/>`)."""
    return re.compile(rb"<(/?)" + re.escape(tag) + rb"(?:\s[^>]*?)?(/?)>")
