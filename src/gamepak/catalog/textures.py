"""The catalog's `textures` table: every RFG peg's textures (name, size, format, mips, flags),
read from the CPU file alone: its header and entries say all of that, the GPU file holds only
the pixels and is not read. Quake's palette images too (the content registry's `quake`
texture source): qpic LMPs and WAD lumps, BSP textures, sprite frames, MDL skins, WAL; for
these `peg` is the file holding the image, `format` its kind (qpic, miptex, conchars, sprite,
skin, wal) and `flags` its transparent index (-1: opaque). Gameloft J2ME sprites (BSPRITE,
members of J2ME packs) too: one row per sprite, `peg` the member, `name` "sprite", `format`
"bsprite", width and height its largest module's, `flags` the sprite's flags, and the sprite's
own columns (`modules`, `frames`, `anims`, `palettes`, `encoding`; null in other rows).

CPU files are small (the game's largest is about 100 KB). Those the format had to decode
(compressed packs: `.str2_pc` files are compressed and condensed) are kept as the scanner hashes
them (`readable`), so a solid stream is not decoded a second time; plain ones are read
afterwards in one pass (`Archive.iter_data`: reads of byte ranges).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import GamepakError
from ..formats.rfg.peg.sources import is_cpu_name, name_key, partner_name, partners_by_key

if TYPE_CHECKING:
    from ..core.archive import Archive, Entry

# A CPU file larger than this is not read (a hostile or mislabelled member): an errors row.
MAX_CPU_BYTES = 16 << 20


def cpu_positions(entries: list[Entry], format_name: str | None = None) -> list[int]:
    """Positions in `entries` of the peg CPU files (`.cpeg_pc`, `.cvbm_pc`) that have their GPU
    partner among them, by the partner rule `texture` and `verify` use (case ignored), of the
    files holding Quake palette images (by name, or a WAD lump's kind), and, in a J2ME pack
    (`format_name`), of every member small enough to be a sprite (their bytes tell)."""
    if format_name is not None and format_name.startswith("j2me"):
        from ..formats.j2me.sprite.summary import MAX_SPRITE_BYTES

        return [position for position, entry in enumerate(entries) if entry.size <= MAX_SPRITE_BYTES]
    quake = [position for position, entry in enumerate(entries) if _quake_kind(entry)]
    positions = [position for position, entry in enumerate(entries) if is_cpu_name(entry.name)]
    if positions:
        by_key = partners_by_key(entry.name for entry in entries)
        positions = [position for position in positions if name_key(partner_name(entries[position].name)) in by_key]
    return sorted(positions + quake)


def _quake_kind(entry: Entry) -> str | None:
    """The Quake image kind of a member, by its WAD lump kind or its name (None: not one)."""
    kind = getattr(entry, "kind", None)
    if kind is not None:
        return kind if kind in ("qpic", "miptex", "conchars") else None
    from ..formats.quake.sources import kind_of_extension

    return kind_of_extension(entry.name)


def readable(entries: list[Entry], positions: list[int]) -> set[int]:
    """The CPU files among `positions` small enough to be read (the bytes the scanner keeps
    when it decodes them)."""
    return {position for position in positions if entries[position].size <= MAX_CPU_BYTES}


def texture_columns(
    archive: Archive,
    entries: list[Entry],
    positions: list[int],
    nested_path: str,
    error: Callable[[BaseException | str, str], None],
    kept: dict[int, bytes] | None = None,
) -> tuple[int, dict[str, list[Any]]]:
    """(row count, columns) of the textures of the peg CPU files at `positions` in `entries`
    (`cpu_positions`); `kept` holds CPU files already read (by position), the others are read
    here. A CPU file that cannot be read or parsed is reported through `error(problem, member
    name)` and skipped. Files that are not PC pegs (no `GEKV` signature) are skipped as
    `iter_pegs` does."""
    columns: dict[str, list[Any]] = {key: [] for key in ("peg", "name", "width", "height", "format", "mips", "flags")}
    columns.update({key: [] for key in SPRITE_COLUMNS})
    if archive.format_name.startswith("j2me"):
        # Any member may be a sprite: one at a time, by its first bytes (a J2ME pack may hold
        # thousands of members; they are never all held at once).
        for position in positions:
            _add_sprite_member(columns, archive, entries[position], nested_path, error)
        return len(columns["name"]), columns
    kept = kept or {}
    wanted = sorted(readable(entries, positions))
    for position in positions:
        entry = entries[position]
        if entry.size > MAX_CPU_BYTES:
            error(f"{entry.size} bytes is too large for a peg CPU file (at most {MAX_CPU_BYTES} are read)", entry.name)
    to_read = [entries[position] for position in wanted if position not in kept]
    found = {entries[position].index: kept[position] for position in wanted if position in kept}
    if to_read:
        try:
            for entry, chunks in archive.iter_data(to_read):
                found[entry.index] = b"".join(chunks)
        except (OSError, GamepakError) as exc:
            error(exc, to_read[0].name if len(to_read) == 1 else "")
    for position in wanted:
        entry = entries[position]
        cpu = found.get(entry.index)
        if cpu is None:
            continue
        if cpu[:4] == b"GEKV" and is_cpu_name(entry.name):
            _add_textures(columns, cpu, entry.name, nested_path, error)
        elif not is_cpu_name(entry.name):
            _add_quake_images(columns, cpu, entry, nested_path, error)
    for key in SPRITE_COLUMNS:  # null in the rows of other textures
        columns[key] = [None] * len(columns["name"])
    return len(columns["name"]), columns


# The sprite's own columns of the textures table (null in the rows of other textures).
SPRITE_COLUMNS = ("modules", "frames", "anims", "palettes", "encoding")


def _add_sprite_member(
    columns: dict[str, list[Any]],
    archive: Archive,
    entry: Entry,
    nested_path: str,
    error: Callable[[BaseException | str, str], None],
) -> None:
    """A row for a member of a J2ME pack that is a Gameloft sprite (none for other members)."""
    from ..formats.j2me.sprite import read_sprite
    from ..formats.j2me.sprite.summary import sniff_sprite, summary_row

    try:
        with archive.open(entry) as stream:
            if not sniff_sprite(stream.read(6)):
                return
        data = archive.read(entry)
        sprite = read_sprite(data, nested_path, entry.name)
    except (OSError, GamepakError) as exc:
        error(exc, entry.name)
        return
    row = summary_row(sprite, len(data))
    for key, value in (
        ("peg", entry.name),
        ("name", "sprite"),
        ("width", row["width"]),
        ("height", row["height"]),
        ("format", "bsprite"),
        ("mips", 0),
        ("flags", sprite.flags),
        *((key, row[key]) for key in SPRITE_COLUMNS),
    ):
        columns[key].append(value)


def loose_partner(cpu_path: str) -> str | None:
    """The GPU file lying beside a loose CPU file (`crate.cpeg_pc` -> `crate.gpeg_pc`), found
    by the one peg partner rule (`peg.partners.partner_path`: names compared ignoring case, as
    the game does), or None when there is none."""
    from ..formats.rfg.peg.partners import partner_path

    found = partner_path(cpu_path)
    return None if found is None else str(found)


def loose_texture_columns(
    cpu: bytes, peg: str, nested_path: str, error: Callable[[BaseException | str, str], None]
) -> tuple[int, dict[str, list[Any]]]:
    """(row count, columns) of the textures of one loose CPU file's bytes `cpu` (`peg`: its
    file name); a CPU file that does not parse is reported through `error` and gives none."""
    columns: dict[str, list[Any]] = {key: [] for key in ("peg", "name", "width", "height", "format", "mips", "flags")}
    _add_textures(columns, cpu, peg, nested_path, error)
    return len(columns["name"]), columns


def _add_quake_images(
    columns: dict[str, list[Any]],
    data: bytes,
    entry: Entry,
    nested_path: str,
    error: Callable[[BaseException | str, str], None],
) -> None:
    import os

    from ..formats.quake.sources import has_signature, kind_of_file, read_images

    kind = _quake_kind(entry)
    if kind == "qpic" and getattr(entry, "kind", None) is None:
        kind = kind_of_file(entry.name, data)  # palette.lmp, colormap.lmp: no picture
    if kind is None or not has_signature(kind, data):
        return  # named like one, but not one (skipped, as a peg without its signature is)
    in_wad = getattr(entry, "kind", None) is not None
    name = entry.name if in_wad else os.path.splitext(os.path.basename(entry.name))[0]
    try:
        found = read_images(kind, data, name, f"{nested_path}/{entry.name}")
    except GamepakError as exc:
        error(exc, entry.name)
        return
    for image in found:
        columns["peg"].append(entry.name)
        columns["name"].append(image.name)
        columns["width"].append(image.width)
        columns["height"].append(image.height)
        columns["format"].append(image.kind)
        columns["mips"].append(len(image.mips))
        columns["flags"].append(-1 if image.transparent is None else image.transparent)


def _add_textures(
    columns: dict[str, list[Any]],
    cpu: bytes,
    peg: str,
    nested_path: str,
    error: Callable[[BaseException | str, str], None],
) -> None:
    from ..formats.rfg.peg.reader import read_entries

    try:
        _, textures = read_entries(cpu, f"{nested_path}/{peg}")
    except GamepakError as exc:
        error(exc, peg)
        return
    for texture in textures:
        columns["peg"].append(peg)
        columns["name"].append(texture.name)
        columns["width"].append(texture.width)
        columns["height"].append(texture.height)
        columns["format"].append(texture.format.label)
        columns["mips"].append(texture.mips)
        columns["flags"].append(texture.flags)
