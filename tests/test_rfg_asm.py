"""RFG `.asm_pc` v5: hand-made tables from the spec, byte-exact rewrites of the samples, `info`,
verify against the `.str2_pc` members, and the writer keeping tables current."""

from __future__ import annotations

import contextlib
import io
import json
import struct
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.errors import CorruptArchiveError, FormatLimitError, GamepakError
from gamepak.formats.rfg.asm import AsmContainer, AsmFile, AsmMismatchError, AsmPrimitive
from gamepak.formats.rfg.writer import AsmUpdated
from gamepak.formats.rfg.writer import Writer as RfgWriter

from conftest import in_process_cli, sample


# -- an independent reading and writing of the layout, straight from the spec ---------------------
def asm_bytes(containers: list[dict[str, Any]]) -> bytes:
    out = struct.pack("<IHH", 0xBEEFFEED, 5, len(containers))
    for c in containers:
        name = c["name"].encode()
        out += struct.pack("<H", len(name)) + name
        out += struct.pack(
            "<BHHIII",
            c["type"],
            c["flags"],
            len(c["primitives"]),
            c["data_offset"],
            len(c["sizes"]),
            c["compressed_size"],
        )
        out += struct.pack(f"<{len(c['sizes'])}I", *c["sizes"])
        for p in c["primitives"]:
            pname = p["name"].encode()
            out += struct.pack("<H", len(pname)) + pname
            out += struct.pack(
                "<BBBBII", p["type"], p["allocator"], p["flags"], p["split"], p["header_size"], p["data_size"]
            )
    return out


def read_asm_sizes(data: bytes) -> dict[str, tuple[int, int, list[int], list[tuple[str, int, int]]]]:
    """container name -> (data offset, compressed size, sizes, [(primitive, header size, data size)])."""
    signature, version, count = struct.unpack_from("<IHH", data, 0)
    assert (signature, version) == (0xBEEFFEED, 5)
    position = 8
    found = {}
    for _ in range(count):
        (length,) = struct.unpack_from("<H", data, position)
        name = data[position + 2 : position + 2 + length].decode()
        position += 2 + length
        _, _, primitive_count, data_offset, size_count, compressed = struct.unpack_from("<BHHIII", data, position)
        position += 17
        sizes = list(struct.unpack_from(f"<{size_count}I", data, position))
        position += 4 * size_count
        primitives = []
        for _ in range(primitive_count):
            (length,) = struct.unpack_from("<H", data, position)
            pname = data[position + 2 : position + 2 + length].decode()
            position += 2 + length
            _, _, _, _, header_size, data_size = struct.unpack_from("<BBBBII", data, position)
            position += 12
            primitives.append((pname, header_size, data_size))
        found[name] = (data_offset, compressed, sizes, primitives)
    assert position == len(data)
    return found


