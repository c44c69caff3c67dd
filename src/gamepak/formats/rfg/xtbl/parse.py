"""Reading a table's XML into an ElementTree: `TableError`, `parse_xml` (size bounded, DTDs
refused, encodings as declared).

ElementTree is the fast tree (C speed) every reader of tables uses: listing, checking and
exporting hundreds of them; `xmldoc` is the slower one that keeps every byte, for writing.
"""

from __future__ import annotations

from .xmldoc import (
    MAX_XML_BYTES,
    XmlError,
    check_element_budget,
    refuse_any_dtd,
    refuse_unread_encoding,
    source_encoding,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from xml.etree.ElementTree import Element as EtElement


class TableError(XmlError):
    """A table that cannot be read, or an edit it cannot take."""


def parse_xml(data: bytes, where: str, encoding: str | None = None) -> EtElement:
    """`data` as an ElementTree (in `encoding` when given, else as the document says);
    TableError when it is not well-formed, declares a DTD or is too large."""
    import xml.etree.ElementTree as ET

    encoding = checked_encoding(data, where, encoding)
    parser = ET.XMLParser(encoding=encoding)
    try:
        parser.feed(data)
        return parser.close()
    except (ET.ParseError, LookupError, UnicodeError, ValueError) as exc:  # or an encoding not read
        raise not_well_formed(exc, where) from None


def checked_encoding(data: bytes, where: str, encoding: str | None = None) -> str | None:
    """The encoding to parse `data` in (`encoding` when given: one row of a document already
    read), after the checks every parse of a table makes first: its size, its declared
    encoding, its element budget (`core.content_limits`), no DTD. TableError naming `where`."""
    if len(data) > MAX_XML_BYTES:
        raise TableError(f"{where}: {len(data)} bytes, more than the {MAX_XML_BYTES} a table may hold")
    if encoding is None:  # (a whole document, not one row of one already read)
        refuse_unread_encoding(data, where, TableError)
        check_element_budget(data, where, TableError)
    encoding = encoding or source_encoding(data)
    refuse_any_dtd(data, where, encoding, TableError)
    return encoding


def not_well_formed(exc: Exception, where: str) -> TableError:
    """The TableError of a parse that raised `exc` (ParseError, or an encoding not read)."""
    import xml.etree.ElementTree as ET

    if isinstance(exc, ET.ParseError):
        return TableError(f"{where}: not well-formed XML ({exc})")
    return TableError(f"{where}: its declared encoding cannot be read ({exc})")
