"""What the streaming tests of patch apply, make and export share: sizes, reproducible noise,
lightly changed copies, gamepak's leftover temporaries, and the traced peak of an action."""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gamepak.core.atomic import is_temporary_name

KIB = 1 << 10
MIB = 1 << 20


def noise(seed: int, size: int) -> bytes:
    """`size` random bytes, the same for the same seed (nothing compresses them)."""
    return random.Random(seed).randbytes(size)


def touched(data: bytes) -> bytes:
    """`data` with a few bytes changed: `make` stores it as a zstd delta."""
    changed = bytearray(data)
    for offset in range(0, len(changed), 9000):
        changed[offset] ^= 0x5A
    return bytes(changed)


def strays(*folders: Path) -> list[str]:
    """gamepak's temporaries (files or scratch folders) in `folders`."""
    return [name for folder in folders for name in os.listdir(folder) if is_temporary_name(name)]


def peak_while(action: Callable[[], object]) -> int:
    """The most memory Python allocations held (tracemalloc) while `action` ran."""
    import tracemalloc

    tracemalloc.start()
    try:
        action()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def forbid_whole_reads(monkeypatch: Any, limit: int = KIB) -> None:
    """Any member read whole (`Archive.read`) past `limit` bytes fails the test."""
    from gamepak.core.archive import Archive

    read = Archive.read

    def whole(archive: Archive, member: object) -> bytes:
        data = read(archive, member)  # type: ignore[arg-type]
        assert len(data) <= limit, f"{member}: read whole"
        return data

    monkeypatch.setattr(Archive, "read", whole)