def str2_header(data: bytes) -> tuple[int, int, list[int]]:
    """(data block offset, header CompressedDataSize, member sizes) of a packfile, by hand."""
    count, _, _, name_block, _, compressed = struct.unpack_from("<IIIIII", data, 340)
    align = lambda value: -(-value // 2048) * 2048  # noqa: E731
    data_start = 2048 + align(28 * count) + align(name_block)
    sizes = [struct.unpack_from("<I", data, 2048 + 28 * i + 16)[0] for i in range(count)]
    return data_start, compressed, sizes


def prim(name: str, header_size: int, data_size: int = 0) -> dict[str, Any]:
    return {
        "name": name,
        "type": 3,
        "allocator": 1,
        "flags": 2,
        "split": 0,
        "header_size": header_size,
        "data_size": data_size,
    }


# -- the format -----------------------------------------------------------------------------------
def test_hand_made_table_parses_and_rewrites() -> None:
    containers = [
        {
            "name": "ctr",
            "type": 6,
            "flags": 0x80,
            "data_offset": 6144,
            "compressed_size": 99,
            "sizes": [5, 7, 9],
            "primitives": [prim("a.mat_pc", 5), prim("a.cpeg_pc", 7, 9)],
        },
        {"name": "empty", "type": 1, "flags": 0, "data_offset": 0, "compressed_size": 0, "sizes": [], "primitives": []},
    ]
    data = asm_bytes(containers)
    table = AsmFile.parse(data)
    assert [c.name for c in table.containers] == ["ctr", "empty"]
    first = table.containers[0]
    assert (first.type, first.flags, first.data_offset, first.compressed_size, first.sizes) == (
        6,
        0x80,
        6144,
        99,
        [5, 7, 9],
    )
    assert first.primitives[1] == AsmPrimitive("a.cpeg_pc", 3, 1, 2, 0, 7, 9)
    assert table.container("CTR") is first
    assert table.to_bytes() == data


@pytest.mark.parametrize(
    ("cut", "message"),
    [(6, "header"), (12, "container name"), (30, "container 'ctr'"), (40, "sizes"), (60, "primitive")],
)
def test_truncated_table_names_what_and_where(cut: int, message: str) -> None:
    data = asm_bytes(
        [
            {
                "name": "ctr",
                "type": 6,
                "flags": 0,
                "data_offset": 6144,
                "compressed_size": 9,
                "sizes": [5, 6, 7, 8],
                "primitives": [prim("a", 5), prim("b", 6, 7), prim("c", 8)],
            }
        ]
    )
    with pytest.raises(CorruptArchiveError, match=message) as caught:
        AsmFile.parse(data[:cut], "t.asm_pc")
    assert caught.value.offset is not None and caught.value.offset <= cut


def test_hostile_counts_and_signature() -> None:
    data = bytearray(
        asm_bytes(
            [
                {
                    "name": "c",
                    "type": 0,
                    "flags": 0,
                    "data_offset": 0,
                    "compressed_size": 0,
                    "sizes": [],
                    "primitives": [],
                }
            ]
        )
    )
    struct.pack_into("<I", data, 8 + 3 + 9, 0xFFFFFFFF)  # size count: 16 GiB of sizes
    with pytest.raises(CorruptArchiveError, match="4294967295 sizes"):
        AsmFile.parse(bytes(data))
    with pytest.raises(CorruptArchiveError, match="not an .asm_pc"):
        AsmFile.parse(b"\0" * 8)


names = st.text(alphabet="abcdefghij_.0123456789", min_size=1, max_size=12)
primitives = st.builds(
    AsmPrimitive, names, *(st.integers(0, 255) for _ in range(4)), st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)
)
containers = st.builds(
    AsmContainer,
    names,
    st.integers(0, 255),
    st.integers(0, 0xFFFF),
    st.integers(0, 2**32 - 1),
    st.integers(0, 2**32 - 1),
    st.lists(st.integers(0, 2**32 - 1), max_size=5),
    st.lists(primitives, max_size=4),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(containers, max_size=4), st.binary(max_size=3))
def test_round_trip(tables: list[AsmContainer], trailing: bytes) -> None:
    table = AsmFile(tables, trailing=trailing)
    data = table.to_bytes()
    assert AsmFile.parse(data) == table
    assert AsmFile.parse(data).to_bytes() == data


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200))
def test_garbage_raises_only_corrupt_errors(data: bytes) -> None:
    with contextlib.suppress(CorruptArchiveError):
        AsmFile.parse(b"\xed\xfe\xef\xbe\x05\x00" + data)


def test_every_sample_table_rewrites_byte_for_byte() -> None:
    for pack in ("dlc01_l1.vpp_pc", "dlcp01_activities.vpp_pc"):
        with gamepak.open(sample(f"vpp/{pack}")) as archive:
            tables = [e for e in archive.infolist() if e.name.endswith(".asm_pc")]
            assert tables
            for entry in tables:
                data = archive.read(entry)
                assert AsmFile.parse(data).to_bytes() == data


def test_info_shows_containers_and_primitives(tmp_path: Path) -> None:
    path = tmp_path / "t.asm_pc"
    path.write_bytes(
        asm_bytes(
            [
                {
                    "name": "ctr",
                    "type": 6,
                    "flags": 0x80,
                    "data_offset": 6144,
                    "compressed_size": 99,
                    "sizes": [5, 7, 9],
                    "primitives": [prim("a.mat_pc", 5), prim("a.cpeg_pc", 7, 9)],
                }
            ]
        )
    )
    code, out, _ = in_process_cli("info", "--json", str(path))
    assert code == 0
    details = json.loads(out)
    assert details["format"] == "asm" and details["members"] == 0
    container = details["header"]["containers"][0]
    assert (container["name"], container["primitive_count"], container["sizes"]) == ("ctr", 2, [5, 7, 9])
    assert container["primitives"][1]["data_size"] == 9
    code, out, _ = in_process_cli("info", str(path))
    assert code == 0 and "a.cpeg_pc: type 3" in out
    assert in_process_cli("verify", str(path))[0] == 0


