"""Helpers that record and restore the layout choices of a file for byte-exact rebuilds."""

from __future__ import annotations

import base64

from .errors import GamepakError

TYPE_CHECKING = False

if TYPE_CHECKING:
    from .archive import Output
    from .source import Source

# Filler kept in a manifest is inlined; past this, a rebuild gets zeros instead (and says so).
MAX_FILL_BYTES = 16 << 20


def align_up(value: int, alignment: int) -> int:
    """`value` rounded up to a multiple of `alignment`."""
    return -(-value // alignment) * alignment if alignment > 1 else value


def detect_alignment(offsets: list[int], limit: int = 4096) -> int:
    """The largest power of two up to `limit` that divides every offset (1 if none)."""
    alignment = limit
    while alignment > 1 and any(offset % alignment for offset in offsets):
        alignment //= 2
    return alignment if offsets else 1


def fill_bytes(source: Source, covered: list[tuple[int, int]]) -> list[list[int | str]]:
    """The non-zero bytes of the file outside the `(offset, size)` ranges, as
    `[offset, base64]` runs, so a rebuild can restore gaps and trailing garbage."""
    runs: list[list[int | str]] = []
    position = 0
    total = 0
    for start, size in [*sorted(covered), (source.size, 0)]:
        start = max(0, min(start, source.size))
        if start > position:
            gap = source.pread(start - position, position)
            stripped = gap.strip(b"\0")
            if stripped:
                first = len(gap) - len(gap.lstrip(b"\0"))
                total += len(stripped)
                if total > MAX_FILL_BYTES:
                    raise GamepakError(
                        f"{source.name}: more than {MAX_FILL_BYTES} bytes lie outside the members; "
                        "a manifest cannot keep them"
                    )
                runs.append([position + first, base64.b64encode(stripped).decode()])
        position = max(position, min(start + max(size, 0), source.size))
    return runs


def restore_fill(out: Output, runs: list[list[int | str]]) -> None:
    """Write back what `fill_bytes` recorded."""
    for offset, encoded in runs:
        out.pwrite(base64.b64decode(str(encoded)), int(offset))
