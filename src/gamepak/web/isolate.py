"""Previews that parse run in a worker process with a memory budget, killed when the page gives up.

A table, a strings file, a model or a scene from a stranger can be small on disk and take
gigabytes to parse (issue 41: a 135 KB pack of four 32 MB tables of 8 M empty elements). A thread
cannot be stopped, and its memory is the server's; a process can be killed, and its address
space is capped (`resource.setrlimit(RLIMIT_AS)`: past `MEMORY_BYTES` more than it started with,
an allocation fails with MemoryError). So the server itself never parses such a file, never
holds more than the results it is sent, and a page that gave up (its time limit, or the client
gone) kills its worker: the work stops with it.

The worker is forked from the server (`core.forked.Worker`, the forked worker the tables' parallel
export uses too): it shares the request's place (its open packs, read with positioned reads on
its own copies of their file descriptors) without re-opening anything, and sends back its
result, or the error it raised, through a pipe. Where fork or `resource` do not exist
(Windows), `available()` is False and the caller runs the work in a thread.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import weakref
from typing import TYPE_CHECKING, Any

from ..core import forked
from ..core.sizes import size_text
from ..errors import GamepakError

if TYPE_CHECKING:
    from collections.abc import Callable

# Address space a preview worker may take on top of what it starts with (the server's own,
# shared copy-on-write): past it, allocations fail and the page says the file is too large.
MEMORY_BYTES = 1 << 30


def available() -> bool:
    """Whether previews can run in a forked, memory-capped worker here."""
    if not hasattr(os, "fork") or sys.platform == "win32":
        return False
    try:
        import resource  # noqa: F401 - POSIX only
    except ImportError:
        return False
    return True


class Worker(forked.Worker):
    """One forked worker running `work(*args)` within `memory` bytes more than it started
    with; `result()` once `ready()`, `kill()` at any time (from another thread than the one
    waiting for `result()` too)."""

    def __init__(self, work: Callable[..., Any], args: tuple[Any, ...], label: str, memory: int) -> None:
        import warnings

        self.label = label
        self.memory = memory
        # kill() (the page, giving up) and result() (a thread, reading) meet here: the pipes are
        # closed by whichever ends last, so a read never meets a descriptor reused meanwhile.
        self._lock = threading.RLock()
        self._reading = False
        self._stopped = False
        with warnings.catch_warnings():
            # Python 3.12 warns about fork in a process with threads; the worker touches no lock
            # another thread may hold (it reads its own copy of the place, then exits).
            warnings.simplefilter("ignore", DeprecationWarning)
            try:
                super().__init__(lambda channel: _run(channel, work, args, label, memory), label)
            except forked.WorkerNotStarted as exc:
                # No process or memory left now: the OSError itself, which the viewer answers
                # with "busy, try again".
                raise exc.__cause__ if isinstance(exc.__cause__, OSError) else exc from None
        _running.add(self)

    def ready(self) -> bool:
        """Whether the worker has sent its answer or ended (its pipe has something to read)."""
        import select

        with self._lock:
            if self.reader < 0:
                return True
            return bool(select.select([self.reader], [], [], 0)[0])

    def result(self) -> Any:
        """The worker's result, or the error it raised (raised here: a GamepakError saying it
        ran out of memory, or that it died before answering)."""
        with self._lock:
            if self._stopped:
                raise GamepakError(f"{self.label}: the preview was stopped")
            self._reading = True
        try:
            return self.receive()
        finally:
            with self._lock:
                self._reading = False
                if self._stopped:
                    self.close()

    def kill(self) -> None:
        """Stop the worker now (idempotent) and reap it."""
        with self._lock:
            self._stopped = True
            if self.pid > 0:
                try:  # noqa: SIM105 - contextlib costs start-up time
                    os.kill(self.pid, 9)
                except OSError:
                    pass  # already gone
            self._wait()
            if not self._reading:  # else the reading thread closes them when its read ends
                self.close()
        _running.discard(self)

    def _wait(self) -> int:
        with self._lock:  # the reading thread (its answer missing) and kill() may both reap
            return super()._wait()


# Workers not yet killed: a server that exits (Ctrl-C) kills them rather than leave them parsing.
_running: weakref.WeakSet[Worker] = weakref.WeakSet()


def _kill_running() -> None:
    for worker in list(_running):
        worker.kill()


atexit.register(_kill_running)


def _run(  # pragma: no cover - runs in the worker (the tests see what it sends)
    channel: forked.Channel, work: Callable[..., Any], args: tuple[Any, ...], label: str, memory: int
) -> None:
    """In the worker: cap the address space, run the work, send its result. What it raises
    reaches the server as itself (`core.forked`); these say why in the viewer's words."""
    import resource

    start = _address_space()
    if start is not None:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = start + memory if hard == resource.RLIM_INFINITY else min(hard, start + memory)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    too_large = f"{label}: too large to preview: it needs more than the {size_text(memory)} of memory a preview may use"
    # The errors are raised after their `except` block: the one caught, its traceback and the
    # frames holding what filled the memory are gone by then, so the error can be sent.
    failure = None
    try:
        result = work(*args)
    except MemoryError:
        failure = too_large
    except RecursionError as exc:
        failure = f"{label}: too deeply nested to preview ({exc})"
    except (GamepakError, OSError):
        raise
    except Exception as exc:  # a bug: the page names it, the server's console shows no traceback
        failure = f"{label}: the preview failed: {type(exc).__name__}: {exc}"
    if failure is not None:
        raise GamepakError(failure)
    try:
        channel.send(result)
    except MemoryError:
        failure = too_large
    if failure is not None:
        del result
        raise GamepakError(failure)


def _address_space() -> int | None:
    """This process's virtual size in bytes (what RLIMIT_AS counts), None when unknown."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            pages = int(handle.read(64).split()[0])
        return pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        pass
    import resource

    # Elsewhere (macOS, BSD) no cheap way to read it: the peak resident size, with room for
    # the mappings it does not count.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak * (1 if sys.platform == "darwin" else 1024) + (1 << 30)