def test_a_table_member_is_not_a_nested_pack(tmp_path: Path) -> None:
    table = asm_bytes([])
    path = tmp_path / "p.vpp_pc"
    with gamepak.create(path) as writer:
        writer.add("x.asm_pc", table)
    code, out, _ = in_process_cli("ls", "-r", str(path))
    assert code == 0 and out.split() == ["x.asm_pc"]


def test_asm_writer_writes_an_empty_table_and_refuses_members(tmp_path: Path) -> None:
    gamepak.create(tmp_path / "e.asm_pc").close()
    assert (tmp_path / "e.asm_pc").read_bytes() == b"\xed\xfe\xef\xbe\x05\x00\x00\x00"
    with pytest.raises(FormatLimitError, match="container tables"):
        gamepak.create(tmp_path / "f.asm_pc").add("x", b"")


# -- tables against the packs they describe --------------------------------------------------------
STR2_MEMBERS = [("crate.mat_pc", b"M" * 300), ("crate.cpeg_pc", b"C" * 120), ("crate.gpeg_pc", bytes(range(200)) * 5)]


def build_str2(tmp_path: Path, members: list[tuple[str, bytes]], name: str = "crate.str2_pc") -> bytes:
    path = tmp_path / name
    with gamepak.create(path, overwrite=True) as writer:
        for member, data in members:
            writer.add(member, data)
    return path.read_bytes()


def table_for(str2: bytes, members: list[tuple[str, bytes]], name: str = "crate") -> bytes:
    data_start, compressed, sizes = str2_header(str2)
    return asm_bytes(
        [
            {
                "name": name,
                "type": 6,
                "flags": 0x80,
                "data_offset": data_start,
                "compressed_size": compressed,
                "sizes": sizes,
                "primitives": [prim(members[0][0], sizes[0]), prim(members[1][0], sizes[1], sizes[2])],
            }
        ]
    )


def test_verify_checks_tables_against_str2_members(tmp_path: Path) -> None:
    str2 = build_str2(tmp_path, STR2_MEMBERS)
    table = table_for(str2, STR2_MEMBERS)
    good = tmp_path / "good.vpp_pc"
    with gamepak.create(good) as writer:
        writer.add("crate.str2_pc", str2)
        writer.add("level.asm_pc", table)
    assert in_process_cli("verify", str(good))[0] == 0
    # gamepak's writer never leaves a table stale: patch the written file instead.
    data = bytearray(good.read_bytes())
    with gamepak.open(good) as archive:
        table_at = archive.getinfo("level.asm_pc").offset
    struct.pack_into("<I", data, table_at + len(table) - 4, 999)  # the GPU data size of the last primitive
    bad = tmp_path / "bad.vpp_pc"
    bad.write_bytes(bytes(data))
    code, _, err = in_process_cli("verify", str(bad))
    assert code == 1 and "level.asm_pc is stale" in err and "'crate'" in err


def test_writer_updates_the_table_of_a_changed_str2(tmp_path: Path) -> None:
    str2 = build_str2(tmp_path, STR2_MEMBERS)
    source = tmp_path / "source.vpp_pc"
    with gamepak.create(source) as writer:
        writer.add("level.asm_pc", table_for(str2, STR2_MEMBERS))
        writer.add("crate.str2_pc", str2)
    changed_members = [STR2_MEMBERS[0], STR2_MEMBERS[1], ("crate.gpeg_pc", b"new gpu data" * 77)]
    new_str2 = build_str2(tmp_path, changed_members, "new.str2_pc")
    out = tmp_path / "edited.vpp_pc"
    with gamepak.open(source) as archive:
        with pytest.warns(AsmUpdated, match="'crate'"):
            with gamepak.create(out) as writer:
                writer.add_member("level.asm_pc", archive, "level.asm_pc")
                writer.add("crate.str2_pc", new_str2)
        assert isinstance(writer, RfgWriter)
        assert any("primitive 'crate.cpeg_pc' sizes 120/1000 -> 120/924" in change for change in writer.asm_updates)
    with gamepak.open(out) as archive:
        found = read_asm_sizes(archive.read("level.asm_pc"))
        assert archive.check() == []
    data_start, compressed, sizes = str2_header(new_str2)
    assert found["crate"] == (data_start, compressed, sizes, [("crate.mat_pc", 300, 0), ("crate.cpeg_pc", 120, 924)])


