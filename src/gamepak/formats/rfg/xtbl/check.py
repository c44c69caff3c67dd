"""Checking a table's values against its schema.

Each finding names the table (member), the row (its key), the field (a dotted path), the
value and the problem, with a severity: "error" for what the game cannot read as the schema
says (a number that does not parse, a Selection outside its Choices, a Flag not in the list,
a duplicate row key), "warning" for the rest (a Filename without its extension, a Reference
to a row the referenced table lacks, an element the schema does not know).
"""

from __future__ import annotations

from itertools import chain, groupby
from operator import attrgetter, itemgetter

from .cells import JSON_KINDS, PENDING, ROW_NUMBER
from .json_cells import items_json
from .schema import EDITOR_FIELDS, Field
from .table import Table

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Container, Iterable, Mapping
    from typing import Any
    from xml.etree.ElementTree import Element as EtElement

    from .stream import StreamedTable


BATCH_CELLS = 1 << 14  # the cells of a batch of rows checked a column at a time
_MEMO_VALUES = 1 << 12  # the good values a check remembers
_row_number = itemgetter(0)


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
        return problem_kind(self.problem)

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


def problem_kind(problem: str) -> str:
    """A finding's problem without its detail (`not a choice`), for counting."""
    return problem.split(":", 1)[0].split(" (", 1)[0]


def finding_lines(findings: Iterable[Finding]) -> str:
    """`f"{finding.severity}: {finding}\\n"` of each finding, made without a call to str()
    each (the game's tables give 6,000 findings: these lines end `table check`'s run). Keep
    in step with `Finding.__str__` (a test holds them equal)."""
    return "".join([f"{f.severity}: {f.member}: row {f.row}: {f.field} = {f.value!r}: {f.problem}\n" for f in findings])


def count_kinds(findings: Iterable[Finding]) -> dict[tuple[str, str], int]:
    """{(severity, kind): how many findings}, in the order each first appears: counted by
    (severity, problem) in C first, then folded by kind (a few hundred distinct problems
    against thousands of findings)."""
    from collections import Counter

    findings = list(findings)
    kinds: dict[tuple[str, str], int] = {}
    for (severity, problem), number in Counter(zip(map(_SEVERITY, findings), map(_PROBLEM, findings))).items():
        kind = (severity, problem_kind(problem))
        kinds[kind] = kinds.get(kind, 0) + number
    return kinds


_SEVERITY = attrgetter("severity")
_PROBLEM = attrgetter("problem")


def new_findings(findings: list[Finding], base: list[Finding]) -> list[Finding]:
    """The `findings` that `base` (those of the original tables) does not hold: the same
    member, row, field, value and problem count as the same finding."""
    known = {(f.member, f.row, f.field, f.value, f.problem) for f in base}
    return [f for f in findings if (f.member, f.row, f.field, f.value, f.problem) not in known]


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
                column_values = [cells.get(column) for cells in batch]  # None: not in that row
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
                records += [
                    (first + offset, column, [("not in the schema", "warning", cell)])
                    for offset, cells in enumerate(batch)
                    if (cell := cells.get(column)) is not None and cell != PENDING
                ]
        if records:
            # In row order, and in a row in its cells' order (as a walk of each row's cells).
            records.sort(key=_row_number)
            for row_number, group in groupby(records, key=_row_number):
                cells = batch[row_number - first]
                problems = list(group)
                if len(problems) > 1:
                    position = {column: place for place, column in enumerate(cells)}
                    problems.sort(key=lambda record: position[record[1]])
                key = str(row_number + 1) if numbered else cells.get(key_column, "")
                for _, column, found in problems:
                    for problem, severity, bad_value in found:
                        add(key, column, bad_value, problem, severity)
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
                    checks[column] = _leaf_check(parent, lookup)
            continue
        if table.is_json(column):
            checks[column] = _json_check(field, lookup)
        else:
            checks[column] = _leaf_check(field, lookup)
    return checks


NO_PROBLEMS: tuple[tuple[str, str, str], ...] = ()
_NOT_A_FIELD = object()  # a tag no sub-field of an item has


