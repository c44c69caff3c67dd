"""Text records behind a count byte and int16 offsets: the shape of Diamond Rush's tips
(`tips.f`, `tipst.f`), where each string is a record with the game's layout codes around it.

| offset                | size        | field                                                     |
|-----------------------|-------------|-----------------------------------------------------------|
| 0                     | 1           | count N (uint8): the number of records                    |
| 1                     | 2 x N       | start offset of each record (int16, little-endian)        |
| 1 + 2N                | 2 (or none) | optional end offset: where the last record ends           |
| first offset          | ...         | the records, back to back, in offset order                |

Offsets count from the start of the data (the first is then 1 + 2N, or 3 + 2N with the end
offset) or from the first record (the first is 0). A record runs to the next record's offset
(the last one to the end offset, or the end of the data):

| part   | bytes                                                                             |
|--------|-----------------------------------------------------------------------------------|
| prefix | layout codes: bytes that are not text (0x00-0x1F, 0x7F-0x9F except 0x92)          |
| text   | ISO-8859-1 text (0x92 the apostrophe), from the first text byte to the last one;  |
|        | line breaks (0x0A, 0x0D) and tabs may stand inside                                |
| suffix | layout codes after the text (a NUL terminator among them, where the game has one) |

The codes' meaning (position, colour, icon) is the game's: gamepak keeps each record's prefix and
suffix byte for byte and only replaces the text between them. A record whose text holds other
codes between its letters is not this shape (it is refused rather than split).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

from ...errors import GamepakError

RECORD_COUNT = struct.Struct("<B")
RECORD_OFFSET = struct.Struct("<h")
INT16_MAX = 0x7FFF
# Bytes that may stand inside a record's text besides printable ISO-8859-1 (tab, line breaks).
INNER_CONTROLS = frozenset((0x09, 0x0A, 0x0D))


def is_text_byte(byte: int) -> bool:
    """Printable ISO-8859-1, or 0x92 (the games' apostrophe)."""
    return 0x20 <= byte < 0x7F or byte >= 0xA0 or byte == 0x92


@dataclass(frozen=True)
class Record:
    """One record: the layout codes before the text, the text's bytes, the codes after it."""

    prefix: bytes
    text: bytes
    suffix: bytes

    def to_bytes(self) -> bytes:
        return self.prefix + self.text + self.suffix


def split_record(data: bytes) -> Record | None:
    """A record's codes and text, or None when codes stand between its letters."""
    first = next((i for i, byte in enumerate(data) if is_text_byte(byte)), None)
    if first is None:
        return Record(data, b"", b"")  # codes only: an empty text
    last = max(i for i, byte in enumerate(data) if is_text_byte(byte))
    text = data[first : last + 1]
    if any(not is_text_byte(byte) and byte not in INNER_CONTROLS for byte in text):
        return None
    return Record(data[:first], text, data[last + 1 :])


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
        base = self.header_size(len(records)) if self.from_start else 0
        offsets = []
        position = base
        for record in records:
            offsets.append(position)
            position += len(record.to_bytes())
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
        return header + b"".join(record.to_bytes() for record in records)


def find_records(data: bytes) -> tuple[RecordTable, list[Record]] | None:
    """The offset layout and records of `data`, or None when the shape does not fit exactly:
    every offset in order and inside the data, the first right after the table, and every
    record a text with layout codes around it (at least one record with text)."""
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
        offsets = [value for (value,) in RECORD_OFFSET.iter_unpack(data[RECORD_COUNT.size : header_size])]
        for from_start in (False, True):
            base = header_size if from_start else 0
            if offsets[0] != base:
                continue
            starts = [header_size + offset - base for offset in offsets]
            ends = starts[1:] if end_offset else [*starts[1:], len(data)]
            if end_offset and ends[-1] != len(data):
                continue
            if any(end <= start for start, end in zip(starts, ends)) or ends[-1] > len(data):
                continue
            records = [split_record(data[start:end]) for start, end in zip(starts[:count], ends)]
            if any(record is None for record in records) or not any(record.text for record in records if record):
                continue
            return RecordTable(from_start, end_offset), [record for record in records if record is not None]
    return None
