"""The catalog at scale: the walk spooled to a temporary file, units planned and run a window at a
time (so a run's client does not grow with the collection), the same rows whatever the window or
the scheduler, bounded row groups, and progress with a rate and an ETA."""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gamepak

pytest.importorskip("pyarrow")
pytest.importorskip("dask")

from test_catalog import snapshot

from gamepak.catalog import build_catalog, dispatch
from gamepak.catalog import run as catalog_run
from gamepak.catalog.discovery import FileRef, FileSpool, iter_files
from gamepak.catalog.dispatch import PickledPool, run_on_pool
from gamepak.catalog.rows import ScanOptions
from gamepak.catalog.schema import TABLES, read_table
from gamepak.cli.catalog import rate_text


def _pack(path: Path, format_name: str, members: list[tuple[str, bytes]], **options: Any) -> None:
    with gamepak.create(path, format_name, overwrite=True, **options) as writer:
        for name, data in members:
            writer.add(name, data)


def many_small_packs(root: Path, count: int, seed: int = 3) -> Path:
    """`count` small packs of every format in a few folders (a nested pack in some RFG ones)."""
    rng = random.Random(seed)
    for index in range(count):
        folder = root / f"d{index % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        members = [(f"m{i}.bin", rng.randbytes(rng.randrange(16, 300))) for i in range(rng.randrange(1, 5))]
        kind = index % 6
        if kind == 0:
            _pack(folder / f"a{index}.pak", "pak", [(f"data/{n}", d) for n, d in members])
        elif kind == 1:
            _pack(folder / f"a{index}.jpk", "jpk", members)
        elif kind == 2:
            _pack(folder / f"a{index}.vpp_pc", "vpp", members, flags=3)
        elif kind == 3:
            inner = folder / f".inner{index}"
            _pack(inner, "vpp", members, flags=1)
            _pack(folder / f"a{index}.vpp_pc", "vpp", [*members, ("in.str2_pc", inner.read_bytes())])
            inner.unlink()
        elif kind == 4:
            _pack(folder / f"r{index}", "j2me-sized", [(str(i), d) for i, (_, d) in enumerate(members)])
        else:
            (folder / f"broken{index}.pak").write_bytes(b"PACK" + rng.randbytes(20))
    return root


@pytest.fixture(scope="module")
def packs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return many_small_packs(tmp_path_factory.mktemp("scale") / "packs", 120)


@pytest.fixture(scope="module")
def reference(packs: Path) -> Path:
    """The catalog in one window and one process (the run as it was before windows)."""
    out = packs.parent / "reference.catalog"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(catalog_run, "WINDOW_UNITS", 1 << 30)
        build_catalog([str(packs)], str(out), scheduler="synchronous")
    return out


