"""Extraction of many small members (issue 48 item 2): small members that lie one after another
are read several at a time into one buffer (`ops.copier`), whatever their order, gaps, overlaps
or sizes; every file still gets exactly its member's bytes."""

from __future__ import annotations

import os
import random
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.ops import copier


def _pak(layout: list[tuple[int, int]], blob: bytes) -> bytes:
    """A PAK whose member N is `blob[offset:offset + size]` of layout[N], stored at offset + 12."""
    records = b"".join(
        f"d{index % 3}/m{index}".encode().ljust(56, b"\0") + struct.pack("<ii", 12 + offset, size)
        for index, (offset, size) in enumerate(layout)
    )
    return b"PACK" + struct.pack("<ii", 12 + len(blob), len(records)) + blob + records


def _extracted(tmp_path: Path, data: bytes, name: str) -> dict[str, bytes]:
    path = tmp_path / f"{name}.pak"
    path.write_bytes(data)
    out = tmp_path / name
    with gamepak.open(path) as archive:
        archive.extractall(out)
    return {str(file.relative_to(out)): file.read_bytes() for file in out.rglob("*") if file.is_file()}


def _expected(layout: list[tuple[int, int]], blob: bytes) -> dict[str, bytes]:
    return {f"d{index % 3}/m{index}": blob[offset : offset + size] for index, (offset, size) in enumerate(layout)}


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 40_000), st.integers(0, 9000)), min_size=2, max_size=40),
    st.integers(0, 3),
)
def test_every_file_gets_its_own_bytes(
    tmp_path_factory: pytest.TempPathFactory, layout: list[tuple[int, int]], seed: int
) -> None:
    blob = random.Random(seed).randbytes(50_000)
    tmp_path = tmp_path_factory.mktemp("spans")
    assert _extracted(tmp_path, _pak(layout, blob), "out") == _expected(layout, blob)


@pytest.mark.parametrize("sent", [True, False])
@pytest.mark.parametrize("workers", [1, 2])
def test_many_contiguous_members_with_padding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int, sent: bool
) -> None:
    rng = random.Random(5)
    layout = []
    position = 0
    for index in range(600):
        size = rng.randint(0, 20_000)
        layout.append((position, size))
        # Alignment gaps, and now and then one too wide to read over.
        position += size + (5000 if index % 100 == 99 else rng.choice([0, 0, 0, 3, 4096]))
    layout.append((0, 300_000))  # a member larger than a span's members, read on its own
    blob = rng.randbytes(position + 300_000)
    reads: list[int] = []
    real_preadv = os.preadv

    def counting_preadv(fd: int, buffers: list[memoryview], offset: int) -> int:
        reads.append(len(buffers[0]))
        return real_preadv(fd, buffers, offset)

    monkeypatch.setattr(os, "preadv", counting_preadv)
    monkeypatch.setattr(copier, "_worker_count", lambda: workers)
    if not sent:  # as where one file cannot be sent to another (not Linux)
        monkeypatch.delattr(os, "sendfile", raising=False)
    assert _extracted(tmp_path, _pak(layout, blob), "out") == _expected(layout, blob)
    if workers == 1 and not sent:  # a forked worker's reads are not counted here
        assert 0 < len(reads) < 30 and max(reads) <= copier._SPAN  # ~6 MiB in 1 MiB spans, 6 wide gaps
    elif sent:  # sent by the kernel: nothing read into a buffer
        assert reads == []


# -- the forked workers' batches: in order, shrinking toward the end ----------------------------
@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 1 << 22), min_size=2, max_size=3000), st.integers(2, 4))
def test_batches_hold_every_job_in_order_and_shrink(sizes: list[int], workers: int) -> None:
    from gamepak.ops.copy_workers import _batches

    batches = _batches(sizes, workers)
    assert batches[0][0] == 0 and batches[-1][1] == len(sizes)
    assert all(start < stop for start, stop in batches)
    assert all(stop == following for (_, stop), (following, _) in zip(batches, batches[1:]))
    assert len(batches) <= 64  # the queue pipe holds them all
    loads = [sum(size + 4096 for size in sizes[start:stop]) for start, stop in batches]
    largest_job = max(size + 4096 for size in sizes)
    total = sum(loads)
    # Each batch about 1/(4 x workers) of what was left, the last ones about 1/256 of the whole:
    # one job more at most, as a cut falls after the job that passes the mark.
    left = total
    for load in loads:
        assert load <= max(left / (4 * workers), total / 256) + largest_job
        left -= load


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 1 << 22), min_size=1, max_size=500), st.integers(2, 4))
def test_batches_are_cut_where_the_running_load_passes_each_mark(sizes: list[int], workers: int) -> None:
    """The cuts of a step per job (each job's load summed in turn, files included), made without one."""
    from bisect import bisect_left
    from itertools import accumulate

    from gamepak.ops.copy_workers import _batches

    loads = list(accumulate(size + 4096 for size in sizes))
    total, marks, done = loads[-1], [], 0.0
    while (done := done + max((total - done) / (4 * workers), total / 256)) < total:
        marks.append(done)
    cuts = sorted({min(len(sizes), bisect_left(loads, mark) + 1) for mark in marks} - {len(sizes)})
    assert _batches(sizes, workers) == list(zip([0, *cuts], [*cuts, len(sizes)], strict=True))


