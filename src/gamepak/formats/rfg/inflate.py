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
import os
import zlib
from _thread import allocate_lock  # what `threading.Lock` is, without importing `threading`

from ...core import inflaters
from ...core.archive import Entry
from ...core.inflaters import WINDOW, RunInput, fits_whole, inflate_zlib_whole, streaming_module
from ...core.source import MemberStream, SeekableStream, Source
from ...errors import CorruptArchiveError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any, Protocol

    from ...core.entry import MemberData, MemberViews

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


# -- passes over the members -------------------------------------------------------------
def streamed_member_data(
    reader: Pass, entries: list[Entry], inflater: Inflater | None = None
) -> Iterator[tuple[Entry, MemberData]]:
    """Each member's bytes through the streaming inflater: one pass over the shared stream
    while members come in stream order (a member behind the current position, or a separate
    stream, starts a new pass; `inflater` continues one already under way). Every chunk's
    output is checked against its bound: what `verify` reads."""
    for entry in entries:
        reader.check_ratio(entry)
        if inflater is None or not reader.condensed or inflater.position > entry.offset:
            inflater = reader._pass_inflater(entry)
        yield entry, inflater.read_range(entry)


def member_data(reader: Pass, entries: list[Entry]) -> Iterator[tuple[Entry, MemberData]]:
    """Each member's bytes, by the fastest inflater for the case (`_fastest_pass`)."""
    return _fastest_pass(reader, entries, False)


def member_views(reader: Pass, entries: list[Entry]) -> Iterator[tuple[Entry, MemberViews]]:
    """`member_data` for writing out only: a member of a run of chunks is a view into the run's
    output, not a copy."""
    return _fastest_pass(reader, entries, True)


def _fastest_pass(reader: Pass, entries: list[Entry], views: bool) -> Iterator[tuple[Entry, Any]]:
    """Each member's bytes, by the fastest inflater for the case (`core.inflaters`): separate
    streams and runs of sync-flushed chunks of the shared stream (trusted sizes) inflated whole
    within the budget by libdeflate, anything else streamed. Whatever the whole-buffer inflater
    does not produce exactly is read again by the streaming one, which names the fault."""
    if not entries:
        return iter(())
    if not fits_whole(0) or reader._checkpointed_passes:
        # A rebuild's passes leave window checkpoints for its later reads: the streaming pass.
        return streamed_member_data(reader, entries)
    if not reader.condensed:
        return _separate_streams(reader, entries)
    if not reader.solid_stream()[1] or any(
        later.offset < earlier.offset for earlier, later in zip(entries, entries[1:], strict=False)
    ):
        return streamed_member_data(reader, entries)
    return _chunk_runs(reader, entries, views)


def _separate_streams(reader: Pass, entries: list[Entry]) -> Iterator[tuple[Entry, MemberData]]:
    """Flags 1: each member its own zlib stream, inflated whole when it fits."""
    for entry in entries:
        reader.check_ratio(entry)
        stored = entry.stored_size or 0
        out = None
        # Input bounded too: deflate stores incompressible data with a few bytes per 64 KiB.
        if fits_whole(entry.size) and stored <= entry.size + (entry.size >> 8) + 64:
            data = reader._source.pread(stored, entry.offset)
            out = inflate_zlib_whole(data, entry.size) if len(data) == stored else None
        if out is None:
            yield entry, reader._pass_inflater(entry).read_range(entry)
            continue
        reader.inflated_bytes += len(out)
        yield entry, (bytes(out),)


