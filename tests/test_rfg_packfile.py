"""Red Faction Guerrilla packfile v3 (`vpp`): hand-made files, round trips, real samples, nested
packs, >4 GiB archives and malformed input."""

from __future__ import annotations

import io
import json
import os
import random
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.core.source import Source
from gamepak.errors import CorruptArchiveError, FormatLimitError, GamepakError, UnsupportedFeatureError
from gamepak.formats.rfg import inflate, packfile, rebuild
from gamepak.formats.rfg.packfile import Reader
from gamepak.formats.rfg.records import name_hash

import rfg_bytes
from conftest import in_process_cli, sample

SAMPLES = {
    "table.vpp_pc": (423, 3, ["achievements.xtbl", "action_node_types.xtbl", "activity.xtbl"]),
    "dlcp01_activities.vpp_pc": (9, 0, ["dlc_ORaid_07_08_Level_1.str2_pc", "DLC_HA_08_08.str2_pc"]),
    "dlc01_l1.vpp_pc": (1, 0, ["dlc01_l1.asm_pc"]),
    "xray_effect.str2_pc": (3, 3, ["xray_effect.mat_pc", "xray_effect.cpeg_pc", "xray_effect.gpeg_pc"]),
    "repair_battery.str2_pc": (2, 3, ["repair_battery.csmesh_pc", "repair_battery.gsmesh_pc"]),
}


GAME_RUNTIME = "20b003320000000020606c31"  # the 12 runtime bytes of a game file


