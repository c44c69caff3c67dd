"""Copying planned members into the files extraction creates: plain byte ranges of the
archive with one `pread` and one `write` each (`copy_file_range` for large ones), split by bytes
over one forked process per core when there are many (threads where forking is not safe).

The forked workers take batches from a shared queue (a pipe of batch numbers), report each batch
done on their own pipe, die with their parent, and never run the parent's clean-up.
"""

from __future__ import annotations

import os
import struct
import sys

from ..core.atomic import write_all
from ..core.portable import flag
from ..errors import CorruptArchiveError, GamepakError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from ..core.archive import Archive, Entry

# Below this many members or bytes, a second worker costs more than it saves.
_THREAD_THRESHOLD = 256
_THREAD_BYTES = 64 << 20
# Members larger than this are copied by the kernel (copy_file_range) instead of pread+write.
_SMALL_COPY = 8 << 20
# Small members (up to _SPAN_MEMBER) that follow each other are read with one call, up to
# _SPAN bytes at a time, skipping gaps (alignment padding) of at most _SPAN_GAP.
_SPAN = 1 << 20
_SPAN_MEMBER = 256 << 10
_SPAN_GAP = 4096
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | flag("O_CLOEXEC") | flag("O_NOFOLLOW") | flag("O_BINARY")


def copy_members(
    archive: Archive,
    entries: list[Entry],
    jobs: list[tuple[int, str, int, int, int]],
    progress: Callable[[Entry], Any] | None,
) -> None:
    """Create each job's file (folder fd, name) and copy its byte range (offset, size) into it;
    `progress(entries[position])` after each. On several workers when there is enough work."""
    copier = Copier(archive, entries, progress)
    many = len(jobs) >= _THREAD_THRESHOLD or sum(job[3] for job in jobs) >= _THREAD_BYTES
    workers = _worker_count() if many else 1
    if workers > 1 and len(jobs) > 1 and archive._source.fd is not None:
        copier.run_split(jobs, workers)
    else:
        copier.run(jobs)


def _span_length(jobs: list[tuple[int, str, int, int, int]], number: int) -> int:
    """How much to read from job `number`'s start: through the small members that follow it
    closely (gaps of padding at most `_SPAN_GAP`), up to `_SPAN` bytes."""
    _, _, offset, size, _ = jobs[number]
    end = offset + size
    for _, _, next_offset, next_size, _ in jobs[number + 1 : number + 256]:
        if not end <= next_offset <= end + _SPAN_GAP or next_offset + next_size - offset > _SPAN:
            break
        end = next_offset + next_size
    return end - offset


def _worker_count() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, 4))


class Copier:
    """Copies plain byte ranges of the archive into created files."""

    def __init__(self, archive: Archive, entries: list[Entry], progress: Callable[[Entry], Any] | None) -> None:
        self.archive = archive
        self.entries = entries
        self.progress = progress

    def run(self, jobs: list[tuple[int, str, int, int, int]], report: Callable[[int], object] | None = None) -> None:
        """Copy each job's range; `report(position)` after each (default: the progress callback)."""
        source = self.archive._source
        fd_source = source.fd
        base = source.base
        # Positioned reads straight from the descriptor when there is one (no lock, no seek).
        if fd_source is not None:
            from ..core.portable import pread as portable_pread

            pread = getattr(os, "pread", None) or portable_pread
        else:
            pread = lambda _, size, offset: source.pread(size, offset - base)  # noqa: E731
        source_fd = fd_source if fd_source is not None else -1
        if report is None and self.progress is not None:
            entries, progress = self.entries, self.progress

            def report(position: int) -> None:
                progress(entries[position])

        create, write, close, open_file = _CREATE, os.write, os.close, os.open
        # Small members lying one after another are read together into one reused buffer:
        # one read for many files, and no fresh memory per file.
        spans = fd_source is not None and hasattr(os, "preadv") and len(jobs) > 1
        view = memoryview(bytearray(_SPAN)) if spans else None
        span_start = span_end = 0  # the archive bytes the buffer holds
        position = -1
        try:
            for number, (dir_fd, name, offset, size, position) in enumerate(jobs):
                fd = open_file(name, create, 0o644, dir_fd=dir_fd)
                try:
                    start = base + offset
                    if not size:
                        pass
                    elif view is not None and size <= _SPAN_MEMBER:
                        if start < span_start or start + size > span_end:
                            length = _span_length(jobs, number)
                            span_start, span_end = start, start + os.preadv(source_fd, [view[:length]], start)
                        if start + size <= span_end:
                            piece = view[start - span_start : start - span_start + size]
                        else:  # the file ends early: the piecewise read says where
                            piece = memoryview(self._read_rest(b"", offset, size, position))
                        written = write(fd, piece)
                        if written != size:
                            write_all(fd, piece[written:])
                    elif size > _SMALL_COPY and fd_source is not None:
                        # Imported here: `core.writer` is the writing side, which extracting
                        # small members never needs (start-up of `gamepak extract`).
                        from ..core.writer import copy_range

                        copy_range(fd_source, start, fd, 0, size)
                    else:
                        data = pread(source_fd, size, start)
                        if len(data) != size:
                            data = self._read_rest(data, offset, size, position)
                        written = write(fd, data)
                        if written != size:
                            write_all(fd, memoryview(data)[written:])
                finally:
                    close(fd)
                if report is not None:
                    report(position)
        except OSError as exc:
            raise self._write_error(exc, position) from exc

    def _read_rest(self, data: bytes, offset: int, size: int, position: int) -> bytes:
        """Large members come back from pread in pieces; a short read at the end is corruption."""
        source = self.archive._source
        chunks = [data]
        got = len(data)
        while got < size:
            chunk = source.pread(min(size - got, _SMALL_COPY), offset + got)
            if not chunk:
                raise CorruptArchiveError(
                    "member data is truncated",
                    path=self.archive.filename,
                    offset=offset + got,
                    member=self.entries[position].name,
                )
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def _write_error(self, exc: OSError, position: int) -> GamepakError:
        member = self.entries[position].name if position >= 0 else "?"
        return GamepakError(f"cannot write member {member!r}: {exc.strerror or exc}")

    def run_split(self, jobs: list[tuple[int, str, int, int, int]], workers: int) -> None:
        """Copy the jobs on `workers` processes (this one and forked ones), or threads when
        forking is not safe (other threads are running, or no fork on this system)."""
        # No `threading` module loaded means no Python thread besides this one (and importing
        # it just to ask costs start-up time).
        threading = sys.modules.get("threading")
        if hasattr(os, "fork") and (threading is None or threading.active_count() == 1):
            self._run_forked(jobs, workers)
            return
        shares: list[list[tuple[int, str, int, int, int]]] = [[] for _ in range(workers)]
        loads = [0] * workers
        for job in sorted(jobs, key=lambda job: job[3], reverse=True) if len(jobs) < 64 else jobs:
            lightest = loads.index(min(loads))
            shares[lightest].append(job)
            loads[lightest] += job[3] + 4096  # a file costs something even when empty
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=workers) as pool:
            for future in [pool.submit(self.run, share) for share in shares]:
                future.result()

    def _run_forked(self, jobs: list[tuple[int, str, int, int, int]], workers: int) -> None:
        """Workers take batches from a shared queue (a pipe of batch numbers), so a process
        that gets more CPU time does more of the work: on a busy machine a second core is not
        always there to take a fixed half."""
        batches = _batches(jobs, workers)
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
                    _child_main(self, batches, queue, writer_end)
                os.close(writer_end)
                children[pid] = _WorkerPipe(reader)
            while (number := _take(queue)) is not None:
                self.run(batches[number])
                for pipe in children.values():
                    self._report(batches, pipe.finished(wait=False))
            failures = []
            for pid, pipe in list(children.items()):
                _, status = os.waitpid(pid, 0)
                del children[pid]
                self._report(batches, pipe.finished(wait=True))
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

    def _report(self, batches: list[list[tuple[int, str, int, int, int]]], numbers: list[int]) -> None:
        if self.progress is not None:
            for number in numbers:
                for job in batches[number]:
                    self.progress(self.entries[job[4]])


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


