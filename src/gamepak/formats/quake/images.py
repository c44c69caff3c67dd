"""Quake's 8-bit palette images: qpic (`gfx/*.lmp`, WAD type 0x42), miptex (WAD type 0x44, BSP
textures), the raw console font (`conchars`) and Quake II's `.wal`.

qpic:

| offset | size | field                                      |
|--------|------|--------------------------------------------|
| 0      | 4    | int32 width (> 0)                          |
| 4      | 4    | int32 height (> 0)                         |
| 8      | w·h  | palette indices, rows top first; 255 = transparent |

miptex (40-byte header, then four mips, each half the size of the one before):

| offset | size | field                                                        |
|--------|------|--------------------------------------------------------------|
| 0      | 16   | name, NUL-terminated (bytes after the NUL are often garbage) |
| 16     | 4    | uint32 width (a multiple of 8 for four mips)                 |
| 20     | 4    | uint32 height                                                |
| 24     | 16   | uint32 offsets of mips 0-3 from the record start; all 0 = no pixels (qbsp -notex) |

A WAD3 miptex is followed by its own palette: u16 count (256), count x RGB, padding to 4.

Quake II `.wal` (100-byte header, then four mips as above):

| offset | size | field                                       |
|--------|------|---------------------------------------------|
| 0      | 32   | name (unreliable: use the file's path)      |
| 32     | 4    | uint32 width                                |
| 36     | 4    | uint32 height                               |
| 40     | 16   | uint32 mip offsets from the file start      |
| 56     | 32   | next animation frame name                   |
| 88     | 4    | int32 surface flags                         |
| 92     | 4    | int32 contents                              |
| 96     | 4    | int32 value                                 |

conchars: 128x128 raw indices, no header; index 0 is transparent.

Transparency is the asset's, not the palette's: 255 for qpics, sprite frames, WAL and miptex
whose name starts with `{`; 0 for conchars; none for other miptex and MDL skins. Indices 224-255
are fullbright (never shaded).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ...errors import CorruptArchiveError
from .palette import FULLBRIGHT_START

TYPE_CHECKING = False
if TYPE_CHECKING:
    import numpy as np

QPIC_HEADER = struct.Struct("<ii")
MIPTEX_HEADER = struct.Struct("<16sII4I")
WAL_HEADER = struct.Struct("<32sII4I32siii")
CONCHARS_SIZE = (128, 128)
MIP_LEVELS = 4
# No image is wider or taller than this (the largest Quake textures are 1024 wide in ports).
MAX_SIDE = 1 << 14
# Deflate level of exported PNGs (isal's 1, or zlib's): several times faster than zlib's 6, the
# files barely larger (palette art compresses well at any level).
PNG_LEVEL = 1


class ImageError(CorruptArchiveError):
    """A palette image whose bytes contradict its layout."""


@dataclass(slots=True)  # slots: a sprite or model of many tiny images holds one of these per image
class PaletteImage:
    """One 8-bit image: `mips[0]` is the full-size picture (w·h palette indices), then the
    smaller mips for miptex and WAL (empty when a BSP keeps only the header). `transparent` is
    the index drawn transparent, if any; `palette` the image's own (WAD3) palette."""

    name: str
    kind: str
    width: int
    height: int
    mips: list[bytes] = field(repr=False)
    transparent: int | None = None
    palette: bytes | None = None
    # The bytes kept as they were when the image is written again (name fields, WAL flags).
    header: bytes = field(default=b"", repr=False)
    extras: dict[str, object] = field(default_factory=dict)

    @property
    def pixels(self) -> bytes:
        return self.mips[0] if self.mips else b""


def _sides(width: int, height: int, label: str, offset: int, what: str) -> None:
    if not (0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE):
        raise ImageError(f"{what} size {width}x{height} is not between 1 and {MAX_SIDE}", path=label, offset=offset)


def miptex_transparent(name: str) -> int | None:
    """The transparent index of a world texture: 255 for `{` names (alpha-tested), else none."""
    return 255 if name.startswith("{") else None


# -- qpic --------------------------------------------------------------------------------------


def is_qpic(data: bytes) -> bool:
    """Whether `data` is exactly a qpic: 8 + w·h bytes with w, h > 0."""
    if len(data) < 9:
        return False
    width, height = QPIC_HEADER.unpack_from(data)
    return 0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE and 8 + width * height == len(data)


def qpic_size(head: bytes, size: int, label: str) -> tuple[int, int]:
    """(width, height) of a `size`-byte qpic from its header (`head`: its first bytes), checked:
    its size must be exactly 8 + width·height."""
    if size < QPIC_HEADER.size or len(head) < QPIC_HEADER.size:
        raise ImageError(f"qpic is {size} bytes, shorter than its 8-byte header", path=label, offset=0)
    width, height = QPIC_HEADER.unpack_from(head)
    _sides(width, height, label, 0, "qpic")
    if 8 + width * height != size:
        raise ImageError(
            f"qpic {width}x{height} needs {8 + width * height} bytes, the data is {size}", path=label, offset=0
        )
    return width, height


