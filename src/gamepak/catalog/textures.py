"""The catalog's `textures` table: every RFG peg's textures (name, size, format, mips, flags),
read from the CPU file alone: its header and entries say all of that, the GPU file holds only
the pixels and is not read. Quake's palette images too (the content registry's `quake-image`
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

from ..content.previews import SPRITE_COLUMNS
from ..errors import GamepakError
from ..formats.rfg.peg.sources import name_key, partners_by_key

if TYPE_CHECKING:
    from ..core.archive import Archive, Entry

# A CPU file larger than this is not read (a hostile or mislabelled member): an errors row.
MAX_CPU_BYTES = 16 << 20
# A loose file of another texture kind (a Quake map, sprite, model) larger than this is not read.
MAX_CONTENT_BYTES = 64 << 20


def cpu_positions(entries: list[Entry], format_name: str | None = None) -> list[int]:
    """Positions in `entries` of the members holding textures: those a texture kind of the
    content registry takes (by name, or a WAD lump's kind), a kind with a partner file (a peg's
    GPU file) only when its partner is among them (names compared ignoring case, the rule
    `texture` and `verify` use); in a pack of a format (`format_name`) a texture kind known by
    its bytes alone lives in (J2ME sprites), every member small enough to be one."""
    by_bytes = _kinds_by_bytes(format_name)
    if by_bytes:
        largest = max(kind.max_bytes or MAX_CPU_BYTES for kind in by_bytes)
        return [position for position, entry in enumerate(entries) if entry.size <= largest]
    from ..content import of_member

    by_key: dict[str, str] | None = None
    positions = []
    for position, entry in enumerate(entries):
        kinds = of_member(entry.name, lump=getattr(entry, "kind", None), family="texture", probe=False)
        if not kinds:
            continue
        if kinds[0].has("partner"):
            if by_key is None:
                by_key = partners_by_key(entry.name for entry in entries)
            if name_key(kinds[0].call("partner", entry.name)) not in by_key:
                continue
        positions.append(position)
    return positions


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
    columns.update({key: [] for key in PALETTE_COLUMNS})
    by_bytes = _kinds_by_bytes(archive.format_name)
    if by_bytes:
        # Any member may be one (a sprite): one at a time, by its first bytes (a J2ME pack may
        # hold thousands of members; they are never all held at once).
        for position in positions:
            _add_member_by_bytes(columns, archive, entries[position], by_bytes, nested_path, error)
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
        data = found.get(entry.index)
        if data is not None:
            _add_rows(columns, data, entry, nested_path, error)
    for key in SPRITE_COLUMNS:  # null in the rows of other textures
        columns[key] = [None] * len(columns["name"])
    return len(columns["name"]), columns


def _kinds_by_bytes(format_name: str | None) -> list[Any]:
    """The texture kinds (content registry) with no name of their own, told by their first
    bytes, that live in packs of `format_name` (J2ME sprites in J2ME packs)."""
    from ..content import kinds

    return [
        kind
        for kind in kinds("texture")
        if not kind.extensions and kind.signatures and kind.has("rows") and format_name in kind.packs
    ]


# Palette textures' columns (a kind's `rows` give them; null where a kind's rows do not).
PALETTE_COLUMNS = ("transparent", "fullbright")


def _add_member_by_bytes(
    columns: dict[str, list[Any]],
    archive: Archive,
    entry: Entry,
    by_bytes: list[Any],
    nested_path: str,
    error: Callable[[BaseException | str, str], None],
) -> None:
    """The rows of a member that is one of the kinds `by_bytes` (its first bytes tell; none for
    other members), by that kind's `rows` verb."""
    try:
        with archive.open(entry) as stream:
            head = stream.read(64)
        kind = next((kind for kind in by_bytes if kind.signed_by(head)), None)
        if kind is None or (kind.max_bytes is not None and entry.size > kind.max_bytes):
            return
        found = kind.call("rows", archive.read(entry), entry.name, nested_path)
    except (OSError, GamepakError) as exc:
        error(exc, entry.name)
        return
    for row in found:
        for key in columns:
            columns[key].append(row.get(key))


def _add_rows(
    columns: dict[str, list[Any]],
    data: bytes,
    entry: Entry,
    nested_path: str,
    error: Callable[[BaseException | str, str], None],
) -> None:
    """The textures of one member, by the `rows` verb of the first texture kind (content
    registry) that takes it; a member named like one that holds none (a peg without its `GEKV`
    signature, a `palette.lmp`) gives none, as `iter_pegs` skips it."""
    from ..content import of_member

    lump = getattr(entry, "kind", None)
    for kind in of_member(entry.name, data[:64], lump=lump, family="texture", probe=False):
        if not kind.has("rows"):
            continue
        try:
            found = kind.call("rows", data, entry.name, f"{nested_path}/{entry.name}", options={"lump": lump})
        except GamepakError as exc:
            error(exc, entry.name)
            return
        for row in found:
            for key in columns:
                if key in PALETTE_COLUMNS:
                    columns[key].append(row.get(key))
                elif key not in SPRITE_COLUMNS:  # set to null for these rows once all are added
                    columns[key].append(row[key])
        return


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
