"""The strings of Gameloft J2ME games, exported for translators and imported back.

Three shapes hold strings (`kind`):

- `pack`, a **text pack**: a `j2me-sized` pack of exactly two files. File 0 is the string table
  (NUL-terminated strings back to back); file 1 the index table: an int16 count, then that many
  int16 start indices into file 0. The last index may point at the very end of file 0 (a sentinel
  that starts no string); it is kept when the pack is rebuilt.
- `indexed`, **strings behind their own offset table**: a count and one start offset per string
  (both int16, or both int32; offsets counted from the first string or from the start of the
  data; optionally a last offset pointing at the end), then the strings, NUL-terminated. The
  table is recognised only when its offsets are exactly the strings' starts, and it is rebuilt
  when a string's length changes (an offset past the field's range is refused).
- `records`, **text records**: a count byte, one int16 offset per record, then records of
  layout codes around a text, e.g. Diamond Rush's tips (`tips.f`, `tipst.f`); the codes are kept
  byte for byte and only the text is exported (layout in `records.py`).
- `blob`, a **string blob**: NUL-terminated strings back to back, e.g. Diamond Rush's language
  file (one `j2me-table` member of 115 strings).

`auto` tries them in that order, and takes a blob only when it reads as text: binary data (a
pack's header, an image, an offset table gamepak does not know) split at its NUL bytes would be
junk strings, and re-importing them would break the data, so it is refused with the reason.

Strings are ISO-8859-1, except that byte 0x92 (cp1252's right single quote) stands for the
apostrophe: every 0x92 decodes to `'`, and an edited string writes `'` (and `’`) as 0x92. A string
whose text did not change keeps its original bytes, so an unchanged export/import gives back the
same file byte for byte (even where the game stored a plain 0x27 apostrophe).

A pack (any J2ME layout) given without a member: the member that holds strings is used when there
is exactly one; the others are listed as skipped, with the reason.

Translation files keep each string's index:

- JSON: a UTF-8 array of `{"index": N, "text": "..."}`.
- CSV: UTF-8 **with a byte-order mark** (so spreadsheet programs detect UTF-8), header
  `index,text`, fields quoted as needed (commas, quotes, line breaks). Reading accepts a file
  with or without the mark, separated by commas, semicolons or tabs (what spreadsheets save in
  locales whose decimal mark is a comma); the header row tells which.
- PO (gettext, via polib): `msgctxt` is the index, `msgid` the original text, `msgstr` the
  translation. Importing uses `msgstr` when it is non-empty and not marked fuzzy, else the
  original string. An entry whose `msgid` is not the original's string at that index (a PO file
  made from another version of the pack) is imported with a warning naming it.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ...core.atomic import write_bytes as write_atomic
from ...errors import GamepakError, MemberNotFoundError
from .members import CONTENT_PROBE, content_extension
from .records import INNER_CONTROLS, Record, RecordTable, find_records, is_text_byte
from .translations import dump_translation, load_translation, translation_format

APOSTROPHE_BYTE = b"\x92"
# Apostrophes a translator may type; all are stored as 0x92.
APOSTROPHES = ("'", "\u2019")
INDEX = struct.Struct("<h")
SIZE_PREFIX = struct.Struct("<H")
INT16_MAX = 0x7FFF
SIZED_MEMBER_MAX = 0xFFFF
KINDS = ("auto", "pack", "indexed", "records", "blob")
# Offset tables: (struct per field, largest value the signed field holds).
OFFSET_FIELDS = {2: (struct.Struct("<h"), INT16_MAX), 4: (struct.Struct("<i"), 0x7FFFFFFF)}
# A blob reads as text when at most this share of its bytes are control characters (games use a
# few for colours or icons; a binary table or an image has many more).
CONTROL_SHARE = 0.02
TEXT_CONTROLS = frozenset((0x09, 0x0A, 0x0D, 0x92))
# More than one control character this close to the start is a binary header, not a string.
HEAD_SIZE = 16


class TextShapeError(GamepakError):
    """Data that does not hold strings in a shape gamepak can rebuild (binary data, a pack's
    header, an unknown offset table); `reason` says why, without the file's name."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


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