def read_qpic(data: bytes, name: str, label: str) -> PaletteImage:
    """A qpic; its size must be exactly 8 + width·height."""
    width, height = qpic_size(data, len(data), label)
    return PaletteImage(name, "qpic", width, height, [bytes(data[8:])], transparent=255)


def write_qpic(image: PaletteImage) -> bytes:
    """The bytes of a qpic."""
    return QPIC_HEADER.pack(image.width, image.height) + image.pixels


# -- miptex ------------------------------------------------------------------------------------


def mip_sizes(width: int, height: int) -> list[tuple[int, int]]:
    """(width, height) of the four mips."""
    return [(max(1, width >> level), max(1, height >> level)) for level in range(MIP_LEVELS)]


def miptex_header(
    head: bytes, size: int, name: str | None, label: str, base: int = 0
) -> tuple[str, int, int, list[tuple[int, int]]]:
    """A `size`-byte miptex record's name, width, height and each mip's (offset, size), checked
    to lie inside the record, from its 40-byte header (`head`; `base`: the record's offset in
    the file, for errors). No mips when the offsets are all 0."""
    if size < MIPTEX_HEADER.size or len(head) < MIPTEX_HEADER.size:
        raise ImageError(f"miptex is {size} bytes, shorter than its 40-byte header", path=label, offset=base)
    raw_name, width, height, *offsets = MIPTEX_HEADER.unpack_from(head)
    _sides(width, height, label, base + 16, "miptex")
    texture_name = name if name is not None else raw_name.partition(b"\0")[0].decode("latin-1")
    if not any(offsets):
        return texture_name, width, height, []
    mips = []
    for level, ((mip_width, mip_height), offset) in enumerate(zip(mip_sizes(width, height), offsets, strict=True)):
        mip_size = mip_width * mip_height
        if offset < MIPTEX_HEADER.size or offset + mip_size > size:
            raise ImageError(
                f"miptex {texture_name!r}: mip {level} offset {offset} + {mip_size} bytes lies outside the "
                f"{size}-byte record",
                path=label,
                offset=base + 24 + 4 * level,
            )
        mips.append((offset, mip_size))
    return texture_name, width, height, mips


def read_miptex(data: bytes, name: str | None, label: str, *, wad3: bool = False, base: int = 0) -> PaletteImage:
    """A miptex record (`base`: its offset in the file, for errors). Offsets all 0 give an image
    without pixels; a WAD3 miptex brings its palette."""
    texture_name, width, height, spans = miptex_header(data, len(data), name, label, base)
    image = PaletteImage(
        texture_name, "miptex", width, height, [], transparent=miptex_transparent(texture_name), header=data[:16]
    )
    if not spans:
        return image
    image.mips = [bytes(data[offset : offset + size]) for offset, size in spans]
    if wad3:
        end = max(offset + size for offset, size in spans)
        if end + 2 <= len(data):
            (count,) = struct.unpack_from("<H", data, end)
            if count == 256 and end + 2 + 768 <= len(data):
                image.palette = bytes(data[end + 2 : end + 2 + 768])
        image.transparent = 255 if texture_name.startswith("{") else None
    return image


def write_miptex(image: PaletteImage) -> bytes:
    """The bytes of a miptex record: the kept name field (or the name), then the four mips."""
    name_field = image.header[:16] if len(image.header) >= 16 else image.name.encode("latin-1")[:15].ljust(16, b"\0")
    if not image.mips:
        return MIPTEX_HEADER.pack(name_field, image.width, image.height, 0, 0, 0, 0)
    offsets = []
    position = MIPTEX_HEADER.size
    for mip in image.mips:
        offsets.append(position)
        position += len(mip)
    body = b"".join(image.mips)
    tail = b""
    if image.palette is not None:
        tail = struct.pack("<H", 256) + image.palette
        tail += b"\0" * (-(len(body) + len(tail)) % 4)
    return MIPTEX_HEADER.pack(name_field, image.width, image.height, *offsets) + body + tail


# -- conchars ----------------------------------------------------------------------------------


def read_conchars(data: bytes, name: str, label: str) -> PaletteImage:
    """The console font: 128x128 raw indices (the engine's original is 16,384 bytes)."""
    width, height = CONCHARS_SIZE
    if len(data) < width * height:
        raise ImageError(f"conchars is {len(data)} bytes, not {width * height}", path=label, offset=0)
    image = PaletteImage(name, "conchars", width, height, [bytes(data[: width * height])], transparent=0)
    image.extras["tail"] = bytes(data[width * height :])
    return image


