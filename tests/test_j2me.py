"""Gameloft J2ME packs: the four layouts built by hand from the spec, writers and their limits,
byte-exact rebuilds, detection without magic (also on the other formats' real samples), hostile
input and the CLI."""

from __future__ import annotations

import io
import json
import os
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.core.source import Source
from gamepak.errors import (
    AmbiguousFormatError,
    CorruptArchiveError,
    FormatLimitError,
    GamepakError,
    InvalidOptionError,
)
from gamepak.formats.j2me import structure

from conftest import SAMPLES, in_process_cli

LAYOUTS = ["j2me-offsets", "j2me-end-offsets", "j2me-table", "j2me-sized"]
SNIFFERS = {
    "j2me-offsets": structure.sniff_offsets,
    "j2me-end-offsets": structure.sniff_end_offsets,
    "j2me-table": structure.sniff_table,
    "j2me-sized": structure.sniff_sized,
}
PNG = b"\x89PNG\r\n\x1a\n" + b"\0\0\0\rIHDR"
TEXT = b"Hello\0It\x92s caf\xe9\0"
BLOB = bytes([1, 2, 3, 0, 255, 7])
MEMBERS = [PNG, TEXT, BLOB]


# -- hand-made bytes, straight from the spec ---------------------------------------------------


def offsets_pack(files: list[bytes]) -> bytes:
    """int16 N = files+1, N int32 start offsets (from the payload start), payload."""
    starts = [0]
    for data in files:
        starts.append(starts[-1] + len(data))
    return struct.pack("<h", len(starts)) + struct.pack(f"<{len(starts)}i", *starts) + b"".join(files)


def end_offsets_pack(files: list[bytes], terminator: int = 0) -> bytes:
    """int32 N, N int32 end offsets, one terminator byte, payload."""
    ends = []
    total = 0
    for data in files:
        total += len(data)
        ends.append(total)
    return struct.pack("<i", len(files)) + struct.pack(f"<{len(ends)}i", *ends) + bytes([terminator]) + b"".join(files)


def table_pack(files: list[bytes]) -> bytes:
    """Unsigned count byte, N (int32 offset, int32 size) pairs, payload."""
    header = bytes([len(files)])
    position = 0
    for data in files:
        header += struct.pack("<ii", position, len(data))
        position += len(data)
    return header + b"".join(files)


def sized_pack(files: list[bytes]) -> bytes:
    """{uint16 size, data} repeated."""
    return b"".join(struct.pack("<H", len(data)) + data for data in files)


BUILDERS = {
    "j2me-offsets": offsets_pack,
    "j2me-end-offsets": end_offsets_pack,
    "j2me-table": table_pack,
    "j2me-sized": sized_pack,
}


def sniff(data: bytes, layout: str) -> float:
    return float(SNIFFERS[layout](Source.open(io.BytesIO(data))))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_spec_bytes_read(layout: str) -> None:
    data = BUILDERS[layout](MEMBERS)
    with gamepak.open(io.BytesIO(data), layout) as pack:
        assert pack.format_name == layout
        assert pack.namelist() == ["0", "1", "2"]
        assert [pack.read(name) for name in pack.namelist()] == MEMBERS
        assert [pack.extraction_name(entry) for entry in pack.infolist()] == ["0.png", "1.txt", "2.bin"]
        assert pack.verify() == []
        # Offsets are relative to the payload: the first member starts right after the header.
        header_size = {
            "j2me-offsets": 2 + 4 * 4,
            "j2me-end-offsets": 4 + 4 * 3 + 1,
            "j2me-table": 1 + 8 * 3,
            "j2me-sized": 2,
        }[layout]
        assert pack.getinfo("0").offset == header_size
        assert pack.header_fields()["members_tile_payload"] is True


def test_exact_header_bytes() -> None:
    """Known values, spelled out byte by byte."""
    files = [b"AB", b"CDE"]
    assert offsets_pack(files) == bytes.fromhex("0300000000000200000005000000") + b"ABCDE"
    assert end_offsets_pack(files) == bytes.fromhex("02000000020000000500000000") + b"ABCDE"
    assert table_pack(files) == bytes.fromhex("0200000000020000000200000003000000") + b"ABCDE"
    assert sized_pack(files) == bytes.fromhex("0200") + b"AB" + bytes.fromhex("0300") + b"CDE"


