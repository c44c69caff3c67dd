"""Checking a table's values against its schema.

Each finding names the table (member), the row (its key), the field (a dotted path), the
value and the problem, with a severity: "error" for what the game cannot read as the schema
says (a number that does not parse, a Selection outside its Choices, a Flag not in the list,
a duplicate row key), "warning" for the rest (a Filename without its extension, a Reference
to a row the referenced table lacks, an element the schema does not know).
"""

from __future__ import annotations

import json

from .cells import JSON_KINDS, PENDING, ROW_NUMBER
from .json_cells import items_json
from .schema import EDITOR_FIELDS, Field
from .table import Table

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any
    from xml.etree.ElementTree import Element as EtElement

    from .stream import StreamedTable


class Finding:
    """One value that breaks its field's rule."""

    __slots__ = ("field", "member", "problem", "row", "severity", "value")

    def __init__(self, member: str, row: str, field: str, value: str, problem: str, severity: str) -> None:
        self.member = member
        self.row = row
        self.field = field
        self.value = value
        self.problem = problem
        self.severity = severity

    @property
    def kind(self) -> str:
        """The problem without its detail (`not a choice`), for counting."""
        return self.problem.split(":", 1)[0].split(" (", 1)[0]

    def __reduce__(self) -> tuple[type[Finding], tuple[str, ...]]:
        # Sent between processes by value (the default for slots goes through copyreg: slower).
        return Finding, (self.member, self.row, self.field, self.value, self.problem, self.severity)

    def to_dict(self) -> dict[str, str]:
        return {
            "member": self.member,
            "row": self.row,
            "field": self.field,
            "value": self.value,
            "problem": self.problem,
            "severity": self.severity,
        }

    def __str__(self) -> str:
        return f"{self.member}: row {self.row}: {self.field} = {self.value!r}: {self.problem}"


def new_findings(findings: list[Finding], base: list[Finding]) -> list[Finding]:
    """The `findings` that `base` (those of the original tables) does not hold: the same
    member, row, field, value and problem count as the same finding."""
    known = {(f.member, f.row, f.field, f.value, f.problem) for f in base}
    return [f for f in findings if (f.member, f.row, f.field, f.value, f.problem) not in known]


