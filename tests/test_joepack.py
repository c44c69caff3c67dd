"""VDrift JoePack v1: spec bytes, the NOTES' quirks, real samples, round trips, hostile input."""

from __future__ import annotations

import contextlib
import io
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.errors import CorruptArchiveError, FormatLimitError, GamepakError

from conftest import in_process_cli, roundtrip, sample, storable_name


def jpk_bytes(members: list[tuple[bytes, bytes]], name_length: int, name_fields: list[bytes] | None = None) -> bytes:
    """A JoePack built by hand: header, FAT of 8+L bytes per entry, data contiguous."""
    fat_size = 16 + len(members) * (8 + name_length)
    fat = b""
    body = b""
    for index, (name, data) in enumerate(members):
        field = name_fields[index] if name_fields else name.ljust(name_length, b"\0")
        fat += struct.pack("<II", fat_size + len(body), len(data)) + field
        body += data
    return b"JPK01.00" + struct.pack("<II", len(members), name_length) + fat + body


def test_spec_bytes_with_garbage_after_nul_and_full_length_name() -> None:
    data = jpk_bytes(
        [(b"car.joe", b"MODEL"), (b"abcdefghij", b"0123")],
        10,
        [b"car.joe\0\xde\xad", b"abcdefghij"],
    )
    with gamepak.open(io.BytesIO(data)) as pack:
        assert pack.namelist() == ["car.joe", "abcdefghij"]
        assert pack.read("car.joe") == b"MODEL"
        assert pack.read("abcdefghij") == b"0123"
        assert pack.verify() == []


def test_writer_matches_vdrift_packer(tmp_path: Path) -> None:
    path = tmp_path / "pack.jpk"
    with gamepak.create(path) as writer:
        writer.add("a.joe", b"xyz")
        writer.add("longer.joe", b"")
    assert path.read_bytes() == jpk_bytes([(b"a.joe", b"xyz"), (b"longer.joe", b"")], 10)


def test_later_duplicate_wins_like_vdrift() -> None:
    data = jpk_bytes([(b"a", b"old"), (b"a", b"new")], 1)
    with gamepak.open(io.BytesIO(data)) as pack:
        assert pack.read("a") == b"new"


def test_test1_sample_has_no_nul_and_rebuilds_exactly(tmp_path: Path) -> None:
    original = sample("jpk/test1.jpk")
    with gamepak.open(original) as pack:
        assert pack.namelist() == ["testlist.txt"]
        assert pack.header_fields()["name_field_size"] == len("testlist.txt")
        assert pack.read("testlist.txt") == b"This is\na test.\n"
        pack.extractall(tmp_path / "x", manifest=True)
    with gamepak.create(tmp_path / "copy.jpk") as writer:
        writer.add("testlist.txt", tmp_path / "x" / "testlist.txt")
    assert (tmp_path / "copy.jpk").read_bytes() == original.read_bytes()


def test_garage_objects_lists_37_models_and_extracts_them(tmp_path: Path) -> None:
    original = sample("jpk/garage_objects.jpk")
    with gamepak.open(original) as pack:
        assert len(pack.namelist()) == 37
        assert pack.header_fields()["trailing_bytes"] == 12257
        assert pack.verify() == []
        pack.extractall(tmp_path / "x")
        for entry in pack.infolist():
            assert (tmp_path / "x" / entry.name).read_bytes() == pack.read(entry)
            assert entry.size > 16


def test_garage_objects_rebuilds_with_stale_tail(tmp_path: Path) -> None:
    original = sample("jpk/garage_objects.jpk")
    assert in_process_cli("extract", str(original), "-o", str(tmp_path / "x"), "--manifest")[0] == 0
    assert in_process_cli("create", str(tmp_path / "copy.jpk"), str(tmp_path / "x"))[0] == 0
    assert (tmp_path / "copy.jpk").read_bytes() == original.read_bytes()


def test_name_field_option(tmp_path: Path) -> None:
    _, read = roundtrip(tmp_path, "jpk", [("a", b"1")], name_field_size=32)
    assert read == [("a", b"1")]
    with gamepak.open(tmp_path / "roundtrip.jpk") as pack:
        assert pack.header_fields()["name_field_size"] == 32
    with pytest.raises(FormatLimitError):
        gamepak.create(tmp_path / "b.jpk", name_field_size=2).add("abc", b"")


