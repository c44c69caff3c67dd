"""RFG packs written by other tools (SyncFaction / RFGM.Archiver, Gibbed's), built by hand from the
spec's byte layout in each tool's convention: they read to the same members as the game's
convention and verify with exit 0, their differences shown as warnings."""

from __future__ import annotations

import io
import json
import struct
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gamepak

import rfg_bytes
from conftest import in_process_cli

MEMBERS = [
    (b"weapons.xtbl", b"<weapons>" + b"<weapon name='x'/>" * 200 + b"</weapons>"),
    (b"Characters.xtbl", bytes(range(256)) * 9),
    (b"notes.txt", b"hello"),
]
NOT_COMPRESSED = 0xFFFFFFFF
SYNCFACTION_NOT_COMPRESSED = 0x00FFFFFF


_align = rfg_bytes.align


def pack(
    members: list[tuple[bytes, bytes]],
    flags: int,
    entries: list[tuple[int, int]],
    block: bytes,
    data_size: int,
    compressed_size: int,
    short_name: bytes = b"",
    path_name: bytes = b"",
) -> bytes:
    """A packfile from its parts: entries are (DataOffset, CompressedDataSize) per member."""
    names = b"".join(name + b"\0" for name, _ in members)
    records = []
    name_offset = 0
    for (name, data), (data_offset, stored) in zip(members, entries):
        records.append(rfg_bytes.entry(name_offset, data_offset, name, len(data), stored))
        name_offset += len(name) + 1
    return rfg_bytes.assemble(
        flags=flags,
        count=len(members),
        entry_block=b"".join(records),
        names=names,
        block=block,
        data_size=data_size,
        compressed_size=compressed_size,
        short_name=short_name,
        path_name=path_name,
    )


def plain(members: list[tuple[bytes, bytes]], header_not_compressed: int, entry_not_compressed: int) -> bytes:
    block = b""
    entries = []
    for index, (_, data) in enumerate(members):
        if index:
            block += bytes(_align(len(block)) - len(block))
        entries.append((len(block), entry_not_compressed))
        block += data
    return pack(members, 0, entries, block, len(block), header_not_compressed)


def syncfaction_compressed(members: list[tuple[bytes, bytes]]) -> bytes:
    """Mode 1 as SyncFaction writes it: finished streams, DataOffset at the padded compressed
    position, DataSize = Σ sizes + the padding after each compressed member but the last."""
    block = b""
    entries = []
    data_size = 0
    for index, (_, data) in enumerate(members):
        stream = zlib.compress(data, 9)
        entries.append((len(block), len(stream)))
        block += stream
        data_size += len(data)
        if index + 1 < len(members):
            padding = _align(len(block)) - len(block)
            block += bytes(padding)
            data_size += padding
    return pack(members, 1, entries, block, data_size, len(block))


def syncfaction_condensed(members: list[tuple[bytes, bytes]], align: int) -> bytes:
    """Mode 3 as SyncFaction writes it: one stream, flushed after each member, finished at the
    end; a member's compressed size is measured before its padding and the finish."""
    compressor = zlib.compressobj(9)
    block = b""
    entries = []
    position = 0
    for index, (_, data) in enumerate(members):
        chunk = compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH)
        entries.append((position, len(chunk)))
        block += chunk
        position += len(data)
        if index + 1 < len(members) and _align(position, align) > position:
            padding = _align(position, align) - position
            block += compressor.compress(bytes(padding)) + compressor.flush(zlib.Z_SYNC_FLUSH)
            position += padding
    block += compressor.flush(zlib.Z_FINISH)
    return pack(members, 3, entries, block, position, len(block))


def game_condensed(members: list[tuple[bytes, bytes]], align: int) -> bytes:
    """Mode 3 as the game writes it: padding inside the preceding chunk, never finished."""
    compressor = zlib.compressobj(9)
    block = b""
    entries = []
    position = 0
    for index, (_, data) in enumerate(members):
        padded = data
        if index + 1 < len(members):
            padded += bytes(_align(position + len(data), align) - position - len(data))
        chunk = compressor.compress(padded) + compressor.flush(zlib.Z_SYNC_FLUSH)
        entries.append((position, len(chunk)))
        block += chunk
        position += len(padded)
    return pack(members, 3, entries, block, position, len(block))


