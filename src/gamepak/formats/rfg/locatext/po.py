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

Reading the files (loose, or members of packs) and writing them back is `ops.locatext`.

An import changes only the strings whose text differs (an unchanged file comes back byte for
byte), adds entries for keys the file lacks, and removes entries only with `delete`. Everything
is checked before anything is written: duplicate keys, an identifier whose hash is another
entry's, text that is not UTF-8.
"""

from __future__ import annotations

import os
import re
import struct

from ....errors import GamepakError
from ...translation_files import CSV_DELIMITERS, choose_format
from . import (
    NUL,
    LocaEntry,
    LocaText,
    describe,
    encode_text,
    hash_key,
    identifier_hash,
    texts_of,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: `typing` costs milliseconds at start-up
    from collections.abc import Callable, Iterator, Sequence


def translation_format(path: str | os.PathLike[str] | None, explicit: str | None = None) -> str:
    """The translation format: `explicit`, else from the extension (`.xml`: RFGM's), else JSON."""
    return choose_format(path, explicit, {"json": "json", "csv": "csv", "po": "po", "pot": "po", "xml": "rfgm-xml"})


# -- export ------------------------------------------------------------------------------------


def dump_translation(
    entries: Sequence[LocaEntry], format: str, *, sources: dict[int, str] | None = None, title: str = ""
) -> bytes:
    """A translation file holding `entries`; `sources` maps hashes to a reference language's
    strings (shown beside each string)."""
    if format == "json":
        import json

        rows = []
        for entry in entries:
            row: dict[str, object] = {"hash": f"{entry.hash:08x}", "identifier": entry.identifier}
            if sources is not None:
                row["source"] = sources.get(entry.hash)
            row["text"] = entry.text
            rows.append(row)
        return (json.dumps(rows, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
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
    if format == "po":
        return _dump_po(entries, sources, title)
    if format == "rfgm-xml":
        return _dump_rfgm_xml(entries)
    raise GamepakError(f"unknown translation format {format!r}")


# PO escapes (gettext's): what a quoted PO string cannot hold as it is.
PO_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
PO_UNESCAPES = {"\\": "\\", '"': '"', "n": "\n", "r": "\r", "t": "\t", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}


PO_TABLE = {ord(character): escaped for character, escaped in PO_ESCAPES.items()}


PO_SPECIAL = re.compile('[\\\\"\n\r\t]')


def _po_quote(text: str) -> str:
    if PO_SPECIAL.search(text):
        text = text.translate(PO_TABLE)
    return f'"{text}"'


def _po_escape_all(fields: list[str]) -> list[str]:
    """`fields` escaped for PO strings: one pass of `str.replace` per escape over all of them
    joined (a call per field takes longer), field by field when one holds the joining NUL."""
    joined = "\0".join(fields)
    if joined.count("\0") != len(fields) - 1:
        return [_po_quote(field)[1:-1] for field in fields]
    for character, escaped in PO_ESCAPES.items():  # the backslash first: it is in the others' output
        if character in joined:
            joined = joined.replace(character, escaped)
    return joined.split("\0")


def _dump_po(entries: Sequence[LocaEntry], sources: dict[int, str] | None, title: str) -> bytes:
    # Written directly (polib takes 10x longer for the game's 7,298 strings); one line per
    # field, as polib writes with wrapwidth=0.
    header = (
        f"Project-Id-Version: {title or 'gamepak text export'}\n"
        "MIME-Version: 1.0\n"
        "Content-Type: text/plain; charset=UTF-8\n"
        "Content-Transfer-Encoding: 8bit\n"
    )
    texts = texts_of(entries)
    count = len(entries)
    keys = [f"#{entry.hash:08x}" if entry.identifier is None else entry.identifier for entry in entries]
    if sources is None:
        msgids, msgstrs = texts, [""] * count
    else:
        msgids = [sources.get(entry.hash, text) for entry, text in zip(entries, texts)]
        msgstrs = texts
    escaped = _po_escape_all([*keys, *msgids, *msgstrs])
    # Comments: the hash of a named entry, and whether the reference file lacks it.
    comments = [f"#. hash {entry.hash:08x}\n" if entry.identifier is not None else "" for entry in entries]
    if sources is not None:
        comments = [
            comment if entry.hash in sources else f"{comment}#. not in the reference file\n"
            for entry, comment in zip(entries, comments)
        ]
    # One string per entry (a list item per line took a third longer); a blank line between.
    blocks = [
        f'{comment}msgctxt "{key}"\nmsgid "{msgid}"\nmsgstr "{msgstr}"\n'
        for comment, key, msgid, msgstr in zip(
            comments, escaped[:count], escaped[count : 2 * count], escaped[2 * count :]
        )
    ]
    head = f'msgid ""\nmsgstr {_po_quote(header)}\n'
    return (f"{head}\n" + "\n".join(blocks) if blocks else head).encode("utf-8")


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


class Row:
    """One translated string: its hash and/or identifier, its text (None: keep the file's),
    where it was read, and the text to use for a new entry when `text` is None."""

    __slots__ = ("fallback", "hash", "identifier", "text", "where")

    def __init__(
        self, hash: int | None, identifier: str | None, text: str | None, where: str, fallback: str | None = None
    ) -> None:
        self.hash = hash
        self.identifier = identifier
        self.text = text
        self.where = where
        self.fallback = fallback


class Rows:
    """A translation's rows as columns: a few lists cost a fraction of an object per row (one
    `Row` for each of the game's 7,298 strings took a fifth of a PO import). Row `number` is
    named by `hashes[number]` and/or `identifiers[number]`; `texts[number]` is its text (None:
    keep the file's), `fallbacks[number]` the text of a new entry whose text is None, and
    `where(number)` says where it was read (worked out when a message needs it). Indexing
    gives a `Row`."""

    __slots__ = ("fallbacks", "hashes", "identifiers", "texts", "where")

    def __init__(
        self,
        hashes: list[int | None],
        identifiers: list[str | None],
        texts: list[str | None],
        fallbacks: list[str | None],
        where: Callable[[int], str],
    ) -> None:
        self.hashes = hashes
        self.identifiers = identifiers
        self.texts = texts
        self.fallbacks = fallbacks
        self.where = where

    @classmethod
    def of(cls, rows: Rows | Sequence[Row]) -> Rows:
        """`rows` as columns."""
        if isinstance(rows, Rows):
            return rows
        return cls(
            [row.hash for row in rows],
            [row.identifier for row in rows],
            [row.text for row in rows],
            [row.fallback for row in rows],
            [row.where for row in rows].__getitem__,
        )

    def __len__(self) -> int:
        return len(self.hashes)

    def __getitem__(self, number: int) -> Row:
        if not -len(self.hashes) <= number < len(self.hashes):
            raise IndexError(number)
        number %= len(self.hashes)
        return Row(
            self.hashes[number],
            self.identifiers[number],
            self.texts[number],
            self.where(number),
            self.fallbacks[number],
        )

    def __iter__(self) -> Iterator[Row]:
        return (self[number] for number in range(len(self.hashes)))


def _parse_hash(value: object, where: str) -> int | None:
    if type(value) is str and len(value) == 9 and value[0] == "#" and value[1:].isalnum() and value.isascii():
        try:
            return int(value[1:], 16)  # gamepak's own `#5a3c91f0` (quick path: 7,000 a file)
        except ValueError:
            pass
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 0xFFFFFFFF:
        return value
    if isinstance(value, str):
        digits = value.strip().removeprefix("#")
        # int() also takes signs, underscores and spaces: only plain hexadecimal digits pass.
        if 1 <= len(digits) <= 8 and digits.isalnum() and digits.isascii():
            try:
                return int(digits, 16)
            except ValueError:
                pass
    raise GamepakError(f"{where}: hash {value!r} is not 8 hexadecimal digits")


def _key(value: str | None, where: str) -> tuple[int | None, str | None]:
    """A PO msgctxt: `#hash`, or an identifier."""
    if not value:
        raise GamepakError(f"{where}: no msgctxt: it must hold the identifier or #hash")
    if value.startswith("#"):
        return _parse_hash(value, where), None
    return None, value


def _decode(data: bytes, where: str) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise GamepakError(f"{where}: UTF-16 text; save it as UTF-8")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise GamepakError(f"{where}: byte {exc.start}: not UTF-8 (save the file as UTF-8)") from None


def _rows_from_json(text: str, where: str) -> list[Row]:
    import json

    try:
        document = json.loads(text)
    except ValueError as exc:
        raise GamepakError(f"{where}: not valid JSON: {exc}") from None
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
        rows.append(Row(_parse_hash(item.get("hash"), location), identifier or None, item["text"], location))
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
        rows.append(Row(_parse_hash(value, location), identifier or None, record[column["text"]], location))
    return rows


def _po_unquote(text: str, where: str, number: int) -> str:
    """The string a quoted PO string holds (`where` and line `number` name it in errors)."""
    body = text[1:-1]
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        raise GamepakError(f"{where}: line {number}: expected a quoted string, not {text[:40]!r}")
    if "\\" not in body:
        if '"' in body:
            raise GamepakError(f"{where}: line {number}: an unescaped quote inside the string")
        return body
    unescaped = _po_unescape(body)
    if unescaped is None:
        slash = body.index("\\")
        while body[slash + 1 : slash + 2] in PO_UNESCAPES:  # the first escape gettext lacks
            slash = body.index("\\", slash + 2)
        escaped = body[slash + 1 : slash + 2]
        raise GamepakError(f"{where}: line {number}: unknown escape \\{escaped} in a string")
    return unescaped


def _po_unescape(body: str) -> str | None:
    """A PO string's body with gettext's escapes replaced; None when it holds another."""
    out = []
    position = 0
    while True:
        slash = body.find("\\", position)
        if slash < 0:
            out.append(body[position:])
            return "".join(out)
        out.append(body[position:slash])
        escaped = PO_UNESCAPES.get(body[slash + 1 : slash + 2])
        if escaped is None:
            return None
        out.append(escaped)
        position = slash + 2


class _PoEntry:
    __slots__ = ("fields", "fuzzy", "line", "obsolete")

    def __init__(self, line: int) -> None:
        self.fields: dict[str, list[str]] = {}
        self.fuzzy = False
        self.obsolete = False
        self.line = line


def _po_entries(text: str, where: str) -> list[_PoEntry]:
    """The entries of a PO file: msgctxt, msgid and msgstr (continuation lines joined), the fuzzy
    flag, obsolete (#~) entries marked. Plural forms are refused: game strings have none."""
    entries: list[_PoEntry] = []
    current: _PoEntry | None = None
    field: list[str] | None = None
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.strip()
        if not line:
            current, field = None, None
            continue
        first = line[0]
        if first == "#":
            if current is not None and current.fields:
                current, field = None, None  # a comment after a field starts the next entry
            if current is None:
                current = _PoEntry(number)
                entries.append(current)
            if line.startswith("#~"):
                current.obsolete = True
            elif line.startswith("#,") and "fuzzy" in line[2:].replace(",", " ").split():
                current.fuzzy = True
            continue
        if first == '"':
            if field is None:
                raise GamepakError(f"{where}: line {number}: a string continues no msgctxt, msgid or msgstr")
            field.append(_po_unquote(line, where, number))
            continue
        keyword, _, rest = line.partition(" ")
        if keyword != "msgctxt" and keyword != "msgid" and keyword != "msgstr":
            what = "plural forms" if keyword.startswith(("msgid_plural", "msgstr[")) else f"{keyword!r}"
            raise GamepakError(f"{where}: line {number}: {what} not expected in a translation of game strings")
        fields = current.fields if current is not None else None
        if fields is None or keyword in fields or (keyword != "msgstr" and "msgstr" in fields):
            current = _PoEntry(number)
            entries.append(current)
            fields = current.fields
        elif keyword == "msgid" or not fields:
            current.line = number  # type: ignore[union-attr]
        field = fields[keyword] = [_po_unquote(rest.lstrip(), where, number)]
    return entries


# A quoted PO string on one line (the unrolled form: re matches it without backtracking).
_QUOTED = r'"([^"\\\n]*(?:\\.[^"\\\n]*)*)"'
# The shape gamepak (and polib with wrapwidth=0) writes: one line per field. A file made only
# of these is read by one regular expression; any other shape goes through `_po_entries`.
PO_HEADER = re.compile(
    r'(?:#[^\n]*\n)*msgid ""\nmsgstr "[^"\\\n]*(?:\\.[^"\\\n]*)*"\n(?:"[^"\\\n]*(?:\\.[^"\\\n]*)*"\n)*\n'
)
PO_SIMPLE_ENTRY = re.compile(
    rf"((?:#[^\n]*\n)*)msgctxt {_QUOTED}\nmsgid {_QUOTED}\nmsgstr {_QUOTED}\n(?:(\n)|(?=#|msgctxt)|$)"
)


# The characters of a PO_SIMPLE_ENTRY match outside its groups.
PO_SIMPLE_FIXED = len('msgctxt ""\nmsgid ""\nmsgstr ""\n')
# msgctxts that are all gamepak's `#5a3c91f0` hash keys, one a line.
PO_HASH_KEYS = re.compile(r"#[0-9A-Fa-f]{8}(?:\n#[0-9A-Fa-f]{8})*")


def _simple_po_rows(text: str, where: str) -> Rows | None:
    """The rows of a PO file in the one-line-per-field shape, or None when it has another."""
    columns = _simple_po_columns(text, where)
    if columns is not None:
        return columns
    rows = _simple_po_rows_in_order(text, where)
    return None if rows is None else Rows.of(rows)


def _simple_po_columns(text: str, where: str) -> Rows | None:
    """The rows of a PO file in the one-line-per-field shape read column by column (one
    `findall`, bulk checks), or None when anything needs a closer look (another shape, flags,
    escapes that are not gettext's, keys that are not clean): `_simple_po_rows_in_order` then
    reads it entry by entry and names the first problem."""
    header = PO_HEADER.match(text)
    start = header.end() if header else 0
    found = PO_SIMPLE_ENTRY.findall(text, start)
    if not found:
        return None
    comments, msgctxts, msgids, msgstrs, blanks = (list(column) for column in zip(*found))
    count = len(found)
    # findall's matches do not overlap and come in order: they tile the rest of the file
    # exactly when their lengths add up to it.
    covered = count * PO_SIMPLE_FIXED + sum(
        sum(map(len, column)) for column in (comments, msgctxts, msgids, msgstrs, blanks)
    )
    if start + covered != len(text):
        return None
    flags = "".join(comments)
    if "#~" in flags or "#," in flags:
        return None  # flags or obsolete entries: the general reader decides
    if PO_HASH_KEYS.fullmatch("\n".join(msgctxts)):
        hashes: list[int | None] = list(struct.unpack(f">{count}I", bytes.fromhex("".join(msgctxts).replace("#", ""))))
        identifiers: list[str | None] = [None] * count
    else:
        hashes, identifiers = [], []
        for key in msgctxts:
            if not key or "\\" in key or (key.startswith("#") and not (len(key) == 9 and PO_HASH_KEYS.fullmatch(key))):
                return None
            if key[0] == "#":
                hashes.append(int(key[1:], 16))
                identifiers.append(None)
            else:
                hashes.append(None)
                identifiers.append(key)
    for column in (msgids, msgstrs):
        if "\\" in "".join(column):
            for number, value in enumerate(column):
                if "\\" in value:
                    unescaped = _po_unescape(value)
                    if unescaped is None:
                        return None
                    column[number] = unescaped
    first_line = text.count("\n", 0, start) + 1
    lines: list[int] = []

    def location(number: int) -> str:
        if not lines:  # each entry's msgid line, as polib numbers entries
            line = first_line
            for comment, blank in zip(comments, blanks):
                line += comment.count("\n") + 1
                lines.append(line)
                line += 2 + len(blank)
        return f"{where}: line {lines[number]}"

    texts: list[str | None] = [msgstr or None for msgstr in msgstrs]
    fallbacks: list[str | None] = list(msgids)
    return Rows(hashes, identifiers, texts, fallbacks, location)


def _simple_po_rows_in_order(text: str, where: str) -> list[Row] | None:
    """`_simple_po_rows` entry by entry: the first problem raised with its line."""
    header = PO_HEADER.match(text)
    position = header.end() if header else 0
    line = text.count("\n", 0, position) + 1
    rows = []
    for match in PO_SIMPLE_ENTRY.finditer(text, position):
        if match.start() != position:
            return None
        comments, msgctxt, msgid, msgstr, blank = match.groups()
        comment_lines = comments.count("\n") if comments else 0
        number = line + comment_lines + 1  # the msgid's line, as polib numbers entries
        line = number + 2 + (blank is not None)
        position = match.end()
        if comment_lines and ("#~" in comments or "#," in comments):
            return None  # flags or obsolete entries: the general reader decides
        location = f"{where}: line {number}"
        if "\\" in msgctxt:
            msgctxt = _po_unquote(f'"{msgctxt}"', where, number - 1)
        if msgctxt.startswith("#"):
            hash_value, identifier = _parse_hash(msgctxt, location), None
        else:
            hash_value, identifier = None, msgctxt or _key(msgctxt, location)[1]
        if "\\" in msgstr:
            msgstr = _po_unquote(f'"{msgstr}"', where, number + 1)
        if "\\" in msgid:
            msgid = _po_unquote(f'"{msgid}"', where, number)
        rows.append(Row(hash_value, identifier, msgstr or None, location, msgid))
    if position != len(text):
        return None
    return rows


def _rows_from_po(text: str, where: str) -> Rows | list[Row]:
    simple = _simple_po_rows(text, where)
    if simple is not None:
        return simple
    rows = []
    for entry in _po_entries(text, where):
        if entry.obsolete or "msgid" not in entry.fields:
            continue
        msgctxt = "".join(entry.fields["msgctxt"]) if "msgctxt" in entry.fields else None
        msgid = "".join(entry.fields["msgid"])
        if msgctxt is None and msgid == "":
            continue  # the header
        location = f"{where}: line {entry.line}"
        if "msgstr" not in entry.fields:
            raise GamepakError(f"{location}: an entry without msgstr")
        msgstr = "".join(entry.fields["msgstr"])
        hash_value, identifier = _key(msgctxt, location)
        translated = msgstr and not entry.fuzzy
        rows.append(Row(hash_value, identifier, msgstr if translated else None, location, fallback=msgid))
    return rows


def _rows_from_rfgm_xml(data: bytes, where: str) -> list[Row]:
    from xml.etree import ElementTree

    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        raise GamepakError(f"{where}: not well-formed XML: {exc}") from None
    rows = []
    for position, element in enumerate(root.iter("Entry")):
        location = f"{where}: Entry {position}"
        identifier = element.findtext("Identifier") or None
        hash_text = element.findtext("Hash")
        hash_value = None
        if hash_text:
            if not hash_text.strip().isdigit() or int(hash_text) > 0xFFFFFFFF:
                raise GamepakError(f"{location}: Hash {hash_text!r} is not a decimal u32")
            hash_value = int(hash_text)
        rows.append(Row(hash_value, identifier, element.findtext("String") or "", location))
    return rows


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
        return Rows.of(_rows_from_po(text, where))
    raise GamepakError(f"unknown translation format {format!r}")


class Applied:
    """What applying a translation changed: the indices of changed strings, the keys added and
    removed."""

    def __init__(self) -> None:
        self.changed: list[int] = []
        self.added: list[str] = []
        self.removed: list[str] = []


def apply_translation(table: LocaText, rows: Rows | Sequence[Row], *, delete: bool = False) -> Applied:
    """Put the rows' strings into `table`: changed strings replaced, new keys added (hash from
    the identifier), entries the rows lack removed only with `delete`. Everything is checked
    first: on an error `table` is unchanged."""
    rows = Rows.of(rows)
    index_of = table.index_of()
    entries = table.entries
    hashes, identifiers, texts = rows.hashes, rows.identifiers, rows.texts
    count = len(hashes)
    named = identifiers.count(None) != count
    if not named and None not in hashes and len(set(hashes)) == count:
        # Every row keyed by its hash, none twice (gamepak's own export without names): the
        # checks of `_plan` pass, at the cost of a few passes over lists.
        values: list[int] = hashes  # type: ignore[assignment]
        indexes = list(map(index_of.get, values))
    else:
        values, indexes = _plan(rows, index_of, entries)
    applied = Applied()
    updates: dict[int, bytes] = {}
    new_entries: list[LocaEntry] = []
    # Only rows with a text, or new keys, can change anything (an untouched PO has no msgstr).
    pending = [number for number, text in enumerate(texts) if text is not None]
    if None in indexes:
        pending = sorted({*pending, *(number for number, index in enumerate(indexes) if index is None)})
    current = texts_of(entries) if pending else []
    for number in pending:
        text, index = texts[number], indexes[number]
        if index is None:
            if text is None:
                text = rows.fallbacks[number]
                if text is None:
                    continue
            new_entries.append(LocaEntry(values[number], _encode(text, rows, number), identifiers[number]))
            applied.added.append(identifiers[number] or hash_key(values[number]))
        elif text is not None and text != current[index]:
            updates[index] = _encode(text, rows, number)
    # Checked and encoded: only now is the table changed.
    for index, raw in updates.items():
        entries[index].raw = raw
    if named:
        for index, identifier in zip(indexes, identifiers):
            if index is not None and identifier is not None and entries[index].identifier is None:
                entries[index].identifier = identifier
    applied.changed = sorted(updates)
    if delete:
        wanted = set(values)
        kept = [entry for entry in entries if entry.hash in wanted]
        applied.removed = [entry.key for entry in entries if entry.hash not in wanted]
        entries[:] = kept
    entries.extend(new_entries)
    return applied


def _plan(rows: Rows, index_of: dict[int, int], entries: list[LocaEntry]) -> tuple[list[int], list[int | None]]:
    """Each row's hash and the index of its entry (None: a new entry), row by row: the first
    problem is raised (no key, an identifier that does not hash to the hash given, a key twice,
    an identifier whose hash is another named entry's)."""
    first_of: dict[int, int] = {}
    values: list[int] = []
    indexes: list[int | None] = []
    for number, (value, identifier) in enumerate(zip(rows.hashes, rows.identifiers)):
        if value is None:
            if identifier is None:
                raise GamepakError(f"{rows.where(number)}: neither a hash nor an identifier")
            value = identifier_hash(identifier)
        elif identifier is not None and identifier_hash(identifier) != value:
            actual = hash_key(identifier_hash(identifier))
            raise GamepakError(
                f"{rows.where(number)}: identifier {identifier!r} hashes to {actual}, not the {hash_key(value)} given"
            )
        earlier = first_of.setdefault(value, number)
        if earlier != number:
            name = identifier or rows.identifiers[earlier] or hash_key(value)
            raise GamepakError(f"{rows.where(number)}: {name} ({hash_key(value)}) is also at {rows.where(earlier)}")
        index = index_of.get(value)
        if index is not None and identifier is not None:
            known = entries[index].identifier
            if known is not None and known.lower() != identifier.lower():
                raise GamepakError(
                    f"{rows.where(number)}: identifier {identifier!r} hashes to {hash_key(value)}, the hash of "
                    f"{describe(index, value)}, named {known!r}: a collision"
                )
        values.append(value)
        indexes.append(index)
    return values, indexes


def _encode(text: str, rows: Rows, number: int) -> bytes:
    """Row `number`'s text as stored (`encode_text`, its place worked out only for an error)."""
    if "\0" not in text:
        try:
            return text.encode("utf-16-le") + NUL
        except UnicodeEncodeError:
            pass
    return encode_text(text, rows.where(number))
