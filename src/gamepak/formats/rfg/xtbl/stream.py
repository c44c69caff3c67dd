"""Large tables read row by row: the rows of `<root><Table>` parsed a chunk at a time and let go
once used, so that checking or exporting a table never holds its whole tree.

An ElementTree of a table costs 10-13 bytes of memory per byte of XML (an element and its
text per 12-22 bytes), and the cells made from it as much again: the largest table the budgets
let through (500,000 elements, `core.content_limits`) took 21-23 times its size to check or
export. `StreamedTable` walks the bytes again for each pass instead (the schema, then the
columns and the key, then the rows checked or written), holding one chunk of rows at a time,
and gives the same schema, columns, key, cells and findings as `Table`. It is read-only:
edits go through `Table`, which keeps every tree.

`read_table` picks it for tables past `STREAM_BYTES` (none of the game's: the largest is
1.5 MB); smaller tables are parsed whole, which is faster.
"""

from __future__ import annotations

from .cells import ROW_NUMBER, Level, flatten, schema_paths, under
from .json_cells import items_json
from .parse import TableError, checked_encoding, not_well_formed
from .schema import EDITOR_FIELDS, Schema, parse_schema
from .table import Table, most_common_tag

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any
    from xml.etree.ElementTree import Element as EtElement

    from .schema import Field

STREAM_BYTES = 2 << 20  # tables larger than this are read row by row
CHUNK = 1 << 16  # bytes fed to the parser at a time: the rows held at once are those they end


def read_table(data: bytes, member: str = "table.xtbl") -> Table | StreamedTable:
    """A table to read (list, check, export): parsed whole, or row by row when large."""
    if len(data) > STREAM_BYTES:
        return StreamedTable(data, member)
    return Table(data, member)


class _Outline:
    """What one pass over a document found besides its rows."""

    def __init__(self) -> None:
        self.root: EtElement | None = None
        self.found_table = False
        self.description: EtElement | None = None
        self.rows = 0
        self.tags: dict[str, int] = {}  # row tags counted, in order of first appearance


def stream_rows(data: bytes, where: str, encoding: str | None, outline: _Outline | None = None) -> Iterator[EtElement]:
    """The row elements (children of the first `<Table>` of `<root>`) of a document, in order,
    each complete when given and dropped from the tree after the chunk that ended it; the
    other children of `<root>` are dropped once complete, but the first `<TableDescription>`,
    kept in `outline` when given. TableError as `parse_xml` raises it.

    The tree is built by ElementTree's C parser alone (no Python call per element): the only
    event asked for is the first start, for the root; after each chunk, every child of a
    parent but its last is complete (XML ends an element before its next sibling starts)."""
    import xml.etree.ElementTree as ET

    found = outline if outline is not None else _Outline()
    parser = ET.XMLParser(encoding=encoding)
    events: list[Any] = []
    # What XMLPullParser does (it takes no encoding), for the root alone.
    parser._setevents(events, ("start",))  # type: ignore[attr-defined]
    root: Any = None
    body: Any = None
    size = len(data)
    try:
        for start in [*range(0, size, CHUNK), size]:  # the last: the end of the document
            last = start >= size
            if last:
                parser.close()
            else:
                parser.feed(data[start : start + CHUNK])
            if root is None:
                if not events:
                    continue
                root = found.root = events[0][1]
                parser._setevents(events, ())  # type: ignore[attr-defined]
                events.clear()
            # The root's children: complete but the last, until the document ends.
            children = root[:]
            for position, child in enumerate(children):
                if child is body or child is found.description:
                    continue
                if body is None and child.tag == "Table" and root.tag == "root":
                    body = child
                    found.found_table = True
                elif child.tag == "TableDescription" and found.description is None:
                    found.description = child
                elif last or position < len(children) - 1:
                    root.remove(child)
            del children
            if body is None:
                continue
            complete = len(body) if last or body is not root[-1] else len(body) - 1
            if complete <= 0:
                continue
            rows = body[:complete]
            del body[:complete]
            tags = found.tags
            for row in rows:
                tags[row.tag] = tags.get(row.tag, 0) + 1
            found.rows += complete
            yield from rows
            del rows
    except (ET.ParseError, LookupError, UnicodeError, ValueError) as exc:
        raise not_well_formed(exc, where) from None