def _small_windows(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Windows of one unit per worker and batches of 3 files; returns the size of every window
    planned."""
    monkeypatch.setattr(catalog_run, "WINDOW_UNITS", 1)
    monkeypatch.setattr(catalog_run, "CLUSTER_WINDOW_UNITS", 1)
    monkeypatch.setattr(catalog_run, "SUBMIT_GROUP", 1)
    monkeypatch.setattr(catalog_run, "BATCH_FILES", 3)
    monkeypatch.setattr(catalog_run, "CLUSTER_BATCH_FILES", 3)
    windows: list[int] = []
    graph = catalog_run._graph

    def recording(units: list[Any], out: str, options: ScanOptions, first: int = 0) -> Any:
        windows.append(len(units))
        return graph(units, out, options, first)

    monkeypatch.setattr(catalog_run, "_graph", recording)
    return windows


@pytest.mark.parametrize("scheduler", ["synchronous", "threads", "processes"])
def test_windows_give_the_same_rows(
    scheduler: str, packs: Path, reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    windows = _small_windows(monkeypatch)
    summary = build_catalog([str(packs)], str(tmp_path / "out"), scheduler=scheduler, workers=2)
    # Never more than one unit per worker planned at once: the client holds a window, not the run.
    assert windows and max(windows) <= 2
    assert sum(windows) == summary.units == 40  # 120 files in batches of 3
    assert snapshot(tmp_path / "out") == snapshot(reference)
    assert summary.archives == read_table(str(reference), "archives").num_rows


def test_distributed_windows_give_the_same_rows(
    packs: Path, reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    distributed = pytest.importorskip("distributed")
    windows = _small_windows(monkeypatch)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        summary = build_catalog([str(packs)], str(tmp_path / "out"), scheduler=cluster.scheduler_address)
    # Two in flight (one per worker thread), then topped up one at a time.
    assert max(windows) <= 2 and sum(windows) == summary.units == 40
    assert snapshot(tmp_path / "out") == snapshot(reference)


def test_a_cluster_runs_the_last_parts_on_a_worker(
    packs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk's errors and the empty parts are written on a worker (which has pyarrow loaded),
    so the client of a cluster run never imports pyarrow; the walk's errors still come first."""
    import threading

    distributed = pytest.importorskip("distributed")
    seen: list[bool] = []
    real = catalog_run.fill_empty_tables

    def fill(out: str) -> None:
        seen.append(threading.current_thread() is threading.main_thread())
        real(out)

    monkeypatch.setattr(catalog_run, "fill_empty_tables", fill)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        summary = build_catalog(
            [str(packs), str(tmp_path / "missing")], str(tmp_path / "out"), scheduler=cluster.scheduler_address
        )
    assert seen == [False]
    assert summary.walk_errors == 1
    errors = read_table(str(tmp_path / "out"), "errors").to_pylist()
    assert [row["path"] for row in errors if row["stage"] == "walk"] == [str(tmp_path / "missing")]
    assert "part-walk.parquet" in os.listdir(tmp_path / "out" / "errors")
    assert "part-empty.parquet" in os.listdir(tmp_path / "out" / "strings")


def test_the_catalogs_own_cluster_runs_without_the_profiler() -> None:
    """The cluster `local` starts: its workers have no statistical profiler and quieter monitors
    (CLUSTER_CONFIG), and the caller's own dask configuration is left as it was."""
    pytest.importorskip("distributed")
    import dask
    from distributed import Client

    before = dask.config.get("distributed.worker.profile.enabled")
    with catalog_run.local_cluster(1) as cluster, Client(cluster) as client:
        seen = client.run(
            lambda dask_worker: (
                dask.config.get("distributed.worker.profile.enabled"),
                dask.config.get("distributed.admin.tick.interval"),
                "profile" in dask_worker.periodic_callbacks,
            )
        )
    assert list(seen.values()) == [(False, "500ms", False)]
    assert dask.config.get("distributed.worker.profile.enabled") == before


def test_the_local_scheduler_gives_the_same_rows(packs: Path, reference: Path, tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    summary = build_catalog([str(packs)], str(tmp_path / "out"), scheduler="local", workers=2)
    assert snapshot(tmp_path / "out") == snapshot(reference)
    assert summary.extra["scheduler"] == "local"


def test_progress_counts_archives_up_to_the_total(packs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _small_windows(monkeypatch)
    seen: list[tuple[int, int]] = []
    build_catalog(
        [str(packs)], str(tmp_path / "out"), scheduler="synchronous", progress=lambda *done: seen.append(done)
    )
    assert len(seen) == 40
    assert [done for done, _ in seen] == list(range(3, 121, 3))
    assert {total for _, total in seen} == {120}


def _record_batches(monkeypatch: pytest.MonkeyPatch, log: Path) -> None:
    """Each batch run appends its part id to `log` (from any process: forked workers too)."""
    real = catalog_run.run_batch

    def recording(out: str, part_id: str, *args: Any) -> Any:
        with open(log, "a") as handle:
            handle.write(part_id + "\n")
        return real(out, part_id, *args)

    monkeypatch.setattr(catalog_run, "run_batch", recording)


@pytest.mark.parametrize("scheduler", ["synchronous", "processes", "cluster"])
def test_batches_run_in_the_order_planned(
    scheduler: str, packs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dask runs the batches of a window in the order they were planned (the small ones made for
    the end of the run last), not in the order of their part ids (digests). One worker, so the
    order it runs them in is the order dask hands them out."""
    workers = 1
    for name in ("BATCH_FILES", "BATCH_FILES_MIN", "CLUSTER_BATCH_FILES"):
        monkeypatch.setattr(catalog_run, name, 3)
    log = tmp_path / "ran.txt"
    _record_batches(monkeypatch, log)
    if scheduler == "cluster":
        distributed = pytest.importorskip("distributed")
        with distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster:
            build_catalog([str(packs)], str(tmp_path / "out"), scheduler=cluster.scheduler_address)
    else:
        build_catalog([str(packs)], str(tmp_path / "out"), scheduler=scheduler, workers=workers)
    refs = [ref for ref in iter_files([str(packs)]) if isinstance(ref, FileRef)]
    planned = [batch.part_id for batch in catalog_run.batches(refs, sum(ref.size for ref in refs), workers, len(refs))]
    assert len(planned) == 40
    assert log.read_text().split() == planned


def test_the_process_pool_holds_more_units_than_workers(
    packs: Path, reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`processes` keeps QUEUED_UNITS units per worker in flight, so a worker that finishes one
    takes the next at once rather than waiting for the client to send it."""
    monkeypatch.setattr(catalog_run, "BATCH_FILES", 3)
    most = [0]
    futures: list[Any] = []
    real = PickledPool.submit

    def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        future = real(self, *args, **kwargs)
        futures.append(future)
        most[0] = max(most[0], sum(1 for each in futures if not each.done()))
        return future

    monkeypatch.setattr(PickledPool, "submit", counting)
    build_catalog([str(packs)], str(tmp_path / "out"), scheduler="processes", workers=2)
    assert most[0] == 2 * catalog_run.QUEUED_UNITS > 2
    assert snapshot(tmp_path / "out") == snapshot(reference)


_STARTED_EARLY = """
import multiprocessing, sys
from gamepak.catalog import build_catalog
from gamepak.catalog import run
walk, fork = run.iter_files, run._fork_pool
seen = []

def walking(*args, **kwargs):
    seen.append(("workers at the walk", len(multiprocessing.active_children())))
    return walk(*args, **kwargs)

def forking(workers):
    pool = fork(workers)
    seen.append(("forked", pool is not None))
    return pool

run.iter_files, run._fork_pool = walking, forking
build_catalog([sys.argv[1]], sys.argv[2], scheduler="processes", workers=2, resume=sys.argv[3] == "resume")
seen.append(("client imported pyarrow", "pyarrow" in sys.modules))
print(seen)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux only")
def test_process_workers_start_before_the_walk(packs: Path, reference: Path, tmp_path: Path) -> None:
    """`processes` forks its workers before the walk, and they import pyarrow while the client
    walks: the client never imports it, and a run that resumes (which reads the old catalog with
    pyarrow) still forks them."""
    import ast
    import subprocess

    out = tmp_path / "out"
    for mode in ("new", "resume"):
        result = subprocess.run(
            [sys.executable, "-c", _STARTED_EARLY, str(packs), str(out), mode], capture_output=True, text=True
        )
        assert result.returncode == 0, result.stderr
        seen = ast.literal_eval(result.stdout.strip().splitlines()[-1])
        imported = mode == "resume"  # resume_state reads the old catalog in the client
        assert seen == [("forked", True), ("workers at the walk", 2), ("client imported pyarrow", imported)]
    assert snapshot(out) == snapshot(reference)


def test_the_spool_leaves_no_file_behind(packs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    build_catalog([str(packs)], str(out), scheduler="synchronous")
    assert sorted(os.listdir(out)) == sorted([*TABLES, "_gamepak_catalog.json"])


def test_planned_batches_are_those_of_the_whole_list(packs: Path, tmp_path: Path) -> None:
    refs = [ref for ref in iter_files([str(packs)]) if isinstance(ref, FileRef)]
    with FileSpool(str(tmp_path)) as spool:
        for ref in refs:
            spool.add(ref)
        streamed = list(catalog_run.batches(spool, spool.bytes, 2, spool.count))
    planned = catalog_run.plan(refs, ScanOptions(), 2)
    # packs of a few hundred bytes are never split: every planned unit is a batch
    whole = [unit for unit in planned if isinstance(unit, catalog_run.Batch)]
    assert len(whole) == len(planned)
    assert [(unit.part_id, unit.refs) for unit in streamed] == [(unit.part_id, unit.refs) for unit in whole]


def _tiny(count: int) -> list[FileRef]:
    return [FileRef(f"/c/a{index}.pak", f"a{index}.pak", 700, 1) for index in range(count)]


def test_batches_are_large_while_much_is_left_and_small_at_the_end() -> None:
    """Tiny archives: batches of BATCH_FILES while there is plenty left, then each at most
    1/(workers * GUIDE) of what is left, down to BATCH_FILES_MIN, so the workers finish together."""
    refs = _tiny(5000)
    sizes = [len(batch.refs) for batch in catalog_run.batches(refs, 700 * len(refs), 2, len(refs))]
    assert sum(sizes) == 5000
    assert sizes[0] == catalog_run.BATCH_FILES
    assert sizes == sorted(sizes, reverse=True)
    assert sizes[-3:] == [catalog_run.BATCH_FILES_MIN] * 3 or sizes[-1] < catalog_run.BATCH_FILES_MIN
    assert sum(1 for size in sizes if size < catalog_run.BATCH_FILES) >= 2 * catalog_run.GUIDE
    # On a cluster: larger batches (a task costs more there), tapered the same way.
    cluster = [len(batch.refs) for batch in catalog_run.batches(refs, 700 * len(refs), 2, len(refs), 256)]
    assert cluster[0] == 256 and len(cluster) < len(sizes)
    assert cluster == sorted(cluster, reverse=True) and sum(cluster) == 5000


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 3 << 20), max_size=300),
    st.integers(1, 8),
    st.sampled_from([None, 3, 64, 256]),
)
def test_batches_keep_every_file_in_order_within_their_limits(
    sizes: list[int], workers: int, most_files: int | None
) -> None:
    refs = [FileRef(f"/c/{index}", str(index), size, 1) for index, size in enumerate(sizes)]
    made = list(catalog_run.batches(refs, sum(sizes), workers, len(refs), most_files))
    assert [ref for batch in made for ref in batch.refs] == refs
    for batch in made:
        assert batch.refs
        assert len(batch.refs) <= (most_files or catalog_run.BATCH_FILES)
        assert len(batch.refs) == 1 or sum(ref.size for ref in batch.refs) <= catalog_run.BATCH_BYTES


_names = st.text(st.characters(blacklist_characters="\0", codec="utf-8"), min_size=1, max_size=12) | st.just(
    "caf\udce9.txt"
)
_refs = st.builds(
    FileRef,
    _names,
    _names,
    st.integers(0, 1 << 40),
    st.none() | st.integers(-(1 << 62), 1 << 62),
    st.booleans(),
)


@settings(max_examples=40, deadline=None)
@given(refs=st.lists(_refs, max_size=30), chunk=st.integers(1, 7))
def test_the_spool_gives_back_every_ref_in_order(refs: list[FileRef], chunk: int, tmp_path_factory: Any) -> None:
    folder = tmp_path_factory.mktemp("spool")
    with FileSpool(str(folder)) as spool:
        spool.CHUNK = chunk
        for ref in refs:
            spool.add(ref)
        assert list(spool) == refs
        assert (spool.count, spool.bytes) == (len(refs), sum(ref.size for ref in refs))
    assert os.listdir(folder) == []


@settings(max_examples=40, deadline=None)
@given(refs=st.lists(_refs, max_size=30))
def test_a_batch_crosses_to_a_worker_as_columns(refs: list[FileRef]) -> None:
    """A batch's files are pickled as five columns (no FileRef per file, whose pickling was a
    fifth of the client's work per archive) and come back as the same FileRefs."""
    import pickle

    import cloudpickle

    from gamepak.catalog.tasks import FileList

    for dumps in (pickle.dumps, cloudpickle.dumps):
        data = dumps(FileList(refs))
        back = pickle.loads(data)
        assert back.refs == refs and all(type(ref) is FileRef for ref in back.refs)
        assert b"FileRef" not in data


def test_a_batch_id_names_its_files_states() -> None:
    refs = [FileRef(f"/c/a{index}.pak", f"a{index}.pak", 700, 1) for index in range(3)]
    batch_id = catalog_run._batch_id(refs)
    assert batch_id == catalog_run._batch_id(list(refs)) and len(batch_id) == 17
    changed = [refs[0], refs[1]._replace(size=701), refs[2]]
    touched = [refs[0], refs[1]._replace(mtime_ns=2), refs[2]]
    others = {catalog_run._batch_id(x) for x in (changed, touched, refs[::-1], refs[:2])}
    assert batch_id not in others and len(others) == 4
    assert catalog_run._batch_id([FileRef("/c/caf\udce9", "caf\udce9", 1, None)]).startswith("b")


def test_rate_text() -> None:
    assert rate_text(0, 1000, 0, 0.0) == "0/1,000 archives"
    assert rate_text(64, 1000, 64, 0.0) == "64/1,000 archives"
    # 1,000 archives in 2 s since the first report: 500/s, 9,000 left: 18 s.
    assert rate_text(1064, 10_064, 64, 2.0) == "1,064/10,064 archives, 500 archives/s, ETA 0:00:18"
    assert rate_text(2, 1_000_002, 1, 1.0).endswith("1 archives/s, ETA 277:46:40")


# -- row groups ------------------------------------------------------------------------------------
def _row_group_rows(path: Path) -> list[int]:
    import pyarrow.parquet as pq

    metadata = pq.ParquetFile(path).metadata
    return [metadata.row_group(index).num_rows for index in range(metadata.num_row_groups)]


def test_row_groups_are_bounded_in_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gamepak.catalog import schema

    monkeypatch.setattr(schema, "ROW_GROUP_BYTES", 10_000)
    (tmp_path / "errors").mkdir()
    (tmp_path / "members").mkdir()
    errors = schema.TableSink(str(tmp_path), "errors", "t")
    rows = [
        {"path": f"p{i}", "nested_path": None, "member": None, "stage": "s", "message": "m" * 1000, "size": i}
        for i in range(50)
    ]
    for row in rows:
        errors.add(row)
    errors.commit()
    # 10 rows of about 1,000 bytes reach the 10,000-byte bound: 5 groups, not one of 50.
    assert _row_group_rows(tmp_path / "errors" / "part-t.parquet") == [10] * 5
    assert [row["message"] for row in schema.read_table(str(tmp_path), "errors").to_pylist()] == ["m" * 1000] * 50
    members = schema.TableSink(str(tmp_path), "members", "t")
    for first in range(0, 40, 4):
        names = [f"{'n' * 600}{i}" for i in range(first, first + 4)]
        members.extend(
            4,
            {"name": names, "index": list(range(4)), "size": [1] * 4, "stored_size": [1] * 4, "offset": [0] * 4},
            {
                "archive_path": "a",
                "nested_path": "a",
                "depth": 0,
                "format": "pak",
                "compression": "none",
                "hash_algorithm": "none",
                "member_type": "binary",
            },
        )
    members.commit()
    assert max(_row_group_rows(tmp_path / "members" / "part-t.parquet")) <= 16
    assert schema.read_table(str(tmp_path), "members").num_rows == 40


class _Text(str):
    """A str subclass: weighed by the long way, as `_value_bytes` does."""


_weighed = st.recursive(
    st.one_of(
        st.text(max_size=8),
        st.binary(max_size=8),
        st.none(),
        st.integers(),
        st.floats(allow_nan=False),
        st.booleans(),
        st.text(max_size=8).map(_Text),
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(
        st.lists(_weighed, max_size=12),
        st.lists(st.text(max_size=8), max_size=12),
        st.lists(st.one_of(st.text(max_size=8), st.binary(max_size=8), st.none()), max_size=12),
    )
)
def test_values_weigh_what_each_value_weighs(values: list[Any]) -> None:
    # The quick weighing of a column or a row (which decides where row groups are cut) is the
    # value-by-value one's, whatever the column holds.
    from gamepak.catalog import schema

    expected = sum(map(schema._value_bytes, values))
    assert schema._values_bytes(values) == expected
    assert schema._values_bytes({str(i): v for i, v in enumerate(values)}.values()) == expected


def test_row_groups_of_a_catalog_are_bounded_in_rows(
    packs: Path, reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gamepak.catalog import schema

    monkeypatch.setattr(schema, "ROW_GROUP_ROWS", 5)
    build_catalog([str(packs)], str(tmp_path / "out"), scheduler="synchronous")
    groups = [rows for part in (tmp_path / "out").glob("*/part-*.parquet") for rows in _row_group_rows(part)]
    assert max(groups) == 5 and len(groups) > len(list((tmp_path / "out").glob("*/part-*.parquet")))
    assert snapshot(tmp_path / "out") == snapshot(reference)


# -- the walk ---------------------------------------------------------------------------------------
def test_the_walk_gives_relative_paths_and_regular_files_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "games"
    (root / "b" / "deep").mkdir(parents=True)
    (root / "a.pak").write_bytes(b"x")
    (root / "b" / "c.pak").write_bytes(b"yy")
    (root / "b" / "deep" / "d").write_bytes(b"zzz")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "e").write_bytes(b"e")
    (root / "linked").symlink_to(tmp_path / "elsewhere")  # a folder link is not followed (os.walk's rule)
    (root / "file-link").symlink_to(root / "a.pak")  # a file link is a file
    os.mkfifo(root / "b" / "fifo")  # not a regular file: never opened
    expected = ["a.pak", "b/c.pak", "b/deep/d", "file-link"]
    for spelled in (str(root), f"{root}/", str(root / "b" / ".."), "games"):
        monkeypatch.chdir(tmp_path)
        found = [ref for ref in iter_files([spelled]) if isinstance(ref, FileRef)]
        assert sorted(ref.relative for ref in found) == expected
        assert all(ref.relative == os.path.relpath(ref.path, spelled) for ref in found)
        assert [ref.size for ref in sorted(found, key=lambda ref: ref.relative)] == [1, 2, 3, 1]


def test_the_walk_is_in_sorted_order_files_before_folders(tmp_path: Path) -> None:
    """Each folder's files (sorted), then its folders (sorted), depth first; the output folder
    and folder links never entered; a broken link reported (as os.walk then os.stat did)."""
    root = tmp_path / "games"
    for folder in ("z", "a/b", "a/c", "out/x"):
        (root / folder).mkdir(parents=True)
    for name in ("z/1", "a/b/2", "a/c/3", "a/4", "5", "A", "out/x/6"):
        (root / name).write_bytes(b"x" * len(name))
    (root / "a" / "link").symlink_to(root / "z")
    (root / "broken").symlink_to(tmp_path / "missing")
    found = list(iter_files([str(root)], exclude=str(root / "out")))
    listed = [ref.relative if isinstance(ref, FileRef) else ref for ref in found]
    assert listed == [
        "5",
        "A",
        (str(root / "broken"), f"{root / 'broken'}: cannot read: No such file or directory"),
        "a/4",
        "a/b/2",
        "a/c/3",
        "z/1",
    ]
    assert [ref.path for ref in found if isinstance(ref, FileRef)] == [
        os.path.join(str(root), ref.relative) for ref in found if isinstance(ref, FileRef)
    ]


# -- the graph given to dask -----------------------------------------------------------------------
def test_task_arguments_are_never_taken_for_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """The units go to dask as a plain dict of tasks, in which dask takes any string argument
    equal to a key for that key's result: an output folder spelled like a key reaches the task
    as the folder all the same."""
    import dask.local

    seen: list[tuple[Any, ...]] = []

    def recording(*args: Any) -> dict[str, int]:
        seen.append(args)
        return {"archives": 1}

    monkeypatch.setattr(catalog_run, "run_batch", recording)
    refs = [FileRef(f"/c/a{index}.pak", f"a{index}.pak", 10, 1) for index in range(4)]
    units: list[Any] = [catalog_run.Batch(catalog_run._batch_id(refs[:2]), refs[:2]), catalog_run.Batch("b2", refs[2:])]
    out = catalog_run._batch_key(1, "b2")  # the key of the second batch
    graph, finals = catalog_run._graph(units, out, ScanOptions(), 0)
    assert out in graph and finals == [catalog_run._batch_key(0, units[0].part_id), out]
    assert dask.local.get_sync(graph, finals) == ({"archives": 1}, {"archives": 1})
    assert sorted((args[0], args[1], args[2].refs) for args in seen) == [
        (out, "b2", refs[2:]),
        (out, units[0].part_id, refs[:2]),
    ]


def test_a_split_archives_tasks_get_the_results_they_need(monkeypatch: pytest.MonkeyPatch) -> None:
    """A split archive's member ranges get its sha256, and its last task the check's fields, the
    sha256 and every range's counts, in order."""
    import dask.local

    from gamepak.core.detection import Detection

    ref = FileRef("/c/big.pak", "big.pak", 10, 1)
    monkeypatch.setattr(catalog_run, "run_sha256", lambda ref: "digest")
    monkeypatch.setattr(catalog_run, "run_check", lambda ref, options, fmt: {"format": fmt})
    monkeypatch.setattr(catalog_run, "run_range", lambda out, part, ref, options, fmt, start, stop, sha: (part, sha))
    monkeypatch.setattr(catalog_run, "run_finish", lambda *args: args)
    # (A Detection is a tuple: dask would have rebuilt it from its items, which it cannot be.)
    split = catalog_run.Split(ref, Detection("pak", 1.0, True), "magic", [(0, 2), (2, 3)])
    graph, finals = catalog_run._graph([split], "/out", ScanOptions(), 0)
    (result,) = dask.local.get_sync(graph, finals)
    out, key, got_ref, got_detection, how, fields, sha, *ranges = result
    assert (out, key, got_ref, got_detection, how) == ("/out", ref.key, ref, split.detection, "magic")
    assert (fields, sha) == ({"format": "pak"}, "digest")
    assert ranges == [(f"{ref.key}-r0000", "digest"), (f"{ref.key}-r0001", "digest")]


def test_tasks_are_pickled_by_pickle_and_functions_made_at_run_time_by_cloudpickle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pickle

    import cloudpickle

    from gamepak.catalog.tasks import Args, FileList, call, run_batch

    used: list[Any] = []
    real = cloudpickle.dumps

    def recording(value: Any, *args: Any) -> bytes:
        used.append(value)
        return real(value, *args)

    monkeypatch.setattr(cloudpickle, "dumps", recording)
    refs = [FileRef("/c/a.pak", "a.pak", 10, 1)]
    task = (call, run_batch, Args("/out", "b1", FileList(refs), ScanOptions()))
    data = dispatch.dumps(task)
    assert used == []
    back = pickle.loads(data)
    assert back[2].values[:2] == ("/out", "b1") and back[2].values[2].refs == refs
    offset = 5
    made = pickle.loads(dispatch.dumps(lambda value: value + offset))
    assert made(1) == 6 and len(used) == 1


# -- the `processes` dispatch (no dask in the client) ---------------------------------------------
def _stub_tasks(monkeypatch: pytest.MonkeyPatch, ran: list[str]) -> None:
    """Task functions that log what they ran and return what a test can check."""

    def batch(out: str, part_id: str, files: Any, options: Any) -> dict[str, Any]:
        ran.append(part_id)
        return {"batch": part_id}

    def range_(out: str, part: str, ref: FileRef, options: Any, fmt: str, start: int, stop: int, sha: str) -> Any:
        ran.append(part)
        return (part, sha)

    def sha256(ref: FileRef) -> str:
        ran.append("sha " + ref.path)
        return "digest"

    def check(ref: FileRef, options: Any, fmt: str) -> dict[str, Any]:
        ran.append("check " + ref.path)
        return {}

    def finish(*args: Any) -> tuple[Any, ...]:
        ran.append("finish " + args[2].path)
        return args[5:]

    monkeypatch.setattr(catalog_run, "run_batch", batch)
    monkeypatch.setattr(catalog_run, "run_sha256", sha256)
    monkeypatch.setattr(catalog_run, "run_check", check)
    monkeypatch.setattr(catalog_run, "run_range", range_)
    monkeypatch.setattr(catalog_run, "run_finish", finish)


def _units(count: int, splits: set[int]) -> list[Any]:
    from gamepak.core.detection import Detection

    units: list[Any] = []
    for index in range(count):
        ref = FileRef(f"/c/a{index}.pak", f"a{index}.pak", 10, 1)
        if index in splits:
            units.append(catalog_run.Split(ref, Detection("pak", 1.0, True), "magic", [(0, 1), (1, 2)]))
        else:
            units.append(catalog_run.Batch(f"b{index}", [ref]))
    return units


def test_processes_dispatch_runs_the_plan_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """With one task in flight, tasks run in the order planned, a split archive's member ranges
    as soon as its sha256 is made and its last task as soon as its inputs are; each final task
    is reported once, with its result, and graphs are taken in only as they are needed."""
    from concurrent.futures import ThreadPoolExecutor

    ran: list[str] = []
    _stub_tasks(monkeypatch, ran)
    units = _units(3, {1})
    taken: list[int] = []
    reported: list[tuple[str, Any]] = []

    def graphs() -> Any:
        for index, unit in enumerate(units):
            taken.append(len(reported))
            yield catalog_run._graph([unit], "/out", ScanOptions(), index)

    with ThreadPoolExecutor(1) as pool:
        run_on_pool(pool, graphs(), 1, lambda key, result: reported.append((key, result)))
    key = units[1].ref.key
    assert ran == ["b0", "sha /c/a1.pak", f"{key}-r0000", f"{key}-r0001", "check /c/a1.pak", "finish /c/a1.pak", "b2"]
    assert reported == [
        (catalog_run._batch_key(0, "b0"), {"batch": "b0"}),
        (f"finish-{key}", ({}, "digest", (f"{key}-r0000", "digest"), (f"{key}-r0001", "digest"))),
        (catalog_run._batch_key(2, "b2"), {"batch": "b2"}),
    ]
    assert taken == [0, 1, 2]  # each graph taken once the one before it was done


@settings(max_examples=30, deadline=None)
@given(count=st.integers(0, 12), splits=st.sets(st.integers(0, 11)), in_flight=st.integers(1, 5))
def test_processes_dispatch_runs_every_task_once_within_its_limit(count: int, splits: set[int], in_flight: int) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with pytest.MonkeyPatch.context() as monkeypatch:
        ran: list[str] = []
        _stub_tasks(monkeypatch, ran)
        units = _units(count, splits)
        graphs = [catalog_run._graph([unit], "/out", ScanOptions(), index) for index, unit in enumerate(units)]
        futures: list[Any] = []
        most = [0]
        reported: list[str] = []

        class Counting(ThreadPoolExecutor):
            """Tasks that take a while, and the most of them sent and not done at once."""

            def submit(self, function: Any, /, *args: Any, **kwargs: Any) -> Any:
                def slow(*args: Any) -> Any:
                    time.sleep(0.002)
                    return function(*args)

                futures.append(super().submit(slow, *args))
                most[0] = max(most[0], sum(not future.done() for future in futures))
                return futures[-1]

        def done(key: str, result: Any) -> None:
            reported.append(key)

        with Counting(3) as pool:
            run_on_pool(pool, iter(graphs), in_flight, done)
    assert sorted(reported) == sorted(key for _, finals in graphs for key in finals)
    assert len(ran) == sum(len(graph) for graph, _ in graphs)
    assert most[0] <= in_flight


def test_processes_dispatch_ends_with_a_tasks_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from gamepak.errors import GamepakError

    def failing(out: str, part_id: str, *args: Any) -> Any:
        if part_id == "b1":
            raise GamepakError("a1.pak: offset 4: bad")
        return {}

    monkeypatch.setattr(catalog_run, "run_batch", failing)
    graphs = [catalog_run._graph([unit], "/out", ScanOptions(), index) for index, unit in enumerate(_units(3, set()))]
    with ThreadPoolExecutor(2) as pool, pytest.raises(GamepakError, match="offset 4"):
        run_on_pool(pool, iter(graphs), 2, lambda key, result: None)


def test_a_processes_run_imports_no_dask(packs: Path, reference: Path, tmp_path: Path) -> None:
    """The client of a `processes` run never imports dask (0.5 G instructions before its first
    unit, the workers idle), nor cloudpickle when every task pickles by reference."""
    import subprocess

    script = (
        "import sys\nfrom gamepak.catalog import build_catalog\n"
        "build_catalog([sys.argv[1]], sys.argv[2], scheduler='processes', workers=2)\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] in ('dask', 'cloudpickle', 'pyarrow')))"
    )
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-c", script, str(packs), str(out)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["[]"]
    assert snapshot(out) == snapshot(reference)
