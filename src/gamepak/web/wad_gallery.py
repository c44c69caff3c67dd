"""The gallery above a WAD's listing (`/browse/.../x.wad`): every picture lump as the BSP gallery
shows a map's textures, with its name, size, kind and flags: `{` (alpha-tested: its share of
clear pixels), sky, and the share of fullbright pixels (Quake's 224-255; a WAD3 texture has its
own palette and none). Each picture is the lump's `/texture/` URL, drawn through the palette.

Reading is bounded: at most MAX_TEXTURES lumps and MAX_BYTES of them are read; past either, the
gallery says how many it left out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from ..errors import GamepakError
from .file_page import shown_size
from .names import shown_name
from .urls import segment_url

if TYPE_CHECKING:
    from .site import Place

MAX_TEXTURES = 2000
MAX_BYTES = 64 << 20


def flags_of(name: str, kind: str, clear: float, fullbright: float | None) -> list[str]:
    """The flags a gallery caption shows for one picture."""
    flags = []
    if kind == "miptex" and name.startswith("{"):
        flags.append(f"{{ clear {clear:.0%}")
    elif clear:
        flags.append(f"clear {clear:.0%}")
    if kind == "miptex" and name.lower().startswith("sky"):
        flags.append("sky")
    if fullbright:
        flags.append(f"fullbright {fullbright:.0%}")
    return flags


def wad_gallery(place: Place) -> dict[str, Any] | None:
    """The gallery of the WAD at `place` ({textures, left_out}), or None when it is no WAD.
    Which lumps are pictures, and how they are read, is the content registry's: the texture
    kinds that take a lump by its WAD lump kind (`lump_kinds`) in a pack of this format, each
    picture read by its kind's `rows` verb (the catalog's textures rows: size, kind, mips, clear
    and fullbright shares)."""
    from ..content import kinds

    archive = place.archive
    if archive is None:
        return None
    lump_rows = [
        row for row in kinds("texture") if row.lump_kinds and archive.format_name in row.packs and row.has("rows")
    ]
    if not lump_rows:
        return None
    textures: list[dict[str, Any]] = []
    left_out = 0
    spent = 0
    for entry in archive.infolist():
        lump = getattr(entry, "kind", None)
        row = next((row for row in lump_rows if lump in row.lump_kinds), None)
        if row is None:
            continue
        if len(textures) >= MAX_TEXTURES or spent + entry.size > MAX_BYTES:
            left_out += 1
            continue
        spent += entry.size
        try:
            found = row.call("rows", archive.read(entry), entry.name, place.path, options={"lump": lump})
        except GamepakError:
            continue  # a lump that does not parse: its own page says why
        for image in found:
            shown_width, shown_height = shown_size(image["width"], image["height"])
            query = urlencode({"name": shown_name(image["name"])})
            textures.append(
                {
                    "name": shown_name(image["name"]),
                    "width": image["width"],
                    "height": image["height"],
                    "format": image["format"],
                    "mips": image["mips"],
                    "flags": flags_of(image["name"], image["format"], image["transparent"], image["fullbright"]),
                    "url": segment_url("texture", [*place.segments, entry.name]) + "?" + query,
                    "page": segment_url("browse", [*place.segments, entry.name]),
                    "shown_width": shown_width,
                    "shown_height": shown_height,
                }
            )
    return {"textures": textures, "left_out": left_out} if textures or left_out else None
