"""Quake / Quake II PAK: spec bytes, real sample, round trips, limits, hostile input."""

from __future__ import annotations

import contextlib
import io
import struct
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.errors import CorruptArchiveError, FormatLimitError, GamepakError

from conftest import in_process_cli, roundtrip, sample, storable_name


def pak_bytes(members: list[tuple[bytes, bytes]], directory_length: int | None = None) -> bytes:
    """A PAK built by hand as the spec draws it: header, data from 12, directory last."""
    body = b""
    records = b""
    for name, data in members:
        records += name.ljust(56, b"\0") + struct.pack("<ii", 12 + len(body), len(data))
        body += data
    length = len(records) if directory_length is None else directory_length
    return b"PACK" + struct.pack("<ii", 12 + len(body), length) + body + records


def test_spec_example_layout() -> None:
    data = pak_bytes([(b"maps/match1.bsp", b"IBSP&\0\0\0"), (b"textures/e2u3/wndow1_2.wal", b"e2u3")])
    with gamepak.open(io.BytesIO(data)) as pak:
        assert pak.namelist() == ["maps/match1.bsp", "textures/e2u3/wndow1_2.wal"]
        first, second = pak.infolist()
        assert (first.offset, first.size, first.stored_size) == (12, 8, None)
        assert (second.offset, second.size) == (20, 4)
        assert pak.read("textures/e2u3/wndow1_2.wal") == b"e2u3"
        assert pak.header_fields()["directory_offset"] == 24


def test_directory_remainder_is_ignored_like_the_engines() -> None:
    data = pak_bytes([(b"a.txt", b"hello")], directory_length=64 + 10)
    data += b"\0" * 10
    with gamepak.open(io.BytesIO(data), "pak") as pak:
        assert pak.namelist() == ["a.txt"]
        assert any("not a multiple of 64" in problem for problem in pak.verify())


def test_writer_matches_ids_packer_layout(tmp_path: Path) -> None:
    path = tmp_path / "out.pak"
    with gamepak.create(path) as writer:
        writer.add("maps/match1.bsp", b"IBSP&\0\0\0")
        writer.add("textures/e2u3/wndow1_2.wal", b"e2u3")
    assert path.read_bytes() == pak_bytes(
        [(b"maps/match1.bsp", b"IBSP&\0\0\0"), (b"textures/e2u3/wndow1_2.wal", b"e2u3")]
    )


def test_writer_alignment_and_directory_first(tmp_path: Path) -> None:
    _, read = roundtrip(tmp_path, "pak", [("a", b"1"), ("b", b"22"), ("c", b"")], align=16, directory="start")
    assert read == [("a", b"1"), ("b", b"22"), ("c", b"")]
    with gamepak.open(tmp_path / "roundtrip.pak") as pak:
        assert all(entry.offset % 16 == 0 for entry in pak.infolist())
        assert pak.header_fields()["directory_offset"] == 12
        assert pak.verify() == []


def test_real_sample_lists_reads_and_verifies() -> None:
    with gamepak.open(sample("pak/quakespasm.pak")) as pak:
        assert len(pak) == 8
        assert pak.namelist()[0] == "gfx/conback.lmp"
        assert "default.cfg" in pak
        assert pak.verify() == []
        assert all(entry.offset % 4 == 0 for entry in pak.infolist())
        config = pak.read("default.cfg")
        assert len(config) == pak.getinfo("default.cfg").size


def test_real_sample_rebuilds_byte_exact_through_manifest(tmp_path: Path) -> None:
    original = sample("pak/quakespasm.pak")
    code, _, err = in_process_cli("extract", str(original), "-o", str(tmp_path / "x"), "--manifest")
    assert code == 0, err
    code, _, err = in_process_cli("create", str(tmp_path / "copy.pak"), str(tmp_path / "x"))
    assert code == 0, err
    assert (tmp_path / "copy.pak").read_bytes() == original.read_bytes()


