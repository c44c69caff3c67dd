"""The strings of Gameloft J2ME games, exported for translators and imported back.

Two shapes hold strings:

- a **text pack**: a `j2me-sized` pack of exactly two files. File 0 is the string table
  (NUL-terminated strings back to back); file 1 the index table: an int16 count, then that many
  int16 start indices into file 0. The last index may point at the very end of file 0 (a sentinel
  that starts no string); it is kept when the pack is rebuilt.
- a **string blob**: NUL-terminated strings back to back, e.g. Diamond Rush's language file (one
  `j2me-table` member of 115 strings).

Strings are ISO-8859-1, except that byte 0x92 (cp1252's right single quote) stands for the
apostrophe: every 0x92 decodes to `'`, and an edited string writes `'` (and `’`) as 0x92. A string
whose text did not change keeps its original bytes, so an unchanged export/import gives back the
same file byte for byte (even where the game stored a plain 0x27 apostrophe).

Translation files keep each string's index:

- JSON: a UTF-8 array of `{"index": N, "text": "..."}`.
- CSV: UTF-8 **with a byte-order mark** (so spreadsheet programs detect UTF-8), header
  `index,text`, fields quoted as needed (commas, quotes, line breaks). Reading accepts a file
  with or without the mark.
- PO (gettext, via polib): `msgctxt` is the index, `msgid` the original text, `msgstr` the
  translation. Importing uses `msgstr` when it is non-empty and not marked fuzzy, else `msgid`.
"""

from __future__ import annotations

import csv
import io
import json
import os
import struct
import tempfile
from collections.abc import Sequence
from typing import Any

from .atomic import write_bytes as write_atomic
from .errors import GamepakError, MemberNotFoundError

APOSTROPHE_BYTE = b"\x92"
# Apostrophes a translator may type; all are stored as 0x92.
APOSTROPHES = ("'", "\u2019")
INDEX = struct.Struct("<h")
SIZE_PREFIX = struct.Struct("<H")
INT16_MAX = 0x7FFF
SIZED_MEMBER_MAX = 0xFFFF
KINDS = ("auto", "pack", "blob")
TRANSLATION_FORMATS = ("json", "csv", "po")


def decode_string(raw: bytes) -> str:
    """A stored string's text: ISO-8859-1, with every 0x92 read as an apostrophe."""
    return raw.decode("latin-1").replace("\x92", "'")


def encode_string(text: str, index: int) -> bytes:
    """A string's stored bytes (without its NUL); `index` names it in errors."""
    if "\0" in text:
        raise GamepakError(f"string {index} holds a NUL character, which would cut it short")
    for apostrophe in APOSTROPHES:
        text = text.replace(apostrophe, "\x92")
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError as exc:
        character = text[exc.start]
        raise GamepakError(
            f"string {index}: character {character!r} (U+{ord(character):04X}) at position {exc.start} "
            "cannot be stored: the game's strings are ISO-8859-1"
        ) from None


def parse_string_blob(data: bytes, where: str = "string blob") -> list[bytes]:
    """The raw strings of NUL-terminated strings back to back."""
    if not data:
        return []
    if not data.endswith(b"\0"):
        start = data.rfind(b"\0") + 1
        index = data.count(b"\0")
        raise GamepakError(
            f"{where}: string {index} at byte {start} has no NUL terminator (the data ends at byte {len(data)})"
        )
    return data[:-1].split(b"\0")


def build_string_blob(raw_strings: Sequence[bytes]) -> bytes:
    """NUL-terminated strings back to back."""
    return b"".join(raw + b"\0" for raw in raw_strings)


def split_sized(data: bytes) -> list[bytes] | None:
    """The files of a `j2me-sized` pack held in memory, or None when the chain does not fit."""
    files = []
    position = 0
    while position < len(data):
        if position + SIZE_PREFIX.size > len(data):
            return None
        (size,) = SIZE_PREFIX.unpack_from(data, position)
        position += SIZE_PREFIX.size
        if position + size > len(data):
            return None
        files.append(data[position : position + size])
        position += size
    return files


def looks_like_text_pack(data: bytes) -> bool:
    """True when `data` has a text pack's shape: two sized files, the second exactly an int16
    count and that many int16 indices."""
    files = split_sized(data)
    if files is None or len(files) != 2 or len(files[1]) < INDEX.size:
        return False
    (count,) = INDEX.unpack_from(files[1], 0)
    return count >= 0 and len(files[1]) == INDEX.size * (1 + count)


