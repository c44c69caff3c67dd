"""XML that keeps its bytes: the parser and the tree RFG tables (`.xtbl`) are read and edited with.

The game is known to misbehave on reformatted XML, so a document is never re-serialised. The
parser (expat, which reports where each tag starts) keeps every element's start and end tag
and the raw bytes between child elements (whitespace, comments, CDATA, character references)
as they were: writing an untouched document gives its input back byte for byte, and an edit
rewrites only what it changes: a leaf's text, one attribute inside a start tag, an appended
element (indented like its siblings, with the document's line endings and indent unit), a
removed element (with the blank before it).

    piece            bytes kept
    prolog           everything before the root's start tag (declaration, BOM, comments)
    start_tag        `<name attr="v">` or `<name/>` as written
    children         the raw bytes between child elements, and the child elements
    end_tag          `</name>` as written (empty for `<name/>`)
    epilogue         everything after the root's end tag

Hostile input: a DTD (`<!DOCTYPE`, and with it every entity declaration: the "billion laughs")
is refused before expat reads it; sizes, element counts and nesting depth are bounded. Errors
are `XmlError` here; `ops.patch.xmledit` raises its own `PatchError` through `error`.
"""

from __future__ import annotations

import codecs
import functools
import re

from ....errors import GamepakError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class XmlError(GamepakError):
    """XML that is not well-formed, holds a DTD, or is too large or deep to read."""


MAX_XML_BYTES = 32 << 20  # the game's largest table is 1.5 MB
MAX_ELEMENTS = 500_000
MAX_DEPTH = 256
LIST_ACTION = "list_action"  # attribute names are matched without case, as SyncFaction does

