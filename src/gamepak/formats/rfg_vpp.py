"""Red Faction Guerrilla packfile v3 (`vpp`): `.vpp_pc` and `.str2_pc`.

All integers are little-endian u32.

| offset | size  | field                                                               |
|--------|-------|---------------------------------------------------------------------|
| 0      | 4     | magic 0x51890ACE                                                    |
| 4      | 4     | version, 3                                                          |
| 8      | 65    | ShortName (NUL-padded; the game ignores it)                         |
| 73     | 256   | PathName (NUL-padded; other packers write a message here)           |
| 329    | 3     | padding                                                             |
| 332    | 4     | Flags: bit 0 compressed, bit 1 condensed                            |
| 336    | 4     | padding                                                             |
| 340    | 4     | NumberOfEntries N                                                   |
| 344    | 4     | FileSize (0xFFFFFFFF when the file exceeds 4 GiB)                   |
| 348    | 4     | EntryBlockSize = 28·N (without padding)                             |
| 352    | 4     | NameBlockSize = Σ(len(name)+1) (without padding)                    |
| 356    | 4     | DataSize                                                            |
| 360    | 4     | CompressedDataSize (0xFFFFFFFF when not compressed)                 |
| 364    | 12    | runtime junk in game files (written as zeros)                       |
| 376    |       | zero padding to 2048                                                |
| 2048   | 28·N  | entries: NameOffset, pad, DataOffset, NameHash, DataSize, CompressedDataSize, pad |
| E      |       | names, NUL-terminated; E = 2048 + align(28·N, 2048)                 |
| D      |       | data; D = E + align(NameBlockSize, 2048)                            |

NameHash is not CRC32: `h = 0; for each byte c of name.lower(): h = rotl32(h, 6) ^ c`.
Names are looked up ignoring case.

Data modes (Flags):
- 0 plain: members in entry order, zero-padded to 2048 between them (none after the last);
  DataSize is the span including that padding; CompressedDataSize fields are 0xFFFFFFFF.
- 1 compressed: each member is its own zlib stream, padded to 2048 on disk. DataOffset is
  unreliable in the wild, so positions are summed from the compressed sizes. This writer stores
  the compressed position in DataOffset, DataSize = Σ sizes and CompressedDataSize = the span on
  disk, and finishes each member's stream.
- 2 condensed: members contiguous (optionally aligned), not compressed; not used by the game.
- 3 compressed + condensed: ONE zlib stream over all members, a sync flush after each member
  (each chunk ends `00 00 FF FF`), never finished (no final block, no Adler-32). An entry's
  CompressedDataSize is its chunk's length and its DataOffset is the position inside the
  decompressed stream, where members are zero-padded to `align` (16 in `.vpp_pc`, 64 in the
  game's table.vpp_pc, 1 in `.str2_pc`; the padding sits in the preceding member's chunk).

Offsets past 4 GiB (remastered archives) wrap: positions are recomputed from sizes, and
DataOffsets are unwrapped against the running position.

Defaults of the writer follow the game: `.str2_pc` → flags 3, zlib level 9, align 1;
`.vpp_pc` → flags 0 (plain, 2048 padding); a `.vpp_pc` written with flags 3 gets align 16.
"""

from __future__ import annotations

import hashlib
import io
import struct
import threading
import zlib
from collections.abc import Iterator
from typing import Any, BinaryIO, ClassVar

from ..archive import (
    Archive,
    ArchiveWriter,
    Entry,
    MemberData,
    Output,
    PendingMember,
    RawRange,
    decode_name,
    encode_name,
)
from ..errors import CorruptArchiveError, FormatLimitError, UnsupportedFeatureError
from ..layout import align_up, fill_bytes, restore_fill
from ..source import SeekableStream, Source

MAGIC = 0x51890ACE
VERSION = 3
# magic, version, ShortName, PathName, pad, Flags, pad, N, FileSize, EntryBlockSize,
# NameBlockSize, DataSize, CompressedDataSize, runtime bytes
HEADER = struct.Struct("<II65s256s3sI4sIIIIII12s")
# NameOffset, pad, DataOffset, NameHash, DataSize, CompressedDataSize, pad
ENTRY = struct.Struct("<IIIIIII")
HEADER_BLOCK = 2048
BLOCK_ALIGN = 2048
NO_SIZE = 0xFFFFFFFF
U32 = 0xFFFFFFFF
RUNTIME_OFFSET = 364
FLAG_COMPRESSED = 1
FLAG_CONDENSED = 2
MODE_NAMES = {0: "plain", 1: "compressed", 2: "condensed", 3: "compressed+condensed"}

# Decompression works in bounded steps: compressed input read per call, output per call.
_INPUT_STEP = 256 << 10
_OUTPUT_STEP = 1 << 20
# Members up to this size are opened as an in-memory stream; larger ones decompress on demand.
SMALL_MEMBER = 8 << 20