def write_conchars(image: PaletteImage) -> bytes:
    tail = image.extras.get("tail", b"")
    return image.pixels + (tail if isinstance(tail, bytes) else b"")


# -- Quake II WAL ------------------------------------------------------------------------------


def read_wal(data: bytes, name: str, label: str) -> PaletteImage:
    """A Quake II `.wal` (its inner name is ignored: the path names it)."""
    if len(data) < WAL_HEADER.size:
        raise ImageError(f"WAL is {len(data)} bytes, shorter than its 100-byte header", path=label, offset=0)
    _raw, width, height, *rest = WAL_HEADER.unpack_from(data)
    offsets = rest[:4]
    _sides(width, height, label, 32, "WAL")
    image = PaletteImage(name, "wal", width, height, [], transparent=255, header=bytes(data[: WAL_HEADER.size]))
    for level, ((mip_width, mip_height), offset) in enumerate(zip(mip_sizes(width, height), offsets, strict=True)):
        size = mip_width * mip_height
        if offset < WAL_HEADER.size or offset + size > len(data):
            raise ImageError(
                f"WAL mip {level} offset {offset} + {size} bytes lies outside the {len(data)}-byte file",
                path=label,
                offset=40 + 4 * level,
            )
        image.mips.append(bytes(data[offset : offset + size]))
    return image


def write_wal(image: PaletteImage) -> bytes:
    """The bytes of a WAL: the kept header with the new size and mip offsets."""
    raw_name, _w, _h, *rest = WAL_HEADER.unpack_from(image.header.ljust(WAL_HEADER.size, b"\0"))
    offsets = []
    position = WAL_HEADER.size
    for mip in image.mips:
        offsets.append(position)
        position += len(mip)
    return WAL_HEADER.pack(raw_name, image.width, image.height, *offsets, *rest[4:]) + b"".join(image.mips)


# -- colours -----------------------------------------------------------------------------------


def rgba_bytes(image: PaletteImage, palette: bytes, mip: int = 0) -> bytes:
    """The RGBA bytes (rows top first) of one mip; the transparent index gets alpha 0. Pure
    Python (`bytes.translate` per channel, interleaved by slice assignment): exporting needs no
    numpy."""
    return bytes(rgba_of_indices(image.mips[mip], image.palette or palette, image.transparent))


def rgba_of_indices(indices: bytes, colours: bytes, transparent: int | None) -> bytearray:
    """`rgba_bytes` of palette indices drawn through `colours`, in the buffer they were made in
    (a PNG made from it needs no copy: 4 bytes a pixel less at an export's peak)."""
    alpha = bytearray(b"\xff" * 256)
    if transparent is not None:
        alpha[transparent] = 0
    out = bytearray(4 * len(indices))
    for channel in range(3):
        out[channel::4] = indices.translate(colours[channel::3])
    out[3::4] = indices.translate(alpha)
    return out


def to_rgba(image: PaletteImage, palette: bytes, mip: int = 0) -> np.ndarray:
    """The (h, w, 4) uint8 RGBA pixels of one mip; the transparent index gets alpha 0."""
    import numpy as np

    width, height = mip_sizes(image.width, image.height)[mip] if mip else (image.width, image.height)
    return np.frombuffer(rgba_bytes(image, palette, mip), dtype=np.uint8).reshape(height, width, 4)