def _remembered(check: Callable[[str], Any], good: set[str], value: str) -> Any:
    """`check(value)`, `value` added to `good` (the values `check` found good) when it is."""
    found = check(value)
    if not found:
        _remember(good, value)
    return found


def _remember(good: set[Any], value: Any) -> None:
    """Add `value` to `good`, which holds at most `_MEMO_VALUES` (a streamed table's memory
    stays bounded: all is forgotten then)."""
    if len(good) >= _MEMO_VALUES:
        good.clear()
    good.add(value)


def _leaf_check(field: Field, lookup: Callable[[Field], Container[str] | None]) -> Any:
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
        problem = missing_row(file, path)
        # The values it may name, once a cell asks, and the severity of a value not among them
        # (LATER when the values are not known yet: `DeferredReferences`).
        looked_up: list[Any] = []

        def check_reference(value: str) -> Any:
            if not looked_up:
                known = lookup(field)
                looked_up[:] = (known, LATER if isinstance(known, Later) else "warning")
            known, severity = looked_up
            if known is None or value in known:
                return NO_PROBLEMS
            text = value.strip()
            return NO_PROBLEMS if not text or text in known else [(problem, severity, value)]

        return check_reference
    return None


def _json_check(field: Field, lookup: Callable[[Field], Container[str] | None]) -> Any:
    """A function of a JSON cell (its text, or its element) -> [(problem, severity, value)]."""
    allowed_flags = set(field.flags)
    # ComboElement: the editor leaves the other choices' fields behind, empty: only a filled
    # element that is neither a choice nor a field of one is reported.
    combo_names = {child.name for child in field.children}
    combo_names |= {sub.name for child in field.children for sub in child.children}
    item = field.children[0] if field.children and field.kind in ("List", "Grid") else None
    leaf = None
    # Each sub-field of an item by tag: its check, None when it has none (a struct, a rule-less
    # field).
    sub_checks: dict[str, Any] = {}
    if item is not None:
        if item.kind not in JSON_KINDS and not item.children:
            leaf = _leaf_check(item, lookup)
        for sub in item.children:
            leaf_sub = sub.kind not in JSON_KINDS and not sub.children
            sub_checks[sub.name] = _leaf_check(sub, lookup) if leaf_sub else None
    kind = field.kind

    def check_flags(element: EtElement) -> list[tuple[str, str, str]]:
        problems: list[tuple[str, str, str]] = []
        for child in element:
            if child.tag != "Flag" or len(child):
                problems.append(("not a flag", "error", f"<{child.tag}>"))
            elif allowed_flags and (child.text or "") not in allowed_flags:
                problems.append(("not a flag", "error", child.text or ""))
        return problems

    def check_combo(element: EtElement) -> list[tuple[str, str, str]]:
        problems: list[tuple[str, str, str]] = []
        for child in element:
            if child.tag not in combo_names and (len(child) or (child.text or "").strip()):
                problems.append(("not a choice", "warning", child.tag))
        return problems

    item_name = item.name if item is not None else ""

    def check_items(element: EtElement) -> list[tuple[str, str, str]]:
        problems: list[tuple[str, str, str]] = []
        for child in element:
            if child.tag != item_name:
                problems.append(("not in the schema", "warning", child.tag))
            elif leaf is not None:
                if not len(child):
                    problems.extend(leaf(child.text or ""))
            elif sub_checks:
                for sub in child:
                    sub_check = sub_checks.get(sub.tag, _NOT_A_FIELD)
                    if sub_check is None:
                        continue
                    if sub_check is _NOT_A_FIELD:
                        problems.append(("not in the schema", "warning", f"{item_name}.{sub.tag}"))
                    elif not len(sub):
                        problems.extend(sub_check(sub.text or ""))
        return problems

    def check_nothing(element: EtElement) -> list[tuple[str, str, str]]:
        return []

    if kind == "Flags":
        check_element = check_flags
    elif kind == "ComboElement":
        check_element = check_combo
    elif item is not None:
        check_element = check_items
    else:
        check_element = check_nothing

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
        import json

        element.text = value if isinstance(value, str) else json.dumps(value)