def test_edited_member_keeps_layout_choices(tmp_path: Path) -> None:
    original = sample("pak/quakespasm.pak")
    with gamepak.open(original) as pak:
        pak.extractall(tmp_path / "x", manifest=True)
    (tmp_path / "x" / "default.cfg").write_bytes(b"bind x +attack\n")
    code, _, err = in_process_cli("create", str(tmp_path / "edited.pak"), str(tmp_path / "x"))
    assert code == 0, err
    with gamepak.open(tmp_path / "edited.pak") as pak:
        assert pak.read("default.cfg") == b"bind x +attack\n"
        assert pak.namelist() == gamepak.open(original).namelist()
        assert all(entry.offset % 4 == 0 for entry in pak.infolist())
        assert pak.verify() == []


def test_name_limit(tmp_path: Path) -> None:
    writer = gamepak.create(tmp_path / "x.pak")
    writer.add("a" * 55, b"")
    with pytest.raises(FormatLimitError, match="at most 55"):
        writer.add("a" * 56, b"")
    writer.close()


def test_member_count_warning(tmp_path: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with gamepak.create(tmp_path / "many.pak") as writer:
            for index in range(2049):
                writer.add(f"f{index}", b"")
    assert any("2048" in str(w.message) for w in caught)


def test_first_duplicate_wins_like_quake(tmp_path: Path) -> None:
    data = pak_bytes([(b"a.txt", b"first"), (b"a.txt", b"second")])
    with gamepak.open(io.BytesIO(data)) as pak:
        assert pak.read("a.txt") == b"first"
        written = pak.extractall(tmp_path)
    assert (tmp_path / "a.txt").read_bytes() == b"first"
    assert (tmp_path / "a.txt.dup1").read_bytes() == b"second"
    assert len(written) == 2


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "runs past the end"),
        (b"PACK\0\0", "runs past the end"),
        (b"PAKK" + struct.pack("<ii", 12, 0), "not a PAK"),
        (b"PACK" + struct.pack("<ii", -5, 64), "negative"),
        (b"PACK" + struct.pack("<ii", 12, 64 * 1000), "runs past the end"),
        (b"PACK" + struct.pack("<ii", 0x7FFFFFFF, 0x7FFFFFC0), "runs past the end"),
    ],
)
def test_malformed_headers(data: bytes, message: str) -> None:
    with pytest.raises(CorruptArchiveError, match=message) as caught:
        gamepak.open(io.BytesIO(data), "pak")
    assert caught.value.offset is not None


def test_entry_outside_file_fails_on_read_not_listing() -> None:
    data = bytearray(pak_bytes([(b"a.txt", b"hello")]))
    struct.pack_into("<i", data, len(data) - 4, 1 << 20)  # size far past the end
    with gamepak.open(io.BytesIO(bytes(data))) as pak:
        assert pak.namelist() == ["a.txt"]
        with pytest.raises(CorruptArchiveError, match="past the end") as caught:
            pak.read("a.txt")
        assert caught.value.member == "a.txt"
        assert pak.verify()


@given(
    st.lists(
        st.tuples(
            st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\0"), min_size=1, max_size=18).filter(
                storable_name
            ),
            st.binary(max_size=300),
        ),
        max_size=12,
    ),
    st.sampled_from([1, 4, 2048]),
)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_roundtrip_random_members(tmp_path: Path, members: list[tuple[str, bytes]], align: int) -> None:
    _, read = roundtrip(tmp_path, "pak", members, align=align)
    assert read == members


@given(st.binary(min_size=12, max_size=400))
@settings(max_examples=200, deadline=None)
def test_garbage_never_escapes_as_foreign_exception(data: bytes) -> None:
    data = b"PACK" + data[4:]
    try:
        with gamepak.open(io.BytesIO(data), "pak") as pak:
            for entry in pak.infolist():
                with contextlib.suppress(GamepakError):
                    pak.read(entry)
            pak.verify()
    except GamepakError:
        pass


