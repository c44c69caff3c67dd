"""The rule of each field kind, as a function value -> [(problem, severity, value)]: numbers,
Selections, Filename extensions, References (`leaf_check`), and the cells holding repeated
items (Flags, a ComboElement's choice, a List's or Grid's items: `json_check`)."""

from __future__ import annotations

from ..cells import JSON_KINDS
from .references import LATER, Later, missing_row

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Container
    from typing import Any
    from xml.etree.ElementTree import Element as EtElement

    from ..schema import Field


MEMO_VALUES = 1 << 12  # the good values a check remembers
NO_PROBLEMS: tuple[tuple[str, str, str], ...] = ()
_NOT_A_FIELD = object()  # a tag no sub-field of an item has


def remember(good: set[Any], value: Any) -> None:
    """Add `value` to `good` (values a rule found good), which holds at most `MEMO_VALUES` (a
    streamed table's memory stays bounded: all is forgotten then)."""
    if len(good) >= MEMO_VALUES:
        good.clear()
    good.add(value)


def leaf_check(field: Field, lookup: Callable[[Field], Container[str] | None]) -> Any:
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


def json_check(field: Field, lookup: Callable[[Field], Container[str] | None]) -> Any:
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
            leaf = leaf_check(item, lookup)
        for sub in item.children:
            leaf_sub = sub.kind not in JSON_KINDS and not sub.children
            sub_checks[sub.name] = leaf_check(sub, lookup) if leaf_sub else None
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

    # The values each rule found good, by sub-field tag ("" for a leaf item): the items of a
    # column repeat few values (the game's tables: 180,000 checked, a few thousand distinct),
    # so each is checked once (as `check_table` does for the other columns).
    goods: dict[str, set[str]] = {tag: set() for tag, sub_check in sub_checks.items() if sub_check is not None}
    leaf_good: set[str] = set()

    def check_items(element: EtElement) -> list[tuple[str, str, str]]:
        problems: list[tuple[str, str, str]] = []
        for child in element:
            if child.tag != item_name:
                problems.append(("not in the schema", "warning", child.tag))
            elif leaf is not None:
                if not len(child):
                    text = child.text or ""
                    if text not in leaf_good:
                        found = leaf(text)
                        if found:
                            problems.extend(found)
                        else:
                            remember(leaf_good, text)
            elif sub_checks:
                for sub in child:
                    tag = sub.tag
                    sub_check = sub_checks.get(tag, _NOT_A_FIELD)
                    if sub_check is None:
                        continue
                    if sub_check is _NOT_A_FIELD:
                        problems.append(("not in the schema", "warning", f"{item_name}.{tag}"))
                    elif not len(sub):
                        text = sub.text or ""
                        good = goods[tag]
                        if text not in good:
                            found = sub_check(text)
                            if found:
                                problems.extend(found)
                            else:
                                remember(good, text)
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

        from ..json_cells import parse_json_cell, tagged_item
        from ..parse import TableError

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
