"""The catalog's `zone_objects` table: one row per object of every RFG zone (`.rfgzone_pc`,
`.layer_pc`) among a pack's members (zone, index, class, class_hash, handle, name, x, y, z), so
that "where are all the supply crates" is one query. The zones are the members the content
registry's kinds with this table (`family.catalog`) take, their rows those kinds' `rows` verb
gives. A zone that cannot be read is an errors row; the others go on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.archive import Archive, Entry
from ..errors import GamepakError

TABLE = "zone_objects"
COLUMNS = ("zone", "index", "class", "class_hash", "handle", "name", "x", "y", "z")


def zone_bytes() -> int:
    """The largest zone the catalog reads (`core.content_limits`)."""
    from ..core.content_limits import current

    return current().zone_bytes


def table_kinds() -> list[Any]:
    """The content kinds (content registry) whose rows go to this table."""
    from ..content import kinds

    return [kind for kind in kinds() if kind.family.catalog == TABLE and kind.has("rows")]


def member_zone_columns(
    archive: Archive, entries: list[Entry], error: Callable[[BaseException | str, str], None]
) -> tuple[int, dict[str, list[Any]]]:
    """(row count, columns) of every object of the zones among `entries`."""
    columns: dict[str, list[Any]] = {name: [] for name in COLUMNS}
    readable: list[Entry] = []
    kind_of: dict[int, Any] = {}
    wanted = table_kinds()  # asked of every member: by name, as the game finds its zones
    largest = zone_bytes()
    for entry in entries:
        found = [kind for kind in wanted if kind.named_by(entry.name)]
        if not found:
            continue
        if entry.size > largest:  # a larger member is an errors row, not read
            error(f"{entry.size} bytes is too large for a zone (at most {largest} are read)", entry.name)
        else:
            readable.append(entry)
            kind_of[entry.index] = found[0]
    if not readable:
        return 0, columns
    for entry, chunks in archive.iter_data(readable):
        try:
            rows = kind_of[entry.index].call("rows", b"".join(chunks), entry.name, entry.name)
        except GamepakError as exc:
            error(exc, entry.name)
            continue
        add_rows(columns, rows)
    return len(columns["zone"]), columns


def add_rows(columns: dict[str, list[Any]], rows: list[dict[str, Any]]) -> None:
    """Rows (dicts by column) added to `columns`."""
    for row in rows:
        for key, values in columns.items():
            values.append(row[key])