def _xml(seed: int, size: int) -> bytes:
    rng = random.Random(seed)
    rows = [b'<row id="%d" name="%s"/>' % (i, rng.choice([b"alpha", b"beta", b"gamma"])) for i in range(size // 24 + 1)]
    return (b"<table>" + b"".join(rows))[:size]


def _write_twin(path: Path, members: list[tuple[str, bytes]], **options: Any) -> bytes:
    with gamepak.create(path, overwrite=True, **options) as writer:
        for name, data in members:
            writer.add(name, data)
    return path.read_bytes()


def build_twins(folder: Path) -> None:
    """Packs in the game's conventions standing in for each sample (same modes, zlib levels,
    alignments, runtime bytes, nesting and tables), so every sample test also runs without
    ../shared."""
    from gamepak.formats.rfg.asm import AsmContainer, AsmFile, AsmPrimitive

    table = [("achievements.xtbl", _xml(1, 9000)), ("action_node_types.xtbl", _xml(2, 700))]
    table += [(f"t{index:02}.xtbl", _xml(index, 300 + 97 * index)) for index in range(3, 40)]
    _write_twin(folder / "table-like.vpp_pc", table, flags=3, level=1, align=64, runtime=GAME_RUNTIME)
    _write_twin(
        folder / "xray-like.str2_pc",
        [("x.mat_pc", _xml(7, 500)), ("x.cpeg_pc", b"\x01\x02" * 90), ("x.gpeg_pc", bytes(range(256)) * 9)],
        runtime=GAME_RUNTIME,
    )
    _write_twin(
        folder / "gibbed-like.str2_pc",
        [("b.csmesh_pc", _xml(8, 2000)), ("b.gsmesh_pc", _xml(9, 3000))],
        short_name="         Created using      Gibbed's     Volition Tools ",
        path_name="           Read the       Foundation     Novels",
    )
    _write_twin(folder / "l1-like.vpp_pc", [("l1-like.asm_pc", AsmFile().to_bytes())], runtime=GAME_RUNTIME)
    nested = []
    containers = []
    for index in range(3):
        member = f"layer_{index}.layer_pc"
        inner = _write_twin(
            folder / f"inner{index}.str2_pc", [(member, _xml(20 + index, 400 + 300 * index))], runtime=GAME_RUNTIME
        )
        with gamepak.open(folder / f"inner{index}.str2_pc") as archive:
            assert isinstance(archive, Reader)
            size = archive.infolist()[0].size
            containers.append(
                AsmContainer(
                    f"Area_{index}",
                    6,
                    0x80,
                    archive.data_start,
                    archive.compressed_size_field,
                    [size],
                    [AsmPrimitive(member, 3, 0, 0, 0, size, 0)],
                )
            )
        nested.append((f"Area_{index}.str2_pc", inner))
    nested.append(("activities.asm_pc", AsmFile(containers).to_bytes()))
    _write_twin(folder / "activities-like.vpp_pc", nested, runtime=GAME_RUNTIME)


TWINS = {
    "table-like.vpp_pc": (39, 3, ["achievements.xtbl", "action_node_types.xtbl", "t03.xtbl"]),
    "activities-like.vpp_pc": (4, 0, ["Area_0.str2_pc", "Area_1.str2_pc"]),
    "l1-like.vpp_pc": (1, 0, ["l1-like.asm_pc"]),
    "xray-like.str2_pc": (3, 3, ["x.mat_pc", "x.cpeg_pc", "x.gpeg_pc"]),
    "gibbed-like.str2_pc": (2, 3, ["b.csmesh_pc", "b.gsmesh_pc"]),
}


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("twins")
    build_twins(folder)
    return folder


def pack_path(name: str, twins: Path) -> Path:
    """A real sample (skips when ../shared is absent) or its always-present twin."""
    return twins / name if name in TWINS else sample(f"vpp/{name}")


_align = rfg_bytes.align


def hand_made(members: list[tuple[bytes, bytes]], flags: int = 0, align: int = 1) -> bytes:
    """A packfile built by hand from the spec (independent of the writer under test)."""
    count = len(members)
    names = b"".join(name + b"\0" for name, _ in members)
    entries = []
    name_offset = 0
    if flags == 3:
        compressor = zlib.compressobj(9)
        plain_position = 0
        block = b""
        for index, (name, data) in enumerate(members):
            padded = data
            if index + 1 < count:
                padded += bytes(_align(plain_position + len(data), align) - plain_position - len(data))
            chunk = compressor.compress(padded) + compressor.flush(zlib.Z_SYNC_FLUSH)
            entries.append((name_offset, plain_position, len(data), len(chunk)))
            name_offset += len(name) + 1
            plain_position += len(padded)
            block += chunk
        data_size, compressed_size = plain_position, len(block)
    else:
        block = b""
        for index, (name, data) in enumerate(members):
            if index:
                block += bytes(_align(len(block)) - len(block))
            entries.append((name_offset, len(block), len(data), 0xFFFFFFFF))
            name_offset += len(name) + 1
            block += data
        data_size, compressed_size = len(block), 0xFFFFFFFF
    entry_block = b"".join(
        rfg_bytes.entry(name_off, data_off, name, size, stored)
        for (name, _), (name_off, data_off, size, stored) in zip(members, entries)
    )
    return rfg_bytes.assemble(
        flags=flags,
        count=count,
        entry_block=entry_block,
        names=names,
        block=block,
        data_size=data_size,
        compressed_size=compressed_size,
    )


def open_bytes(data: bytes, name: str = "test.vpp_pc") -> Reader:
    archive = gamepak.open(io.BytesIO(data), "vpp", name=name)
    assert isinstance(archive, Reader)
    return archive


# -- the spec, by hand ---------------------------------------------------------------------
def test_name_hash_is_rotate_xor_of_lower_case() -> None:
    assert name_hash(b"a") == 0x61
    assert name_hash(b"AB") == ((0x61 << 6) ^ 0x62)
    assert name_hash(b"Table.XTBL") == name_hash(b"table.xtbl")
    assert name_hash(b"x" * 40) != zlib.crc32(b"x" * 40)


@pytest.mark.parametrize("flags", [0, 3])
def test_hand_made_pack_reads(flags: int) -> None:
    members = [(b"Weapons.xtbl", b"<weapons/>" * 30), (b"b.txt", b"hello"), (b"empty", b"")]
    archive = open_bytes(hand_made(members, flags, align=16))
    assert archive.namelist() == ["Weapons.xtbl", "b.txt", "empty"]
    assert [archive.read(name.decode()) for name, _ in members] == [data for _, data in members]
    assert archive.read("WEAPONS.XTBL") == members[0][1]  # names are case-insensitive
    assert archive.verify() == []
    entries = archive.infolist()
    if flags == 0:
        assert entries[0].offset == 6144 and entries[1].offset == 6144 + 2048
        assert entries[0].stored_size is None
    else:
        assert [entry.offset for entry in entries] == [0, 304, 320]
        assert archive.header_fields()["member_offsets"].startswith("positions inside the decompressed")


def _names_pack(names: list[bytes], layout: str, seed: int) -> bytes:
    """An uncompressed pack of empty members called `names`, its name block laid out as
    `layout` says: "packed" (one after another, in entry order, as the writer does), "shuffled"
    (in another order), "gaps" (extra NULs or bytes between them) or "shared" (equal names
    stored once)."""
    rng = random.Random(seed)
    block = b""
    offsets: dict[int, int] = {}
    stored: dict[bytes, int] = {}
    order = list(range(len(names)))
    if layout == "shuffled":
        rng.shuffle(order)
    for index in order:
        if layout == "shared" and names[index] in stored:
            offsets[index] = stored[names[index]]
            continue
        if layout == "gaps" and rng.random() < 0.5:
            block += rng.choice([b"\0", b"x\0", b"\0\0\0"])
        offsets[index] = stored[names[index]] = len(block)
        block += names[index] + b"\0"
    entries = b"".join(rfg_bytes.entry(offsets[index], 0, name, 0, 0xFFFFFFFF) for index, name in enumerate(names))
    return rfg_bytes.assemble(
        flags=0, count=len(names), entry_block=entries, names=block, block=b"", data_size=0, compressed_size=0xFFFFFFFF
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text(alphabet="ab./_ Z", max_size=6).map(str.encode), max_size=12),
    st.sampled_from(["packed", "shuffled", "gaps", "shared"]),
    st.integers(0, 9),
)
def test_names_come_from_their_offsets_however_the_block_is_laid_out(
    names: list[bytes], layout: str, seed: int
) -> None:
    # The writer's layout is split at the NULs; any other is cut name by name: same names.
    archive = open_bytes(_names_pack(names, layout, seed))
    assert list(archive.namelist()) == [name.decode() for name in names]
    columns = archive._plain_columns()
    assert columns is not None and columns[0] == [name.decode() for name in names]


def test_names_of_a_pack_laid_out_as_written_are_its_name_block_split() -> None:
    names = [f"dir{index % 7}/file{index}.bin".encode() for index in range(500)]
    archive = open_bytes(_names_pack(names, "packed", 0))
    block = archive._name_block.decode("ascii")
    assert archive._ascii_names() == block.split("\0")[:500]
    # A block of the same names in another order is not split: each name is cut at its offset.
    shuffled = open_bytes(_names_pack(names, "shuffled", 1))
    cut = shuffled._name_block.decode().split("\0")[:500]
    assert shuffled._ascii_names() == [name.decode() for name in names] != cut


def test_sniff() -> None:
    assert packfile.sniff(Source.open(io.BytesIO(hand_made([(b"a", b"x")])))) == 1.0
    other_version = bytearray(hand_made([]))
    other_version[4] = 4
    assert packfile.sniff(Source.open(io.BytesIO(bytes(other_version)))) == 0.5
    assert packfile.sniff(Source.open(io.BytesIO(b"PACK" + bytes(100)))) == 0.0
    assert gamepak.detect(io.BytesIO(hand_made([(b"a", b"x")])))[0].format == "vpp"


# -- writing -------------------------------------------------------------------------------
member_names = st.builds(
    lambda head, tail: head + tail,
    st.sampled_from("abcXYZ"),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_.", max_size=20),
).filter(
    # Random bytes under a name verify checks as what it says (a nested pack, a texture pair, a
    # container table) would rightly be reported: keep those names for the tests about them.
    lambda name: (
        not name.lower().endswith((".str2_pc", ".vpp_pc", ".cpeg_pc", ".gpeg_pc", ".cvbm_pc", ".gvbm_pc", ".asm_pc"))
    )
)
member_data = st.one_of(
    st.binary(max_size=3000),
    st.builds(lambda word, count: word * count, st.binary(min_size=1, max_size=8), st.integers(0, 2000)),
)


@settings(max_examples=50, deadline=None)
@given(
    members=st.lists(st.tuples(member_names, member_data), max_size=6, unique_by=lambda m: m[0].lower()),
    flags=st.sampled_from([0, 1, 2, 3]),
    align=st.sampled_from([1, 2, 16, 64, 2048]),
)
def test_round_trip_every_mode(
    tmp_path_factory: pytest.TempPathFactory, members: list[tuple[str, bytes]], flags: int, align: int
) -> None:
    folder = tmp_path_factory.mktemp("rt")
    options: dict[str, Any] = {"flags": flags}
    if flags & 1:  # only compressed packs take a level
        options["level"] = 6
    if flags & 2:
        options["align"] = align
    path = folder / "round.vpp_pc"
    with gamepak.create(path, "vpp", **options) as writer:
        for name, data in members:
            writer.add(name, data)
    with gamepak.open(path) as archive:
        assert [(entry.name, archive.read(entry)) for entry in archive.infolist()] == members
        assert archive.verify() == []
        assert archive.header_fields()["flags"] == flags
        if flags & 2 and members:
            assert all(entry.offset % align == 0 for entry in archive.infolist()) or flags == 2
        # extract-all (one decompressor pass) gives the same bytes as single reads
        out = folder / "out"
        archive.extractall(out)
        for name, data in members:
            assert (out / name).read_bytes() == data


def test_defaults_follow_the_extension(tmp_path: Path) -> None:
    for name, flags, align in (("a.str2_pc", 3, 1), ("a.vpp_pc", 0, None)):
        with gamepak.create(tmp_path / name) as writer:
            writer.add("one.txt", b"1" * 10)
            writer.add("two.txt", b"2" * 10)
        with gamepak.open(tmp_path / name) as archive:
            assert archive.header_fields()["flags"] == flags
            layout = archive.layout()["options"]
            assert layout.get("align") == align
            if flags == 3:
                assert layout["level"] == 9
                assert [e.offset for e in archive.infolist()] == [0, 10]  # no padding in .str2_pc
    with gamepak.create(tmp_path / "b.vpp_pc", flags=3) as writer:
        writer.add("one.txt", b"1" * 10)
        writer.add("two.txt", b"2")
    with gamepak.open(tmp_path / "b.vpp_pc") as archive:
        assert [e.offset for e in archive.infolist()] == [0, 16]


def test_solid_stream_is_never_finished(tmp_path: Path) -> None:
    path = tmp_path / "x.str2_pc"
    with gamepak.create(path) as writer:
        writer.add("a", b"abc" * 100)
        writer.add("b", b"xyz" * 100)
    data = path.read_bytes()
    block = data[6144:]
    assert block.endswith(b"\0\0\xff\xff")
    with pytest.raises(zlib.error):
        zlib.decompress(block)  # no final block, no Adler-32
    assert zlib.decompressobj().decompress(block) == b"abc" * 100 + b"xyz" * 100


def test_empty_member_chunk_is_a_sync_mark_from_bytes_or_from_a_file(tmp_path: Path) -> None:
    # Found by fuzz/fuzz_manifest_all.py: an empty last member read from a file got no chunk (zlib
    # skips a second sync flush in a row), from bytes a 5-byte one; so `extract --manifest` then
    # `create DIR` did not give back a flags-3 pack gamepak itself had written.
    members = [("a.txt", b"hello " * 10), ("empty.bin", b""), ("also_empty.bin", b"")]
    for name, data in members:
        (tmp_path / name).write_bytes(data)
    for source in ("bytes", "files"):
        with gamepak.create(tmp_path / f"{source}.vpp_pc", flags=3) as writer:
            for name, data in members:
                writer.add(name, data if source == "bytes" else tmp_path / name)
    from_bytes = (tmp_path / "bytes.vpp_pc").read_bytes()
    assert (tmp_path / "files.vpp_pc").read_bytes() == from_bytes
    with gamepak.open(tmp_path / "files.vpp_pc") as pack:
        assert [entry.stored_size for entry in pack.infolist()][1:] == [5, 5]
        pack.extractall(tmp_path / "out", manifest=True)
    assert in_process_cli("create", str(tmp_path / "rebuilt.vpp_pc"), str(tmp_path / "out"))[0] == 0
    assert (tmp_path / "rebuilt.vpp_pc").read_bytes() == from_bytes


def test_writer_refusals(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedFeatureError):
        with gamepak.create(tmp_path / "a.vpp_pc", flags=0, align=16) as writer:
            writer.add("a", b"")
    with pytest.raises(UnsupportedFeatureError):
        with gamepak.create(tmp_path / "b.vpp_pc", flags=7) as writer:
            writer.add("a", b"")
    with pytest.raises(FormatLimitError):
        gamepak.create(tmp_path / "c.vpp_pc").add("bad\0name", b"")
    with pytest.raises(UnsupportedFeatureError, match="short_name"):  # an invalid option value
        with gamepak.create(tmp_path / "d.vpp_pc", short_name="x" * 65) as writer:
            writer.add("a", b"")
    assert not list(tmp_path.iterdir())


def test_linked_zlib_is_classic_and_exact_rebuild_refuses_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, twins: Path
) -> None:
    assert rebuild.classic_zlib()
    original = twins / "xray-like.str2_pc"
    with gamepak.open(original) as archive:
        archive.extractall(tmp_path / "x", manifest=True)
    manifest = json.loads((tmp_path / "x" / ".gamepak-manifest.json").read_text())
    monkeypatch.setattr(rebuild, "_classic_zlib", False)
    with pytest.raises(UnsupportedFeatureError, match="not classic zlib"):
        with gamepak.create(tmp_path / "y.str2_pc", **manifest["options"], layout=manifest["exact"]) as writer:
            for member in manifest["members"]:
                writer.add(member["name"], tmp_path / "x" / member["path"])