# sha256 of classic zlib's output for `_probe_input()` (level → digest), compressed with
# compressobj(level, DEFLATED, 15, 8, 0) and one sync flush. zlib-ng and others differ.
_CLASSIC_ZLIB_DIGESTS = {
    1: "34a765ddb1851f35fcb92560a118b4cc6d2c11b078b0070b85e8bd5dd6e02f18",
    6: "cfd3e4eb307009d105e84b3d419412c49c78763b1f211f5662e5b6a791e70643",
    9: "5ef7177b99759a5b319f94734af32e820b8c84e2bc3fc0afea317986deecbb47",
}
_classic_zlib: bool | None = None


def name_hash(name: bytes) -> int:
    """The packfile's NameHash of a stored name: rotate left 6, xor each lower-cased byte."""
    value = 0
    for byte in name.lower():
        value = (((value << 6) | (value >> 26)) & U32) ^ byte
    return value


def _probe_input() -> bytes:
    return b"".join(b"%d:%s;" % (index, b"rfg" * (index % 7)) for index in range(300))


def classic_zlib() -> bool:
    """Whether the linked zlib reproduces classic zlib's bytes (checked once)."""
    global _classic_zlib
    if _classic_zlib is None:
        data = _probe_input()
        matches = "ng" not in zlib.ZLIB_RUNTIME_VERSION.lower()
        for level, digest in _CLASSIC_ZLIB_DIGESTS.items():
            compressor = zlib.compressobj(level, zlib.DEFLATED, 15, 8, 0)
            out = compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH)
            matches = matches and hashlib.sha256(out).hexdigest() == digest
        _classic_zlib = matches
    return _classic_zlib


def _decompressor_module() -> tuple[Any, tuple[type[BaseException], ...]]:
    """isal's zlib (about twice as fast; decompression output is the same) or the stdlib's."""
    try:
        from isal import isal_zlib
    except ImportError:
        return zlib, (zlib.error,)
    return isal_zlib, (zlib.error, isal_zlib.error)


def sniff(source: Source) -> float:
    """1.0 for the packfile magic with version 3; 0.5 for the magic with another version."""
    head = source.pread(8, 0)
    if len(head) < 8:
        return 0.0
    magic, version = struct.unpack("<II", head)
    if magic != MAGIC:
        return 0.0
    return 1.0 if version == VERSION and source.size >= HEADER.size else 0.5