@pytest.mark.parametrize("layout", LAYOUTS)
def test_writer_matches_spec(tmp_path: Path, layout: str) -> None:
    path = tmp_path / "out.bin"
    with gamepak.create(path, layout) as writer:
        # Names map back to indices whatever the order of adding and the extension.
        writer.add("2.bin", BLOB)
        writer.add("0.png", PNG)
        writer.add("1", TEXT)
    assert path.read_bytes() == BUILDERS[layout](MEMBERS)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_empty_pack(tmp_path: Path, layout: str) -> None:
    path = tmp_path / "empty.bin"
    with gamepak.create(path, layout):
        pass
    with gamepak.open(path, layout) as pack:
        assert pack.namelist() == []


def test_table_count_byte_is_unsigned() -> None:
    files = [bytes([index]) for index in range(200)]
    data = table_pack(files)
    assert data[0] == 200
    with gamepak.open(io.BytesIO(data), "j2me-table") as pack:
        assert len(pack) == 200
        assert pack.read("199") == bytes([199])


def test_table_overlapping_and_out_of_order_members() -> None:
    payload = b"0123456789"
    header = bytes([3]) + struct.pack("<iiiiii", 6, 4, 0, 8, 2, 3)
    with gamepak.open(io.BytesIO(header + payload), "j2me-table") as pack:
        assert [pack.read(name) for name in pack.namelist()] == [b"6789", b"01234567", b"234"]
        assert pack.header_fields()["members_tile_payload"] is False


def test_end_offsets_terminator_is_kept() -> None:
    data = end_offsets_pack([b"xy"], terminator=0xAB)
    with gamepak.open(io.BytesIO(data), "j2me-end-offsets") as pack:
        assert pack.read("0") == b"xy"
        assert pack.header_fields()["terminator"] == 0xAB
        assert pack.layout()["exact"]["terminator"] == 0xAB


# -- round trips -------------------------------------------------------------------------------


def rebuild_with_library(source: Path, layout: str, target: Path) -> bytes:
    with gamepak.open(source, layout) as pack:
        plan = pack.layout()
        members = [(entry.name, pack.read(entry)) for entry in pack.infolist()]
    with gamepak.create(target, layout, layout=plan["exact"], **plan["options"]) as writer:
        for name, data in members:
            writer.add(name, data)
    return target.read_bytes()


def rebuild_with_cli(source: Path, layout: str, folder: Path, target: Path) -> bytes:
    assert in_process_cli("--format", layout, "extract", str(source), "-o", str(folder), "--manifest")[0] == 0
    code, _, err = in_process_cli("create", str(target), str(folder))
    assert code == 0, err
    return target.read_bytes()


