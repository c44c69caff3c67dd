"""Helpers that record and restore the layout choices of a file for byte-exact rebuilds."""

from __future__ import annotations

from ..errors import GamepakError

TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from .source import Source
    from .writer import Output

# Filler kept in a manifest is inlined; past this, a rebuild gets zeros instead (and says so).
MAX_FILL_BYTES = 16 << 20


def encode_blob(data: bytes) -> str:
    """Bytes as base64 text for a manifest (binascii: `base64` would import `re`, ~6 ms; imported
    here, since every format imports this module and only manifests need it)."""
    import binascii

    return binascii.b2a_base64(data, newline=False).decode("ascii")


def decode_blob(text: str) -> bytes:
    """The bytes `encode_blob` encoded; a malformed manifest gives a GamepakError."""
    import binascii

    try:
        return binascii.a2b_base64(text)
    except (binascii.Error, ValueError) as exc:
        raise GamepakError(f"malformed base64 in manifest: {exc}") from exc


def align_up(value: int, alignment: int) -> int:
    """`value` rounded up to a multiple of `alignment`."""
    return -(-value // alignment) * alignment if alignment > 1 else value


def terminated_offsets(strings: Sequence[bytes]) -> list[int]:
    """Where each of `strings` starts in a block holding them in order, each followed by one NUL
    (an RFG packfile's name block, a J2ME string table)."""
    offsets = []
    position = 0
    for raw in strings:
        offsets.append(position)
        position += len(raw) + 1
    return offsets


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
                runs.append([position + first, encode_blob(stripped)])
        position = max(position, min(start + max(size, 0), source.size))
    return runs


def restore_fill(out: Output, runs: list[list[int | str]]) -> None:
    """Write back what `fill_bytes` recorded."""
    for offset, encoded in runs:
        out.pwrite(decode_blob(str(encoded)), int(offset))


def write_members_exactly(out: Output, members: list[Any], exact: dict[str, Any], *, strict: bool = True) -> None:
    """An exact rebuild's last step: each member at the offset `exact` records for it, then the
    bytes between them (`restore_fill`), the file cut to its recorded size."""
    for member, offset in zip(members, exact["offsets"], strict=strict):
        out.seek(offset)
        out.write_member(member)
    out.flush()
    restore_fill(out, exact.get("fill", []))
    out.truncate(exact["file_size"])
