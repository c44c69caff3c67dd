"""DDS files of peg textures: a legacy 128-byte header other tools read, then the data.

DXT1/3/5 use the legacy FourCC even when the entry's sRGB flag is set, because Pillow cannot
read DX10 sRGB BCn files. Uncompressed formats use the matching RGB bit masks.

Reading takes what editors write too: legacy FourCCs, RGB bit masks, and DX10 headers (texconv,
paint.net and Photoshop's plugin write those for sRGB and for BGRA), each mapped to the peg
format whose stored bytes are the same.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ....errors import GamepakError
from .layout import PegTexture, PixelFormat

DDS_MAGIC = b"DDS "
DDS_HEADER = struct.Struct("<4s7I44x8I5I")  # magic, size..mipcount, reserved, pixel format, caps
DDSD_CAPS, DDSD_HEIGHT, DDSD_WIDTH, DDSD_PITCH = 0x1, 0x2, 0x4, 0x8
DDSD_PIXELFORMAT, DDSD_MIPMAPCOUNT, DDSD_LINEARSIZE = 0x1000, 0x20000, 0x80000
DDPF_ALPHAPIXELS, DDPF_ALPHA, DDPF_FOURCC, DDPF_RGB = 0x1, 0x2, 0x4, 0x40
DDSCAPS_COMPLEX, DDSCAPS_TEXTURE, DDSCAPS_MIPMAP = 0x8, 0x1000, 0x400000

# format -> (pixel-format flags, bits per pixel, R, G, B, A masks)
_MASKS = {
    PixelFormat.R5G6B5: (DDPF_RGB, 16, 0xF800, 0x07E0, 0x001F, 0),
    PixelFormat.A1R5G5B5: (DDPF_RGB | DDPF_ALPHAPIXELS, 16, 0x7C00, 0x03E0, 0x001F, 0x8000),
    PixelFormat.A4R4G4B4: (DDPF_RGB | DDPF_ALPHAPIXELS, 16, 0x0F00, 0x00F0, 0x000F, 0xF000),
    PixelFormat.R8G8B8: (DDPF_RGB, 24, 0xFF0000, 0x00FF00, 0x0000FF, 0),
    PixelFormat.A8: (DDPF_ALPHA, 8, 0, 0, 0, 0xFF),
}


def dds_bytes(texture: PegTexture, chain: bytes, order: str = "BGRA") -> bytes:
    """A whole DDS file for one texture's stored mip chain."""
    fmt = texture.format
    flags = DDSD_CAPS | DDSD_HEIGHT | DDSD_WIDTH | DDSD_PIXELFORMAT | DDSD_MIPMAPCOUNT
    caps = DDSCAPS_TEXTURE | (DDSCAPS_COMPLEX | DDSCAPS_MIPMAP if texture.mips > 1 else 0)
    if fmt.is_block:
        flags |= DDSD_LINEARSIZE
        top = max(1, (texture.width + 3) // 4) * max(1, (texture.height + 3) // 4)
        pitch = top * (8 if fmt == PixelFormat.DXT1 else 16)
        pixel = (DDPF_FOURCC, fmt.label.encode(), 0, 0, 0, 0, 0)
    else:
        if fmt == PixelFormat.A8R8G8B8:
            masks = (0xFF0000, 0xFF00, 0xFF) if order == "BGRA" else (0xFF, 0xFF00, 0xFF0000)
            entry = (DDPF_RGB | DDPF_ALPHAPIXELS, 32, *masks, 0xFF000000)
        elif fmt in _MASKS:
            entry = _MASKS[fmt]
        else:
            raise GamepakError(f"{texture.name}: {fmt.label} has no DDS form")
        flags |= DDSD_PITCH
        pitch = texture.width * entry[1] // 8
        pixel = (entry[0], b"\0\0\0\0", *entry[1:])
    pf_flags, fourcc, bits, r, g, b, a = pixel
    header = DDS_HEADER.pack(
        DDS_MAGIC,
        124,
        flags,
        texture.height,
        texture.width,
        pitch,
        0,
        texture.mips,
        32,
        pf_flags,
        int.from_bytes(fourcc, "little"),
        bits,
        r,
        g,
        b,
        a,
        caps,
        0,
        0,
        0,
        0,
    )
    return header + chain


DX10_HEADER = struct.Struct("<5I")  # DXGI format, dimension, misc flags, array size, misc flags 2
_FOURCC_FORMATS = {b"DXT1": PixelFormat.DXT1, b"DXT3": PixelFormat.DXT3, b"DXT5": PixelFormat.DXT5}
# DXGI_FORMAT numbers (UNORM and UNORM_SRGB: the same bytes) -> peg format; 8888 by memory order.
_DXGI_FORMATS = {
    71: PixelFormat.DXT1,
    72: PixelFormat.DXT1,
    74: PixelFormat.DXT3,
    75: PixelFormat.DXT3,
    77: PixelFormat.DXT5,
    78: PixelFormat.DXT5,
    85: PixelFormat.R5G6B5,
    86: PixelFormat.A1R5G5B5,
    115: PixelFormat.A4R4G4B4,
    65: PixelFormat.A8,
}
_DXGI_8888 = {"BGRA": (87, 91), "RGBA": (28, 29)}
_PIXEL_FLAGS = DDPF_RGB | DDPF_ALPHA | DDPF_ALPHAPIXELS


@dataclass(frozen=True)
class DdsFile:
    """What a DDS file holds: its size, mip count, the peg format its data is stored in (None
    when no peg format stores it that way: it is then decoded and encoded again) and the data."""

    width: int
    height: int
    mips: int
    format: PixelFormat | None
    data: bytes


def read_dds(blob: bytes, what: str, order: str = "BGRA") -> DdsFile:
    """Read a DDS file's header and find the peg format of its data."""
    if len(blob) < DDS_HEADER.size or blob[:4] != DDS_MAGIC:
        raise GamepakError(f"{what}: not a DDS file")
    fields = DDS_HEADER.unpack_from(blob)
    if fields[1] != 124 or fields[8] != 32:
        raise GamepakError(f"{what}: offset 4: a DDS header is 124 bytes with a 32-byte pixel format")
    height, width, mips = fields[3], fields[4], max(1, fields[7])
    pf_flags, fourcc, bits, masks = fields[9], fields[10].to_bytes(4, "little"), fields[11], fields[12:16]
    start, fmt = DDS_HEADER.size, None
    if pf_flags & DDPF_FOURCC and fourcc == b"DX10":
        if len(blob) < start + DX10_HEADER.size:
            raise GamepakError(f"{what}: offset {start}: the DX10 header is cut short")
        dxgi, _, _, array_size, _ = DX10_HEADER.unpack_from(blob, start)
        start += DX10_HEADER.size
        fmt = _DXGI_FORMATS.get(dxgi) or (PixelFormat.A8R8G8B8 if dxgi in _DXGI_8888[order] else None)
        if array_size > 1:
            fmt = None  # an array of textures: not one peg entry's bytes
    elif pf_flags & DDPF_FOURCC:
        fmt = _FOURCC_FORMATS.get(fourcc)
    else:
        fmt = _format_by_masks(pf_flags & _PIXEL_FLAGS, bits, masks, order)
    return DdsFile(width, height, mips, fmt, blob[start:])


def _format_by_masks(flags: int, bits: int, masks: tuple[int, ...], order: str) -> PixelFormat | None:
    """The peg format an uncompressed DDS's bit masks describe, if any stores them."""
    bgra = (0xFF0000, 0xFF00, 0xFF) if order == "BGRA" else (0xFF, 0xFF00, 0xFF0000)
    if (flags, bits, masks) == (DDPF_RGB | DDPF_ALPHAPIXELS, 32, (*bgra, 0xFF000000)):
        return PixelFormat.A8R8G8B8
    for fmt, (want_flags, want_bits, *want_masks) in _MASKS.items():
        if (flags, bits, list(masks)) == (want_flags, want_bits, want_masks):
            return fmt
    return None