def _string_starts(raw_strings: Sequence[bytes]) -> list[int]:
    starts = []
    position = 0
    for raw in raw_strings:
        starts.append(position)
        position += len(raw) + 1
    return starts


def binary_reason(data: bytes) -> str | None:
    """Why `data` is not a blob of text strings (None when it reads as one)."""
    extension = content_extension(data[:CONTENT_PROBE], complete=len(data) <= CONTENT_PROBE)
    if extension not in (".txt", ".bin"):
        return f"{extension[1:].upper()} data, not text"
    if not data:
        return "empty"
    controls = [
        position
        for position, byte in enumerate(data)
        if byte and (byte < 0x20 or 0x7F <= byte < 0xA0) and byte not in TEXT_CONTROLS
    ]
    strings = data.count(0)
    empty = data[:-1].split(b"\0").count(b"")
    head_controls = [position for position in controls if position < HEAD_SIZE]
    if len(head_controls) > 1:
        # A table of counts and offsets in front of the strings (a pack's header, an unknown
        # offset table): its small numbers are control characters.
        return (
            f"binary data: it starts with control characters (0x{data[head_controls[0]]:02x} at byte "
            f"{head_controls[0]}, 0x{data[head_controls[1]]:02x} at byte {head_controls[1]}): a table in front of "
            "the strings?"
        )
    if controls and len(controls) > CONTROL_SHARE * len(data):
        first = controls[0]
        return (
            f"binary data: {len(controls)} of its {len(data)} bytes are control characters "
            f"(the first, 0x{data[first]:02x}, at byte {first})"
        )
    if strings > 4 and empty * 2 > strings and not _wordy(data):
        # Zero-filled binary tables split into empty pieces; a language file with many unused
        # (empty) strings, such as Diamond Rush's lang_IGA.f, has words in the others.
        return f"binary data: {empty} of its {strings} NUL-separated pieces are empty"
    return None


def _wordy(data: bytes) -> bool:
    """Whether most non-empty NUL-separated pieces of `data` hold a word (three letters in a row)."""
    import re

    pieces = [piece for piece in data.split(b"\0") if piece]
    word = re.compile(rb"[A-Za-z\xc0-\xff]{3}")
    return bool(pieces) and sum(1 for piece in pieces if word.search(piece)) * 2 > len(pieces)


@dataclass(frozen=True)
class OffsetTable:
    """The offset table in front of `indexed` strings: field width, what offsets count from,
    and whether a last offset points at the end of the strings."""

    width: int
    from_start: bool  # offsets count from the start of the data (else from the first string)
    sentinel: bool

    def header_size(self, string_count: int) -> int:
        return self.width * (1 + string_count + self.sentinel)

    def build(self, raw_strings: Sequence[bytes]) -> bytes:
        """The table and the strings; offsets past the field's range are refused."""
        field_struct, limit = OFFSET_FIELDS[self.width]
        strings = build_string_blob(raw_strings)
        base = self.header_size(len(raw_strings)) if self.from_start else 0
        offsets = [base + start for start in _string_starts(raw_strings)]
        if self.sentinel:
            offsets.append(base + len(strings))
        count = len(offsets)
        for number, offset in enumerate(offsets):
            if offset > limit:
                what = "the end of the strings" if number == len(raw_strings) else f"string {number}"
                raise GamepakError(
                    f"{what} would start at byte {offset}: its {self.width * 8}-bit offset reaches only {limit} "
                    "(shorten the strings)"
                )
        if count > limit:
            raise GamepakError(f"{count} offsets: a {self.width * 8}-bit count holds at most {limit}")
        header = field_struct.pack(count) + b"".join(field_struct.pack(offset) for offset in offsets)
        return header + strings


