"""Sizes in messages: `size_text(64 << 20)` is "64 MiB", `size_text(512 << 10)` is "512 KiB",
`size_text(1000)` is "1,000 bytes". A limit shown as `limit >> 20` MiB reads "0 MiB" below
1 MiB; this names it in the largest binary unit it reaches instead."""

from __future__ import annotations

_UNITS = (("GiB", 30), ("MiB", 20), ("KiB", 10))


def size_text(size: int) -> str:
    """`size` bytes for a person: whole in the largest unit it reaches ("16 MiB"), else with one
    decimal ("1.5 MiB", rounded down so a limit is never shown larger than it is); under 1 KiB,
    in bytes."""
    for unit, shift in _UNITS:
        if size >= 1 << shift:
            if size % (1 << shift) == 0:
                return f"{size >> shift:,} {unit}"
            tenths = size * 10 >> shift
            return f"{tenths // 10:,}.{tenths % 10} {unit}"
    return f"{size:,} byte{'' if size == 1 else 's'}"
