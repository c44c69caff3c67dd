"""A table's rows as cells: each row element flattened into {dotted path: text}, and the
column rows are matched by (the key).

A leaf field is its element's text (`Name`); a field holding one child per sub-field is spread
over dotted columns (`Damage_Scaling_Max.NPC_Damage`); a field holding repeated items (List,
Grid, Flags, a ComboElement's choice, or any element whose children repeat a tag) is one cell
of JSON text (`json_cells`), made only when asked for (PENDING until then).
"""

from __future__ import annotations

from .parse import TableError
from .schema import EDITOR_FIELDS, REPEATED_KINDS, Field, Schema
from .xmldoc import MAX_DEPTH

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any
    from xml.etree.ElementTree import Element as EtElement

JSON_KINDS = REPEATED_KINDS | {"ComboElement"}
PENDING = "\x00"  # a JSON cell not made yet (see Table.raw_cells)
ROW_NUMBER = "#"  # the key of a table whose rows have no unique field: the row's position (1-based)


def schema_paths(fields: list[Field], prefix: str, forced: set[str] | None = None) -> Iterator[tuple[str, bool]]:
    """(dotted path, is a JSON column) for each column the schema's fields give."""
    for field in fields:
        path = prefix + field.name
        if field.kind in JSON_KINDS or (forced is not None and path in forced):
            yield path, True
        elif field.children and field.kind != "ComboElement":
            yield from schema_paths(field.children, path + ".", forced)
        else:
            yield path, False


def under(path: str, json_paths: set[str]) -> bool:
    """Whether `path` lies strictly below one of `json_paths`."""
    cut = path.rfind(".")
    while cut > 0:
        if path[:cut] in json_paths:
            return True
        cut = path.rfind(".", 0, cut)
    return False


class Level:
    """What `flatten` needs at one depth of the schema: the fields by tag, and which tags take
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
        self.children: dict[str, Level] = {}

    def child(self, tag: str) -> Level:
        level = self.children.get(tag)
        if level is None:
            field = self.fields.get(tag)
            sub = field.by_name if field is not None else {}
            level = self.children[tag] = Level(self.prefix + tag + ".", sub, self.forced, self.pending)
        return level


def flatten(
    element: EtElement, level: Level, cells: dict[str, str], conflicts: set[str], depth: int, where: str
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
            flatten(child, level.child(tag), cells, conflicts, depth + 1, where)
        elif child.text:
            cells[path] = child.text  # a struct field holding text only


def choose_key(schema: Schema, cells: list[dict[str, str]], json_paths: set[str]) -> str:
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