def find_offset_table(data: bytes) -> tuple[OffsetTable, list[bytes]] | None:
    """The offset table and strings of `indexed` data, or None when no table fits exactly."""
    for width, (field_struct, _) in OFFSET_FIELDS.items():
        if len(data) < width:
            continue
        (count,) = field_struct.unpack_from(data, 0)
        header_size = width * (1 + count)
        if count < 1 or header_size >= len(data):
            continue
        strings = data[header_size:]
        if not strings.endswith(b"\0"):
            continue
        offsets = [value for (value,) in field_struct.iter_unpack(data[width:header_size])]
        raw_strings = strings[:-1].split(b"\0")
        starts = _string_starts(raw_strings)
        for from_start in (False, True):
            base = header_size if from_start else 0
            relative = [offset - base for offset in offsets]
            if relative == starts:
                return OffsetTable(width, from_start, False), raw_strings
            if relative == [*starts, len(strings)]:
                return OffsetTable(width, from_start, True), raw_strings
    return None


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
    starts = _string_starts(raw_strings)
    end = len(table)
    if sentinel:
        starts.append(end)
    for index, start in enumerate(starts):
        if start > INT16_MAX:
            what = "the string table's end" if index == len(raw_strings) else f"string {index}"
            raise GamepakError(
                f"{what} would be at byte {start} of the string table; its int16 index reaches only {INT16_MAX}"
            )
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
    """The strings of a text pack, of an offset-indexed string table or of a string blob, with
    what rebuilding it needs."""

    def __init__(
        self,
        kind: str,
        raw_strings: list[bytes],
        original: bytes,
        sentinel: bool = False,
        offset_table: OffsetTable | None = None,
        records: tuple[RecordTable, list[Record]] | None = None,
    ) -> None:
        self.kind = kind
        self.raw_strings = raw_strings
        self.original = original
        self.sentinel = sentinel
        self.offset_table = offset_table
        self.records = records

    @classmethod
    def parse(cls, data: bytes, kind: str = "auto", where: str = "text") -> StringTable:
        """Parse `data` as a text pack (`pack`), strings behind an offset table (`indexed`), a
        string blob (`blob`), or whichever its shape says (`auto`). `auto` refuses data that
        is none of them (TextShapeError, with the reason); an explicit `blob` takes any
        NUL-terminated data."""
        if kind not in KINDS:
            raise GamepakError(f"unknown text kind {kind!r}; use one of {', '.join(KINDS)}")
        if kind == "pack" or (kind == "auto" and looks_like_text_pack(data)):
            raw_strings, sentinel = parse_text_pack(data, where)
            return cls("pack", raw_strings, data, sentinel)
        if kind in ("auto", "indexed"):
            found = find_offset_table(data)
            if found is not None:
                table, raw_strings = found
                return cls("indexed", raw_strings, data, table.sentinel, table)
            if kind == "indexed":
                no_table = "no offset table fits: a count and one offset per string (int16 or int32), then the strings"
                raise TextShapeError(f"{where}: {no_table}", no_table)
        if kind in ("auto", "records"):
            records = find_records(data)
            if records is not None:
                return cls("records", [record.text for record in records[1]], data, records=records)
            if kind == "records":
                no_records = (
                    "no record table fits: a count byte, one int16 offset per record, then records of "
                    "layout codes around a text"
                )
                raise TextShapeError(f"{where}: {no_records}", no_records)
            binary = binary_reason(data)
            if binary is not None:
                raise TextShapeError(f"{where}: not a string table: {binary}", binary)
        return cls("blob", parse_string_blob(data, where), data)

    @property
    def texts(self) -> list[str]:
        """Each string's text, by index."""
        return [decode_string(raw) for raw in self.raw_strings]

    def __len__(self) -> int:
        return len(self.raw_strings)

    def rebuild(self, texts: Sequence[str]) -> bytes:
        """The bytes holding `texts` (one per index) in this table's shape. Strings whose text
        is unchanged keep their original bytes; with nothing changed, the original comes back.
        Lengths the shape cannot hold are refused."""
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
        if self.offset_table is not None:
            return self.offset_table.build(raw_strings)
        if self.records is not None:
            layout, records = self.records
            for index, raw in enumerate(raw_strings):
                bad = next((byte for byte in raw if not is_text_byte(byte) and byte not in INNER_CONTROLS), None)
                if bad is not None:
                    raise GamepakError(
                        f"string {index}: control character 0x{bad:02x} would be read as a layout code "
                        "(a record's text holds letters, tabs and line breaks only)"
                    )
            return layout.build([Record(old.prefix, raw, old.suffix) for old, raw in zip(records, raw_strings)])
        return build_string_blob(raw_strings)


