"""`.rfglocatext` strings exported for translators and imported back, keyed by identifier or hash.

Translation files name each string by its identifier when one was recovered (`names`), else by
its hash (`#5a3c91f0`); importing takes an identifier's hash, or the hash as given, never the
hash of an empty name.

- JSON: a UTF-8 array of `{"hash": "5a3c91f0", "identifier": "...", "text": "..."}`
  (`identifier` is null when unknown; `source` holds the reference language's string when one
  was given).
- CSV: UTF-8 with a byte-order mark, header `hash,identifier,text` (`hash,identifier,source,text`
  with a reference language); read with or without the mark, separated by commas, semicolons or
  tabs.
- PO: `msgctxt` is the identifier or `#hash`; `msgid` the reference language's string (with
  `source`) and `msgstr` the file's, or, without a reference, `msgid` the file's string and
  `msgstr` empty. Importing uses `msgstr` when non-empty and not fuzzy, else keeps the string.
- RFGM's XML (`rfgm-xml`): `<root><Entry><Identifier/><Hash/><String/></Entry>...</root>`, the hash
  in decimal, as RFGM's archiver writes it; an import tells it by its content. A carriage return
  is written `&#xD;` so that it survives (XML readers turn a bare one into a line feed).

The PO form is written by `po_write` and read by `po`; the rows read are `rows`; applying them
to a file is `apply`. Reading the files (loose, or members of packs) and writing them back is
`ops.locatext`.

An import changes only the strings whose text differs (an unchanged file comes back byte for
byte), adds entries for keys the file lacks, and removes entries only with `delete`. Everything
is checked before anything is written: duplicate keys, an identifier whose hash is another
entry's, text that is not UTF-8.
"""

from __future__ import annotations

import os

from ....errors import GamepakError
from ...translation_files import CSV_DELIMITERS, choose_format
from . import describe
from .rows import Row, Rows, parse_hash

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: `typing` costs milliseconds at start-up
    from collections.abc import Iterator, Sequence

    from . import LocaEntry


def translation_format(path: str | os.PathLike[str] | None, explicit: str | None = None) -> str:
    """The translation format: `explicit`, else from the extension (`.xml`: RFGM's), else JSON."""
    return choose_format(path, explicit, {"json": "json", "csv": "csv", "po": "po", "pot": "po", "xml": "rfgm-xml"})


# -- export ------------------------------------------------------------------------------------


def dump_translation(
    entries: Sequence[LocaEntry], format: str, *, sources: dict[int, str] | None = None, title: str = ""
) -> bytes:
    """A translation file holding `entries`; `sources` maps hashes to a reference language's
    strings (shown beside each string)."""
    return b"".join(translation_parts(entries, format, sources=sources, title=title))


def translation_parts(
    entries: Sequence[LocaEntry], format: str, *, sources: dict[int, str] | None = None, title: str = ""
) -> Iterator[bytes]:
    """`dump_translation`'s bytes in parts, made as they are asked for: JSON and PO a block of
    entries at a time, so that an export written to a file never holds its whole text (nor,
    joining it, twice that: 3.5 bytes per input byte of the largest allowed file)."""
    if format == "json":
        yield from _json_parts(entries, sources)
    elif format == "po":
        from .po_write import po_parts  # (the reader, `po`, is for imports only)

        yield from po_parts(entries, sources, title)
    else:
        yield _dump_whole(entries, format, sources)


def _json_parts(entries: Sequence[LocaEntry], sources: dict[int, str] | None) -> Iterator[bytes]:
    from json.encoder import encode_basestring as quote  # the C encoder json.dumps uses

    # What json.dumps(rows, ensure_ascii=False, indent=2) writes (core.jsontext), a row at a time and
    # written directly: the rows are never all held as objects (2,000,000 took 2.4 GB), and
    # json.dumps with an indent runs its pure-Python encoder (5x slower).
    def value(text: str | None) -> str:
        return "null" if text is None else quote(text)

    # Encoded a block of entries at a time: their text is never all held at once.
    if not entries:
        yield b"[]\n"
        return
    for start in range(0, len(entries), 4096):
        pieces = []
        for entry in entries[start : start + 4096]:
            shown = f'    "source": {value(sources.get(entry.hash))},\n' if sources is not None else ""
            pieces.append(
                f'  {{\n    "hash": "{entry.hash:08x}",\n    "identifier": {value(entry.identifier)},\n'
                f'{shown}    "text": {quote(entry.text)}\n  }}'
            )
        yield (("[\n" if not start else ",\n") + ",\n".join(pieces)).encode("utf-8")
    yield b"\n]\n"


