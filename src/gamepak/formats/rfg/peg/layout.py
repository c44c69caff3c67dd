"""peg v10 byte layout: the CPU file's header, entries and names; sizes of mip chains.

CPU file (little-endian):

| off            | size | record  | fields                                                    |
|----------------|------|---------|-----------------------------------------------------------|
| 0x00           | 24   | HEADER  | "GEKV", u16 version (10), u16 platform (0 PC), u32 CPU   |
|                |      |         | file size, u32 GPU file size, u16 bitmap count, u16      |
|                |      |         | flags, u16 entry count, u16 alignment (16)               |
| 24 + 48*i      | 48   | ENTRY   | u32 GPU data offset, u16 width, u16 height, u16 format,  |
|                |      |         | u16 source width, u16 anim tiles w, u16 anim tiles h,    |
|                |      |         | u16 frame count, u16 flags, u32 name offset, u16 source  |
|                |      |         | height, u8 fps, u8 mip levels, u32 frame size,           |
|                |      |         | 16 bytes runtime pointers (0 on disk)                    |
| after entries  | var  | names   | one NUL-terminated ASCII name per entry, in entry order  |

GPU file: each entry's mip chain at its data offset, largest level first, padded with zeros
to the alignment. Frame size is either the exact chain or the chain rounded up to the
alignment (both conventions are kept as read); the name offset is 0 in the game's files and
a real offset in RFGM's repacks (kept as read, never trusted for reading).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum
from functools import lru_cache

HEADER = struct.Struct("<4sHHIIHHHH")
ENTRY = struct.Struct("<IHHHHHHHHIHBBI16s")
SIGNATURE = b"GEKV"
VERSION = 10

FLAG_CUBE_MAP = 0x8
FLAG_ANIM_TILES = 0x100
FLAG_SRGB = 0x200


class PixelFormat(IntEnum):
    """Every pixel format of the spec, by its number in the entry."""

    DXT1 = 400
    DXT3 = 401
    DXT5 = 402
    R5G6B5 = 403
    A1R5G5B5 = 404
    A4R4G4B4 = 405
    R8G8B8 = 406
    A8R8G8B8 = 407
    DUDV16 = 408
    DOT3_16 = 409
    A8 = 410

    @property
    def label(self) -> str:
        """The short name the CLI prints (`DXT5`, `8888`, `565`...)."""
        return _LABELS[self]

    @property
    def is_block(self) -> bool:
        return self in _BLOCK_BYTES


_LABELS = {
    PixelFormat.DXT1: "DXT1",
    PixelFormat.DXT3: "DXT3",
    PixelFormat.DXT5: "DXT5",
    PixelFormat.R5G6B5: "565",
    PixelFormat.A1R5G5B5: "1555",
    PixelFormat.A4R4G4B4: "4444",
    PixelFormat.R8G8B8: "888",
    PixelFormat.A8R8G8B8: "8888",
    PixelFormat.DUDV16: "DUDV",
    PixelFormat.DOT3_16: "DOT3",
    PixelFormat.A8: "A8",
}
_BLOCK_BYTES = {PixelFormat.DXT1: 8, PixelFormat.DXT3: 16, PixelFormat.DXT5: 16}
_PIXEL_BYTES = {
    PixelFormat.R5G6B5: 2,
    PixelFormat.A1R5G5B5: 2,
    PixelFormat.A4R4G4B4: 2,
    PixelFormat.R8G8B8: 3,
    PixelFormat.A8R8G8B8: 4,
    PixelFormat.DUDV16: 2,
    PixelFormat.DOT3_16: 2,
    PixelFormat.A8: 1,
}


def format_by_label(label: str) -> PixelFormat:
    """`DXT5`, `8888`, `A8R8G8B8` or `402` -> the PixelFormat; ValueError if none."""
    for fmt in PixelFormat:
        if label.upper() in (fmt.label, fmt.name, str(fmt.value)):
            return fmt
    raise ValueError(f"unknown pixel format {label!r}")


def level_size(fmt: PixelFormat, width: int, height: int) -> int:
    """Bytes of one mip level; block formats take whole 4x4 blocks even below 4 pixels."""
    if fmt in _BLOCK_BYTES:
        return max(1, (width + 3) // 4) * max(1, (height + 3) // 4) * _BLOCK_BYTES[fmt]
    return width * height * _PIXEL_BYTES[fmt]


def level_dims(width: int, height: int, mips: int) -> list[tuple[int, int]]:
    """The (width, height) of each mip level, largest first."""
    return [(max(1, width >> i), max(1, height >> i)) for i in range(mips)]


@lru_cache(maxsize=4096)  # a pack's textures share few sizes; listing one is then a lookup
def chain_size(fmt: PixelFormat, width: int, height: int, mips: int) -> int:
    """Bytes of a whole mip chain, without alignment padding."""
    return sum(level_size(fmt, w, h) for w, h in level_dims(width, height, mips))


def max_mips(width: int, height: int) -> int:
    """The most mip levels a size allows (down to 1x1)."""
    return max(width, height, 1).bit_length()


def align(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


# An entry's runtime field as nearly every peg stores it (shared by every entry holding it).
ZERO_RUNTIME = bytes(16)


@dataclass(slots=True)  # slots: a peg may hold 65,535 entries (66 bytes each on disk)
class PegTexture:
    """One entry: its fields as stored (so an unchanged pair writes back byte for byte)."""

    name: str
    width: int
    height: int
    format: PixelFormat
    mips: int
    flags: int
    data_offset: int
    frame_size: int
    source_width: int
    source_height: int
    anim_tiles_width: int
    anim_tiles_height: int
    frame_count: int
    name_offset: int
    fps: int
    runtime: bytes = ZERO_RUNTIME

    @property
    def chain_size(self) -> int:
        """Bytes of this texture's mip chain, without padding."""
        return chain_size(self.format, self.width, self.height, self.mips)

    def summary(self) -> dict[str, object]:
        """The fields `texture ls` shows."""
        return {
            "name": self.name,
            "width": self.width,
            "height": self.height,
            "format": self.format.label,
            "mips": self.mips,
            "flags": self.flags,
        }
