"""Planning a catalog run and running it on Dask (the client's side of a run).

The client only walks the folders (names, sizes, modification times) and plans units of work:
- a *batch*: a few small files, cataloged one after another by one worker;
- a *split* archive (larger than `split_bytes`): one task hashes the file, one checks it, and
  its members are cataloged in ranges by several tasks at once; a last task commits it.
Every task (tasks.py) writes its rows straight into part files of OUT (see schema.py) and
returns only a few counts, so no rows ever travel back to the client. Preparing OUT and resuming
in it is output.py's.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from ..core.opening import Detection
from ..core.registry import get_format
from ..errors import GamepakError, MissingDependencyError
from .detect import choose
from .discovery import FileRef, iter_files, open_file
from .output import drop_files, fill_empty_tables, prepare_output, resume_state, write_walk_errors
from .rows import ScanOptions
from .tasks import FileList, run_batch, run_check, run_finish, run_range, run_sha256

# Archives larger than this are split into member ranges of at most half of it (128 MiB at the
# default) or RANGE_MEMBERS members, whichever comes first.
SPLIT_BYTES = 256 << 20
RANGE_MEMBERS = 50_000
# Small files are grouped into batches of at most this many bytes and files.
BATCH_BYTES = 32 << 20
BATCH_FILES = 64
SCHEDULERS = ("processes", "threads", "synchronous")


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
    digest = hashlib.sha1("\n".join(ref.key for ref in refs).encode()).hexdigest()[:16]
    return f"b{digest}"


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
    total = sum(ref.size for ref in small)
    batch_bytes = max(1 << 20, min(BATCH_BYTES, total // max(1, workers * 8)))
    batch: list[FileRef] = []
    size = 0
    for ref in small:
        if batch and (size + ref.size > batch_bytes or len(batch) >= BATCH_FILES):
            units.append(Batch(_batch_id(batch), batch))
            batch, size = [], 0
        batch.append(ref)
        size += ref.size
    if batch:
        units.append(Batch(_batch_id(batch), batch))
    return units


def _graph(units: list[Batch | Split], out: str, options: ScanOptions) -> list[Any]:
    import dask

    finals = []
    for unit in units:
        if isinstance(unit, Batch):
            finals.append(
                dask.delayed(run_batch, pure=False)(
                    out, unit.part_id, FileList(unit.refs), options, dask_key_name=f"batch-{unit.part_id}"
                )
            )
            continue
        key = unit.ref.key
        sha = dask.delayed(run_sha256, pure=False)(unit.ref, dask_key_name=f"sha256-{key}")
        fields = dask.delayed(run_check, pure=False)(
            unit.ref, options, unit.detection.format, dask_key_name=f"check-{key}"
        )
        ranges = [
            dask.delayed(run_range, pure=False)(
                out,
                f"{key}-r{index:04d}",
                unit.ref,
                options,
                unit.detection.format,
                start,
                stop,
                sha,
                dask_key_name=f"range-{key}-{index}",
            )
            for index, (start, stop) in enumerate(unit.ranges)
        ]
        finals.append(
            dask.delayed(run_finish, pure=False)(
                out, key, unit.ref, unit.detection, unit.how, fields, sha, *ranges, dask_key_name=f"finish-{key}"
            )
        )
    return finals


def _compute(
    finals: list[Any], scheduler: str, workers: int, progress: Callable[[int, int], None] | None
) -> list[dict[str, int]]:
    if not finals:
        return []
    if "://" in scheduler:
        return _compute_distributed(finals, scheduler, progress)
    import dask
    from dask.callbacks import Callback

    final_keys = {item.key for item in finals}
    done = [0]

    class Progress(Callback):  # type: ignore[misc]
        def _posttask(self, key: Any, result: Any, dsk: Any, state: Any, worker_id: Any) -> None:
            if key in final_keys and progress is not None:
                done[0] += 1
                progress(done[0], len(finals))

    # The scheduler functions themselves: naming them by string makes dask import distributed
    # (about a second) to look for a default client.
    pool = None
    if scheduler == "processes":
        import dask.multiprocessing

        # One task per dispatch: units are coarse, and dask's default batches of 6 leave one
        # worker idle while the other finishes a batch.
        kwargs: dict[str, Any] = {"scheduler": dask.multiprocessing.get, "num_workers": workers, "chunksize": 1}
        pool = _fork_pool(workers)
        if pool is not None:
            kwargs["pool"] = pool
    elif scheduler == "threads":
        import dask.threaded

        kwargs = {"scheduler": dask.threaded.get, "num_workers": workers}
    else:
        import dask.local

        kwargs = {"scheduler": dask.local.get_sync}
    try:
        with Progress():
            results = dask.compute(*finals, **kwargs)
    finally:
        if pool is not None:
            pool.shutdown()
    return list(results)


def _fork_pool(workers: int) -> Any:
    """Worker processes forked from this one, which has already imported what they need (a
    spawned worker imports it again: about a second on the critical path); None (dask's
    spawned workers) where forking is not safe: off Linux, or once this process runs other
    threads (a progress bar; pyarrow's pools after a --resume read), which a fork would copy
    mid-flight."""
    import sys
    import threading

    # pyarrow already loaded means it has read or written here (--resume): its native thread
    # pools are invisible to `threading`, so do not fork then.
    from ..core.portable import can_fork

    if not can_fork() or threading.active_count() > 1 or "pyarrow" in sys.modules:
        return None
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from . import schema  # noqa: F401 - imported once here rather than in every worker

    if threading.active_count() > 1:
        return None
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))


def _compute_distributed(
    finals: list[Any], address: str, progress: Callable[[int, int], None] | None
) -> list[dict[str, int]]:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise MissingDependencyError("a dask.distributed scheduler needs: pip install 'gamepak[catalog]'") from None
    try:
        client = Client(address, timeout="20s")
    except OSError as exc:
        raise GamepakError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    with client:
        futures = client.compute(finals)
        results = []
        for done, future in enumerate(as_completed(futures), 1):
            results.append(future.result())
            if progress is not None:
                progress(done, len(finals))
        return results


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
    """Catalog every archive under `paths` into the Parquet dataset folder `out`."""
    options = options or ScanOptions()
    if scheduler not in SCHEDULERS and "://" not in scheduler:
        raise GamepakError(f"unknown scheduler {scheduler!r}: use {', '.join(SCHEDULERS)} or tcp://HOST:PORT")
    from .hashing import hasher_factory

    hasher_factory(options.hash_algorithm)  # an unknown or unavailable hash fails before any work
    workers = workers or os.cpu_count() or 1
    prepare_output(out, options, resume, overwrite)
    summary = Summary()
    done = resume_state(out) if resume else {}
    refs: list[FileRef] = []
    problems: list[tuple[str, str]] = []
    stale: dict[str, set[str]] = {}
    for found in iter_files(paths, exclude=out):
        if isinstance(found, tuple):
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
        refs.append(found)
    if stale:
        drop_files(out, stale)
    units = plan(refs, options, workers, split_bytes)
    summary.units = len(units)
    for result in _compute(_graph(units, out, options), scheduler, workers, progress):
        summary.add(result)
    write_walk_errors(out, problems)
    summary.walk_errors = len(problems)
    summary.errors += len(problems)
    fill_empty_tables(out)
    summary.extra = {"options": asdict(options), "scheduler": scheduler, "workers": workers}
    return summary
