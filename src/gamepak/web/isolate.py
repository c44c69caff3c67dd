"""Previews that parse run in a worker process with a memory budget, killed when the page gives up.

A table, a strings file, a model or a scene from a stranger can be small on disk and take
gigabytes to parse (issue 41: a 135 KB pack of four 32 MB tables of 8 M empty elements). A thread
cannot be stopped, and its memory is the server's; a process can be killed, and its address
space is capped (`resource.setrlimit(RLIMIT_AS)`: past `MEMORY_BYTES` more than it started with,
an allocation fails with MemoryError). So the server itself never parses such a file, never
holds more than the results it is sent, and a page that gave up (its time limit, or the client
gone) kills its worker: the work stops with it.

The worker is forked from the server: it shares the request's place (its open packs, read with
positioned reads on its own copies of their file descriptors) without re-opening anything, and
sends back its result, or the error it raised, through a pipe. Where fork or `resource` do not
exist (Windows), `Isolated.available` is False and the caller runs the work in a thread.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from ..errors import GamepakError

if TYPE_CHECKING:
    from collections.abc import Callable
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

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


class Worker:
    """One forked worker running `work(*args)`; `result()` once `ready()`, `kill()` at any time."""

    def __init__(self, work: Callable[..., Any], args: tuple[Any, ...], label: str, memory: int) -> None:
        import multiprocessing
        import warnings

        self.label = label
        self.memory = memory
        context = multiprocessing.get_context("fork")
        self._receive, send = context.Pipe(duplex=False)
        self.process: BaseProcess = context.Process(
            target=_run, args=(send, work, args, memory), name="gamepak-preview", daemon=True
        )
        with warnings.catch_warnings():
            # Python 3.12 warns about fork in a process with threads; the worker touches no lock
            # another thread may hold (it reads its own copy of the place, then exits).
            warnings.simplefilter("ignore", DeprecationWarning)
            self.process.start()
        send.close()  # the worker holds the only writing end: its death ends the pipe

    def ready(self) -> bool:
        """Whether the worker has sent its answer or ended."""
        return self._receive.poll() or not self.process.is_alive()

    def result(self) -> Any:
        """The worker's result, or the error it raised (raised here), or a GamepakError saying
        it ran out of memory or died."""
        try:
            outcome = self._receive.recv()
        except (EOFError, OSError):
            self.process.join(1)
            code = self.process.exitcode
            raise GamepakError(f"{self.label}: the preview stopped (worker exit code {code})") from None
        kind = outcome[0]
        if kind == "ok":
            return outcome[1]
        if kind == "memory":
            raise GamepakError(
                f"{self.label}: too large to preview: it needs more than the {self.memory >> 20} MiB of memory "
                "a preview may use"
            )
        if kind == "oserror":
            raise OSError(*outcome[1:])
        _, error_class, message = outcome
        try:
            error = error_class(message)
        except Exception:  # an error class whose constructor takes other arguments
            error = GamepakError(message)
        raise error

    def kill(self) -> None:
        """Stop the worker now (idempotent) and reap it."""
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self._receive.close()


def _run(send: Connection, work: Callable[..., Any], args: tuple[Any, ...], memory: int) -> None:
    """In the worker: cap the address space, run the work, send what came of it."""
    import resource

    start = _address_space()
    if start is not None:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = start + memory if hard == resource.RLIM_INFINITY else min(hard, start + memory)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        outcome: tuple[Any, ...] = ("ok", work(*args))
    except MemoryError:
        outcome = ("memory",)
    except OSError as exc:
        outcome = ("oserror", exc.errno, exc.strerror, exc.filename)
    except GamepakError as exc:
        outcome = ("error", type(exc), str(exc))
    except RecursionError as exc:
        outcome = ("error", GamepakError, f"too deeply nested to preview ({exc})")
    try:
        send.send(outcome)
    except MemoryError:
        send.send(("memory",))
    except Exception as exc:  # a result or error that cannot be pickled
        send.send(("error", GamepakError, f"the preview's answer cannot be sent: {type(exc).__name__}"))
    send.close()


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