# -- files -------------------------------------------------------------------------------------


@dataclass
class TextMember:
    """Where strings were found: the pack's member (None: the file itself) and its table;
    `skipped` lists the pack's other members with the reason each holds no strings."""

    member: str | None
    table: StringTable
    skipped: list[tuple[str, str]] = field(default_factory=list)
    # The pack's format when the strings are a member's (None: the file itself).
    format: str | None = None


@dataclass
class TextExport(TextMember):
    """What `export_strings` did: the translation file's bytes, and where the strings came from."""

    data: bytes = b""


@dataclass
class TextImport(TextMember):
    """What `import_strings` did: how many strings changed, and where."""

    changed: int = 0


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


def text_members(archive: Any, kind: str = "auto") -> tuple[list[tuple[Any, StringTable]], list[tuple[str, str]]]:
    """The members of an open pack that hold strings, as (entry, table), and the others as
    (name, why not)."""
    found = []
    skipped = []
    for entry in archive.infolist():
        try:
            found.append((entry, StringTable.parse(archive.read(entry), kind, entry.name)))
        except TextShapeError as exc:
            skipped.append((entry.name, exc.reason))
        except GamepakError as exc:
            skipped.append((entry.name, str(exc).removeprefix(f"{entry.name}: ")))
    return found, skipped


def _open_pack(file: str | os.PathLike[str], format: str | None) -> Any:
    from ...core.opening import open as open_archive

    return open_archive(file, format)


def _locate(archive: Any, label: str, member: str | None, kind: str) -> tuple[Any, TextMember]:
    """The entry holding the strings and what was found: `member`, else the pack's one
    member that holds strings."""
    if member is not None:
        entry = _find_member(archive, member)
        return entry, TextMember(entry.name, StringTable.parse(archive.read(entry), kind, f"{label}/{entry.name}"))
    found, skipped = text_members(archive, kind)
    if len(found) == 1:
        entry, table = found[0]
        return entry, TextMember(entry.name, table, skipped)
    listed = "; ".join(f"{name}: {why}" for name, why in skipped[:5])
    more = f" and {len(skipped) - 5} more" if len(skipped) > 5 else ""
    if not found:
        hint = "; a member of bare NUL-terminated strings reads with --kind blob" if kind == "auto" else ""
        raise TextShapeError(
            f"{label}: a {archive.format_name} pack with no member that holds strings "
            f"({len(skipped)} skipped: {listed}{more}){hint}"
        )
    names = ", ".join(f"{entry.name} ({len(table)} strings)" for entry, table in found)
    raise TextShapeError(
        f"{label}: {len(found)} members of this {archive.format_name} pack hold strings: {names}; name the MEMBER"
    )


def read_strings(
    file: str | os.PathLike[str],
    member: str | None = None,
    *,
    format: str | None = None,
    kind: str = "auto",
) -> StringTable:
    """The strings of `file` (a text pack, an offset-indexed table or a string blob), or of
    its `member` when given (the pack is read as `format`, or detected). A pack given without
    a member gives the strings of its one member that holds strings."""
    return locate_strings(file, member, format=format, kind=kind).table


