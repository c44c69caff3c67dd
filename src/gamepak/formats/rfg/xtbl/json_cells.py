"""The JSON cells of a table: a field holding repeated items (List, Grid, Flags, a
ComboElement's choice, or any element whose children repeat a tag) as one cell of JSON text,
and that text written back into elements.

The cell is a list of the items' values, an item whose tag is not the field's item tag written
as {"<tag>": value}. A value is the element's text, or an object of its children when their
tags differ, else a list as above.
"""

from __future__ import annotations

import re

# The C encoder json.dumps uses for strings, taken from its own module: the `json` package is
# imported only by what parses or dumps JSON (not by `table check`).
try:
    from _json import encode_basestring as _quote
except ImportError:  # no C accelerator: json's own fallback
    from json.encoder import encode_basestring as _quote

from .parse import TableError
from .xmldoc import MAX_DEPTH, Element, XmlDocument

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from xml.etree.ElementTree import Element as EtElement

    from .schema import Field


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


def parse_json_cell(value: str, where: str) -> Any:
    """A JSON cell's text as items; TableError when it is not JSON, or nests deeper than a
    table's elements may (what is written must read back, and writing it recurses)."""
    from ....core.json_input import MAX_JSON_DEPTH, json_depth

    if json_depth(value) > MAX_JSON_DEPTH:
        raise TableError(f"{where}: JSON nested more than {MAX_DEPTH} deep")
    import json

    try:
        items = json.loads(value) if value.strip() else []
    except (ValueError, RecursionError) as exc:
        raise TableError(f"{where}: not JSON ({exc.args[0]}): {value[:60]!r}") from None
    if nested_deeper(items, MAX_DEPTH):
        raise TableError(f"{where}: JSON nested more than {MAX_DEPTH} deep")
    return items


def nested_deeper(value: Any, limit: int) -> bool:
    """Whether `value` nests lists and objects more than `limit` deep (counted without
    recursion: the value may come from a stranger's file)."""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            if depth > limit:
                return True
            pending.extend((child, depth + 1) for child in item)
    return False


_TAG = re.compile(r"<([A-Za-z_][\w.\-]*)>")


def write_items(document: XmlDocument, element: Element, value: Any, field: Field | None) -> None:
    """Write a JSON cell's value into the emptied `element`."""
    if field is not None and field.kind == "ComboElement":
        _write_value(document, element, value, field)
        return
    if not isinstance(value, list):
        raise TableError(f"{document.where}: {element.path()}: a list of items is needed, not {value!r}")
    item_tag = field.item_tag if field is not None else None
    for item in value:
        tag, item_value = tagged_item(item, item_tag, document.where, element)
        child = document.append(element, tag)
        _write_value(document, child, item_value, field.child(tag) if field is not None else None)


def tagged_item(item: Any, item_tag: str | None, where: str, element: Element) -> tuple[str, Any]:
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
            tag, inner = tagged_item(item, field.item_tag if field is not None else None, document.where, element)
            child = document.append(element, tag)
            _write_value(document, child, inner, field.child(tag) if field is not None else None)
    elif value is None:
        return
    else:
        import json

        document.set_text(element, value if isinstance(value, str) else json.dumps(value))
