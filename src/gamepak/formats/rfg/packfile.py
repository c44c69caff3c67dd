"""Red Faction Guerrilla packfile v3 (`vpp`): `.vpp_pc` and `.str2_pc` — the reader.

The byte layout and its records are in `records`; this module reads it.

Data modes (Flags):
- 0 plain: members in entry order, zero-padded to 2048 between them (none after the last);
  DataSize is the span including that padding; CompressedDataSize fields are 0xFFFFFFFF.
- 1 compressed: each member is its own zlib stream, padded to 2048 on disk. DataOffset is
  unreliable in the wild, so positions are summed from the compressed sizes.
- 2 condensed: members contiguous (optionally aligned), not compressed; not used by the game.
- 3 compressed + condensed: ONE zlib stream over all members. The game sync-flushes after each
  member (each chunk ends `00 00 FF FF`) and never finishes the stream (no final block, no
  Adler-32); an entry's CompressedDataSize is its chunk's length and its DataOffset is the
  position inside the decompressed stream, where members are zero-padded to `align` (16 in
  `.vpp_pc`, 64 in the game's table.vpp_pc, 1 in `.str2_pc`; the padding sits in the preceding
  member's chunk). Other writers' per-member sizes need not add up (see `conventions`), so the
  data is read as one stream through the header's CompressedDataSize and cut at the DataOffsets;
  per-member compressed sizes only bound reads where they agree with the header.

Offsets past 4 GiB (remastered archives) wrap: positions are recomputed from sizes, and
DataOffsets are unwrapped against the running position.
"""

from __future__ import annotations

import bisect
import io
import struct
from _thread import allocate_lock  # what `threading.Lock` is, without importing `threading`
from array import array
from itertools import accumulate, repeat
from operator import add

from ...core.archive import Archive, Entry, NameList, Problem, RawRange, decode_name, encode_name
from ...core.layout import align_up
from ...core.source import Source
from ...core.stored_names import uint32_array
from ...errors import UnsupportedFeatureError
from .inflate import Checkpoints, Inflater, InflateStream, Segment, max_inflated
from .passes import member_data, member_views, streamed_member_data
from .records import (
    BLOCK_ALIGN,
    ENTRY,
    FLAG_COMPRESSED,
    FLAG_CONDENSED,
    HEADER,
    HEADER_BLOCK,
    MAGIC,
    MODE_NAMES,
    NO_SIZE,
    U32,
    VERSION,
)

# `typing` and `collections.abc` cost milliseconds at import (see archive.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence
    from typing import Any, BinaryIO

    from ...core.archive import MemberData, MemberViews

# Members up to this size are opened as an in-memory stream; larger ones decompress on demand.
SMALL_MEMBER = 8 << 20


def sniff(source: Source) -> float:
    """1.0 for the packfile magic with version 3; 0.5 for the magic with another version."""
    head = source.pread(8, 0)
    if len(head) < 8:
        return 0.0
    magic, version = struct.unpack("<II", head)
    if magic != MAGIC:
        return 0.0
    return 1.0 if version == VERSION and source.size >= HEADER.size else 0.5


def check_name(name: str) -> None:
    """Refuse a name a packfile cannot store (FormatLimitError): the writer's rule, here so that
    an editor checks new names without making a writer (the registry row's `name_rule`)."""
    raw = encode_name(name)
    if not raw or b"\0" in raw:
        from ...errors import FormatLimitError

        raise FormatLimitError(f"member name {name!r} is empty or holds a NUL byte")