def locate_strings(
    file: str | os.PathLike[str],
    member: str | None = None,
    *,
    format: str | None = None,
    kind: str = "auto",
) -> TextMember:
    """Like `read_strings`, saying which member held the strings (and the pack's format) and
    which members were skipped."""
    label = os.fspath(file)
    if member is None and format == "j2me-sized":
        return TextMember(None, StringTable.parse(_read_file(file), "pack", label))
    if member is None and format is None:
        data = _read_file(file)
        if kind != "auto":
            # A pack's header would be taken for strings too (and rewritten as such on import):
            # a file that is a pack is read through its member.
            # (A text pack is itself a two-member j2me-sized pack: --kind pack means the file.)
            whole = kind == "pack" or looks_like_text_pack(data)
            pack_format, _ = (None, None) if whole else _detect_pack(file)
            if pack_format is None:
                return TextMember(None, StringTable.parse(data, kind, label))
            format = pack_format
        if looks_like_text_pack(data) or find_offset_table(data) is not None or find_records(data) is not None:
            return TextMember(None, StringTable.parse(data, kind, label))
        # A pack's header split at its NUL bytes looks like strings: packs first, then blobs.
        format, ambiguity = _detect_pack(file)
        if format is None:
            try:
                return TextMember(None, StringTable.parse(data, kind, label))
            except TextShapeError:
                if ambiguity is not None:
                    raise ambiguity from None
                raise
    with _open_pack(file, format) as archive:
        located = _locate(archive, label, member, kind)[1]
        located.format = archive.format_name
        return located


def _detect_pack(file: str | os.PathLike[str]) -> tuple[str | None, GamepakError | None]:
    """The archive format `file` is detected as (None when none fits or several fit equally
    well: then also that ambiguity, to report if the file is not text either)."""
    from ...core.opening import choose_format
    from ...core.registry import get_format
    from ...errors import AmbiguousFormatError

    try:
        detected = str(choose_format(file).format)
    except AmbiguousFormatError as exc:
        return None, exc
    except GamepakError:
        return None, None
    return (detected if get_format(detected).kind == "archive" else None), None


def export_strings(
    file: str | os.PathLike[str],
    output: str | os.PathLike[str] | None = None,
    member: str | None = None,
    *,
    format: str | None = None,
    kind: str = "auto",
    translation: str | None = None,
    overwrite: bool = False,
) -> TextExport:
    """Export the strings of `file` (or of its `member`; or of the one member of the pack
    `file` that holds strings) as a translation file; writes `output` atomically when given.
    The result holds the file's bytes, the member used and the members skipped."""
    found = locate_strings(file, member, format=format, kind=kind)
    encoded = dump_translation(
        found.table.texts, translation_format(output, translation), source=os.path.basename(os.fspath(file))
    )
    if output is not None:
        write_atomic(output, encoded, overwrite=overwrite)
    return TextExport(found.member, found.table, found.skipped, found.format, data=encoded)


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
) -> TextImport:
    """Write `output`: `file` with the strings of `translation` (or its `member`'s strings
    replaced, the enclosing pack rebuilt in its own format and layout). Everything is checked
    before anything is written. The result says how many strings changed, in which member."""
    fmt = translation_format(translation, translation_kind)
    located = locate_strings(file, member, format=format, kind=kind)
    table = located.table
    texts = load_translation(
        _read_file(translation), len(table), fmt, where=os.fspath(translation), originals=table.texts
    )
    rebuilt = table.rebuild(texts)
    changed = sum(decode_string(raw) != text for raw, text in zip(table.raw_strings, texts))
    if located.member is None:
        write_atomic(output, rebuilt, overwrite=overwrite)
        return TextImport(None, table, located.skipped, changed=changed)
    from ...core.opening import create

    with _open_pack(file, located.format) as archive:
        target = _find_member(archive, located.member)
        layout = archive.layout()
        writer = create(
            output,
            archive.format_name,
            overwrite=overwrite,
            layout=layout.get("exact", {}),
            **layout.get("options", {}),
        )
        with writer:
            for entry in archive.infolist():
                writer.add(entry.name, rebuilt if entry is target else archive.read(entry))
    return TextImport(located.member, table, located.skipped, located.format, changed=changed)
