"""Gameloft J2ME asset packs (Diamond Rush, Rayman Kart): four layouts, none with a signature.

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

Members have no names: they are listed as `0`, `1`, `2`... (no zero padding) and extracted with
an extension guessed from their content (`3.png`, `0.txt`, `7.bin`). Writers take names whose
part before the first dot is the member index (`0`, `0.png`, `007.bin`) and order members by it.

Detection proves the whole structure consistent (every offset and size in range, ordered where
the layout says so) and rates the fit below 0.9: members that tile the payload exactly beat a
loose fit, and more members proven consistent give more confidence.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ...core.archive import PARSE_ERRORS, Archive, Entry
from ...core.layout import fill_bytes, restore_fill
from ...core.options import whole_number
from ...core.source import Source
from ...core.writer import ArchiveWriter, Output, PendingMember
from ...errors import CorruptArchiveError, FormatLimitError, GamepakError

OFFSETS_HEADER = struct.Struct("<h")
END_OFFSETS_HEADER = struct.Struct("<i")
TABLE_HEADER = struct.Struct("<B")
TABLE_ENTRY = struct.Struct("<ii")
OFFSET = struct.Struct("<i")
SIZE_PREFIX = struct.Struct("<H")
TERMINATOR = struct.Struct("<B")

INT32_MAX = 0x7FFFFFFF
INT16_MAX = 0x7FFF
TABLE_MAX_MEMBERS = 0xFF
SIZED_MAX_MEMBER = 0xFFFF

# Detection reads whole headers (and walks a sized pack's chain); a phone's resource file is
# small, so anything needing more than this is not a plausible J2ME pack.
SNIFF_MAX_HEADER = 1 << 20
SNIFF_MAX_SIZED_MEMBERS = 1 << 16
# Confidence bands: an exact tiling always rates above any loose fit, both below 0.9 so that
# formats with a signature keep their lead.
EXACT_BAND = (0.45, 0.89)
LOOSE_BAND = (0.05, 0.44)
# Bytes read to guess a member's extension.
CONTENT_PROBE = 64 << 10


@dataclass
class Structure:
    """What a layout's header says: where the payload starts and each member's absolute range."""

    payload_start: int
    spans: list[tuple[int, int]]  # (absolute offset, size) per member, in header order
    file_size: int
    details: dict[str, Any] = field(default_factory=dict)
    # Numbers in the header that were checked against the file (detection's evidence).
    evidence: float = 0.0
    # Header bytes in front of each member (a sized pack's uint16), part of an exact tiling.
    member_prefix: int = 0

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


def _looks_like_text(data: bytes) -> bool:
    """ISO-8859-1 text (0x92 included), possibly NUL-terminated strings."""
    if not data or not data.strip(b"\0 \t\r\n"):
        return False
    if data.count(0) * 4 > len(data):
        return False
    # Deleting every allowed byte (in C) leaves nothing in text: a Python loop over 64 KiB took
    # about 1.4 ms a member.
    return not data.translate(None, _TEXT_BYTES)


# Printable ISO-8859-1 (no C0/C1 controls), NUL, tab, newlines, and 0x92 (the games' apostrophe).
_TEXT_BYTES = bytes(
    byte for byte in range(256) if (byte >= 0x20 and not 0x7F <= byte < 0xA0) or byte in (0, 0x09, 0x0A, 0x0D, 0x92)
)


def content_extension(head: bytes, complete: bool) -> str:
    """The file extension that says what a member holds (`.bin` when unknown)."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return ".png"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return ".gif"
    if head.startswith(b"\xff\xd8\xff"):
        return ".jpg"
    if head.startswith(b"MThd"):
        return ".mid"
    if head.startswith(b"RIFF") and head[8:12] == b"WAVE":
        return ".wav"
    if head.startswith(b"OggS"):
        return ".ogg"
    if head.startswith(b"#!AMR"):
        return ".amr"
    if head.startswith(b"ID3"):
        return ".mp3"
    if _looks_like_text(head) and (not complete or b"\0" not in head or head.endswith(b"\0")):
        return ".txt"
    return ".bin"


def member_index(name: str) -> int:
    """The index a member name stands for: the digits before the first dot (`12.png` -> 12)."""
    stem = name.partition(".")[0]
    if "/" in name or "\\" in name or not stem.isascii() or not stem.isdigit():
        raise FormatLimitError(
            f"member name {name!r}: J2ME packs have no names; name members by their index "
            "(0, 1, 2... with any extension, e.g. 0.png)"
        )
    return int(stem)