def _hand_made_quakespasm_like() -> bytes:
    """A PAK laid out as id's tools and quakespasm.pak do, built from the spec's byte layout:
    members 4-byte aligned from offset 12, the directory last, garbage after one name's NUL."""
    members = [(b"gfx/conback.lmp", b"\x01\x02\x03\x04\x05"), (b"default.cfg", b"bind w +forward\n")]
    body = b""
    directory = b""
    offset = 12
    for name, data in members:
        padded = data + b"\0" * (-len(data) % 4)
        field = name + b"\0" + (b"junk" if name == b"default.cfg" else b"")
        directory += field.ljust(56, b"\0") + struct.pack("<ii", offset, len(data))
        body += padded
        offset += len(padded)
    return b"PACK" + struct.pack("<ii", offset, len(directory)) + body + directory


def test_hand_made_aligned_pak_lists_and_rebuilds_byte_exact(tmp_path: Path) -> None:
    original = tmp_path / "hand.pak"
    original.write_bytes(_hand_made_quakespasm_like())
    with gamepak.open(original) as pak:
        assert pak.namelist() == ["gfx/conback.lmp", "default.cfg"]
        assert pak.read("default.cfg") == b"bind w +forward\n"
        assert pak.verify() == []
    code, _, err = in_process_cli("extract", str(original), "-o", str(tmp_path / "x"), "--manifest")
    assert code == 0, err
    code, _, err = in_process_cli("create", str(tmp_path / "copy.pak"), str(tmp_path / "x"))
    assert code == 0, err
    assert (tmp_path / "copy.pak").read_bytes() == original.read_bytes()
    # An edited member keeps the 4-byte alignment and the directory place.
    (tmp_path / "x" / "default.cfg").write_bytes(b"bind x +attack\n")
    assert in_process_cli("create", str(tmp_path / "edited.pak"), str(tmp_path / "x"))[0] == 0
    with gamepak.open(tmp_path / "edited.pak") as pak:
        assert pak.read("default.cfg") == b"bind x +attack\n"
        assert all(entry.offset % 4 == 0 for entry in pak.infolist())
        assert pak.header_fields()["directory_offset"] > 12


def test_fields_are_shown_unsigned(tmp_path: Path) -> None:
    """A PAK entry with offset 0xFFFFFF00 and size 0xFFFFFFFF shows those numbers, never -256
    and -1, in ls -l, --json and errors (issue 20 finding 6)."""
    import json as json_module

    from conftest import in_process_cli

    record = struct.pack("<56sII", b"huge.bin", 0xFFFFFF00, 0xFFFFFFFF)
    path = tmp_path / "neg.pak"
    path.write_bytes(struct.pack("<4sII", b"PACK", 12, len(record)) + record)
    code, out, _ = in_process_cli("ls", "-l", str(path))
    assert code == 0 and "4294967295" in out and "4294967040" in out and "-1" not in out
    code, out, _ = in_process_cli("ls", "--json", str(path))
    (row,) = json_module.loads(out)
    assert (row["size"], row["offset"]) == (0xFFFFFFFF, 0xFFFFFF00)
    code, _, err = in_process_cli("verify", str(path))
    assert code == 1 and "4294967040" in err and "-256" not in err


def test_in_place_edit_leaves_a_member_that_holds_the_header_alone(tmp_path: Path) -> None:
    # A member whose bytes start at offset 0 holds the 12-byte header, which an in-place edit
    # rewrites: the member then read other bytes (found by fuzz/fuzz_edit_all.py). Such a pack is
    # rebuilt instead.
    data = bytearray(pak_bytes([(b"a.txt", b"hello"), (b"whole.bin", b"")]))
    directory_at = struct.unpack_from("<i", data, 4)[0]
    struct.pack_into("<ii", data, directory_at + 64 + 56, 0, 12)  # whole.bin: the header itself
    pack = tmp_path / "odd.pak"
    pack.write_bytes(bytes(data))
    with gamepak.open(pack) as archive:
        header = archive.read("whole.bin")
        assert header == bytes(data[:12])
    with gamepak.edit(pack) as editor:
        editor.add("new.txt", b"new")
    assert editor.result.method == "rebuilt"
    with gamepak.open(pack) as archive:
        assert [archive.read(name) for name in ("a.txt", "whole.bin", "new.txt")] == [b"hello", header, b"new"]