def _chunk_runs(reader: Pass, wanted: list[Entry], views: bool) -> Iterator[tuple[Entry, MemberViews]]:
    """Flags 3 with trusted chunk sizes, members in stream order: consecutive chunks inflated
    together by libdeflate, up to the budget of output, each run continuing the previous one's
    last 32 KiB (each chunk ends with a sync flush, so a run starts on a byte with every earlier
    block complete). A run whose output is not exactly what the offsets say, or a chunk too
    large for the budget, hands the rest of the pass to the streaming inflater, resumed at the
    run's start with the same window.
    Runs depend on each other (the window), so one stream inflates on one thread; with a second
    core, more than one run to inflate and a plain file to read, that thread is a second one
    (`_RunsAhead`), a run or two ahead of the members being written here (libdeflate and
    `os.write` release the GIL)."""
    runs = _Runs(reader)
    needed = max(entry.offset + entry.size for entry in wanted)
    outputs: Iterator[_RunOutput] = runs.outputs(needed)
    # A source that watches its reads (the catalog hashes the file from them, in order) is
    # read from this thread only.
    plain_source = type(reader._source).pread is Source.pread
    ahead = _RunsAhead(outputs) if needed > runs.target and plain_source and _second_core() else None
    if ahead is not None:
        outputs = ahead
    try:
        out = bytearray()
        out_start = 0  # output position of out[0]
        for position, entry in enumerate(wanted):
            reader.check_ratio(entry)
            while entry.offset + entry.size > out_start + len(out):
                run = next(outputs, None)
                if run is None:
                    break  # every chunk inflated: the member runs past the stream's end
                piece, run_start, first, window = run
                if piece is None:
                    if ahead is not None:
                        ahead.stop()
                    yield from _streamed_rest(reader, wanted[position:], entry, first, run_start, window)
                    return
                reader.inflated_bytes += len(piece)
                out, out_start = piece, run_start
            begin = entry.offset - out_start
            if begin < 0 or entry.offset + entry.size > out_start + len(out):
                # Behind the current run, or past the stream's end: the streaming pass says which.
                if ahead is not None:
                    ahead.stop()
                yield from streamed_member_data(reader, wanted[position:])
                return
            view = memoryview(out)[begin : begin + entry.size]
            yield entry, (view if views else view.tobytes(),)
    finally:
        if ahead is not None:
            ahead.stop()


if TYPE_CHECKING:
    # One run of a pass: its output (None: not exactly what the offsets say, stream from here),
    # the output position it starts at, its first chunk, and the window before it.
    _RunOutput = tuple[bytearray | None, int, int, bytes]


def _second_core() -> bool:
    """Whether this process may run on more than one core."""
    try:
        return len(os.sched_getaffinity(0)) > 1
    except (AttributeError, OSError):
        return (os.cpu_count() or 1) > 1


class _RunsAhead:
    """The runs of a pass inflated on a second thread, at most `DEPTH` waiting ahead of the one
    whose members are being written (memory: that many runs' output more, 8 MiB each). An error
    raised there is raised here, when the pass reaches that run, so errors come in the order the
    one-thread pass gives. `stop()` (a pass ended early, or failed) ends the thread."""

    DEPTH = 1

    def __init__(self, outputs: Iterator[_RunOutput]) -> None:
        import queue
        import threading

        self._queue: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=self.DEPTH)
        self._stopped = False
        self._done = False
        self._thread = threading.Thread(target=self._work, args=(outputs,), name="gamepak-inflate", daemon=True)
        self._thread.start()

    def _work(self, outputs: Iterator[_RunOutput]) -> None:
        put = self._queue.put
        try:
            for run in outputs:
                if self._stopped:
                    return
                put(("run", run))
                if self._stopped or run[0] is None:
                    return
            put(("end", None))
        except BaseException as exc:  # handed to the pass, which raises it in its own thread
            if not self._stopped:
                put(("error", exc))

    def __iter__(self) -> _RunsAhead:
        return self

    def __next__(self) -> _RunOutput:
        if self._done:
            raise StopIteration
        kind, value = self._queue.get()
        if kind == "run":
            return value  # type: ignore[no-any-return]
        self._done = True
        if kind == "error":
            raise value
        raise StopIteration

    def stop(self) -> None:
        """End the thread: it stops before its next run (a `put` it waits in is freed)."""
        self._stopped = self._done = True
        while self._thread.is_alive():
            while not self._queue.empty():  # only this thread takes from it: never blocks
                self._queue.get_nowait()
            self._thread.join(0.05)


