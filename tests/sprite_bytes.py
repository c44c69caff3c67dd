"""BSPRITE v3 sprites built by hand from gameloft-sprites.md §2, without the writer under test:
for the sprite tests of the model, the commands and the previews."""

from __future__ import annotations

import struct

# 1555 colours: the transparent magenta the game's exporter writes, then opaque red, green, blue,
# white (bit 15 set = opaque).
MAGENTA_CLEAR = 0x7C1F
RED, GREEN, BLUE, WHITE = 0x8000 | (31 << 10), 0x8000 | (31 << 5), 0x8000 | 31, 0xFFFF


def sprite_bytes(
    modules: list[tuple[int, int]],
    fmodules: list[tuple[int, int, int, int]],
    frames: list[tuple[int, int]],
    rects: list[tuple[int, int, int, int]],
    aframes: list[tuple[int, int, int, int, int]],
    anims: list[tuple[int, int]],
    module_data: list[bytes],
    *,
    pixel_format: int = 0x5515,
    palettes: list[list[int]] | None = None,
    colours: int | None = None,
    encoding: int = 0x5602,
    flags: int = 0x01010101,
    version: int = 0x03DF,
) -> bytes:
    """The bytes of a sprite: every section in the spec's order, little-endian."""
    palettes = palettes if palettes is not None else [[MAGENTA_CLEAR, RED, GREEN, BLUE]]
    out = struct.pack("<HI", version, flags)
    out += struct.pack("<H", len(modules)) + b"".join(struct.pack("<BB", *m) for m in modules)
    out += struct.pack("<H", len(fmodules)) + b"".join(struct.pack("<BbbB", *fm) for fm in fmodules)
    out += struct.pack("<H", len(frames)) + b"".join(struct.pack("<HH", *f) for f in frames)
    out += b"".join(struct.pack("<bbBB", *r) for r in rects)
    out += struct.pack("<H", len(aframes)) + b"".join(struct.pack("<BBbbB", *af) for af in aframes)
    out += struct.pack("<H", len(anims)) + b"".join(struct.pack("<HH", *a) for a in anims)
    if modules:
        entry = "<I" if pixel_format == 0x8888 else "<H"
        count = colours if colours is not None else (len(palettes[0]) if palettes else 0)
        out += struct.pack("<HBB", pixel_format, len(palettes), count)
        out += b"".join(struct.pack(entry, value) for palette in palettes for value in palette)
        out += struct.pack("<H", encoding)
        out += b"".join(struct.pack("<H", len(data)) + data for data in module_data)
    return out


def simple_sprite() -> bytes:
    """Two I256 modules (2x1 red|green, 1x2 blue over transparent); frame 0 = module 0 at (0, 0)
    and module 1 at (2, -1) flipped top-bottom; frame 1 empty; anim 0 = frame 0 (2 ticks),
    frame 0 flipped with offset (5, 0) (1 tick), frame 255 (3 ticks)."""
    return sprite_bytes(
        modules=[(2, 1), (1, 2)],
        fmodules=[(0, 0, 0, 0), (1, 2, -1, 2)],
        frames=[(2, 0), (0, 2)],
        rects=[(0, -1, 3, 2), (0, 0, 0, 0)],
        aframes=[(0, 2, 0, 0, 0), (0, 1, 5, 0, 1), (255, 3, 0, 0, 0)],
        anims=[(3, 0)],
        module_data=[bytes([1, 2]), bytes([3, 0])],
    )
