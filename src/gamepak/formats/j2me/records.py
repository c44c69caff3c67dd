"""Text records behind a count byte and int16 offsets: the shape of Diamond Rush's tutorial tips
(`tipst.f`, one member of a `j2me-table`; `tips.f` holds the sprites they show).

| offset       | size        | field                                                          |
|--------------|-------------|----------------------------------------------------------------|
| 0            | 1           | count N (uint8): the number of records                         |
| 1            | 2 x N       | start offset of each record (int16, little-endian)             |
| 1 + 2N       | 2 (or none) | optional end offset: where the last record ends                |
| first offset | ...         | the records, back to back, in offset order                     |

Offsets count from the first record (the first is 0; the game's `tipst.f`, which also has the end
offset) or from the start of the data (the first is then 1 + 2N, or 3 + 2N with the end offset).
A record (one tip page) runs to the next record's offset (the last to the end offset, or the end
of the data) and is a count of items followed by the items, each led by its type byte:

| item | bytes                                                                                     |
|------|-------------------------------------------------------------------------------------------|
| text | 0x00, int16 x, int16 y, uint16 length, length bytes of text, uint8 K, K key codes (uint8) |
| icon | 0x01, int16 x, int16 y, uint8 frame (a frame of the tips sprite, `tips.f`)                |

A text run is ISO-8859-1 (0x92 the apostrophe; tabs and line breaks may stand inside); each `@`
in it is drawn as a key, and the K key codes after it say which, one per `@` (measured on the
real file: K equals the number of `@` in every run). gamepak exports each run's text and keeps
every other byte (positions, icons, key codes) as it is: a run is rewritten with its new length,
and a translation must keep the run's number of `@`.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

from ...errors import GamepakError

RECORD_COUNT = struct.Struct("<B")
RECORD_OFFSET = struct.Struct("<h")
ITEM_TEXT = 0x00
ITEM_ICON = 0x01
# Type, x, y and the text's length; then the text, the key count and the keys.
TEXT_HEAD = struct.Struct("<BhhH")
# Type, x, y, frame.
ICON = struct.Struct("<BhhB")
TEXT_LENGTH_MAX = 0xFFFF
INT16_MAX = 0x7FFF
# Bytes that may stand inside a run's text besides printable ISO-8859-1 (tab, line breaks).
INNER_CONTROLS = frozenset((0x09, 0x0A, 0x0D))
# The character the game draws as a key (one key code per occurrence follows the text).
KEY_PLACEHOLDER = ord("@")


def is_text_byte(byte: int) -> bool:
    """Printable ISO-8859-1, or 0x92 (the games' apostrophe)."""
    return 0x20 <= byte < 0x7F or byte >= 0xA0 or byte == 0x92


def _is_run_text(text: bytes) -> bool:
    return all(is_text_byte(byte) or byte in INNER_CONTROLS for byte in text)


@dataclass(frozen=True)
class Record:
    """One record: its text runs, and the bytes around them kept as they are. `codes` has one
    more piece than `texts`: `codes[i]` stands before run i (ending with the run's type, x and
    y; its length field is not kept but written from the text), the last piece after the last
    run."""

    codes: tuple[bytes, ...]
    texts: tuple[bytes, ...]

    def to_bytes(self) -> bytes:
        parts = [self.codes[0]]
        for text, codes in zip(self.texts, self.codes[1:]):
            parts += [struct.pack("<H", len(text)), text, codes]
        return b"".join(parts)

    def with_texts(self, texts: Sequence[bytes], first_index: int = 0) -> Record:
        """This record with its runs' texts replaced; a text past its uint16 length, or with
        another number of `@` than the run had (each `@` has its key code), is refused."""
        for number, (old, new) in enumerate(zip(self.texts, texts)):
            index = first_index + number
            if len(new) > TEXT_LENGTH_MAX:
                raise GamepakError(
                    f"string {index}: {len(new)} bytes, a tip's text run holds at most {TEXT_LENGTH_MAX}"
                )
            if new.count(KEY_PLACEHOLDER) != old.count(KEY_PLACEHOLDER):
                raise GamepakError(
                    f"string {index}: {new.count(KEY_PLACEHOLDER)} '@' where the original has "
                    f"{old.count(KEY_PLACEHOLDER)}: each '@' is drawn as a key named after the text, keep their number"
                )
        return Record(self.codes, tuple(texts))


def split_record(data: bytes) -> Record | None:
    """A record's text runs and the codes around them, or None when `data` is not exactly a
    count of text and icon items."""
    if not data:
        return None
    count = data[0]
    position = 1
    codes: list[bytes] = []
    texts: list[bytes] = []
    piece_start = 0
    for _ in range(count):
        if position >= len(data):
            return None
        kind = data[position]
        if kind == ITEM_ICON:
            position += ICON.size
            if position > len(data):
                return None
        elif kind == ITEM_TEXT:
            if position + TEXT_HEAD.size > len(data):
                return None
            _, _, _, length = TEXT_HEAD.unpack_from(data, position)
            text_start = position + TEXT_HEAD.size
            text_end = text_start + length
            if text_end + 1 > len(data):
                return None
            text = data[text_start:text_end]
            keys = data[text_end]
            position = text_end + 1 + keys
            if position > len(data) or not _is_run_text(text):
                return None
            codes.append(data[piece_start : text_start - 2])  # up to the length field
            texts.append(text)
            piece_start = text_end
        else:
            return None
    if position != len(data):
        return None
    codes.append(data[piece_start:])
    return Record(tuple(codes), tuple(texts))


@dataclass(frozen=True)
class RecordTable:
    """The layout of the offsets in front of the records: whether they count from the start of
    the data, and whether an end offset follows them."""

    from_start: bool
    end_offset: bool

    def header_size(self, count: int) -> int:
        return RECORD_COUNT.size + RECORD_OFFSET.size * (count + self.end_offset)

    def build(self, records: Sequence[Record]) -> bytes:
        """The count, the offsets and the records; offsets past int16 are refused."""
        if len(records) > 0xFF:
            raise GamepakError(f"{len(records)} records: the count byte holds at most 255")
        bodies = [record.to_bytes() for record in records]
        base = self.header_size(len(records)) if self.from_start else 0
        offsets = []
        position = base
        for body in bodies:
            offsets.append(position)
            position += len(body)
        if self.end_offset:
            offsets.append(position)
        for number, offset in enumerate(offsets):
            if offset > INT16_MAX:
                what = "the end of the records" if number == len(records) else f"record {number}"
                raise GamepakError(
                    f"{what} would start at byte {offset}: its int16 offset reaches only {INT16_MAX} "
                    "(shorten the strings)"
                )
        header = RECORD_COUNT.pack(len(records)) + b"".join(RECORD_OFFSET.pack(offset) for offset in offsets)
        return header + b"".join(bodies)


def find_records(data: bytes) -> tuple[RecordTable, list[Record]] | None:
    """The offset layout and records of `data`, or None when the shape does not fit exactly:
    every offset in order and inside the data, the first right after the table, every record
    exactly its items, and at least one text run with text."""
    if not data:
        return None
    (count,) = RECORD_COUNT.unpack_from(data, 0)
    if count < 1:
        return None
    # An end offset equal to the data's length is the stronger evidence: tried first.
    for end_offset in (True, False):
        fields = count + end_offset
        header_size = RECORD_COUNT.size + RECORD_OFFSET.size * fields
        if header_size >= len(data):
            continue
        # The first offset is 0 or the table's size: tested before the whole table is read, as
        # the catalog asks this of every member of a J2ME pack (most are no record table).
        (first,) = RECORD_OFFSET.unpack_from(data, RECORD_COUNT.size)
        if first != 0 and first != header_size:
            continue
        offsets = struct.unpack_from(f"<{fields}h", data, RECORD_COUNT.size)
        for from_start in (False, True):
            base = header_size if from_start else 0
            if first != base:
                continue
            starts = [header_size + offset - base for offset in offsets]
            ends = starts[1:] if end_offset else [*starts[1:], len(data)]
            if end_offset and ends[-1] != len(data):
                continue
            if any(end <= start for start, end in zip(starts, ends)) or ends[-1] > len(data):
                continue
            records = [split_record(data[start:end]) for start, end in zip(starts[:count], ends)]
            found = [record for record in records if record is not None]
            if len(found) != count or not any(text for record in found for text in record.texts):
                continue
            return RecordTable(from_start, end_offset), found
    return None


def record_texts(records: Sequence[Record]) -> list[bytes]:
    """Every text run of `records`, in order: the strings a translator sees."""
    return [text for record in records for text in record.texts]


def rebuild_records(layout: RecordTable, records: Sequence[Record], texts: Sequence[bytes]) -> bytes:
    """The record table with the runs' texts (in `record_texts` order) replaced."""
    rebuilt = []
    position = 0
    for record in records:
        count = len(record.texts)
        rebuilt.append(record.with_texts(texts[position : position + count], position))
        position += count
    return layout.build(rebuilt)
