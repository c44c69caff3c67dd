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

import gamepak
from gamepak.nested import resolve

from conftest import SAMPLES, in_process_cli, run_cli

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("dask")

from gamepak.catalog import ScanOptions, build_catalog, diff_catalogs  # noqa: E402
from gamepak.catalog import run as catalog_run  # noqa: E402
from gamepak.catalog.kinds import member_type  # noqa: E402
from gamepak.catalog.scan import ArchiveScanner  # noqa: E402
from gamepak.catalog.schema import SCHEMAS, TABLES, read_table  # noqa: E402
from gamepak.formats.rfg.asm import AsmContainer, AsmFile, AsmPrimitive  # noqa: E402

INNER_MEMBERS = [("a.xtbl", b"<root>hi</root>" * 50), ("b.dat", bytes(range(256)) * 12)]


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


# -- contents ----------------------------------------------------------------------------------
def test_tables_have_the_typed_schema(reference: Path) -> None:
    for table in TABLES:
        parts = sorted((reference / table).glob("part-*.parquet"))
        assert parts, table
        for part in parts:
            assert pq.read_schema(part).remove_metadata().equals(SCHEMAS[table].remove_metadata()), part


def test_every_member_is_listed_with_the_hash_of_its_bytes(reference: Path, collection: Path) -> None:
    rows = members(reference)
    assert len(rows) == 3 + 2 + 2 + 4 * (3 + 2)
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
    assert (inner["depth"], inner["member_count"], inner["format"]) == (1, 2, "vpp")


def test_broken_files_are_error_rows_and_the_rest_is_cataloged(reference: Path) -> None:
    errors = read_table(str(reference), "errors").to_pylist()
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
        expected = {}
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
    assert "15 archives, 27 members, 2 errors" in err
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
    assert code == 1
    report = json.loads(out)
    assert not report["equal"] and report["moved"][0]["name"] == "maps/e1m1.bsp"
    code, out, _ = in_process_cli("catalog-diff", str(old), str(new))
    assert code == 1 and "+ id1.pak/new.txt" in out and "> id1.pak/maps/e1m1.bsp -> cars.jpk/maps/e1m1.bsp" in out
    code, out, err = in_process_cli("catalog-diff", str(old), str(old))
    assert code == 0 and out == "" and "same members" in err
    code, _, err = in_process_cli("catalog-diff", str(old), str(tmp_path))
    assert code == 2 and "not a gamepak catalog" in err


def test_readme_queries(reference: Path) -> None:
    """The three queries of the README run as written, with pandas and DuckDB."""
    duckdb = pytest.importorskip("duckdb")
    pd = pytest.importorskip("pandas")
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Catalog a collection", 1)[1].split("\n## ", 1)[0]
    blocks = [b.split("```", 1)[0] for b in section.split("```python\n")[1:]]
    assert len(blocks) == 3
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
