"""The catalog's three tables (typed pyarrow schemas) and the writer that streams rows into one
part file of each.

A catalog is a folder with one sub-folder per table, each a Parquet dataset of part files:

    OUT/members/part-<id>.parquet   OUT/archives/part-<id>.parquet   OUT/errors/part-<id>.parquet

Every unit of work writes its own parts (straight from the worker); a part appears under its
final name only when complete, and the `archives` part is written last: it is the unit's commit
record, which is what `--resume` trusts.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .parts import TABLES, part_path

_TIMESTAMP = pa.timestamp("ns", tz="UTC")

MEMBERS = pa.schema(
    [
        pa.field("archive_path", pa.string(), nullable=False),
        pa.field("archive_sha256", pa.string()),
        pa.field("nested_path", pa.string(), nullable=False),
        pa.field("depth", pa.int16(), nullable=False),
        pa.field("format", pa.string(), nullable=False),
        pa.field("name", pa.string(), nullable=False),
        pa.field("index", pa.int64(), nullable=False),
        pa.field("size", pa.int64(), nullable=False),
        pa.field("stored_size", pa.int64(), nullable=False),
        pa.field("offset", pa.int64(), nullable=False),
        pa.field("compression", pa.string(), nullable=False),
        pa.field("hash_algorithm", pa.string(), nullable=False),
        pa.field("hash", pa.string()),
        pa.field("member_type", pa.string(), nullable=False),
    ],
    metadata={"gamepak.table": "members"},
)

PROBLEM = pa.struct(
    [
        pa.field("severity", pa.string()),
        pa.field("message", pa.string()),
        pa.field("offset", pa.int64()),
        pa.field("member", pa.string()),
    ]
)

ARCHIVES = pa.schema(
    [
        pa.field("path", pa.string(), nullable=False),
        pa.field("nested_path", pa.string(), nullable=False),
        pa.field("depth", pa.int16(), nullable=False),
        pa.field("sha256", pa.string()),
        pa.field("size", pa.int64(), nullable=False),
        pa.field("mtime", _TIMESTAMP),
        pa.field("format", pa.string()),
        pa.field("kind", pa.string()),
        pa.field("detected_by", pa.string()),
        pa.field("confidence", pa.float32()),
        pa.field("member_count", pa.int64()),
        pa.field("total_size", pa.int64()),
        pa.field("header", pa.string()),
        pa.field("status", pa.string(), nullable=False),
        pa.field("error_count", pa.int32(), nullable=False),
        pa.field("warning_count", pa.int32(), nullable=False),
        pa.field("problems", pa.list_(PROBLEM)),
    ],
    metadata={"gamepak.table": "archives"},
)

ERRORS = pa.schema(
    [
        pa.field("path", pa.string(), nullable=False),
        pa.field("nested_path", pa.string()),
        pa.field("member", pa.string()),
        pa.field("stage", pa.string(), nullable=False),
        pa.field("message", pa.string(), nullable=False),
        pa.field("size", pa.int64()),
        pa.field("mtime", _TIMESTAMP),
    ],
    metadata={"gamepak.table": "errors"},
)

SCHEMAS: dict[str, pa.Schema] = {"members": MEMBERS, "archives": ARCHIVES, "errors": ERRORS}
assert tuple(SCHEMAS) == TABLES

# Rows kept in memory before they are written as one row group.
ROW_GROUP_ROWS = 16_384

_counter = itertools.count()


class TableSink:
    """Rows of one table, streamed to a temporary Parquet file in row groups of at most
    `ROW_GROUP_ROWS` rows, published under the final name by `commit()`."""

    def __init__(self, out: str, table: str, part_id: str) -> None:
        self.schema = SCHEMAS[table]
        self.target = part_path(out, table, part_id)
        folder, base = os.path.split(self.target)
        self.temporary = os.path.join(folder, f".{base}.gamepak-{os.getpid()}-{next(_counter)}.tmp")
        self._columns: dict[str, list[Any]] = {name: [] for name in self.schema.names}
        self._pending = 0
        self._writer: pq.ParquetWriter | None = None
        self.rows = 0

    def add(self, row: dict[str, Any]) -> None:
        for name, column in self._columns.items():
            column.append(row.get(name))
        self._pending += 1
        if self._pending >= ROW_GROUP_ROWS:
            self.flush()

    def flush(self) -> None:
        if not self._pending:
            return
        batch = pa.record_batch([pa.array(self._columns[f.name], f.type) for f in self.schema], schema=self.schema)
        if self._writer is None:
            self._writer = pq.ParquetWriter(self.temporary, self.schema, compression="zstd")
        self._writer.write_batch(batch)
        self.rows += self._pending
        self._pending = 0
        for column in self._columns.values():
            column.clear()

    def commit(self, always: bool = False) -> None:
        """Publish the part (an empty table is written only when `always`)."""
        self.flush()
        if self._writer is None:
            if not always:
                self._remove_stale_target()
                return
            self._writer = pq.ParquetWriter(self.temporary, self.schema, compression="zstd")
        self._writer.close()
        self._writer = None
        os.replace(self.temporary, self.target)

    def _remove_stale_target(self) -> None:
        # A rerun of the same unit that now has no rows must not leave the old rows behind.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.target)

    def discard(self) -> None:
        """Drop what was written (the unit failed as a whole)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.temporary)


def read_table(out: str, table: str, columns: list[str] | None = None) -> pa.Table:
    """One table of a catalog as a whole (an empty table when no part exists)."""
    import pyarrow.dataset as ds

    folder = os.path.join(out, table)
    schema = SCHEMAS[table]
    if not os.path.isdir(folder):
        empty = schema.empty_table()
        return empty.select(columns) if columns else empty
    dataset = ds.dataset(folder, schema=schema, format="parquet")
    return dataset.to_table(columns=columns)
