"""`string_tables.binary_reason` (why a blob is not text) gives the same answers as the byte loop
it replaced, on hand-made blobs and on hypothesis inputs built to reach every branch."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamepak.formats.j2me import string_tables
from gamepak.formats.j2me.members import CONTENT_PROBE, content_extension
from gamepak.formats.j2me.sprite.model import is_sprite
from gamepak.formats.j2me.string_tables import CONTROL_SHARE, HEAD_SIZE, TEXT_CONTROLS, _wordy, binary_reason


def reference_binary_reason(data: bytes) -> str | None:
    """The byte-loop version, as it was before it became a translate and a regex."""
    if is_sprite(data):
        return "a Gameloft sprite (BSPRITE), not text: `gamepak sprite` reads it"
    extension = content_extension(data[:CONTENT_PROBE], complete=len(data) <= CONTENT_PROBE)
    if extension not in (".txt", ".bin"):
        return f"{extension[1:].upper()} data, not text"
    if not data:
        return "empty"
    controls = [
        position
        for position, byte in enumerate(data)
        if byte and (byte < 0x20 or 0x7F <= byte < 0xA0) and byte not in TEXT_CONTROLS
    ]
    strings = data.count(0)
    empty = data[:-1].split(b"\0").count(b"")
    head_controls = [position for position in controls if position < HEAD_SIZE]
    if len(head_controls) > 1:
        return (
            f"binary data: it starts with control characters (0x{data[head_controls[0]]:02x} at byte "
            f"{head_controls[0]}, 0x{data[head_controls[1]]:02x} at byte {head_controls[1]}): a table in front of "
            "the strings?"
        )
    if controls and len(controls) > CONTROL_SHARE * len(data):
        first = controls[0]
        return (
            f"binary data: {len(controls)} of its {len(data)} bytes are control characters "
            f"(the first, 0x{data[first]:02x}, at byte {first})"
        )
    if strings > 4 and empty * 2 > strings and not _wordy(data):
        return f"binary data: {empty} of its {strings} NUL-separated pieces are empty"
    return None


CONTROLS = bytes(b for b in range(1, 256) if (b < 0x20 or 0x7F <= b < 0xA0) and b not in TEXT_CONTROLS)
# Pieces that steer the blobs toward each branch: words, NULs (empty strings), every kind of
# control byte, the allowed ones (tab, newlines, 0x92), high letters, signatures.
PIECES = st.one_of(
    st.sampled_from([b"word", b"Hello world", b"\xe9t\xe9", b"ab", b"\0", b"\0\0\0", b"\t", b"\r\n", b"\x92"]),
    st.sampled_from([bytes([b]) for b in CONTROLS]),
    st.sampled_from([b"\x89PNG\r\n\x1a\n", b"MThd", b"GIF89a"]),
    st.binary(max_size=8),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=40).map(b"".join))
def test_same_answers_as_the_byte_loop(data: bytes) -> None:
    assert binary_reason(data) == reference_binary_reason(data)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=600), st.binary(min_size=1, max_size=64))
def test_same_answers_on_long_text_with_controls(text: bytes, noise: bytes) -> None:
    # Mostly text with a share of controls around CONTROL_SHARE, past HEAD_SIZE.
    letters = bytes(b % 26 + 0x61 for b in text)
    data = b"A string\0" * 3 + letters + noise + b"\0"
    assert binary_reason(data) == reference_binary_reason(data)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x01\x02rest of it\0",  # two controls in the head
        b"0123456789abcdef\x01\x02",  # controls just past the head
        b"Hello\0" + b"y" * 10 + b"\x7f" * 2 + b"x" * 50 + b"\0",  # 2 of 69: over the share
        b"Hello\0" + b"\x7f" + b"x" * 60 + b"\0",  # 1 of 67: under it
        b"\0\0\0\0\0\0\0\0\0\0",  # empty pieces
        b"one\0\0\0two\0\0\0six\0\0\0",  # empty pieces, but wordy
        b"\x92quoted\x92\tand\r\n\0",  # allowed controls only
        b"\x89PNG\r\n\x1a\n" + b"\0" * 8,
    ],
)
def test_same_answers_on_hand_made_blobs(data: bytes) -> None:
    assert binary_reason(data) == reference_binary_reason(data)


def test_the_branches_are_reached() -> None:
    """Each message the function gives, so that the comparisons above are not all None."""
    assert "starts with control characters (0x01 at byte 0, 0x02 at byte 1)" in str(binary_reason(b"\x01\x02ab\0"))
    assert "2 of its 68 bytes are control characters (the first, 0x7f, at byte 16)" in str(
        binary_reason(b"Hello\0" + b"y" * 10 + b"\x7f" * 2 + b"x" * 50)
    )
    assert "10 of its 10 NUL-separated pieces are empty" in str(binary_reason(b"\0" * 10))
    assert binary_reason(b"Hello\0" + b"\x7f" + b"x" * 60 + b"\0") is None
    assert string_tables._CONTROL_BYTES == CONTROLS
