"""What the surfaces (`sprite ls`, the catalog, the viewer) need from a sprite, in one place so
that the content registry can name it as one row: whether bytes are a sprite, its summary row,
and the images a preview shows."""

from __future__ import annotations

from typing import Any

from .model import Sprite, is_sprite, read_sprite

__all__ = ["MAX_SPRITE_BYTES", "is_sprite", "preview_images", "sniff_sprite", "summary_row"]

# Members larger than this are not taken for sprites (the game keeps module data offsets in 16
# bits: its sprites are a few KiB; the largest a sprite can be is far below this).
MAX_SPRITE_BYTES = 1 << 20


def sniff_sprite(head: bytes) -> bool:
    """Whether a member starting with `head` (6 bytes are enough) is a BSPRITE v3 sprite."""
    return is_sprite(head)


def summary_row(sprite: Sprite, size: int) -> dict[str, Any]:
    """The catalog's and `sprite ls`'s row: counts, palettes, encoding, pixel format, bytes."""
    return {
        "size": size,
        "modules": len(sprite.modules),
        "frames": len(sprite.frames),
        "anims": len(sprite.anims),
        "palettes": len(sprite.palettes),
        "colours": sprite.colours,
        "encoding": sprite.encoding_name,
        "pixel_format": sprite.pixel_format_name,
        "width": max((w for w, _ in sprite.modules), default=0),
        "height": max((h for _, h in sprite.modules), default=0),
    }


def preview_images(data: bytes, where: str | None = None, max_palettes: int = 16) -> dict[str, Any]:
    """A sprite's pictures for a viewer, drawn with each of its palettes (at most
    `max_palettes`, and as many as `compose.MAX_DRAWN_PIXELS` allows): the module sheet, each
    frame and each anim (an animated PNG), as PNG bytes with their sizes, and the sprite's
    summary row. FormatLimitError when even one palette's pictures cost more."""
    from ....errors import FormatLimitError
    from .compose import MAX_DRAWN_PIXELS, check_drawing, compose_anim, compose_frame, contact_sheet
    from .files import animated_png, rgba_png

    sprite = read_sprite(data, where)
    try:
        cost = check_drawing(sprite) if sprite.modules else 0
    except FormatLimitError as exc:
        raise FormatLimitError(f"{where}: {exc}" if where else str(exc)) from None
    shown = min(len(sprite.palettes), max_palettes, MAX_DRAWN_PIXELS // max(cost, 1))
    palettes = []
    for number in range(shown):
        sheet, _ = contact_sheet(sprite, number)
        frames = []
        for index in range(len(sprite.frames)):
            picture = compose_frame(sprite, index, number)
            if picture is not None:
                frames.append({"index": index, "png": rgba_png(picture.rgba), "size": picture.rgba.shape[1::-1]})
        anims = []
        for index in range(len(sprite.anims)):
            animation = compose_anim(sprite, index, number)
            if animation.cells:
                png = animated_png(animation.cells, animation.times)
                anims.append({"index": index, "png": png, "size": animation.cells[0].shape[1::-1]})
        palettes.append(
            {
                "number": number,
                "sheet": rgba_png(sheet),
                "sheet_size": sheet.shape[1::-1],
                "frames": frames,
                "anims": anims,
            }
        )
    return {"summary": summary_row(sprite, len(data)), "palettes": palettes}