def check_table(
    table: Table | StreamedTable, references: Callable[[str, list[str]], set[str] | None] | None = None
) -> list[Finding]:
    """Every finding of one table; `references(file, path)` gives the values a Reference may
    name (None: that table is not at hand, the reference is counted as not checked). The rows
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
    reference_sets: dict[tuple[str, str], set[str] | None] = {}

    def lookup(field: Field) -> set[str] | None:
        assert field.reference is not None
        file, path = field.reference
        cache_key = (file, ".".join(path))
        if cache_key not in reference_sets:
            reference_sets[cache_key] = references(file, path) if references is not None and path else None
        return reference_sets[cache_key]

    checkers = _column_checks(table, lookup)
    described = schema.described
    # JSON cells are checked from their elements (`pending`), never made into text.
    for index, (cells, pending) in enumerate(table.iter_raw()):
        key = str(index + 1) if numbered else cells.get(key_column, "")
        for column, value in cells.items():
            if column in checkers:
                check = checkers[column]
                if check is None:
                    continue
                found = check(pending[column][0] if value == PENDING else value)
                if found:
                    for problem, severity, bad in found:
                        add(key, column, bad, problem, severity)
            elif described and column.split(".", 1)[0] not in EDITOR_FIELDS:
                if value == PENDING:
                    element, json_field = pending[column]
                    value = items_json(element, json_field)
                add(key, column, value, "not in the schema", "warning")
    return findings


def _column_checks(table: Table | StreamedTable, lookup: Callable[[Field], set[str] | None]) -> dict[str, Any]:
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
                    checks[column] = _leaf_check(parent, lookup)
            continue
        if table.is_json(column):
            checks[column] = _json_check(field, lookup)
        else:
            checks[column] = _leaf_check(field, lookup)
    return checks


NO_PROBLEMS: tuple[tuple[str, str, str], ...] = ()


def _leaf_check(field: Field, lookup: Callable[[Field], set[str] | None]) -> Any:
    """A function value -> [(problem, severity, value)], or None when the field has no rule.
    One function per kind, the common case (a good value) first: it runs once per cell."""
    kind = field.kind
    if kind == "Int":

        def check_int(value: str) -> Any:
            try:
                int(value)  # int() and float() take the blanks around a number themselves
                return NO_PROBLEMS
            except ValueError:
                pass
            try:
                if float(value).is_integer():
                    return NO_PROBLEMS
            except ValueError:
                if not value.strip():
                    return NO_PROBLEMS
            return [("not an integer", "error", value)]

        return check_int
    if kind == "Float":

        def check_float(value: str) -> Any:
            try:
                float(value)
                return NO_PROBLEMS
            except ValueError:
                return NO_PROBLEMS if not value.strip() else [("not a number", "error", value)]

        return check_float
    if kind == "Selection" and field.choices:
        choices = set(field.choices)
        lowered = {choice.lower() for choice in field.choices}
        shown = ", ".join(field.choices[:8]) + (", ..." if len(field.choices) > 8 else "")

        def check_choice(value: str) -> Any:
            if value in choices:
                return NO_PROBLEMS
            text = value.strip()
            if not text or text in choices or text.lower() in lowered:
                return NO_PROBLEMS
            return [(f"not a choice (choices: {shown})", "error", value)]

        return check_choice
    if field.extension and kind in ("Filename", "String"):
        # The game's compiled files add an x (`.effect` names `x.effectx`).
        endings = ("." + field.extension.lower(), "." + field.extension.lower() + "x")

        def check_extension(value: str) -> Any:
            text = value.strip().lower()
            if not text or text.endswith(endings):
                return NO_PROBLEMS
            return [(f"no .{field.extension} extension", "warning", value)]

        return check_extension
    if kind == "Reference" and field.reference is not None:
        file, path = field.reference
        problem = f"no such row in {file} ({'.'.join(path)})"
        looked_up: list[set[str] | None] = []  # the values it may name, once a cell asks

        def check_reference(value: str) -> Any:
            if not looked_up:
                looked_up.append(lookup(field))
            known = looked_up[0]
            if known is None or value in known:
                return NO_PROBLEMS
            text = value.strip()
            return NO_PROBLEMS if not text or text in known else [(problem, "warning", value)]

        return check_reference
    return None


def _json_check(field: Field, lookup: Callable[[Field], set[str] | None]) -> Any:
    """A function of a JSON cell (its text, or its element) -> [(problem, severity, value)]."""
    allowed_flags = set(field.flags)
    # ComboElement: the editor leaves the other choices' fields behind, empty: only a filled
    # element that is neither a choice nor a field of one is reported.
    combo_names = {child.name for child in field.children}
    combo_names |= {sub.name for child in field.children for sub in child.children}
    item = field.children[0] if field.children and field.kind in ("List", "Grid") else None
    leaf = None
    sub_checks: dict[str, Any] = {}
    if item is not None:
        if item.kind not in JSON_KINDS and not item.children:
            leaf = _leaf_check(item, lookup)
        for sub in item.children:
            if sub.kind not in JSON_KINDS and not sub.children:
                sub_checks[sub.name] = _leaf_check(sub, lookup)

    def check_element(element: EtElement) -> list[tuple[str, str, str]]:
        problems: list[tuple[str, str, str]] = []
        if field.kind == "Flags":
            for child in element:
                text = child.text or ""
                if child.tag != "Flag" or len(child):
                    problems.append(("not a flag", "error", f"<{child.tag}>"))
                elif allowed_flags and text not in allowed_flags:
                    problems.append(("not a flag", "error", text))
        elif field.kind == "ComboElement":
            for child in element:
                if child.tag not in combo_names and (len(child) or (child.text or "").strip()):
                    problems.append(("not a choice", "warning", child.tag))
        elif item is not None:
            for child in element:
                if child.tag != item.name:
                    problems.append(("not in the schema", "warning", child.tag))
                elif leaf is not None:
                    if not len(child):
                        problems.extend(leaf(child.text or ""))
                elif item.children:
                    for sub in child:
                        if sub.tag not in item.by_name:
                            problems.append(("not in the schema", "warning", f"{item.name}.{sub.tag}"))
                        else:
                            sub_check = sub_checks.get(sub.tag)
                            if sub_check is not None and not len(sub):
                                problems.extend(sub_check(sub.text or ""))
        return problems

    def check(value: Any) -> list[tuple[str, str, str]]:
        if not isinstance(value, str):
            return check_element(value)
        # A cell made into text (after an edit): read back into an element to check it.
        import xml.etree.ElementTree as ET

        from .json_cells import parse_json_cell, tagged_item
        from .parse import TableError

        try:
            items = parse_json_cell(value, field.name)
            element = ET.Element(field.name)
            _build(element, items, field, tagged_item)
        except (TableError, AttributeError, TypeError):
            return [("not JSON items", "error", value)]
        return check_element(element)

    return check


def _build(element: Any, value: Any, field: Field | None, tagged: Any) -> None:
    """An ElementTree element holding a JSON cell's value (as `Table.write` would)."""
    import xml.etree.ElementTree as ET

    if isinstance(value, list):
        for entry in value:
            tag, inner = tagged(entry, field.item_tag if field is not None else None, "", None)
            _build(ET.SubElement(element, tag), inner, field.child(tag) if field is not None else None, tagged)
    elif isinstance(value, dict):
        for tag, inner in value.items():
            _build(ET.SubElement(element, tag), inner, field.child(tag) if field is not None else None, tagged)
    elif value is not None:
        element.text = value if isinstance(value, str) else json.dumps(value)


