"""Copying planned members into the files extraction creates: plain byte ranges of the
archive, each sent by the kernel from the archive into the new file with one `sendfile` when
there are many (Linux; else `preadv` spans of small members, or one `pread` each;
`copy_file_range` for large ones), split by bytes over one forked process per core when there
are many (threads where forking is not safe).

The forked workers (`ops.copy_workers`, imported only when there is that much work) take batches
from a shared queue (a pipe of batch numbers), report each batch done on their own pipe, die
with their parent, and never run the parent's clean-up.
"""

from __future__ import annotations

import os
import sys

from ..core.atomic import write_all
from ..core.portable import flag
from ..errors import CorruptArchiveError, GamepakError
from .copy_jobs import Job, PlannedJobs, job_sizes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

    from ..core.archive import Archive, Entry
    from .copy_jobs import Entries

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
# What `sendfile` fails with where a file cannot be sent to another file (errno's EINVAL,
# ENOSYS, ENOTSOCK, EOPNOTSUPP on Linux; without importing errno): read and written instead.
_NO_SENDFILE = frozenset({22, 38, 88, 95})
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | flag("O_CLOEXEC") | flag("O_NOFOLLOW") | flag("O_BINARY")


def copy_members(
    archive: Archive,
    entries: Entries,
    jobs: list[Job] | PlannedJobs,
    progress: Callable[[Entry], Any] | None,
) -> None:
    """Create each job's file (folder fd, name) and copy its byte range (offset, size) into it;
    `progress(entries[position])` after each. On several workers when there is enough work."""
    copier = Copier(archive, entries, progress)
    sizes = job_sizes(jobs)
    many = len(jobs) >= _THREAD_THRESHOLD or sum(sizes) >= _THREAD_BYTES
    workers = _worker_count() if many else 1
    # Sent by the kernel where it can (one copy, archive to file; no read into a buffer first).
    copier.send = many and sys.platform.startswith("linux") and hasattr(os, "sendfile")
    if workers > 1 and len(jobs) > 1 and archive._source.fd is not None:
        copier.run_split(jobs, sizes, workers)
    else:
        copier.run_batch(jobs, 0, len(jobs))