def test_unmatched_container_or_primitive_is_an_error_naming_it(tmp_path: Path) -> None:
    str2 = build_str2(tmp_path, STR2_MEMBERS)
    table = table_for(str2, STR2_MEMBERS)
    extra = build_str2(tmp_path, STR2_MEMBERS + [("stray.txt", b"x")], "extra.str2_pc")
    with pytest.raises(AsmMismatchError, match="'stray.txt'"):
        with gamepak.create(tmp_path / "a.vpp_pc") as writer:
            writer.add("crate.str2_pc", extra)
            writer.add("level.asm_pc", table)
    with pytest.raises(AsmMismatchError, match="no container 'other'"):
        with gamepak.create(tmp_path / "b.vpp_pc") as writer:
            writer.add("other.str2_pc", str2)
            writer.add("level.asm_pc", table)
    renamed = build_str2(
        tmp_path, [("crate.mat_pc", b"M"), ("renamed.cpeg_pc", b"C"), ("crate.gpeg_pc", b"G")], "r.str2_pc"
    )
    with pytest.raises(AsmMismatchError, match="primitive 'crate.cpeg_pc'"):
        with gamepak.create(tmp_path / "c.vpp_pc") as writer:
            writer.add("crate.str2_pc", renamed)
            writer.add("level.asm_pc", table)
    assert not list(tmp_path.glob("*.vpp_pc"))


def test_separate_table_file_is_updated(tmp_path: Path) -> None:
    str2 = build_str2(tmp_path, STR2_MEMBERS)
    table_path = tmp_path / "level.asm_pc"
    table_path.write_bytes(table_for(str2, STR2_MEMBERS))
    new_str2 = build_str2(tmp_path, [STR2_MEMBERS[0], ("crate.cpeg_pc", b"c" * 10), STR2_MEMBERS[2]], "n.str2_pc")
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "crate.str2_pc").write_bytes(new_str2)
    code, _, err = in_process_cli("create", str(tmp_path / "p.vpp_pc"), str(folder), "-O", f"asm={table_path}")
    assert code == 0, err
    assert "crate.cpeg_pc" in err  # the CLI says what changed
    _, compressed, sizes = str2_header(new_str2)
    found = read_asm_sizes(table_path.read_bytes())["crate"]
    assert (found[1], found[2], found[3][1]) == (compressed, sizes, ("crate.cpeg_pc", 10, 1000))


def test_replacing_a_member_inside_a_sample_str2_updates_its_table(tmp_path: Path) -> None:
    original = sample("vpp/dlcp01_activities.vpp_pc")
    out = tmp_path / "edited.vpp_pc"
    with gamepak.open(original) as archive:
        with archive.open_archive("DLC_AD_07_09.str2_pc") as inner:
            layer = inner.read("dlc01_07_09_129.layer_pc")
            inner_path = tmp_path / "DLC_AD_07_09.str2_pc"
            with gamepak.create(inner_path) as writer:
                writer.add("dlc01_07_09_129.layer_pc", layer + b"\0" * 100)
        with pytest.warns(AsmUpdated):
            with gamepak.create(out) as writer:
                for entry in archive.infolist():
                    if entry.name == "DLC_AD_07_09.str2_pc":
                        writer.add(entry.name, inner_path)
                    else:
                        writer.add_member(entry.name, archive, entry)
        original_table = read_asm_sizes(archive.read("dlc_activity_containers.asm_pc"))
    with gamepak.open(out) as archive:
        found = read_asm_sizes(archive.read("dlc_activity_containers.asm_pc"))
        assert archive.verify() == []
    data_start, compressed, sizes = str2_header(inner_path.read_bytes())
    assert sizes == [872]
    assert found["DLC_AD_07_09"] == (data_start, compressed, sizes, [("dlc01_07_09_129.layer_pc", 872, 0)])
    assert {k: v for k, v in found.items() if k != "DLC_AD_07_09"} == {
        k: v for k, v in original_table.items() if k != "DLC_AD_07_09"
    }
    # An unchanged copy keeps the table byte for byte and says nothing.
    same = tmp_path / "same.vpp_pc"
    with gamepak.open(original) as archive, warnings.catch_warnings():
        warnings.simplefilter("error", AsmUpdated)
        layout = archive.layout()
        with gamepak.create(same, **layout["options"], layout=layout["exact"]) as writer:
            for entry in archive.infolist():
                writer.add_member(entry.name, archive, entry)
    assert same.read_bytes() == original.read_bytes()


