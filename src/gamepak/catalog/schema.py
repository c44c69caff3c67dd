"""The catalog's tables (typed pyarrow schemas) and the writer that streams rows into one
part file of each.

A catalog is a folder with one sub-folder per table, each a Parquet dataset of part files:

    OUT/members/part-<id>.parquet   OUT/archives/part-<id>.parquet   OUT/errors/part-<id>.parquet
    OUT/textures/part-<id>.parquet  (RFG peg textures; parts only where pegs were found)
    OUT/strings/part-<id>.parquet   (localization files' and J2ME text packs' strings; likewise)

Every unit of work writes its own parts (straight from the worker); a part appears under its
final name only when complete, and the `archives` part is written last: it is the unit's commit
record, which is what `--resume` trusts.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Collection
from operator import countOf
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
        # The stored bytes of a name that is not UTF-8 (a PAK's `caf\xe9.txt`); `name` then holds
        # it with those bytes escaped (`caf\\xe9.txt`). Null for every other name.
        pa.field("raw_name", pa.binary()),
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

TEXTURES = pa.schema(
    [
        pa.field("archive_path", pa.string(), nullable=False),
        pa.field("nested_path", pa.string(), nullable=False),
        pa.field("peg", pa.string(), nullable=False),
        pa.field("name", pa.string(), nullable=False),
        pa.field("width", pa.int32(), nullable=False),
        pa.field("height", pa.int32(), nullable=False),
        pa.field("format", pa.string(), nullable=False),
        pa.field("mips", pa.int16(), nullable=False),
        pa.field("flags", pa.int32(), nullable=False),
        # Palette textures (Quake's) only: the share of pixels drawn clear (the transparent index)
        # and in fullbright colours (224-255; null for a WAD3 texture's own palette).
        pa.field("transparent", pa.float32()),
        pa.field("fullbright", pa.float32()),
        # Gameloft J2ME sprites only (format "bsprite"); null for other textures.
        pa.field("modules", pa.int32()),
        pa.field("frames", pa.int32()),
        pa.field("anims", pa.int32()),
        pa.field("palettes", pa.int16()),
        pa.field("encoding", pa.string()),
    ],
    metadata={"gamepak.table": "textures"},
)

STRINGS = pa.schema(
    [
        pa.field("archive_path", pa.string(), nullable=False),
        pa.field("nested_path", pa.string(), nullable=False),
        pa.field("member", pa.string()),
        pa.field("language", pa.string()),
        pa.field("hash", pa.int64()),  # u32 (int64: the catalog writes signed integer columns)
        pa.field("identifier", pa.string()),
        pa.field("index", pa.int32(), nullable=False),
        pa.field("string", pa.string(), nullable=False),
    ],
    metadata={"gamepak.table": "strings"},
)

MODELS = pa.schema(
    [
        pa.field("archive_path", pa.string(), nullable=False),
        pa.field("nested_path", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("format", pa.string(), nullable=False),
        pa.field("vertices", pa.int64(), nullable=False),
        pa.field("triangles", pa.int64(), nullable=False),
        pa.field("frames", pa.int64(), nullable=False),
        # The VDrift track or car the model belongs to, and the texture it names (null: none).
        pa.field("scene", pa.string()),
        pa.field("scene_kind", pa.string()),
        pa.field("texture", pa.string()),
        # RFG meshes (null for other models): LOD and material counts, bones, every texture
        # name the materials give ("; "-separated).
        pa.field("lods", pa.int64()),
        pa.field("materials", pa.int64()),
        pa.field("bones", pa.int64()),
        pa.field("textures", pa.string()),
    ],
    metadata={"gamepak.table": "models"},
)

ZONE_OBJECTS = pa.schema(
    [
        pa.field("archive_path", pa.string(), nullable=False),
        pa.field("nested_path", pa.string(), nullable=False),
        pa.field("zone", pa.string(), nullable=False),  # the zone's member name
        pa.field("index", pa.int32(), nullable=False),  # the object's position in the zone
        pa.field("class", pa.string()),  # null: a class hash no name list knows
        pa.field("class_hash", pa.int64(), nullable=False),
        pa.field("handle", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        # The object's position (its op property); null when it has none.
        pa.field("x", pa.float64()),
        pa.field("y", pa.float64()),
        pa.field("z", pa.float64()),
    ],
    metadata={"gamepak.table": "zone_objects"},
)

SCHEMAS: dict[str, pa.Schema] = {
    "members": MEMBERS,
    "archives": ARCHIVES,
    "errors": ERRORS,
    "textures": TEXTURES,
    "strings": STRINGS,
    "models": MODELS,
    "zone_objects": ZONE_OBJECTS,
}
assert tuple(SCHEMAS) == TABLES

# Rows kept in memory before they are written as one row group: at most this many, and at most
# about this many bytes of text, binary and list values (a strings table of long strings, or
# packs with thousands of check() problems, would otherwise hold 16,384 large rows in a worker).
ROW_GROUP_ROWS = 16_384
ROW_GROUP_BYTES = 16 << 20

_counter = itertools.count()


def escaped_text(value: str | None) -> str | None:
    """`value` as valid UTF-8 text: bytes that were not UTF-8 (kept as surrogates) as `\\xNN`."""
    if value is None:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return value


def to_arrow(values: list[Any], type: pa.DataType) -> pa.Array:
    """An Arrow array of `values` (None for null) of one of the catalog's column types, built
    from buffers rather than with `pa.array`: its first call in a process imports pandas when
    pandas is installed (to check whether the values are pandas objects), which costs every
    worker 0.3 s and 45 MiB."""
    import numpy as np

    count = len(values)
    if pa.types.is_string(type):
        builder = pa.lib.StringBuilder()
        try:
            builder.append_values(values)
        except UnicodeEncodeError:
            # Undecodable bytes kept as surrogates (names, paths): stored escaped, as text.
            builder = pa.lib.StringBuilder()
            builder.append_values([escaped_text(value) for value in values])
        return builder.finish()
    present = [value is not None for value in values]
    mask = None if all(present) else pa.py_buffer(np.packbits(np.array(present, np.bool_), bitorder="little"))
    if pa.types.is_binary(type):
        offsets = np.zeros(count + 1, np.int32)
        np.cumsum([len(value) if value is not None else 0 for value in values], out=offsets[1:])
        joined = b"".join(value for value in values if value is not None)
        return pa.Array.from_buffers(type, count, [mask, pa.py_buffer(offsets), pa.py_buffer(joined)])
    if pa.types.is_list(type):
        offsets = np.zeros(count + 1, np.int32)
        np.cumsum([len(value) if value is not None else 0 for value in values], out=offsets[1:])
        items = to_arrow([item for value in values if value is not None for item in value], type.value_type)
        return pa.Array.from_buffers(type, count, [mask, pa.py_buffer(offsets)], children=[items])
    if pa.types.is_struct(type):
        children = [
            to_arrow([value.get(field.name) if value is not None else None for value in values], field.type)
            for field in type
        ]
        return pa.Array.from_buffers(type, count, [mask], children=children)
    if pa.types.is_floating(type):
        dtype: Any = np.dtype(f"float{type.bit_width}")
    else:  # integers and timestamps (int64 underneath)
        dtype = np.dtype(f"int{type.bit_width}")
    data = np.array([value if value is not None else 0 for value in values], dtype)
    return pa.Array.from_buffers(type, count, [mask, pa.py_buffer(data)])


def _value_bytes(value: Any) -> int:
    """About what one value weighs in a row group: its length for text and binary, its items'
    for lists and dicts (check() problems), 8 bytes for anything else."""
    if isinstance(value, (str, bytes)):
        return len(value)
    if isinstance(value, list):
        return 8 + sum(map(_value_bytes, value))
    if isinstance(value, dict):
        return sum(map(_value_bytes, value.values()))
    return 8


_TEXT = frozenset((str, bytes))
_TEXT_OR_NULL = frozenset((str, bytes, type(None)))
# Types `_value_bytes` weighs 8 (exact types: a subclass of anything takes the long way).
_SCALARS = frozenset((int, float, bool, type(None)))


def _values_bytes(values: Collection[Any]) -> int:
    """`sum(map(_value_bytes, values))`, the sizes the catalog adds per row or per column,
    without a call per value: at the catalog's scale these were 1.6% of its CPU."""
    kinds = set(map(type, values))
    if kinds <= _TEXT:  # nearly every variable column
        return sum(map(len, values))
    if kinds <= _TEXT_OR_NULL:
        # Empty texts weigh 0 either way, so `filter` may drop them with the nulls.
        return sum(map(len, filter(None, values))) + 8 * countOf(values, None)
    total = 0
    for value in values:
        kind = type(value)
        if kind in _TEXT:
            total += len(value)
        elif kind in _SCALARS:
            total += 8
        else:
            total += _value_bytes(value)
    return total


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
        self._bytes = 0  # about what the pending rows' values weigh (see _value_bytes)
        self._variable = {
            field.name
            for field in self.schema
            if not (pa.types.is_integer(field.type) or pa.types.is_floating(field.type))
        }
        self._writer: pq.ParquetWriter | None = None
        self.rows = 0

    def add(self, row: dict[str, Any]) -> None:
        for name, column in self._columns.items():
            column.append(row.get(name))
        self._pending += 1
        self._bytes += _values_bytes(row.values())
        if self._pending >= ROW_GROUP_ROWS or self._bytes >= ROW_GROUP_BYTES:
            self.flush()

    def extend(self, count: int, columns: dict[str, list[Any]], constants: dict[str, Any]) -> None:
        """`count` rows given column by column: `columns` hold a value per row, `constants` one
        value for every row; columns in neither are null."""
        for name, column in self._columns.items():
            values = columns.get(name)
            if values is not None:
                column.extend(values)
                if name in self._variable:
                    self._bytes += _values_bytes(values)
                else:
                    self._bytes += 8 * count
            else:
                column.extend(itertools.repeat(constants.get(name), count))
                self._bytes += count * _value_bytes(constants.get(name))
        self._pending += count
        if self._pending >= ROW_GROUP_ROWS or self._bytes >= ROW_GROUP_BYTES:
            self.flush()

    def flush(self) -> None:
        if not self._pending:
            return
        batch = pa.RecordBatch.from_arrays(
            [to_arrow(self._columns[f.name], f.type) for f in self.schema], schema=self.schema
        )
        if self._writer is None:
            self._writer = pq.ParquetWriter(self.temporary, self.schema, compression="zstd")
        self._writer.write_batch(batch, row_group_size=ROW_GROUP_ROWS)
        self.rows += self._pending
        self._pending = 0
        self._bytes = 0
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