# A start tag's rest after `<`: quoted attribute values may hold `>`.
TAG_REST = re.compile(rb"""(?:[^"'>]|"[^"]*"|'[^']*')*>""")
_FIRST_INDENT = re.compile(rb"\n([ \t]+)<")
_ATTRIBUTE = re.compile(rb"""\s([^\s=/>]+)\s*=\s*("[^"]*"|'[^']*')""")
_DECLARED_ENCODING = re.compile(rb"""(?:\xef\xbb\xbf)?<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")
# What XML 1.0 cannot hold, not even as a character reference (outside its `Char` production):
# C0 controls but tab, LF and CR; lone surrogates; U+FFFE and U+FFFF. (Spelled as what is
# refused: the negated class of what is allowed takes 30 ms to compile, on every command.)
_NOT_XML_CHAR = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def first_non_xml_char(text: str) -> int:
    """The position of the first character XML 1.0 cannot hold in `text` (-1: none)."""
    found = _NOT_XML_CHAR.search(text)
    return -1 if found is None else found.start()


def refuse_dtd(where: str, error: type[GamepakError] = XmlError) -> Callable[..., None]:
    """An expat handler that raises `error` as soon as a DTD starts."""

    def refuse(*_: object) -> None:
        raise error(f"{where}: holds a DTD (<!DOCTYPE>): refused, its entities could expand without bound")

    return refuse


def make_parser(where: str, encoding: str | None, error: type[GamepakError] = XmlError) -> Any:
    """An expat parser that refuses DTDs (raising `error`) and joins adjacent text."""
    from xml.parsers import expat

    parser = expat.ParserCreate(encoding)
    parser.buffer_text = True
    # Called as soon as `<!DOCTYPE` is read, before any entity is declared or expanded.
    parser.StartDoctypeDeclHandler = refuse_dtd(where, error)
    parser.EntityDeclHandler = refuse_dtd(where, error)
    return parser


def refuse_any_dtd(data: bytes, where: str, encoding: str | None, error: type[GamepakError] = XmlError) -> None:
    """Raise `error` when `data` holds a DTD, before anything reads it with ElementTree (which
    would expand its entities): a document that may hold one takes a pass of expat that stops
    at `<!DOCTYPE`. UTF-16 (a byte-order mark, or NULs among the first bytes) spells it with
    NULs between its letters, so such a document takes that pass whatever its bytes hold."""
    utf16 = data.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\0" in data[:4]
    if b"<!DOCTYPE" in data or utf16:
        run_parser(make_parser(where, encoding, error), data, where, error)


def run_parser(parser: Any, data: bytes, where: str, error: type[GamepakError] = XmlError) -> None:
    """Parse `data` whole; `error` naming `where` when it is not well-formed, or declares an
    encoding that is not read."""
    from xml.parsers import expat

    refuse_unread_encoding(data, where, error)
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise error(f"{where}: not well-formed XML ({exc})") from None
    except (LookupError, UnicodeError) as exc:  # an encoding Python does not know, or bytes not in it
        raise error(f"{where}: its declared encoding cannot be read ({exc})") from None
    except ValueError:  # expat's "multi-byte encodings are not supported", if one got past the check
        raise error(f"{where}: {_unread_encoding(data)}") from None


# Read by expat itself; any other must be a single-byte codec Python knows (expat maps each byte).
_EXPAT_ENCODINGS = {"utf_8", "utf_16", "utf_16_le", "utf_16_be", "latin_1", "iso8859_1", "ascii"}
_UNREAD = "XML in UTF-8, UTF-16, Latin-1 or another single-byte encoding is read"


def declared_encoding(data: bytes) -> str | None:
    """The encoding `data`'s XML declaration names, as written (None: it names none)."""
    declared = _DECLARED_ENCODING.match(data)
    return declared.group(1).decode("ascii") if declared else None


@functools.lru_cache(maxsize=64)
def _readable(name: str) -> bool:
    try:
        codec = codecs.lookup(name).name.replace("-", "_")
    except LookupError:
        return False
    if codec in _EXPAT_ENCODINGS:
        return True
    try:
        return len(bytes(range(256)).decode(name, "replace")) == 256  # one character a byte
    except (UnicodeError, LookupError, ValueError):
        return False


def _unread_encoding(data: bytes) -> str:
    name = declared_encoding(data)
    return f"declares encoding {name!r}, which gamepak does not read ({_UNREAD})"


def refuse_unread_encoding(data: bytes, where: str, error: type[GamepakError] = XmlError) -> None:
    """`error` in one line naming `where` and the encoding when `data` declares one expat
    cannot read (UTF-7, Shift_JIS and other multi-byte codecs, names Python does not know)."""
    name = declared_encoding(data)
    if name is not None and not _readable(name):
        raise error(f"{where}: {_unread_encoding(data)}")


def element_count_bound(data: bytes) -> int:
    """An upper bound on the elements of `data` (its `<` that start no end tag, declaration,
    comment, CDATA or DTD), counted without parsing: a few passes of `bytes.count`."""
    return data.count(b"<") - data.count(b"</") - data.count(b"<?") - data.count(b"<!")


def check_element_budget(data: bytes, where: str, error: type[GamepakError] = XmlError) -> None:
    """`error` when `data` may hold more elements than a document of its size may
    (`core.content_limits`), before anything builds them."""
    from ....core.content_limits import ALLOW_LARGE_ADVICE, current

    budget = current().table_element_budget(len(data))
    if budget is None:
        return
    # Every `<` bounds the elements from above (a tenth of what `table check` does besides the
    # parse was passes of `bytes.count`): the end tags are subtracted only when that is over
    # the budget, then the few declarations, comments and CDATA.
    bound = data.count(b"<")
    if bound > budget:
        bound -= data.count(b"</")
    if bound > budget:
        bound = element_count_bound(data)
    if bound > budget:
        per_byte = current().table_bytes_per_element
        raise error(
            f"{where}: {bound} elements in {len(data)} bytes, more than the {budget} read from a document of "
            f"this size (one element per {per_byte} bytes, at most {current().table_elements}); {ALLOW_LARGE_ADVICE}"
        )


def source_encoding(data: bytes) -> str | None:
    """The encoding to tell expat: none when the document says (a BOM or a declaration) or is
    UTF-8; ISO-8859-1 for the game's few undeclared Latin-1 tables (credits.xtbl)."""
    if data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")) or _DECLARED_ENCODING.match(data):
        return None
    if data.isascii():  # most tables: answered without decoding them
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "iso-8859-1"
    return None


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

    error: type[GamepakError] = XmlError  # what this document raises

    def __init__(self, data: bytes, where: str, *, span: tuple[int, int] | None = None) -> None:
        """Parse `data`, or with `span` (start, end) only the element written there (its
        encoding, line ends and indent taken from the whole of `data`): `to_bytes()` then gives
        that element's bytes."""
        if len(data) > MAX_XML_BYTES:
            raise self.error(f"{where}: {len(data)} bytes, more than the {MAX_XML_BYTES} an edit reads")
        self.where = where
        refuse_unread_encoding(data, where, self.error)
        if span is None:
            check_element_budget(data, where, self.error)
        forced = source_encoding(data)
        declared = _DECLARED_ENCODING.match(data)
        self.encoding = forced or (declared.group(1).decode("ascii") if declared else "utf-8")
        if span is not None:
            forced = self.encoding  # the element alone has no declaration to say it
        try:
            ascii_compatible = codecs.lookup(self.encoding).encode("<")[0] == b"<"
        except LookupError:
            raise self.error(f"{where}: unknown encoding {self.encoding!r}") from None
        if not ascii_compatible or data.startswith((b"\xff\xfe", b"\xfe\xff")):
            raise self.error(f"{where}: UTF-16/32 XML is not edited (the game's tables are UTF-8 or Latin-1)")
        lines = b"\r\n" if b"\r\n" in data else b"\n" if b"\n" in data else b""
        self.newline = lines
        first_indent = _FIRST_INDENT.search(data)
        self.unit = first_indent.group(1) if first_indent else b"\t"
        self.prolog = b""
        self.epilogue = b""
        if span is None:
            self.root = self._parse(data, forced)
            return
        start, end = span
        self.root = self._parse(data[start:end], forced)
        if self.prolog or self.epilogue:
            raise self.error(f"{where}: offset {start}: not one element")
        self.root.indent = indent_before(data, start)

    def _parse(self, data: bytes, encoding: str | None) -> Element:
        where = self.where
        parser = make_parser(where, encoding, self.error)
        stack: list[Element] = []
        roots: list[Element] = []
        cursor = 0
        count = 0

        def start(name: str, attributes: dict[str, str]) -> None:
            nonlocal cursor, count
            count += 1
            if count > MAX_ELEMENTS or len(stack) >= MAX_DEPTH:
                raise self.error(f"{where}: more than {MAX_ELEMENTS} elements or {MAX_DEPTH} levels deep")
            position = parser.CurrentByteIndex
            tag = TAG_REST.match(data, position + 1)
            if data[position : position + 1] != b"<" or tag is None:
                raise self.error(f"{where}: offset {position}: cannot find the tag expat reported")
            gap = data[cursor:position]
            parent = stack[-1] if stack else None
            if parent is not None:
                if gap:
                    parent.children.append(gap)
            else:
                self.prolog = gap
            element = Element(name, attributes, data[position : tag.end()], parent)
            element.indent = indent_before(data, position)
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
        run_parser(parser, data, where, self.error)
        self.epilogue = data[cursor:]
        return roots[0]

    def table(self) -> Element:
        """`<root><Table>`, the element an `<Edit>` stands for."""
        table = self.root.first("Table") if self.root.name == "root" else None
        if table is None:
            raise self.error(f"{self.where}: has no <root><Table> for an <Edit> to change")
        return table

    def to_bytes(self) -> bytes:
        pieces = [self.prolog]
        _emit(self.root, pieces)
        pieces.append(self.epilogue)
        return b"".join(pieces)

    # -- what the merge changes ---------------------------------------------------------------

    def encode(self, text: str, quote: bool = False) -> bytes:
        """`text` as character data (or, with `quote`, a quoted attribute's value): a carriage
        return as `&#xD;` (an XML reader turns a bare one into a line feed), and in an attribute
        tabs and line feeds as references too (a reader turns them into spaces)."""
        where = first_non_xml_char(text)
        if where >= 0:
            raise self.error(
                f"{self.where}: character U+{ord(text[where]):04X} at position {where} cannot be held by XML 1.0"
            )
        escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#xD;")
        if quote:
            escaped = escaped.replace('"', "&quot;").replace("\t", "&#x9;").replace("\n", "&#xA;")
        return escaped.encode(self.encoding, "xmlcharrefreplace")

    def set_text(self, element: Element, value: str) -> None:
        if element.elements():
            raise self.error(f"{self.where}: {element.path()} holds elements; the edit gives it text {value!r}")
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
        # Names come from schemas and JSON cells: one that is not an element's would be
        # written as broken XML (`<a b>`), or as other elements (`<a>b`).
        try:
            encoded = name.encode(self.encoding)
        except UnicodeEncodeError:
            encoded = b""
        if not encoded or not is_element_name(name):
            raise self.error(f"{self.where}: {name!r} cannot name an element of {parent.path()} in {self.encoding}")
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

    def remove(self, element: Element) -> None:
        """Drop `element` from its parent, with the blank (spaces, tabs, one line end) that
        sets it on its own line, so its siblings keep their layout."""
        parent = element.parent
        if parent is None:
            raise self.error(f"{self.where}: the root element cannot be removed")
        children = parent.children
        index = next(position for position, child in enumerate(children) if child is element)
        del children[index]
        if index > 0 and isinstance(children[index - 1], bytes):
            gap = children[index - 1]
            assert isinstance(gap, bytes)
            kept = gap.rstrip(b" \t")
            if element.indent is not None and kept != gap.rstrip(b" \t\r\n"):
                kept = kept[: -2 if kept.endswith(b"\r\n") else -1]  # the line end before it
            elif element.indent is None:
                kept = gap
            if kept:
                children[index - 1] = kept
            else:
                del children[index - 1]

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


def is_element_name(name: str) -> bool:
    """Whether `name` is an XML element name, as the readers of what is written read one:
    `<name/>` parses to one element of that name without attributes, with namespaces on as
    ElementTree reads (so no `:` without a declared prefix)."""
    # The game's names (`Damage_Scaling`, `X`): ASCII letters, digits, `_`, `-` and `.`, not
    # starting with a digit, `-` or `.`, are names without asking expat (a parser made for each
    # of the 2,500 field names of table.vpp_pc's schemas was 2% of `table check`).
    simple = name.isascii() and (name[:1].isalpha() or name[:1] == "_")
    if simple and (name == "_" or name.replace("_", "").replace("-", "").replace(".", "").isalnum()):
        return True
    return _expat_takes_as_a_name(name)


@functools.lru_cache(maxsize=4096)
def _expat_takes_as_a_name(name: str) -> bool:
    """`is_element_name` asked of expat itself."""
    from xml.parsers import expat

    found: list[tuple[str, dict[str, str]]] = []
    parser = expat.ParserCreate("utf-8", "}")
    parser.StartElementHandler = lambda tag, attributes: found.append((tag, attributes))
    try:
        parser.Parse(b"<" + name.encode("utf-8") + b"/>", True)
    except (expat.ExpatError, UnicodeError):
        return False
    return found == [(name, {})]


def indent_before(data: bytes, position: int) -> bytes | None:
    """The blanks before the tag at `position` on its line; None when something else is."""
    line_start = position
    while line_start > 0 and data[line_start - 1] in b" \t":
        line_start -= 1
    if line_start == 0 or data[line_start - 1] in b"\r\n":
        return data[line_start:position]
    return None


def _emit(element: Element, pieces: list[bytes]) -> None:
    pieces.append(element.start_tag)
    for child in element.children:
        if isinstance(child, bytes):
            pieces.append(child)
        else:
            _emit(child, pieces)
    pieces.append(element.end_tag)
