"""Planning a catalog run and running it (the client's side of a run): on the catalog's own
process pool for `processes` (dispatch.py), on Dask for the other schedulers.

The client only walks the folders (names, sizes, modification times) and plans units of work:
- a *batch*: a few small files, cataloged one after another by one worker;
- a *split* archive (larger than `split_bytes`): one task hashes the file, one checks it, and
  its members are cataloged in ranges by several tasks at once; a last task commits it.
Every task (tasks.py) writes its rows straight into part files of OUT (see schema.py) and
returns only a few counts, so no rows ever travel back to the client. Preparing OUT and resuming
in it is output.py's.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from ..core.opening import Detection
from ..core.registry import get_format
from ..errors import GamepakError, MissingDependencyError
from .detect import choose
from .discovery import FileRef, FileSpool, iter_files, open_file
from .output import drop_files, fill_empty_tables, prepare_output, resume_state, write_walk_errors
from .rows import ScanOptions
from .tasks import Args, FileList, call, run_batch, run_check, run_finish, run_range, run_sha256, warm_up

# Archives larger than this are split into member ranges of at most half of it (128 MiB at the
# default) or RANGE_MEMBERS members, whichever comes first.
SPLIT_BYTES = 256 << 20
RANGE_MEMBERS = 50_000
# Small files are grouped into batches of at most this many bytes and files, each also at most
# 1/(workers * GUIDE) of the work still to plan: the last batches get smaller (down to 1 MiB or
# BATCH_FILES_MIN files) so that the workers finish together.
BATCH_BYTES = 32 << 20
BATCH_FILES = 64
BATCH_FILES_MIN = 16
GUIDE = 8
# On a dask.distributed cluster a task costs more (a round trip through the scheduler, a worker
# thread's hand-off): tiny archives go in batches of up to this many files there. The local
# schedulers keep BATCH_FILES: a window ends when its last unit does, and larger units there
# made one worker wait longer than they saved.
CLUSTER_BATCH_FILES = 256
SCHEDULERS = ("processes", "threads", "synchronous", "local")
# The dask.distributed settings of the cluster the catalog starts (`local`, and the benchmark's):
# a busy worker's statistical profiler (sampling every thread's stack every 10 ms) and its
# monitors (event-loop ticks every 20 ms, memory every 100 ms, the system every 500 ms) cost
# 15-17% over its tasks' own CPU here, 3-4% with these. A cluster of the user's is left as it is.
CLUSTER_CONFIG: dict[str, Any] = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "500ms",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.admin.system-monitor.disk": False,
}
# Units planned and sent at once, per worker (see _execute). Between two windows of `threads`
# and `synchronous` one worker waits for the other's last unit and then both for the next window's
# planning (0.1-0.3 s a boundary with the machine busy): 256 units of 64 tiny archives, 16k
# archives a worker, make that a fraction of a percent, and the window held in memory stays a
# few MB. On a dask.distributed cluster, CLUSTER_WINDOW_UNITS per worker thread are in flight,
# topped up in groups of SUBMIT_GROUP (units there do not wait for each other).
WINDOW_UNITS = 256
CLUSTER_WINDOW_UNITS = 64
SUBMIT_GROUP = 16
# Units in flight per worker of the `processes` scheduler: with one, a worker that finished a
# unit sat idle until the client had heard of it and sent the next (a round trip through the
# client's threads: 8 ms a unit, about 5% of a worker's time, with the machine busy); the
# second waits in the pool's queue, taken by whichever worker is free first.
QUEUED_UNITS = 2


@dataclass
class Summary:
    """What a run did (counts only)."""

    archives: int = 0
    members: int = 0
    errors: int = 0
    member_bytes: int = 0
    textures: int = 0
    strings: int = 0
    models: int = 0
    zone_objects: int = 0
    skipped: int = 0
    resumed: int = 0
    files: int = 0
    units: int = 0
    walk_errors: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def add(self, stats: dict[str, int]) -> None:
        for key, value in stats.items():
            setattr(self, key, getattr(self, key) + value)


# -- planning (on the client) ----------------------------------------------------------------
@dataclass
class Batch:
    part_id: str
    refs: list[FileRef]


@dataclass
class Split:
    ref: FileRef
    detection: Detection
    how: str
    ranges: list[tuple[int, int]]


def _batch_id(refs: list[FileRef]) -> str:
    """A batch's part id: a digest of what names its files' states (path, size, mtime), one
    hash per batch (a FileRef.key per file, hashed again, was a tenth of the client's work)."""
    text = "\n".join([f"{ref.path}\0{ref.size}\0{ref.mtime_ns}" for ref in refs])
    return f"b{hashlib.sha1(text.encode('utf-8', 'surrogateescape')).hexdigest()[:16]}"


def _plan_split(ref: FileRef, options: ScanOptions, range_bytes: int) -> Split | None:
    """Member ranges of a large archive, or None to catalog it as one unit (not an archive,
    unreadable, or few members)."""
    try:
        with open_file(ref) as handle:
            chosen = choose(handle, ref.path, options.guess)
            if chosen is None or get_format(chosen[0].format).kind != "archive":
                return None
            archive = get_format(chosen[0].format).reader_class()(handle, name=ref.path)
            with archive:
                entries = archive.infolist()
    except Exception:
        return None  # the worker that catalogs it as a whole reports the problem
    ranges: list[tuple[int, int]] = []
    start, running = 0, 0
    for index, entry in enumerate(entries):
        running += entry.stored_size if entry.stored_size is not None else entry.size
        if running >= range_bytes or index + 1 - start >= RANGE_MEMBERS:
            ranges.append((start, index + 1))
            start, running = index + 1, 0
    if start < len(entries):
        ranges.append((start, len(entries)))
    if len(ranges) < 2:
        return None
    return Split(ref, chosen[0], chosen[1], ranges)


def plan(
    refs: list[FileRef], options: ScanOptions, workers: int, split_bytes: int = SPLIT_BYTES
) -> list[Batch | Split]:
    """Units of work: large archives split into member ranges, small files in batches sized so
    that every worker gets several (load balance) but each stays small (memory, retries)."""
    units: list[Batch | Split] = []
    small: list[FileRef] = []
    for ref in refs:
        split = _plan_split(ref, options, max(1, split_bytes // 2)) if ref.size > split_bytes else None
        if split is not None:
            units.append(split)
        else:
            small.append(ref)
    units.extend(batches(small, sum(ref.size for ref in small), workers, len(small)))
    return units


def batches(
    small: Iterable[FileRef], total: int, workers: int, count: int | None = None, most_files: int | None = None
) -> Iterator[Batch]:
    """`small` (`count` files of `total` bytes in all) in batches, made as they are read: at most
    `most_files` (BATCH_FILES) files and BATCH_BYTES each, and at most 1/(workers * GUIDE) of
    what is left to batch (so every worker gets several, and the last ones are small)."""
    most_files = most_files or BATCH_FILES
    fewest_files = min(BATCH_FILES_MIN, most_files)
    share = max(1, workers * GUIDE)
    left_bytes, left_files = total, count
    batch: list[FileRef] = []
    size = 0
    batch_bytes = batch_files = 0

    def limits() -> tuple[int, int]:
        files = most_files if left_files is None else max(fewest_files, min(most_files, left_files // share))
        return max(1 << 20, min(BATCH_BYTES, left_bytes // share)), files

    batch_bytes, batch_files = limits()
    for ref in small:
        if batch and (size + ref.size > batch_bytes or len(batch) >= batch_files):
            yield Batch(_batch_id(batch), batch)
            left_bytes -= size
            if left_files is not None:
                left_files -= len(batch)
            batch, size = [], 0
            batch_bytes, batch_files = limits()
        batch.append(ref)
        size += ref.size
    if batch:
        yield Batch(_batch_id(batch), batch)


# Batch keys count down from here (see _batch_key).
KEY_RANKS = 10**12


def _batch_key(index: int, part_id: str) -> str:
    """The dask key of the run's `index`th batch. Dask runs tasks that are ready together in an
    order of its own, and among independent tasks of equal standing that is the reverse of their
    keys' order (dask.order breaks ties by the key's text): keys named by the part id alone (a
    digest) ran a window's batches in a random order, so the small batches planned for the end
    ran anywhere in the last window and a large one often ran last, one worker waiting for it.
    Counting down keeps the plan's order (tests/test_catalog_scale.py checks it)."""
    return f"batch-{KEY_RANKS - index:013d}-{part_id}"


def _graph(
    units: list[Batch | Split], out: str, options: ScanOptions, first: int = 0
) -> tuple[dict[str, tuple[Any, ...]], list[str]]:
    """The window `units`, the run's `first`th unit onwards, as a plain dask graph (a dict of
    tasks) and the key of each unit's final task. Not dask.delayed: a delayed call, its
    collection merged, optimized and turned back into tasks by `dask.compute` cost the client
    ~1.3 M instructions a unit, a dict given to the scheduler's `get` a fraction of that. Each
    task is `(call, function, Args(...), *keys)`, its own arguments out of dask's sight
    (tasks.Args says why)."""
    graph: dict[str, tuple[Any, ...]] = {}
    finals: list[str] = []
    for index, unit in enumerate(units, first):
        if isinstance(unit, Batch):
            key = _batch_key(index, unit.part_id)
            graph[key] = (call, run_batch, Args(out, unit.part_id, FileList(unit.refs), options))
            finals.append(key)
            continue
        key = unit.ref.key
        sha, check = f"sha256-{key}", f"check-{key}"
        graph[sha] = (call, run_sha256, Args(unit.ref))
        graph[check] = (call, run_check, Args(unit.ref, options, unit.detection.format))
        ranges = []
        for number, (start, stop) in enumerate(unit.ranges):
            ranges.append(f"range-{key}-{number}")
            graph[ranges[-1]] = (
                call,
                run_range,
                Args(out, f"{key}-r{number:04d}", unit.ref, options, unit.detection.format, start, stop),
                sha,
            )
        graph[f"finish-{key}"] = (
            call,
            run_finish,
            Args(out, key, unit.ref, unit.detection, unit.how),
            check,
            sha,
            *ranges,
        )
        finals.append(f"finish-{key}")
    return graph, finals


def _files(unit: Batch | Split) -> int:
    return len(unit.refs) if isinstance(unit, Batch) else 1


def _windows(units: Iterable[Batch | Split], size: int) -> Iterator[list[Batch | Split]]:
    iterator = iter(units)
    while window := list(itertools.islice(iterator, size)):
        yield window


Done = Callable[[Batch | Split, dict[str, int]], None]


def _execute(
    units: Iterable[Batch | Split],
    out: str,
    options: ScanOptions,
    scheduler: str,
    workers: int,
    done: Done,
    finish: Callable[[str], None] = fill_empty_tables,
    pool: Any = None,
) -> None:
    """Run every unit, calling `done(unit, counts)` as each finishes, then `finish(out)`. Units
    are planned, sent and forgotten a window at a time (`WINDOW_UNITS` per worker), so neither
    this process nor the scheduler ever holds the graph of the whole run: a million archives'
    graph was most of what the client grew by. `processes` runs on `pool` (`started_pool`)."""
    if "://" in scheduler:
        _execute_distributed(units, out, options, scheduler, done, finish)
        return
    if scheduler == "local":
        with local_cluster(workers) as cluster:
            _execute_distributed(units, out, options, cluster.scheduler_address, done, finish)
        return
    if scheduler == "processes":
        # No dask in this process (dispatch.py says why): the units go to the pool in the
        # order planned, QUEUED_UNITS per worker in flight, a graph of one unit at a time (so
        # no window ends with one worker waiting for the other's last unit).
        from .dispatch import PickledPool, run_on_pool

        unit_of: dict[str, Batch | Split] = {}

        def graphs() -> Iterator[tuple[dict[str, tuple[Any, ...]], list[str]]]:
            for index, unit in enumerate(units):
                graph, finals = _graph([unit], out, options, index)
                unit_of[finals[0]] = unit
                yield graph, finals

        run_on_pool(
            PickledPool(pool), graphs(), QUEUED_UNITS * workers, lambda key, counts: done(unit_of.pop(key), counts)
        )
        # On a worker, which has pyarrow loaded: this process never imports it (see started_pool).
        pool.submit(finish, out).result()
        return
    from dask.callbacks import Callback

    finished: dict[Any, Batch | Split] = {}

    class Progress(Callback):  # type: ignore[misc]
        def _posttask(self, key: Any, result: Any, dsk: Any, state: Any, worker_id: Any) -> None:
            unit = finished.pop(key, None)
            if unit is not None:
                done(unit, result)

    # The scheduler functions themselves: naming them by string makes dask import distributed
    # (about a second) to look for a default client.
    if scheduler == "threads":
        import dask.threaded

        get: Callable[..., Any] = functools.partial(dask.threaded.get, num_workers=workers)
    else:
        import dask.local

        get = dask.local.get_sync
    # Each window ends when its last unit does (one worker may wait for the other's last
    # unit): windows of many units per worker keep that wait a fraction of a percent.
    planned = 0
    for window in _windows(units, WINDOW_UNITS * workers):
        graph, finals = _graph(window, out, options, planned)
        planned += len(window)
        finished.update(zip(finals, window))
        with Progress():
            get(graph, finals)
    finish(out)


@contextlib.contextmanager
def started_pool(scheduler: str, workers: int) -> Iterator[Any]:
    """The worker processes of a `processes` run (None for the other schedulers), started now,
    before the walk: each imports what cataloging needs (`tasks.warm_up`: pyarrow) while this
    process walks the folders, rather than this process importing it before
    forking them (on the run's critical path, beside two idle workers), or each worker in its
    first unit. So the client of a `processes` run never imports pyarrow, and a run that
    resumes (which reads the old catalog with pyarrow) still forks its workers."""
    if scheduler != "processes":
        yield None
        return
    pool = _fork_pool(workers) or _spawn_pool(workers)
    try:
        # The first call forks every worker; spawned ones start one a call, while none is idle.
        for _ in range(workers):
            pool.submit(int)
        yield pool
    finally:
        pool.shutdown()


def _fork_pool(workers: int) -> Any:
    """Worker processes forked from this one, which has already imported the catalog's own
    modules (a spawned worker imports them again, and Python: about a second), each importing
    the rest as it starts (`warm_up`); None (dask's spawned workers) where forking is not safe:
    off Linux, or once this process runs other threads (a progress bar; pyarrow's pools once
    it has read a catalog), which a fork would copy mid-flight. They are forked when the pool
    is first given work (started_pool does so at once)."""
    import sys
    import threading

    # pyarrow already loaded means it has read or written here: its native thread pools are
    # invisible to `threading`, so do not fork then.
    from ..core.portable import can_fork

    if not can_fork() or threading.active_count() > 1 or "pyarrow" in sys.modules:
        return None
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"), initializer=warm_up)


def _spawn_pool(workers: int) -> Any:
    """Spawned worker processes, made as dask's processes scheduler makes its own."""
    import functools
    from concurrent.futures import ProcessPoolExecutor

    import dask.multiprocessing

    # dask's reason: the same string hashes in every worker.
    if os.environ.get("PYTHONHASHSEED") in (None, "0"):
        os.environ["PYTHONHASHSEED"] = "6640"
    initializer = functools.partial(dask.multiprocessing.initialize_worker_process, user_initializer=warm_up)
    return ProcessPoolExecutor(workers, mp_context=dask.multiprocessing.get_context(), initializer=initializer)


def _execute_distributed(
    units: Iterable[Batch | Split],
    out: str,
    options: ScanOptions,
    address: str,
    done: Done,
    finish: Callable[[str], None],
) -> None:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise MissingDependencyError("a dask.distributed scheduler needs: pip install 'gamepak[catalog]'") from None
    try:
        client = Client(address, timeout="20s")
    except OSError as exc:
        raise GamepakError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    with client:
        # Enough units in flight to keep every worker thread busy (the scheduler hands them
        # out), few enough that the scheduler's task table stays small.
        threads = max(1, sum(client.nthreads().values()))
        # (Counted in units of BATCH_FILES files: as many files in flight whatever the batch size.)
        in_flight_limit = max(threads, CLUSTER_WINDOW_UNITS * threads * BATCH_FILES // CLUSTER_BATCH_FILES)
        pending = iter(units)
        running: dict[str, Batch | Split] = {}
        completed = as_completed()

        planned = [0]

        def submit(count: int) -> None:
            window = list(itertools.islice(pending, count))
            if not window:
                return
            graph, finals = _graph(window, out, options, planned[0])
            planned[0] += len(window)
            for future, unit in zip(client.get(graph, finals, sync=False), window):
                running[future.key] = unit
                completed.add(future)

        submit(in_flight_limit)
        for future in completed:
            unit = running.pop(future.key)
            done(unit, future.result())
            future.release()
            # Top up in groups: one client.get call per group, not per unit.
            if len(running) <= in_flight_limit - SUBMIT_GROUP:
                submit(SUBMIT_GROUP)
        # On a worker, which has pyarrow loaded: this client never imports it (0.17 s of its
        # CPU, on the run's critical path, just to write the empty parts).
        client.submit(finish, out, pure=False).result()


def local_cluster(workers: int) -> Any:
    """A dask.distributed LocalCluster of `workers` single-threaded worker processes (no
    dashboard) with CLUSTER_CONFIG: the cluster `scheduler="local"` starts for one run, and the
    one a benchmark keeps warm. Close it when done (it is a context manager)."""
    try:
        import dask
        from distributed import LocalCluster
    except ImportError:
        raise MissingDependencyError(
            "the local scheduler needs dask.distributed: pip install 'gamepak[catalog]'"
        ) from None
    # The nannies hand the configuration they were made under to their worker processes.
    with dask.config.set(CLUSTER_CONFIG):
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)


def finish_output(out: str, problems: list[tuple[str, str]]) -> None:
    """The parts a run writes once its units are done: the walk's errors, then an empty part
    in each table that has none."""
    write_walk_errors(out, problems)
    fill_empty_tables(out)


# -- the whole run ----------------------------------------------------------------------------------
def build_catalog(
    paths: list[str],
    out: str,
    *,
    options: ScanOptions | None = None,
    scheduler: str = "processes",
    workers: int | None = None,
    resume: bool = False,
    overwrite: bool = False,
    split_bytes: int = SPLIT_BYTES,
    progress: Callable[[int, int], None] | None = None,
) -> Summary:
    """Catalog every archive under `paths` into the Parquet dataset folder `out`. `progress`,
    when given, is called as each unit of work finishes with the files done so far and the
    files found to catalog (the files already cataloged that `resume` skips not counted)."""
    options = options or ScanOptions()
    if scheduler not in SCHEDULERS and "://" not in scheduler:
        raise GamepakError(f"unknown scheduler {scheduler!r}: use {', '.join(SCHEDULERS)} or tcp://HOST:PORT")
    from .hashing import hasher_factory

    hasher_factory(options.hash_algorithm)  # an unknown or unavailable hash fails before any work
    workers = workers or os.cpu_count() or 1
    prepare_output(out, options, resume, overwrite)
    summary = Summary()
    problems: list[tuple[str, str]] = []
    with started_pool(scheduler, workers) as pool:
        _walk_and_run(paths, out, options, scheduler, workers, resume, split_bytes, progress, pool, summary, problems)
    summary.walk_errors = len(problems)
    summary.errors += len(problems)
    summary.extra = {"options": asdict(options), "scheduler": scheduler, "workers": workers}
    return summary


def _walk_and_run(
    paths: list[str],
    out: str,
    options: ScanOptions,
    scheduler: str,
    workers: int,
    resume: bool,
    split_bytes: int,
    progress: Callable[[int, int], None] | None,
    pool: Any,
    summary: Summary,
    problems: list[tuple[str, str]],
) -> None:
    """build_catalog's walk and run, once its workers are started: counts go to `summary`, the
    walk's problems to `problems`."""
    done = resume_state(out) if resume else {}
    stale: dict[str, set[str]] = {}
    splits: list[Split] = []
    # The files to catalog go to a spool, not a list: the walk's only lasting memory is the few
    # split archives (large files, each planned here in member ranges) and the walk's errors.
    with FileSpool(out) as small:
        for found in iter_files(paths, exclude=out):
            if not isinstance(found, FileRef):  # (path, problem)
                problems.append(found)
                continue
            summary.files += 1
            previous = done.get(found.path)
            if previous is not None:
                if previous[:2] == (found.size, found.mtime_ns):
                    summary.resumed += 1
                    continue
                # the commit record: a part id without a range suffix (resume_state keeps no other)
                stale.setdefault(previous[2], set()).add(found.path)
            split = _plan_split(found, options, max(1, split_bytes // 2)) if found.size > split_bytes else None
            if split is not None:
                splits.append(split)
            else:
                small.add(found)
        del done
        if stale:
            drop_files(out, stale)
        total = len(splits) + small.count
        finished = [0]

        def unit_done(unit: Batch | Split, counts: dict[str, int]) -> None:
            summary.add(counts)
            summary.units += 1
            finished[0] += _files(unit)
            if progress is not None:
                progress(finished[0], total)

        distributed = scheduler == "local" or "://" in scheduler
        most_files = CLUSTER_BATCH_FILES if distributed else BATCH_FILES
        units = itertools.chain[Batch | Split](splits, batches(small, small.bytes, workers, small.count, most_files))
        finish = functools.partial(finish_output, problems=problems)
        _execute(units, out, options, scheduler, workers, unit_done, finish, pool)
