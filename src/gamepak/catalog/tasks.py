"""The units of work a catalog run's workers execute (planned and scheduled by run.py): a batch
of small files, or one task of a split archive (its sha256, its check, a range of its members,
and the last task that commits it). Each writes its rows straight into part files of OUT
(schema.TableSink) and returns only a few counts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.opening import Detection
from ..core.registry import get_format
from ..errors import GamepakError
from .discovery import FileRef, open_file, read_at
from .parts import TABLES
from .rows import RowSink, ScanOptions, Stats, archive_row, describe_error, error_row
from .scan import ArchiveScanner

if TYPE_CHECKING:
    from .schema import TableSink


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
    sinks["zone_objects"].commit()
    sinks["errors"].commit()
    sinks["archives"].commit(always=record)


def _row_sink(sinks: dict[str, TableSink]) -> RowSink:
    return RowSink(
        sinks["members"],
        sinks["archives"],
        sinks["errors"],
        sinks["textures"],
        sinks["strings"],
        sinks["models"],
        sinks["zone_objects"],
    )


def _discard(sinks: dict[str, TableSink]) -> None:
    for sink in sinks.values():
        sink.discard()


class FileList:
    """A batch's files as one argument that dask passes on as it is (it takes lists apart to
    look for tasks inside). Pickled as five columns, not as a FileRef each: lists of strings
    and numbers pickle in C, without a call per file, and the worker makes its FileRefs again."""

    __slots__ = ("refs",)

    def __init__(self, refs: list[FileRef]) -> None:
        self.refs = refs

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _file_list, tuple(zip(*self.refs))


def _file_list(*columns: list[Any]) -> FileList:
    return FileList(list(map(FileRef._make, zip(*columns))))


class Args:
    """A task's own arguments as one object that dask passes on as it is, for a graph given to
    dask as a plain dict (run._graph). Dask takes any argument of such a task that is a string,
    number or tuple equal to a key of the graph for that key's result (and looks inside tuples
    and lists for more): a catalog folder or a part id spelled like a key would have been
    replaced. The results a task needs are given beside this, as keys (see `call`)."""

    __slots__ = ("values",)

    def __init__(self, *values: Any) -> None:
        self.values = values

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return Args, self.values


def call(function: Any, args: Args, *results: Any) -> Any:
    """The task of a plain graph: `function(*args, *results)`, the results being those of the
    keys that follow `args` in the task (dask puts each key's result in its place)."""
    return function(*args.values, *results)


def warm_up() -> None:
    """What a worker process of a `processes` run imports as it starts (run.started_pool): the
    Parquet side (pyarrow, ~0.35 G instructions), while the client still walks the folders."""
    from . import schema  # noqa: F401


def run_batch(out: str, part_id: str, files: FileList, options: ScanOptions) -> dict[str, int]:
    """Catalog small files one after another into one part of each table."""
    refs = files.refs
    sinks = _sinks(out, part_id)
    stats = Stats()
    rows = _row_sink(sinks)
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
    rows = _row_sink(sinks)
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
