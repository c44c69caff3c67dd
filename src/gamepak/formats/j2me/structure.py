"""Gameloft J2ME asset packs (Diamond Rush, Rayman Kart): the five layouts' bytes, parsed and
detected. None has a signature.

This module reads headers only: each `parse_*` turns a layout's header into member spans (or
raises naming the bad position), and each `sniff_*` is that same parse, bounded and rated. One
parser per layout serves both, so detection proves exactly what a reader will list; the
`Archive`/`ArchiveWriter` classes built on it live in `packs`.

All integers are little-endian; every offset is relative to the start of the payload (the first
byte after the header), not to the start of the file.

`j2me-offsets`: start offsets; file i spans offset[i]..offset[i+1] (N-1 files).

| offset | size | field                                                    |
|--------|------|----------------------------------------------------------|
| 0      | 2    | int16 offset count N (the writer emits files+1)          |
| 2      | 4·N  | int32 start offsets, ascending; offset[0] = 0 when written |
| 2+4N   |      | payload                                                  |

`j2me-end-offsets`: end offsets; file i spans end[i-1]..end[i], the first starts at 0.

| offset | size | field                                      |
|--------|------|--------------------------------------------|
| 0      | 4    | int32 file count N                         |
| 4      | 4·N  | int32 end offsets, ascending               |
| 4+4N   | 1    | terminator byte (usually 0; kept on rebuild) |
| 5+4N   |      | payload                                    |

`j2me-table`: the most common layout (every resource of Diamond Rush 1.2.0). Members may sit
anywhere in the payload, in any order, and may overlap.

| offset | size | field                                                 |
|--------|------|-------------------------------------------------------|
| 0      | 1    | unsigned count N (the game reads it with `InputStream.read()`) |
| 1      | 8·N  | N pairs: int32 offset, int32 size                     |
| 1+8N   |      | payload                                               |

`j2me-sized`: no header; {uint16 size, data[size]} repeated to the end of the file.

`j2me-ids`: Diamond Rush's `demoSpr.bin` (the demo player's sprites, `DemoInterpreter`): a count,
then each record's id and size in front of its data; the last record ends at the end of the file.

| offset | size | field                                           |
|--------|------|-------------------------------------------------|
| 0      | 2    | uint16 record count N                           |
| 2      | ...  | N records: uint16 id, uint32 size, data[size]   |

Detection proves the whole structure consistent (every offset and size in range, ordered where
the layout says so) and rates the fit below 0.9: members that tile the payload exactly beat a
loose fit, and more members proven consistent give more confidence.
"""

from __future__ import annotations

import struct

from ...core.archive import PARSE_ERRORS
from ...core.source import Source
from ...errors import CorruptArchiveError, GamepakError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

OFFSETS_HEADER = struct.Struct("<h")
END_OFFSETS_HEADER = struct.Struct("<i")
TABLE_HEADER = struct.Struct("<B")
TABLE_ENTRY = struct.Struct("<ii")
OFFSET = struct.Struct("<i")
SIZE_PREFIX = struct.Struct("<H")
TERMINATOR = struct.Struct("<B")
IDS_HEADER = struct.Struct("<H")
IDS_RECORD = struct.Struct("<HI")

# Detection reads whole headers (and walks a sized pack's chain); a phone's resource file is
# small, so anything needing more than this is not a plausible J2ME pack.
SNIFF_MAX_HEADER = 1 << 20
SNIFF_MAX_SIZED_MEMBERS = 1 << 16
# Confidence bands: an exact tiling always rates above any loose fit, both below 0.9 so that
# formats with a signature keep their lead.
EXACT_BAND = (0.45, 0.89)
LOOSE_BAND = (0.05, 0.44)