def parse_text_pack(data: bytes, where: str = "text pack") -> tuple[list[bytes], bool]:
    """The raw strings of a text pack, and whether its index table ends with a sentinel index
    pointing at the end of the string table."""
    files = split_sized(data)
    if files is None:
        raise GamepakError(f"{where}: not a j2me-sized pack (its size fields do not end at the end of the data)")
    if len(files) != 2:
        raise GamepakError(f"{where}: a text pack holds exactly 2 files, this one {len(files)}")
    table, index_table = files
    index_start = SIZE_PREFIX.size + len(table) + SIZE_PREFIX.size  # file 1's position in the pack
    if len(index_table) < INDEX.size:
        raise GamepakError(f"{where}: byte {index_start}: the index table is too short for its count")
    (count,) = INDEX.unpack_from(index_table, 0)
    if count < 0 or INDEX.size * (1 + count) > len(index_table):
        raise GamepakError(
            f"{where}: byte {index_start}: index count {count} does not fit the {len(index_table)}-byte index table"
        )
    if INDEX.size * (1 + count) != len(index_table):
        raise GamepakError(
            f"{where}: byte {index_start}: the index table holds {len(index_table)} bytes, "
            f"{INDEX.size * (1 + count)} expected for {count} indices"
        )
    raw_strings = []
    sentinel = False
    for number in range(count):
        field_at = INDEX.size * (1 + number)
        (start,) = INDEX.unpack_from(index_table, field_at)
        position = index_start + field_at
        if start == len(table) and number == count - 1:
            sentinel = True  # points at the end of the table: starts no string
            break
        if start < 0 or start >= len(table):
            raise GamepakError(
                f"{where}: byte {position}: index {number} ({start}) lies outside the {len(table)}-byte string table"
            )
        end = table.find(b"\0", start)
        if end < 0:
            raise GamepakError(f"{where}: string {number} at byte {start} of the string table has no NUL terminator")
        raw_strings.append(table[start:end])
    return raw_strings, sentinel


def build_text_pack(raw_strings: Sequence[bytes], sentinel: bool = False) -> bytes:
    """A text pack holding `raw_strings` in order (with a sentinel index when asked)."""
    table = build_string_blob(raw_strings)
    starts = []
    position = 0
    for index, raw in enumerate(raw_strings):
        if position > INT16_MAX:
            raise GamepakError(
                f"string {index} would start at byte {position} of the string table; "
                f"its int16 index reaches only {INT16_MAX}"
            )
        starts.append(position)
        position += len(raw) + 1
    if sentinel:
        if position > INT16_MAX:
            raise GamepakError(f"the string table ({position} bytes) is too long for an int16 end index")
        starts.append(position)
    if len(starts) > INT16_MAX:
        raise GamepakError(f"{len(starts)} indices: a text pack's int16 count holds at most {INT16_MAX}")
    index_table = INDEX.pack(len(starts)) + struct.pack(f"<{len(starts)}h", *starts)
    for what, part in (("string table", table), ("index table", index_table)):
        if len(part) > SIZED_MEMBER_MAX:
            raise GamepakError(
                f"the {what} would be {len(part)} bytes; a text pack's files hold at most {SIZED_MEMBER_MAX}"
            )
    return SIZE_PREFIX.pack(len(table)) + table + SIZE_PREFIX.pack(len(index_table)) + index_table


class StringTable:
    """The strings of a text pack or a string blob, with what rebuilding it needs."""

    def __init__(self, kind: str, raw_strings: list[bytes], original: bytes, sentinel: bool = False) -> None:
        self.kind = kind
        self.raw_strings = raw_strings
        self.original = original
        self.sentinel = sentinel

    @classmethod
    def parse(cls, data: bytes, kind: str = "auto", where: str = "text") -> StringTable:
        """Parse `data` as a text pack (`pack`), a string blob (`blob`), or whichever its shape
        says (`auto`: a text pack when it has one's shape, else a blob)."""
        if kind not in KINDS:
            raise GamepakError(f"unknown text kind {kind!r}; use one of {', '.join(KINDS)}")
        if kind == "pack" or (kind == "auto" and looks_like_text_pack(data)):
            raw_strings, sentinel = parse_text_pack(data, where)
            return cls("pack", raw_strings, data, sentinel)
        return cls("blob", parse_string_blob(data, where), data)

    @property
    def texts(self) -> list[str]:
        """Each string's text, by index."""
        return [decode_string(raw) for raw in self.raw_strings]

    def __len__(self) -> int:
        return len(self.raw_strings)

    def rebuild(self, texts: Sequence[str]) -> bytes:
        """The bytes holding `texts` (one per index) in this table's shape. Strings whose text
        is unchanged keep their original bytes; with nothing changed, the original comes back."""
        if len(texts) != len(self.raw_strings):
            raise GamepakError(f"{len(texts)} strings given, the table holds {len(self.raw_strings)}")
        raw_strings = [
            raw if decode_string(raw) == text else encode_string(text, index)
            for index, (raw, text) in enumerate(zip(self.raw_strings, texts))
        ]
        if raw_strings == self.raw_strings:
            return self.original
        if self.kind == "pack":
            return build_text_pack(raw_strings, self.sentinel)
        return build_string_blob(raw_strings)


