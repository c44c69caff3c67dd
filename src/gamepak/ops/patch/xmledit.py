"""XML edits that keep the member's own bytes: SyncFaction's `<Edit>` merge (modinfo.xml).

The game is known to misbehave on reformatted XML, so a member is never re-serialised: the
byte-keeping tree is `formats.rfg.xtbl.xmldoc` (shared with the table model), whose errors
are raised here as `PatchError`.

The merge, as SyncFaction documents it (../shared/specs/mods.md): the XML inside `<Edit>` is
matched against the member's `<root><Table>` tag by tag from the top down; `LIST_ACTION` on a
node says how its children merge into the game node it matched:

    ADD                     append every child (the default on `<Edit>`)
    ADD_NEW                 a child merges into the game node's first child of its tag, or is
                            appended when there is none (the default on inner nodes)
    REPLACE                 the children replace the game node's children
    COMBINE_BY_FIELD:A,B    a child merges into the first game child of its tag whose `<A>` and
                            `<B>` hold the same text as the child's (a field is a path such as
                            `_Editor\\Category`, else found anywhere inside); unmatched children
                            are appended

A text child sets the matched element's text; a node's attributes are copied (LIST_ACTION
aside); a node with no content changes nothing. One choice of ours: ADD does not append a child
the game node already holds identically (same tag, attributes, text and children, whitespace
aside), so applying a mod twice adds nothing twice (the second apply changes no byte).

Hostile input: a DTD (`<!DOCTYPE`, and with it every entity declaration: the "billion laughs")
is refused before expat reads it; sizes, element counts and nesting depth are bounded.
"""

from __future__ import annotations

import re

from ...formats.rfg.xtbl import xmldoc
from ...formats.rfg.xtbl.xmldoc import MAX_DEPTH, MAX_ELEMENTS, MAX_XML_BYTES, Element
from ...formats.rfg.xtbl.xmldoc import source_encoding as _source_encoding
from .container import PatchError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

__all__ = [
    "LIST_ACTION",
    "MAX_DEPTH",
    "MAX_ELEMENTS",
    "MAX_XML_BYTES",
    "Element",
    "Node",
    "XmlDocument",
    "apply_edit",
    "parse_action",
    "parse_tree",
]

LIST_ACTION = "list_action"  # attribute names are matched without case, as SyncFaction does


class XmlDocument(xmldoc.XmlDocument):
    """A member's XML (`xmldoc.XmlDocument`) whose errors are PatchErrors."""

    error = PatchError


# -- modinfo.xml's side: a plain tree -----------------------------------------------------------


class Node:
    """An element as SyncFaction reads modinfo.xml: comments and whitespace-only text dropped;
    children are elements and (non-blank) text."""

    __slots__ = ("attributes", "children", "name")

    def __init__(self, name: str, attributes: dict[str, str], children: list[Node | str] | None = None) -> None:
        self.name = name
        self.attributes = attributes
        self.children: list[Node | str] = [] if children is None else children

    def attribute(self, name: str) -> str | None:
        """An attribute's value, its name matched without case."""
        lowered = name.lower()
        return next((value for key, value in self.attributes.items() if key.lower() == lowered), None)

    def elements(self) -> list[Node]:
        return [child for child in self.children if isinstance(child, Node)]

    def text(self) -> str:
        return "".join(child for child in self.children if isinstance(child, str))

    def inner_text(self) -> str:
        return "".join(child if isinstance(child, str) else child.inner_text() for child in self.children)


def parse_tree(data: bytes, where: str, *, max_bytes: int = MAX_XML_BYTES) -> Node:
    """A small XML document (modinfo.xml) as a `Node` tree; PatchError when it is not
    well-formed, holds a DTD, or is too large, too deep or has too many elements."""
    if len(data) > max_bytes:
        raise PatchError(f"{where}: {len(data)} bytes, more than the {max_bytes} read")
    parser = xmldoc.make_parser(where, _source_encoding(data), PatchError)
    stack: list[Node] = []
    roots: list[Node] = []
    count = 0

    def start(name: str, attributes: dict[str, str]) -> None:
        nonlocal count
        count += 1
        if count > MAX_ELEMENTS or len(stack) >= MAX_DEPTH:
            raise PatchError(f"{where}: more than {MAX_ELEMENTS} elements or {MAX_DEPTH} levels deep")
        node = Node(name, attributes)
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)

    def end(name: str) -> None:
        node = stack.pop()
        node.children = _joined_text(node.children)

    def text(value: str) -> None:
        if stack:
            stack[-1].children.append(value)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    xmldoc.run_parser(parser, data, where, PatchError)
    return roots[0]


def _joined_text(children: list[Node | str]) -> list[Node | str]:
    """Adjacent text joined; whitespace-only text dropped (as SyncFaction's reader does)."""
    joined: list[Node | str] = []
    for child in children:
        if isinstance(child, str) and joined and isinstance(joined[-1], str):
            joined[-1] += child
        else:
            joined.append(child)
    return [child for child in joined if not isinstance(child, str) or child.strip()]


# -- the member's side: a tree that keeps its bytes ----------------------------------------------

# -- the merge -----------------------------------------------------------------------------------