def _span_length(jobs: list[Job], number: int) -> int:
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

    def __init__(self, archive: Archive, entries: Entries, progress: Callable[[Entry], Any] | None) -> None:
        self.archive = archive
        self.entries = entries
        self.progress = progress
        # The span buffer of each thread that runs jobs, kept from batch to batch: a fresh
        # 1 MiB buffer per batch was zeroed and faulted in again (each forked worker runs ~17).
        self._buffers: dict[int, memoryview] = {}
        # Whether members are sent with `sendfile` (`copy_members` decides; off again when this
        # system cannot send one file to another).
        self.send = False

    def run_batch(self, jobs: list[Job] | PlannedJobs, start: int, stop: int, *, quiet: bool = False) -> None:
        """Copy the jobs from `start` to `stop`, reporting each to the progress callback unless
        `quiet` (a forked worker: its parent reports whole batches). Members the kernel sends
        from planned jobs take the short loop (`_send_planned`): no job tuple is made, and the
        progress callback hears of them once the batch is written."""
        if (
            self.send
            and isinstance(jobs, PlannedJobs)
            and stop > start
            and max(jobs.sizes_of[start:stop]) <= _SMALL_COPY
        ):
            stop_sent = self._send_planned(jobs, start, stop)
            if not quiet and self.progress is not None:
                entries, progress = self.entries, self.progress
                for position in range(start, stop_sent):
                    progress(entries[position])
            if stop_sent == stop:
                return
            start = stop_sent  # this system cannot send one file to another: the rest read and written
        self.run(jobs[start:stop], _quiet if quiet else None)

    def _send_planned(self, jobs: PlannedJobs, start: int, stop: int) -> int:
        """Create the files of planned jobs `start` to `stop` and have the kernel send each
        member into its file, in the shortest loop per file: the key split, the folder's
        descriptor, three system calls (the generic `run` also made a job tuple and took a
        branch per copy method; issue 48). Returns where it stopped: `stop`, or the job after
        the one `sendfile` refused (read and written instead: the caller goes on that way)."""
        source = self.archive._source
        source_fd, base = source.fd, source.base
        if source_fd is None:  # nothing to send from (`run_batch` asks first)
            return start
        folder_fds, keys = jobs.folder_fds, jobs.keys
        open_file, sendfile, close, create = os.open, os.sendfile, os.close, _CREATE
        key = ""
        try:
            for key, offset, size in zip(keys[start:stop], jobs.offsets[start:stop], jobs.sizes_of[start:stop]):
                folder, _, name = key.rpartition("/")
                fd = open_file(name, create, 0o644, dir_fd=folder_fds[folder])
                try:
                    if size:
                        try:
                            sent = sendfile(fd, source_fd, base + offset, size)
                        except OSError as exc:
                            if exc.errno not in _NO_SENDFILE:
                                raise
                            # Not between these files here: this member and the rest read and written.
                            self.send = False
                            position = keys.index(key, start, stop)
                            data = source.pread(size, offset)
                            write_all(fd, data if len(data) == size else self._read_rest(data, offset, size, position))
                            return position + 1
                        if sent != size:
                            self._send_rest(fd, base + offset + sent, size - sent, keys.index(key, start, stop))
                finally:
                    close(fd)
        except OSError as exc:
            raise self._write_error(exc, keys.index(key, start, stop) if key else -1) from exc
        return stop

    def run(self, jobs: list[Job], report: Callable[[int], object] | None = None) -> None:
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
        # Sent by the kernel straight from the archive's cache into the new file (`send`);
        # else small members lying one after another are read together into one reused
        # buffer: one read for many files, and no fresh memory per file.
        sendfile = os.sendfile if self.send and fd_source is not None else None
        spans = sendfile is None and fd_source is not None and hasattr(os, "preadv") and len(jobs) > 1
        view = self._span_buffer(0) if spans else None
        span_start = span_end = 0  # the archive bytes the buffer holds
        position = -1
        try:
            for number, (dir_fd, name, offset, size, position) in enumerate(jobs):
                fd = open_file(name, create, 0o644, dir_fd=dir_fd)
                try:
                    start = base + offset
                    if not size:
                        pass
                    elif sendfile is not None and size <= _SMALL_COPY:
                        try:
                            sent = sendfile(fd, source_fd, start, size)
                        except OSError as exc:
                            if exc.errno not in _NO_SENDFILE:
                                raise
                            # Not between these files here: read and write, this one and the rest.
                            self.send = False
                            sendfile, sent = None, 0
                            data = pread(source_fd, size, start)
                            if len(data) != size:
                                data = self._read_rest(data, offset, size, position)
                            write_all(fd, data)
                        if sent != size and sendfile is not None:
                            self._send_rest(fd, start + sent, size - sent, position)
                    elif view is not None and size <= _SPAN_MEMBER:
                        if start < span_start or start + size > span_end:
                            length = _span_length(jobs, number)
                            if length > len(view):
                                view = self._span_buffer(length)
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

    def _send_rest(self, fd: int, start: int, size: int, position: int) -> None:
        """The rest of a member `sendfile` sent only part of (`size` bytes from `start` in the
        file); nothing more to send before the end is an archive cut short (after it was
        opened: its ranges were checked against its size then)."""
        source = self.archive._source
        while size:
            sent = os.sendfile(fd, source.fd, start, size)  # type: ignore[arg-type] # has one
            if not sent:
                raise CorruptArchiveError(
                    "member data is truncated (the file is shorter than when it was opened)",
                    path=self.archive.filename,
                    offset=start - source.base,
                    member=self.entries[position].name,
                )
            start += sent
            size -= sent

    def _span_buffer(self, length: int) -> memoryview:
        """This thread's reusable buffer for spans of small members (threads may run jobs of
        one copier at once; a forked worker has its own copy of the memory), at least `length`
        bytes (at most _SPAN). Grown as spans need it, at least doubling: a small extraction
        zeroes and faults in a few kilobytes, not the whole megabyte (`gamepak extract` of 20
        members of 100 bytes: 81.5 -> 80.5 M instructions)."""
        from _thread import get_ident  # `threading` itself is not imported by an extraction

        thread = get_ident()
        view = self._buffers.get(thread)
        if view is None or len(view) < length:
            size = min(_SPAN, max(length, 2 * len(view) if view is not None else 0))
            view = self._buffers[thread] = memoryview(bytearray(size))
        return view

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

    def run_split(self, jobs: list[Job] | PlannedJobs, sizes: Sequence[int], workers: int) -> None:
        """Copy the jobs (of these sizes) on `workers` processes (this one and forked ones), or
        threads when forking is not safe (`ops.copy_workers`, imported only when there is that
        much work)."""
        from .copy_workers import run_split

        run_split(self, jobs, sizes, workers)


def _quiet(position: int) -> None:
    """No progress per file (a forked worker: its parent reports whole batches)."""


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