class StreamedTable:
    """A large `.xtbl` read again from its bytes for each pass over its rows (see the module's
    docstring): `schema`, `name`, `columns`, `key`, `is_json`, `len()`, `elements` (an
    iterator), `iter_raw()` and `iter_cells()`, as `Table` has them."""

    changed = False  # read-only: the rows are never held, so never edited

    def __init__(self, data: bytes, member: str = "table.xtbl") -> None:
        self.member = member
        self.data = data
        self._encoding = checked_encoding(data, member)
        outline = _Outline()
        for _ in stream_rows(data, member, self._encoding, outline):
            pass
        root = outline.root
        assert root is not None  # (a document without one is not well-formed)
        if not outline.found_table:
            what = "no <Table> in its <root>" if root.tag == "root" else f"its root is <{root.tag}>, not <root>"
            raise TableError(f"{member}: not a table ({what})")
        if outline.description is not None:
            schema = parse_schema(outline.description)
            if not schema.row_tag and outline.rows:
                schema.row_tag = next(iter(outline.tags))
        else:
            schema = Schema(most_common_tag(outline.tags), [], described=False)
        self.schema = schema
        self._rows = outline.rows
        self._lay_out()

    @property
    def name(self) -> str:
        """The tag of the rows (`Weapon`)."""
        return self.schema.row_tag

    def __len__(self) -> int:
        return self._rows

    @property
    def elements(self) -> Iterator[EtElement]:
        """The row elements, parsed again, in order (each valid until the next chunk)."""
        return stream_rows(self.data, self.member, self._encoding)

    @property
    def columns(self) -> list[str]:
        return self._columns

    @property
    def key(self) -> str:
        return self._key

    def is_json(self, column: str) -> bool:
        return column in self._json_paths

    def _lay_out(self) -> None:
        """The columns, the JSON columns and the key, as `Table._flatten_all` finds them, from
        passes that keep no row: a pass again when a row shows that a path must be JSON."""
        forced = {path for path, is_json in schema_paths(self.schema.fields, "") if is_json}
        for _ in range(3):
            used = set(forced)
            conflicts: set[str] = set()
            paths: dict[str, None] = {}  # every row path, in order of first appearance
            keys = _KeyChooser(self.schema)
            for cells, _pending in self._flattened(used, conflicts):
                if not cells.keys() <= paths.keys():
                    paths.update(dict.fromkeys(cells))
                if keys.alive:
                    keys.add(cells)
            if not conflicts - forced:
                break
            forced |= conflicts
        order = [path for path, _ in schema_paths(self.schema.fields, "", forced)]
        seen = set(order)
        order += [path for path in paths if path not in seen]
        self._columns = [path for path in order if not under(path, forced)]
        self._json_paths = forced
        self._flatten_forced = used
        self._key = keys.choose(forced)

    def _flattened(
        self, forced: set[str], conflicts: set[str]
    ) -> Iterator[tuple[dict[str, str], dict[str, tuple[EtElement, Field | None]]]]:
        """(cells, {JSON column: (element, field)}) of each row, as `cells.flatten` makes them;
        both are the row's own until the next one is asked for."""
        pending: list[Any] = []
        top = Level("", self.schema.by_name, forced, pending)
        member = self.member
        for element in self.elements:
            cells: dict[str, str] = {}
            flatten(element, top, cells, conflicts, 0, member)
            if pending:
                yield cells, {path: (item, field) for _, path, item, field in pending}
                pending.clear()
            else:
                yield cells, _NO_PENDING

    def iter_raw(self) -> Iterator[tuple[dict[str, str], dict[str, tuple[EtElement, Field | None]]]]:
        """(cells, {column: (element, field)} of its JSON cells, which hold PENDING) per row."""
        return self._flattened(set(self._flatten_forced), set())

    def iter_cells(self) -> Iterator[dict[str, str]]:
        """Each row as {column: text}, its JSON cells made, as `Table.cells()` has them."""
        for cells, pending in self.iter_raw():
            for path, (element, field) in pending.items():
                cells[path] = items_json(element, field)
            yield cells


_NO_PENDING: dict[str, Any] = {}  # (never changed)


class _KeyChooser:
    """`cells.choose_key` over rows given one at a time: every candidate column followed at
    once, each dropped at its first empty or repeated value."""

    def __init__(self, schema: Schema) -> None:
        from .cells import JSON_KINDS

        self.schema = schema
        candidates = ["Name"]
        candidates += [field.name for field in schema.fields if field.unique and field.kind not in JSON_KINDS]
        candidates += [field.name for field in schema.fields if not field.children and field.kind not in JSON_KINDS]
        self.candidates = candidates
        self.values: dict[str, set[str] | None] = {}
        self.alive = True  # some candidate is still unique (or no row was seen)
        self.rows = 0

    def add(self, cells: dict[str, str]) -> None:
        """Follow one more row (needless once `alive` is False)."""
        if not self.rows:
            self.candidates += [column for column in cells if "." not in column]
            for column in self.candidates:
                if column not in EDITOR_FIELDS:
                    self.values.setdefault(column, set())
        self.rows += 1
        alive = False
        for column, seen in self.values.items():
            if seen is None:
                continue
            value = cells.get(column, "")
            if not value or value in seen:
                self.values[column] = None
            else:
                seen.add(value)
                alive = True
        self.alive = alive

    def choose(self, json_paths: set[str]) -> str:
        schema = self.schema
        if not self.rows:
            return "Name" if "Name" in schema.by_name or not schema.fields else schema.fields[0].name
        for column in self.candidates:
            if column not in EDITOR_FIELDS and column not in json_paths and self.values.get(column) is not None:
                return column
        return ROW_NUMBER
