"""DDS files of peg textures: a legacy 128-byte header other tools read, then the data.

DXT1/3/5 use the legacy FourCC even when the entry's sRGB flag is set, because Pillow cannot
read DX10 sRGB BCn files. Uncompressed formats use the matching RGB bit masks.
"""

from __future__ import annotations

import struct

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


def dds_data(blob: bytes, what: str) -> tuple[int, int, int, bytes, bytes]:
    """(width, height, mips, FourCC or b'', data) of a DDS file, checked enough to copy it."""
    if len(blob) < DDS_HEADER.size or blob[:4] != DDS_MAGIC:
        raise GamepakError(f"{what}: not a DDS file")
    fields = DDS_HEADER.unpack_from(blob)
    height, width, mips = fields[3], fields[4], max(1, fields[7])
    fourcc = fields[10].to_bytes(4, "little") if fields[9] & DDPF_FOURCC else b""
    return width, height, mips, fourcc, blob[DDS_HEADER.size :]
