"""The zone_objects rows of RFG zones (`.rfgzone_pc`, `.layer_pc`) among a pack's members: one row
per object (zone, index, class, class_hash, handle, name, x, y, z), so that "where are all the
supply crates" is one query. A zone that cannot be read is an errors row; the others go on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.archive import Archive, Entry
from ..formats.rfg.zone.check import is_zone_name
from ..formats.rfg.zone.model import ZoneError, read

# Far above any game zone; a larger member is an errors row, not read.
MAX_ZONE_BYTES = 64 << 20
COLUMNS = ("zone", "index", "class", "class_hash", "handle", "name", "x", "y", "z")


def member_zone_columns(
    archive: Archive, entries: list[Entry], error: Callable[[BaseException | str, str], None]
) -> tuple[int, dict[str, list[Any]]]:
    """(row count, columns) of every object of the zones among `entries`."""
    columns: dict[str, list[Any]] = {name: [] for name in COLUMNS}
    zones = [entry for entry in entries if is_zone_name(entry.name)]
    readable = []
    for entry in zones:
        if entry.size > MAX_ZONE_BYTES:
            error(f"{entry.size} bytes is too large for a zone (at most {MAX_ZONE_BYTES} are read)", entry.name)
        else:
            readable.append(entry)
    if not readable:
        return 0, columns
    for entry, chunks in archive.iter_data(readable):
        try:
            zone = read(b"".join(chunks), None, entry.name)
        except ZoneError as exc:
            error(exc, entry.name)
            continue
        for index, obj in enumerate(zone.objects):
            position = obj.position
            columns["zone"].append(entry.name)
            columns["index"].append(index)
            columns["class"].append(obj.class_name())
            columns["class_hash"].append(obj.class_hash)
            columns["handle"].append(obj.handle)
            columns["name"].append(obj.name())
            for axis, value in zip("xyz", position or (None, None, None)):
                columns[axis].append(value)
    return len(columns["zone"]), columns