def _unwrap(value: int, floor: int) -> int:
    """A 32-bit offset made whole again: the smallest multiple of 2^32 added that puts it at
    or past `floor` (the previous member's position)."""
    if value < floor:
        value += -(-(floor - value) // (1 << 32)) << 32
    return value


class _Segment:
    """One member's compressed chunk: where it is, and how far the output may reach by its end."""

    __slots__ = ("bound", "entry", "length", "start")

    def __init__(self, start: int, length: int, bound: int, entry: Entry) -> None:
        self.start = start
        self.length = length
        self.bound = bound
        self.entry = entry


class _Inflater:
    """Forward-only decompression of one zlib stream stored as consecutive chunks, producing
    bounded pieces of output. No output is ever allowed past a chunk's bound, so a member that
    inflates beyond its declared size (a decompression bomb) stops at once."""

    def __init__(self, reader: Reader, segments: list[_Segment], origin: int = 0) -> None:
        self._reader = reader
        self._segments = segments
        self._module, self._errors = _decompressor_module()
        self._inflate = self._module.decompressobj()
        self._index = 0
        self._consumed = 0  # compressed bytes of the current segment already read
        self._produced = 0  # output bytes produced so far
        self._buffer = b""
        self._buffer_position = 0  # how much of `_buffer` was handed out
        # Position of the next byte to hand out, in the member offsets' terms (`origin` is where
        # the stream's output starts: 0 for the shared stream, the member's offset otherwise).
        self.position = origin

    def _produce(self) -> bool:
        """Inflate the next piece into the buffer; False when no more output can come."""
        while True:
            tail = self._inflate.unconsumed_tail
            if tail:
                data = tail
            else:
                if self._inflate.eof:
                    return False
                while self._index < len(self._segments) and self._consumed >= self._segments[self._index].length:
                    self._index += 1
                    self._consumed = 0
                if self._index >= len(self._segments):
                    return False
                segment = self._segments[self._index]
                want = min(_INPUT_STEP, segment.length - self._consumed)
                where = segment.start + self._consumed
                data = self._reader._source.pread(want, where)
                if len(data) != want:
                    raise self._reader.corrupt(
                        f"compressed data is truncated: {segment.length} bytes declared, the file "
                        f"ends after {self._consumed + len(data)}",
                        segment.start,
                        segment.entry.name,
                    )
                self._consumed += want
            segment = self._segments[min(self._index, len(self._segments) - 1)]
            room = segment.bound - self._produced
            try:
                # One byte more than the bound allows, so that overflow is seen, never stored.
                out = self._inflate.decompress(data, max(1, min(_OUTPUT_STEP, room + 1)))
            except self._errors as exc:
                raise self._reader.corrupt(f"bad zlib data: {exc}", segment.start, segment.entry.name) from exc
            if self._produced + len(out) > segment.bound:
                raise self._reader.corrupt(
                    f"member decompresses to more than its declared size ({segment.entry.size} bytes)",
                    segment.start,
                    segment.entry.name,
                )
            self._produced += len(out)
            if out:
                self._buffer = out
                self._buffer_position = 0
                return True

    def _truncated(self, entry: Entry) -> CorruptArchiveError:
        got = max(0, self.position - entry.offset)
        return self._reader.corrupt(
            f"zlib data is truncated: member ends after {got} of its {entry.size} bytes",
            self._reader._chunk_start(entry),
            entry.name,
        )

    def skip_to(self, target: int, entry: Entry) -> None:
        """Discard output up to `target`."""
        while self.position < target:
            available = len(self._buffer) - self._buffer_position
            if available == 0:
                if not self._produce():
                    raise self._truncated(entry)
                continue
            step = min(available, target - self.position)
            self._buffer_position += step
            self.position += step

    def take(self, limit: int, entry: Entry) -> bytes:
        """Up to `limit` (> 0) bytes of output from the current position."""
        while len(self._buffer) == self._buffer_position:
            if not self._produce():
                raise self._truncated(entry)
        buffer, start = self._buffer, self._buffer_position
        if start == 0 and len(buffer) <= limit:
            piece = buffer  # the common case in big members: no copy
        else:
            piece = buffer[start : start + limit]
        self._buffer_position += len(piece)
        self.position += len(piece)
        return piece

    def read_range(self, entry: Entry) -> Iterator[bytes]:
        """The member's bytes, in pieces."""
        self.skip_to(entry.offset, entry)
        remaining = entry.size
        while remaining:
            piece = self.take(remaining, entry)
            remaining -= len(piece)
            yield piece


class _InflateStream(SeekableStream):
    """A seekable stream over a compressed member: decompresses forward, restarts on a
    backward seek."""

    def __init__(self, reader: Reader, entry: Entry) -> None:
        super().__init__(entry.size, f"{reader.filename}/{entry.name}")
        self._reader = reader
        self._entry = entry
        self._inflater: _Inflater | None = None

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self.closed:
            raise ValueError("I/O operation on closed stream")
        view = memoryview(buffer).cast("B")
        limit = min(len(view), self._entry.size - self._position)
        if limit <= 0:
            return 0
        target = self._entry.offset + self._position
        if self._inflater is None or self._inflater.position > target:
            self._inflater = self._reader._inflater_for(self._entry)
        self._inflater.skip_to(target, self._entry)
        piece = self._inflater.take(limit, self._entry)
        view[: len(piece)] = piece
        self._position += len(piece)
        return len(piece)

    def readall(self) -> bytes:
        chunks = []
        while data := self.read(_OUTPUT_STEP):
            chunks.append(data)
        return b"".join(chunks)


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
        self.records = list(ENTRY.iter_unpack(source.read_exact(ENTRY.size * count, HEADER_BLOCK, "entry block")))
        names = source.read_exact(self.name_block_size, self.names_start, "name block")
        self.data_start = self.names_start + align_up(self.name_block_size, BLOCK_ALIGN)
        self.raw_names: list[bytes] = []
        for index, record in enumerate(self.records):
            name_offset = record[0]
            end = names.find(b"\0", name_offset) if name_offset < len(names) else -1
            if end < 0:
                raise self.corrupt(
                    f"name of entry {index} (at {name_offset} in the name block) has no NUL inside the "
                    f"{len(names)}-byte name block",
                    self.names_start + min(name_offset, len(names)),
                    f"#{index}",
                )
            self.raw_names.append(names[name_offset:end])
        self._names = [decode_name(raw) for raw in self.raw_names]
        self._all_segments: list[_Segment] | None = None
        self._cursor: _Inflater | None = None
        self._cursor_lock = threading.Lock()
        self._chunk_starts: list[int] = []
        self._entries = self._place_entries()

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
        sizes = [record[4] for record in self.records]
        stored = [record[5] for record in self.records]
        data_offsets = [record[2] for record in self.records]
        if not self.condensed:
            position = self.data_start
            for index, name in enumerate(self._names):
                length = stored[index] if self.compressed else sizes[index]
                entries.append(Entry(name, sizes[index], position, stored[index] if self.compressed else None, index))
                position = align_up(position + length, BLOCK_ALIGN)
            return entries
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
            if self.compressed:
                entries.append(Entry(name, sizes[index], unwrapped[index], stored[index], index))
                self._chunk_starts.append(chunk)
                chunk += stored[index]
            else:
                entries.append(Entry(name, sizes[index], self.data_start + unwrapped[index], None, index))
        return entries

    # -- compressed data ------------------------------------------------------------------
    def _chunk_start(self, entry: Entry) -> int:
        if self.condensed:
            return self._chunk_starts[entry.index]
        return entry.offset

    def _segments_from(self, entry: Entry) -> list[_Segment]:
        """The compressed chunks to feed to reach `entry`, each with its output bound."""
        assert self._entries is not None
        if not self.condensed:
            return [_Segment(entry.offset, entry.stored_size or 0, entry.size, entry)]
        segments = []
        entries = self._entries
        for index, current in enumerate(entries):
            following = entries[index + 1].offset if index + 1 < len(entries) else 0
            bound = max(current.offset + current.size, following)
            segments.append(_Segment(self._chunk_starts[index], current.stored_size or 0, bound, current))
        return segments

    def _inflater_for(self, entry: Entry) -> _Inflater:
        """A fresh decompressor positioned at the start of the stream holding `entry`."""
        if self.condensed:
            if self._all_segments is None:
                self._all_segments = self._segments_from(entry)
            return _Inflater(self, self._all_segments)
        return _Inflater(self, self._segments_from(entry), entry.offset)

    def _member_data(self, entries: list[Entry]) -> Iterator[tuple[Entry, MemberData]]:
        if not self.compressed:
            for entry in entries:
                self._check_range(entry)
                yield entry, RawRange(entry.offset, entry.size)
            return
        # One decompressor pass over the shared stream while members come in stream order;
        # a member behind the current position (or a separate stream) starts a new pass.
        inflater: _Inflater | None = None
        for entry in entries:
            if inflater is None or not self.condensed or inflater.position > entry.offset:
                inflater = self._inflater_for(entry)
            yield entry, inflater.read_range(entry)

    def _open_member(self, entry: Entry) -> BinaryIO:
        if not self.compressed:
            return super()._open_member(entry)
        if entry.size <= SMALL_MEMBER:
            with self._cursor_lock:
                # Opening members one after another (`ls -r`, sniffing nested packs) continues
                # the previous pass over the shared stream instead of starting over each time.
                inflater = self._cursor
                if inflater is None or not self.condensed or inflater.position > entry.offset:
                    inflater = self._inflater_for(entry)
                self._cursor = None
                data = b"".join(inflater.read_range(entry))
                self._cursor = inflater
            return io.BytesIO(data)
        return io.BufferedReader(_InflateStream(self, entry), _OUTPUT_STEP)  # type: ignore[return-value]

    # -- what the header should say ------------------------------------------------------
    def _expected_sizes(self) -> dict[str, int]:
        """The header sizes this layout implies, computed as the writer computes them."""
        entries = self.infolist()
        expected = {
            "entry_block_size": ENTRY.size * len(entries),
            "name_block_size": sum(len(raw) + 1 for raw in self.raw_names),
        }
        if not entries:
            expected.update(data_size=0, compressed_data_size=0 if self.compressed else NO_SIZE)
        elif self.flags == 0:
            last = entries[-1]
            expected.update(data_size=last.offset + last.size - self.data_start, compressed_data_size=NO_SIZE)
        elif self.flags == 1:
            last = entries[-1]
            expected.update(
                data_size=sum(entry.size for entry in entries),
                compressed_data_size=last.offset + (last.stored_size or 0) - self.data_start,
            )
        elif self.flags == 2:
            last = entries[-1]
            expected.update(data_size=last.offset + last.size - self.data_start, compressed_data_size=NO_SIZE)
        else:
            last = entries[-1]
            expected.update(
                data_size=last.offset + last.size,
                compressed_data_size=sum(entry.stored_size or 0 for entry in entries),
            )
        return expected

    def _data_end(self) -> int:
        """Where the data block really ends in the file."""
        entries = self.infolist()
        if not entries:
            return self.data_start
        if self.flags == 3:
            return self.data_start + sum(entry.stored_size or 0 for entry in entries)
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
            "entry_count": len(self._names),
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

    def _verify(self) -> list[str]:
        problems: list[str] = []
        for index, (record, raw) in enumerate(zip(self.records, self.raw_names)):
            expected_hash = name_hash(raw)
            if record[3] != expected_hash:
                problems.append(
                    f"member {self._names[index]!r}: NameHash 0x{record[3]:08x}, expected 0x{expected_hash:08x}"
                )
        fields = {
            "entry_block_size": self.entry_block_size,
            "name_block_size": self.name_block_size,
            "data_size": self.data_size_field,
            "compressed_data_size": self.compressed_size_field,
        }
        expected = self._expected_sizes()
        for field, value in fields.items():
            want = expected[field]
            fits = value == want or (want > U32 and value in (U32, want & U32))
            if not fits:
                problems.append(f"header {field} is {value}, the layout says {want}")
        file_size_ok = self.file_size_field == self.size or (
            self.size > U32 and self.file_size_field in (U32, self.size & U32)
        )
        if not file_size_ok:
            problems.append(f"header file_size is {self.file_size_field}, the file has {self.size} bytes")
        entries = self.infolist()
        end = self._data_end()
        if end > self.size:
            problems.append(f"the data block ends at {end}, past the end of the file ({self.size} bytes)")
        for entry, record in zip(entries, self.records):
            data_offset, stored = record[2], record[5]
            if self.flags == 3:
                want_offset = entry.offset
            elif self.flags == 1:
                want_offset = None  # unreliable in the wild; positions come from the sizes
            else:
                want_offset = entry.offset - self.data_start
            if want_offset is not None and data_offset != want_offset & U32:
                problems.append(f"member {entry.name!r}: DataOffset {data_offset}, the layout says {want_offset}")
            if not self.compressed and stored != NO_SIZE:
                problems.append(
                    f"member {entry.name!r}: CompressedDataSize {stored} in an uncompressed pack (expected 0xFFFFFFFF)"
                )
        if self.flags == 3:
            previous_end = 0
            for entry in entries:
                if entry.offset < previous_end:
                    problems.append(f"member {entry.name!r}: DataOffset {entry.offset} overlaps the previous member")
                previous_end = entry.offset + entry.size
        if self.compressed:
            # Each member must decompress to exactly its declared size.
            for _entry, chunks in self._member_data(entries):
                try:
                    for _ in chunks:  # type: ignore[union-attr]
                        pass
                except CorruptArchiveError as exc:
                    problems.append(str(exc))
                    if self.condensed:
                        break  # the shared stream cannot be followed past a broken chunk
        else:
            for entry in entries:
                if entry.offset + entry.size > self.size:
                    problems.append(
                        f"member {entry.name!r}: data at {entry.offset}..{entry.offset + entry.size} lies "
                        f"outside the file ({self.size} bytes)"
                    )
        return problems

    # -- manifests ------------------------------------------------------------------------
    def _detect_alignment(self) -> int | None:
        """The alignment of members inside the condensed data, or None if irregular."""
        entries = self.infolist()
        for alignment in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096):
            position = 0
            fits = True
            for entry in entries:
                position = align_up(position, alignment)
                relative = entry.offset if self.flags == 3 else entry.offset - self.data_start
                if relative != position:
                    fits = False
                    break
                position += entry.size
            if fits:
                return alignment
        return None

    def _probe_pieces(self, limit: int) -> list[tuple[bytes, bytes, bool, bool]]:
        """(plain, compressed, complete, starts a new stream) per chunk, from the start, until
        about `limit` plain bytes: what `_detect_zlib` recompresses."""
        pieces: list[tuple[bytes, bytes, bool, bool]] = []
        entries = self.infolist()
        total = 0
        inflater: _Inflater | None = None
        for index, entry in enumerate(entries):
            if total >= limit:
                break
            if self.condensed:
                following = entries[index + 1].offset if index + 1 < len(entries) else entry.offset + entry.size
                span = max(following - entry.offset, entry.size)
                if inflater is None:
                    inflater = self._inflater_for(entry)
            else:
                span = entry.size
                inflater = self._inflater_for(entry)
            take = min(span, limit - total)
            probe = Entry(entry.name, take, entry.offset, None, entry.index)
            plain = b"".join(inflater.read_range(probe))
            stored = entry.stored_size or 0
            compressed = self._source.pread(min(stored, 2 * take + 4096), self._chunk_start(entry))
            complete = take == span and len(compressed) == stored
            pieces.append((plain, compressed, complete, not self.condensed or index == 0))
            total += take
        return pieces

    def _detect_zlib(self) -> dict[str, Any] | None:
        """The zlib settings that reproduce the stored compressed bytes (tried on the first
        chunks, up to 1 MiB of data, after a quick first pass over 64 KiB), or None when no
        tried setting does."""
        pieces = self._probe_pieces(1 << 20)
        if not pieces or not pieces[0][1]:
            return {"level": 9, "strategy": 0, "mem_level": 8, "window_bits": 15}
        head = pieces[0][1]
        if len(head) < 2 or (head[0] & 0x0F) != 8 or not 8 <= (head[0] >> 4) + 8 <= 15:
            return None
        window_bits = (head[0] >> 4) + 8
        flush = zlib.Z_SYNC_FLUSH if self.condensed or not self._stream_finished() else zlib.Z_FINISH
        # zlib's header says which group of levels wrote it: try those first.
        order = {0: [1, 0], 1: [2, 3, 4, 5], 2: [6], 3: [9, 7, 8]}[head[1] >> 6]
        order += [level for level in range(10) if level not in order]

        def reproduces(level: int, strategy: int, mem_level: int, limit: int) -> bool:
            compressor: Any = None
            used = 0
            for plain, compressed, complete, new_stream in pieces:
                if compressor is None or new_stream:
                    compressor = zlib.compressobj(level, zlib.DEFLATED, window_bits, mem_level, strategy)
                if used + len(plain) > limit:
                    plain, complete = plain[: limit - used], False
                out = compressor.compress(plain)
                used += len(plain)
                if complete:
                    if out + compressor.flush(flush) != compressed:
                        return False
                elif not compressed.startswith(out):
                    return False
                if used >= limit or not complete:
                    return True
            return True

        for strategy in (0, 1, 2, 3, 4):
            for level in order:
                for mem_level in (8, 9, 7, 6, 5, 4, 3, 2, 1):
                    quick = reproduces(level, strategy, mem_level, 64 << 10)
                    if quick and reproduces(level, strategy, mem_level, 1 << 30):
                        return {
                            "level": level,
                            "strategy": strategy,
                            "mem_level": mem_level,
                            "window_bits": window_bits,
                        }
        return None

    def _stream_finished(self) -> bool:
        """Whether per-member streams (flags 1) end with a final block."""
        entries = [entry for entry in self.infolist() if entry.stored_size]
        if self.flags != 1 or not entries:
            return True
        first = entries[0]
        inflater = self._inflater_for(first)
        for _ in inflater.read_range(first):
            pass
        while inflater._produce():
            pass
        return bool(inflater._inflate.eof)

    def layout(self) -> dict[str, Any]:
        entries = self.infolist()
        options: dict[str, Any] = {
            "flags": self.flags,
            "short_name": decode_name(self.short_name_field.partition(b"\0")[0]),
            "path_name": decode_name(self.path_name_field.partition(b"\0")[0]),
            "runtime": self.runtime.hex() if any(self.runtime) else None,
        }
        exact: dict[str, Any] = {"sizes": [entry.size for entry in entries], "file_size": self.size}
        if self.condensed:
            alignment = self._detect_alignment()
            options["align"] = alignment or 1
            if alignment is None:
                exact["offsets"] = [entry.offset - (0 if self.flags == 3 else self.data_start) for entry in entries]
        if self.compressed:
            settings = self._detect_zlib()
            if settings is None:
                exact["zlib_unmatched"] = True
            else:
                options.update(settings)
            if self.flags == 1:
                options["finish"] = self._stream_finished()
        # Header fields and entry fields that differ from what the writer computes.
        overrides: dict[str, Any] = {}
        expected = self._expected_sizes()
        for field, value in (
            ("entry_block_size", self.entry_block_size),
            ("name_block_size", self.name_block_size),
            ("data_size", self.data_size_field),
            ("compressed_data_size", self.compressed_size_field),
        ):
            if value != min(expected[field], U32) and not (expected[field] > U32 and value == U32):
                overrides[field] = value
        if self.file_size_field != min(self.size, U32):
            overrides["file_size"] = self.file_size_field
        exact["header"] = overrides
        exact["data_offsets"] = self._data_offset_overrides()
        # Header bytes the options reproduce are covered; anything else non-zero (text after a
        # name's NUL, junk in the padding) goes to `fill`.
        covered = [(0, 8), (332, 4), (340, 24), (RUNTIME_OFFSET, len(self.runtime))]
        covered.append((self.entries_start, ENTRY.size * len(entries)))
        for start, raw in ((8, self.short_name_field), (73, self.path_name_field)):
            text = raw.partition(b"\0")[0]
            if raw == text.ljust(len(raw), b"\0"):
                covered.append((start, len(raw)))
        canonical_names = all(
            record[0] == offset for record, offset in zip(self.records, _name_offsets(self.raw_names))
        ) and self.name_block_size == sum(len(raw) + 1 for raw in self.raw_names)
        if canonical_names:
            covered.append((self.names_start, self.name_block_size))
        else:
            exact["name_offsets"] = [record[0] for record in self.records]
        covered.append((self.data_start, max(0, min(self._data_end(), self.size) - self.data_start)))
        exact["fill"] = fill_bytes(self._source, covered)
        return {"options": options, "exact": exact}

    def _data_offset_overrides(self) -> dict[str, int]:
        """Raw DataOffset values the writer would not produce (mode 1 positions, odd tools)."""
        overrides = {}
        for entry, record in zip(self.infolist(), self.records):
            if self.flags == 3:
                want = entry.offset
            else:
                want = entry.offset - self.data_start
            if record[2] != want & U32:
                overrides[str(entry.index)] = record[2]
        return overrides