def order_by_index(members: list[PendingMember]) -> list[PendingMember]:
    """The members sorted by the index in their names; gaps and duplicates are refused."""
    by_index: dict[int, PendingMember] = {}
    for member in members:
        index = member_index(member.name)
        if index in by_index:
            raise FormatLimitError(f"members {by_index[index].name!r} and {member.name!r} both claim index {index}")
        by_index[index] = member
    missing = [index for index in range(len(by_index)) if index not in by_index]
    if missing:
        raise FormatLimitError(
            f"member index {missing[0]} is missing: J2ME members are numbered 0..{len(by_index) - 1} "
            f"without gaps (highest given: {max(by_index)})"
        )
    return [by_index[index] for index in range(len(by_index))]


class _PackReader(Archive):
    """What the four layouts share: parse the header into spans, list members by index."""

    duplicate_wins = "last"
    positional_names = True

    def _parse(self) -> Structure:
        raise NotImplementedError

    def _load(self) -> None:
        self.structure = self._parse()
        self._names = [str(index) for index in range(len(self.structure.spans))]
        self._entries = [
            Entry(str(index), size, offset, None, index) for index, (offset, size) in enumerate(self.structure.spans)
        ]
        self._extensions: dict[int, str] = {}

    def extraction_name(self, entry: Entry) -> str:
        extension = self._extensions.get(entry.index)
        if extension is None:
            head = self._source.pread(min(entry.size, CONTENT_PROBE), entry.offset)
            extension = content_extension(head, complete=entry.size <= CONTENT_PROBE)
            self._extensions[entry.index] = extension
        return entry.name + extension

    def unheld_bytes(self) -> int:
        """Payload bytes after the last member's end that no member covers."""
        structure = self.structure
        end = max([structure.payload_start] + [offset + size for offset, size in structure.spans])
        return max(0, structure.file_size - end)

    def header_fields(self) -> dict[str, Any]:
        structure = self.structure
        return {
            "member_count": len(structure.spans),
            "payload_start": structure.payload_start,
            "payload_size": structure.payload_size,
            "members_tile_payload": structure.tiles_payload(),
        }

    def _relative_offsets(self) -> list[int]:
        return [offset - self.structure.payload_start for offset, _ in self.structure.spans]

    def _exact_common(self) -> dict[str, Any]:
        covered = [(0, self.structure.payload_start)] + list(self.structure.spans)
        return {
            "sizes": [size for _, size in self.structure.spans],
            "fill": fill_bytes(self._source, covered),
            "file_size": self.size,
        }


class _PackWriter(ArchiveWriter):
    """What the four writers share: names to indices, limits, exact rebuilds."""

    stores_names = False
    allows_duplicates = False

    def _check_name(self, name: str) -> None:
        member_index(name)

    def add(self, name: str, data_or_path: Any) -> None:
        """Queue a member (named by its index, e.g. `0` or `0.png`); limits are checked at once."""
        super().add(name, data_or_path)
        member = self.members[-1]
        # A running total keeps adding thousands of members linear.
        total = getattr(self, "_added_size", 0) + member.size
        try:
            self._check_member(member)
            self._check_counts(len(self.members), total)
        except FormatLimitError:
            self.members.pop()  # a refused member is not queued
            self._names_taken.pop(self._name_key(name), None)
            raise
        self._added_size = total

    def _check_member(self, member: PendingMember) -> None:
        """Refuse one member the layout cannot hold."""

    def _check_counts(self, count: int, total: int) -> None:
        """Refuse a member count or a total size the layout cannot hold."""
        if total > INT32_MAX:
            raise FormatLimitError(
                f"the members total {total} bytes, past {INT32_MAX}: offsets in a {self.format_name} pack are int32"
            )

    def _check_limits(self, members: list[PendingMember]) -> None:
        for member in members:
            self._check_member(member)
        self._check_counts(len(members), sum(member.size for member in members))

    def _exact(self, members: list[PendingMember]) -> dict[str, Any] | None:
        """The recorded layout when it applies to these members (same sizes), else None."""
        exact = self.layout
        if exact and exact.get("sizes") == [member.size for member in members]:
            return exact
        return None

    def _finish_exact(self, out: Output, exact: dict[str, Any]) -> None:
        out.flush()
        restore_fill(out, exact.get("fill", []))
        out.truncate(int(exact["file_size"]))

    def _write(self, out: Output, members: list[PendingMember]) -> None:
        ordered = order_by_index(members)
        self._check_limits(ordered)
        exact = self._exact(ordered)
        header, positions = self._plan(ordered, exact)
        out.write(header)
        for member, position in zip(ordered, positions):
            out.seek(position)
            out.write_member(member)
        if exact is not None:
            self._finish_exact(out, exact)

    def _plan(self, members: list[PendingMember], exact: dict[str, Any] | None) -> tuple[bytes, list[int]]:
        """The header bytes and each member's absolute position."""
        raise NotImplementedError


