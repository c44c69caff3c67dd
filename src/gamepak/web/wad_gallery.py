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
IMAGE_KINDS = ("qpic", "miptex", "conchars")


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
    """The gallery of the WAD at `place` ({textures, left_out}), or None when it is no WAD."""
    from ..formats.quake import sources
    from ..formats.quake.palette import colour_shares
    from ..formats.quake.wad import Reader

    archive = place.archive
    if not isinstance(archive, Reader):
        return None
    textures: list[dict[str, Any]] = []
    left_out = 0
    spent = 0
    for entry in archive.infolist():
        kind = getattr(entry, "kind", None)
        if kind not in IMAGE_KINDS:
            continue
        if len(textures) >= MAX_TEXTURES or spent + entry.size > MAX_BYTES:
            left_out += 1
            continue
        spent += entry.size
        try:
            found = sources.read_images(kind, archive.read(entry), entry.name, place.path, wad3=archive.wad3)
        except GamepakError:
            continue  # a lump that does not parse: its own page says why
        for image in found:
            if not image.mips:
                continue
            clear, fullbright = colour_shares(image.mips[0], image.transparent, image.palette is not None)
            shown_width, shown_height = shown_size(image.width, image.height)
            query = urlencode({"name": shown_name(image.name)})
            textures.append(
                {
                    "name": shown_name(image.name),
                    "width": image.width,
                    "height": image.height,
                    "format": image.kind,
                    "mips": len(image.mips),
                    "flags": flags_of(image.name, image.kind, clear, fullbright),
                    "url": segment_url("texture", [*place.segments, entry.name]) + "?" + query,
                    "page": segment_url("browse", [*place.segments, entry.name]),
                    "shown_width": shown_width,
                    "shown_height": shown_height,
                }
            )
    return {"textures": textures, "left_out": left_out} if textures or left_out else None
