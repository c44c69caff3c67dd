"""The cyclic garbage collector paused while one command builds many objects at once (hundreds
of table trees, a track's thousands of meshes and nodes): every collection on the way walks all
the tracked objects made so far, which costs more the more there are. Reference counting frees
objects as usual meanwhile; only cycles wait for the collector to run again."""

from __future__ import annotations

import contextlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The collector paused for the code inside (and left as it was found: a pause inside a
    pause changes nothing). Nothing is frozen afterwards (`gc.freeze` would keep every cycle
    alive at that moment for good, a leak in a long-running program): a pause should span the
    whole of the work that keeps the many objects, and they die with it."""
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