def _contiguous(start: int, members: list[PendingMember]) -> list[int]:
    positions = []
    position = start
    for member in members:
        positions.append(position)
        position += member.size
    return positions


class OffsetsReader(_PackReader):
    """A `j2me-offsets` pack (int16 count, start offsets) opened for reading."""

    format_name = "j2me-offsets"

    def _parse(self) -> Structure:
        return parse_offsets(self._source)

    def header_fields(self) -> dict[str, Any]:
        return {"offset_count": len(self.structure.details["offsets"]), **super().header_fields()}

    def layout(self) -> dict[str, Any]:
        exact = {"offsets": self.structure.details["offsets"], **self._exact_common()}
        return {"options": {}, "exact": exact}


class OffsetsWriter(_PackWriter):
    """Writes a `j2me-offsets` pack: N = files+1 offsets, offset[0] = 0, data contiguous."""

    format_name = "j2me-offsets"
    option_defaults: ClassVar[dict[str, Any]] = {}

    def _check_counts(self, count: int, total: int) -> None:
        if count + 1 > INT16_MAX:
            raise FormatLimitError(
                f"{count} members: a j2me-offsets pack holds at most {INT16_MAX - 1} "
                f"(its int16 count has room for {INT16_MAX} offsets)"
            )
        super()._check_counts(count, total)

    def _plan(self, members: list[PendingMember], exact: dict[str, Any] | None) -> tuple[bytes, list[int]]:
        count = len(members) + 1
        payload_start = OFFSETS_HEADER.size + 4 * count
        recorded = [int(value) for value in exact.get("offsets", [])] if exact is not None else []
        spans = [end - start for start, end in zip(recorded, recorded[1:])]
        if len(recorded) == count and spans == [member.size for member in members] and recorded[0] >= 0:
            offsets = recorded
        else:
            offsets = [position - payload_start for position in _contiguous(payload_start, members)]
            offsets.append(sum(member.size for member in members))
        header = OFFSETS_HEADER.pack(count) + struct.pack(f"<{count}i", *offsets)
        return header, [payload_start + offset for offset in offsets[:-1]]


class EndOffsetsReader(_PackReader):
    """A `j2me-end-offsets` pack (int32 count, end offsets, terminator byte) opened for reading."""

    format_name = "j2me-end-offsets"

    def _parse(self) -> Structure:
        return parse_end_offsets(self._source)

    def header_fields(self) -> dict[str, Any]:
        return {"terminator": self.structure.details["terminator"], **super().header_fields()}

    def layout(self) -> dict[str, Any]:
        terminator = self.structure.details["terminator"]
        exact = {"terminator": terminator, **self._exact_common()}
        return {"options": {"terminator": terminator}, "exact": exact}


class EndOffsetsWriter(_PackWriter):
    """Writes a `j2me-end-offsets` pack; `terminator` is the byte after the offsets (0 by default)."""

    format_name = "j2me-end-offsets"
    option_defaults: ClassVar[dict[str, Any]] = {"terminator": 0}
    option_validators: ClassVar[dict[str, Any]] = {"terminator": whole_number(0, 0xFF, allow_none=True)}

    def _plan(self, members: list[PendingMember], exact: dict[str, Any] | None) -> tuple[bytes, list[int]]:
        terminator = self.options["terminator"]
        if exact is not None and "terminator" in exact:
            terminator = exact["terminator"]
        terminator = 0 if terminator is None else terminator
        if not isinstance(terminator, int) or not 0 <= terminator <= 0xFF:
            raise FormatLimitError(f"terminator {terminator!r} is not a byte value (0..255)")
        count = len(members)
        payload_start = END_OFFSETS_HEADER.size + 4 * count + TERMINATOR.size
        ends = []
        total = 0
        for member in members:
            total += member.size
            ends.append(total)
        header = END_OFFSETS_HEADER.pack(count) + struct.pack(f"<{count}i", *ends)
        header += TERMINATOR.pack(terminator)
        return header, _contiguous(payload_start, members)


