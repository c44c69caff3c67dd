"""The cyclic garbage collector paused while one command builds many objects at once (hundreds
of table trees, a track's thousands of meshes and nodes): every collection on the way walks all
the tracked objects made so far, which costs more the more there are. Reference counting frees
objects as usual meanwhile; only cycles wait for the collector to run again."""

from __future__ import annotations


class collector_paused:
    """The collector paused for the code inside (`with collector_paused():`), and left as it
    was found: a pause inside a pause changes nothing. Nothing is frozen afterwards
    (`gc.freeze` would keep every cycle alive at that moment for good, a leak in a long-running
    program): a pause should span the whole of the work that keeps the many objects, and they
    die with it. A class rather than `contextlib.contextmanager`: extraction uses it, and
    `gamepak extract` does not otherwise import contextlib (start-up)."""

    __slots__ = ("_enabled",)

    def __enter__(self) -> None:
        import gc

        self._enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc_info: object) -> None:
        if self._enabled:
            import gc

            gc.enable()