CONVENTIONS = {
    "game plain": lambda: plain(MEMBERS, NOT_COMPRESSED, NOT_COMPRESSED),
    "syncfaction plain": lambda: plain(MEMBERS, SYNCFACTION_NOT_COMPRESSED, NOT_COMPRESSED),
    "syncfaction plain, entry sizes too": lambda: plain(
        MEMBERS, SYNCFACTION_NOT_COMPRESSED, SYNCFACTION_NOT_COMPRESSED
    ),
    "syncfaction compressed": lambda: syncfaction_compressed(MEMBERS),
    "syncfaction str2": lambda: syncfaction_condensed(MEMBERS, 1),
    "syncfaction compacted vpp": lambda: syncfaction_condensed(MEMBERS, 16),
    "game str2": lambda: game_condensed(MEMBERS, 1),
    "gibbed plain": lambda: pack(
        MEMBERS[:1],
        0,
        [(0, NOT_COMPRESSED)],
        MEMBERS[0][1],
        len(MEMBERS[0][1]),
        NOT_COMPRESSED,
        b"         Created using      Gibbed's     Volition Tools ",
        b"           Read the       Foundation     Novels from       Asimov.",
    ),
}
# What verify warns about in each convention (substrings), beyond which nothing.
EXPECTED_WARNINGS = {
    "game plain": [],
    "syncfaction plain": ["compressed_data_size is 16777215"],
    "syncfaction plain, entry sizes too": ["compressed_data_size is 16777215"] + ["CompressedDataSize 16777215"] * 3,
    "syncfaction compressed": ["data_size is"],
    "syncfaction str2": ["add up to"],
    "syncfaction compacted vpp": ["add up to"],
    "game str2": [],
    "gibbed plain": [],
}


@pytest.mark.parametrize("convention", sorted(CONVENTIONS))
def test_tool_written_pack_reads_and_verifies(convention: str, tmp_path: Path) -> None:
    data = CONVENTIONS[convention]()
    path = tmp_path / ("pack.str2_pc" if "str2" in convention else "pack.vpp_pc")
    path.write_bytes(data)
    expected = MEMBERS[:1] if convention.startswith("gibbed") else MEMBERS
    with gamepak.open(path) as archive:
        assert [(entry.name.encode(), archive.read(entry)) for entry in archive.infolist()] == expected
        problems = archive.check()
        assert [p.message for p in problems if p.severity == "error"] == []
        warnings = [p for p in problems if p.severity == "warning"]
        assert len(warnings) == len(EXPECTED_WARNINGS[convention])
        for problem, wanted in zip(warnings, EXPECTED_WARNINGS[convention]):
            assert wanted in problem.message
            if "syncfaction" in convention:
                assert "SyncFaction" in problem.message
            assert problem.offset is not None
    # extract-all (one pass) gives the same members
    assert in_process_cli("extract", "-o", str(tmp_path / "out"), str(path))[0] == 0
    for name, content in expected:
        assert (tmp_path / "out" / name.decode()).read_bytes() == content
    code, _, err = in_process_cli("verify", str(path))
    assert code == 0, err
    assert err.count("warning: ") == len(EXPECTED_WARNINGS[convention])
    strict = in_process_cli("verify", "--strict", str(path))[0]
    assert strict == (1 if EXPECTED_WARNINGS[convention] else 0)


def test_syncfaction_str2_sizes_do_not_add_up_but_every_member_extracts(tmp_path: Path) -> None:
    data = syncfaction_condensed(MEMBERS, 1)
    header_compressed = struct.unpack_from("<I", data, 360)[0]
    per_member = sum(struct.unpack_from("<I", data, 2048 + 28 * index + 20)[0] for index in range(len(MEMBERS)))
    assert per_member < header_compressed  # the trap: chunk sums fall short of the stream
    with gamepak.open(io.BytesIO(data), name="x.str2_pc") as archive:
        assert archive.read("notes.txt") == b"hello"  # the last member needs the bytes past the sums
        assert archive.read("weapons.xtbl") == MEMBERS[0][1]