def missing_row(file: str, path: list[str]) -> str:
    """The problem of a Reference naming a row the referenced table lacks."""
    return f"no such row in {file} ({'.'.join(path)})"


def reference_values(table: Table | StreamedTable, path: list[str]) -> set[str]:
    """The values a Reference `Row.Field[.Sub...]` may name in `table`: the texts of every
    element at that path below the rows of that tag."""
    values: set[str] = set()
    if not path:
        return values
    row_tag, rest = path[0], path[1:]
    any_row = row_tag == table.name
    for element in table.elements:
        if element.tag != row_tag and not any_row:
            continue
        found = [element]
        for part in rest:
            # (`findall` of a plain tag, as every part of a dotted path is, walks the children in C)
            found = [child for parent in found for child in parent.findall(part)]
        values.update([(item.text or "").strip() for item in found])
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


# The severity of a Reference finding whose values were not known when its table was checked
# (`DeferredReferences`): `resolve_later` keeps it as a warning or drops it.
LATER = "later"


class Later:
    """The values of a Reference not known yet: holds none, so every value not blank is a
    finding of severity LATER, decided once every table has been read."""

    __slots__ = ()

    def __contains__(self, value: object) -> bool:
        return False


_LATER = Later()
UNDECIDED = _LATER  # what `resolve_later`'s `values` answers for values not known yet


class DeferredReferences:
    """`references` for `check_table` when the referenced tables are not all read yet (a pack's
    tables checked as each is parsed, its tree dropped at once): a lookup answers the values
    `ready` already knows to be final, else `Later`. Each lookup is recorded (`asked`, in the
    order `check_table` asks: the References not checked are counted from them, as
    `ReferenceIndex` counts them), and each `Later` by its problem text (`keys`), for
    `resolve_later`."""

    def __init__(self, ready: Callable[[str, str], set[str] | None] | None = None) -> None:
        self.ready = ready  # (table file name, dotted path) -> the values, when already final
        self.asked: list[tuple[str, str]] = []  # (table file name, dotted path), once per lookup
        self.keys: dict[str, tuple[str, str]] = {}  # problem text -> (table file name, dotted path)

    def __call__(self, file: str, path: list[str]) -> set[str] | Later:
        key = (table_file_name(file), ".".join(path))
        self.asked.append(key)
        if self.ready is not None:
            values = self.ready(*key)
            if values is not None:
                return values
        self.keys[missing_row(file, path)] = key
        return _LATER


def resolve_later(
    findings: list[Finding],
    keys: Mapping[str, tuple[str, str]],
    values: Callable[[str, str], set[str] | Later | None],
) -> list[Finding]:
    """`findings` with each LATER one decided now that `values(file name, dotted path)` gives
    what a Reference may name (None: that table is not at hand, not checked; a `Later`: not
    known yet, left undecided): kept as the warning `check_table` would have made with the
    values at hand, or dropped."""
    if not any(finding.severity == LATER for finding in findings):
        return findings
    decided: list[Finding] = []
    keep = decided.append
    # By problem text (one key each): the values a Reference may name, `_ANY` when that table
    # is not at hand (not checked: dropped), `_LATER` when not known yet (kept undecided). One
    # lookup a finding: the game's tables leave 20,000 to decide, on the critical path of a
    # check on two processes.
    asked: dict[str, Any] = {}
    for finding in findings:
        if finding.severity != LATER:
            keep(finding)
            continue
        known = asked.get(finding.problem)
        if known is None:
            known = values(*keys[finding.problem])
            known = _LATER if isinstance(known, Later) else _ANY if known is None else known
            asked[finding.problem] = known
        if known is _LATER:
            keep(finding)
        elif not (finding.value in known or finding.value.strip() in known):
            finding.severity = "warning"
            keep(finding)
    return decided


class _AnyValue:
    """Holds every value: the References into a table not at hand are not checked."""

    __slots__ = ()

    def __contains__(self, value: object) -> bool:
        return True


_ANY = _AnyValue()