class Structure:
    """What a layout's header says: where the payload starts and each member's absolute range.

    `spans`: (absolute offset, size) per member, in header order. `evidence`: numbers in the
    header that were checked against the file (detection's evidence). `member_prefix`: header
    bytes in front of each member (a sized pack's uint16), part of an exact tiling. A plain
    class, not a dataclass: `detect` asks these layouts of every file, and dataclasses (with
    inspect and ast) took longer to import than Python takes to start."""

    __slots__ = ("details", "evidence", "file_size", "member_prefix", "payload_start", "spans")

    def __init__(
        self,
        payload_start: int,
        spans: list[tuple[int, int]],
        file_size: int,
        details: dict[str, Any] | None = None,
        evidence: float = 0.0,
        member_prefix: int = 0,
    ) -> None:
        self.payload_start = payload_start
        self.spans = spans
        self.file_size = file_size
        self.details = {} if details is None else details
        self.evidence = evidence
        self.member_prefix = member_prefix

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Structure):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in Structure.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it replaces

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in Structure.__slots__)
        return f"Structure({fields})"

    @property
    def payload_size(self) -> int:
        return self.file_size - self.payload_start

    def tiles_payload(self) -> bool:
        """True when the members, in header order, cover the payload exactly, end to end."""
        position = self.payload_start
        for offset, size in self.spans:
            position += self.member_prefix
            if offset != position:
                return False
            position += size
        return position == self.file_size


def _fail(source: Source, message: str, offset: int | None) -> CorruptArchiveError:
    return CorruptArchiveError(message, path=source.name, offset=offset)


def _read_int32s(source: Source, count: int, offset: int, what: str) -> list[int]:
    data = source.read_exact(4 * count, offset, what)
    return [value for (value,) in OFFSET.iter_unpack(data)]


def _check_header_fits(source: Source, header_size: int, count_text: str, limit: int | None) -> None:
    if header_size > source.size:
        raise _fail(
            source,
            f"{count_text} needs a {header_size}-byte header, but the file has only {source.size} bytes",
            0,
        )
    if limit is not None and header_size > limit:
        raise _fail(source, f"{count_text} is implausibly large for a J2ME pack", 0)


def parse_offsets(source: Source, header_limit: int | None = None) -> Structure:
    """The structure of a `j2me-offsets` pack, or CorruptArchiveError naming the position."""
    head = source.read_exact(OFFSETS_HEADER.size, 0, "offset count")
    (count,) = OFFSETS_HEADER.unpack(head)
    if count < 1:
        raise _fail(source, f"offset count {count}: a pack holds at least one offset", 0)
    payload_start = OFFSETS_HEADER.size + 4 * count
    _check_header_fits(source, payload_start, f"offset count {count}", header_limit)
    offsets = _read_int32s(source, count, OFFSETS_HEADER.size, f"{count} offsets")
    payload_size = source.size - payload_start
    previous = 0
    for index, value in enumerate(offsets):
        position = OFFSETS_HEADER.size + 4 * index
        if value < 0 or value > payload_size:
            raise _fail(source, f"offset {index} ({value}) lies outside the payload ({payload_size} bytes)", position)
        if value < previous:
            raise _fail(source, f"offset {index} ({value}) is smaller than offset {index - 1} ({previous})", position)
        previous = value
    spans = [(payload_start + offsets[i], offsets[i + 1] - offsets[i]) for i in range(count - 1)]
    return Structure(payload_start, spans, source.size, {"offsets": offsets}, evidence=float(count - 1))