def test_many_equal_jobs_end_in_small_batches() -> None:
    from gamepak.ops.copy_workers import _batches

    sizes = [stop - start for start, stop in _batches([8192] * 20_000, 2)]
    assert sizes[0] == 2500 and all(later <= earlier + 1 for earlier, later in zip(sizes, sizes[1:]))
    assert max(sizes[-5:]) <= 20_000 // 256 + 1  # the last worker waits for at most ~80 files


def test_planned_jobs_are_made_a_slice_at_a_time() -> None:
    from gamepak.core.archive import Entry
    from gamepak.ops.copy_jobs import PlannedJobs, job_sizes

    entries = [Entry(f"n{index}", index * 3, index * 100, None, index) for index in range(10)]
    keys = ["top.bin", "a/x", "a/b/y", "a/b/z", "c/w", "v", "a/u", "a/b/t", "s", "c/r"]
    jobs = PlannedJobs([e.offset for e in entries], [e.size for e in entries], keys, {"": 3, "a": 4, "a/b": 5, "c": 6})
    made = jobs[0:10]
    assert made == [
        (3, "top.bin", 0, 0, 0),
        (4, "x", 100, 3, 1),
        (5, "y", 200, 6, 2),
        (5, "z", 300, 9, 3),
        (6, "w", 400, 12, 4),
        (3, "v", 500, 15, 5),
        (4, "u", 600, 18, 6),
        (5, "t", 700, 21, 7),
        (3, "s", 800, 24, 8),
        (6, "r", 900, 27, 9),
    ]
    assert jobs[3:7] == made[3:7] and jobs[9:10] == made[9:] and len(jobs) == 10
    assert job_sizes(jobs) == job_sizes(made) == [index * 3 for index in range(10)]


# -- the CLI's progress bar: nothing of it in a quick run ----------------------------------------
class _Terminal:
    """stderr as a terminal that keeps what is written."""

    def __init__(self) -> None:
        self.written: list[str] = []

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.written.append(text)
        return len(text)

    def flush(self) -> None:
        pass


def test_a_quick_run_draws_no_progress_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    """Items only count until the delay has passed: no rich bar is made, however many items."""
    import sys

    from gamepak.cli import common

    monkeypatch.setattr(common, "QUIET", False)
    monkeypatch.setattr(sys, "stderr", _Terminal())
    bar = common.progress_bar(20_000, 0, "extracting", delay=60)
    with bar as advance:
        assert advance is not None
        for item in range(20_000):
            advance(item)
    assert bar._bar is None and bar.done == 20_000