ODD_FILES = {
    # Overlapping, out of order, uncovered payload bytes and a trailing byte.
    "j2me-table": bytes([3]) + struct.pack("<iiiiii", 6, 4, 0, 8, 2, 3) + b"0123456789\xee\x01",
    # offset[0] > 0 (a leading gap) and bytes after the last offset.
    "j2me-offsets": struct.pack("<hiii", 3, 2, 4, 7) + b"\x11\x22abcde\x99\x98",
    # A non-zero terminator and trailing bytes.
    "j2me-end-offsets": struct.pack("<iii", 2, 3, 3) + b"\xab" + b"xyz\x05\x06",
    "j2me-sized": sized_pack([b"", b"\x00\x01", b"zz"]),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_odd_files_rebuild_byte_exact(tmp_path: Path, layout: str) -> None:
    source = tmp_path / "odd.bin"
    source.write_bytes(ODD_FILES[layout])
    assert rebuild_with_library(source, layout, tmp_path / "lib.bin") == ODD_FILES[layout]
    assert rebuild_with_cli(source, layout, tmp_path / "x", tmp_path / "cli.bin") == ODD_FILES[layout]


def test_edited_overlapping_member_is_laid_out_afresh(tmp_path: Path) -> None:
    source = tmp_path / "odd.bin"
    source.write_bytes(ODD_FILES["j2me-table"])
    folder = tmp_path / "x"
    assert in_process_cli("--format", "j2me-table", "extract", str(source), "-o", str(folder), "--manifest")[0] == 0
    edited = next(folder.glob("1.*"))
    edited.write_bytes(b"ABCDEFGH")  # same size, other bytes: it overlaps members 0 and 2
    assert in_process_cli("create", str(tmp_path / "new.bin"), str(folder))[0] == 0
    with gamepak.open(tmp_path / "new.bin", "j2me-table") as pack:
        assert [pack.read(name) for name in pack.namelist()] == [b"6789", b"ABCDEFGH", b"234"]


member_lists = st.lists(st.binary(max_size=300), max_size=12)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(layout=st.sampled_from(LAYOUTS), files=member_lists)
def test_roundtrip_property(tmp_path: Path, layout: str, files: list[bytes]) -> None:
    path = tmp_path / "prop.bin"
    with gamepak.create(path, layout, overwrite=True) as writer:
        for index, data in enumerate(files):
            writer.add(str(index), data)
    assert path.read_bytes() == BUILDERS[layout](files)
    with gamepak.open(path, layout) as pack:
        assert [pack.read(entry) for entry in pack.infolist()] == files
    assert rebuild_with_library(path, layout, tmp_path / "again.bin") == path.read_bytes()
    os.unlink(tmp_path / "again.bin")


@settings(max_examples=50, deadline=None)
@given(
    payload=st.binary(min_size=1, max_size=64),
    spans=st.lists(st.tuples(st.integers(0, 63), st.integers(0, 63)), max_size=8),
    trailer=st.binary(max_size=4),
)
def test_table_any_layout_rebuilds_exactly(payload: bytes, spans: list[tuple[int, int]], trailer: bytes) -> None:
    payload += trailer
    fitted = [(min(o, len(payload)), min(s, len(payload) - min(o, len(payload)))) for o, s in spans]
    data = bytes([len(fitted)]) + b"".join(struct.pack("<ii", o, s) for o, s in fitted) + payload
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "t.bin"
        source.write_bytes(data)
        assert rebuild_with_library(source, "j2me-table", Path(folder) / "r.bin") == data
        assert sniff(data, "j2me-table") > 0


# -- names from folders ------------------------------------------------------------------------


def test_create_from_folder_maps_names_to_indices(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    files = [bytes([index]) * (index + 1) for index in range(12)]
    for index, data in enumerate(files):
        (folder / f"{index}.bin").write_bytes(data)  # 10.bin sorts before 2.bin by name
    code, _, err = in_process_cli("create", "--format", "j2me-table", str(tmp_path / "p.bin"), str(folder))
    assert code == 0, err
    assert (tmp_path / "p.bin").read_bytes() == table_pack(files)


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (["0.png", "2.png"], "index 1 is missing"),
        (["0.png", "1.png", "1.bin"], "both claim index 1"),
        (["0.png", "logo.png"], "name members by their index"),
    ],
)
def test_create_refuses_gaps_duplicates_and_names(tmp_path: Path, names: list[str], message: str) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    for name in names:
        (folder / name).write_bytes(b"x")
    code, _, err = in_process_cli("create", "--format", "j2me-sized", str(tmp_path / "p.bin"), str(folder))
    assert code == 1
    assert message in err
    assert not (tmp_path / "p.bin").exists()


# -- writer limits -----------------------------------------------------------------------------


def test_table_refuses_256_members(tmp_path: Path) -> None:
    with gamepak.create(tmp_path / "ok.bin", "j2me-table") as writer:
        for index in range(255):
            writer.add(str(index), b"")
    with pytest.raises(FormatLimitError, match="at most 255"):
        with gamepak.create(tmp_path / "big.bin", "j2me-table") as writer:
            for index in range(256):
                writer.add(str(index), b"")
    assert not (tmp_path / "big.bin").exists()


def test_sized_refuses_member_of_64k(tmp_path: Path) -> None:
    with gamepak.create(tmp_path / "ok.bin", "j2me-sized") as writer:
        writer.add("0", b"\0" * 65535)
    with pytest.raises(FormatLimitError, match="at most 65535"):
        with gamepak.create(tmp_path / "big.bin", "j2me-sized") as writer:
            writer.add("0", b"\0" * 65536)
    assert not (tmp_path / "big.bin").exists()


def test_offsets_refuses_more_than_int16_offsets(tmp_path: Path) -> None:
    with pytest.raises(FormatLimitError, match="at most 32766"):
        with gamepak.create(tmp_path / "big.bin", "j2me-offsets") as writer:
            for index in range(32767):
                writer.add(str(index), b"")
    assert not (tmp_path / "big.bin").exists()


