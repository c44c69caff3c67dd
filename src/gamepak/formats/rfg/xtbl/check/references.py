"""References between tables: the values a Reference may name (`reference_values`), found in
the referenced table when it is at hand (`ReferenceIndex`), or decided once every table is read
(`DeferredReferences`, `resolve_later`)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from ..schema import Field
    from ..stream import StreamedTable
    from ..table import Table
    from .findings import Finding


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


class NotAtHand:
    """What `DeferredReferences`'s `ready` answers for a table that no member holds: the
    Reference is not checked, as `resolve_later` would decide its findings (3,000 of the game's
    tables' were made to be dropped at the end)."""

    __slots__ = ()


NOT_AT_HAND = NotAtHand()


class DeferredReferences:
    """`references` for `check_table` when the referenced tables are not all read yet (a pack's
    tables checked as each is parsed, its tree dropped at once): a lookup answers the values
    `ready` already knows to be final, else `Later`. Each lookup is recorded (`asked`, in the
    order `check_table` asks: the References not checked are counted from them, as
    `ReferenceIndex` counts them), and each `Later` by its problem text (`keys`), for
    `resolve_later`."""

    def __init__(self, ready: Callable[[str, str], set[str] | NotAtHand | None] | None = None) -> None:
        # (table file name, dotted path) -> the values when already final, NOT_AT_HAND when no
        # table of that name is to be read (the Reference is not checked: no finding is made)
        self.ready = ready
        self.asked: list[tuple[str, str]] = []  # (table file name, dotted path), once per lookup
        self.keys: dict[str, tuple[str, str]] = {}  # problem text -> (table file name, dotted path)

    def __call__(self, file: str, path: list[str]) -> set[str] | Later | None:
        key = (table_file_name(file), ".".join(path))
        self.asked.append(key)
        if self.ready is not None:
            values = self.ready(*key)
            if isinstance(values, NotAtHand):
                return None
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
