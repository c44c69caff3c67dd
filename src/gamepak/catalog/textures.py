"""The catalog's `textures` table: every RFG peg's textures (name, size, format, mips, flags),
read from the CPU file alone: its header and entries say all of that, the GPU file holds only
the pixels and is not read.

A pack's CPU files are read in one pass over its data (`Archive.iter_data`), after its members
were hashed; they are small (the game's largest is about 100 KB).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import GamepakError
from ..formats.rfg.peg.sources import is_cpu_name

if TYPE_CHECKING:
    from ..core.archive import Archive, Entry

# A CPU file larger than this is not read (a hostile or mislabelled member): an errors row.
MAX_CPU_BYTES = 16 << 20


def texture_columns(
    archive: Archive, entries: list[Entry], nested_path: str, error: Callable[[BaseException | str, str], None]
) -> tuple[int, dict[str, list[Any]]]:
    """(row count, columns) of the textures of the peg CPU files among `entries`; a CPU file
    that cannot be read or parsed is reported through `error(problem, member name)` and
    skipped. Files that are not PC pegs (no `GEKV` signature) are skipped as `iter_pegs` does."""
    from ..formats.rfg.peg.reader import read_entries

    columns: dict[str, list[Any]] = {key: [] for key in ("peg", "name", "width", "height", "format", "mips", "flags")}
    wanted = []
    for entry in entries:
        if not is_cpu_name(entry.name):
            continue
        if entry.size > MAX_CPU_BYTES:
            error(f"{entry.size} bytes is too large for a peg CPU file (at most {MAX_CPU_BYTES} are read)", entry.name)
        else:
            wanted.append(entry)
    if not wanted:
        return 0, columns
    try:
        for entry, chunks in archive.iter_data(wanted):
            cpu = b"".join(chunks)
            if cpu[:4] != b"GEKV":
                continue
            try:
                _, textures = read_entries(cpu, f"{nested_path}/{entry.name}")
            except GamepakError as exc:
                error(exc, entry.name)
                continue
            for texture in textures:
                columns["peg"].append(entry.name)
                columns["name"].append(texture.name)
                columns["width"].append(texture.width)
                columns["height"].append(texture.height)
                columns["format"].append(texture.format.label)
                columns["mips"].append(texture.mips)
                columns["flags"].append(texture.flags)
    except (OSError, GamepakError) as exc:
        error(exc, wanted[0].name if len(wanted) == 1 else "")
    return len(columns["name"]), columns