@pytest.mark.parametrize("layout", ["j2me-offsets", "j2me-end-offsets", "j2me-table"])
def test_int32_total_refused(tmp_path: Path, layout: str) -> None:
    huge = tmp_path / "huge.bin"
    with open(huge, "wb") as handle:
        handle.truncate(1 << 30)  # sparse: costs no disk
    with pytest.raises(FormatLimitError, match="int32"):
        with gamepak.create(tmp_path / "big.bin", layout) as writer:
            writer.add("0", huge)
            writer.add("1", huge)
    assert not (tmp_path / "big.bin").exists()


def test_end_offsets_terminator_option(tmp_path: Path) -> None:
    with gamepak.create(tmp_path / "t.bin", "j2me-end-offsets", terminator=7) as writer:
        writer.add("0", b"ab")
    assert (tmp_path / "t.bin").read_bytes() == end_offsets_pack([b"ab"], terminator=7)
    with pytest.raises(InvalidOptionError, match="terminator=300"):
        gamepak.create(tmp_path / "u.bin", "j2me-end-offsets", terminator=300)


# -- detection ---------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
def test_detection_finds_each_layout_first(tmp_path: Path, layout: str) -> None:
    path = tmp_path / "pack.bin"
    path.write_bytes(BUILDERS[layout](MEMBERS))
    found = gamepak.detect(path)
    assert found[0].format == layout
    assert 0 < found[0].confidence < 0.9 and not found[0].has_magic
    with gamepak.open(path) as pack:
        assert pack.format_name == layout
        assert pack.read("1") == TEXT


@pytest.mark.parametrize("data", [b"", b"\0", b"\x01", b"\xff"])
def test_tiny_files_fit_nothing(data: bytes) -> None:
    assert all(sniff(data, layout) == 0 for layout in LAYOUTS)


def test_exact_tiling_beats_loose_fit_and_members_add_confidence() -> None:
    tiled = table_pack([b"abc", b"defg"])
    loose = bytes([2]) + struct.pack("<iiii", 0, 3, 3, 4) + b"abcdefg" + b"junk"
    assert sniff(tiled, "j2me-table") > sniff(loose, "j2me-table") > 0
    assert sniff(table_pack([b"a", b"b", b"c", b"d"]), "j2me-table") > sniff(table_pack([b"ab", b"cd"]), "j2me-table")
    assert sniff(offsets_pack([b"a"] * 5), "j2me-offsets") > sniff(offsets_pack([b"aaaaa"]), "j2me-offsets")


@pytest.mark.parametrize(
    ("data", "layout"),
    [
        (struct.pack("<h", 100) + b"\0" * 40, "j2me-offsets"),  # count needs 402 bytes
        (struct.pack("<hii", 2, 0, 99) + b"abc", "j2me-offsets"),  # offset past the end
        (struct.pack("<hiii", 3, 0, 3, 1) + b"abc", "j2me-offsets"),  # offsets out of order
        (struct.pack("<h", -3) + b"\0" * 20, "j2me-offsets"),  # negative count
        (struct.pack("<i", 0x10000) + b"\0" * 30, "j2me-end-offsets"),
        (struct.pack("<iii", 2, 3, 1) + b"\0abc", "j2me-end-offsets"),
        (struct.pack("<ii", 1, -1) + b"\0abc", "j2me-end-offsets"),
        (bytes([9]) + b"\0" * 20, "j2me-table"),  # count needs 73 bytes
        (bytes([1]) + struct.pack("<ii", 2, 5) + b"abcd", "j2me-table"),  # size past the end
        (bytes([1]) + struct.pack("<ii", -1, 1) + b"abcd", "j2me-table"),
        (struct.pack("<H", 10) + b"abc", "j2me-sized"),  # data past the end
        (struct.pack("<H", 1) + b"a" + b"\x05", "j2me-sized"),  # size field cut off
    ],
)
def test_hostile_input(data: bytes, layout: str) -> None:
    assert sniff(data, layout) == 0
    with pytest.raises(CorruptArchiveError) as caught:
        gamepak.open(io.BytesIO(data), layout)
    assert caught.value.offset is not None  # names the position