# -- translation files -------------------------------------------------------------------------


def translation_format(path: str | os.PathLike[str] | None, explicit: str | None = None) -> str:
    """The translation file format: `explicit`, else from the file's extension, else JSON."""
    if explicit:
        wanted = explicit.lower().lstrip(".")
        if wanted not in TRANSLATION_FORMATS:
            raise GamepakError(f"unknown translation format {explicit!r}; use one of {', '.join(TRANSLATION_FORMATS)}")
        return wanted
    if path is None:
        return "json"
    extension = os.path.splitext(os.fspath(path))[1].lower().lstrip(".")
    if extension in ("po", "pot"):
        return "po"
    if extension in TRANSLATION_FORMATS:
        return extension
    raise GamepakError(
        f"{os.fspath(path)}: cannot tell the translation format from the extension; use .json, .csv or .po"
    )


def dump_translation(texts: Sequence[str], format: str = "json", *, source: str = "") -> bytes:
    """A translation file holding `texts` by index."""
    if format == "json":
        rows = [{"index": index, "text": text} for index, text in enumerate(texts)]
        return (json.dumps(rows, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
    if format == "csv":
        buffer = io.StringIO(newline="")
        writer = csv.writer(buffer, lineterminator="\r\n")
        writer.writerow(["index", "text"])
        writer.writerows([index, text] for index, text in enumerate(texts))
        return buffer.getvalue().encode("utf-8-sig")
    if format == "po":
        import polib

        po = polib.POFile(wrapwidth=0)
        po.metadata = {
            "Project-Id-Version": source or "gamepak text export",
            "MIME-Version": "1.0",
            "Content-Type": "text/plain; charset=UTF-8",
            "Content-Transfer-Encoding": "8bit",
        }
        for index, text in enumerate(texts):
            po.append(polib.POEntry(msgctxt=str(index), msgid=text, msgstr=""))
        return str(po).encode("utf-8")
    raise GamepakError(f"unknown translation format {format!r}")


def _rows_from_json(text: str, where: str) -> list[tuple[int, str]]:
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise GamepakError(f"{where}: not valid JSON: {exc}") from None
    if not isinstance(document, list):
        raise GamepakError(f'{where}: expected a JSON array of {{"index": N, "text": "..."}} objects')
    rows = []
    for position, item in enumerate(document):
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("index"), int)
            or isinstance(item.get("index"), bool)
            or not isinstance(item.get("text"), str)
        ):
            raise GamepakError(f"{where}: item {position} is not an object with an integer index and a string text")
        rows.append((item["index"], item["text"]))
    return rows


