"""Work shared with one forked copy of this process: parsing hundreds of tables is pure Python
and C under one GIL, so a second core helps only as a second process.

Both processes take items from a shared queue (a pipe of item numbers, largest first), so the
one that gets more CPU time does more: on a busy machine the second core is not always there to
take a fixed half. They talk over two pipes in messages (a length, then a pickle). Whatever the
worker raises reaches the parent as itself; a worker that ends without its answer is an error
naming what it was doing; a parent that stops (an error, Ctrl-C) kills the worker and waits
for it. The worker never runs the parent's clean-up (atexit handlers, buffered output).
"""

from __future__ import annotations

import os
import struct

from ..errors import GamepakError
from .atomic import write_all

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from types import TracebackType
    from typing import Any

_ITEM = struct.Struct("<I")
_LENGTH = struct.Struct("<Q")
# The queue is written whole before the fork: no more items than a pipe's buffer holds (64 KiB).
MAX_ITEMS = 16384


def can_split() -> bool:
    """Whether a second process can share the work: it can be forked and this process may use
    two cores. Other threads do not stop it (unlike the extractor's and the catalog's workers):
    the worker only parses, converts, pickles and writes to its pipe, so it never waits for a
    lock another thread may have held at the fork (the fork resets the import lock; the modules
    the worker uses are imported before it)."""
    from .portable import can_fork

    if not can_fork():
        return False
    affinity = getattr(os, "sched_getaffinity", None)
    return (len(affinity(0)) if affinity is not None else os.cpu_count() or 1) >= 2


class Queue:
    """Item numbers both processes take from (reads of one record are atomic between
    processes); made before the fork, read by both."""

    def __init__(self, order: list[int]) -> None:
        if len(order) > MAX_ITEMS:
            raise ValueError(f"{len(order)} items, more than the {MAX_ITEMS} a queue holds")
        self.fd, writer = os.pipe()
        try:
            write_all(writer, b"".join(_ITEM.pack(number) for number in order))
        except BaseException:
            os.close(self.fd)
            raise
        finally:
            os.close(writer)  # an empty queue then reads as the end

    def __iter__(self) -> Iterator[int]:
        while data := os.read(self.fd, _ITEM.size):
            yield _ITEM.unpack(data)[0]

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class Channel:
    """One end of the two pipes between the parent and its worker: `send` and `receive` whole
    values (pickled)."""

    def __init__(self, reader: int, writer: int, what: str) -> None:
        self.reader = reader
        self.writer = writer
        self.what = what

    def send(self, value: Any) -> None:
        import pickle

        payload = pickle.dumps((True, value), protocol=pickle.HIGHEST_PROTOCOL)
        write_all(self.writer, _LENGTH.pack(len(payload)) + payload)

    def receive(self) -> Any:
        """The next value sent; what the other side raised is raised here."""
        import pickle

        header = self._read(_LENGTH.size)
        payload = self._read(_LENGTH.unpack(header)[0]) if header is not None else None
        if payload is None:
            raise self._ended()
        ok, value = pickle.loads(payload)
        if not ok:
            raise value
        return value

    def _read(self, size: int) -> bytes | None:
        """Exactly `size` bytes, or None when the other side closed its end first."""
        pieces = []
        while size:
            piece = os.read(self.reader, min(size, 1 << 20))
            if not piece:
                return None
            pieces.append(piece)
            size -= len(piece)
        return b"".join(pieces)

    def _ended(self) -> BaseException:
        return GamepakError(f"{self.what}: the other process ended without its answer")

    def close(self) -> None:
        for fd in (self.reader, self.writer):
            if fd >= 0:
                os.close(fd)
        self.reader = self.writer = -1


class WorkerNotStarted(GamepakError):
    """The worker could not be forked (or its pipes made): the caller does the work alone."""


class Worker(Channel):
    """In the parent: the forked worker running `body(channel)` and the channel to it. Use as a
    context manager: leaving it normally waits for the worker's end, by an exception kills it."""

    def __init__(self, body: Callable[[Channel], None], what: str) -> None:
        import pickle  # noqa: F401 - imported once here rather than in both processes

        opened: list[int] = []
        try:
            down_reader, down_writer = os.pipe()  # parent -> worker
            opened += [down_reader, down_writer]
            up_reader, up_writer = os.pipe()  # worker -> parent
            opened += [up_reader, up_writer]
            pid = os.fork()
        except BaseException as exc:
            for fd in opened:
                os.close(fd)
            if isinstance(exc, OSError):  # no processes, memory or descriptors left: do it in one
                raise WorkerNotStarted(f"{what}: cannot start a second process: {exc.strerror}") from exc
            raise
        if pid == 0:  # pragma: no cover - runs in the worker (the tests see what it sends)
            os.close(down_writer)
            os.close(up_reader)
            _worker_main(body, Channel(down_reader, up_writer, what))
        os.close(down_reader)
        os.close(up_writer)
        super().__init__(up_reader, down_writer, what)
        self.pid = pid

    def send(self, value: Any) -> None:
        try:
            super().send(value)
        except BrokenPipeError:  # the worker is gone: say why, never "the reader went away"
            self.receive()
            raise self._ended() from None

    def _ended(self) -> BaseException:
        status = self._wait()
        how = f"was killed by signal {-status}" if status < 0 else f"ended with status {status}"
        return GamepakError(f"{self.what}: the worker process {how} before it answered")

    def _wait(self) -> int:
        if self.pid <= 0:
            return 0
        _, status = os.waitpid(self.pid, 0)
        self.pid = 0
        return os.waitstatus_to_exitcode(status)

    def __enter__(self) -> Worker:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        try:
            if kind is not None and self.pid > 0:
                try:  # noqa: SIM105 - contextlib costs start-up time
                    os.kill(self.pid, 9)
                except OSError:
                    pass  # already gone
            self.close()  # a worker still writing or reading meets a closed pipe and stops
            self._wait()
        finally:
            self.pid = 0


def _worker_main(body: Callable[[Channel], None], channel: Channel) -> None:  # pragma: no cover - in the worker
    status = 0
    try:
        body(channel)
    except BaseException as exc:
        status = 1
        try:  # noqa: SIM105 - contextlib costs start-up time
            _send_error(channel, exc)
        except BaseException:
            pass  # the parent is gone, or sees the exit status
    finally:
        os._exit(status)


def _send_error(channel: Channel, exc: BaseException) -> None:  # pragma: no cover - in the worker
    """Send what the worker raised, as itself when it survives pickling (else as a
    GamepakError naming its type)."""
    import pickle

    try:
        payload = pickle.dumps((False, exc), protocol=pickle.HIGHEST_PROTOCOL)
        pickle.loads(payload)  # some exceptions pickle but cannot be made again
    except Exception:
        error = GamepakError(f"{channel.what}: {type(exc).__name__}: {exc}")
        payload = pickle.dumps((False, error), protocol=pickle.HIGHEST_PROTOCOL)
    write_all(channel.writer, _LENGTH.pack(len(payload)) + payload)