def test_verify_flags_a_stale_table_in_a_sample(tmp_path: Path) -> None:
    data = bytearray(sample("vpp/dlcp01_activities.vpp_pc").read_bytes())
    with gamepak.open(io.BytesIO(bytes(data)), name="x.vpp_pc") as archive:
        entry = archive.getinfo("dlc_activity_containers.asm_pc")
        table = archive.read(entry)
    # DLC_HA_08_08's compressed size: after the name, type (1), flags (2), count (2), offset (4), size count (4).
    struct.pack_into("<I", data, entry.offset + table.index(b"DLC_HA_08_08") + 12 + 13, 1)
    stale = tmp_path / "stale.vpp_pc"
    stale.write_bytes(bytes(data))
    code, _, err = in_process_cli("verify", str(stale))
    assert code == 1 and "compressed size 1, DLC_HA_08_08.str2_pc has 2813" in err


def test_verify_flags_primitives_out_of_order(tmp_path: Path) -> None:
    str2 = build_str2(tmp_path, STR2_MEMBERS)
    data_start, compressed, sizes = str2_header(str2)
    swapped = asm_bytes(
        [
            {
                "name": "crate",
                "type": 6,
                "flags": 0,
                "data_offset": data_start,
                "compressed_size": compressed,
                "sizes": sizes,
                # Same sizes, but the primitives name the members in another order.
                "primitives": [prim("crate.cpeg_pc", sizes[0]), prim("crate.mat_pc", sizes[1], sizes[2])],
            }
        ]
    )
    path = tmp_path / "p.vpp_pc"
    with pytest.raises(AsmMismatchError, match="primitive 'crate.cpeg_pc'"):
        with gamepak.create(path) as writer:
            writer.add("crate.str2_pc", str2)
            writer.add("level.asm_pc", swapped)
    with gamepak.create(path, overwrite=True) as writer:
        writer.add("crate.str2_pc", str2)
        writer.add("level.asm_pc", table_for(str2, STR2_MEMBERS))
    data = bytearray(path.read_bytes())
    with gamepak.open(path) as archive:
        table_at = archive.getinfo("level.asm_pc").offset
    data[table_at : table_at + len(swapped)] = swapped
    path.write_bytes(bytes(data))
    code, _, err = in_process_cli("verify", str(path))
    assert code == 1 and "primitive 'crate.cpeg_pc' has no member at position 0" in err


@settings(max_examples=40, deadline=None)
@given(changes=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), min_size=1, max_size=4))
def test_mutated_pack_with_tables_raises_only_gamepak_errors(
    tmp_path_factory: pytest.TempPathFactory, changes: list[tuple[int, int]]
) -> None:
    folder = tmp_path_factory.mktemp("fuzz")
    str2 = build_str2(folder, STR2_MEMBERS)
    pack = folder / "p.vpp_pc"
    with gamepak.create(pack) as writer:
        writer.add("crate.str2_pc", str2)
        writer.add("level.asm_pc", table_for(str2, STR2_MEMBERS))
    data = bytearray(pack.read_bytes())
    for position, value in changes:
        # The tables and the nested pack's header sit past 6144: aim there half of the time.
        data[(position if position % 2 else 6144 + position % 3000) % len(data)] = value
    with contextlib.suppress(GamepakError), warnings.catch_warnings():
        warnings.simplefilter("ignore", AsmUpdated)
        with gamepak.open(io.BytesIO(bytes(data)), "vpp", name="f.vpp_pc") as archive:
            archive.check()
            with gamepak.create(folder / "out.vpp_pc") as writer:
                for entry in archive.infolist():
                    writer.add_member(entry.name, archive, entry)


