"""Pixel codecs: stored bytes of one mip level <-> RGBA uint8 arrays.

Block formats (DXT1/3/5) decode through Pillow's BCn decoder. DXT1 and DXT5 encode through
rgbcx as bc7enc-py builds it (wheels for Linux x86-64 and Windows x64, where modders are) and
through quicktex elsewhere; DXT3, which neither has, through Pillow. The uncompressed formats
are numpy bit arithmetic. The 16-bit DuDv and dot3 formats have no agreed meaning and are read
as raw bytes only (decode refuses them).

Encoding a 1024x1024 DXT5 texture with 9 mips (benchmarks/bench_textures.py, 2 cores; the
machine's speed swings, so compare within one run): rgbcx takes 0.6-0.7x quicktex's time on a
smooth gradient (50.4 dB against 45.7) and on 1/f noise, the spectrum of natural textures (43.6
dB against 44.0), and 1.1-1.3x on a model render (50.4 dB against 50.8) and on white noise (the
worst case, 13.5 dB): quicktex skips work on flat and on hopeless blocks that rgbcx does. The
faster encoders measured (etcpak, Pillow, Intel's ISPC compressor) give 38-41 dB.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ....errors import GamepakError
from .layout import PixelFormat, level_size

_BCN = {PixelFormat.DXT1: 1, PixelFormat.DXT3: 2, PixelFormat.DXT5: 3}


def _expand(values: np.ndarray, bits: int) -> np.ndarray:
    """Scale an n-bit channel to 0..255 the usual way (replicate the high bits)."""
    values = values.astype(np.uint16)
    return ((values * 255 + (1 << (bits - 1)) - 1) // ((1 << bits) - 1)).astype(np.uint8)


def decode(fmt: PixelFormat, data: bytes, width: int, height: int, order: str = "BGRA") -> np.ndarray:
    """Decode the top level of `data` into an RGBA array (height, width, 4)."""
    size = level_size(fmt, width, height)
    if len(data) < size:
        raise GamepakError(f"{fmt.label} {width}x{height} needs {size} bytes, got {len(data)}")
    if fmt in _BCN:
        from PIL import Image

        block_w, block_h = -(-width // 4) * 4, -(-height // 4) * 4
        image = Image.frombytes("RGBA", (block_w, block_h), data[:size], "bcn", _BCN[fmt])
        return np.asarray(image, dtype=np.uint8)[:height, :width].copy()
    out = np.empty((height, width, 4), dtype=np.uint8)
    if fmt == PixelFormat.A8R8G8B8:
        pixels = np.frombuffer(data, np.uint8, size).reshape(height, width, 4)
        return pixels[..., [2, 1, 0, 3]].copy() if order == "BGRA" else pixels.copy()
    if fmt == PixelFormat.R8G8B8:
        pixels = np.frombuffer(data, np.uint8, size).reshape(height, width, 3)
        out[..., :3] = pixels[..., ::-1]  # B, G, R in memory, as D3D's R8G8B8
        out[..., 3] = 255
        return out
    if fmt == PixelFormat.A8:
        out[..., :3] = 255
        out[..., 3] = np.frombuffer(data, np.uint8, size).reshape(height, width)
        return out
    words = np.frombuffer(data, "<u2", width * height).reshape(height, width)
    if fmt == PixelFormat.R5G6B5:
        out[..., 0] = _expand(words >> 11, 5)
        out[..., 1] = _expand((words >> 5) & 0x3F, 6)
        out[..., 2] = _expand(words & 0x1F, 5)
        out[..., 3] = 255
    elif fmt == PixelFormat.A1R5G5B5:
        out[..., 0] = _expand((words >> 10) & 0x1F, 5)
        out[..., 1] = _expand((words >> 5) & 0x1F, 5)
        out[..., 2] = _expand(words & 0x1F, 5)
        out[..., 3] = np.where(words >> 15, 255, 0)
    elif fmt == PixelFormat.A4R4G4B4:
        out[..., 0] = _expand((words >> 8) & 0xF, 4)
        out[..., 1] = _expand((words >> 4) & 0xF, 4)
        out[..., 2] = _expand(words & 0xF, 4)
        out[..., 3] = _expand(words >> 12, 4)
    else:
        raise GamepakError(f"decoding {fmt.label} ({fmt.value}) is not supported")
    return out


def encode(fmt: PixelFormat, rgba: np.ndarray, order: str = "BGRA") -> bytes:
    """Encode one RGBA level (height, width, 4) into `fmt`."""
    rgba = np.asarray(rgba, dtype=np.uint8)
    if fmt in _BCN:
        return _encode_block(fmt, rgba)
    r, g, b, a = (rgba[..., i].astype(np.uint16) for i in range(4))
    if fmt == PixelFormat.A8R8G8B8:
        return (rgba[..., [2, 1, 0, 3]] if order == "BGRA" else rgba).tobytes()
    if fmt == PixelFormat.R8G8B8:
        return np.ascontiguousarray(rgba[..., 2::-1]).tobytes()
    if fmt == PixelFormat.A8:
        return rgba[..., 3].tobytes()
    if fmt == PixelFormat.R5G6B5:
        words = ((r * 31 + 127) // 255) << 11 | ((g * 63 + 127) // 255) << 5 | (b * 31 + 127) // 255
    elif fmt == PixelFormat.A1R5G5B5:
        words = (
            (a >= 128).astype(np.uint16) << 15
            | ((r * 31 + 127) // 255) << 10
            | ((g * 31 + 127) // 255) << 5
            | (b * 31 + 127) // 255
        )
    elif fmt == PixelFormat.A4R4G4B4:
        words = (
            ((a * 15 + 127) // 255) << 12
            | ((r * 15 + 127) // 255) << 8
            | ((g * 15 + 127) // 255) << 4
            | (b * 15 + 127) // 255
        )
    else:
        raise GamepakError(f"encoding {fmt.label} ({fmt.value}) is not supported here")
    return words.astype("<u2").tobytes()


def _encode_block(fmt: PixelFormat, rgba: np.ndarray) -> bytes:
    """One DXT level (see `_encode_block_chain`)."""
    return _encode_block_chain(fmt, [rgba])


def _encode_block_chain(fmt: PixelFormat, levels: Iterable[np.ndarray]) -> bytes:
    """DXT levels, concatenated. DXT1 and DXT5 go through rgbcx (bc7enc-py) where it has a
    wheel, else quicktex; DXT3 (which neither has) through Pillow's DDS writer, one level at a
    time. The top level is encoded as it is; the smaller levels are gathered into one strip of
    blocks (`_block_strip`), so an encoder is called twice per chain, not once per level. Levels
    under 4 pixels are padded to a whole block by repeating the edge, as the GPU samples only
    the real texels. `levels` may be lazy (`iter_mip_chain`): rgbcx encodes the top level on
    its threads while the smaller ones are made."""
    padded = map(_padded, levels)
    library = _rgbcx()
    if fmt not in (PixelFormat.DXT1, PixelFormat.DXT5) or (library is None and not _has_quicktex()):
        # DXT3; or a platform with neither encoder's wheel: Pillow's BCn encoder (wheels everywhere).
        return b"".join(_pillow_level(fmt, level) for level in padded)
    top = next(padded)
    blocks = [top.shape[0] * top.shape[1] // 16]

    def images() -> Iterator[np.ndarray]:
        yield top
        smaller = list(padded)  # made while the top level's bands are encoded (rgbcx)
        if smaller:
            strip, count = _block_strip(smaller)
            blocks.append(count)
            yield strip

    if library is not None:
        encoded = _rgbcx_blocks(library, fmt, images())
    else:
        colour = _colour_encoder(_noise_like(top))
        encoded = b"".join(_quicktex_blocks(fmt, image, colour) for image in images())
    return encoded[: sum(blocks) * (8 if fmt == PixelFormat.DXT1 else 16)]  # the strip's padding cut


def _padded(rgba: np.ndarray) -> np.ndarray:
    height, width = rgba.shape[:2]
    padded_h, padded_w = -(-height // 4) * 4, -(-width // 4) * 4
    if (padded_h, padded_w) != (height, width):
        rgba = np.pad(rgba, ((0, padded_h - height), (0, padded_w - width), (0, 0)), mode="edge")
    return np.ascontiguousarray(rgba)


STRIP_BLOCKS = 64  # blocks per row of the strip the small levels are gathered into


def _block_strip(levels: list[np.ndarray]) -> tuple[np.ndarray, int]:
    """Every 4x4 block of `levels` (whole blocks each), in order, laid out as one image
    `STRIP_BLOCKS` blocks wide (the last row padded with black blocks); and the block count.
    Block encoders treat blocks independently and emit them row by row, so the encoded strip
    is the levels' encodings one after the other."""
    blocks = [
        level.reshape(level.shape[0] // 4, 4, level.shape[1] // 4, 4, 4).swapaxes(1, 2).reshape(-1, 4, 4, 4)
        for level in levels
    ]
    count = sum(len(b) for b in blocks)
    rows = -(-count // STRIP_BLOCKS)
    strip = np.zeros((rows * STRIP_BLOCKS, 4, 4, 4), np.uint8)
    np.concatenate(blocks, out=strip[:count])
    return strip.reshape(rows, STRIP_BLOCKS, 4, 4, 4).swapaxes(1, 2).reshape(rows * 4, STRIP_BLOCKS * 4, 4), count


# rgbcx's level 1: 50.4 dB on the benchmark's gradient where level 0 gives 46.1 and 2-5 give
# 44.7, the same on the render and on 1/f noise (43.6-43.9 dB), in about the same time.
RGBCX_LEVEL = 1
# An image of fewer blocks than this is encoded in one call: threads would cost more than they save.
BAND_BLOCKS = 4096


@functools.cache
def _rgbcx() -> Any:
    """bc7enc-py's build of rgbcx (a ctypes library), or None where it has no wheel."""
    try:
        import bc7enc  # type: ignore[import-not-found]
    except (ImportError, OSError):
        return None
    return bc7enc.bc7


def _rgbcx_blocks(library: Any, fmt: PixelFormat, images: Iterable[np.ndarray]) -> bytes:
    """The blocks of `images` (whole blocks each), one after the other, through rgbcx: DXT1 in
    4-colour mode, DXT5 as rgbcx's BC3 (its BC1 colour half is 4-colour too). Each image is cut
    into bands of block rows spread over a thread per core: a ctypes call releases the GIL, so
    the bands run at once (about 2x on 2 cores), and blocks are independent, so the bytes do not
    depend on the cut. An image's bands start before the next image is asked for."""
    import ctypes

    block_bytes = 8 if fmt == PixelFormat.DXT1 else 16
    level = ctypes.c_uint32(RGBCX_LEVEL)
    no = ctypes.c_bool(False)

    def encode_band(band: np.ndarray) -> bytes:
        height, width = band.shape[:2]
        out = np.empty(height * width // 16 * block_bytes, np.uint8)
        source, target = ctypes.c_void_p(band.ctypes.data), ctypes.c_void_p(out.ctypes.data)
        size = ctypes.c_int(width), ctypes.c_int(height)
        if fmt == PixelFormat.DXT1:  # no 3-colour blocks, no transparent texels for black
            library.compress_image_bc1(source, *size, target, level, no, no)
        else:
            library.compress_image_bc3(source, *size, target, level)
        return out.tobytes()

    parts: list[Any] = []
    for image in images:
        bands = _bands(image)
        if len(bands) == 1:
            parts.append(encode_band(bands[0]))  # small: threads would cost more than they save
        else:
            parts += [_band_pool(os.getpid()).submit(encode_band, band) for band in bands]
    return b"".join(part if isinstance(part, bytes) else part.result() for part in parts)


@functools.cache
def _band_pool(pid: int) -> Any:
    """The encoding threads, made once per process (`pid`): a forked child has none of its
    parent's threads, so it gets a pool of its own."""
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(_cores(), thread_name_prefix="gamepak-encode")


def _cores() -> int:
    try:
        return max(1, min(8, len(os.sched_getaffinity(0))))
    except AttributeError:  # no affinity masks (Windows, macOS)
        return max(1, min(8, os.cpu_count() or 1))


def _bands(image: np.ndarray) -> list[np.ndarray]:
    """`image` cut into bands of whole block rows: two per core (uneven content then balances
    better), fewer for a small image. Row slices of a C-contiguous array stay contiguous."""
    block_rows = image.shape[0] // 4
    count = max(1, min(2 * _cores(), block_rows * (image.shape[1] // 4) // BAND_BLOCKS))
    step = -(-block_rows // count) * 4
    return [image[top : top + step] for top in range(0, image.shape[0], step)]


def _has_quicktex() -> bool:
    """Whether quicktex can be imported (it has wheels for the platforms gamepak targets; where
    it has none, Pillow encodes)."""
    import importlib.util

    return importlib.util.find_spec("quicktex") is not None


def _quicktex_blocks(fmt: PixelFormat, rgba: np.ndarray, colour: Any) -> bytes:
    """The blocks of one image through quicktex, where rgbcx has no wheel. DXT5 is quicktex's
    BC4 encoder for the alpha half of each block and its BC1 encoder for the colour half,
    interleaved: the same bytes as its BC3 encoder, but BC1 spreads over every core (OpenMP)
    where BC3 runs on one."""
    from quicktex import RawTexture  # type: ignore[attr-defined]

    height, width = rgba.shape[:2]
    texture = RawTexture.frombytes(np.ascontiguousarray(rgba).tobytes(), width, height)
    colour_blocks = bytes(colour.encode(texture))
    if fmt == PixelFormat.DXT1:
        return colour_blocks
    out = np.empty((width * height // 16, 16), np.uint8)
    out[:, :8] = np.frombuffer(bytes(_alpha_encoder().encode(texture)), np.uint8).reshape(-1, 8)
    out[:, 8:] = np.frombuffer(colour_blocks, np.uint8).reshape(-1, 8)
    return out.tobytes()


def _pillow_level(fmt: PixelFormat, rgba: np.ndarray) -> bytes:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(rgba, "RGBA").save(buffer, "DDS", pixel_format=fmt.label)
    return buffer.getvalue()[128:]  # a legacy DDS header is 128 bytes; the rest is the level


NOISE_RANGE = 128


def _noise_like(rgba: np.ndarray) -> bool:
    """True when most blocks span more than half the scale in some colour channel (a sample of
    one block in 16): content no 4-colour block can hold (noise), where quicktex's endpoint
    refinement gains ~0.1 dB at twice the time. Real textures sit far below (the xray sample's
    block ranges have medians of 16-54). Images under 64x64 never are: their time does not
    matter, and a mip chain's small levels then get the settings they would get alone."""
    height, width = rgba.shape[:2]
    if height * width < 64 * 64:
        return False
    rows = rgba.reshape(height // 4, 4, width, 4)[::4, :, :, :3]  # every 4th row of blocks
    # texel (dy, dx) of every 4th block of those rows; 16 whole-array maxima beat a max over
    # each block's 16 texels by ~4x in numpy
    texels = [rows[:, dy, dx::16] for dy in range(4) for dx in range(4)]
    high, low = functools.reduce(np.maximum, texels), functools.reduce(np.minimum, texels)
    spread = (high.astype(np.int16) - low).max(axis=-1)
    return bool(np.median(spread) > NOISE_RANGE)


@functools.cache
def _colour_encoder(noise_like: bool) -> Any:
    """quicktex's BC1 encoder at level 0 (its best on our images: 50.8 dB on a render where
    Pillow's encoder gives 38.3, see benchmarks/bench_textures.py), with the "Faster" error
    measure: the same PSNR as level 0's default on the benchmark images in 65-75% of the time.
    Noise-like images skip the refinement (error mode "None"): 13.4 dB instead of 13.5, in half
    the time. Built once: an encoder builds its lookup tables when made."""
    from quicktex.s3tc.bc1 import BC1Encoder  # type: ignore[attr-defined]

    encoder = BC1Encoder(0)
    encoder.error_mode = BC1Encoder.ErrorMode.__members__["None" if noise_like else "Faster"]
    return encoder


@functools.cache
def _alpha_encoder() -> Any:
    from quicktex.s3tc.bc4 import BC4Encoder  # type: ignore[attr-defined]

    return BC4Encoder(3)


def mip_chain(rgba: np.ndarray, mips: int) -> list[np.ndarray]:
    """The top level and `mips - 1` smaller ones, each half the last (box filter on
    premultiplied alpha, via Pillow). Each level is made from the one before it (a 2x2 box of a
    2x2 box is the 4x4 box, up to rounding): from the top, every level re-read the whole image."""
    return list(iter_mip_chain(rgba, mips))


def iter_mip_chain(rgba: np.ndarray, mips: int) -> Iterator[np.ndarray]:
    """`mip_chain` level by level: the top at once, each smaller one when asked for."""
    from PIL import Image

    top = np.asarray(rgba, dtype=np.uint8)
    yield top
    if mips < 2:
        return
    height, width = top.shape[:2]
    image = Image.fromarray(top, "RGBA").convert("RGBa")
    for level in range(1, mips):
        size = (max(1, width >> level), max(1, height >> level))
        factor = (image.width // size[0], image.height // size[1])
        if (size[0] * factor[0], size[1] * factor[1]) == image.size:
            image = image.reduce(factor)  # a whole factor: reduce is the box filter, faster
        else:
            image = image.resize(size, Image.Resampling.BOX)
        yield np.asarray(image.convert("RGBA"), dtype=np.uint8)


def encode_chain(fmt: PixelFormat, rgba: np.ndarray, mips: int, order: str = "BGRA") -> bytes:
    """A whole mip chain of `fmt`, regenerated from the top level."""
    if fmt in _BCN:
        return _encode_block_chain(fmt, iter_mip_chain(rgba, mips))
    return b"".join(encode(fmt, level, order) for level in iter_mip_chain(rgba, mips))
