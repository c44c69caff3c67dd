"""The parallel half of `ops.copier`: its jobs split over forked worker processes that take
batches from a shared queue (a pipe of batch numbers), report each batch done on their own pipe,
die with their parent and never run the parent's clean-up; threads where forking is not safe.
Apart from the copier because only an extraction with much work (`copy_members`) runs it: a
small one never imports this (issue 48, start-up).
"""

from __future__ import annotations

import os
import struct
import sys

from ..core.atomic import write_all
from ..errors import CorruptArchiveError, GamepakError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from ..core.archive import Entry
    from .copy_jobs import BatchCopier, Entries, Job, PlannedJobs

# A batch of the queue: the jobs from `start` to `stop`, made by the worker that takes it.
Batch = tuple[int, int]


def run_split(copier: BatchCopier, jobs: list[Job] | PlannedJobs, sizes: Sequence[int], workers: int) -> None:
    """Copy the jobs (of these sizes) on `workers` processes (this one and forked ones), or
    threads when forking is not safe (other threads are running, or no fork on this system)."""
    # No `threading` module loaded means no Python thread besides this one (and importing
    # it just to ask costs start-up time).
    threading = sys.modules.get("threading")
    if hasattr(os, "fork") and (threading is None or threading.active_count() == 1):
        _run_forked(copier.run_batch, copier.entries, copier.progress, jobs, sizes, workers)
        return
    run = copier.run
    shares: list[list[Job]] = [[] for _ in range(workers)]
    loads = [0] * workers
    every = jobs[0 : len(jobs)]
    for job in sorted(every, key=lambda job: job[3], reverse=True) if len(every) < 64 else every:
        lightest = loads.index(min(loads))
        shares[lightest].append(job)
        loads[lightest] += job[3] + 4096  # a file costs something even when empty
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for future in [pool.submit(run, share) for share in shares]:
            future.result()