class _Runs:
    """How a trusted shared stream splits into runs of chunks, and inflating one."""

    def __init__(self, reader: Pass) -> None:
        self.reader = reader
        self.entries = entries = reader._placed()
        self.starts = reader._chunk_starts
        last = entries[-1]
        self.ends = [*reader._offsets[1:], last.offset + last.size]  # where each chunk's output must end
        self.budget = inflaters.WHOLE_BUDGET
        self.target = min(self.budget, inflaters.RUN_TARGET)  # output a run is cut at
        self.input: RunInput | None = None  # made at the first run, reused by the others
        self.input_limit = self.budget + (self.budget >> 8)  # deflate's stored blocks add a little

    def _input_end(self, chunk: int) -> int:
        return self.starts[chunk] + (self.entries[chunk].stored_size or 0)

    def end_of_run(self, first: int, produced: int) -> int:
        """The chunk after the run starting at `first` (output position `produced`): as many
        chunks as keep output within `RUN_TARGET` (and the budget) and input within the budget,
        at least one."""
        stop = first + 1
        count, ends, start = len(self.entries), self.ends, self.starts[first]
        target = self.target
        while stop < count and ends[stop] - produced <= target and self._input_end(stop) - start <= self.input_limit:
            stop += 1
        return stop

    def outputs(self, needed: int) -> Iterator[_RunOutput]:
        """Each run in stream order until the output reaches `needed` (or the chunks end); a
        run that is not exactly what the offsets say is the last one given."""
        count = len(self.entries)
        next_chunk = 0  # the first chunk not inflated yet
        produced = 0  # output so far: where the next chunk's output starts
        window = b""  # the last WINDOW bytes of output so far
        while next_chunk < count and produced < needed:
            stop = self.end_of_run(next_chunk, produced)
            piece = self.inflate(next_chunk, stop, produced, window)
            yield piece, produced, next_chunk, window
            if piece is None:
                return
            produced += len(piece)
            window = bytes(piece[-WINDOW:]) if len(piece) >= WINDOW else (window + piece)[-WINDOW:]
            next_chunk = stop

    def inflate(self, first: int, stop: int, produced: int, window: bytes) -> bytearray | None:
        """The run's output, exactly what the offsets say it holds, or None."""
        start = self.starts[first]
        run_in = self._input_end(stop - 1) - start
        expected = self.ends[stop - 1] - produced
        if not 0 <= expected <= self.budget or run_in > self.input_limit:
            return None
        if self.input is None:
            self.input = RunInput(self.input_limit)
        read_into = _filler(self.reader._source, start, run_in, self.reader.filename)
        return self.input.inflate_run(read_into, run_in, expected, window, skip=0 if first else 2)


def _filler(source: Source, start: int, length: int, name: str) -> Callable[[memoryview], int]:
    """`read_into(view)` for `RunInput`: fills the view with the source's bytes from `start`;
    how much it got. Straight into the buffer from a plain file; through `pread` from a source
    that watches its reads (the catalog hashes the file from them)."""
    if type(source).pread is not Source.pread:

        def read_through(view: memoryview) -> int:
            data = source.pread(len(view), start)
            view[: len(data)] = data
            return len(data)

        return read_through
    stream = MemberStream(source, start, length, name)

    def read_into(view: memoryview) -> int:
        got = 0
        while got < len(view) and (count := stream.readinto(view[got:])):
            got += count
        return got

    return read_into


def _streamed_rest(
    reader: Pass, rest: list[Entry], entry: Entry, chunk: int, produced: int, window: bytes
) -> Iterator[tuple[Entry, MemberData]]:
    """The rest of a pass through the streaming inflater, from the start of `chunk` (output
    position `produced`, with the `window` before it)."""
    if chunk == 0:
        inflater = reader._pass_inflater(entry)
    else:
        resume = Checkpoint(None, chunk, 0, produced, window)
        inflater = Inflater(reader, reader.solid_stream()[0], 0, None, resume)
    yield from streamed_member_data(reader, rest, inflater)
