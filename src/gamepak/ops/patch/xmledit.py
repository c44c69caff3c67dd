"""XML edits that keep the member's own bytes: SyncFaction's `<Edit>` merge (modinfo.xml).

The game is known to misbehave on reformatted XML, so a member is never re-serialised. The
parser (expat, which reports where each tag starts) keeps every element's start and end tag
and the raw bytes between child elements (whitespace, comments, CDATA, character references)
as they were: writing an untouched document gives its input back byte for byte, and an edit
rewrites only what it changes: a leaf's text, one attribute inside a start tag, an appended
element (indented like its siblings, with the document's line endings and indent unit).

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

import codecs
import re

from .container import PatchError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

MAX_XML_BYTES = 32 << 20  # the game's largest table is 1.5 MB
MAX_ELEMENTS = 500_000
MAX_DEPTH = 256
LIST_ACTION = "list_action"  # attribute names are matched without case, as SyncFaction does

# A start tag's rest after `<`: quoted attribute values may hold `>`.
_TAG_REST = re.compile(rb"""(?:[^"'>]|"[^"]*"|'[^']*')*>""")
_FIRST_INDENT = re.compile(rb"\n([ \t]+)<")
_ATTRIBUTE = re.compile(rb"""\s([^\s=/>]+)\s*=\s*("[^"]*"|'[^']*')""")
_DECLARED_ENCODING = re.compile(rb"""(?:\xef\xbb\xbf)?<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")


def _refuse_dtd(where: str) -> Callable[..., None]:
    def refuse(*_: object) -> None:
        raise PatchError(f"{where}: holds a DTD (<!DOCTYPE>): refused, its entities could expand without bound")

    return refuse


def _parser(where: str, encoding: str | None) -> Any:
    from xml.parsers import expat

    parser = expat.ParserCreate(encoding)
    parser.buffer_text = True
    # Called as soon as `<!DOCTYPE` is read, before any entity is declared or expanded.
    parser.StartDoctypeDeclHandler = _refuse_dtd(where)
    parser.EntityDeclHandler = _refuse_dtd(where)
    return parser


def _run(parser: Any, data: bytes, where: str) -> None:
    from xml.parsers import expat

    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise PatchError(f"{where}: not well-formed XML ({exc})") from None
    except (LookupError, UnicodeError) as exc:  # an encoding Python does not know, or bytes not in it
        raise PatchError(f"{where}: its declared encoding cannot be read ({exc})") from None


def _source_encoding(data: bytes) -> str | None:
    """The encoding to tell expat: none when the document says (a BOM or a declaration) or is
    UTF-8; ISO-8859-1 for the game's few undeclared Latin-1 tables (credits.xtbl)."""
    if data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")) or _DECLARED_ENCODING.match(data):
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "iso-8859-1"
    return None


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
    parser = _parser(where, _source_encoding(data))
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
    _run(parser, data, where)
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


class Element:
    """An element of an edited document: its raw start and end tags, and its children as raw
    bytes (what lies between child elements) and elements."""

    __slots__ = ("attributes", "children", "end_tag", "generated", "indent", "name", "parent", "start_tag", "text")

    def __init__(self, name: str, attributes: dict[str, str], start_tag: bytes, parent: Element | None) -> None:
        self.name = name
        self.attributes = attributes
        self.start_tag = start_tag
        self.end_tag = b""  # empty for `<x/>`
        self.children: list[bytes | Element] = []
        self.parent = parent
        self.text = ""  # the character data directly inside, decoded
        self.indent: bytes | None = None  # the whitespace before the tag on its line; None: not first on it
        self.generated = False

    def elements(self) -> list[Element]:
        return [child for child in self.children if isinstance(child, Element)]

    def inner_text(self) -> str:
        return self.text + "".join(child.inner_text() for child in self.elements())

    def first(self, name: str) -> Element | None:
        return next((child for child in self.children if isinstance(child, Element) and child.name == name), None)

    def path(self) -> str:
        names = []
        element: Element | None = self
        while element is not None:
            names.append(element.name)
            element = element.parent
        return "<" + "><".join(reversed(names)) + ">"


class XmlDocument:
    """A member's XML, parsed so that `to_bytes()` gives back every byte nothing changed."""

    def __init__(self, data: bytes, where: str) -> None:
        if len(data) > MAX_XML_BYTES:
            raise PatchError(f"{where}: {len(data)} bytes, more than the {MAX_XML_BYTES} an edit reads")
        self.where = where
        forced = _source_encoding(data)
        declared = _DECLARED_ENCODING.match(data)
        self.encoding = forced or (declared.group(1).decode("ascii") if declared else "utf-8")
        try:
            ascii_compatible = codecs.lookup(self.encoding).encode("<")[0] == b"<"
        except LookupError:
            raise PatchError(f"{where}: unknown encoding {self.encoding!r}") from None
        if not ascii_compatible or data.startswith((b"\xff\xfe", b"\xfe\xff")):
            raise PatchError(f"{where}: UTF-16/32 XML is not edited (the game's tables are UTF-8 or Latin-1)")
        lines = b"\r\n" if b"\r\n" in data else b"\n" if b"\n" in data else b""
        self.newline = lines
        first_indent = _FIRST_INDENT.search(data)
        self.unit = first_indent.group(1) if first_indent else b"\t"
        self.prolog = b""
        self.epilogue = b""
        self.root = self._parse(data, forced)

    def _parse(self, data: bytes, encoding: str | None) -> Element:
        where = self.where
        parser = _parser(where, encoding)
        stack: list[Element] = []
        roots: list[Element] = []
        cursor = 0
        count = 0

        def start(name: str, attributes: dict[str, str]) -> None:
            nonlocal cursor, count
            count += 1
            if count > MAX_ELEMENTS or len(stack) >= MAX_DEPTH:
                raise PatchError(f"{where}: more than {MAX_ELEMENTS} elements or {MAX_DEPTH} levels deep")
            position = parser.CurrentByteIndex
            tag = _TAG_REST.match(data, position + 1)
            if data[position : position + 1] != b"<" or tag is None:
                raise PatchError(f"{where}: offset {position}: cannot find the tag expat reported")
            gap = data[cursor:position]
            parent = stack[-1] if stack else None
            if parent is not None:
                if gap:
                    parent.children.append(gap)
            else:
                self.prolog = gap
            element = Element(name, attributes, data[position : tag.end()], parent)
            line_start = position
            while line_start > 0 and data[line_start - 1] in b" \t":
                line_start -= 1
            if line_start == 0 or data[line_start - 1] in b"\r\n":
                element.indent = data[line_start:position]
            (parent.children if parent is not None else roots).append(element)
            stack.append(element)
            cursor = tag.end()

        def end(name: str) -> None:
            nonlocal cursor
            element = stack.pop()
            if element.start_tag.endswith(b"/>"):
                return  # `<x/>`: expat reports its end right after the tag
            position = parser.CurrentByteIndex
            if cursor < position:
                element.children.append(data[cursor:position])
            close = data.index(b">", position) + 1
            element.end_tag = data[position:close]
            cursor = close

        def text(value: str) -> None:
            if stack:
                stack[-1].text += value

        parser.StartElementHandler = start
        parser.EndElementHandler = end
        parser.CharacterDataHandler = text
        _run(parser, data, where)
        self.epilogue = data[cursor:]
        return roots[0]

    def table(self) -> Element:
        """`<root><Table>`, the element an `<Edit>` stands for."""
        table = self.root.first("Table") if self.root.name == "root" else None
        if table is None:
            raise PatchError(f"{self.where}: has no <root><Table> for an <Edit> to change")
        return table

    def to_bytes(self) -> bytes:
        pieces = [self.prolog]
        _emit(self.root, pieces)
        pieces.append(self.epilogue)
        return b"".join(pieces)

    # -- what the merge changes ---------------------------------------------------------------

    def encode(self, text: str, quote: bool = False) -> bytes:
        escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        if quote:
            escaped = escaped.replace('"', "&quot;")
        return escaped.encode(self.encoding, "xmlcharrefreplace")

    def set_text(self, element: Element, value: str) -> None:
        if element.elements():
            raise PatchError(f"{self.where}: {element.path()} holds elements; the edit gives it text {value!r}")
        current = element.text if element.text.strip() else ""
        if value == current:
            return
        self._open(element)
        element.children = [self.encode(value)] if value else []
        element.text = value

    def set_attribute(self, element: Element, name: str, value: str) -> None:
        old = element.attributes.get(name)
        if old == value:
            return
        quoted = b'"' + self.encode(value, quote=True) + b'"'
        encoded_name = name.encode(self.encoding)
        if old is not None:
            # Attributes in order, so that a value holding `name=` is never taken for one.
            for match in _ATTRIBUTE.finditer(element.start_tag):
                if match.group(1) == encoded_name:
                    tag = element.start_tag
                    element.start_tag = tag[: match.start(2)] + quoted + tag[match.end(2) :]
                    break
        else:
            tail = re.search(rb"\s*/?>$", element.start_tag)
            assert tail is not None
            cut = tail.start()
            element.start_tag = (
                element.start_tag[:cut] + b" " + name.encode(self.encoding) + b"=" + quoted + element.start_tag[cut:]
            )
        element.attributes[name] = value

    def clear(self, element: Element) -> tuple[bytes | None] | None:
        """Drop every child (REPLACE); returns how the children were laid out, for `append`:
        (their indent,), (None,) when they shared a line, None when there were none."""
        layout = (self._child_indent(element),) if element.elements() else None
        self._open(element)
        element.children = []
        element.text = ""
        return layout

    def append(self, parent: Element, name: str, layout: tuple[bytes | None] | None = None) -> Element:
        """A new empty `<name></name>` after `parent`'s last child, laid out like its siblings
        (or as `layout`, from `clear`, says they were)."""
        encoded = name.encode(self.encoding)
        element = Element(name, {}, b"<" + encoded + b">", parent)
        element.end_tag = b"</" + encoded + b">"
        element.generated = True
        self._open(parent)
        last = next(
            (index for index in range(len(parent.children) - 1, -1, -1) if isinstance(parent.children[index], Element)),
            -1,
        )
        if last >= 0:
            sibling = parent.children[last]
            assert isinstance(sibling, Element)
            element.indent = sibling.indent if self.newline else None
            insert: list[bytes | Element] = [element]
            if element.indent is not None:
                insert = [self.newline + element.indent, element]
            parent.children[last + 1 : last + 1] = insert
            return element
        # No element children yet: keep what is there (a comment, text), drop its trailing blank.
        head = b"".join(child for child in parent.children if isinstance(child, bytes)).rstrip(b" \t\r\n")
        if layout is not None:
            element.indent = layout[0]
        else:
            inline = not self.newline or (parent.generated and parent.indent is None)
            element.indent = None if inline else self._child_indent(parent)
        if element.indent is None:
            parent.children = [*([head] if head else []), element]
        else:
            closing = self.newline + self._indent_of(parent)
            parent.children = [*([head] if head else []), self.newline + element.indent, element, closing]
        return element

    def _open(self, element: Element) -> None:
        """`<x/>` becomes `<x></x>` before it gets content."""
        if element.start_tag.endswith(b"/>"):
            element.start_tag = element.start_tag[:-2].rstrip() + b">"
            element.end_tag = b"</" + element.name.encode(self.encoding) + b">"

    def _indent_of(self, element: Element) -> bytes:
        if element.indent is not None:
            return element.indent
        return b"" if element.parent is None else self._indent_of(element.parent) + self.unit

    def _child_indent(self, element: Element) -> bytes | None:
        children = element.elements()
        if children:
            return children[-1].indent
        return self._indent_of(element) + self.unit


def _emit(element: Element, pieces: list[bytes]) -> None:
    pieces.append(element.start_tag)
    for child in element.children:
        if isinstance(child, bytes):
            pieces.append(child)
        else:
            _emit(child, pieces)
    pieces.append(element.end_tag)


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