def parse_end_offsets(source: Source, header_limit: int | None = None) -> Structure:
    """The structure of a `j2me-end-offsets` pack, or CorruptArchiveError naming the position."""
    head = source.read_exact(END_OFFSETS_HEADER.size, 0, "file count")
    (count,) = END_OFFSETS_HEADER.unpack(head)
    if count < 0:
        raise _fail(source, f"file count {count} is negative", 0)
    terminator_at = END_OFFSETS_HEADER.size + 4 * count
    payload_start = terminator_at + TERMINATOR.size
    _check_header_fits(source, payload_start, f"file count {count}", header_limit)
    ends = _read_int32s(source, count, END_OFFSETS_HEADER.size, f"{count} end offsets")
    (terminator,) = TERMINATOR.unpack(source.read_exact(1, terminator_at, "terminator byte"))
    payload_size = source.size - payload_start
    spans = []
    previous = 0
    for index, value in enumerate(ends):
        position = END_OFFSETS_HEADER.size + 4 * index
        if value < 0 or value > payload_size:
            raise _fail(
                source, f"end offset {index} ({value}) lies outside the payload ({payload_size} bytes)", position
            )
        if value < previous:
            raise _fail(source, f"end offset {index} ({value}) is smaller than the one before ({previous})", position)
        spans.append((payload_start + previous, value - previous))
        previous = value
    # The usual zero terminator is one more byte that agrees with the layout.
    evidence = float(count) + (0.5 if terminator == 0 and count else 0.0)
    return Structure(payload_start, spans, source.size, {"terminator": terminator}, evidence=evidence)


def parse_table(source: Source, header_limit: int | None = None) -> Structure:
    """The structure of a `j2me-table` pack, or CorruptArchiveError naming the position."""
    head = source.read_exact(TABLE_HEADER.size, 0, "file count")
    (count,) = TABLE_HEADER.unpack(head)
    payload_start = TABLE_HEADER.size + TABLE_ENTRY.size * count
    _check_header_fits(source, payload_start, f"file count {count}", header_limit)
    table = source.read_exact(TABLE_ENTRY.size * count, TABLE_HEADER.size, f"table of {count} entries")
    payload_size = source.size - payload_start
    spans = []
    evidence = 0.0
    for index, (offset, size) in enumerate(TABLE_ENTRY.iter_unpack(table)):
        position = TABLE_HEADER.size + TABLE_ENTRY.size * index
        if offset < 0 or offset > payload_size:
            raise _fail(
                source, f"member {index}: offset {offset} lies outside the payload ({payload_size} bytes)", position
            )
        if size < 0 or offset + size > payload_size:
            raise _fail(
                source,
                f"member {index}: {size} bytes at offset {offset} run past the payload ({payload_size} bytes)",
                position + 4,
            )
        spans.append((payload_start + offset, size))
        # An empty member proves only its offset; a non-empty one, offset and size.
        evidence += 2.0 if size else 1.0
    return Structure(payload_start, spans, source.size, {}, evidence=evidence)


def parse_sized(source: Source, member_limit: int | None = None) -> Structure:
    """The structure of a `j2me-sized` pack, or CorruptArchiveError naming the position."""
    spans: list[tuple[int, int]] = []
    window = b""
    window_start = 0
    position = 0
    evidence = 0.0
    while position < source.size:
        if position + SIZE_PREFIX.size > window_start + len(window):
            window_start = position
            window = source.pread(1 << 20, position)
        if position + SIZE_PREFIX.size > source.size:
            raise _fail(source, f"member {len(spans)}: its size field is cut off by the end of the file", position)
        (size,) = SIZE_PREFIX.unpack_from(window, position - window_start)
        end = position + SIZE_PREFIX.size + size
        if end > source.size:
            raise _fail(
                source,
                f"member {len(spans)}: {size} bytes run past the end of the file ({source.size} bytes)",
                position,
            )
        spans.append((position + SIZE_PREFIX.size, size))
        if member_limit is not None and len(spans) > member_limit:
            raise _fail(source, f"more than {member_limit} members: implausible for a J2ME pack", position)
        # The chain has no header to cross-check: only members with content count as evidence.
        evidence += 1.0 if size else 0.0
        position = end
    return Structure(0, spans, source.size, {}, evidence=evidence, member_prefix=SIZE_PREFIX.size)