@pytest.mark.parametrize(
    "data, message",
    [
        (b"JPK01.0", "past the end"),
        (b"JPK02.00" + struct.pack("<II", 0, 0), "not a JoePack"),
        (b"JPK01.00" + struct.pack("<II", 0xFFFFFFFF, 12), "past the end"),
        (b"JPK01.00" + struct.pack("<II", 1, 0xFFFFFFFF), "past the end"),
    ],
)
def test_malformed(data: bytes, message: str) -> None:
    with pytest.raises(CorruptArchiveError, match=message):
        gamepak.open(io.BytesIO(data), "jpk")


def test_truncated_member() -> None:
    data = jpk_bytes([(b"a", b"hello world")], 1)[:-3]
    with gamepak.open(io.BytesIO(data)) as pack:
        with pytest.raises(CorruptArchiveError, match="past the end"):
            pack.read("a")


@given(
    st.lists(
        st.tuples(
            st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\0"), min_size=1, max_size=30).filter(
                storable_name
            ),
            st.binary(max_size=200),
        ),
        max_size=10,
    )
)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_roundtrip_random_members(tmp_path: Path, members: list[tuple[str, bytes]]) -> None:
    _, read = roundtrip(tmp_path, "jpk", members)
    assert read == members


@given(st.binary(max_size=300))
@settings(max_examples=200, deadline=None)
def test_garbage_never_escapes_as_foreign_exception(tail: bytes) -> None:
    try:
        with gamepak.open(io.BytesIO(b"JPK01.00" + tail), "jpk") as pack:
            for entry in pack.infolist():
                with contextlib.suppress(GamepakError):
                    pack.read(entry)
    except GamepakError:
        pass


def _hand_made_joepack(stale_tail: bytes = b"") -> bytes:
    """A JoePack from the spec's byte layout, as VDrift's packer writes it: the name field as
    long as the longest name (which then has no NUL), garbage after a shorter name's NUL."""
    members = [(b"testlist.txt", b"This is\na test.\n"), (b"a.joe", b"JOE\x03")]
    field = max(len(name) for name, _ in members)
    offset = 16 + len(members) * (8 + field)
    fat = b""
    for name, data in members:
        stored_name = (name + b"\0xyz")[:field].ljust(field, b"\0") if len(name) < field else name
        fat += struct.pack("<II", offset, len(data)) + stored_name
        offset += len(data)
    return b"JPK01.00" + struct.pack("<II", len(members), field) + fat + b"".join(d for _, d in members) + stale_tail


def test_hand_made_joepack_reads_and_rebuilds_byte_exact(tmp_path: Path) -> None:
    original = tmp_path / "hand.jpk"
    original.write_bytes(_hand_made_joepack(stale_tail=b"stale bytes of an older pack"))
    with gamepak.open(original) as pack:
        assert pack.namelist() == ["testlist.txt", "a.joe"]
        assert pack.header_fields()["name_field_size"] == len("testlist.txt")
        assert pack.header_fields()["trailing_bytes"] == len(b"stale bytes of an older pack")
        assert pack.read("testlist.txt") == b"This is\na test.\n"
        assert pack.verify() == []
    assert in_process_cli("extract", str(original), "-o", str(tmp_path / "x"), "--manifest")[0] == 0
    assert in_process_cli("create", str(tmp_path / "copy.jpk"), str(tmp_path / "x"))[0] == 0
    assert (tmp_path / "copy.jpk").read_bytes() == original.read_bytes()


@pytest.mark.parametrize("name_length", range(1, 13))
def test_entries_placed_whatever_the_name_field_length(name_length: int) -> None:
    """Records of 8 + L bytes: read as strided uint32 fields when L keeps them 4-byte aligned,
    unpacked one by one otherwise; the same entries either way."""
    members = [(bytes([97 + index]) * min(name_length, index + 1), bytes([index]) * (index * 37)) for index in range(6)]
    with gamepak.open(io.BytesIO(jpk_bytes(members, name_length))) as pack:
        entries = pack.infolist()
        assert [(entry.name.encode(), entry.size, entry.index) for entry in entries] == [
            (name, len(data), index) for index, (name, data) in enumerate(members)
        ]
        assert [pack.read(entry) for entry in entries] == [data for _, data in members]