def test_a_long_run_draws_the_count_so_far(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from gamepak.cli import common

    pytest.importorskip("rich")
    monkeypatch.setattr(common, "QUIET", False)
    monkeypatch.setattr(sys, "stderr", _Terminal())
    bar = common.progress_bar(1000, 0, "extracting", delay=0)
    with bar as advance:
        for item in range(700):
            advance(item)
        assert bar._bar is not None
        assert bar._bar.tasks[0].completed >= 1  # drawn at the first item, then at most 10 times a second
    assert bar.done == 700
    assert common.progress_bar(10, 0, "extracting").__enter__() is None  # small work: no bar at all


# -- no collection walks the entries and jobs while an extraction makes them --------------------
def _collections_during(work: object) -> list[int]:
    """The generations the cyclic collector walked while `work()` ran (the threshold set low,
    so any stretch of allocations would set one off)."""
    import gc

    walked: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            walked.append(info["generation"])

    threshold = gc.get_threshold()
    gc.set_threshold(100, 10, 10)
    gc.collect()  # the count starts from nothing: the few allocations before a pause set off none
    gc.callbacks.append(record)
    try:
        work()  # type: ignore[operator]
    finally:
        gc.callbacks.remove(record)
        gc.set_threshold(*threshold)
    return walked


def test_extraction_makes_its_entries_and_jobs_without_a_collection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    layout = [(index * 10, 10) for index in range(3000)]
    path = tmp_path / "many.pak"
    path.write_bytes(_pak(layout, bytes(30_000)))

    from gamepak.cli import main

    assert main(["extract", "-q", str(path), "-o", str(tmp_path / "first")]) == 0  # every module imported
    out = str(tmp_path / "out")
    with gamepak.open(path) as archive:
        assert _collections_during(lambda: archive.extractall(out)) == [] and gc.isenabled()
    assert len(list((tmp_path / "out").rglob("m*"))) == 3000

    # The command makes the entries before the library's extractall is called: its whole work
    # (cli.packing._extract) runs paused.
    from gamepak.cli import packing

    walked: list[int] = []
    work = packing._extract
    monkeypatch.setattr(packing, "_extract", lambda args: walked.extend(_collections_during(lambda: work(args))))
    assert main(["extract", "-q", str(path), "-o", str(tmp_path / "cli")]) == 0
    assert walked == [] and gc.isenabled() and len(list((tmp_path / "cli").rglob("m*"))) == 3000


def test_a_pause_inside_a_pause_changes_nothing() -> None:
    import gc

    from gamepak.core.collector import collector_paused

    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # left as it was found
    finally:
        gc.enable()


def test_each_thread_keeps_one_span_buffer_from_batch_to_batch(tmp_path: Path) -> None:
    """A worker runs many batches: one span buffer per thread, made once (a fresh megabyte per
    batch was zeroed and faulted in again), never shared by two threads at once."""
    import threading

    from gamepak.ops.copy_jobs import PlannedJobs

    layout = [(index * 1000, 1000) for index in range(400)]
    blob = random.Random(9).randbytes(400_000)
    path = tmp_path / "many.pak"
    path.write_bytes(_pak(layout, blob))
    out = tmp_path / "out"
    folders = {}
    out.mkdir()
    for folder in ("d0", "d1", "d2"):
        (out / folder).mkdir()
        folders[folder] = os.open(out / folder, os.O_RDONLY)
    try:
        with gamepak.open(path) as archive:
            entries = archive.infolist()
            jobs = PlannedJobs(
                [e.offset for e in entries], [e.size for e in entries], [entry.name for entry in entries], folders
            )
            worker = copier.Copier(archive, entries, None)
            for start in range(0, 200, 50):  # four batches on this thread
                worker.run(jobs[start : start + 50])
            assert len(worker._buffers) == 1
            first = next(iter(worker._buffers.values()))
            threads = [threading.Thread(target=worker.run, args=(jobs[start : start + 100],)) for start in (200, 300)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            # Other threads (the main one still running) never took this one's buffer.
            assert len(worker._buffers) >= 2 and first in worker._buffers.values()
    finally:
        for fd in folders.values():
            os.close(fd)
    assert {f"d{index % 3}/m{index}": (out / f"d{index % 3}" / f"m{index}").read_bytes() for index in range(400)} == (
        _expected(layout, blob)
    )


def test_the_span_buffer_grows_only_as_far_as_the_spans_need(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A tiny extraction zeroes a few kilobytes, not the megabyte; spans past it still come whole.
    sizes: list[int] = []
    made = copier.Copier._span_buffer

    def recording(self: copier.Copier, length: int) -> memoryview:
        view = made(self, length)
        sizes.append(len(view))
        return view

    monkeypatch.setattr(copier.Copier, "_span_buffer", recording)
    blob = random.Random(7).randbytes(20 * 100)
    assert _extracted(tmp_path, _pak([(index * 100, 100) for index in range(20)], blob), "tiny") == {
        f"d{index % 3}/m{index}": blob[index * 100 : index * 100 + 100] for index in range(20)
    }
    assert 0 < max(sizes) <= 2000
    sizes.clear()
    big = random.Random(8).randbytes(200 * 8000)
    layout = [(index * 8000, 8000) for index in range(200)]  # spans of up to a megabyte
    assert _extracted(tmp_path, _pak(layout, big), "big") == _expected(layout, big)
    assert 1 << 19 < max(sizes) <= copier._SPAN