def parse_ids(source: Source) -> Structure:
    """The structure of a `j2me-ids` pack, or CorruptArchiveError naming the position. The
    records must end exactly at the end of the file (nothing else says where the data ends)."""
    (count,) = IDS_HEADER.unpack(source.read_exact(IDS_HEADER.size, 0, "record count"))
    # Each record takes at least its 6-byte head: a count the file cannot hold is refused
    # before anything is read or kept.
    if IDS_HEADER.size + IDS_RECORD.size * count > source.size:
        raise _fail(
            source,
            f"record count {count} needs at least {IDS_RECORD.size * count} bytes of record heads, "
            f"the file has {source.size}",
            0,
        )
    spans: list[tuple[int, int]] = []
    ids: list[int] = []
    position = IDS_HEADER.size
    for index in range(count):
        record_id, size = IDS_RECORD.unpack(source.read_exact(IDS_RECORD.size, position, f"record {index}'s head"))
        start = position + IDS_RECORD.size
        if start + size > source.size:
            raise _fail(
                source, f"record {index} (id {record_id}): {size} bytes run past the end of the file", position + 2
            )
        spans.append((start, size))
        ids.append(record_id)
        position = start + size
    if position != source.size:
        raise _fail(source, f"{source.size - position} bytes after the last of {count} records", position)
    # Each record's size is proven by the next head (or the file's end); its id proves nothing.
    return Structure(
        IDS_HEADER.size,
        spans,
        source.size,
        {"ids": ids},
        evidence=float(sum(1 for _, size in spans if size)),
        member_prefix=IDS_RECORD.size,
    )


def _confidence(structure: Structure) -> float:
    # A pack with no members (or only empty sized ones) "tiles" its payload trivially: that
    # proves nothing, so it rates as loose.
    exact = structure.evidence > 0 and structure.tiles_payload()
    low, high = EXACT_BAND if exact else LOOSE_BAND
    # Rises with the evidence and stays inside the band; equal evidence gives equal confidence.
    return round(low + (high - low) * (1.0 - 1.0 / (1.0 + structure.evidence / 3.0)), 3)


def _sniffer(parse: Callable[[Source], Structure], minimum: int) -> Callable[[Source], float]:
    def sniff(source: Source) -> float:
        if source.size < minimum:
            return 0.0
        try:
            structure = parse(source)
        except (GamepakError, *PARSE_ERRORS):
            return 0.0
        return _confidence(structure)

    return sniff


def sniff_offsets(source: Source) -> float:
    """A confidence in (0, 0.9) when the file is a consistent `j2me-offsets` pack, else 0."""
    return _sniffer(lambda s: parse_offsets(s, SNIFF_MAX_HEADER), 6)(source)


def sniff_end_offsets(source: Source) -> float:
    """A confidence in (0, 0.9) when the file is a consistent `j2me-end-offsets` pack, else 0."""
    return _sniffer(lambda s: parse_end_offsets(s, SNIFF_MAX_HEADER), 5)(source)


def sniff_table(source: Source) -> float:
    """A confidence in (0, 0.9) when the file is a consistent `j2me-table` pack, else 0."""
    return _sniffer(lambda s: parse_table(s, SNIFF_MAX_HEADER), 2)(source)


def sniff_ids(source: Source) -> float:
    """A confidence in (0, 0.9) when the file is a consistent `j2me-ids` pack, else 0."""
    return _sniffer(parse_ids, IDS_HEADER.size)(source)


# How much less a sized fit rates than an equally good table fit of the same bytes.
TABLE_WINS_TIES = 0.01


def sniff_sized(source: Source) -> float:
    """A confidence in (0, 0.9) when the file is a consistent `j2me-sized` pack, else 0.

    A file that fits the table layout exactly as well (a one-member table whose data ends in
    two zero bytes reads as a chain of sizes too: Diamond Rush's `b1.f`, `demoui.f`,
    `lang_IGA.f`) rates a little lower: the game loads every `.f` file through one loader that
    reads a count byte and (offset, size) pairs (`cGame.loadPackedFile`), the table layout."""
    confidence = _sniffer(lambda s: parse_sized(s, SNIFF_MAX_SIZED_MEMBERS), 2)(source)
    if confidence > 0 and sniff_table(source) >= confidence:
        return round(confidence - TABLE_WINS_TIES, 3)
    return confidence