def test_huge_end_offsets_count_is_refused_before_reading() -> None:
    data = struct.pack("<i", 0x7FFFFFFF) + b"\0" * 16
    with pytest.raises(CorruptArchiveError, match="needs a"):
        gamepak.open(io.BytesIO(data), "j2me-end-offsets")


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        ("pak/quakespasm.pak", "pak"),
        ("jpk/garage_objects.jpk", "jpk"),
        ("jpk/test1.jpk", "jpk"),
        ("vpp/table.vpp_pc", "vpp"),
        ("vpp/dlcp01_activities.vpp_pc", "vpp"),
        ("vpp/dlc01_l1.vpp_pc", "vpp"),
        ("vpp/xray_effect.str2_pc", "vpp"),
        ("vpp/repair_battery.str2_pc", "vpp"),
        ("joe/road_cone.joe", "joe"),
        ("joe/road_cone-collision.joe", "joe"),
        ("joe/toolbox.joe", "joe"),
        ("jpk/garage_list.txt", None),
    ],
)
def test_other_formats_samples_are_not_j2me_packs(tmp_path: Path, relative: str, expected: str | None) -> None:
    path = SAMPLES / relative
    if not path.exists():
        # Without ../shared/samples: a file of the same format written by gamepak's writers.
        path = tmp_path / os.path.basename(relative)
        if expected == "joe":
            struct_model = struct.pack("<4siii", b"IDP2", 3, 1, 1) + struct.pack("<9H", 0, 1, 2, 0, 0, 0, 0, 0, 0)
            path.write_bytes(struct_model + struct.pack("<iii", 3, 0, 1) + struct.pack("<12f", *range(12)))
        elif expected is None:
            path.write_bytes(b"# VDrift object list\nmodel = cone.joe\ntexture = cone.png\n")
        else:
            with gamepak.create(path, expected) as writer:
                writer.add("table.xtbl", b"<root><row/></root>\n" * 20)
                writer.add("wall.bin", bytes(range(256)) * 3)
    source = Source.open(path)
    try:
        assert all(sniffer(source) == 0 for sniffer in SNIFFERS.values())
    finally:
        source.close()
    found = gamepak.detect(path)
    assert not any(d.format.startswith("j2me") for d in found)
    if found and expected is not None:
        # The signature format (when its module is in place) comes first.
        assert found[0].format == expected
    if expected in ("pak", "jpk"):
        with gamepak.open(path) as archive:
            assert archive.format_name == expected


def test_equal_fits_are_ambiguous(tmp_path: Path) -> None:
    # Zero members and junk: a j2me-end-offsets pack (count 0, terminator 0, one stray byte)
    # and a j2me-table pack (count 0, five stray bytes) explain it equally badly.
    path = tmp_path / "odd.bin"
    path.write_bytes(bytes.fromhex("000000000003"))
    found = gamepak.detect(path)
    assert {d.format for d in found} == {"j2me-end-offsets", "j2me-table"}
    assert found[0].confidence == found[1].confidence
    with pytest.raises(AmbiguousFormatError) as caught:
        gamepak.open(path)
    assert set(caught.value.candidates) == {"j2me-end-offsets", "j2me-table"}
    code, _, err = in_process_cli("ls", str(path))
    assert code == 1 and "--format" in err and "j2me-table" in err
    code, out, _ = in_process_cli("--format", "j2me-table", "ls", str(path))
    assert code == 0 and out == ""


# -- CLI ---------------------------------------------------------------------------------------


def test_cli_ls_extract_names_the_chosen_layout(tmp_path: Path) -> None:
    path = tmp_path / "res.bin"
    path.write_bytes(table_pack(MEMBERS))
    code, out, err = in_process_cli("ls", str(path))
    assert code == 0 and out.split() == ["0", "1", "2"]
    assert "read as j2me-table" in err
    code, _, err = in_process_cli("extract", str(path), "-o", str(tmp_path / "x"))
    assert code == 0 and "read as j2me-table" in err
    assert sorted(os.listdir(tmp_path / "x")) == ["0.png", "1.txt", "2.bin"]
    assert (tmp_path / "x" / "1.txt").read_bytes() == TEXT
    code, out, _ = in_process_cli("detect", "--json", str(path))
    assert code == 0 and json.loads(out)[0]["formats"][0]["format"] == "j2me-table"
    # An explicit --format prints no guess note.
    code, _, err = in_process_cli("--format", "j2me-table", "ls", str(path))
    assert code == 0 and "read as" not in err


def test_cli_corrupt_pack_exits_1(tmp_path: Path) -> None:
    path = tmp_path / "bad.bin"
    path.write_bytes(bytes([9]) + b"\0" * 20)
    code, _, err = in_process_cli("--format", "j2me-table", "ls", str(path))
    assert code == 1 and "needs a 73-byte header" in err and "Traceback" not in err