def test_asm_flag_updates_a_separate_table_on_create_and_on_edits(tmp_path: Path) -> None:
    str2 = build_str2(tmp_path, STR2_MEMBERS)
    table_path = tmp_path / "level.asm_pc"
    table_path.write_bytes(table_for(str2, STR2_MEMBERS))
    new_str2 = build_str2(tmp_path, [STR2_MEMBERS[0], ("crate.cpeg_pc", b"c" * 10), STR2_MEMBERS[2]], "n.str2_pc")
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "crate.str2_pc").write_bytes(new_str2)
    pack = tmp_path / "p.vpp_pc"
    code, _, err = in_process_cli("create", str(pack), str(folder), "--asm", str(table_path))
    assert code == 0, err
    _, compressed, sizes = str2_header(new_str2)
    assert read_asm_sizes(table_path.read_bytes())["crate"][1:3] == (compressed, sizes)
    # An edit inside the nested container: the separate table follows.
    replacement = tmp_path / "crate.cpeg_pc"
    replacement.write_bytes(b"d" * 25)
    code, _, err = in_process_cli(
        "add",
        str(pack),
        str(replacement),
        "--name",
        "crate.str2_pc/crate.cpeg_pc",
        "--replace",
        "--asm",
        str(table_path),
    )
    assert code == 0, err
    with gamepak.open(pack) as archive:
        edited = archive.read("crate.str2_pc")
    _, compressed, sizes = str2_header(edited)
    found = read_asm_sizes(table_path.read_bytes())["crate"]
    assert found[1:3] == (compressed, sizes) and found[3][1] == ("crate.cpeg_pc", 25, 1000)


def test_rm_of_a_str2_removes_its_container(tmp_path: Path) -> None:
    """`rm` of a .str2_pc whose container is in the pack's .asm_pc takes the container away too,
    never leaving a dangling one (issue 19 class 6)."""
    str2 = build_str2(tmp_path, STR2_MEMBERS)
    other = build_str2(tmp_path, STR2_MEMBERS, "other.str2_pc")
    table = AsmFile.parse(table_for(str2, STR2_MEMBERS))
    table.containers += AsmFile.parse(table_for(other, STR2_MEMBERS, "other")).containers
    pack = tmp_path / "level.vpp_pc"
    with gamepak.create(pack) as writer:
        writer.add("crate.str2_pc", str2)
        writer.add("other.str2_pc", other)
        writer.add("level.asm_pc", table.to_bytes())
    assert gamepak.open(pack).check() == []
    code, _, err = in_process_cli("rm", str(pack), "other.str2_pc")
    assert code == 0 and "container 'other' removed with its .str2_pc" in err
    with gamepak.open(pack) as archive:
        assert [c.name for c in AsmFile.parse(archive.read("level.asm_pc")).containers] == ["crate"]
        assert archive.check() == []


def test_verify_checks_a_separate_table_and_edits_without_it_warn(tmp_path: Path) -> None:
    """`verify --asm FILE` holds a separate .asm_pc to the pack's .str2_pc members; an edit of a
    pack whose table is elsewhere, without --asm, says the table is left as it was (class 6)."""
    str2 = build_str2(tmp_path, STR2_MEMBERS)
    table_path = tmp_path / "level.asm_pc"
    table_path.write_bytes(table_for(str2, STR2_MEMBERS))
    pack = tmp_path / "p.vpp_pc"
    with gamepak.create(pack) as writer:
        writer.add("crate.str2_pc", str2)
    assert in_process_cli("verify", str(pack), "--asm", str(table_path))[0] == 0
    changed = build_str2(tmp_path, [STR2_MEMBERS[0], ("crate.cpeg_pc", b"c" * 10), STR2_MEMBERS[2]], "n.str2_pc")
    replacement = tmp_path / "crate.str2_pc"
    replacement.write_bytes(changed)
    code, _, err = in_process_cli("add", str(pack), str(replacement), "--replace")
    assert code == 0 and "pass --asm FILE" in err
    code, _, err = in_process_cli("verify", str(pack), "--asm", str(table_path))
    assert code == 1 and "level.asm_pc is stale: container 'crate'" in err
    code, _, err = in_process_cli("add", str(pack), str(replacement), "--replace", "--asm", str(table_path))
    assert code == 0
    assert in_process_cli("verify", str(pack), "--asm", str(table_path))[0] == 0
    other = tmp_path / "other.pak"
    with gamepak.create(other) as writer:
        writer.add("x", b"x")
    assert in_process_cli("verify", str(other), "--asm", str(table_path))[0] == 2


