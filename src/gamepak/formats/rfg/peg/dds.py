"""DDS files of peg textures: a legacy 128-byte header other tools read, then the data.

DXT1/3/5 use the legacy FourCC even when the entry's sRGB flag is set, because Pillow cannot
read DX10 sRGB BCn files. Uncompressed formats use the matching RGB bit masks.

Reading takes what editors write too: legacy FourCCs, RGB bit masks, and DX10 headers (texconv,
paint.net and Photoshop's plugin write those for sRGB and for BGRA; RFGM.Archiver for sRGB and
8888), each mapped to the peg format (and 8888 memory order) whose stored bytes are the same. A
pixel format neither a peg format nor Pillow's DDS reader knows is refused naming it.

| off | size | what                                                                      |
|-----|------|---------------------------------------------------------------------------|
| 0   | 4    | "DDS "                                                                    |
| 4   | 124  | DDS_HEADER: size 124, flags, height, width, pitch, depth, mip count,      |
|     |      | 44 reserved, DDS_PIXELFORMAT (32: size, flags, FourCC, bits, RGBA masks), |
|     |      | caps, caps2-4, reserved                                                   |
| 128 | 20   | DDS_HEADER_DXT10 when FourCC is "DX10": DXGI format, dimension, misc      |
|     |      | flags, array size, misc flags 2                                           |
| 128 or 148 | | the data: each mip level, largest first (what a peg frame stores); tools |
|     |      | add the frame's padding (RFGM) or more mips (`fit_chain` takes what the   |
|     |      | entry needs)                                                              |
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

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
# DXGI_FORMAT numbers (UNORM and UNORM_SRGB: the same bytes) -> (peg format, memory order of 8888).
_DXGI_FORMATS = {
    71: (PixelFormat.DXT1, "BGRA"),
    72: (PixelFormat.DXT1, "BGRA"),
    74: (PixelFormat.DXT3, "BGRA"),
    75: (PixelFormat.DXT3, "BGRA"),
    77: (PixelFormat.DXT5, "BGRA"),
    78: (PixelFormat.DXT5, "BGRA"),
    85: (PixelFormat.R5G6B5, "BGRA"),
    86: (PixelFormat.A1R5G5B5, "BGRA"),
    115: (PixelFormat.A4R4G4B4, "BGRA"),
    65: (PixelFormat.A8, "BGRA"),
    87: (PixelFormat.A8R8G8B8, "BGRA"),
    91: (PixelFormat.A8R8G8B8, "BGRA"),
    28: (PixelFormat.A8R8G8B8, "RGBA"),
    29: (PixelFormat.A8R8G8B8, "RGBA"),
}
# What else Pillow's DDS reader decodes (BC4-BC7, typeless BCn, R8G8B8A8_TYPELESS; legacy BC4/5):
# such a file is decoded by Pillow and encoded into the entry's format. Anything else is named.
_PILLOW_DXGI = frozenset({70, 73, 76, 79, 80, 82, 83, 84, 95, 96, 97, 98, 99, 27})
_PILLOW_FOURCC = frozenset({b"BC4U", b"ATI1", b"BC5S", b"BC5U", b"ATI2"})
# Names of the DXGI formats editors most often write that no peg format stores, for the error.
_DXGI_NAMES = {
    2: "R32G32B32A32_FLOAT",
    10: "R16G16B16A16_FLOAT",
    11: "R16G16B16A16_UNORM",
    24: "R10G10B10A2_UNORM",
    61: "R8_UNORM",
    88: "B8G8R8X8_UNORM",
    90: "B8G8R8A8_TYPELESS",
    93: "B8G8R8X8_UNORM_SRGB",
}
_PIXEL_FLAGS = DDPF_RGB | DDPF_ALPHA | DDPF_ALPHAPIXELS
_READ_HERE = "DXT1/3/5, BC4-7, 8888, 888, 565, 1555, 4444 and A8"


@dataclass(frozen=True)
class DdsFile:
    """What a DDS file holds: its size, mip count (the header's), the peg format and memory
    order of 8888 its data is stored in (`stored`; None when no peg format stores it: Pillow
    decodes it) and the data after the headers."""

    width: int
    height: int
    mips: int
    stored: tuple[PixelFormat, str] | None
    data: bytes
    order: str = "BGRA"

    @property
    def format(self) -> PixelFormat | None:
        """The peg format whose stored bytes the data is, read in the peg's channel order
        (`order`): its levels can be copied as they are. None when it must be decoded."""
        if self.stored is None:
            return None
        fmt, memory_order = self.stored
        return fmt if fmt != PixelFormat.A8R8G8B8 or memory_order == self.order else None


def read_dds(blob: bytes, what: str, order: str = "BGRA") -> DdsFile:
    """Read a DDS file's header and find the peg format of its data; a DDS whose pixel format
    neither gamepak nor Pillow decodes is refused naming that format."""
    if len(blob) < DDS_HEADER.size or blob[:4] != DDS_MAGIC:
        raise GamepakError(f"{what}: not a DDS file")
    fields = DDS_HEADER.unpack_from(blob)
    if fields[1] != 124 or fields[8] != 32:
        raise GamepakError(f"{what}: offset 4: a DDS header is 124 bytes with a 32-byte pixel format")
    height, width, mips = fields[3], fields[4], max(1, fields[7])
    if width == 0 or height == 0:
        raise GamepakError(f"{what}: offset 12: the DDS header gives a size of {width}x{height}")
    pf_flags, fourcc, bits, masks = fields[9], fields[10].to_bytes(4, "little"), fields[11], fields[12:16]
    start: int = DDS_HEADER.size
    stored: tuple[PixelFormat, str] | None = None
    if pf_flags & DDPF_FOURCC and fourcc == b"DX10":
        if len(blob) < start + DX10_HEADER.size:
            raise GamepakError(f"{what}: offset {start}: the DX10 header is cut short")
        dxgi, _, _, array_size, _ = DX10_HEADER.unpack_from(blob, start)
        if dxgi not in _DXGI_FORMATS and dxgi not in _PILLOW_DXGI:
            name = _DXGI_NAMES.get(dxgi)
            shown = f"DXGI format {dxgi}" + (f" ({name})" if name else "")
            raise GamepakError(f"{what}: offset {start}: {shown} is not one gamepak reads ({_READ_HERE})")
        start += DX10_HEADER.size
        stored = _DXGI_FORMATS.get(dxgi)
        if array_size > 1:
            stored = None  # an array of textures: not one peg entry's bytes
    elif pf_flags & DDPF_FOURCC:
        fmt = _FOURCC_FORMATS.get(fourcc)
        if fmt is None and fourcc not in _PILLOW_FOURCC:
            shown = fourcc.decode("ascii", "backslashreplace")
            raise GamepakError(f"{what}: offset 84: FourCC {shown!r} is not one gamepak reads ({_READ_HERE})")
        stored = (fmt, "BGRA") if fmt is not None else None
    else:
        stored = _format_by_masks(pf_flags & _PIXEL_FLAGS, bits, masks)
    return DdsFile(width, height, mips, stored, blob[start:], order)


def _format_by_masks(flags: int, bits: int, masks: tuple[int, ...]) -> tuple[PixelFormat, str] | None:
    """The peg format (and memory order of 8888) an uncompressed DDS's bit masks describe."""
    for memory_order, rgb in (("BGRA", (0xFF0000, 0xFF00, 0xFF)), ("RGBA", (0xFF, 0xFF00, 0xFF0000))):
        if (flags, bits, masks) == (DDPF_RGB | DDPF_ALPHAPIXELS, 32, (*rgb, 0xFF000000)):
            return PixelFormat.A8R8G8B8, memory_order
    for fmt, (want_flags, want_bits, *want_masks) in _MASKS.items():
        if (flags, bits, list(masks)) == (want_flags, want_bits, want_masks):
            return fmt, "BGRA"
    return None


def fit_chain(dds: DdsFile, fmt: PixelFormat, mips: int, what: str) -> tuple[bytes, int]:
    """The `mips`-level chain of `fmt` a DDS of that format gives, and how many of its levels
    came from the file. Tools write more than the chain: RFGM.Archiver the entry's whole frame
    (the chain and its alignment padding), others every mip down to 1x1; only the levels the
    entry needs are taken. A file with fewer mips gives its levels, and the missing ones are
    made from the smallest given (decoded, halved, encoded)."""
    from .layout import chain_size, level_dims, level_size

    given = min(dds.mips, mips)
    need = chain_size(fmt, dds.width, dds.height, given)
    if len(dds.data) < need:
        raise GamepakError(
            f"{what}: {len(dds.data)} bytes of data, {given} mips of {fmt.label} {dds.width}x{dds.height} take {need}"
        )
    chain = dds.data[:need]
    if given == mips:
        return chain, given
    from .pixels import decode, encode_chain

    width, height = level_dims(dds.width, dds.height, given)[-1]
    smallest = decode(fmt, chain[need - level_size(fmt, width, height) :], width, height, dds.order)
    made = encode_chain(fmt, smallest, mips - given + 1, dds.order)
    return chain + made[level_size(fmt, width, height) :], given


def decode_top(dds: DdsFile) -> Any:
    """The top level of a DDS whose data a peg format describes (`stored`), as an RGBA array
    (in the file's own channel order); None when Pillow must decode it."""
    if dds.stored is None:
        return None
    from .pixels import decode

    fmt, memory_order = dds.stored
    if fmt in (PixelFormat.DUDV16, PixelFormat.DOT3_16):
        return None
    return decode(fmt, dds.data, dds.width, dds.height, memory_order)