@pytest.mark.parametrize("layout", LAYOUTS)
def test_cli_manifest_roundtrip(tmp_path: Path, layout: str) -> None:
    source = tmp_path / "pack.bin"
    source.write_bytes(BUILDERS[layout](MEMBERS))
    assert rebuild_with_cli(source, layout, tmp_path / "x", tmp_path / "cli.bin") == source.read_bytes()


def test_writer_error_is_a_gamepak_error(tmp_path: Path) -> None:
    with pytest.raises(GamepakError):
        with gamepak.create(tmp_path / "p.bin", "j2me-table") as writer:
            writer.add("../0", b"x")


def test_empty_packs_rate_low_and_zero_floods_are_refused(tmp_path: Path) -> None:
    for layout in LAYOUTS:
        data = BUILDERS[layout]([])
        if len(data) >= 2:
            assert sniff(data, layout) < structure.EXACT_BAND[0]
    # 300 KB of zeros would be 150,000 empty sized members: not a plausible pack.
    assert sniff(b"\0" * 300_000, "j2me-sized") == 0
    assert sniff(b"\0" * 300, "j2me-sized") < structure.EXACT_BAND[0]


def test_refused_member_is_not_queued(tmp_path: Path) -> None:
    writer = gamepak.create(tmp_path / "s.bin", "j2me-sized")
    writer.add("0", b"ok")
    with pytest.raises(FormatLimitError):
        writer.add("1", b"\0" * 70_000)
    writer.add("1", b"fine")
    writer.close()
    assert (tmp_path / "s.bin").read_bytes() == sized_pack([b"ok", b"fine"])


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=64)
    | st.text(alphabet="ab \n\x00\x92\x85\x7f\x1b\u00e9", max_size=64).map(lambda t: t.encode("latin-1"))
)
def test_text_test_agrees_with_its_definition(data: bytes) -> None:
    from gamepak.formats.j2me.members import _looks_like_text

    allowed = {0, 0x09, 0x0A, 0x0D, 0x92}
    expected = (
        bool(data.strip(b"\0 \t\r\n"))
        and data.count(0) * 4 <= len(data)
        and all((byte >= 0x20 and not 0x7F <= byte < 0xA0) or byte in allowed for byte in data)
    )
    assert _looks_like_text(data) == expected


@given(st.binary(min_size=0, max_size=200))
@settings(max_examples=60, deadline=None)
def test_one_member_tables_that_also_read_as_sized_open_as_tables(payload: bytes) -> None:
    """Diamond Rush's single-member .f files fit the table and the sized layout equally; the
    game reads every .f as a table, and so does gamepak (detect lists the table first)."""
    from gamepak.core.opening import choose_format, detect

    data = bytes([1]) + (0).to_bytes(4, "little") + (len(payload) + 2).to_bytes(4, "little") + payload + b"\0\0"
    found = detect(io.BytesIO(data), name="b1.f")
    assert found[0].format == "j2me-table"
    assert choose_format(io.BytesIO(data), name="b1.f").format == "j2me-table"
    with gamepak.open(io.BytesIO(data), name="b1.f") as pack:
        assert pack.format_name == "j2me-table" and pack.read(pack.infolist()[0]) == payload + b"\0\0"


def test_text_import_with_a_kind_goes_through_the_packs_member(tmp_path: Path) -> None:
    """`text import --kind blob PACK` (no MEMBER) rewrites the member holding the strings, never
    the pack's header taken for strings (issue 19 class 7)."""
    from conftest import in_process_cli

    pack = tmp_path / "lang.f"
    with gamepak.create(pack, "j2me-table") as writer:
        writer.add("0", b"\x01\x02\x03 binary")
        writer.add("1", b"Hello\0World\0Third string\0")
    export = tmp_path / "lang.json"
    code, _, err = in_process_cli("text", "export", "--kind", "blob", str(pack), "-o", str(export))
    assert code == 0, err
    rows = json.loads(export.read_text())
    assert [row["text"] for row in rows] == ["Hello", "World", "Third string"]
    rows[1]["text"] = "Welt und mehr"
    export.write_text(json.dumps(rows))
    out = tmp_path / "lang-de.f"
    code, _, err = in_process_cli("text", "import", "--kind", "blob", str(pack), str(export), "-o", str(out))
    assert code == 0, err
    with gamepak.open(out, "j2me-table") as result:
        assert result.read("0") == b"\x01\x02\x03 binary"
        assert result.read("1") == b"Hello\0Welt und mehr\0Third string\0"
        assert result.check() == []
