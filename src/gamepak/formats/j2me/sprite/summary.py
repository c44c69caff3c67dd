"""What the surfaces (`sprite ls`, the catalog, the viewer) need from a sprite, in one place so
that the content registry can name it as one row: whether bytes are a sprite, its summary row,
and the images a preview shows."""

from __future__ import annotations

from typing import Any

from .model import Sprite, is_sprite, read_sprite

__all__ = ["is_sprite", "preview_images", "sniff_sprite", "summary_row"]


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


def preview_images(data: bytes, palette: int = 0, where: str | None = None) -> dict[str, Any]:
    """A sprite's pictures for a viewer: the module sheet, each frame and each anim (animated
    PNG) drawn with `palette`, as PNG bytes, and the sprite's summary row."""
    from .files import export_files

    sprite = read_sprite(data, where)
    files = export_files(sprite, palette) if sprite.modules else {}
    return {
        "summary": summary_row(sprite, len(data)),
        "sheet": files.get("sheet.png"),
        "frames": [files[name] for name in sorted(files) if name.startswith("frames/")],
        "anims": [files[name] for name in sorted(files) if name.startswith("anims/")],
    }
