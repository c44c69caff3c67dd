"""Planning a catalog run and running it on Dask.

The client only walks the folders (names, sizes, modification times) and plans units of work:
- a *batch*: a few small files, cataloged one after another by one worker;
- a *split* archive (larger than `split_bytes`): one task hashes the file, one checks it, and
  its members are cataloged in ranges by several tasks at once; a last task commits it.
Every task writes its rows straight into part files of OUT (see schema.py) and returns only a
few counts, so no rows ever travel back to the client.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.opening import Detection
from ..core.registry import get_format
from ..errors import GamepakError, MissingDependencyError, OutputExistsError
from .detect import choose
from .discovery import FileRef, iter_files, open_file, read_at
from .parts import TABLES, part_path
from .rows import RowSink, ScanOptions, Stats, archive_row, describe_error, error_row
from .scan import ArchiveScanner

if TYPE_CHECKING:
    from .schema import TableSink

# Archives larger than this are split into member ranges of about RANGE_BYTES / RANGE_MEMBERS.
SPLIT_BYTES = 256 << 20
RANGE_BYTES = 128 << 20
RANGE_MEMBERS = 50_000
# Small files are grouped into batches of at most this many bytes and files.
BATCH_BYTES = 32 << 20
BATCH_FILES = 64
MARKER = "_gamepak_catalog.json"
_RANGE_SUFFIX = re.compile(r"-(r\d+|f)$")
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
    skipped: int = 0
    resumed: int = 0
    files: int = 0
    units: int = 0
    walk_errors: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def add(self, stats: dict[str, int]) -> None:
        for key, value in stats.items():
            setattr(self, key, getattr(self, key) + value)


# -- units of work (run on the workers) -------------------------------------------------------
def _sinks(out: str, part_id: str) -> dict[str, TableSink]:
    from .schema import TableSink

    return {table: TableSink(out, table, part_id) for table in TABLES}


def _commit(sinks: dict[str, TableSink], record: bool = True) -> None:
    """Publish a unit's parts; with `record`, its archives part (the commit record) last and
    always, else (a member range: nested packs' rows only) like the others."""
    sinks["members"].commit()
    sinks["textures"].commit()
    sinks["strings"].commit()
    sinks["models"].commit()
    sinks["errors"].commit()
    sinks["archives"].commit(always=record)


def _discard(sinks: dict[str, TableSink]) -> None:
    for sink in sinks.values():
        sink.discard()


class FileList:
    """A batch's files as one argument that dask passes on as it is: it takes lists and
    dataclasses apart to look for tasks inside, and builds every FileRef again in the worker."""

    __slots__ = ("refs",)

    def __init__(self, refs: list[FileRef]) -> None:
        self.refs = refs


def run_batch(out: str, part_id: str, files: FileList, options: ScanOptions) -> dict[str, int]:
    """Catalog small files one after another into one part of each table."""
    refs = files.refs
    sinks = _sinks(out, part_id)
    stats = Stats()
    rows = RowSink(
        sinks["members"], sinks["archives"], sinks["errors"], sinks["textures"], sinks["strings"], sinks["models"]
    )
    try:
        for ref in refs:
            scanner = ArchiveScanner(ref, options, rows, stats)
            try:
                scanner.scan()
            except Exception as exc:  # a bug must not cost the rest of the batch
                scanner.error("scan", exc, ref.relative)
        _commit(sinks)
    except BaseException:
        _discard(sinks)
        raise
    return stats.to_dict()


def _open_as(ref: FileRef, format_name: str) -> tuple[Any, Any]:
    handle = open_file(ref)
    try:
        archive = get_format(format_name).reader_class()(handle, name=ref.path)
    except BaseException:
        handle.close()
        raise
    return handle, archive


def run_sha256(ref: FileRef) -> str | None:
    """sha256 of a whole (large) file, or None when it cannot be read (the check task reports why)."""
    from .hashing import file_sha256

    try:
        with open_file(ref) as handle:
            return file_sha256(lambda count, offset: read_at(handle, count, offset), ref.size)
    except (OSError, GamepakError):
        return None


def run_range(
    out: str, part_id: str, ref: FileRef, options: ScanOptions, format_name: str, start: int, stop: int, sha: str | None
) -> dict[str, int]:
    """Catalog members `start:stop` of a large archive."""
    sinks = _sinks(out, part_id)
    stats = Stats()
    rows = RowSink(
        sinks["members"], sinks["archives"], sinks["errors"], sinks["textures"], sinks["strings"], sinks["models"]
    )
    scanner = ArchiveScanner(ref, options, rows, stats)
    try:
        try:
            handle, archive = _open_as(ref, format_name)
        except Exception as exc:
            scanner.error("open", exc, ref.relative)
        else:
            with handle, archive:
                scanner.catalog_members(archive, archive.infolist()[start:stop], ref.relative, 0, sha)
        _commit(sinks, record=False)
    except BaseException:
        _discard(sinks)
        raise
    return stats.to_dict()


def run_check(ref: FileRef, options: ScanOptions, format_name: str) -> dict[str, Any]:
    """The archives columns of a large archive (header, member count, `check()`)."""
    scanner = ArchiveScanner(ref, options, RowSink(None, None, None), Stats())
    try:
        handle, archive = _open_as(ref, format_name)
    except Exception as exc:
        from ..core.archive import Problem

        return {
            "format": format_name,
            "status": "unreadable",
            "error_count": 1,
            "problems": [Problem(describe_error(exc)).to_dict()],
        }
    with handle, archive:
        return scanner.archive_fields(archive)


def run_finish(
    out: str,
    key: str,
    ref: FileRef,
    detection: Detection,
    how: str,
    fields: dict[str, Any],
    sha: str | None,
    *ranges: dict[str, int],
) -> dict[str, int]:
    """Commit a split archive: its archives row, written once every member range is in."""
    from .schema import TableSink

    sinks = _sinks(out, key)
    sinks["errors"] = TableSink(out, "errors", f"{key}-f")
    stats = Stats()
    for range_stats in ranges:
        for name, value in range_stats.items():
            setattr(stats, name, getattr(stats, name) + value)
    row = archive_row(ref, ref.relative, 0, sha256=sha, detected_by=how, confidence=detection.confidence, **fields)
    try:
        if fields.get("status") == "unreadable":
            sinks["errors"].add(error_row(ref, "open", fields["problems"][0]["message"], ref.relative))
            stats.errors += 1
        sinks["archives"].add(row)
        stats.archives += 1
        _commit(sinks)
    except BaseException:
        _discard(sinks)
        raise
    return stats.to_dict()


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


# -- the output folder ---------------------------------------------------------------------------
def _prepare_output(out: str, options: ScanOptions, resume: bool, overwrite: bool) -> None:
    marker = os.path.join(out, MARKER)
    settings = {"hash_algorithm": options.hash_algorithm, "nested": options.nested, "guess": options.guess}
    exists = os.path.isdir(out) and bool(os.listdir(out))
    if os.path.exists(out) and not os.path.isdir(out):
        raise OutputExistsError(out)
    if exists and resume:
        try:
            with open(marker, encoding="utf-8") as handle:
                previous = json.load(handle)
        except (OSError, ValueError):
            raise GamepakError(f"{out}: not a gamepak catalog (no {MARKER}); cannot resume it") from None
        for name, value in settings.items():
            if previous.get(name) != value:
                raise GamepakError(
                    f"{out}: was cataloged with {name}={previous.get(name)!r}, not {value!r}; "
                    "resume with the same options"
                )
    elif exists:
        if not overwrite:
            raise GamepakError(f"{out}: already exists (use --overwrite to replace it or --resume to continue it)")
        if not os.path.exists(marker) and not set(os.listdir(out)) <= {*TABLES, MARKER}:
            raise GamepakError(f"{out}: is not a gamepak catalog; refusing to replace it")
        for table in TABLES:
            shutil.rmtree(os.path.join(out, table), ignore_errors=True)
    for table in TABLES:
        os.makedirs(os.path.join(out, table), exist_ok=True)
    from ..core.atomic import write_bytes

    write_bytes(marker, json.dumps(settings).encode(), overwrite=True)


def _part_ids(out: str, table: str) -> dict[str, str]:
    folder = os.path.join(out, table)
    found = {}
    for name in os.listdir(folder):
        if name.startswith("part-") and name.endswith(".parquet"):
            found[name[len("part-") : -len(".parquet")]] = os.path.join(folder, name)
        elif name.startswith(".") and name.endswith(".tmp"):
            # A temporary part of an interrupted run.
            os.unlink(os.path.join(folder, name))
    return found


def _resume_state(out: str) -> dict[str, tuple[int, int | None, str]]:
    """Drop parts of units that never committed; return path -> (size, mtime, part id) of every
    file whose unit did commit."""
    import pyarrow.parquet as pq

    committed = {
        part_id: path for part_id, path in _part_ids(out, "archives").items() if not _RANGE_SUFFIX.search(part_id)
    }
    for table in TABLES:
        for part_id, path in _part_ids(out, table).items():
            if _RANGE_SUFFIX.sub("", part_id) not in committed and part_id not in ("walk", "empty"):
                os.unlink(path)
    done: dict[str, tuple[int, int | None, str]] = {}
    for part_id, path in committed.items():
        table = pq.read_table(path, columns=["path", "depth", "size", "mtime"])
        mtimes = table.column("mtime").cast("int64").to_pylist()
        for file_path, depth, size, mtime in zip(
            table.column("path").to_pylist(),
            table.column("depth").to_pylist(),
            table.column("size").to_pylist(),
            mtimes,
        ):
            if depth == 0:
                done[file_path] = (size, mtime, part_id)
    return done


def _drop_files(out: str, stale: dict[str, set[str]]) -> None:
    """Remove the rows of files that changed since they were cataloged (part id -> paths)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    path_column = {
        "members": "archive_path",
        "archives": "path",
        "errors": "path",
        "textures": "archive_path",
        "strings": "archive_path",
        "models": "archive_path",
    }
    for table in TABLES:
        for part_id, path in _part_ids(out, table).items():
            paths = stale.get(_RANGE_SUFFIX.sub("", part_id))
            if not paths:
                continue
            data = pq.read_table(path)
            kept = data.filter(pc.invert(pc.is_in(data.column(path_column[table]), value_set=_string_array(paths))))
            if table == "archives" or kept.num_rows:
                temporary = f"{path}.tmp"
                pq.write_table(kept, temporary, compression="zstd")
                os.replace(temporary, path)
            else:
                os.unlink(path)


def _string_array(values: set[str]) -> Any:
    import pyarrow as pa

    return pa.array(sorted(values), pa.string())


def _write_walk_errors(out: str, problems: list[tuple[str, str]]) -> None:
    if not problems:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(part_path(out, "errors", "walk"))
        return
    from .schema import TableSink

    sink = TableSink(out, "errors", "walk")
    for path, message in problems:
        ref = FileRef(path, os.path.basename(path), 0, None)
        row = error_row(ref, "walk", f"{path}: {message}")
        row["size"] = None
        sink.add(row)
    sink.commit()


def _fill_empty_tables(out: str) -> None:
    """An empty part in a table that has none, so that readers globbing `*.parquet` find the
    table (and its schema) in a catalog without errors."""
    for table in TABLES:
        if not _part_ids(out, table):
            from .schema import TableSink

            TableSink(out, table, "empty").commit(always=True)
        elif len(_part_ids(out, table)) > 1:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(part_path(out, table, "empty"))


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
    _prepare_output(out, options, resume, overwrite)
    summary = Summary()
    done = _resume_state(out) if resume else {}
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
            stale.setdefault(_RANGE_SUFFIX.sub("", previous[2]), set()).add(found.path)
        refs.append(found)
    if stale:
        _drop_files(out, stale)
    units = plan(refs, options, workers, split_bytes)
    summary.units = len(units)
    for result in _compute(_graph(units, out, options), scheduler, workers, progress):
        summary.add(result)
    _write_walk_errors(out, problems)
    summary.walk_errors = len(problems)
    summary.errors += len(problems)
    _fill_empty_tables(out)
    summary.extra = {"options": asdict(options), "scheduler": scheduler, "workers": workers}
    return summary