# -- the real samples --------------------------------------------------------------------------
def _lists_extracts_and_verifies(path: Path, expected: tuple[int, int, list[str]], tmp_path: Path) -> None:
    count, flags, first_names = expected
    with gamepak.open(path) as archive:
        assert archive.format_name == "vpp"
        assert len(archive) == count
        assert archive.namelist()[: len(first_names)] == first_names
        assert archive.header_fields()["flags"] == flags
        assert archive.check() == []
        written = archive.extractall(tmp_path / path.name)
        assert len(written) == count
        for entry, written_path in zip(archive.infolist(), written):
            assert os.path.getsize(written_path) == entry.size
        last = archive.infolist()[-1]
        assert Path(written[-1]).read_bytes() == archive.read(last.name.upper())


@pytest.mark.parametrize("name", sorted(TWINS))
def test_twin_lists_extracts_and_verifies(name: str, tmp_path: Path, twins: Path) -> None:
    _lists_extracts_and_verifies(twins / name, TWINS[name], tmp_path)


def test_every_sample_lists_extracts_and_verifies(tmp_path: Path) -> None:
    for name, expected in SAMPLES.items():
        _lists_extracts_and_verifies(sample(f"vpp/{name}"), expected, tmp_path)


def _rebuild_with_library(original: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "lib"
    with gamepak.open(original) as archive:
        archive.extractall(folder, manifest=True)
    manifest = json.loads((folder / ".gamepak-manifest.json").read_text())
    out = tmp_path / f"lib-{original.name}"
    with gamepak.create(out, manifest["format"], **manifest["options"], layout=manifest["exact"]) as writer:
        for member in manifest["members"]:
            writer.add(member["name"], str(folder / member["path"]))
    return out


def _rebuilds_byte_for_byte(original: Path, tmp_path: Path) -> None:
    work = tmp_path / original.name
    work.mkdir()
    assert _rebuild_with_library(original, work).read_bytes() == original.read_bytes()
    folder = work / "cli"
    out = work / f"cli-{original.name}"
    assert in_process_cli("extract", "--manifest", "-o", str(folder), str(original))[0] == 0
    code, _, err = in_process_cli("create", str(out), str(folder))
    assert code == 0, err
    assert out.read_bytes() == original.read_bytes()


@pytest.mark.parametrize("name", sorted(TWINS))
def test_twin_rebuilds_byte_for_byte(name: str, tmp_path: Path, twins: Path) -> None:
    _rebuilds_byte_for_byte(twins / name, tmp_path)


def test_every_sample_rebuilds_byte_for_byte(tmp_path: Path) -> None:
    for name in SAMPLES:
        _rebuilds_byte_for_byte(sample(f"vpp/{name}"), tmp_path)


ZLIB_SETTINGS = {
    "table.vpp_pc": (1, 64, True),
    "xray_effect.str2_pc": (9, 1, True),
    "repair_battery.str2_pc": (9, 1, True),
    "table-like.vpp_pc": (1, 64, True),
    "xray-like.str2_pc": (9, 1, True),
    "gibbed-like.str2_pc": (9, 1, False),
}


@pytest.mark.parametrize("source", ["twins", "samples"])
def test_zlib_settings_found(source: str, twins: Path) -> None:
    checked = 0
    for name, expected in ZLIB_SETTINGS.items():
        if (name in TWINS) != (source == "twins"):
            continue
        with gamepak.open(pack_path(name, twins)) as archive:
            options = archive.layout()["options"]
            assert (options["level"], options["align"], options["runtime"] is not None) == expected, name
        checked += 1
    assert checked == 3


@pytest.mark.parametrize(
    ("name", "member"), [("xray_effect.str2_pc", "xray_effect.cpeg_pc"), ("xray-like.str2_pc", "x.cpeg_pc")]
)
def test_edited_member_rebuilds_with_kept_options(tmp_path: Path, twins: Path, name: str, member: str) -> None:
    original = pack_path(name, twins)
    folder = tmp_path / "x"
    with gamepak.open(original) as archive:
        archive.extractall(folder, manifest=True)
    (folder / member).write_bytes(b"edited")
    out = tmp_path / "edited.str2_pc"
    assert in_process_cli("create", str(out), str(folder))[0] == 0
    with gamepak.open(out) as archive:
        assert archive.read(member) == b"edited"
        assert archive.verify() == []
        assert archive.header_fields()["runtime_bytes"] == "20b003320000000020606c31"


def test_extract_all_decompresses_the_shared_stream_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, twins: Path, inflater_choice: str
) -> None:
    created = []
    original_init = inflate.Inflater.__init__

    def counting_init(self: inflate.Inflater, *args: object) -> None:
        created.append(1)
        original_init(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(inflate.Inflater, "__init__", counting_init)
    with gamepak.open(twins / "table-like.vpp_pc") as archive:
        archive.extractall(tmp_path)
        last = archive.infolist()[-1]
        assert archive.inflated_bytes == last.offset + last.size  # type: ignore[attr-defined]
    # libdeflate inflates runs of chunks whole: no streaming inflater at all.
    assert len(created) == (0 if inflater_choice == "libdeflate" else 1)


def test_reading_one_member_stops_at_its_end(monkeypatch: pytest.MonkeyPatch, twins: Path) -> None:
    with gamepak.open(twins / "table-like.vpp_pc") as archive:
        assert isinstance(archive, Reader)
        reads: list[tuple[int, int]] = []
        original_pread = archive._source.pread

        def recording_pread(size: int, offset: int) -> bytes:
            reads.append((offset, size))
            return original_pread(size, offset)

        monkeypatch.setattr(archive._source, "pread", recording_pread)
        third = archive.infolist()[2]
        data = archive.read(third)
        assert len(data) == third.size and data.startswith(b"<")
        chunk_end = archive.chunk_start(third) + (third.stored_size or 0)
        assert max(offset + size for offset, size in reads) <= chunk_end
        assert max(size for _, size in reads) <= inflate._INPUT_STEP


def test_opening_members_in_order_continues_one_pass(monkeypatch: pytest.MonkeyPatch, twins: Path) -> None:
    created = []
    original_init = inflate.Inflater.__init__

    def counting_init(self: inflate.Inflater, *args: object) -> None:
        created.append(1)
        original_init(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(inflate.Inflater, "__init__", counting_init)
    with gamepak.open(twins / "table-like.vpp_pc") as archive:
        sizes = [len(archive.read(entry)) for entry in archive.infolist()]
        assert sizes == [entry.size for entry in archive.infolist()]
        assert len(created) == 1
        archive.read(archive.infolist()[0])  # going back starts a new pass
        assert len(created) == 2


def test_large_member_stream_seeks(monkeypatch: pytest.MonkeyPatch, twins: Path) -> None:
    monkeypatch.setattr(packfile, "SMALL_MEMBER", 0)
    monkeypatch.setattr(inflate, "_OUTPUT_STEP", 512)
    with gamepak.open(twins / "table-like.vpp_pc") as archive:
        entry = archive.infolist()[0]
        ((_, chunks),) = list(archive.iter_data([entry]))
        whole = b"".join(chunks)
        with archive.open(entry) as stream:
            assert stream.seekable()
            stream.seek(5000)
            assert stream.read(50) == whole[5000:5050]
            stream.seek(10)  # backwards: restarts the decompressor
            assert stream.read(20) == whole[10:30]
            stream.seek(-5, io.SEEK_END)
            assert stream.read() == whole[-5:]
            stream.seek(0)
            assert stream.read() == whole


# -- nested packs -------------------------------------------------------------------------------
def test_nested_packs(tmp_path: Path) -> None:
    outer = sample("vpp/dlcp01_activities.vpp_pc")
    code, out, _ = in_process_cli("ls", "-r", str(outer))
    assert code == 0
    lines = out.splitlines()
    assert "DLC_AD_07_09.str2_pc/dlc01_07_09_129.layer_pc" in lines
    assert sum("/" in line for line in lines) == 8
    with gamepak.open(outer) as archive:
        with archive.open_archive("dlc_ad_07_09.str2_pc") as inner:
            assert inner.format_name == "vpp"
            assert inner.namelist() == ["dlc01_07_09_129.layer_pc"]
            assert inner.verify() == []
            expected = inner.read("dlc01_07_09_129.layer_pc")
    assert len(expected) == 772
    code, out, _ = in_process_cli("cat", str(outer), "DLC_AD_07_09.str2_pc/dlc01_07_09_129.layer_pc")
    assert code == 0
    assert in_process_cli("extract", "-o", str(tmp_path), str(outer), "DLC_AD_07_09.str2_pc/*.layer_pc")[0] == 0
    found = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert [path.read_bytes() for path in found] == [expected]


def test_nested_twin_lists_reads_and_checks_its_table(twins: Path) -> None:
    outer = twins / "activities-like.vpp_pc"
    code, out, _ = in_process_cli("ls", "-r", str(outer))
    assert code == 0
    assert [line for line in out.splitlines() if "/" in line] == [
        f"Area_{i}.str2_pc/layer_{i}.layer_pc" for i in range(3)
    ]
    with gamepak.open(outer) as archive:
        assert archive.check() == []  # the .asm_pc matches its .str2_pc packs
        with archive.open_archive("area_1.str2_pc") as inner:
            assert inner.read("LAYER_1.layer_pc").startswith(b"<table>")


# -- archives past 4 GiB -----------------------------------------------------------------------
@pytest.mark.parametrize("flags", [0, 2])
def test_sparse_archive_past_4_gib(tmp_path: Path, flags: int) -> None:
    sizes = [0xFFFFF000, 0x10000, 5]
    names = [b"huge.bin", b"gap.bin", b"tail.txt"]
    relative = [0, 0xFFFFF000, 0xFFFFF000 + 0x10000]  # already 2048-aligned for flags 0
    name_block = b"".join(name + b"\0" for name in names)
    name_offsets = [0, 9, 17]
    data_start = 2048 + 2048 + 2048
    end = data_start + relative[-1] + sizes[-1]
    entries = b"".join(
        rfg_bytes.entry(name_offsets[i], relative[i] & 0xFFFFFFFF, names[i], sizes[i], 0xFFFFFFFF) for i in range(3)
    )
    header = rfg_bytes.header(
        flags=flags,
        count=3,
        file_size=0xFFFFFFFF,
        entries_size=len(entries),
        names_size=len(name_block),
        data_size=0xFFFFFFFF,
        compressed_size=0xFFFFFFFF,
    )
    path = tmp_path / "huge.vpp_pc"
    with open(path, "wb") as handle:
        handle.write(header + entries.ljust(2048, b"\0") + name_block.ljust(2048, b"\0"))
        handle.seek(data_start + relative[-1])
        handle.write(b"hello")
        handle.truncate(end)
    info = os.stat(path)
    assert info.st_size == end > 1 << 32
    assert info.st_blocks * 512 < 1 << 20, "the test file must stay sparse"
    with gamepak.open(path) as archive:
        entries_read = archive.infolist()
        assert [entry.offset for entry in entries_read] == [data_start + r for r in relative]
        assert archive.read("TAIL.txt") == b"hello"
        with archive.open("huge.bin") as stream:
            stream.seek(0xFFFFF000 - 3)
            assert stream.read(10) == b"\0\0\0"
        assert archive.verify() == []


def test_unwrap() -> None:
    assert packfile._unwrap(0xF000, 0xFFFFF000) == (1 << 32) + 0xF000
    assert packfile._unwrap(0xF000, 0) == 0xF000
    assert packfile._unwrap(5, (3 << 32) + 10) == (4 << 32) + 5


# -- malformed input ----------------------------------------------------------------------------
def _patch(data: bytes, offset: int, fmt: str, *values: int) -> bytes:
    patched = bytearray(data)
    struct.pack_into(fmt, patched, offset, *values)
    return bytes(patched)


def _solid(tmp_path: Path, members: list[tuple[str, bytes]], flags: int = 3) -> bytes:
    path = tmp_path / "s.str2_pc"
    with gamepak.create(path, flags=flags, overwrite=True) as writer:
        for name, data in members:
            writer.add(name, data)
    return path.read_bytes()


def test_counts_that_cannot_fit() -> None:
    data = _patch(hand_made([(b"a", b"x")]), 340, "<I", 1_000_000_000)
    with pytest.raises(CorruptArchiveError, match="entries need") as caught:
        open_bytes(data)
    assert caught.value.offset == 340


def test_entry_block_past_eof() -> None:
    data = hand_made([(b"a", b"x"), (b"b", b"y")])[: 2048 + 30]
    with pytest.raises(CorruptArchiveError) as caught:
        open_bytes(data)
    assert caught.value.offset == 340


def test_name_block_past_eof() -> None:
    data = _patch(hand_made([(b"a", b"x")]), 352, "<I", 10**9)
    with pytest.raises(CorruptArchiveError, match="name block") as caught:
        open_bytes(data)
    assert caught.value.offset == 4096


def test_name_without_nul() -> None:
    data = hand_made([(b"abc", b"x")])
    data = data[:4096] + b"abcd" + data[4100:]
    data = _patch(data, 352, "<I", 4)  # the name block holds "abcd" and no NUL
    with pytest.raises(CorruptArchiveError, match="no NUL") as caught:
        open_bytes(data)
    assert caught.value.member == "#0" and caught.value.offset == 4096


def test_member_bigger_than_declared_stops(tmp_path: Path) -> None:
    payload = bytes(1 << 20)  # a tiny compressed chunk that inflates far past the declared size
    data = _solid(tmp_path, [("a.txt", b"small"), ("bomb.bin", payload)])
    data = _patch(data, 2048 + 28 + 16, "<I", 100)  # declare 100 bytes for the 1 MiB member
    archive = open_bytes(data, "s.str2_pc")
    with pytest.raises(CorruptArchiveError, match="more than its declared size") as caught:
        archive.read("bomb.bin")
    assert caught.value.member == "bomb.bin"
    assert caught.value.offset == archive.chunk_start(archive.getinfo("bomb.bin"))
    assert any("more than its declared size" in problem for problem in archive.verify())
    assert archive.read("a.txt") == b"small"


def test_member_bigger_than_declared_per_member_stream(tmp_path: Path) -> None:
    data = _solid(tmp_path, [("bomb.bin", bytes(1 << 20))], flags=1)
    data = _patch(data, 2048 + 16, "<I", 10)
    archive = open_bytes(data)
    with pytest.raises(CorruptArchiveError, match="more than its declared size") as caught:
        archive.read("bomb.bin")
    assert caught.value.member == "bomb.bin" and caught.value.offset == 6144


def test_truncated_file_inside_compressed_data(tmp_path: Path) -> None:
    data = _solid(tmp_path, [("a.txt", os.urandom(5000)), ("b.txt", os.urandom(5000))])
    archive = open_bytes(data[:-3000], "s.str2_pc")
    with pytest.raises(CorruptArchiveError, match="truncated") as caught:
        archive.read("b.txt")
    assert caught.value.member == "b.txt" and caught.value.offset is not None
    assert archive.verify()


def test_zlib_stream_shorter_than_declared(tmp_path: Path) -> None:
    data = _solid(tmp_path, [("a.txt", b"abc" * 100)])
    data = _patch(data, 2048 + 16, "<I", 400)  # says 400 bytes; the stream holds 300
    archive = open_bytes(data, "s.str2_pc")
    with pytest.raises(CorruptArchiveError, match="truncated: member ends after 300 of its 400") as caught:
        archive.read("a.txt")
    assert caught.value.member == "a.txt" and caught.value.offset == 6144


def test_garbage_zlib_data(tmp_path: Path) -> None:
    data = bytearray(_solid(tmp_path, [("a.txt", b"abc" * 100)]))
    data[6144:6150] = b"\xff" * 6
    with pytest.raises(CorruptArchiveError, match="bad zlib data") as caught:
        open_bytes(bytes(data), "s.str2_pc").read("a.txt")
    assert caught.value.member == "a.txt"


def test_plain_member_past_eof() -> None:
    data = hand_made([(b"a", b"x" * 100)])[:-50]
    archive = open_bytes(data)
    with pytest.raises(CorruptArchiveError, match="past the end") as caught:
        archive.read("a")
    assert caught.value.member == "a" and caught.value.offset == 6144
    assert archive.verify()


def test_verify_reports_wrong_hash_and_sizes() -> None:
    data = hand_made([(b"a", b"x"), (b"b", b"y")])
    data = _patch(data, 2048 + 12, "<I", 0x1234)
    data = _patch(data, 356, "<I", 7)
    archive = open_bytes(data)
    problems = archive.verify()
    assert any("NameHash 0x00001234" in problem for problem in problems)  # the game looks names up by it
    assert not any("data_size" in problem for problem in problems)  # bookkeeping: positions come from sizes
    warnings = [p for p in archive.check() if p.severity == "warning"]
    assert [(p.offset, "data_size is 7" in p.message) for p in warnings] == [(356, True)]


def test_bad_magic_and_version() -> None:
    with pytest.raises(CorruptArchiveError, match="not a packfile"):
        open_bytes(b"\0" * 4096)
    data = _patch(hand_made([]), 4, "<I", 4)
    with pytest.raises(UnsupportedFeatureError):
        open_bytes(data)
    with pytest.raises(GamepakError):
        open_bytes(b"\xce\x0a\x89\x51\x03\0\0\0")


# -- exact rebuilds of packs other tools could write ---------------------------------------
@pytest.mark.parametrize(
    "options",
    [
        {"flags": 0, "path_name": "made by a test", "runtime": "0102030405060708090a0b0c"},
        {"flags": 1, "level": 3, "finish": False},
        {"flags": 1, "level": 9, "strategy": 1},
        {"flags": 2, "align": 8, "short_name": "short"},
        {"flags": 3, "level": 4, "align": 32, "mem_level": 9},
    ],
)
def test_rebuild_recovers_writer_settings(tmp_path: Path, options: dict[str, Any]) -> None:
    original = tmp_path / "original.vpp_pc"
    rng = random.Random(5)
    words = [b"alpha", b"beta", b"gamma", b"delta", b"<tag>", b"</tag>", b"value=", b"\n"]
    with gamepak.create(original, **options) as writer:
        for index in range(5):
            text = b" ".join(rng.choice(words) + b"%d" % rng.randrange(50) for _ in range(index * 700 + 3))
            writer.add(f"member{index}.txt", text)
    folder = tmp_path / "x"
    assert in_process_cli("extract", "--manifest", "-o", str(folder), str(original))[0] == 0
    manifest = json.loads((folder / ".gamepak-manifest.json").read_text())
    for key, value in options.items():
        assert manifest["options"][key] == value
    out = tmp_path / "again.vpp_pc"
    assert in_process_cli("create", str(out), str(folder))[0] == 0
    assert out.read_bytes() == original.read_bytes()


def test_rebuild_keeps_irregular_offsets_and_header_junk(tmp_path: Path) -> None:
    members = [(b"a.bin", b"A" * 37), (b"b.bin", b"B" * 50), (b"c.bin", b"C" * 3)]
    compressor = zlib.compressobj(9)
    offsets = [0, 40, 101]  # no single alignment explains these gaps
    plain = b"A" * 37 + bytes(3) + b"B" * 50 + bytes(11) + b"C" * 3
    chunks = [
        compressor.compress(plain[0:40]) + compressor.flush(zlib.Z_SYNC_FLUSH),
        compressor.compress(plain[40:101]) + compressor.flush(zlib.Z_SYNC_FLUSH),
        compressor.compress(plain[101:]) + compressor.flush(zlib.Z_SYNC_FLUSH),
    ]
    data = bytearray(hand_made(members, flags=3))
    block_at = 6144
    del data[block_at:]
    data += b"".join(chunks)
    for index, (offset, chunk) in enumerate(zip(offsets, chunks)):
        struct.pack_into("<I", data, 2048 + 28 * index + 8, offset)
        struct.pack_into("<I", data, 2048 + 28 * index + 20, len(chunk))
    struct.pack_into("<III", data, 356, len(plain), sum(map(len, chunks)), 0xDEADBEEF)
    struct.pack_into("<I", data, 344, len(data))
    data[73:90] = b"path\0junk-after!!"
    data[1000] = 7  # junk in the header padding
    original = tmp_path / "odd.str2_pc"
    original.write_bytes(bytes(data))
    with gamepak.open(original) as archive:
        assert [archive.read(name.decode()) for name, _ in members] == [d for _, d in members]
        assert archive.verify() == []
    assert _rebuild_with_library(original, tmp_path).read_bytes() == bytes(data)


# -- found by the fuzz harnesses (fuzz/): exact rebuilds of odd but readable packs ---------------


def test_empty_solid_pack_with_trailing_bytes_rebuilds_exactly(tmp_path: Path) -> None:
    # An empty flags-3 pack was taken for another tool's stream, so its header fields and
    # trailing bytes were dropped from the manifest (fuzz_manifest_all).
    data = bytearray(hand_made([], flags=3)) + b"trailing junk"
    struct.pack_into("<I", data, 344, 2048)  # the FileSize field, as the bytes were appended
    original = tmp_path / "empty.str2_pc"
    original.write_bytes(bytes(data))
    with gamepak.open(original) as archive:
        assert archive.verify() == []
    assert _rebuild_with_library(original, tmp_path).read_bytes() == bytes(data)


def test_junk_in_the_padding_between_compressed_members_is_kept(tmp_path: Path) -> None:
    # Flags 1 pads every member's stream to 2048 bytes; non-zero bytes there were taken for
    # data and lost by the exact rebuild (fuzz_manifest_all).
    data = bytearray(_write_twin(tmp_path / "clean.vpp_pc", [("a.bin", b"A" * 300), ("b.bin", b"B" * 10)], flags=1))
    with gamepak.open(io.BytesIO(bytes(data)), "vpp") as archive:
        first = archive.infolist()[0]
        junk_at = first.offset + (first.stored_size or 0) + 100
    data[junk_at : junk_at + 4] = b"junk"
    original = tmp_path / "padded.vpp_pc"
    original.write_bytes(bytes(data))
    with gamepak.open(original) as archive:
        assert archive.verify() == []
    assert _rebuild_with_library(original, tmp_path).read_bytes() == bytes(data)


def test_names_that_share_bytes_rebuild_where_they_were(tmp_path: Path) -> None:
    # 'b.wav' starts inside the longer first name: the writer put the names one after another
    # while the entries kept the recorded offsets, so the rebuilt pack's last name ran into
    # other bytes and did not read (fuzz_rebuild_vpp).
    data = bytearray(hand_made([(b"readme.txt", b"R" * 60), (b"b.wav", b"W" * 8)], flags=2))
    names_at = 4096
    assert data[names_at : names_at + 17] == b"readme.txt\0b.wav\0"
    data[names_at + 10] = ord("x")  # name 0 is now 'readme.txtxb.wav'; name 1 still starts at 11
    struct.pack_into("<I", data, 2048 + 12, name_hash(b"readme.txtxb.wav"))
    original = tmp_path / "shared.vpp_pc"
    original.write_bytes(bytes(data))
    with gamepak.open(original) as archive:
        assert archive.namelist() == ["readme.txtxb.wav", "b.wav"]
        assert archive.verify() == []
    rebuilt = _rebuild_with_library(original, tmp_path)
    assert rebuilt.read_bytes() == bytes(data)


def test_overlapping_members_rebuild_as_a_clean_pack_with_the_same_members(tmp_path: Path) -> None:
    # Both members start at the same offset (a damaged pack): the exact layout wrote the second
    # after the first instead, so it read back other bytes (fuzz_rebuild_vpp).
    data = bytearray(hand_made([(b"a.bin", b"A"), (b"b.bin", b"AB" * 4)], flags=2))
    struct.pack_into("<I", data, 2048 + 28 + 8, 0)  # b.bin's DataOffset: where a.bin is
    data[6144:6152] = b"AB" * 4
    original = tmp_path / "overlap.vpp_pc"
    original.write_bytes(bytes(data))
    with gamepak.open(original) as archive:
        before = [archive.read(entry) for entry in archive.infolist()]
        assert before == [b"A", b"AB" * 4]
    with pytest.warns(UserWarning, match="members overlap in the source .* not byte for byte"):
        rebuilt_path = _rebuild_with_library(original, tmp_path)
    with gamepak.open(rebuilt_path) as rebuilt:
        assert [rebuilt.read(entry) for entry in rebuilt.infolist()] == before
        assert rebuilt.verify() == []


def test_junk_in_the_entry_fields_the_writer_leaves_zero_is_kept(tmp_path: Path) -> None:
    # The second and last uint32 of an entry are zero in the game's files; other values were
    # neither reproduced nor kept in the manifest (fuzz_manifest_all).
    data = bytearray(hand_made([(b"a.bin", b"A" * 10), (b"b.bin", b"B" * 3)]))
    struct.pack_into("<I", data, 2048 + 4, 0x1234)
    struct.pack_into("<I", data, 2048 + 28 + 24, 0x400000)
    original = tmp_path / "fields.vpp_pc"
    original.write_bytes(bytes(data))
    with gamepak.open(original) as archive:
        assert archive.verify() == []
    assert _rebuild_with_library(original, tmp_path).read_bytes() == bytes(data)


def test_cli_options_for_the_header(tmp_path: Path) -> None:
    member = tmp_path / "one.txt"
    member.write_bytes(b"1")
    out = tmp_path / "t.str2_pc"
    code, _, err = in_process_cli(
        "create", str(out), str(member), "-O", "runtime=0x0102030405060708090a0b0c", "-O", "short_name=123"
    )
    assert code == 0, err
    with gamepak.open(out) as archive:
        fields = archive.header_fields()
        assert (fields["runtime_bytes"], fields["short_name"], fields["flags"]) == (
            "0102030405060708090a0b0c",
            "123",
            3,
        )
    assert in_process_cli("create", "--overwrite", str(out), str(member), "-O", "runtime=0x01" + "00" * 12)[0] != 0


@settings(max_examples=50, deadline=None)
@given(changes=st.lists(st.tuples(st.integers(0, 6824), st.integers(0, 255)), min_size=1, max_size=4))
def test_corrupted_pack_raises_only_gamepak_errors(changes: list[tuple[int, int]]) -> None:
    data = bytearray(_XRAY_LIKE)
    for position, value in changes:
        # Aim half of the changes at the header and entries, where they matter most.
        data[(position if position % 2 else position % 2200) % len(data)] = value
    try:
        archive = open_bytes(bytes(data), "x.str2_pc")
        archive.verify()
        for entry in archive.infolist():
            archive.read(entry)
    except GamepakError:
        pass


def _xray_like() -> bytes:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        build_twins(Path(folder))
        return (Path(folder) / "xray-like.str2_pc").read_bytes()


_XRAY_LIKE = _xray_like()


@pytest.mark.parametrize("flags", [0, 2])
def test_uncompressed_packs_extract_as_plain_ranges_checked_up_front(tmp_path: Path, flags: int) -> None:
    members = [(f"m{index}.txt", bytes([65 + index]) * (3000 + index)) for index in range(4)]
    path = tmp_path / "plain.vpp_pc"
    with gamepak.create(path, flags=flags) as writer:
        for name, data in members:
            writer.add(name, data)
    with gamepak.open(path) as archive:
        assert isinstance(archive, Reader)
        assert archive._plain_ranges() and archive._raw_range(archive.infolist()[1]) is not None
        archive.extractall(tmp_path / "out")
    assert {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()} == dict(members)
    # Cut into the last member: refused before any file is written.
    with open(path, "r+b") as handle:
        handle.truncate(path.stat().st_size - 10)
    with gamepak.open(path) as archive:
        with pytest.raises(CorruptArchiveError, match="runs past the end") as caught:
            archive.extractall(tmp_path / "cut")
        assert caught.value.member == "m3.txt"
    assert not (tmp_path / "cut").exists() or not any((tmp_path / "cut").iterdir())


def test_names_are_decoded_on_first_use(tmp_path: Path) -> None:
    path = tmp_path / "lazy.vpp_pc"
    with gamepak.create(path) as writer:
        for index in range(50):
            writer.add(f"n{index}.txt", b"x")
        writer.add("caf\u00e9.txt", b"y")
    with gamepak.open(path) as archive:
        assert isinstance(archive, Reader)
        names = archive.namelist()
        assert len(names) == len(archive) == 51 and archive._decoded is None and archive._entries is None
        assert names[7] == "n7.txt" and names[-1] == "caf\u00e9.txt" and archive._decoded is None
        assert list(names) == [f"n{index}.txt" for index in range(50)] + ["caf\u00e9.txt"]
        assert archive.read("CAF\u00c9.txt".lower()) == b"y"


def test_case_only_duplicates_are_duplicates_in_rfg_packs(tmp_path: Path) -> None:
    """The game looks RFG members up ignoring case: `A.TXT` and `a.txt` are one name, refused
    as a duplicate by create and convert as add refuses it (issue 20 finding 6)."""
    from conftest import in_process_cli

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "A.TXT").write_bytes(b"upper")
    (folder / "a.txt").write_bytes(b"lower")
    code, _, err = in_process_cli("create", str(tmp_path / "p.vpp_pc"), str(folder))
    assert code == 1 and "ignoring case" in err and not (tmp_path / "p.vpp_pc").exists()
    assert in_process_cli("create", str(tmp_path / "p.pak"), str(folder))[0] == 0  # Quake: case matters
    code, _, err = in_process_cli("convert", str(tmp_path / "p.pak"), str(tmp_path / "c.vpp_pc"))
    assert code == 1 and "ignoring case" in err
    with pytest.raises(gamepak.errors.FormatLimitError, match="ignoring case"):
        with gamepak.create(tmp_path / "lib.vpp_pc") as writer:
            writer.add("Zone.txt", b"1")
            writer.add("ZONE.TXT", b"2")


def test_zlib_settings_given_as_none_take_zlibs_defaults(tmp_path: Path) -> None:
    """`window_bits=None` (and `mem_level`, `strategy`) means the default, as for every other
    option: it once reached zlib as None and escaped as a TypeError."""
    written = []
    cases: tuple[tuple[str, dict[str, Any]], ...] = (
        ("given.str2_pc", dict.fromkeys(("window_bits", "mem_level", "strategy"))),
        ("plain.str2_pc", {}),
    )
    for name, options in cases:
        with gamepak.create(tmp_path / name, "vpp", **options) as writer:
            writer.add("one.txt", b"one " * 100)
        written.append((tmp_path / name).read_bytes())
    assert written[0] == written[1]


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.text(alphabet="ab_é\u6587", min_size=1, max_size=6).map(lambda stem: stem + ".x"), max_size=12, unique=True
    ),
    st.sampled_from([0, 1, 2, 3]),
)
def test_names_and_places_read_without_unpacking_the_records(
    tmp_path_factory: pytest.TempPathFactory, names: list[str], flags: int
) -> None:
    """The entries are placed from strided fields of the entry block and named from the name
    block decoded once when it is ASCII (one by one otherwise): the same as from the records."""
    path = tmp_path_factory.mktemp("fields") / "p.vpp_pc"
    with gamepak.create(path, "vpp", flags=flags) as writer:
        for index, name in enumerate(names):
            writer.add(name, bytes([index]) * (index * 700))
    with gamepak.open(path) as archive:
        assert isinstance(archive, Reader)
        assert [entry.name for entry in archive.infolist()] == names
        assert archive._ascii_names() == (names if all(name.isascii() for name in names) else None)
        records = archive.records
        assert list(archive._field(0)) == [record[0] for record in records]
        assert list(archive._field(2)) == [record[2] for record in records]
        assert list(archive._field(4)) == [record[4] for record in records] == [len(archive.read(n)) for n in names]
        assert list(archive._field(5)) == [record[5] for record in records]
        assert [archive.read(name) for name in names] == [bytes([i]) * (i * 700) for i in range(len(names))]