def _run_forked(
    run: Callable[..., None],
    entries: Entries,
    progress: Callable[[Entry], Any] | None,
    jobs: list[Job] | PlannedJobs,
    sizes: Sequence[int],
    workers: int,
) -> None:
    """Workers take batches from a shared queue (a pipe of batch numbers), so a process
    that gets more CPU time does more of the work: on a busy machine a second core is not
    always there to take a fixed half. Each makes the jobs of the batches it takes."""
    batches = _batches(sizes, workers)
    queue, queue_end = os.pipe()
    try:
        write_all(queue_end, b"".join(_BATCH.pack(number) for number in range(len(batches))))
    finally:
        os.close(queue_end)  # an empty queue then reads as the end
    children: dict[int, _WorkerPipe] = {}
    try:
        for _ in range(workers - 1):
            reader, writer_end = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - runs in the child (measured by the tests' results)
                os.close(reader)
                _child_main(run, jobs, batches, queue, writer_end)
            os.close(writer_end)
            children[pid] = _WorkerPipe(reader)
        while (number := _take(queue)) is not None:
            start, stop = batches[number]
            run(jobs, start, stop)
            for pipe in children.values():
                _report(entries, progress, jobs, batches, pipe.finished(wait=False))
        failures = []
        for pid, pipe in list(children.items()):
            _, status = os.waitpid(pid, 0)
            del children[pid]
            _report(entries, progress, jobs, batches, pipe.finished(wait=True))
            pipe.close()
            if status != 0:
                failures.append(pipe.message or f"the extraction worker ended with status {status}")
        if failures:
            raise _rebuild_error(failures[0])
    finally:
        os.close(queue)
        for pid, pipe in children.items():  # interrupted: stop the workers before cleaning up
            try:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
            except OSError:
                pass
            pipe.close()


def _report(
    entries: Entries,
    progress: Callable[[Entry], Any] | None,
    jobs: list[Job] | PlannedJobs,
    batches: list[Batch],
    numbers: list[int],
) -> None:
    if progress is not None:
        for number in numbers:
            start, stop = batches[number]
            for job in jobs[start:stop]:  # made again: only for a progress bar
                progress(entries[job[4]])


class _WorkerPipe:
    """What a forked worker reports: the number of each batch it finished, then, if it failed,
    a failure mark and the error."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = b""
        self.message = ""
        os.set_blocking(fd, False)

    def finished(self, *, wait: bool) -> list[int]:
        """Batches finished since the last call; with `wait`, everything up to the worker's end."""
        if self.fd < 0:
            return []
        if wait:
            os.set_blocking(self.fd, True)
            while chunk := os.read(self.fd, 65536):
                self.buffer += chunk
        else:
            try:  # noqa: SIM105 - contextlib costs start-up time
                self.buffer += os.read(self.fd, 65536)
            except BlockingIOError:
                pass  # nothing new
        numbers: list[int] = []
        whole = len(self.buffer) // _BATCH.size * _BATCH.size
        for position in range(0, whole, _BATCH.size):
            (number,) = _BATCH.unpack_from(self.buffer, position)
            if number == _FAILED:
                if wait:
                    self.message = self.buffer[position + _BATCH.size :].decode("utf-8", "replace")
                self.buffer = self.buffer[position:]
                return numbers
            numbers.append(number)
        self.buffer = self.buffer[whole:]
        return numbers

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


_BATCH = struct.Struct("<I")
_FAILED = 0xFFFFFFFF


def _batches(sizes: Sequence[int], workers: int) -> list[Batch]:
    """Jobs of these sizes cut into batches for the queue, in order, shrinking toward the end so the
    workers finish together: each holds about 1/(4 x workers) of the load left, down to 1/256
    of the whole (about 35 batches, few enough for the queue pipe's buffer). Equal batches of
    1/32 left one worker idle for up to a batch at the end (6-12 ms of a 20,000-file run). A
    file costs something even when empty (4 KiB here). Cut by bisecting the running load:
    no Python step per job (the bytes summed at C speed, a file's 4 KiB added at each probe).

    Kept in archive order rather than grouped by folder: two workers then rarely create in
    the same folder at once (their batches lie far apart), and members that follow each other
    in the file are read together; grouping by folder measured no gain (issue 48)."""
    from bisect import bisect_left
    from itertools import accumulate

    data = list(accumulate(sizes))  # the bytes of the jobs up to each one

    def load(position: int) -> int:  # the load of the jobs up to `position`, files included
        return data[position] + 4096 * (position + 1)

    count = len(sizes)
    total = load(count - 1)
    smallest = total / 256
    bounds = []
    done = 0.0
    while (done := done + max((total - done) / (4 * workers), smallest)) < total:
        bounds.append(done)
    jobs = range(count)
    cuts = sorted({min(count, bisect_left(jobs, bound, key=load) + 1) for bound in bounds} - {count})
    return list(zip([0, *cuts], [*cuts, count], strict=True))


def _take(queue: int) -> int | None:
    """The next batch number from the queue, or None when it is empty (reads of one record are
    atomic between processes)."""
    data = os.read(queue, _BATCH.size)
    return _BATCH.unpack(data)[0] if data else None


def _child_main(
    run: Callable[..., None], jobs: list[Job] | PlannedJobs, batches: list[Batch], queue: int, pipe: int
) -> None:
    """A forked worker: copy batches from the queue, report each one done, and exit without
    running any of the parent's clean-up (atexit handlers, buffered output)."""
    status = 0
    try:
        parent = _die_with_parent()
        while (number := _take(queue)) is not None:
            if os.getppid() != parent:
                break  # the parent was killed: its temporaries are stale, stop adding to them
            start, stop = batches[number]
            run(jobs, start, stop, quiet=True)
            write_all(pipe, _BATCH.pack(number))
    except BaseException as exc:
        status = 1
        kind = type(exc).__name__ if isinstance(exc, GamepakError) else "GamepakError"
        try:  # noqa: SIM105 - contextlib costs start-up time
            write_all(pipe, _BATCH.pack(_FAILED) + f"{kind}\n{exc}".encode("utf-8", "replace"))
        except BaseException:
            pass  # the exit status still says it failed
    finally:
        os._exit(status)


def _die_with_parent() -> int:
    """Ask Linux to kill this worker when its parent dies (a killed extraction must not go on
    writing into the temporaries the next command removes); returns the parent's PID."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:  # noqa: SIM105 - contextlib costs start-up time
            _prctl()(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
        except (ImportError, OSError, AttributeError, TypeError):
            pass  # the check between batches still stops it
    return parent


def _prctl() -> Callable[..., int]:
    """libc's `prctl`, called through `_ctypes` alone: the `ctypes` package around it cost each
    forked worker about 10 M instructions at its start (3 M this way), before its first file.
    The package itself where `_ctypes`' classes are not what this Python's `ctypes` builds on."""
    try:
        import _ctypes

        class _Int(_ctypes._SimpleCData):
            _type_ = "i"

        class _Function(_ctypes.CFuncPtr):
            _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
            _restype_ = _Int

        class _Process:  # what ctypes.CDLL(None) is to a function looked up in it
            _handle = _ctypes.dlopen(None, 0)  # type: ignore[arg-type] # None: the process itself

        return _Function(("prctl", _Process))  # type: ignore[arg-type] # any object with a _handle
    except (ImportError, AttributeError, TypeError):
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl  # type: ignore[no-any-return]


def _rebuild_error(message: str) -> GamepakError:
    kind, _, text = message.partition("\n")
    if not text:
        return GamepakError(kind)
    if kind == "CorruptArchiveError":
        return CorruptArchiveError(text)
    return GamepakError(text)