def _dump_whole(entries: Sequence[LocaEntry], format: str, sources: dict[int, str] | None) -> bytes:
    """A CSV or RFGM XML translation file (made whole: checked before any of it is written)."""
    if format == "csv":
        import csv
        import io

        buffer = io.StringIO(newline="")
        writer = csv.writer(buffer, lineterminator="\r\n")
        with_source = sources is not None
        writer.writerow(["hash", "identifier", *(["source"] if with_source else []), "text"])
        for entry in entries:
            source = [sources.get(entry.hash, "")] if sources is not None else []
            writer.writerow([f"{entry.hash:08x}", entry.identifier or "", *source, entry.text])
        return buffer.getvalue().encode("utf-8-sig")
    if format == "rfgm-xml":
        return _dump_rfgm_xml(entries)
    raise GamepakError(f"unknown translation format {format!r}")


def _xml_text(text: str, where: str) -> str:
    for position, character in enumerate(text):
        code = ord(character)
        if (code < 0x20 and character not in "\t\n\r") or 0xFFFE <= code <= 0xFFFF:
            raise GamepakError(f"{where}: character U+{code:04X} at position {position} cannot be written in XML")
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#xD;")


def _dump_rfgm_xml(entries: Sequence[LocaEntry]) -> bytes:
    lines = ["<root>"]
    for index, entry in enumerate(entries):
        where = describe(index, entry.hash)
        identifier = _xml_text(entry.identifier or "", where)
        lines += [
            "  <Entry>",
            f"    <Identifier>{identifier}</Identifier>" if identifier else "    <Identifier />",
            f"    <Hash>{entry.hash}</Hash>",
            f"    <String>{_xml_text(entry.text, where)}</String>" if entry.text else "    <String />",
            "  </Entry>",
        ]
    lines.append("</root>")
    return "\n".join(lines).encode("utf-8")


# -- import ------------------------------------------------------------------------------------


def _decode(data: bytes, where: str) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise GamepakError(f"{where}: UTF-16 text; save it as UTF-8")
    # As "utf-8-sig" decodes (a byte offset in an error counts from after the mark), without
    # the codec lookup that imports its module (`text import`'s start-up).
    bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    try:
        return str(memoryview(data)[bom:], "utf-8")
    except UnicodeDecodeError as exc:
        raise GamepakError(f"{where}: byte {exc.start}: not UTF-8 (save the file as UTF-8)") from None


def _rows_from_json(text: str, where: str) -> list[Row]:
    from ....core.json_input import load_json

    document = load_json(text, where)
    if not isinstance(document, list):
        raise GamepakError(f'{where}: expected a JSON array of {{"hash", "identifier", "text"}} objects')
    rows = []
    for position, item in enumerate(document):
        location = f"{where}: item {position}"
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise GamepakError(f"{location}: not an object with a string text")
        identifier = item.get("identifier")
        if identifier is not None and not isinstance(identifier, str):
            raise GamepakError(f"{location}: identifier {identifier!r} is not a string")
        rows.append(Row(parse_hash(item.get("hash"), location), identifier or None, item["text"], location))
    return rows


