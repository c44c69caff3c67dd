"""Bounded, resumable decompression of a packfile's zlib data.

A compressed packfile member is read from a *stream*: the member's own zlib stream (flags 1),
or the one stream the whole data block is (flags 3). A stream is stored as consecutive
*segments* of the file; each segment carries a bound on how far the output may reach by its end,
so a member that inflates past its declared size (a decompression bomb) stops at once, and the
output is never buffered past what the entries declare.

Seeking inside a stream does not decompress from its start every time: inflaters that can copy
their state (the standard library's zlib) leave *checkpoints* every `CHECKPOINT_SPACING` bytes of
output, at most `MAX_CHECKPOINTS` per stream (the spacing doubles when a stream holds more), and a
later read starts from the nearest checkpoint at or before its target.

A pass that must stay fast (isal cannot copy its state) may leave *window checkpoints* instead,
in a stream of trusted chunks (flags 3, each chunk sync-flushed): where a chunk starts, the
stream is byte-aligned with every earlier block complete, so a raw decompressor given the last
32 KiB of output as its dictionary resumes there exactly.
"""

from __future__ import annotations

import bisect
import zlib
from _thread import allocate_lock  # what `threading.Lock` is, without importing `threading`

from ...core.archive import Entry
from ...core.inflaters import WINDOW, streaming_module
from ...core.source import SeekableStream, Source
from ...errors import CorruptArchiveError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, Protocol

    class Compressed(Protocol):
        """What an inflater reads of the pack holding its stream (`packfile.Reader`, above this
        module: named by this protocol, not imported)."""

        filename: str
        inflated_bytes: int  # output bytes inflated so far, counted here
        _source: Source

        def corrupt(
            self, message: str, offset: int | None = None, member: str | None = None
        ) -> CorruptArchiveError: ...
        def chunk_start(self, entry: Entry) -> int: ...
        def entry_at(self, position: int, default: Entry) -> Entry: ...
        def inflater_at(self, entry: Entry, target: int, current: Inflater | None = None) -> Inflater: ...

    class Pass(Compressed, Protocol):
        """What a pass over the members reads of the pack (`member_data`)."""

        @property
        def condensed(self) -> bool: ...

        _offsets: list[int]
        _chunk_starts: list[int]
        _checkpointed_passes: bool

        def _placed(self) -> list[Entry]: ...
        def solid_stream(self) -> tuple[list[Segment], bool]: ...
        def check_ratio(self, entry: Entry) -> None: ...
        def _pass_inflater(self, entry: Entry) -> Inflater: ...


# Decompression works in bounded steps: compressed input read per call, output per call.
_INPUT_STEP = 256 << 10
_FEED_STEP = 16 << 10
_OUTPUT_STEP = 1 << 20
# Deflate codes at most 258 bytes in 2 bits, so no zlib data inflates by more than this ratio
# (a little slack covers the first literal and tiny streams).
MAX_RATIO = 1032
RATIO_SLACK = 1024
# Checkpoints: one per this much output, at most this many per stream (~40 KiB each: a
# decompressor with its 32 KiB window, and at most `_FEED_STEP` of unconsumed input), so about
# 14 MiB per stream at most.
# A seek decodes half the spacing on average: 256 KiB cut 100 random 1 MiB reads of a 50 MiB
# member from 2.9x to 2.25x one full read (the floor, inflating the 100 MiB read, is 2.0x).
# Streams past 64 MiB reach the cap and space theirs wider (1 MiB at 200 MiB).
CHECKPOINT_SPACING = 256 << 10
MAX_CHECKPOINTS = 256


def max_inflated(compressed: int) -> int:
    """The most output `compressed` bytes of zlib data can produce."""
    return compressed * MAX_RATIO + RATIO_SLACK


class Segment:
    """A run of a stream's compressed bytes: where it is, and how far the output may reach by
    its end (`entry` is named in errors raised while it is read)."""

    __slots__ = ("bound", "entry", "length", "start")

    def __init__(self, start: int, length: int, bound: int, entry: Entry) -> None:
        self.start = start
        self.length = length
        self.bound = bound
        self.entry = entry


class Checkpoint:
    """A decompressor's state at a point of its stream, to resume from: a copy of the
    decompressor, or (`window`, at the start of a sync-flushed chunk: `consumed` is 0) the output
    before that point that a raw decompressor takes as its dictionary."""

    __slots__ = ("consumed", "decompressor", "index", "produced", "window")

    def __init__(self, decompressor: Any, index: int, consumed: int, produced: int, window: bytes = b"") -> None:
        self.decompressor = decompressor
        self.index = index
        self.consumed = consumed
        self.produced = produced
        self.window = window

    def resumed(self, module: Any) -> Any:
        """A decompressor in this checkpoint's state."""
        if self.decompressor is None:
            return module.decompressobj(-15, zdict=self.window) if self.window else module.decompressobj(-15)
        return self.decompressor.copy()


