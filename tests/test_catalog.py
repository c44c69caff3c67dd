"""`gamepak catalog` / `catalog-diff`: a collection built here (every format, nested packs, broken
files) cataloged under every scheduler, checked against the library's own reads."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.core.nested import resolve

from conftest import SAMPLES, in_process_cli, run_cli

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("dask")

from gamepak.catalog import ScanOptions, build_catalog, diff_catalogs, hashing, kinds  # noqa: E402
from gamepak.catalog import run as catalog_run  # noqa: E402
from gamepak.catalog.detect import nested_signature  # noqa: E402
from gamepak.catalog.kinds import member_type  # noqa: E402
from gamepak.catalog.scan import ArchiveScanner  # noqa: E402
from gamepak.catalog.schema import SCHEMAS, TABLES, read_table, to_arrow  # noqa: E402
from gamepak.core.registry import FORMATS  # noqa: E402
from gamepak.core.source import Source  # noqa: E402
from gamepak.formats.rfg.asm import AsmContainer, AsmFile, AsmPrimitive  # noqa: E402


def _peg_pair(name: str, sizes: list[tuple[int, int]]) -> list[tuple[str, bytes]]:
    """A peg pair (CPU, GPU members) of DXT1 textures `t0`, `t1`, ... of the given sizes."""
    import numpy as np

    from gamepak.formats.rfg.peg import Peg, PixelFormat

    peg = Peg.new(f"{name}.cpeg_pc")
    for index, (width, height) in enumerate(sizes):
        peg.add_texture(f"t{index}", np.full((height, width, 4), 90 + index, np.uint8), PixelFormat.DXT1)
    cpu, gpu = peg.to_bytes()
    return [(f"{name}.cpeg_pc", cpu), (f"{name}.gpeg_pc", gpu)]


INNER_MEMBERS = [
    ("a.xtbl", b"<root>hi</root>" * 50),
    ("b.dat", bytes(range(256)) * 12),
    *_peg_pair("crate", [(8, 4), (16, 16)]),
]


def _write(path: Path, format_name: str, members: list[tuple[str, bytes]], **options: Any) -> None:
    with gamepak.create(path, format_name, overwrite=True, **options) as writer:
        for name, data in members:
            writer.add(name, data)


def build_collection(root: Path) -> Path:
    """pak, jpk, vpp in all four data modes (each holding a .str2_pc), an .asm_pc table, a J2ME
    pack, a JOE model, a corrupt and a truncated pack, and a file that is no archive."""
    import numpy as np

    from gamepak.models import Mesh, dumps

    (root / "rfg").mkdir(parents=True)
    (root / "phone").mkdir()
    _write(
        root / "id1.pak",
        "pak",
        [("maps/e1m1.bsp", b"\x1d\0\0\0" + b"x" * 3000), ("gfx/a.lmp", b"y" * 100), ("readme.txt", b"hello\n")],
    )
    _write(root / "cars.jpk", "jpk", [("body.joe", b"z" * 500), ("list.txt", b"a b c\n")])
    _write(root / "inner.str2_pc", "vpp", INNER_MEMBERS)
    inner = (root / "inner.str2_pc").read_bytes()
    (root / "inner.str2_pc").unlink()
    for flags in (0, 1, 2, 3):
        members = [
            ("x.txt", b"text %d " % flags * 100),
            ("inner.str2_pc", inner),
            ("y.bin", bytes(range(256)) * (20 + flags)),
            *_peg_pair("sky", [(32, 32)]),  # read from every data mode: plain, compressed, condensed
        ]
        _write(root / "rfg" / f"mode{flags}.vpp_pc", "vpp", members, flags=flags)
    table = AsmFile([AsmContainer("mode0", sizes=[5], primitives=[AsmPrimitive("a.mat_pc", header_size=5)])])
    (root / "rfg" / "mode0.asm_pc").write_bytes(table.to_bytes())
    _write(
        root / "phone" / "0", "j2me-table", [("0", b"\x89PNG\r\n\x1a\n" + b"p" * 300), ("1", b"some text here " * 10)]
    )
    mesh = Mesh.from_vertices(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32), np.array([[0, 1, 2]]))
    (root / "cone.joe").write_bytes(dumps(mesh, "joe"))
    (root / "broken.pak").write_bytes(b"PACK" + bytes(range(40)))
    data = (root / "id1.pak").read_bytes()
    (root / "truncated.pak").write_bytes(data[:-20])
    (root / "notes.txt").write_bytes(b"just notes\n")
    return root


def snapshot(out: Path) -> dict[str, list[str]]:
    """Every row of every table, sorted (the order of parts and rows is the scheduler's)."""
    return {
        table: sorted(repr(sorted(row.items())) for row in read_table(str(out), table).to_pylist()) for table in TABLES
    }


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_collection(tmp_path_factory.mktemp("catalog") / "games")


@pytest.fixture(scope="module")
def reference(collection: Path) -> Path:
    out = collection.parent / "reference.catalog"
    build_catalog([str(collection)], str(out), scheduler="synchronous")
    return out


def members(out: Path) -> list[dict[str, Any]]:
    return read_table(str(out), "members").to_pylist()


members_of = members


# -- contents ----------------------------------------------------------------------------------
def test_tables_have_the_typed_schema(reference: Path) -> None:
    for table in TABLES:
        parts = sorted((reference / table).glob("part-*.parquet"))
        assert parts, table
        for part in parts:
            assert pq.read_schema(part).remove_metadata().equals(SCHEMAS[table].remove_metadata()), part


def test_every_member_is_listed_with_the_hash_of_its_bytes(reference: Path, collection: Path) -> None:
    rows = members(reference)
    assert len(rows) == 3 + 2 + 2 + 4 * (5 + 4)
    for row in rows:
        own_path = Path(row["archive_path"]).relative_to(collection).as_posix()
        inside = row["nested_path"][len(own_path) :].lstrip("/")
        with gamepak.open(row["archive_path"]) as archive:
            holder, entry = resolve(archive, f"{inside}/{row['name']}" if inside else row["name"])
            data = holder.read(entry)
        assert row["hash"] == hashlib.sha256(data).hexdigest(), row
        assert row["size"] == len(data)
        assert row["hash_algorithm"] == "sha256"
        assert row["archive_sha256"] == (
            hashlib.sha256(Path(row["archive_path"]).read_bytes()).hexdigest() if row["depth"] == 0 else None
        )


def test_hash_equals_sha256_of_gamepak_cat(reference: Path, collection: Path) -> None:
    row = next(
        r for r in members(reference) if r["nested_path"] == "rfg/mode3.vpp_pc/inner.str2_pc" and r["name"] == "b.dat"
    )
    result = run_cli("cat", str(collection / "rfg" / "mode3.vpp_pc"), "inner.str2_pc/b.dat")
    assert result.returncode == 0
    assert row["hash"] == hashlib.sha256(result.stdout).hexdigest()


def test_member_columns(reference: Path) -> None:
    rows = {(r["nested_path"], r["name"]): r for r in members(reference)}
    bsp = rows[("id1.pak", "maps/e1m1.bsp")]
    assert (bsp["format"], bsp["index"], bsp["offset"], bsp["compression"], bsp["member_type"]) == (
        "pak",
        0,
        12,
        "none",
        "map/quake-bsp",
    )
    assert rows[("rfg/mode1.vpp_pc", "y.bin")]["compression"] == "zlib"
    assert rows[("rfg/mode1.vpp_pc", "y.bin")]["stored_size"] < rows[("rfg/mode1.vpp_pc", "y.bin")]["size"]
    assert rows[("rfg/mode3.vpp_pc", "x.txt")]["compression"] == "zlib-stream"
    assert rows[("rfg/mode0.vpp_pc", "inner.str2_pc")]["member_type"] == "archive/vpp"
    nested = rows[("rfg/mode2.vpp_pc/inner.str2_pc", "a.xtbl")]
    assert (nested["depth"], nested["member_type"]) == (1, "text/xml")
    assert rows[("phone/0", "0")]["member_type"] == "image/png"
    assert rows[("cars.jpk", "body.joe")]["member_type"] == "model/joe"


def test_textures_rows_describe_every_peg_texture(reference: Path, collection: Path) -> None:
    rows = read_table(str(reference), "textures").to_pylist()
    found = sorted(
        (r["nested_path"], r["peg"], r["name"], r["width"], r["height"], r["format"], r["mips"]) for r in rows
    )
    expected = []
    for flags in range(4):
        pack = f"rfg/mode{flags}.vpp_pc"
        expected.append((pack, "sky.cpeg_pc", "t0.tga", 32, 32, "DXT1", 6))
        expected.append((f"{pack}/inner.str2_pc", "crate.cpeg_pc", "t0.tga", 8, 4, "DXT1", 4))
        expected.append((f"{pack}/inner.str2_pc", "crate.cpeg_pc", "t1.tga", 16, 16, "DXT1", 5))
    assert found == sorted(expected)
    assert {r["archive_path"] for r in rows} == {str(collection / "rfg" / f"mode{flags}.vpp_pc") for flags in range(4)}
    assert all(r["flags"] == 0 for r in rows)
    # What `gamepak texture ls --json` says of the same pack (peg: the member path in it).
    code, out, _ = in_process_cli("texture", "ls", str(collection / "rfg" / "mode3.vpp_pc"), "--json")
    listed = sorted((r["peg"], r["name"], r["width"], r["height"], r["format"], r["mips"]) for r in json.loads(out))
    cataloged = sorted(
        (f"{r['nested_path']}/{r['peg']}".removeprefix("rfg/mode3.vpp_pc/"), r["name"], r["width"], r["height"])
        + (r["format"], r["mips"])
        for r in rows
        if r["archive_path"].endswith("mode3.vpp_pc")
    )
    assert code == 0 and listed == cataloged


def test_loose_pegs_in_a_folder_are_in_the_textures_table(tmp_path: Path) -> None:
    """A .cpeg_pc/.gpeg_pc (or .cvbm_pc/.gvbm_pc) pair lying in a folder is listed like a pair
    in a pack (archive_path: the CPU file), partners matched ignoring case; a CPU file without
    its GPU file is an errors row; --resume does not list them twice."""
    root = tmp_path / "in"
    (root / "textures").mkdir(parents=True)
    for name, data in _peg_pair("big", [(64, 32)]):
        (root / "textures" / name).write_bytes(data)
    cpu, gpu = (data for _, data in _peg_pair("crate", [(8, 8), (4, 4)]))
    (root / "Crate.cvbm_pc").write_bytes(cpu)
    (root / "crate.GVBM_PC").write_bytes(gpu)
    (root / "lonely.cpeg_pc").write_bytes(cpu)
    out = tmp_path / "out"
    build_catalog([str(root)], str(out), scheduler="synchronous")
    rows = read_table(str(out), "textures").to_pylist()
    found = sorted((r["archive_path"], r["nested_path"], r["peg"], r["name"], r["width"], r["height"]) for r in rows)
    assert found == [
        (str(root / "Crate.cvbm_pc"), ".", "Crate.cvbm_pc", "t0.tga", 8, 8),
        (str(root / "Crate.cvbm_pc"), ".", "Crate.cvbm_pc", "t1.tga", 4, 4),
        (str(root / "textures" / "big.cpeg_pc"), "textures", "big.cpeg_pc", "t0.tga", 64, 32),
    ]
    errors = read_table(str(out), "errors").to_pylist()
    assert [(e["stage"], e["member"]) for e in errors] == [("textures", "lonely.cpeg_pc")]
    assert "no GPU file beside it (lonely.gpeg_pc)" in errors[0]["message"]
    archives = {r["nested_path"]: r for r in read_table(str(out), "archives").to_pylist()}
    assert archives["textures/big.cpeg_pc"]["kind"] == "texture" and archives["lonely.cpeg_pc"]["status"] == "errors"
    # The README's query: the largest texture first, named by where it lies.
    largest = (
        duckdb_or_skip()
        .sql(
            f"SELECT nested_path || '/' || peg AS peg, name FROM '{out}/textures/*.parquet' "
            "ORDER BY width * height DESC"
        )
        .fetchall()[0]
    )
    assert largest == ("textures/big.cpeg_pc", "t0.tga")
    build_catalog([str(root)], str(out), scheduler="synchronous", resume=True)
    assert len(read_table(str(out), "textures").to_pylist()) == 3


def duckdb_or_skip() -> Any:
    return pytest.importorskip("duckdb")


def test_pegs_of_a_compressed_pack_are_not_decoded_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CPU files hashing decoded are kept for the textures table: no second pass over a
    compressed stream (`iter_data` is only for plain members)."""
    (tmp_path / "in").mkdir()
    for flags in (1, 3):  # compressed; compressed and condensed (a .str2_pc's modes)
        _write(
            tmp_path / "in" / f"m{flags}.vpp_pc", "vpp", [("a.txt", b"a" * 999), *_peg_pair("p", [(8, 8)])], flags=flags
        )

    def no_second_pass(self: Any, entries: Any) -> Any:
        raise AssertionError(f"a second pass over {[entry.name for entry in entries]}")

    monkeypatch.setattr(gamepak.core.archive.Archive, "iter_data", no_second_pass)
    build_catalog([str(tmp_path / "in")], str(tmp_path / "out"), scheduler="synchronous")
    assert read_table(str(tmp_path / "out"), "errors").num_rows == 0
    rows = read_table(str(tmp_path / "out"), "textures").to_pylist()
    assert sorted((r["nested_path"], r["name"]) for r in rows) == [("m1.vpp_pc", "t0.tga"), ("m3.vpp_pc", "t0.tga")]


def test_a_broken_peg_is_an_errors_row_and_the_pack_goes_on(tmp_path: Path) -> None:
    good = _peg_pair("good", [(4, 4)])
    bad_cpu = bytearray(good[0][1])
    bad_cpu[4:6] = (9).to_bytes(2, "little")  # version 9
    (tmp_path / "in").mkdir()
    _write(tmp_path / "in" / "z.str2_pc", "vpp", [*good, ("bad.cpeg_pc", bytes(bad_cpu)), ("bad.gpeg_pc", good[1][1])])
    build_catalog([str(tmp_path / "in")], str(tmp_path / "out"), scheduler="synchronous")
    assert [r["name"] for r in read_table(str(tmp_path / "out"), "textures").to_pylist()] == ["t0.tga"]
    errors = read_table(str(tmp_path / "out"), "errors").to_pylist()
    assert [(e["stage"], e["member"]) for e in errors] == [("textures", "bad.cpeg_pc")]
    assert "version: 9, only peg v10 is known" in errors[0]["message"] and "offset 4" in errors[0]["message"]
    assert len(members(tmp_path / "out")) == 4


def test_archives_rows(reference: Path, collection: Path) -> None:
    archives = {r["nested_path"]: r for r in read_table(str(reference), "archives").to_pylist()}
    assert set(archives) == {
        "id1.pak", "cars.jpk", "phone/0", "cone.joe", "broken.pak", "truncated.pak", "rfg/mode0.asm_pc",
        *(f"rfg/mode{f}.vpp_pc" for f in range(4)), *(f"rfg/mode{f}.vpp_pc/inner.str2_pc" for f in range(4)),
    }  # fmt: skip
    pak = archives["id1.pak"]
    assert (pak["format"], pak["member_count"], pak["status"], pak["detected_by"]) == ("pak", 3, "ok", "signature")
    assert pak["size"] == (collection / "id1.pak").stat().st_size
    assert pak["mtime"].timestamp() == pytest.approx((collection / "id1.pak").stat().st_mtime)
    assert json.loads(archives["rfg/mode3.vpp_pc"]["header"])["flags"] == 3
    assert (archives["phone/0"]["format"], archives["phone/0"]["detected_by"]) == ("j2me-table", "structure")
    assert (archives["cone.joe"]["kind"], json.loads(archives["cone.joe"]["header"])["faces"]) == ("model", 1)
    assert archives["truncated.pak"]["status"] == "unreadable"
    table = archives["rfg/mode0.asm_pc"]
    assert (table["kind"], table["format"], table["member_count"], table["status"]) == ("table", "asm", 0, "ok")
    inner = archives["rfg/mode1.vpp_pc/inner.str2_pc"]
    assert (inner["depth"], inner["member_count"], inner["format"]) == (1, 4, "vpp")


def test_broken_files_are_error_rows_and_the_rest_is_cataloged(reference: Path) -> None:
    everything = read_table(str(reference), "errors").to_pylist()
    # The collection's stand-in models (bytes named .joe and .bsp) are reported as models that
    # do not parse; the packs holding them are read on.
    models = sorted((Path(e["path"]).name, e["member"]) for e in everything if e["stage"] == "models")
    assert models == [("cars.jpk", "body.joe"), ("id1.pak", "maps/e1m1.bsp")]
    errors = [e for e in everything if e["stage"] != "models"]
    assert sorted(Path(e["path"]).name for e in errors) == ["broken.pak", "truncated.pak"]
    for error in errors:
        assert error["stage"] == "open"
        assert error["message"].startswith(error["path"])  # one line naming the file...
        assert "offset" in error["message"] or "past the end" in error["message"]  # ...and where
    names = {r["archive_path"] for r in members(reference)}
    assert not any(name.endswith(("notes.txt", "broken.pak", "truncated.pak")) for name in names)


def test_a_member_that_cannot_be_read_is_an_error_row_and_the_pack_goes_on(tmp_path: Path) -> None:
    root = tmp_path / "games"
    root.mkdir()
    _write(
        root / "c.vpp_pc", "vpp", [("a.txt", b"a" * 5000), ("b.txt", os.urandom(5000)), ("c.txt", b"c" * 5000)], flags=1
    )
    with gamepak.open(root / "c.vpp_pc") as archive:
        target = archive.getinfo("b.txt")
    data = bytearray((root / "c.vpp_pc").read_bytes())
    data[target.offset + 10 : target.offset + 200] = bytes(190)
    (root / "c.vpp_pc").write_bytes(bytes(data))
    build_catalog([str(root)], str(tmp_path / "out"), scheduler="synchronous")
    rows = {r["name"]: r for r in members(tmp_path / "out")}
    assert rows["a.txt"]["hash"] == hashlib.sha256(b"a" * 5000).hexdigest()
    assert rows["c.txt"]["hash"] == hashlib.sha256(b"c" * 5000).hexdigest()
    assert rows["b.txt"]["hash"] is None
    errors = read_table(str(tmp_path / "out"), "errors").to_pylist()
    assert [(e["stage"], e["member"]) for e in errors] == [("hash", "b.txt")]


# -- one pass over each pack ------------------------------------------------------------------------
def _hand_made_pak(members: list[tuple[str, int, int]], data: bytes) -> bytes:
    """A PAK from the spec's layout: header, data, then 64-byte directory records."""
    directory = b"".join(
        name.encode().ljust(56, b"\0") + struct.pack("<ii", offset, size) for name, offset, size in members
    )
    return b"PACK" + struct.pack("<ii", 12 + len(data), len(directory)) + data + directory


def test_plain_members_in_any_order_overlapping_or_outside_the_file(tmp_path: Path) -> None:
    data = bytes(range(256)) * 4
    members = [("b", 300, 500), ("a", 12, 50), ("z", 30, 0), ("over", 20, 600), ("past", 900, 5000), ("end", 1000, 36)]
    root = tmp_path / "games"
    root.mkdir()
    (root / "odd.pak").write_bytes(_hand_made_pak(members, data))
    build_catalog([str(root)], str(tmp_path / "out"), scheduler="synchronous")
    rows = {r["name"]: r for r in members_of(tmp_path / "out")}
    blob = (root / "odd.pak").read_bytes()
    for name, offset, size in members:
        expected = None if name == "past" else hashlib.sha256(blob[offset : offset + size]).hexdigest()
        assert rows[name]["hash"] == expected, name
    assert rows["past"]["member_type"] == "unreadable"
    assert {r["archive_sha256"] for r in rows.values()} == {hashlib.sha256(blob).hexdigest()}
    errors = read_table(str(tmp_path / "out"), "errors").to_pylist()
    assert [(e["stage"], e["member"]) for e in errors] == [("hash", "past")]


def test_members_across_chunk_boundaries(
    reference: Path, collection: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read 7 bytes at a time, every member and file spans many reads: the same catalog."""
    monkeypatch.setattr(hashing, "CHUNK", 7)
    build_catalog([str(collection)], str(tmp_path / "small"), scheduler="synchronous")
    assert snapshot(tmp_path / "small") == snapshot(reference)


@pytest.mark.parametrize("flags", [None, 0, 1, 3])
def test_a_pack_is_read_about_once(flags: int | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file's sha256 comes from the reads of the members (the stored bytes, for compressed
    ones), not from a second pass over the file."""
    root = tmp_path / "games"
    root.mkdir()
    members = [(f"m{i}.bin", os.urandom(3000 + 500 * i)) for i in range(40)]
    path = root / ("a.pak" if flags is None else "a.vpp_pc")
    if flags is None:
        _write(path, "pak", members)
    else:
        _write(path, "vpp", members, flags=flags)
    read = [0]
    pread, preadv = os.pread, os.preadv

    def counting_pread(fd: int, size: int, offset: int) -> bytes:
        data = pread(fd, size, offset)
        read[0] += len(data)
        return data

    def counting_preadv(fd: int, buffers: list[Any], offset: int) -> int:
        got = preadv(fd, buffers, offset)
        read[0] += got
        return got

    monkeypatch.setattr(os, "pread", counting_pread)
    monkeypatch.setattr(os, "preadv", counting_preadv)
    build_catalog([str(root)], str(tmp_path / "out"), options=ScanOptions(verify=False), scheduler="synchronous")
    monkeypatch.undo()
    size = path.stat().st_size
    assert size < read[0] < 1.2 * size + 65536
    rows = members_of(tmp_path / "out")
    assert {r["archive_sha256"] for r in rows} == {hashlib.sha256(path.read_bytes()).hexdigest()}
    assert sorted(r["hash"] for r in rows) == sorted(hashlib.sha256(d).hexdigest() for _, d in members)


@settings(max_examples=150, deadline=None)
@given(
    data=st.binary(max_size=3000),
    spans=st.lists(st.tuples(st.integers(0, 3000), st.integers(0, 900)), max_size=12),
    chunk=st.integers(1, 700),
    whole_file=st.booleans(),
    algorithm=st.sampled_from(["sha256", "none"]),
    short_reads=st.booleans(),
)
def test_range_hashes_match_hashlib(
    data: bytes, spans: list[tuple[int, int]], chunk: int, whole_file: bool, algorithm: str, short_reads: bool
) -> None:
    spans = [(min(offset, len(data)), min(size, len(data) - min(offset, len(data)))) for offset, size in spans]
    heads = {}

    def describe(index: int, head: bytes) -> int:
        heads[index] = head
        return index

    file_hasher = hashlib.sha256() if whole_file else None
    ranges = hashing.RangeHashes(
        [o for o, _ in spans],
        [s for _, s in spans],
        len(data),
        hashing.hasher_factory(algorithm),
        describe,
        5,
        file_hasher,
        chunk,
    )

    def read_into(view: memoryview, offset: int) -> int:
        piece = data[offset : offset + (max(1, len(view) // 2) if short_reads else len(view))]
        view[: len(piece)] = piece
        return len(piece)

    ranges.run(read_into)
    for index, (offset, size) in enumerate(spans):
        expected = hashlib.sha256(data[offset : offset + size]).hexdigest() if algorithm == "sha256" else None
        assert ranges.digests[index] == expected
        assert heads[index] == data[offset : offset + min(size, 5)]
        assert ranges.described[index] == index
    if file_hasher is not None:
        assert file_hasher.hexdigest() == hashlib.sha256(data).hexdigest()


def test_range_hashes_report_a_file_that_ends_early() -> None:
    ranges = hashing.RangeHashes([0, 10], [5, 10], 20, hashing.hasher_factory("sha256"), lambda i, h: h, 4, chunk=12)

    def read_into(view: memoryview, offset: int) -> int:
        if offset:
            return 0
        view[:] = bytes(len(view))
        return len(view)

    with pytest.raises(gamepak.GamepakError, match="ended at 12 of 20"):
        ranges.run(read_into)
    assert ranges.described == [b"\0" * 4, None]


@settings(max_examples=100, deadline=None)
@given(
    data=st.binary(max_size=5000), reads=st.lists(st.tuples(st.integers(0, 5200), st.integers(0, 2000)), max_size=10)
)
def test_hashing_source_hashes_the_file_whatever_the_reads(data: bytes, reads: list[tuple[int, int]]) -> None:
    import io

    source = Source.open(io.BytesIO(data), "f")
    tee = hashing.HashingSource(source, hashlib.sha256())
    for offset, size in reads:
        assert tee.pread(size, offset) == data[offset : offset + size]
    assert tee.finish() == hashlib.sha256(data).hexdigest()


# -- member types and nested packs ---------------------------------------------------------------
_TEXTISH = [
    b"a",
    b" ",
    b"\n",
    b"\t",
    b"\x0b",
    b"\x00",
    b"\x7f",
    "é".encode(),
    "€".encode(),
    b"\xe2",
    b"\x80",
    b"\xff",
    "\x85".encode(),
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_TEXTISH), max_size=12).map(b"".join) | st.binary(max_size=1100))
def test_the_text_test_agrees_with_decoding(head: bytes) -> None:
    """The fast paths (ASCII, control characters) decide as decoding does."""
    assert kinds._looks_like_text(head) == kinds._text_by_decoding(head[: kinds.TEXT_PROBE])


def _magic_formats() -> list[Any]:
    return [spec for spec in FORMATS if spec.magic]


@pytest.mark.parametrize("spec", _magic_formats(), ids=lambda spec: spec.name)
def test_declared_magic_agrees_with_the_sniffer(spec: Any, tmp_path: Path) -> None:
    """A file the sniffer accepts holds the declared magic (so nested packs are still found when
    only formats whose magic the head holds are asked), and a written file holds it."""
    import io

    sniff = spec.sniffer()

    @settings(max_examples=60, deadline=None)
    @given(head=st.binary(min_size=0, max_size=600), size=st.integers(0, 1 << 20))
    def rejects_without_magic(head: bytes, size: int) -> None:
        # The zeros that pad the head are part of what the sniffer reads: b"\x1d" padded holds BSP's magic.
        data = head + bytes(max(0, min(size, 4096) - len(head)))
        if any(data.startswith(signature, offset) for offset, signature in spec.magic):
            return
        source = Source.open(io.BytesIO(data), "x")
        assert sniff(source) < 0.9

    rejects_without_magic()
    if spec.kind == "archive":
        _write(tmp_path / f"a{spec.extensions[0]}", spec.name, [("a.txt", b"hello")])
        written = (tmp_path / f"a{spec.extensions[0]}").read_bytes()
        assert any(written.startswith(signature, offset) for offset, signature in spec.magic)
        assert nested_signature(written[:4096], len(written), "a") == spec.name


# -- Parquet ------------------------------------------------------------------------------------
def _values_of(field_type: Any) -> Any:
    if pa.types.is_string(field_type):
        return st.none() | st.text(max_size=5)
    if pa.types.is_binary(field_type):
        return st.none() | st.binary(max_size=5)
    if pa.types.is_list(field_type):
        return st.none() | st.lists(_values_of(field_type.value_type), max_size=3)
    if pa.types.is_struct(field_type):
        return st.none() | st.fixed_dictionaries({f.name: _values_of(f.type) for f in field_type})
    if pa.types.is_floating(field_type):
        return st.none() | st.floats(-1e6, 1e6, width=32)
    bits = field_type.bit_width
    return st.none() | st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


@pytest.mark.parametrize("table", TABLES)
def test_arrow_columns_are_what_pa_array_builds(table: str) -> None:
    schema = SCHEMAS[table]

    @settings(max_examples=40, deadline=None)
    @given(st.data())
    def check(data: Any) -> None:
        count = data.draw(st.integers(0, 6))
        for field in schema:
            values = data.draw(st.lists(_values_of(field.type), min_size=count, max_size=count))
            built = to_arrow(values, field.type)
            built.validate(full=True)
            assert built.equals(pa.array(values, field.type)), field.name

    check()


def test_writing_a_catalog_imports_no_pandas(collection: Path, tmp_path: Path) -> None:
    code = (
        "import sys; from gamepak.catalog import build_catalog; "
        f"build_catalog([{str(collection)!r}], {str(tmp_path / 'out')!r}, scheduler='synchronous'); "
        "print('pandas' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


# -- schedulers ----------------------------------------------------------------------------------
def test_threads_and_processes_give_the_same_catalog(reference: Path, collection: Path, tmp_path: Path) -> None:
    build_catalog([str(collection)], str(tmp_path / "threads"), scheduler="threads", workers=2)
    assert snapshot(tmp_path / "threads") == snapshot(reference)
    # Processes, with every vpp split into member ranges cataloged by different workers.
    summary = build_catalog(
        [str(collection)], str(tmp_path / "processes"), scheduler="processes", workers=2, split_bytes=4000
    )
    assert summary.units >= 3  # the plain vpp packs split, the rest in one batch
    assert any(p.name.endswith("-r0001.parquet") for p in (tmp_path / "processes" / "members").iterdir())
    assert snapshot(tmp_path / "processes") == snapshot(reference)


def test_processes_forked_by_the_command(reference: Path, collection: Path, tmp_path: Path) -> None:
    """A fresh `gamepak catalog` process (no thread, no pyarrow yet) forks its workers; this
    test process (pyarrow loaded) spawns them, as in the test above."""
    out = tmp_path / "forked"
    result = run_cli("catalog", str(collection), "-o", str(out), "--scheduler", "processes", "--workers", "2")
    assert result.returncode == 0, result.stderr
    assert snapshot(out) == snapshot(reference)


def test_workers_are_not_forked_while_other_threads_run() -> None:
    import threading

    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert catalog_run._fork_pool(1) is None
    finally:
        stop.set()
        thread.join()


def test_dask_distributed_local_cluster(reference: Path, collection: Path, tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        summary = build_catalog(
            [str(collection)], str(tmp_path / "cluster"), scheduler=cluster.scheduler_address, split_bytes=4000
        )
    assert summary.members == len(members(reference))
    assert snapshot(tmp_path / "cluster") == snapshot(reference)


def test_fsspec_urls(reference: Path, collection: Path, tmp_path: Path) -> None:
    fsspec = pytest.importorskip("fsspec")
    memory = fsspec.filesystem("memory")
    for path in collection.rglob("*"):
        if path.is_file():
            memory.pipe(f"/games/{path.relative_to(collection).as_posix()}", path.read_bytes())
    build_catalog(["memory://games"], str(tmp_path / "url"), scheduler="synchronous")
    local = {(r["nested_path"], r["name"], r["hash"]) for r in members(reference)}
    remote = {(r["nested_path"], r["name"], r["hash"]) for r in members(tmp_path / "url")}
    assert remote == local
    assert all(r["archive_path"].startswith("memory://") for r in members(tmp_path / "url"))


# -- options -------------------------------------------------------------------------------------
@pytest.mark.parametrize("algorithm", ["blake2b", "xxh3", "none"])
def test_hash_choices(algorithm: str, collection: Path, tmp_path: Path) -> None:
    build_catalog(
        [str(collection / "id1.pak")],
        str(tmp_path / "out"),
        options=ScanOptions(hash_algorithm=algorithm),
        scheduler="synchronous",
    )
    with gamepak.open(collection / "id1.pak") as archive:
        expected: dict[str, str | None] = {}
        for entry in archive.infolist():
            data = archive.read(entry)
            if algorithm == "blake2b":
                expected[entry.name] = hashlib.blake2b(data).hexdigest()
            elif algorithm == "xxh3":
                import xxhash

                expected[entry.name] = xxhash.xxh3_128(data).hexdigest()
            else:
                expected[entry.name] = None
    rows = members(tmp_path / "out")
    assert {r["name"]: r["hash"] for r in rows} == expected
    assert {r["hash_algorithm"] for r in rows} == {algorithm}


def test_no_nested_and_guess_off(collection: Path, tmp_path: Path) -> None:
    options = ScanOptions(nested=False, guess="off")
    summary = build_catalog([str(collection)], str(tmp_path / "out"), options=options, scheduler="synchronous")
    rows = members(tmp_path / "out")
    assert rows and all(r["depth"] == 0 for r in rows)
    assert not any(r["nested_path"] == "phone/0" for r in rows)
    assert summary.skipped == 2  # notes.txt and the J2ME pack (no signature, no extension)


def test_a_loose_structural_fit_is_not_an_archive_by_default(tmp_path: Path) -> None:
    root = tmp_path / "games"
    root.mkdir()
    # One member covering half the payload: a J2ME table only by chance.
    (root / "data").write_bytes(b"\x01" + struct.pack("<ii", 0, 1) + b"ab")
    assert gamepak.detect(root / "data")
    strict = build_catalog([str(root)], str(tmp_path / "strict"), scheduler="synchronous")
    loose = build_catalog(
        [str(root)], str(tmp_path / "loose"), options=ScanOptions(guess="loose"), scheduler="synchronous"
    )
    assert (strict.archives, strict.skipped, loose.archives) == (0, 1, 1)


def test_member_type_guesses() -> None:
    assert member_type("x.bin", b"OggS\0\0") == "audio/ogg"
    assert member_type("sound.wav", b"RIFF\0\0\0\0WAVEfmt ") == "audio/wav"
    assert member_type("progs.dat", b"\x06\x00\x00\x00") == "binary"
    assert member_type("notes", "héllo wörld\n".encode()) == "text/plain"
    assert member_type("blob", b"\x00\x01\xff") == "binary"
    assert member_type("empty", b"") == "empty"
    assert member_type("car.joe", b"IDP2\x03\x00") == "model/joe"  # VDrift's JOE carries MD2's magic
    assert member_type("car.md2", b"IDP2\x08\x00") == "model/md2"
    assert member_type("car.txt", b"IDP2\x08\x00") == "model/md2"


# -- resume --------------------------------------------------------------------------------------
def test_resume_after_an_interrupted_run_gives_the_same_catalog(
    reference: Path, collection: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    games = tmp_path / "games"
    shutil.copytree(collection, games, copy_function=shutil.copy2)
    uninterrupted = tmp_path / "uninterrupted"
    build_catalog([str(games)], str(uninterrupted), scheduler="synchronous")
    out = tmp_path / "out"
    monkeypatch.setattr(catalog_run, "BATCH_FILES", 2)
    original = ArchiveScanner.scan
    calls = []

    def interrupted(self: ArchiveScanner) -> None:
        calls.append(self.ref.path)
        if len(calls) == 5:  # in the third batch (of two files): two are committed
            raise KeyboardInterrupt
        original(self)

    monkeypatch.setattr(ArchiveScanner, "scan", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_catalog([str(games)], str(out), scheduler="synchronous")
    (out / "members" / ".part-x.parquet.gamepak-1-1.tmp").write_bytes(b"half a part")
    monkeypatch.setattr(ArchiveScanner, "scan", original)
    done_before = len(list((out / "archives").glob("part-*")))
    assert done_before == 2
    summary = build_catalog([str(games)], str(out), scheduler="synchronous", resume=True)
    assert summary.resumed > 0
    assert snapshot(out) == snapshot(uninterrupted)
    assert not list((out / "members").glob(".*"))
    # A changed file is cataloged again, and its old rows are gone.
    _write(games / "id1.pak", "pak", [("only.txt", b"new")])
    summary = build_catalog([str(games)], str(out), scheduler="synchronous", resume=True)
    assert summary.archives == 1
    rows = [r for r in members(out) if r["nested_path"] == "id1.pak"]
    assert [r["name"] for r in rows] == ["only.txt"]
    fresh = tmp_path / "fresh"
    build_catalog([str(games)], str(fresh), scheduler="synchronous")
    assert snapshot(out) == snapshot(fresh)


def test_resume_refuses_other_options(reference: Path, collection: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    build_catalog([str(collection / "id1.pak")], str(out), scheduler="synchronous")
    with pytest.raises(gamepak.GamepakError, match="hash_algorithm"):
        build_catalog([str(collection / "id1.pak")], str(out), options=ScanOptions(hash_algorithm="xxh3"), resume=True)


# -- the command line ----------------------------------------------------------------------------
def test_cli_catalog_and_existing_output(collection: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, _, err = in_process_cli("catalog", str(collection), "-o", str(out), "--scheduler", "synchronous")
    assert code == 0, err
    assert "15 archives, 43 members, 12 textures, 1 model, 4 errors" in err
    code, _, err = in_process_cli("catalog", str(collection), "-o", str(out), "--scheduler", "synchronous")
    assert code == 1 and "already exists" in err and "Traceback" not in err
    code, _, err = in_process_cli(
        "catalog", str(collection), "-o", str(out), "--scheduler", "synchronous", "--overwrite"
    )
    assert code == 0, err
    code, _, err = in_process_cli("catalog", str(collection), "-o", str(out), "--scheduler", "bogus")
    assert code == 2 and "scheduler" in err


def _diff_pair(tmp_path: Path, collection: Path) -> tuple[Path, Path]:
    old_games, new_games = tmp_path / "v1", tmp_path / "v2"
    shutil.copytree(collection, old_games)
    shutil.copytree(collection, new_games)
    # added, removed, changed; and maps/e1m1.bsp moved from id1.pak into cars.jpk
    _write(new_games / "id1.pak", "pak", [("gfx/a.lmp", b"Y" * 100), ("readme.txt", b"hello\n"), ("new.txt", b"added")])
    _write(new_games / "cars.jpk", "jpk", [("body.joe", b"z" * 500), ("maps/e1m1.bsp", b"\x1d\0\0\0" + b"x" * 3000)])
    old, new = tmp_path / "old.catalog", tmp_path / "new.catalog"
    build_catalog([str(old_games)], str(old), scheduler="synchronous")
    build_catalog([str(new_games)], str(new), scheduler="synchronous")
    return old, new


def test_catalog_diff(collection: Path, tmp_path: Path) -> None:
    old, new = _diff_pair(tmp_path, collection)
    result = diff_catalogs(str(old), str(new))
    assert [(m["pack"], m["name"]) for m in result.added] == [("id1.pak", "new.txt")]
    assert [(m["pack"], m["name"]) for m in result.removed] == [("cars.jpk", "list.txt")]
    assert [(m["pack"], m["name"]) for m in result.changed] == [("id1.pak", "gfx/a.lmp")]
    assert [(m["from"], m["to"], m["name"]) for m in result.moved] == [("id1.pak", "cars.jpk", "maps/e1m1.bsp")]
    code, out, _ = in_process_cli("catalog-diff", str(old), str(new), "--json")
    assert code == 3
    report = json.loads(out)
    assert not report["equal"] and report["moved"][0]["name"] == "maps/e1m1.bsp"
    code, out, _ = in_process_cli("catalog-diff", str(old), str(new))
    assert code == 3 and "+ id1.pak/new.txt" in out and "> id1.pak/maps/e1m1.bsp -> cars.jpk/maps/e1m1.bsp" in out
    code, out, err = in_process_cli("catalog-diff", str(old), str(old))
    assert code == 0 and out == "" and "same members" in err
    code, _, err = in_process_cli("catalog-diff", str(old), str(tmp_path))
    assert code == 1 and "not a gamepak catalog" in err


def test_catalog_diff_reports_packs_changed_outside_their_members(collection: Path, tmp_path: Path) -> None:
    """Same members, other bytes (a stale tail, a header field): not "the same members"."""
    old_games, new_games = tmp_path / "v1", tmp_path / "v2"
    shutil.copytree(collection, old_games)
    shutil.copytree(collection, new_games)
    pack = new_games / "id1.pak"
    pack.write_bytes(pack.read_bytes() + b"stale tail of an edit")
    old, new = tmp_path / "old.catalog", tmp_path / "new.catalog"
    build_catalog([str(old_games)], str(old), scheduler="synchronous")
    build_catalog([str(new_games)], str(new), scheduler="synchronous")
    result = diff_catalogs(str(old), str(new))
    assert not (result.added or result.removed or result.changed or result.moved)
    assert [(p["pack"], p["new_size"] - p["old_size"]) for p in result.repacked] == [("id1.pak", 21)]
    assert not result.equal
    code, out, _ = in_process_cli("catalog-diff", str(old), str(new))
    assert code == 3 and "! id1.pak: bytes changed outside its members" in out


def test_readme_queries(reference: Path) -> None:
    """The queries of the README run as written, with pandas and DuckDB."""
    duckdb = pytest.importorskip("duckdb")
    pd = pytest.importorskip("pandas")
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Catalog a collection", 1)[1].split("\n## ", 1)[0]
    blocks = [b.split("```", 1)[0] for b in section.split("```python\n")[1:]]
    assert len(blocks) == 4
    cwd = os.getcwd()
    os.chdir(reference.parent)
    try:
        shutil.copytree(reference, "catalog", dirs_exist_ok=True)
        for block in blocks:
            scope: dict[str, Any] = {"duckdb": duckdb, "pd": pd}
            exec(block, scope)
            assert len(scope["result"]) > 0, block
    finally:
        os.chdir(cwd)


def test_real_samples(tmp_path: Path) -> None:
    if not SAMPLES.exists():
        pytest.skip("../shared/samples is absent")
    build_catalog([str(SAMPLES)], str(tmp_path / "out"), scheduler="synchronous")
    rows = members(tmp_path / "out")
    assert {Path(r["archive_path"]).suffix for r in rows} >= {".pak", ".jpk", ".vpp_pc", ".str2_pc"}
    for row in rows[::7]:
        if row["depth"] == 0:
            with gamepak.open(row["archive_path"]) as archive:
                entry = archive.infolist()[row["index"]]
                assert hashlib.sha256(archive.read(entry)).hexdigest() == row["hash"]
    archives = read_table(str(tmp_path / "out"), "archives").to_pylist()
    assert {a["format"] for a in archives} >= {"pak", "jpk", "vpp", "joe"}
    build_catalog([str(SAMPLES)], str(tmp_path / "threads"), scheduler="threads", workers=2)
    assert snapshot(tmp_path / "threads") == snapshot(tmp_path / "out")


def test_the_command_module_imports_nothing_heavy() -> None:
    code = "import sys, gamepak.cli.catalog; print(sorted({'dask', 'pyarrow', 'distributed'} & set(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_members_over_the_same_bytes_are_not_hashed_again_and_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PAK listing many members over the same stored bytes would have every chunk hashed once
    per member over it (a few megabytes, a terabyte of hashing): one errors row names it, its
    members are listed without digests, the file itself is hashed, and the collection goes on."""
    import gamepak.core.archive as archive_module

    monkeypatch.setattr(archive_module, "SHARED_BYTES_FLOOR", 1 << 10)
    data = bytes(range(256)) * 64
    directory = b"".join(struct.pack("<56sii", f"f{number}.bin".encode(), 12, len(data)) for number in range(8))
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "bomb.pak").write_bytes(
        struct.pack("<4sii", b"PACK", 12 + len(data), len(directory)) + data + directory
    )
    _write(tmp_path / "in" / "fine.pak", "pak", [("a.txt", b"a" * 99)])
    build_catalog([str(tmp_path / "in")], str(tmp_path / "out"), scheduler="synchronous")
    errors = read_table(str(tmp_path / "out"), "errors").to_pylist()
    assert [(os.path.basename(e["path"]), e["stage"]) for e in errors] == [("bomb.pak", "hash")]
    assert "members share their stored bytes" in errors[0]["message"]
    members = read_table(str(tmp_path / "out"), "members").to_pylist()
    bomb = [m for m in members if m["archive_path"].endswith("bomb.pak")]
    assert sorted(m["name"] for m in bomb) == [f"f{n}.bin" for n in range(8)]
    assert all(m["hash"] is None for m in bomb)
    fine = [m["hash"] for m in members if m["archive_path"].endswith("fine.pak")]
    assert fine == [hashlib.sha256(b"a" * 99).hexdigest()]
    archives = {os.path.basename(row["path"]): row for row in read_table(str(tmp_path / "out"), "archives").to_pylist()}
    assert archives["bomb.pak"]["sha256"] == hashlib.sha256((tmp_path / "in" / "bomb.pak").read_bytes()).hexdigest()