def _rows_from_csv(text: str, where: str) -> list[Row]:
    import csv
    import io

    header_line = text.split("\n", 1)[0].rstrip("\r")
    for delimiter in CSV_DELIMITERS:
        header = [cell.strip().strip('"').lower() for cell in header_line.split(delimiter)]
        if "text" in header and ("hash" in header or "identifier" in header):
            break
    else:
        raise GamepakError(
            f"{where}: the first row must be a header naming the columns hash, identifier and text "
            f"(commas, semicolons or tabs between them), not {header_line[:60]!r}"
        )
    try:
        records = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    except csv.Error as exc:
        raise GamepakError(f"{where}: malformed CSV: {exc}") from None
    column = {name: header.index(name) for name in ("hash", "identifier", "text") if name in header}
    rows = []
    for line, record in enumerate(records[1:], start=2):
        if not record:
            continue
        location = f"{where}: row {line}"
        if len(record) != len(header):
            raise GamepakError(
                f"{location}: {len(record)} fields, the header names {len(header)}; quote texts that hold the separator"
            )
        value = record[column["hash"]] if "hash" in column else None
        identifier = record[column["identifier"]] if "identifier" in column else None
        rows.append(Row(parse_hash(value, location), identifier or None, record[column["text"]], location))
    return rows


RFGM_FORM = "<root><Entry><Identifier/><Hash/><String/></Entry>...</root>"


def _rows_from_rfgm_xml(data: bytes, where: str) -> list[Row]:
    from xml.etree import ElementTree

    from ..xtbl.xmldoc import refuse_any_dtd, refuse_unread_encoding

    refuse_unread_encoding(data, where, GamepakError)
    refuse_any_dtd(data, where, None, GamepakError)  # ElementTree would expand its entities
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        raise GamepakError(f"{where}: not well-formed XML: {exc}") from None
    except (LookupError, UnicodeError, ValueError) as exc:
        raise GamepakError(f"{where}: its declared encoding cannot be read ({exc})") from None
    rows = []
    for position, element in enumerate(root.iter("Entry")):
        location = f"{where}: Entry {position}"
        identifier = element.findtext("Identifier") or None
        hash_value = _rfgm_hash(element.findtext("Hash"), location)
        if hash_value == 0 and identifier is not None:
            # How RFGM's users add a line: RFGM computes every hash from the identifier.
            hash_value = None
        rows.append(Row(hash_value, identifier, element.findtext("String") or "", location))
    if not rows and (root.tag != "root" or len(root) or (root.text or "").strip()):
        # `<root/>` is the export of a file without strings; anything else is not a localization.
        raise GamepakError(
            f"{where}: holds no <Entry>: not a localization (<{root.tag}> at its top); RFGM's form is {RFGM_FORM}"
        )
    return rows


def _rfgm_hash(text: str | None, where: str) -> int | None:
    """An RFGM `<Hash>`: decimal ASCII digits of a u32 (None when empty). `str.isdigit` and
    `int` take other scripts' digits (`²`, `٣`) and refuse past 4,300 digits with ValueError:
    only ASCII digits, at most ten, are read."""
    if text is None or not text.strip():
        return None
    digits = text.strip()
    if not (digits.isascii() and digits.isdigit() and len(digits) <= 10 and int(digits) <= 0xFFFFFFFF):
        shown = digits if len(digits) <= 24 else digits[:20] + f"... ({len(digits)} characters)"
        raise GamepakError(f"{where}: Hash {shown!r} is not a decimal u32 (ASCII digits, at most 4294967295)")
    return int(digits)


def looks_like_xml(data: bytes) -> bool:
    """Whether a translation file is XML (RFGM's form), whatever its name."""
    return data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<")


def load_translation(data: bytes, format: str, where: str = "translation") -> Rows:
    """The rows of a translation file (RFGM's XML is recognised by its content)."""
    if looks_like_xml(data):
        return Rows.of(_rows_from_rfgm_xml(data, where))
    if format == "rfgm-xml":
        raise GamepakError(f"{where}: not XML (RFGM's form starts with <root>)")
    text = _decode(data, where)
    if format == "json":
        return Rows.of(_rows_from_json(text, where))
    if format == "csv":
        return Rows.of(_rows_from_csv(text, where))
    if format == "po":
        from .po import rows_from_po  # (the writer, `po_write`, is for exports only)

        return Rows.of(rows_from_po(text, where))
    raise GamepakError(f"unknown translation format {format!r}")