def test_verify_json_lists_errors_and_warnings_with_offsets(tmp_path: Path) -> None:
    data = bytearray(plain(MEMBERS, SYNCFACTION_NOT_COMPRESSED, NOT_COMPRESSED))
    struct.pack_into("<I", data, 2048 + 28 + 12, 0x1234)  # a wrong NameHash: an error
    path = tmp_path / "x.vpp_pc"
    path.write_bytes(bytes(data))
    code, out, _ = in_process_cli("verify", "--json", str(path))
    report = json.loads(out)
    assert code == 1 and report["ok"] is False and report["members"] == 3
    assert [(e["offset"], e["member"]) for e in report["errors"]] == [(2048 + 28 + 12, "Characters.xtbl")]
    assert [w["offset"] for w in report["warnings"]] == [360]
    assert report["warnings"][0]["severity"] == "warning"


def test_verify_says_one_member(tmp_path: Path) -> None:
    path = tmp_path / "one.vpp_pc"
    path.write_bytes(plain(MEMBERS[:1], NOT_COMPRESSED, NOT_COMPRESSED))
    code, out, _ = in_process_cli("verify", str(path))
    assert code == 0 and out.strip().endswith("OK (1 member)")
    path.write_bytes(plain(MEMBERS[:2], SYNCFACTION_NOT_COMPRESSED, NOT_COMPRESSED))
    code, out, _ = in_process_cli("verify", str(path))
    assert code == 0 and out.strip().endswith("OK (2 members, 1 warning)")


def test_rebuild_of_a_tool_written_str2_is_a_clean_game_pack(tmp_path: Path) -> None:
    original = tmp_path / "tool.str2_pc"
    original.write_bytes(syncfaction_condensed(MEMBERS, 1))
    folder = tmp_path / "x"
    assert in_process_cli("extract", "--manifest", "-o", str(folder), str(original))[0] == 0
    out = tmp_path / "clean.str2_pc"
    code, _, err = in_process_cli("create", str(out), str(folder))
    assert code == 0, err
    with gamepak.open(out) as archive:
        assert [(e.name.encode(), archive.read(e)) for e in archive.infolist()] == MEMBERS
        assert archive.check() == []


@settings(max_examples=40, deadline=None)
@given(
    members=st.lists(
        st.tuples(st.sampled_from([b"a.x", b"b.y", b"c.z", b"d"]), st.binary(max_size=3000)),
        max_size=4,
        unique_by=lambda member: member[0],
    ),
    convention=st.sampled_from(["compressed", "str2", "compacted"]),
)
def test_tool_conventions_read_back(members: list[tuple[bytes, bytes]], convention: str) -> None:
    if convention == "compressed":
        data = syncfaction_compressed(members)
    else:
        data = syncfaction_condensed(members, 1 if convention == "str2" else 16)
    with gamepak.open(io.BytesIO(data), name="t.vpp_pc") as archive:
        assert [(e.name.encode(), archive.read(e)) for e in archive.infolist()] == members
        assert [p.message for p in archive.check() if p.severity == "error"] == []


def test_verify_looks_inside_nested_packs(tmp_path: Path) -> None:
    inner = bytearray(syncfaction_condensed(MEMBERS, 1))
    outer = tmp_path / "outer.vpp_pc"
    with gamepak.create(outer) as writer:
        writer.add("mod.str2_pc", bytes(inner))
    code, _, err = in_process_cli("verify", str(outer))
    assert code == 0 and "warning: " in err and "mod.str2_pc" in err and "add up to" in err
    struct.pack_into("<I", inner, 2048 + 12, 0x1234)  # a wrong NameHash inside the nested pack
    with gamepak.create(outer, overwrite=True) as writer:
        writer.add("mod.str2_pc", bytes(inner))
    with gamepak.open(outer) as archive:
        errors = [p for p in archive.check() if p.severity == "error"]
    assert [(p.member, p.offset) for p in errors] == [("mod.str2_pc", 2048 + 12)]
    assert "outer.vpp_pc/mod.str2_pc" in errors[0].message and "NameHash" in errors[0].message