def _unwrap(value: int, floor: int) -> int:
    """A 32-bit offset made whole again: the smallest multiple of 2^32 added that puts it at
    or past `floor` (the previous member's position)."""
    if value < floor:
        value += -(-(floor - value) // (1 << 32)) << 32
    return value


class Reader(Archive):
    """A Red Faction Guerrilla packfile (v3) opened for reading."""

    format_name = "vpp"
    duplicate_wins = "first"
    case_insensitive = True

    def _load(self) -> None:
        source = self._source
        raw_header = source.read_exact(HEADER.size, 0, "packfile header")
        (
            magic,
            version,
            self.short_name_field,
            self.path_name_field,
            _,
            self.flags,
            _,
            count,
            self.file_size_field,
            self.entry_block_size,
            self.name_block_size,
            self.data_size_field,
            self.compressed_size_field,
            self.runtime,
        ) = HEADER.unpack(raw_header)
        if magic != MAGIC:
            raise self.corrupt(f"not a packfile (magic 0x{magic:08x}, expected 0x{MAGIC:08x})", 0)
        if version != VERSION:
            raise UnsupportedFeatureError(
                f"{self.filename}: packfile version {version}; only version 3 (Red Faction Guerrilla) is supported"
            )
        if self.flags & ~3:
            raise UnsupportedFeatureError(f"{self.filename}: unknown packfile flags 0x{self.flags:x}")
        # Checked against the file before anything of that size is read or allocated.
        if HEADER_BLOCK + ENTRY.size * count > source.size:
            raise self.corrupt(
                f"{count} entries need {ENTRY.size * count} bytes at {HEADER_BLOCK}; the file has {source.size} bytes",
                340,
            )
        self.entries_start = HEADER_BLOCK
        self.names_start = HEADER_BLOCK + align_up(ENTRY.size * count, BLOCK_ALIGN)
        self._count = count
        self._entry_block = source.read_exact(ENTRY.size * count, HEADER_BLOCK, "entry block")
        self._name_block = names = source.read_exact(self.name_block_size, self.names_start, "name block")
        self._entry_fields: array[int] | None = None
        self.data_start = self.names_start + align_up(self.name_block_size, BLOCK_ALIGN)
        # Every name must end inside the name block: checked here, at C speed (a name starting
        # at or before the block's last NUL ends there at the latest); records, names and
        # entries are made when first asked for, so opening and counting stay cheap.
        last_nul = names.rfind(b"\0")
        if count and max(self._name_offsets()) > last_nul:
            for index, name_offset in enumerate(self._name_offsets()):
                if name_offset > last_nul:
                    raise self.corrupt(
                        f"name of entry {index} (at {name_offset} in the name block) has no NUL inside the "
                        f"{len(names)}-byte name block",
                        self.names_start + min(name_offset, len(names)),
                        f"#{index}",
                    )
        self._records: list[tuple[int, ...]] | None = None
        self._raw_names: list[bytes] | None = None
        self._decoded: list[str] | None = None
        self._solid: list[Segment] | None = None
        self._solid_trusted = False
        self._cursor: Inflater | None = None
        self._cursor_lock = allocate_lock()
        self._chunk_starts: list[int] = []
        self._checkpoints: dict[int, Checkpoints] = {}
        # Output bytes inflated so far by this reader (what tests and benchmarks count).
        self.inflated_bytes = 0
        # Whether passes over the members leave checkpoints (`keep_seek_points`).
        self._checkpointed_passes = False
        self._offsets: list[int] = []

    def _field(self, number: int) -> Sequence[int]:
        """One field of every entry record (0 NameOffset, 2 DataOffset, 4 DataSize,
        5 CompressedDataSize), without unpacking the records: a strided slice of the entry
        block read as an array (20,000 records: 0.1 ms, where unpacking them took 6)."""
        if self._entry_fields is None:
            self._entry_fields = uint32_array(self._entry_block)
        return self._entry_fields[number :: ENTRY.size // 4]

    def _name_offsets(self) -> Sequence[int]:
        """Each entry's NameOffset, without unpacking the records."""
        return self._field(0)

    @property
    def records(self) -> list[tuple[int, ...]]:
        """The entry records, unpacked (NameOffset, pad, DataOffset, NameHash, DataSize,
        CompressedDataSize, pad)."""
        if self._records is None:
            self._records = list(ENTRY.iter_unpack(self._entry_block))
        return self._records

    @property
    def raw_names(self) -> list[bytes]:
        """The stored names, in entry order."""
        if self._raw_names is None:
            names = self._name_block
            self._raw_names = [names[start : names.index(b"\0", start)] for start in self._name_offsets()]
        return self._raw_names

    # `Archive` keeps names in `_names`; here they are decoded on first use.
    @property
    def _names(self) -> list[str]:
        if self._decoded is None:
            self._decoded = self._ascii_names()
        if self._decoded is None:
            self._decoded = [decode_name(raw) for raw in self.raw_names]
        return self._decoded

    @_names.setter
    def _names(self, value: list[str]) -> None:
        if value:  # the base class's initial empty list is not an answer
            self._decoded = value

    def _ascii_names(self) -> list[str] | None:
        """The names cut from the name block decoded once, where it is all ASCII (a byte offset
        is then a character offset): half the time of cutting bytes and decoding each. None
        otherwise (names are then decoded one by one, losslessly)."""
        try:
            block = self._name_block.decode("ascii")
        except UnicodeDecodeError:
            return None
        offsets = self._name_offsets()
        # The usual block holds the names one after another, in entry order: then they are
        # the block split at its NULs, each offset checked against where its piece starts
        # (both at C speed: 20,000 names 4.4 -> 2.3 ms). Names shared, reordered or with
        # gaps between them are cut one by one.
        count = self._count
        names = block.split("\0", count)
        if len(names) == count + 1:
            del names[count]  # the padding after the last name
            # Each name starts where the one before it and its NUL end.
            starts = list(accumulate(map(add, map(len, names), repeat(1)), initial=0))
            if starts[:count] == list(offsets):
                return names
        find = block.index
        return [block[start : find("\0", start)] for start in offsets]

    def _name_at(self, index: int) -> str:
        start = self._name_offsets()[index]
        return decode_name(self._name_block[start : self._name_block.index(b"\0", start)])

    def namelist(self) -> NameList:
        """Member names in archive order (duplicates included), decoded as they are used."""
        return NameList(self._count, self._name_at, lambda: self._names)

    def __len__(self) -> int:
        return self._count

    def _build_entries(self) -> list[Entry]:
        entries = self._place_entries()
        self._offsets = [entry.offset for entry in entries]
        return entries

    def _placed(self) -> list[Entry]:
        """The entries (built on first use), not copied."""
        if self._entries is None:
            self._entries = self._build_entries()
        return self._entries

    @property
    def compressed(self) -> bool:
        return bool(self.flags & FLAG_COMPRESSED)

    @property
    def condensed(self) -> bool:
        return bool(self.flags & FLAG_CONDENSED)

    def _place_entries(self) -> list[Entry]:
        """Entries with positions computed from sizes (DataOffset only where the layout needs
        it, unwrapped past 4 GiB)."""
        entries = []
        compressed = self.compressed
        sizes = list(self._field(4))
        stored = list(self._field(5))
        if not self.condensed:
            positions = self._packed_positions(stored if compressed else sizes)
            stored_sizes = stored if compressed else repeat(None)
            return list(map(Entry, self._names, sizes, positions, stored_sizes, range(len(sizes))))
        data_offsets = list(self._field(2))
        # Condensed: DataOffset is the only record of alignment. Only an archive that can
        # exceed 4 GiB can have wrapped offsets; there they are unwrapped against the running
        # position.
        unwrapped = list(data_offsets)
        if sum(sizes) + 4096 * len(sizes) > U32:
            previous = 0
            for index, value in enumerate(data_offsets):
                previous = unwrapped[index] = _unwrap(value, previous)
        chunk = self.data_start
        for index, name in enumerate(self._names):
            if compressed:
                entries.append(Entry(name, sizes[index], unwrapped[index], stored[index], index))
                self._chunk_starts.append(chunk)
                chunk += stored[index]
            else:
                entries.append(Entry(name, sizes[index], self.data_start + unwrapped[index], None, index))
        return entries

    def _packed_positions(self, lengths: Iterable[int]) -> list[int]:
        """Where each member starts in a pack that is not condensed: where the one before ends,
        aligned. The data start is aligned (the header block, and the entry and name blocks
        each rounded up), so that is the start plus the aligned lengths before it: summed at C
        speed (`accumulate` over mapped lengths: no Python step per member, 20,000 in a pack of
        small files: 3.1 -> 1.9 ms)."""
        from operator import and_

        aligned = map(and_, map(add, lengths, repeat(BLOCK_ALIGN - 1)), repeat(-BLOCK_ALIGN))
        positions = list(accumulate(aligned, initial=self.data_start))
        positions.pop()  # where a member after the last would start
        return positions

    def _plain_columns(self) -> tuple[list[str], Sequence[int], Sequence[int]] | None:
        """An uncompressed pack's names, offsets and sizes (where `_place_entries` puts them),
        without an entry per member."""
        if self.compressed:
            return None
        sizes = self._field(4)
        if not self.condensed:
            return self._names, self._packed_positions(sizes), sizes
        if sum(sizes) + 4096 * len(sizes) > U32:
            return None  # DataOffset fields that may wrap past 4 GiB: `_place_entries` unwraps them
        start = self.data_start
        return self._names, [start + offset for offset in self._field(2)], sizes

    # -- the compressed data's streams ------------------------------------------------------
    def solid_stream(self) -> tuple[list[Segment], bool]:
        """Flags 3: the segments of the one stream, and whether the per-member compressed sizes
        are trusted (they add up to the header's size and fit in the file).
        Untrusted, the stream is one segment through the header's CompressedDataSize (or the
        end of the file when that runs past it)."""
        if self._solid is None:
            entries = self._placed()
            stored_total = sum(entry.stored_size or 0 for entry in entries)
            header = self.compressed_size_field
            sums_agree = stored_total == header or (stored_total > U32 and header in (U32, stored_total & U32))
            trusted = bool(entries) and sums_agree and self.data_start + stored_total <= self.size
            data_end = max((entry.offset + entry.size for entry in entries), default=0)
            if trusted:
                segments = []
                for index, current in enumerate(entries):
                    following = entries[index + 1].offset if index + 1 < len(entries) else 0
                    bound = max(current.offset + current.size, following)
                    segments.append(Segment(self._chunk_starts[index], current.stored_size or 0, bound, current))
            else:
                end = self.data_start + header
                if header in (U32, 0) or end > self.size:
                    end = self.size
                first = entries[0] if entries else Entry("", 0, 0)
                segments = [Segment(self.data_start, max(0, end - self.data_start), data_end, first)]
            self._solid, self._solid_trusted = segments, trusted
        return self._solid, self._solid_trusted

    def entry_at(self, position: int, default: Entry) -> Entry:
        """The member whose stretch of the shared stream holds output `position`."""
        entries = self._placed()
        if not self.condensed or not entries:
            return default
        index = max(0, bisect.bisect_right(self._offsets, position) - 1)
        entry = entries[index]
        # Empty members share their offset with the next one: name the one with bytes there.
        while entry.size == 0 and index + 1 < len(entries) and self._offsets[index + 1] == entry.offset:
            index += 1
            entry = entries[index]
        return entry

    def chunk_start(self, entry: Entry) -> int:
        """Where the compressed bytes holding `entry` start in the file."""
        if not self.condensed:
            return entry.offset
        self._placed()
        if self.solid_stream()[1]:
            return self._chunk_starts[entry.index]
        return self.data_start

    def _stream_key(self, entry: Entry) -> int:
        return -1 if self.condensed else entry.index

    def _segments(self, entry: Entry) -> list[Segment]:
        if self.condensed:
            return self.solid_stream()[0]
        return [Segment(entry.offset, entry.stored_size or 0, entry.size, entry)]

    def new_inflater(self, entry: Entry, checkpointed: bool = False) -> Inflater:
        """A fresh decompressor at the start of the stream holding `entry` (leaving checkpoints
        for later seeks when `checkpointed`)."""
        origin = 0 if self.condensed else entry.offset
        checkpoints = self._checkpoints_for(entry) if checkpointed else None
        return Inflater(self, self._segments(entry), origin, checkpoints)

    def _checkpoints_for(self, entry: Entry) -> Checkpoints:
        key = self._stream_key(entry)
        with self._cursor_lock:
            found = self._checkpoints.get(key)
            if found is None:
                found = self._checkpoints[key] = Checkpoints()
            return found

    def inflater_at(self, entry: Entry, target: int, current: Inflater | None = None) -> Inflater:
        """The cheapest decompressor that can reach output position `target` of the stream holding
        `entry`: `current` if it is before the target and no checkpoint is closer, else one
        resumed from the nearest checkpoint, else a fresh one."""
        origin = 0 if self.condensed else entry.offset
        checkpoints = self._checkpoints_for(entry)
        point = checkpoints.before(target - origin)
        current_is_closer = point is None or origin + point.produced <= (current.position if current else -1)
        if current is not None and current.position <= target and current_is_closer:
            return current
        if point is None:
            return self.new_inflater(entry, checkpointed=True)
        return Inflater(self, self._segments(entry), origin, checkpoints, resume=point)

    def check_ratio(self, entry: Entry) -> None:
        """Refuse a member that declares more bytes than its compressed data can hold, before
        anything is inflated or buffered."""
        if self.condensed:
            # The stream's output up to the member's end must come from the compressed bytes up
            # to its chunk's end (the stream's end where chunk sizes are not trusted).
            segments, trusted = self.solid_stream()
            if trusted:
                available = self._chunk_starts[entry.index] + (entry.stored_size or 0) - self.data_start
            else:
                available = sum(segment.length for segment in segments)
            wanted = entry.offset + entry.size
        else:
            available = min(entry.stored_size or 0, max(0, self.size - entry.offset))
            wanted = entry.size
        if wanted > max_inflated(available):
            raise self.corrupt(
                f"member declares {entry.size} bytes, more than its {available} bytes of zlib data can "
                f"hold (zlib inflates at most {max_inflated(available)} bytes from them)",
                self.chunk_start(entry),
                entry.name,
            )

    def _member_data(self, entries: list[Entry]) -> Iterator[tuple[Entry, MemberData]]:
        if not self.compressed:
            for entry in entries:
                self._check_range(entry)
                yield entry, RawRange(entry.offset, entry.size)
            return
        # The fastest inflater for the case (libdeflate on runs of chunks, else streamed).
        yield from member_data(self, entries)

    def _member_views(self, entries: list[Entry]) -> Iterator[tuple[Entry, MemberViews]]:
        if not self.compressed:
            return self._member_data(entries)
        return member_views(self, entries)

    def _streamed_member_data(self, entries: list[Entry]) -> Iterator[tuple[Entry, MemberData]]:
        """`_member_data` through the streaming inflater only, every chunk checked against its
        bound (what `verify` reads)."""
        if not self.compressed:
            yield from self._member_data(entries)
            return
        yield from streamed_member_data(self, entries)

    def _pass_inflater(self, entry: Entry) -> Inflater:
        """The decompressor a pass over the members starts with at `entry`."""
        # Only a shared stream of trusted chunks is read again by a rebuild (the window before
        # the first changed member); separate streams are copied whole, untrusted ones rewritten.
        if not (self._checkpointed_passes and self.condensed and self.solid_stream()[1]):
            return self.new_inflater(entry)
        return self._window_inflater(entry, entry.offset)

    def _window_inflater(self, entry: Entry, target: int) -> Inflater:
        """A decompressor of the shared stream (trusted chunks) that can reach output `target`,
        leaving window checkpoints where chunks start: it keeps isal's speed. It resumes only
        from a window checkpoint, whose window its own later ones continue."""
        checkpoints = self._checkpoints_for(entry)
        point = checkpoints.before(target)
        if point is not None and point.decompressor is not None:
            point = None
        return Inflater(self, self._segments(entry), 0, checkpoints, point, list(self._offsets))

    def keep_seek_points(self) -> None:
        # A rebuild's `plain_range` of the window before the first changed member then resumes
        # from a checkpoint near it instead of decoding the stream from its start.
        self._checkpointed_passes = True

    def _plain_ranges(self) -> bool:
        # Uncompressed packs (flags 0 and 2) keep each member as the plain range
        # (entry.offset, entry.size) of the file: exactly what `_member_data` yields for them, so
        # extraction may copy them directly, after checking every range up front.
        return not self.compressed

    def _raw_range(self, entry: Entry) -> RawRange | None:
        return None if self.compressed else RawRange(entry.offset, entry.size)

    def _open_member(self, entry: Entry) -> BinaryIO:
        if not self.compressed:
            return super()._open_member(entry)
        self.check_ratio(entry)
        if entry.size <= SMALL_MEMBER:
            with self._cursor_lock:
                # Opening members one after another (`ls -r`, sniffing nested packs) continues
                # the previous pass over the shared stream instead of starting over each time.
                inflater, self._cursor = self._cursor, None
            if inflater is None or not self.condensed or inflater.position > entry.offset:
                if self._checkpointed_passes and self.condensed and self.solid_stream()[1]:
                    # Parts will be read again (`keep_seek_points`): the fast pass's window
                    # checkpoints serve those reads.
                    inflater = self._window_inflater(entry, entry.offset)
                else:
                    inflater = self.inflater_at(entry, entry.offset)
            data = b"".join(inflater.read_range(entry))
            with self._cursor_lock:
                self._cursor = inflater
            return io.BytesIO(data)
        return io.BufferedReader(InflateStream(self, entry), 1 << 20)  # type: ignore[return-value]

    def plain_range(self, start: int, end: int) -> bytes:
        """Bytes `start..end` of the decompressed shared stream (flags 3)."""
        assert self.condensed and self.compressed and self._placed()
        entry = self.entry_at(start, self._placed()[0])
        if self.solid_stream()[1]:
            # A rebuild reads the window before a changed member: from the start of the stream
            # unless a checkpoint is near, so with the fastest decompressor.
            inflater = self._window_inflater(entry, start)
        else:
            inflater = self.inflater_at(entry, start)
        probe = Entry(entry.name, end - start, start, None, entry.index)
        return b"".join(inflater.read_range(probe))

    # -- what the header should say ------------------------------------------------------
    def expected_sizes(self) -> dict[str, int]:
        """The header sizes this layout implies, computed as gamepak's writer computes them."""
        entries = self.infolist()
        expected = {
            "entry_block_size": ENTRY.size * len(entries),
            "name_block_size": sum(len(raw) + 1 for raw in self.raw_names),
        }
        if not entries:
            expected.update(data_size=0, compressed_data_size=0 if self.compressed else NO_SIZE)
            return expected
        last = entries[-1]
        if self.flags in (0, 2):
            expected.update(data_size=last.offset + last.size - self.data_start, compressed_data_size=NO_SIZE)
        elif self.flags == 1:
            expected.update(
                data_size=sum(entry.size for entry in entries),
                compressed_data_size=last.offset + (last.stored_size or 0) - self.data_start,
            )
        else:
            expected.update(
                data_size=last.offset + last.size,
                compressed_data_size=sum(entry.stored_size or 0 for entry in entries),
            )
        return expected

    def data_end(self) -> int:
        """Where the data block really ends in the file."""
        entries = self.infolist()
        if not entries:
            return self.data_start
        if self.flags == 3:
            segments, _ = self.solid_stream()
            return segments[-1].start + segments[-1].length
        last = entries[-1]
        return last.offset + ((last.stored_size or 0) if self.compressed else last.size)

    def member_compression(self, entry: Entry) -> str:
        if not self.compressed:
            return "none"
        # Condensed: one zlib stream for the whole pack, so a member cannot be inflated alone.
        return "zlib-stream" if self.condensed else "zlib"

    def header_fields(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "flags": self.flags,
            "mode": MODE_NAMES[self.flags],
            "entry_count": self._count,
            "file_size": self.file_size_field,
            "entry_block_size": self.entry_block_size,
            "name_block_size": self.name_block_size,
            "data_size": self.data_size_field,
            "compressed_data_size": self.compressed_size_field,
            "short_name": decode_name(self.short_name_field.partition(b"\0")[0]),
            "path_name": decode_name(self.path_name_field.partition(b"\0")[0]),
            "runtime_bytes": self.runtime.hex(),
            "entries_at": self.entries_start,
            "names_at": self.names_start,
            "data_at": self.data_start,
            "member_offsets": (
                "positions inside the decompressed data block" if self.flags == 3 else "positions in the file"
            ),
        }

    def _check(self) -> list[Problem]:
        from .check import check_packfile

        return check_packfile(self)

    def layout(self) -> dict[str, Any]:
        from .rebuild import packfile_layout

        return packfile_layout(self)