class Checkpoints:
    """The checkpoints of one stream, kept sorted by output position, under a memory cap."""

    def __init__(self) -> None:
        self.spacing = CHECKPOINT_SPACING
        self._positions: list[int] = []
        self._points: list[Checkpoint] = []
        self._lock = allocate_lock()

    def due(self, produced: int) -> bool:
        """Whether a checkpoint at output position `produced` is wanted."""
        with self._lock:
            index = bisect.bisect_right(self._positions, produced)
            previous = self._positions[index - 1] if index else 0
            return produced - previous >= self.spacing

    def add(self, point: Checkpoint) -> None:
        with self._lock:
            index = bisect.bisect_right(self._positions, point.produced)
            if index and self._positions[index - 1] == point.produced:
                return
            self._positions.insert(index, point.produced)
            self._points.insert(index, point)
            if len(self._points) > MAX_CHECKPOINTS:
                # Keep every other one: memory stays capped, coverage stays even.
                self._points = self._points[1::2]
                self._positions = self._positions[1::2]
                self.spacing *= 2

    def before(self, produced: int) -> Checkpoint | None:
        """The last checkpoint at or before output position `produced`."""
        with self._lock:
            index = bisect.bisect_right(self._positions, produced)
            return self._points[index - 1] if index else None

    def __len__(self) -> int:
        return len(self._points)


