"""A catalog run's output folder: making it ready (new, replaced, or resumed with the same
options), what an interrupted run left committed, dropping the rows of files changed since,
and the parts the client writes itself (the walk's errors, empty parts for empty tables).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from typing import Any

from ..errors import GamepakError, OutputExistsError
from .discovery import FileRef
from .parts import TABLES, part_path
from .rows import ScanOptions, error_row

MARKER = "_gamepak_catalog.json"
# A part id's suffix naming a piece of a split archive: a member range, or its finishing errors.
RANGE_SUFFIX = re.compile(r"-(r\d+|f)$")


def prepare_output(out: str, options: ScanOptions, resume: bool, overwrite: bool) -> None:
    marker = os.path.join(out, MARKER)
    settings = {"hash_algorithm": options.hash_algorithm, "nested": options.nested, "guess": options.guess}
    exists = os.path.isdir(out) and bool(os.listdir(out))
    if os.path.exists(out) and not os.path.isdir(out):
        raise OutputExistsError(out)
    if exists and resume:
        from ..core.files import read_file

        try:
            previous = json.loads(read_file(marker, limit=1 << 20))
        except (GamepakError, ValueError):
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


def resume_state(out: str) -> dict[str, tuple[int, int | None, str]]:
    """Drop parts of units that never committed; return path -> (size, mtime, part id) of every
    file whose unit did commit."""
    import pyarrow.parquet as pq

    committed = {
        part_id: path for part_id, path in _part_ids(out, "archives").items() if not RANGE_SUFFIX.search(part_id)
    }
    for table in TABLES:
        for part_id, path in _part_ids(out, table).items():
            if RANGE_SUFFIX.sub("", part_id) not in committed and part_id not in ("walk", "empty"):
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


def drop_files(out: str, stale: dict[str, set[str]]) -> None:
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
        "zone_objects": "archive_path",
    }
    for table in TABLES:
        for part_id, path in _part_ids(out, table).items():
            paths = stale.get(RANGE_SUFFIX.sub("", part_id))
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


def write_walk_errors(out: str, problems: list[tuple[str, str]]) -> None:
    if not problems:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(part_path(out, "errors", "walk"))
        return
    from .schema import TableSink

    sink = TableSink(out, "errors", "walk")
    for path, line in problems:  # (the line names the path: iter_files)
        ref = FileRef(path, os.path.basename(path), 0, None)
        row = error_row(ref, "walk", line)
        row["size"] = None
        sink.add(row)
    sink.commit()


def fill_empty_tables(out: str) -> None:
    """An empty part in a table that has none, so that readers globbing `*.parquet` find the
    table (and its schema) in a catalog without errors."""
    for table in TABLES:
        if not _part_ids(out, table):
            from .schema import TableSink

            TableSink(out, table, "empty").commit(always=True)
        elif len(_part_ids(out, table)) > 1:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(part_path(out, table, "empty"))