def _name_offsets(raw_names: list[bytes]) -> list[int]:
    offsets = []
    position = 0
    for raw in raw_names:
        offsets.append(position)
        position += len(raw) + 1
    return offsets


def _runtime_bytes(value: Any) -> bytes:
    """The 12 runtime bytes from a hex string (or an int, as `-O runtime=0x...` arrives)."""
    if not value:
        return bytes(12)
    try:
        if isinstance(value, int):
            return value.to_bytes(12, "big")
        return bytes.fromhex(str(value))
    except (ValueError, OverflowError) as exc:
        raise UnsupportedFeatureError(f"runtime must be 24 hex digits: {exc}") from exc


def _field(text: Any, size: int, what: str) -> bytes:
    raw = encode_name("" if text is None else str(text))
    if len(raw) >= size:
        raise FormatLimitError(f"{what} {text!r} is {len(raw)} bytes; the header holds at most {size - 1}")
    return raw.ljust(size, b"\0")


class Writer(ArchiveWriter):
    """Writes a packfile as the game does. Options (None picks the default for the extension):
    `flags` 0-3 (`.str2_pc`: 3, `.vpp_pc`: 0), `level` zlib level (9), `align` member alignment
    inside condensed data (`.str2_pc`: 1, `.vpp_pc` with flags 3: 16, flags 2: 1; flags 0/1 always
    pad to 2048), `strategy`/`mem_level`/`window_bits` (zlib's), `finish` (flags 1: finish each
    member's stream, default True), `short_name`/`path_name` (header text), `runtime` (hex of the
    12 bytes at 364; zeros by default)."""

    format_name = "vpp"
    option_defaults: ClassVar[dict[str, Any]] = {
        "flags": None,
        "level": None,
        "align": None,
        "strategy": 0,
        "mem_level": 8,
        "window_bits": 15,
        "finish": True,
        "short_name": "",
        "path_name": "",
        "runtime": None,
    }

    def _check_name(self, name: str) -> None:
        raw = encode_name(name)
        if not raw or b"\0" in raw:
            raise FormatLimitError(f"member name {name!r} is empty or holds a NUL byte")

    def _settings(self) -> tuple[int, int, int]:
        """(flags, level, align) with the extension's defaults filled in."""
        str2 = self.path.lower().endswith(".str2_pc")
        flags = self.options["flags"]
        flags = (3 if str2 else 0) if flags is None else int(flags)
        if flags not in MODE_NAMES:
            raise UnsupportedFeatureError(f"packfile flags must be 0-3, not {flags}")
        level = 9 if self.options["level"] is None else int(self.options["level"])
        if not -1 <= level <= 9:
            raise UnsupportedFeatureError(f"zlib level must be 0-9, not {level}")
        align = self.options["align"]
        if flags & FLAG_CONDENSED:
            align = (1 if str2 or flags == 2 else 16) if align is None else int(align)
            if align < 1:
                raise FormatLimitError(f"alignment must be at least 1, not {align}")
        else:
            if align not in (None, BLOCK_ALIGN):
                raise UnsupportedFeatureError(
                    f"flags {flags} always pad members to {BLOCK_ALIGN} bytes; "
                    "align applies to condensed packs (flags 2, 3)"
                )
            align = BLOCK_ALIGN
        return flags, level, align

    def _compressor(self, level: int) -> Any:
        try:
            return zlib.compressobj(
                level,
                zlib.DEFLATED,
                int(self.options["window_bits"]),
                int(self.options["mem_level"]),
                int(self.options["strategy"]),
            )
        except (ValueError, zlib.error) as exc:
            raise UnsupportedFeatureError(f"bad zlib settings: {exc}") from exc

    def _write(self, out: Output, members: list[PendingMember]) -> None:
        flags, level, align = self._settings()
        exact = self.layout if self.layout and self.layout.get("sizes") == [m.size for m in members] else {}
        if exact and flags & FLAG_COMPRESSED:
            if exact.get("zlib_unmatched"):
                raise UnsupportedFeatureError(
                    f"{self.path}: no zlib setting reproduced the original's compressed bytes; "
                    "rebuild with -O options instead of an exact copy"
                )
            if not classic_zlib():
                raise UnsupportedFeatureError(
                    f"{self.path}: the linked zlib ({zlib.ZLIB_RUNTIME_VERSION}) is not classic zlib; "
                    "a byte-exact rebuild of compressed data cannot be guaranteed"
                )
        for member in members:
            if member.size > U32:
                raise FormatLimitError(
                    f"member {member.name!r} is {member.size} bytes; a packfile member holds at most 4 GiB - 1"
                )
        raw_names = [encode_name(member.name) for member in members]
        count = len(members)
        names_start = HEADER_BLOCK + align_up(ENTRY.size * count, BLOCK_ALIGN)
        name_offsets = exact.get("name_offsets") or _name_offsets(raw_names)
        name_block_size = sum(len(raw) + 1 for raw in raw_names)
        data_start = names_start + align_up(name_block_size, BLOCK_ALIGN)
        fixed_offsets = exact.get("offsets")

        out.seek(data_start)
        data_offsets: list[int] = []
        stored_sizes: list[int] = []
        if flags == 3:
            data_size, compressed_size = self._write_solid(
                out, members, level, align, fixed_offsets, data_offsets, stored_sizes
            )
        elif flags == 2:
            position = 0
            for index, member in enumerate(members):
                target = fixed_offsets[index] if fixed_offsets else align_up(position, align)
                out.pad_to(data_start + target)
                data_offsets.append(target)
                stored_sizes.append(NO_SIZE)
                out.write_member(member)
                position = target + member.size
            data_size, compressed_size = position, NO_SIZE
        else:
            for index, member in enumerate(members):
                if index:
                    out.pad_to(align_up(out.tell(), BLOCK_ALIGN))
                data_offsets.append(out.tell() - data_start)
                if flags == 0:
                    out.write_member(member)
                    stored_sizes.append(NO_SIZE)
                else:
                    before = out.tell()
                    compressor = self._compressor(level)
                    for chunk in member.chunks():
                        out.write(compressor.compress(chunk))
                    out.write(compressor.flush(zlib.Z_FINISH if self.options["finish"] else zlib.Z_SYNC_FLUSH))
                    stored_sizes.append(out.tell() - before)
            span = out.tell() - data_start
            if flags == 0:
                data_size, compressed_size = span, NO_SIZE
            else:
                data_size, compressed_size = sum(member.size for member in members), span
            if not members:
                compressed_size = 0 if flags == 1 else NO_SIZE
        file_size = out.tell()
        if exact:
            file_size = int(exact.get("file_size", file_size))

        offset_overrides = exact.get("data_offsets", {})
        entries = b"".join(
            ENTRY.pack(
                name_offsets[index],
                0,
                int(offset_overrides.get(str(index), data_offsets[index] & U32)),
                name_hash(raw_names[index]),
                member.size,
                stored_sizes[index],
                0,
            )
            for index, member in enumerate(members)
        )
        header_values = {
            "file_size": min(file_size, U32),
            "entry_block_size": ENTRY.size * count,
            "name_block_size": name_block_size,
            "data_size": min(data_size, U32),
            "compressed_data_size": min(compressed_size, U32),
        }
        header_values.update({key: int(value) for key, value in exact.get("header", {}).items()})
        runtime_bytes = _runtime_bytes(self.options["runtime"])
        if len(runtime_bytes) != 12:
            raise UnsupportedFeatureError(f"runtime must be 12 bytes (24 hex digits), not {len(runtime_bytes)}")
        header = HEADER.pack(
            MAGIC,
            VERSION,
            _field(self.options["short_name"], 65, "short_name"),
            _field(self.options["path_name"], 256, "path_name"),
            b"\0" * 3,
            flags,
            b"\0" * 4,
            count,
            header_values["file_size"],
            header_values["entry_block_size"],
            header_values["name_block_size"],
            header_values["data_size"],
            header_values["compressed_data_size"],
            runtime_bytes,
        )
        out.flush()
        out.pwrite(header.ljust(HEADER_BLOCK, b"\0"), 0)
        if entries:
            out.pwrite(entries, HEADER_BLOCK)
        names = b"".join(raw + b"\0" for raw in raw_names)
        if names:
            out.pwrite(names, names_start)
        if exact:
            restore_fill(out, exact.get("fill", []))
        out.truncate(file_size)

    def _write_solid(
        self,
        out: Output,
        members: list[PendingMember],
        level: int,
        align: int,
        fixed_offsets: list[int] | None,
        data_offsets: list[int],
        stored_sizes: list[int],
    ) -> tuple[int, int]:
        """Flags 3: one zlib stream, a sync flush after each member (and the padding that
        follows it), never finished. Returns (DataSize, CompressedDataSize)."""
        if not members:
            return 0, 0
        compressor = self._compressor(level)
        position = 0
        compressed_total = 0
        for index, member in enumerate(members):
            target = fixed_offsets[index] if fixed_offsets else align_up(position, align)
            if index == 0 and target:
                # Leading padding only happens with recorded offsets: it belongs to no chunk.
                out.write(compressor.compress(bytes(target)))
            data_offsets.append(target)
            before = out.tell()
            for chunk in member.chunks():
                out.write(compressor.compress(chunk))
            position = target + member.size
            if index + 1 < len(members):
                following = fixed_offsets[index + 1] if fixed_offsets else align_up(position, align)
                if following > position:
                    out.write(compressor.compress(bytes(following - position)))
            out.write(compressor.flush(zlib.Z_SYNC_FLUSH))
            stored_sizes.append(out.tell() - before)
            compressed_total += stored_sizes[-1]
        return position, compressed_total
