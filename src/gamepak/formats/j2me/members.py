"""Names for the members of J2ME packs: index names, and extensions guessed from content.

Members have no names: they are listed as `0`, `1`, `2`... (no zero padding) and extracted with
an extension guessed from their content (`3.png`, `0.txt`, `7.bin`). Writers take names whose
part before the first dot is the member index (`0`, `0.png`, `007.bin`) and order members by it.

The pack classes (`packs`) and the string tables (`string_tables`, which guess what a member
handed to them holds) both need these, so they live here, below both.
"""

from __future__ import annotations

from ...core.archive import PendingMember
from ...errors import FormatLimitError

# Bytes read to guess a member's extension.
CONTENT_PROBE = 64 << 10


def _looks_like_text(data: bytes) -> bool:
    """ISO-8859-1 text (0x92 included), possibly NUL-terminated strings."""
    if not data or not data.strip(b"\0 \t\r\n"):
        return False
    if data.count(0) * 4 > len(data):
        return False
    # Deleting every allowed byte (in C) leaves nothing in text: a Python loop over 64 KiB took
    # about 1.4 ms a member.
    return not data.translate(None, _TEXT_BYTES)


# Printable ISO-8859-1 (no C0/C1 controls), NUL, tab, newlines, and 0x92 (the games' apostrophe).
_TEXT_BYTES = bytes(
    byte for byte in range(256) if (byte >= 0x20 and not 0x7F <= byte < 0xA0) or byte in (0, 0x09, 0x0A, 0x0D, 0x92)
)


def content_extension(head: bytes, complete: bool) -> str:
    """The file extension that says what a member holds (`.bin` when unknown)."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return ".png"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return ".gif"
    if head.startswith(b"\xff\xd8\xff"):
        return ".jpg"
    if head.startswith(b"MThd"):
        return ".mid"
    if head.startswith(b"RIFF") and head[8:12] == b"WAVE":
        return ".wav"
    if head.startswith(b"OggS"):
        return ".ogg"
    if head.startswith(b"#!AMR"):
        return ".amr"
    if head.startswith(b"ID3"):
        return ".mp3"
    if _looks_like_text(head) and (not complete or b"\0" not in head or head.endswith(b"\0")):
        return ".txt"
    return ".bin"


def member_index(name: str) -> int:
    """The index a member name stands for: the digits before the first dot (`12.png` -> 12)."""
    stem = name.partition(".")[0]
    if "/" in name or "\\" in name or not stem.isascii() or not stem.isdigit():
        raise FormatLimitError(
            f"member name {name!r}: J2ME packs have no names; name members by their index "
            "(0, 1, 2... with any extension, e.g. 0.png)"
        )
    return int(stem)


def order_by_index(members: list[PendingMember]) -> list[PendingMember]:
    """The members sorted by the index in their names; gaps and duplicates are refused."""
    by_index: dict[int, PendingMember] = {}
    for member in members:
        index = member_index(member.name)
        if index in by_index:
            raise FormatLimitError(f"members {by_index[index].name!r} and {member.name!r} both claim index {index}")
        by_index[index] = member
    missing = [index for index in range(len(by_index)) if index not in by_index]
    if missing:
        raise FormatLimitError(
            f"member index {missing[0]} is missing: J2ME members are numbered 0..{len(by_index) - 1} "
            f"without gaps (highest given: {max(by_index)})"
        )
    return [by_index[index] for index in range(len(by_index))]
