"""Passes over a packfile's members: each member's bytes, by the fastest inflater for the case
(`core.inflaters`): separate streams (flags 1) and runs of a condensed stream's sync-flushed
chunks (flags 3) inflated whole by libdeflate within the budget, a run ahead on a second thread
when there is a core for it; anything else, and whatever libdeflate does not produce exactly,
through the streaming `Inflater`, which names the fault.
"""

from __future__ import annotations

import os

from ...core import inflaters
from ...core.inflaters import WINDOW, RunInput, fits_whole, inflate_zlib_whole
from ...core.source import MemberStream, Source
from .inflate import Checkpoint, Inflater

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

    from ...core.archive import Entry
    from ...core.entry import MemberData, MemberViews
    from .inflate import Pass


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
        return _separate_streams(reader, entries, views)
    if not reader.solid_stream()[1] or any(
        later.offset < earlier.offset for earlier, later in zip(entries, entries[1:], strict=False)
    ):
        return streamed_member_data(reader, entries)
    return _chunk_runs(reader, entries, views)


def _separate_streams(reader: Pass, entries: list[Entry], views: bool) -> Iterator[tuple[Entry, MemberViews]]:
    """Flags 1: each member its own zlib stream, inflated whole when it fits. Members are
    independent, so with a second core and a plain file to read, groups of them are inflated a
    group ahead on a second thread while the members before are written here."""
    groups = _inflated_groups(reader, entries)
    enough = sum(entry.size for entry in entries) > inflaters.RUN_TARGET
    ahead = _RunsAhead(groups) if enough and _plain_source(reader) and _second_core() else None
    try:
        for group in groups if ahead is None else ahead:
            for entry, out in group:
                if out is None:
                    yield entry, reader._pass_inflater(entry).read_range(entry)
                    continue
                reader.inflated_bytes += len(out)
                yield entry, (memoryview(out) if views else bytes(out),)
    finally:
        if ahead is not None:
            ahead.stop()


def _inflated_groups(reader: Pass, entries: list[Entry]) -> Iterator[list[tuple[Entry, bytearray | None]]]:
    """Members in groups of about `RUN_TARGET` of output, each with its output inflated whole,
    or None where it does not fit (or libdeflate did not produce it exactly): streamed then. A
    member refused on the way ends the group before it, then the error is raised."""
    group: list[tuple[Entry, bytearray | None]] = []
    size = 0
    try:
        for entry in entries:
            reader.check_ratio(entry)
            stored = entry.stored_size or 0
            out = None
            # Input bounded too: deflate stores incompressible data with a few bytes per 64 KiB.
            if fits_whole(entry.size) and stored <= entry.size + (entry.size >> 8) + 64:
                data = reader._source.pread(stored, entry.offset)
                out = inflate_zlib_whole(data, entry.size) if len(data) == stored else None
            group.append((entry, out))
            size += entry.size
            if size >= inflaters.RUN_TARGET:
                yield group
                group, size = [], 0
    except Exception:
        if group:
            yield group  # the members before it come first, as on one thread
        raise
    if group:
        yield group


def _plain_source(reader: Pass) -> bool:
    """Whether the pack's source is a plain file: a source that watches its reads (the catalog
    hashes the file from them, in order) is read from the pass's own thread only."""
    return type(reader._source).pread is Source.pread


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
    ahead = _RunsAhead(outputs) if needed > runs.target and _plain_source(reader) and _second_core() else None
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
    """The items of a pass (runs of a stream, groups of members) made on a second thread, at
    most `DEPTH` waiting ahead of the one whose members are being written (memory: that many
    items' output more, about `RUN_TARGET` each). An error raised there is raised here, when the
    pass reaches that item, so errors come in the order the one-thread pass gives. `stop()` (a
    pass ended early, or failed) ends the thread."""

    DEPTH = 1

    def __init__(self, outputs: Iterator[Any]) -> None:
        import queue
        import threading

        self._queue: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=self.DEPTH)
        self._stopped = False
        self._done = False
        self._thread = threading.Thread(target=self._work, args=(outputs,), name="gamepak-inflate", daemon=True)
        self._thread.start()

    def _work(self, outputs: Iterator[Any]) -> None:
        put = self._queue.put
        try:
            for item in outputs:
                if self._stopped:
                    return
                put(("item", item))
                if self._stopped:
                    return
            put(("end", None))
        except BaseException as exc:  # handed to the pass, which raises it in its own thread
            if not self._stopped:
                put(("error", exc))

    def __iter__(self) -> _RunsAhead:
        return self

    def __next__(self) -> Any:
        if self._done:
            raise StopIteration
        kind, value = self._queue.get()
        if kind == "item":
            return value
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