def parse_action(action: str, where: str) -> tuple[str, list[list[str]]]:
    """A LIST_ACTION value as (kind, fields): fields are paths of tag names."""
    lowered = action.strip().lower()
    if lowered in ("add", "add_new", "replace"):
        return lowered, []
    if lowered.startswith("combine_by_field:"):
        fields = [
            [part for part in re.split(r"[\\/]", field.strip()) if part]
            for field in action.strip()[len("combine_by_field:") :].split(",")
        ]
        if not fields or not all(fields):
            raise PatchError(f"{where}: LIST_ACTION {action!r} names an empty field")
        return "combine_by_field", fields
    raise PatchError(
        f"{where}: LIST_ACTION {action!r} is not one of ADD, ADD_NEW, REPLACE, COMBINE_BY_FIELD:A,B "
        "(SyncFaction reads no others)"
    )


def apply_edit(document: XmlDocument, edit: Node) -> None:
    """Merge the children of an `<Edit>` node into the document's `<root><Table>`."""
    action = edit.attribute(LIST_ACTION)
    _Merge(document).merge(edit, document.table(), action if action and action.strip() else "add", False)


class _Merge:
    def __init__(self, document: XmlDocument) -> None:
        self.document = document

    def merge(self, source: Node, target: Element, action: str | None, copy_attributes: bool) -> None:
        if copy_attributes:
            self.copy_attributes(source, target)
        if not source.children:
            return
        if action is None:
            own = source.attribute(LIST_ACTION)
            action = own if own and own.strip() else "add_new"
        kind, fields = parse_action(action, f"{self.document.where}: {target.path()}")
        layout = self.document.clear(target) if kind == "replace" else None
        # Indexes over the game node's children, built once per node: an edit may hold
        # thousands of children for a table of thousands.
        present = _present(target, source) if kind == "add" else {}
        combine = _CombineIndex(target, fields) if kind == "combine_by_field" else None
        for child in source.children:
            if isinstance(child, str):
                self.document.set_text(target, child)
            elif kind == "add_new":
                existing = target.first(child.name) or self.document.append(target, child.name)
                self.merge(child, existing, None, True)
            elif combine is not None:
                match = combine.match(child)
                if match is not None:
                    self.merge(child, match, None, True)
                    combine.changed(match)
                else:
                    combine.added(self.add(child, target))
            else:
                same = present.get(_canonical(child))
                if same:
                    same.pop(0)  # the game node holds it already: it stands for this child
                    continue
                self.add(child, target, layout)

    def add(self, source: Node, target: Element, layout: tuple[bytes | None] | None = None) -> Element:
        element = self.document.append(target, source.name, layout)
        self.copy_attributes(source, element)
        for child in source.children:
            if isinstance(child, str):
                self.document.set_text(element, child)
            else:
                self.add(child, element)
        return element

    def copy_attributes(self, source: Node, target: Element) -> None:
        for name, value in source.attributes.items():
            if name.lower() != LIST_ACTION:
                self.document.set_attribute(target, name, value)


def _canonical(item: Element | Node) -> tuple[Any, ...]:
    """What an element holds, whitespace aside: tag, attributes (LIST_ACTION aside), text and
    children; equal for a game element and the edit node it was added from."""
    if isinstance(item, Element):
        attributes = item.attributes
        text = item.text
    else:
        attributes = {key: value for key, value in item.attributes.items() if key.lower() != LIST_ACTION}
        text = item.text()
    children = tuple(_canonical(child) for child in item.elements())
    return (item.name, tuple(sorted(attributes.items())), text.strip(), children)


def _present(target: Element, source: Node) -> dict[tuple[Any, ...], list[Element]]:
    """ADD: the game node's children that an edit child could stand for, by what they hold."""
    names = {child.name for child in source.elements()}
    present: dict[tuple[Any, ...], list[Element]] = {}
    for child in target.elements():
        if child.name in names:
            present.setdefault(_canonical(child), []).append(child)
    return present


class _CombineIndex:
    """COMBINE_BY_FIELD: the game node's first child for each tag and field values."""

    def __init__(self, target: Element, fields: list[list[str]]) -> None:
        self.target = target
        self.fields = fields
        self._index: dict[tuple[str, tuple[str, ...]], Element] | None = None

    def key(self, item: Node | Element) -> tuple[str, tuple[str, ...]]:
        return item.name, tuple(_field_value(item, field) or "" for field in self.fields)

    def match(self, source: Node) -> Element | None:
        key = self.key(source)
        if not key[1][0]:
            return None  # SyncFaction: no value for the first field matches nothing
        if self._index is None:
            self._index = {}
            for child in self.target.elements():
                self._index.setdefault(self.key(child), child)
        return self._index.get(key)

    def added(self, element: Element) -> None:
        if self._index is not None:
            self._index.setdefault(self.key(element), element)

    def changed(self, element: Element) -> None:
        if self._index is not None and self._index.get(self.key(element)) is not element:
            self._index = None  # a merge changed what a field holds: index again when asked


def _field_value(item: Node | Element, field: list[str]) -> str | None:
    """The text of the element a field names: the path from `item` down, else the path found
    anywhere inside `item`."""
    for start in _descendants_first_self(item):
        current: Node | Element | None = start
        for part in field:
            current = next((child for child in current.elements() if child.name == part), None)  # type: ignore[union-attr]
            if current is None:
                break
        if current is not None:
            return current.inner_text().strip()
    return None


def _descendants_first_self(item: Node | Element) -> Iterator[Node | Element]:
    yield item
    for child in item.elements():
        yield from _descendants_first_self(child)