class Inflater:
    """Forward-only decompression of one zlib stream stored as consecutive segments, producing
    bounded pieces of output. No output is ever allowed past a segment's bound."""

    def __init__(
        self,
        reader: Compressed,
        segments: list[Segment],
        origin: int = 0,
        checkpoints: Checkpoints | None = None,
        resume: Checkpoint | None = None,
        windows: list[int] | None = None,
    ) -> None:
        self._reader = reader
        self._segments = segments
        # Window checkpoints (into `checkpoints`) where a segment starts at one of these output
        # positions; the decompressor stays the fastest one.
        self._windows = windows
        # The last WINDOW bytes of output, kept only for window checkpoints.
        self._tail = resume.window if resume is not None else b""
        if checkpoints is not None and windows is None:
            # Only the standard library's decompressor can copy its state.
            self._module: Any = zlib
            self._errors: tuple[type[BaseException], ...] = (zlib.error,)
        else:
            self._module, self._errors = streaming_module()
        self._checkpoints = checkpoints
        self._origin = origin
        if resume is not None:
            self._inflate = resume.resumed(self._module)
            self._index = resume.index
            self._consumed = resume.consumed
            self._produced = resume.produced
        else:
            self._inflate = self._module.decompressobj()
            self._index = 0
            self._consumed = 0  # compressed bytes of the current segment already read
            self._produced = 0  # output bytes produced so far
        self._buffer = b""
        self._buffer_position = 0  # how much of `_buffer` was handed out
        self._pending = b""  # compressed input read, fed to the decompressor piece by piece
        self._pending_position = 0
        # Position of the next byte to hand out, in the member offsets' terms (`origin` is where
        # the stream's output starts: 0 for the shared stream, the member's offset otherwise).
        self.position = origin + self._produced

    @property
    def finished(self) -> bool:
        """Whether the stream ended with a final block."""
        return bool(self._inflate.eof)

    def _entry_at(self, segment: Segment) -> Entry:
        """The member whose bytes are being produced (the segment's own for separate streams)."""
        return self._reader.entry_at(self._origin + self._produced, segment.entry)

    def _read_input(self) -> bool:
        """Read the next step of compressed input; False at the end of the last segment."""
        while self._index < len(self._segments) and self._consumed >= self._segments[self._index].length:
            self._index += 1
            self._consumed = 0
        if self._index >= len(self._segments):
            return False
        if self._windows is not None and self._consumed == 0 and self._index:
            self._leave_window()
        segment = self._segments[self._index]
        want = min(_INPUT_STEP, segment.length - self._consumed)
        data = self._reader._source.pread(want, segment.start + self._consumed)
        if len(data) != want:
            raise self._reader.corrupt(
                f"compressed data is truncated: {segment.length} bytes declared, the file "
                f"ends after {self._consumed + len(data)}",
                segment.start,
                self._entry_at(segment).name,
            )
        self._consumed += want
        self._pending, self._pending_position = data, 0
        return True

    def _leave_window(self) -> None:
        """A window checkpoint at the start of the current segment, when its output so far is
        complete there (the segment's recorded start) and one is due."""
        windows, checkpoints = self._windows, self._checkpoints
        assert windows is not None and checkpoints is not None
        index = self._index
        if index < len(windows) and windows[index] == self._produced and checkpoints.due(self._produced):
            checkpoints.add(Checkpoint(None, index, 0, self._produced, bytes(self._tail)))

    def produce(self) -> bool:
        """Inflate the next piece into the buffer; False when no more output can come."""
        if self._windows is None and self._checkpoints is not None and self._checkpoints.due(self._produced):
            # Input read but not yet fed is not part of the state: resuming reads it again.
            unfed = len(self._pending) - self._pending_position
            self._checkpoints.add(Checkpoint(self._inflate.copy(), self._index, self._consumed - unfed, self._produced))
        while True:
            tail = self._inflate.unconsumed_tail
            if tail:
                data = tail
            else:
                if self._inflate.eof:
                    return False
                if self._pending_position >= len(self._pending) and not self._read_input():
                    return False
                # Fed in small pieces so that a checkpoint's copy holds little unconsumed input.
                data = self._pending[self._pending_position : self._pending_position + _FEED_STEP]
                self._pending_position += len(data)
            segment = self._segments[min(self._index, len(self._segments) - 1)]
            room = segment.bound - self._produced
            try:
                # One byte more than the bound allows, so that overflow is seen, never stored.
                out = self._inflate.decompress(data, max(1, min(_OUTPUT_STEP, room + 1)))
            except self._errors as exc:
                entry = self._entry_at(segment)
                raise self._reader.corrupt(
                    f"bad zlib data: {exc}", self._reader.chunk_start(entry), entry.name
                ) from exc
            if self._produced + len(out) > segment.bound:
                self._produced = segment.bound
                entry = self._entry_at(segment)
                raise self._reader.corrupt(
                    f"member decompresses to more than its declared size ({entry.size} bytes)",
                    self._reader.chunk_start(entry),
                    entry.name,
                )
            self._produced += len(out)
            self._reader.inflated_bytes += len(out)
            if self._windows is not None and out:
                self._tail = out[-WINDOW:] if len(out) >= WINDOW else (self._tail + out)[-WINDOW:]
            if out:
                self._buffer = out
                self._buffer_position = 0
                return True

    def _truncated(self, entry: Entry) -> CorruptArchiveError:
        got = max(0, self.position - entry.offset)
        return self._reader.corrupt(
            f"zlib data is truncated: member ends after {got} of its {entry.size} bytes",
            self._reader.chunk_start(entry),
            entry.name,
        )

    def skip_to(self, target: int, entry: Entry) -> None:
        """Discard output up to `target`."""
        while self.position < target:
            available = len(self._buffer) - self._buffer_position
            if available == 0:
                if not self.produce():
                    raise self._truncated(entry)
                continue
            step = min(available, target - self.position)
            self._buffer_position += step
            self.position += step

    def take(self, limit: int, entry: Entry) -> bytes:
        """Up to `limit` (> 0) bytes of output from the current position."""
        while len(self._buffer) == self._buffer_position:
            if not self.produce():
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

    def drain(self) -> None:
        """Inflate whatever input is left (to learn whether the stream is finished)."""
        while self.produce():
            pass


class InflateStream(SeekableStream):
    """A seekable stream over a compressed member: decompresses forward; a backward seek resumes
    from the nearest checkpoint instead of the stream's start."""

    def __init__(self, reader: Compressed, entry: Entry) -> None:
        super().__init__(entry.size, f"{reader.filename}/{entry.name}")
        self._reader = reader
        self._entry = entry
        self._inflater: Inflater | None = None

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self.closed:
            raise ValueError("I/O operation on closed stream")
        view = memoryview(buffer).cast("B")
        limit = min(len(view), self._entry.size - self._position)
        if limit <= 0:
            return 0
        target = self._entry.offset + self._position
        inflater = self._inflater
        if inflater is None or inflater.position > target or target - inflater.position > CHECKPOINT_SPACING:
            inflater = self._reader.inflater_at(self._entry, target, inflater)
        self._inflater = inflater
        inflater.skip_to(target, self._entry)
        piece = inflater.take(limit, self._entry)
        view[: len(piece)] = piece
        self._position += len(piece)
        return len(piece)

    def readall(self) -> bytes:
        chunks = []
        while data := self.read(_OUTPUT_STEP):
            chunks.append(data)
        return b"".join(chunks)