class TableReader(_PackReader):
    """A `j2me-table` pack (count byte, offset/size pairs) opened for reading."""

    format_name = "j2me-table"

    def _parse(self) -> Structure:
        return parse_table(self._source)

    def _overlapping(self) -> bool:
        ranges = sorted((offset, offset + size) for offset, size in self.structure.spans if size)
        return any(ranges[i][0] < ranges[i - 1][1] for i in range(1, len(ranges)))

    def layout(self) -> dict[str, Any]:
        exact = {"offsets": self._relative_offsets(), **self._exact_common()}
        if self._overlapping():
            # A rebuild may place overlapping members as recorded only while their bytes agree.
            exact["crc32"] = [zlib.crc32(self.read(entry)) for entry in self.infolist()]
        return {"options": {}, "exact": exact}


class TableWriter(_PackWriter):
    """Writes a `j2me-table` pack: at most 255 members, data contiguous in index order."""

    format_name = "j2me-table"
    option_defaults: ClassVar[dict[str, Any]] = {}

    def _check_counts(self, count: int, total: int) -> None:
        if count > TABLE_MAX_MEMBERS:
            raise FormatLimitError(
                f"{count} members: a j2me-table pack holds at most {TABLE_MAX_MEMBERS} (its count is one byte)"
            )
        super()._check_counts(count, total)

    def _exact(self, members: list[PendingMember]) -> dict[str, Any] | None:
        exact = super()._exact(members)
        if exact is None or len(exact.get("offsets", [])) != len(members):
            return None
        checksums = exact.get("crc32")
        if checksums is not None and checksums != [zlib.crc32(member.read()) for member in members]:
            return None  # edited members that overlap others cannot keep their places
        return exact

    def _plan(self, members: list[PendingMember], exact: dict[str, Any] | None) -> tuple[bytes, list[int]]:
        payload_start = TABLE_HEADER.size + TABLE_ENTRY.size * len(members)
        if exact is not None:
            offsets = [int(value) for value in exact["offsets"]]
        else:
            offsets = [position - payload_start for position in _contiguous(payload_start, members)]
        header = bytearray(TABLE_HEADER.pack(len(members)))
        for member, offset in zip(members, offsets):
            header += TABLE_ENTRY.pack(offset, member.size)
        return bytes(header), [payload_start + offset for offset in offsets]


class SizedReader(_PackReader):
    """A `j2me-sized` pack ({uint16 size, data} to the end of the file) opened for reading."""

    format_name = "j2me-sized"

    def _parse(self) -> Structure:
        return parse_sized(self._source)

    def layout(self) -> dict[str, Any]:
        sizes = [size for _, size in self.structure.spans]
        return {"options": {}, "exact": {"sizes": sizes, "file_size": self.size}}


class SizedWriter(_PackWriter):
    """Writes a `j2me-sized` pack: each member at most 65,535 bytes."""

    format_name = "j2me-sized"
    option_defaults: ClassVar[dict[str, Any]] = {}

    def _check_member(self, member: PendingMember) -> None:
        if member.size > SIZED_MAX_MEMBER:
            raise FormatLimitError(
                f"member {member.name!r} is {member.size} bytes: a j2me-sized member holds at most "
                f"{SIZED_MAX_MEMBER} (its size is a uint16)"
            )

    def _check_counts(self, count: int, total: int) -> None:
        """A sized pack has no header: any number of members, any total size."""

    def _plan(self, members: list[PendingMember], exact: dict[str, Any] | None) -> tuple[bytes, list[int]]:
        return b"", []

    def _write(self, out: Output, members: list[PendingMember]) -> None:
        ordered = order_by_index(members)
        self._check_limits(ordered)
        for member in ordered:
            out.write(SIZE_PREFIX.pack(member.size))
            out.write_member(member)
