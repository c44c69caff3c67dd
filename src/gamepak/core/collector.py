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
def collector_paused(*, freeze: bool = False) -> Iterator[None]:
    """The collector paused for the code inside. With `freeze`, what exists at the end is moved
    out of the collector's sight (`gc.freeze`), so the next collection does not walk it all once
    more: only for objects that hold no cycles, which would then never be collected."""
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if freeze:
                gc.freeze()
            gc.enable()