def reference_values(table: Table | StreamedTable, path: list[str]) -> set[str]:
    """The values a Reference `Row.Field[.Sub...]` may name in `table`: the texts of every
    element at that path below the rows of that tag."""
    values: set[str] = set()
    if not path:
        return values
    row_tag, rest = path[0], path[1:]
    for element in table.elements:
        if element.tag != row_tag and row_tag != table.name:
            continue
        found = [element]
        for part in rest:
            found = [child for parent in found for child in parent if child.tag == part]
        values.update((item.text or "").strip() for item in found)
    return values


def table_file_name(file: str) -> str:
    """How a Reference's `<File>` (`..\\dlc\\x.xtbl`) finds its table: by file name, any case."""
    return file.replace("\\", "/").rsplit("/", 1)[-1].lower()


def reference_targets(fields: list[Field]) -> set[tuple[str, str]]:
    """(table file name, dotted path) of every Reference `fields` and their sub-fields make:
    what `check_table` may ask its `references` for."""
    targets: set[tuple[str, str]] = set()
    for field in fields:
        if field.reference is not None and field.reference[1]:
            targets.add((table_file_name(field.reference[0]), ".".join(field.reference[1])))
        if field.children:
            targets |= reference_targets(field.children)
    return targets


class ReferenceIndex:
    """`references` for `check_table`: the values a Reference may name, from the referenced
    table when it is at hand (by file name, any case; `load(name)` may find more), cached per
    table and path; counts the reference fields it could not check."""

    def __init__(
        self,
        tables: Mapping[str, Table | StreamedTable],
        load: Callable[[str], Table | StreamedTable | None] | None = None,
    ) -> None:
        self.by_name = {table_file_name(member): table for member, table in tables.items()}
        self.load = load
        self.not_checked = 0
        self._values: dict[tuple[str, str], set[str]] = {}

    def know(self, values: dict[tuple[str, str], set[str]]) -> None:
        """Take values found elsewhere ({(file name, dotted path): values}): those of the tables
        another process read."""
        self._values.update(values)

    def __call__(self, file: str, path: list[str]) -> set[str] | None:
        name = table_file_name(file)
        key = (name, ".".join(path))
        values = self._values.get(key)
        if values is not None:
            return values
        if name not in self.by_name and self.load is not None:
            loaded = self.load(name)
            if loaded is not None:
                self.by_name[name] = loaded
        table = self.by_name.get(name)
        if table is None:
            self.not_checked += 1
            return None
        values = self._values[key] = reference_values(table, path)
        return values