def test_texture_add_and_rm_inside_a_pack_keep_its_table_current(tmp_path: Path) -> None:
    """`texture add PACK IMAGE --name N` (and rm) change the peg inside the pack's .str2_pc and
    bring the .asm_pc container up to date: verify passes (issue 21)."""
    import numpy as np
    from PIL import Image

    from gamepak.formats.rfg.peg import Peg, PixelFormat

    peg = Peg.new("crate.cpeg_pc")
    peg.add_texture("crate", np.full((32, 32, 4), 200, dtype=np.uint8), PixelFormat.DXT5)
    cpu, gpu = peg.to_bytes()
    members = [("crate.cpeg_pc", cpu), ("crate.gpeg_pc", gpu)]
    str2 = build_str2(tmp_path, members)
    data_start, compressed, sizes = str2_header(str2)
    table = asm_bytes(
        [
            {
                "name": "crate",
                "type": 6,
                "flags": 0x80,
                "data_offset": data_start,
                "compressed_size": compressed,
                "sizes": sizes,
                "primitives": [prim("crate.cpeg_pc", sizes[0], sizes[1])],
            }
        ]
    )
    pack = tmp_path / "level.vpp_pc"
    with gamepak.create(pack) as writer:
        writer.add("crate.str2_pc", str2)
        writer.add("level.asm_pc", table)
    assert in_process_cli("verify", str(pack))[0] == 0
    image = tmp_path / "new.png"
    Image.fromarray(np.full((64, 64, 4), 90, dtype=np.uint8), "RGBA").save(image)
    code, _, err = in_process_cli("texture", "add", str(pack), str(image), "--name", "second", "--format", "DXT1")
    assert code == 0, err
    code, out, _ = in_process_cli("texture", "ls", str(pack))
    assert "crate.tga" in out and "second.tga" in out
    code, _, err = in_process_cli("verify", str(pack))
    assert code == 0, err
    with gamepak.open(pack) as archive, archive.open_archive("crate.str2_pc") as inner:
        new_gpu = inner.read("crate.gpeg_pc")
        found = read_asm_sizes(archive.read("level.asm_pc"))["crate"]
    assert found[3][0][0] == "crate.cpeg_pc" and found[3][0][2] == len(new_gpu)  # the primitive's GPU size
    code, _, err = in_process_cli("texture", "rm", str(pack), "crate")
    assert code == 0, err
    code, out, _ = in_process_cli("texture", "ls", str(pack))
    assert "crate.tga" not in out and "second.tga" in out
    assert in_process_cli("verify", str(pack))[0] == 0
    # An edited, larger PNG imported back: the peg, the .str2_pc and the container all change.
    exported = tmp_path / "textures"
    assert in_process_cli("texture", "export", str(pack), "-o", str(exported))[0] == 0
    (png,) = exported.rglob("second.png")
    Image.fromarray(np.full((128, 128, 4), 30, dtype=np.uint8), "RGBA").save(png)
    code, _, err = in_process_cli("texture", "import", str(pack), str(exported))
    assert code == 0, err
    code, _, err = in_process_cli("verify", str(pack))
    assert code == 0, err
    with gamepak.open(pack) as archive, archive.open_archive("crate.str2_pc") as inner:
        assert read_asm_sizes(archive.read("level.asm_pc"))["crate"][3][0][2] == len(inner.read("crate.gpeg_pc"))
    assert "128x128" in in_process_cli("texture", "ls", str(pack))[1]
