"""Lazy member names (PAK, JoePack): decoded only when asked, exactly as one by one."""

from __future__ import annotations

import io
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

import gamepak
from gamepak.archive import decode_name, decode_name_fields


def pak_of(fields: list[bytes]) -> bytes:
    records = b"".join(field.ljust(56, b"\0") + struct.pack("<ii", 12, 0) for field in fields)
    return b"PACK" + struct.pack("<ii", 12, len(records)) + records


def jpk_of(fields: list[bytes], width: int) -> bytes:
    start = 16 + len(fields) * (8 + width)
    records = b"".join(struct.pack("<II", start, 0) + field.ljust(width, b"\0") for field in fields)
    return b"JPK01.00" + struct.pack("<II", len(fields), width) + records


FIELDS = [b"plain.txt", "caf\u00e9/\u20ac.dat".encode(), b"bad\xff\xfe.bin", b"name\0garbage", b"x" * 56, b""]


def test_pak_names_decode_like_one_by_one() -> None:
    archive = gamepak.open(io.BytesIO(pak_of(FIELDS)), "pak")
    assert len(archive) == len(FIELDS)
    assert archive.namelist() == [decode_name(field[:56].partition(b"\0")[0]) for field in FIELDS]


def test_jpk_names_decode_like_one_by_one() -> None:
    archive = gamepak.open(io.BytesIO(jpk_of(FIELDS, 60)), "jpk")
    assert len(archive) == len(FIELDS)
    assert archive.namelist() == [decode_name(field.partition(b"\0")[0]) for field in FIELDS]
    assert [entry.name for entry in archive.infolist()] == archive.namelist()


def test_pak_lookup_without_building_entries() -> None:
    data = pak_of([b"a.txt", b"dup", b"dup", b"b/c.txt"])
    archive = gamepak.open(io.BytesIO(data), "pak")
    assert archive.getinfo("dup").index == 1  # Quake loads the first copy
    assert archive.getinfo("b/c.txt").index == 3
    assert archive._entries is None  # answered from the raw directory
    assert "a.txt" in archive and "a.tx" not in archive and "zzz" not in archive
    with pytest.raises(gamepak.MemberNotFoundError):
        archive.getinfo("c.txt")  # a suffix of a name is not a name
    archive.infolist()
    assert archive.getinfo("dup").index == 1


@given(st.lists(st.binary(max_size=12), max_size=20), st.integers(min_value=1, max_value=16))
def test_name_fields_match_one_by_one(fields: list[bytes], width: int) -> None:
    for start in (0, 8):
        size = 8 + width
        raw = b"".join(
            (field[:width].ljust(width, b"\0") + b"\x01" * 8) if start == 0 else (b"\x02" * 8 + field[:width].ljust(width, b"\0"))
            for field in fields
        )
        expected = [decode_name(field[:width].partition(b"\0")[0]) for field in fields]
        assert decode_name_fields(raw, size, start, width) == expected