def _batches(jobs: list[tuple[int, str, int, int, int]], workers: int) -> list[list[tuple[int, str, int, int, int]]]:
    """Jobs cut into batches of about equal bytes: about 16 per worker, few enough for the
    queue pipe's buffer. A file costs something even when empty (4 KiB here). Cut by
    bisecting the running load: list slices, no step per job."""
    from bisect import bisect_left
    from itertools import accumulate

    count = min(workers * 16, len(jobs), 1024)
    loads = list(accumulate([job[3] + 4096 for job in jobs]))
    target = loads[-1] / count
    cuts = sorted({min(len(jobs), bisect_left(loads, target * number) + 1) for number in range(1, count)} - {len(jobs)})
    return [jobs[start:stop] for start, stop in zip([0, *cuts], [*cuts, len(jobs)], strict=True)]


def _take(queue: int) -> int | None:
    """The next batch number from the queue, or None when it is empty (reads of one record are
    atomic between processes)."""
    data = os.read(queue, _BATCH.size)
    return _BATCH.unpack(data)[0] if data else None


def _child_main(copier: Copier, batches: list[list[tuple[int, str, int, int, int]]], queue: int, pipe: int) -> None:
    """A forked worker: copy batches from the queue, report each one done, and exit without
    running any of the parent's clean-up (atexit handlers, buffered output)."""
    status = 0
    try:
        parent = _die_with_parent()
        while (number := _take(queue)) is not None:
            if os.getppid() != parent:
                break  # the parent was killed: its temporaries are stale, stop adding to them
            copier.run(batches[number], _ignore)
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
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
        except (ImportError, OSError, AttributeError):
            pass  # the check between batches still stops it
    return parent


def _ignore(position: int) -> None:
    """Progress in a forked worker: the parent reports whole batches."""


def _rebuild_error(message: str) -> GamepakError:
    kind, _, text = message.partition("\n")
    if not text:
        return GamepakError(kind)
    if kind == "CorruptArchiveError":
        return CorruptArchiveError(text)
    return GamepakError(text)


def write_file(dir_fd: int, create_name: str, member: str, fill: Callable[[int], object]) -> None:
    """Create `create_name` in the folder `dir_fd` (never through a symlink, never over a file)
    and let `fill(fd)` write it; an OSError becomes a GamepakError naming the member."""
    try:
        fd = os.open(create_name, _CREATE, 0o644, dir_fd=dir_fd)
        try:
            fill(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise GamepakError(f"cannot write member {member!r}: {exc.strerror or exc}") from exc


def chunk_writer(chunks: Iterable[bytes | memoryview]) -> Callable[[int], None]:
    """A `fill` for `write_file` that writes `chunks` in order."""

    def write_chunks(fd: int) -> None:
        for chunk in chunks:
            write_all(fd, chunk)

    return write_chunks
