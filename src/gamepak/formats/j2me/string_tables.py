"""The shapes that hold the strings of Gameloft J2ME games, read into a `StringTable` and
rebuilt from it, and how a string's text is stored (`decode_string`, `encode_string`).

Four shapes hold strings (`kind`):

- `pack`, a **text pack**: a `j2me-sized` pack of exactly two files. File 0 is the string table
  (NUL-terminated strings back to back); file 1 the index table: an int16 count, then that many
  int16 start indices into file 0. The last index may point at the very end of file 0 (a sentinel
  that starts no string); it is kept when the pack is rebuilt.
- `indexed`, **strings behind their own offset table**: a count and one start offset per string
  (both int16, or both int32; offsets counted from the first string or from the start of the
  data; optionally a last offset pointing at the end), then the strings, NUL-terminated. The
  table is recognised only when its offsets are exactly the strings' starts, and it is rebuilt
  when a string's length changes (an offset past the field's range is refused).
- `records`, **text records**: a count byte, one int16 offset per record, then records of text
  runs and icons, e.g. Diamond Rush's tips (`tipst.f`); each text run is a string, every other
  byte (positions, icons, key codes) is kept as it is (layout in `records.py`).
- `blob`, a **string blob**: NUL-terminated strings back to back, e.g. Diamond Rush's language
  file (one `j2me-table` member of 115 strings).

`auto` tries them in that order, and takes a blob only when it reads as text: binary data (a
pack's header, an image, an offset table gamepak does not know) split at its NUL bytes would be
junk strings, and re-importing them would break the data, so it is refused with the reason.

Strings are ISO-8859-1, except that byte 0x92 (cp1252's right single quote) stands for the
apostrophe: every 0x92 decodes to `'`, and an edited string writes `'` (and `’`) as 0x92. A string
whose text did not change keeps its original bytes, so an unchanged export/import gives back the
same file byte for byte (even where the game stored a plain 0x27 apostrophe).
"""

from __future__ import annotations

import itertools
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from ...core.layout import terminated_offsets
from ...errors import GamepakError
from .members import CONTENT_PROBE, content_extension
from .records import INNER_CONTROLS, Record, RecordTable, find_records, is_text_byte, rebuild_records, record_texts

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
# The control characters a blob's text may hold few of: C0 and C1 controls but NUL (the
# strings' terminator) and TEXT_CONTROLS.
_CONTROL_BYTES = bytes(
    byte for byte in range(1, 256) if (byte < 0x20 or 0x7F <= byte < 0xA0) and byte not in TEXT_CONTROLS
)
_CONTROL = re.compile(b"[" + b"".join(b"\\x%02x" % byte for byte in _CONTROL_BYTES) + b"]")


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


def binary_reason(data: bytes) -> str | None:
    """Why `data` is not a blob of text strings (None when it reads as one)."""
    from .sprite.model import is_sprite

    if is_sprite(data):
        return "a Gameloft sprite (BSPRITE), not text: `gamepak sprite` reads it"
    extension = content_extension(data[:CONTENT_PROBE], complete=len(data) <= CONTENT_PROBE)
    if extension not in (".txt", ".bin"):
        return f"{extension[1:].upper()} data, not text"
    if not data:
        return "empty"
    # Counted and found by C loops (a translate, a regex): a Python loop over the bytes was a
    # fifth of the catalog's CPU on J2ME packs.
    control_count = len(data) - len(data.translate(None, _CONTROL_BYTES))
    head_controls = [match.start() for match in itertools.islice(_CONTROL.finditer(data, 0, HEAD_SIZE), 2)]
    if len(head_controls) > 1:
        # A table of counts and offsets in front of the strings (a pack's header, an unknown
        # offset table): its small numbers are control characters.
        return (
            f"binary data: it starts with control characters (0x{data[head_controls[0]]:02x} at byte "
            f"{head_controls[0]}, 0x{data[head_controls[1]]:02x} at byte {head_controls[1]}): a table in front of "
            "the strings?"
        )
    if control_count > CONTROL_SHARE * len(data):
        found = _CONTROL.search(data)
        first = found.start() if found is not None else 0  # always found: control_count > 0
        return (
            f"binary data: {control_count} of its {len(data)} bytes are control characters "
            f"(the first, 0x{data[first]:02x}, at byte {first})"
        )
    strings = data.count(0)
    if strings <= 4:
        return None
    empty = data[:-1].split(b"\0").count(b"")
    if empty * 2 > strings and not _wordy(data):
        # Zero-filled binary tables split into empty pieces; a language file with many unused
        # (empty) strings, such as Diamond Rush's lang_IGA.f, has words in the others.
        return f"binary data: {empty} of its {strings} NUL-separated pieces are empty"
    return None


def _wordy(data: bytes) -> bool:
    """Whether most non-empty NUL-separated pieces of `data` hold a word (three letters in a row)."""
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
        offsets = [base + start for start in terminated_offsets(raw_strings)]
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
        starts = terminated_offsets(raw_strings)
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
    starts = terminated_offsets(raw_strings)
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
                return cls("records", record_texts(records[1]), data, records=records)
            if kind == "records":
                no_records = (
                    "no record table fits: a count byte, one int16 offset per record, then records of "
                    "text runs and icons"
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
                        "(a text run holds letters, tabs and line breaks only)"
                    )
            return rebuild_records(layout, records, raw_strings)
        return build_string_blob(raw_strings)