def _nearest(colours: np.ndarray, palette: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """For each RGB row of `colours`, the index of the nearest allowed palette colour (squared
    distance; the first entry wins a tie). |c - p|² = |c|² - 2c·p + |p|², and |c|² is the same
    for every p: one matrix product, exact in float32 for 8-bit values."""
    import numpy as np

    candidates = np.flatnonzero(allowed)
    choices = palette[candidates].astype(np.float32)
    squares = (choices**2).sum(axis=1)
    twice = (-2.0 * choices.T).copy()
    result = np.empty(len(colours), dtype=np.uint8)
    # Blocks of 256 rows keep the distance table in the CPU cache (measured 10-20x faster than
    # one big table).
    for start in range(0, len(colours), 256):
        distance = colours[start : start + 256].astype(np.float32) @ twice
        distance += squares
        result[start : start + 256] = candidates[distance.argmin(axis=1)]
    return result


def from_rgba(rgba: np.ndarray, palette: bytes, transparent: int | None, *, fullbright: bool = True) -> np.ndarray:
    """Palette indices for (h, w, 4) RGBA pixels: alpha < 128 -> the transparent index (when the
    asset has one); a colour equal to a palette entry -> that entry (fullbright ones included,
    so fullbrights stay only where the image has them exactly); others -> the nearest colour
    among the ordinary entries 0-223 (all entries with `fullbright=True` for images that have
    no ordinary range of their own), never the transparent index."""
    import numpy as np

    height, width = rgba.shape[:2]
    colours = np.frombuffer(palette, dtype=np.uint8).reshape(256, 3)
    packed = (
        rgba[..., 0].astype(np.uint32) << 16 | rgba[..., 1].astype(np.uint32) << 8 | rgba[..., 2].astype(np.uint32)
    ).ravel()
    unique, inverse = np.unique(packed, return_inverse=True)
    # Exact palette matches first (the first entry of a repeated colour).
    palette_packed = colours[:, 0].astype(np.uint32) << 16 | colours[:, 1].astype(np.uint32) << 8 | colours[:, 2]
    usable = np.ones(256, dtype=bool)
    if transparent is not None:
        usable[transparent] = False
    order = np.flatnonzero(usable)
    keys, first = np.unique(palette_packed[order], return_index=True)
    lookup = order[first]
    position = np.searchsorted(keys, unique).clip(0, len(keys) - 1)
    exact = keys[position] == unique
    mapped = np.empty(len(unique), dtype=np.uint8)
    mapped[exact] = lookup[position[exact]]
    if (~exact).any():
        allowed = usable.copy()
        if not fullbright:
            allowed[FULLBRIGHT_START:] = False
        rgb = np.stack([(unique[~exact] >> 16) & 255, (unique[~exact] >> 8) & 255, unique[~exact] & 255], axis=1)
        mapped[~exact] = _nearest(rgb, colours, allowed)
    indices = mapped[inverse]
    if transparent is not None and rgba.shape[2] == 4:
        indices[rgba[..., 3].ravel() < 128] = transparent
    return indices.reshape(height, width)


def build_mips(
    indices: np.ndarray, palette: bytes, transparent: int | None, *, fullbrights: bool = True
) -> list[bytes]:
    """Mips 1-3 from mip 0: each texel the average colour of its 2x2, 4x4 or 8x8 block, matched
    to the nearest ordinary palette colour (a block mostly transparent stays transparent).
    `fullbrights=False`: the palette has no fullbright range (a WAD3 texture's own), every
    entry is ordinary."""
    import numpy as np

    colours = np.frombuffer(palette, dtype=np.uint8).reshape(256, 3).astype(np.float32)
    allowed = np.ones(256, dtype=bool)
    if fullbrights:
        allowed[FULLBRIGHT_START:] = False
    if transparent is not None:
        allowed[transparent] = False
    result = []
    # Each level averages 2x2 of the one before, unrounded: the same as averaging the 2^k
    # block of mip 0, at a quarter of the work per level.
    rgb = colours[indices]
    clear = (indices == transparent).astype(np.float32) if transparent is not None else None
    for _level in range(1, MIP_LEVELS):
        mip_h, mip_w = max(1, rgb.shape[0] // 2), max(1, rgb.shape[1] // 2)
        rgb = rgb[: mip_h * 2, : mip_w * 2].reshape(mip_h, 2, mip_w, 2, 3).mean(axis=(1, 3))
        mip = _nearest(np.rint(rgb).reshape(-1, 3), colours.astype(np.uint8), allowed).reshape(mip_h, mip_w)
        if clear is not None:
            clear = clear[: mip_h * 2, : mip_w * 2].reshape(mip_h, 2, mip_w, 2).mean(axis=(1, 3))
            mip[clear >= 0.5] = transparent
        result.append(mip.tobytes())
    return result


def png_bytes(rgba: np.ndarray) -> bytes:
    """An RGBA PNG of (h, w, 4) uint8 pixels."""
    height, width = rgba.shape[:2]
    return png_from_rgba(width, height, rgba.tobytes())


def png_from_rgba(width: int, height: int, rgba: bytes | bytearray) -> bytes:
    """An RGBA PNG of `width` x `height` pixels given as RGBA bytes, rows top first (made with
    zlib: no Pillow or numpy import for exports)."""
    import zlib

    stride = width * 4
    rows = b"".join(b"\0" + rgba[row : row + stride] for row in range(0, stride * height, stride))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    try:
        from isal import isal_zlib  # a dependency; several times faster than zlib at level 1

        compressed = isal_zlib.compress(rows, PNG_LEVEL)
    except ImportError:  # pragma: no cover - isal has wheels wherever gamepak runs
        compressed = zlib.compress(rows, PNG_LEVEL)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", compressed) + chunk(b"IEND", b"")


def png_of(image: PaletteImage, palette: bytes) -> bytes:
    """The RGBA PNG of an image's mip 0."""
    return png_from_rgba(image.width, image.height, rgba_bytes(image, palette))