def _rows_from_csv(text: str, where: str) -> list[tuple[int, str]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        records = list(reader)
    except csv.Error as exc:
        raise GamepakError(f"{where}: malformed CSV: {exc}") from None
    if not records or [cell.strip().lower() for cell in records[0]] != ["index", "text"]:
        raise GamepakError(f"{where}: the first row must be the header index,text")
    rows = []
    for line, record in enumerate(records[1:], start=2):
        if not record:
            continue
        if len(record) != 2:
            raise GamepakError(f"{where}: row {line} has {len(record)} fields, expected 2 (index,text)")
        try:
            index = int(record[0])
        except ValueError:
            raise GamepakError(f"{where}: row {line}: index {record[0]!r} is not a number") from None
        rows.append((index, record[1]))
    return rows


def _rows_from_po(text: str, where: str) -> list[tuple[int, str]]:
    import polib

    # polib splits a string argument with str.splitlines(), which also breaks at U+0085, U+001C..E
    # (characters Latin-1 strings can hold); reading a file splits at line ends only.
    fd, temporary = tempfile.mkstemp(suffix=".po")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
        po = polib.pofile(temporary, encoding="utf-8")
    except (OSError, ValueError) as exc:
        raise GamepakError(f"{where}: malformed PO file: {exc}") from None
    finally:
        os.unlink(temporary)
    rows = []
    for entry in po:
        if entry.obsolete:
            continue
        try:
            index = int(entry.msgctxt or "")
        except ValueError:
            raise GamepakError(
                f"{where}: line {entry.linenum}: msgctxt {entry.msgctxt!r} is not a string index"
            ) from None
        translated = entry.msgstr and "fuzzy" not in entry.flags
        rows.append((index, entry.msgstr if translated else entry.msgid))
    return rows


def load_translation(data: bytes, expected: int, format: str = "json", *, where: str = "translation") -> list[str]:
    """The texts of a translation file, by index; every index 0..expected-1 exactly once."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise GamepakError(f"{where}: byte {exc.start}: not UTF-8") from None
    if format == "json":
        rows = _rows_from_json(text, where)
    elif format == "csv":
        rows = _rows_from_csv(text, where)
    elif format == "po":
        rows = _rows_from_po(text, where)
    else:
        raise GamepakError(f"unknown translation format {format!r}")
    by_index: dict[int, str] = {}
    for index, value in rows:
        if index in by_index:
            raise GamepakError(f"{where}: index {index} appears more than once")
        by_index[index] = value
    extra = sorted(index for index in by_index if not 0 <= index < expected)
    if extra:
        raise GamepakError(
            f"{where}: {_some(extra)} not in the original, which holds {expected} strings (0..{expected - 1})"
        )
    missing = [index for index in range(expected) if index not in by_index]
    if missing:
        raise GamepakError(f"{where}: {_some(missing)} missing; every string 0..{expected - 1} must be present")
    return [by_index[index] for index in range(expected)]


def _some(indices: list[int]) -> str:
    shown = ", ".join(str(index) for index in indices[:10])
    more = f" and {len(indices) - 10} more" if len(indices) > 10 else ""
    one = len(indices) == 1
    return f"{'index' if one else 'indices'} {shown}{more} {'is' if one else 'are'}"


# -- files -------------------------------------------------------------------------------------


def _read_file(path: str | os.PathLike[str]) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise GamepakError(f"{os.fspath(path)}: cannot read: {exc.strerror}") from exc


def _find_member(archive: Any, member: str) -> Any:
    """The entry `member` names: a member name, or the name it is extracted under (`0.txt`)."""
    try:
        return archive.getinfo(member)
    except MemberNotFoundError:
        for entry in archive.infolist():
            if archive.extraction_name(entry) == member:
                return entry
        raise


def read_strings(
    file: str | os.PathLike[str],
    member: str | None = None,
    *,
    format: str | None = None,
    kind: str = "auto",
) -> StringTable:
    """The strings of `file` (a text pack or string blob), or of its `member` when given (the
    pack is read as `format`, or detected)."""
    label = os.fspath(file)
    if member is None:
        if format not in (None, "j2me-sized"):
            raise GamepakError(f"--format {format} names the pack holding MEMBER: give the MEMBER too")
        return StringTable.parse(_read_file(file), "pack" if format else kind, label)
    import gamepak

    with gamepak.open(file, format) as archive:
        entry = _find_member(archive, member)
        return StringTable.parse(archive.read(entry), kind, f"{label}/{entry.name}")


def export_strings(
    file: str | os.PathLike[str],
    output: str | os.PathLike[str] | None = None,
    member: str | None = None,
    *,
    format: str | None = None,
    kind: str = "auto",
    translation: str | None = None,
    overwrite: bool = False,
) -> bytes:
    """Export the strings of `file` (or its `member`) as a translation file; writes `output`
    atomically when given and returns the file's bytes."""
    table = read_strings(file, member, format=format, kind=kind)
    encoded = dump_translation(
        table.texts, translation_format(output, translation), source=os.path.basename(os.fspath(file))
    )
    if output is not None:
        write_atomic(output, encoded, overwrite=overwrite)
    return encoded


def import_strings(
    file: str | os.PathLike[str],
    translation: str | os.PathLike[str],
    output: str | os.PathLike[str],
    member: str | None = None,
    *,
    format: str | None = None,
    kind: str = "auto",
    translation_kind: str | None = None,
    overwrite: bool = False,
) -> int:
    """Write `output`: `file` with the strings of `translation` (or its `member`'s strings
    replaced, the enclosing pack rebuilt in its own format and layout). Everything is checked
    before anything is written. Returns how many strings changed."""
    fmt = translation_format(translation, translation_kind)
    label = os.fspath(file)
    if member is None:
        table = read_strings(file, None, format=format, kind=kind)
        texts = load_translation(_read_file(translation), len(table), fmt, where=os.fspath(translation))
        rebuilt = table.rebuild(texts)
        write_atomic(output, rebuilt, overwrite=overwrite)
        return _changed(table, texts)
    import gamepak

    with gamepak.open(file, format) as archive:
        target = _find_member(archive, member)
        table = StringTable.parse(archive.read(target), kind, f"{label}/{target.name}")
        texts = load_translation(_read_file(translation), len(table), fmt, where=os.fspath(translation))
        rebuilt = table.rebuild(texts)
        layout = archive.layout()
        writer = gamepak.create(
            output,
            archive.format_name,
            overwrite=overwrite,
            layout=layout.get("exact", {}),
            **layout.get("options", {}),
        )
        with writer:
            for entry in archive.infolist():
                writer.add(entry.name, rebuilt if entry is target else archive.read(entry))
    return _changed(table, texts)


def _changed(table: StringTable, texts: Sequence[str]) -> int:
    return sum(decode_string(raw) != text for raw, text in zip(table.raw_strings, texts))
