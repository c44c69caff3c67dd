"""An .rfglocatext in the game's layout (strings back to back after the table, in entry order)
is checked in bulk (`_quick_spans`, issue 48.4); anything else goes through `scan`'s entry by
entry checks and their messages. The bulk checks accept only what `scan` reads without a
problem, and read the same entries."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamepak.formats.rfg.locatext import LocaText, _quick_spans, scan

from conftest import sample

HEADER = struct.Struct("<III")


def game_file(strings: list[bytes], hashes: list[int]) -> bytes:
    """A file in the game's layout holding the stored strings `strings` (each with its NUL)."""
    position = HEADER.size + 12 * len(strings)
    table = b""
    for hash_value, raw in zip(hashes, strings):
        table += struct.pack("<III", hash_value, position, len(raw))
        position += len(raw)
    return HEADER.pack(0xA84C7F73, 3, len(strings)) + table + b"".join(strings)


def _field(data: bytes, index: int, field: int, value: int) -> bytes:
    changed = bytearray(data)
    struct.pack_into("<I", changed, HEADER.size + 12 * index + 4 * field, value)
    return bytes(changed)


def _spans_agree_with_scan(data: bytes) -> bool:
    """Whether the bulk checks take `data`; when they do, `scan` reads it without a problem
    and the same entries, at the same places."""
    spans = _quick_spans(data)
    if spans is None:
        return False
    entries, problems = scan(data)
    assert problems == []
    hashes, offsets, ends = spans
    assert [(entry.hash, entry.stored_at, entry.stored_at + len(entry.raw)) for entry in entries] == list(
        zip(hashes, offsets, ends)
    )
    assert [entry.raw for entry in LocaText.parse(data).entries] == [entry.raw for entry in entries]
    return True


UNITS = st.sampled_from(["a", "ب", "\0", "\ud83d\ude00"]).map(lambda text: text.encode("utf-16-le", "surrogatepass"))
STRINGS = st.lists(st.lists(UNITS, max_size=4).map(lambda units: b"".join(units) + b"\0\0"), max_size=6)


@settings(max_examples=300, deadline=None)
@given(
    strings=STRINGS,
    damage=st.sampled_from(["none", "length", "offset", "hash", "last byte", "byte before", "lone", "tail"]),
    where=st.integers(0, 5),
    value=st.integers(0, 40),
)
def test_the_bulk_checks_take_only_what_scan_reads_cleanly(
    strings: list[bytes], damage: str, where: int, value: int
) -> None:
    data = game_file(strings, [1000 + number for number in range(len(strings))])
    if strings:
        index = where % len(strings)
        _, offset, length = struct.unpack_from("<III", data, HEADER.size + 12 * index)
        if damage == "length":
            data = _field(data, index, 2, value)
        elif damage == "offset":
            data = _field(data, index, 1, value + offset - 20)
        elif damage == "hash":
            data = _field(data, index, 0, 1000 + value % len(strings))
        elif damage in ("last byte", "byte before"):
            changed = bytearray(data)
            changed[offset + length - (1 if damage == "last byte" else 2)] = 0x41
            data = bytes(changed)
        elif damage == "lone":
            data = data[:offset] + b"\x00\xd8" + data[offset + 2 :] if length > 2 else data
    if damage == "tail":
        data += b"\0\0"
    took = _spans_agree_with_scan(data)
    if damage == "none" and all(b"\0\0" not in raw[:-2][::2] for raw in strings):
        assert took or any(raw[:-2].count(b"\0\0") for raw in strings)


def _entry(data: bytes, index: int) -> tuple[int, int, int]:
    return struct.unpack_from("<III", data, HEADER.size + 12 * index)  # type: ignore[return-value]


def _empty_second(data: bytes) -> bytes:
    """Entry 1 made 0 bytes long, its bytes given to entry 0: as many NULs as strings still,
    a NUL before every end, only the 0 tells."""
    _, _, length0 = _entry(data, 0)
    _, offset1, length1 = _entry(data, 1)
    return _field(_field(_field(data, 0, 2, length0 + length1), 1, 1, offset1 + length1), 1, 2, 0)


def _odd_second(data: bytes) -> bytes:
    """Entry 1 one byte longer, entry 2 one shorter (the strings still tile the file, each end
    still has 2 zero bytes before it: entry 2 starts with U+0100): only the odd lengths tell."""
    _, _, length1 = _entry(data, 1)
    _, offset2, length2 = _entry(data, 2)
    return _field(_field(_field(data, 1, 2, length1 + 1), 2, 1, offset2 + 1), 2, 2, length2 - 1)


def _unit(data: bytes, index: int, number: int, value: int) -> bytes:
    """Entry `index`'s string with its code unit `number` set to `value`."""
    _, offset, _ = _entry(data, index)
    changed = bytearray(data)
    struct.pack_into("<H", changed, offset + 2 * number, value)
    return bytes(changed)


@pytest.mark.parametrize(
    "damage",
    [
        _empty_second,
        _odd_second,
        lambda data: data[:-1] + b"A",  # the last string's NUL
        lambda data: data[:-2] + b"A\0",
        lambda data: _field(data, 1, 0, 7),  # a hash twice
        lambda data: _field(data, 2, 1, _entry(data, 2)[1] - 2),  # strings overlapping
        lambda data: data + b"\0\0",  # bytes after the last string
        lambda data: data + b"A\0",  # ... holding no NUL
        lambda data: _unit(data, 0, 1, 0),  # a NUL inside a string
        # A string's last unit not a NUL, a NUL inside it instead (as many NULs as strings):
        # its last byte but one is not 0, or its last byte.
        lambda data: _unit(_unit(data, 0, 1, 0), 0, 2, 0x79),
        lambda data: _unit(_unit(data, 0, 1, 0), 0, 2, 0x4100),
    ],
)
def test_damage_the_bulk_checks_leave_to_scan(damage: object) -> None:
    strings = [text.encode("utf-16-le") + b"\0\0" for text in ("ab", "c", "\u0100d", "e")]
    data = game_file(strings, [7, 8, 9, 10])
    assert _spans_agree_with_scan(data)
    assert not _spans_agree_with_scan(damage(data))  # type: ignore[operator]


def test_one_string_and_none() -> None:
    assert _spans_agree_with_scan(game_file([b"a\0\0\0"], [5]))
    assert _spans_agree_with_scan(game_file([], []))
    assert not _spans_agree_with_scan(game_file([], []) + b"\0\0")


def test_the_game_s_arabic_file_is_read_in_bulk() -> None:
    data = sample("rfg/locatexts_ar_eg.rfglocatext").read_bytes()
    assert _spans_agree_with_scan(data)
