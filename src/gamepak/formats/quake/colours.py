"""Mapping true-colour pictures to a 256-colour palette the way the eye sees it: nearest palette
colour in CIELAB (D65), optional Floyd-Steinberg dithering (Pillow's), the four mip levels of a
miptex, and each mapping's mean CIEDE2000 difference (`formats.quake.ciede2000`).

The build's pixels travel as packed 24-bit keys, R | G << 8 | B << 16 (uint32): the
little-endian view of RGBA bytes, so a decoded picture needs no copy per channel; the functions
taking (..., 3) uint8 arrays pack them first.
"""

from __future__ import annotations

import functools

from ...core.arrays import sorted_unique
from .ciede2000 import (  # noqa: F401  (re-exported: the colour vocabulary lives here)
    _ciede2000_angles,
    _ciede2000_planes,
    _pixel_lab_planes,
    ciede2000,
    mean_error_keys,
    pack_rgb,
    palette_lab,
    srgb_to_lab,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import numpy as np

# Quake's fullbright colours start here (formats.quake.palette.FULLBRIGHT_START, not imported:
# this module needs nothing of the palette files).
FULLBRIGHT_ENTRIES = 224
# Rows of pixels mapped per block: the (rows x palette) distance table stays in the CPU cache.
BLOCK = 256
KEY_MASK = 0xFFFFFF


def nearest_lab(rgb: np.ndarray, palette: bytes, allowed: np.ndarray, lab: np.ndarray | None = None) -> np.ndarray:
    """For each 8-bit RGB row of `rgb` (n, 3), the index of the allowed palette entry nearest in
    CIELAB (the first entry wins a tie, so an exact colour keeps its first entry); `lab`: the
    rows' CIELAB colours when already known.
    |c - p|² = |c|² - 2c·p + |p|², and |c|² is the same for every p: one matrix product per block."""
    import numpy as np

    candidates = np.flatnonzero(allowed)
    choices = palette_lab(palette)[candidates]
    squares = (choices**2).sum(axis=1)
    twice = (-2.0 * choices.T).copy()
    if lab is None:
        lab = srgb_to_lab(rgb, "float32")
    result = np.empty(len(rgb), dtype=np.uint8)
    for start in range(0, len(rgb), BLOCK):
        distance = lab[start : start + BLOCK] @ twice
        distance += squares
        result[start : start + BLOCK] = candidates[distance.argmin(axis=1)]
    return result


def map_colours(rgb: np.ndarray, palette: bytes, allowed: np.ndarray) -> np.ndarray:
    """Palette indices for (h, w, 3) uint8 pixels (`cell_nearest`: a palette colour keeps its
    entry, others take the entry nearest in CIELAB to their cell)."""
    height, width = rgb.shape[:2]
    return cell_nearest(rgb.reshape(-1, 3), palette, allowed).reshape(height, width)


def map_and_measure(
    rgb: np.ndarray, palette: bytes, allowed: np.ndarray, counted: np.ndarray | None = None
) -> tuple[np.ndarray, float]:
    """`map_colours` and `mean_error` of its result at once."""
    indices = map_colours(rgb, palette, allowed)
    return indices, mean_error(rgb, indices, palette, counted)


def dither_colours(pixels: np.ndarray, palette: bytes, allowed: np.ndarray) -> np.ndarray:
    """Palette indices for (h, w, 3) uint8 RGB pixels, or the RGB of (h, w, 4) RGBA ones, by
    Floyd-Steinberg error diffusion over the allowed entries only (Pillow's, which measures
    distance in RGB)."""
    import numpy as np
    from PIL import Image

    holder, back = _dither_palette(palette, np.packbits(allowed).tobytes())
    height, width, channels = pixels.shape
    # RGBA pixels are handed to Pillow as they are, read as RGBX (alpha skipped in C): taking
    # their RGB with numpy first copied every picture once more (a third of dithering's time).
    raw = "RGBX" if channels == 4 else "RGB"
    with Image.frombytes("RGB", (width, height), np.ascontiguousarray(pixels), "raw", raw) as picture:
        with picture.quantize(palette=holder, dither=Image.Dither.FLOYDSTEINBERG) as quantised:
            indices = np.asarray(quantised)
    return np.asarray(back[indices])


@functools.lru_cache(maxsize=8)
def _dither_palette(palette: bytes, allowed_key: bytes) -> tuple[Any, np.ndarray]:
    """The Pillow palette image `dither_colours` quantises to, and its indices back to the
    palette's. Kept per palette and allowed set: Pillow fills a colour cache inside the palette
    image as it goes, and a fresh one per texture made dithering 15x slower."""
    import numpy as np
    from PIL import Image

    allowed = np.unpackbits(np.frombuffer(allowed_key, dtype=np.uint8))[:256].astype(bool)
    colours = np.frombuffer(palette, dtype=np.uint8).reshape(256, 3)
    candidates = np.flatnonzero(allowed)
    # Pillow takes a whole 256-entry palette: the allowed colours first, the rest copies of the
    # first allowed one, mapped back to it.
    table = np.repeat(colours[candidates[:1]], 256, axis=0)
    table[: len(candidates)] = colours[candidates]
    back = np.full(256, candidates[0], dtype=np.uint8)
    back[: len(candidates)] = candidates
    holder = Image.new("P", (1, 1))
    holder.putpalette(table.tobytes())
    return holder, back


def mean_error(rgb: np.ndarray, indices: np.ndarray, palette: bytes, counted: np.ndarray | None = None) -> float:
    """The mean CIEDE2000 difference between each pixel's colour and the palette colour it was
    given (`counted`: a mask of the pixels that count, e.g. the opaque ones)."""
    keys = pack_rgb(rgb.reshape(-1, 3))
    chosen = indices.reshape(-1)
    if counted is not None:
        keep = counted.reshape(-1)
        keys, chosen = keys[keep], chosen[keep]
    return mean_error_keys(keys, chosen, palette)


# -- the summary's error: every drawn pixel, or a fixed sample of them ---------------------------
# A picture of more than ERROR_EXACT_PIXELS drawn pixels is measured at one pixel of each
# ERROR_SAMPLE_STEP x ERROR_SAMPLE_STEP cell, if drawn: 1 pixel in 16, spread over the whole
# picture, the same pixels every build. Measuring every pixel was about half a build's time.
# The pixel's place in its cell moves from cell to cell (`(7 * cell row + 11 * cell column) % 16`,
# which visits all 16 places): a grid of fixed rows and columns always held the same rows and
# columns of every 16-pixel tile, where Floyd-Steinberg makes its largest errors (15% off on the
# benchmark's dithered pictures, against 4% now; README).
# A sample of fewer than ERROR_SAMPLE_FLOOR drawn pixels (a picture under 128x128, or drawn
# pixels that miss the sample) is too thin to trust: then every drawn pixel counts.
ERROR_SAMPLE_STEP = 4
ERROR_EXACT_PIXELS = 4096
ERROR_SAMPLE_FLOOR = 1024


def error_sample(
    keys: np.ndarray, chosen: np.ndarray, drawn: np.ndarray | None, *, exact: bool = False
) -> tuple[np.ndarray, np.ndarray, int]:
    """The packed keys and entries a picture's mean error is measured on, and how many pixels
    were sampled (0: every drawn pixel, the exact mean). `keys`: the picture's keys, flat;
    `chosen`: its entries, (h, w); `drawn`: (h, w) mask of the pixels that count (None: all).
    With `exact`, or few drawn pixels, every drawn pixel; else the drawn ones of
    `sample_positions` (one pixel a cell). The arrays returned may be views of the inputs."""
    import numpy as np

    height, width = chosen.shape
    counted = height * width if drawn is None else int(np.count_nonzero(drawn))
    flat_chosen = chosen.reshape(-1)
    if not exact and counted > ERROR_EXACT_PIXELS:
        positions = sample_positions(height, width)
        if drawn is not None:
            positions = positions[drawn.reshape(-1)[positions]]
        if len(positions) >= ERROR_SAMPLE_FLOOR:
            return keys[positions], flat_chosen[positions], len(positions)
    if drawn is None:
        return keys, flat_chosen, 0
    flat = drawn.reshape(-1)
    return keys[flat], flat_chosen[flat], 0


@functools.lru_cache(maxsize=16)
def sample_positions(height: int, width: int) -> np.ndarray:
    """The flat positions of the error sample of a `height` x `width` picture, cell by cell:
    in each ERROR_SAMPLE_STEP-square cell (row i, column j) the pixel at place
    `(7i + 11j) % step**2` of the cell, read row by row (left out where a cell at the edge is cut
    short). Made once a picture size (read-only)."""
    import numpy as np

    step = ERROR_SAMPLE_STEP
    cell_rows = np.arange(0, height, step)
    cell_columns = np.arange(0, width, step)
    place = (7 * np.arange(len(cell_rows))[:, None] + 11 * np.arange(len(cell_columns))[None, :]) % (step * step)
    rows = cell_rows[:, None] + place // step
    columns = cell_columns[None, :] + place % step
    inside = (rows < height) & (columns < width)
    positions = (rows * width + columns)[inside].astype(np.intp)
    positions.flags.writeable = False
    return positions


# -- fast mapping: exact colours, then a per-palette cache of 4x4x4 colour cells --------------
# Pillow's own quantiser looks colours up by cell too. A cell's entry is the allowed palette
# colour nearest in CIELAB to the cell's centre, computed the first time a picture needs it and
# kept for the rest of the build (200 pictures share most of their cells).
CELL_SHIFT = 2
CELL_SIDE = 256 >> CELL_SHIFT


# A cell's cached value: its entry, plus EXACT_CELL when the cell holds an allowed palette
# colour (a colour there may be one exactly); -1 while not looked up yet.
EXACT_CELL = 0x100


@functools.lru_cache(maxsize=16)
def _cell_tables(palette: bytes, allowed_key: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The lookup tables of one palette and allowed set: each cell's value (-1: not looked up
    yet; filled in place), which cells hold an allowed palette colour, and those colours'
    keys, sorted, with the first allowed entry of each."""
    import numpy as np

    allowed = np.unpackbits(np.frombuffer(allowed_key, dtype=np.uint8))[:256].astype(bool)
    table = np.frombuffer(palette, dtype=np.uint8).reshape(256, 3)
    order = np.flatnonzero(allowed)
    packed = pack_rgb(table[order])
    keys, first = np.unique(packed, return_index=True)
    exact_cells = np.zeros(CELL_SIDE**3, dtype=bool)
    exact_cells[_cells(packed)] = True
    return np.full(CELL_SIDE**3, -1, dtype=np.int16), exact_cells, keys, order[first].astype(np.uint8)


def _cells(keys: np.ndarray) -> np.ndarray:
    """The 4x4x4 cell number, (R >> 2) * 4096 + (G >> 2) * 64 + (B >> 2), of each packed key."""
    import numpy as np

    bits = 8 - CELL_SHIFT
    red = keys << (2 * bits - CELL_SHIFT)  # R >> 2 at bit 12 (what lands above it is masked)
    red &= (CELL_SIDE - 1) << 2 * bits
    green = keys >> (8 + CELL_SHIFT - bits)
    green &= (CELL_SIDE - 1) << bits
    red |= green
    blue = keys >> (16 + CELL_SHIFT)
    blue &= CELL_SIDE - 1
    red |= blue
    return red.astype(np.intp)


def cell_nearest(columns: np.ndarray, palette: bytes, allowed: np.ndarray) -> np.ndarray:
    """For each 8-bit RGB row of `columns` (n, 3), an allowed palette index: the entry itself
    for a colour the palette holds (its first allowed entry), else the entry nearest in CIELAB
    to the centre of the colour's 4x4x4 cell."""
    return cell_nearest_keys(pack_rgb(columns), palette, allowed)


# Keys looked up per pass: a large picture in parts whose arrays stay in the CPU cache.
LOOKUP_PART = 32768


def cell_nearest_keys(keys: np.ndarray, palette: bytes, allowed: np.ndarray) -> np.ndarray:
    """`cell_nearest` of packed 24-bit keys (uint32)."""
    import numpy as np

    if len(keys) <= LOOKUP_PART:
        return _cell_nearest_part(keys, palette, allowed)
    result = np.empty(len(keys), dtype=np.uint8)
    for start in range(0, len(keys), LOOKUP_PART):
        result[start : start + LOOKUP_PART] = _cell_nearest_part(keys[start : start + LOOKUP_PART], palette, allowed)
    return result


def _cell_nearest_part(keys: np.ndarray, palette: bytes, allowed: np.ndarray) -> np.ndarray:
    """`cell_nearest_keys` of one part."""
    import numpy as np

    cache, exact_cells, palette_keys, lookup = _cell_tables(palette, np.packbits(allowed).tobytes())
    cells = _cells(keys)
    values = cache.take(cells)
    if (values < 0).any():
        needed = sorted_unique(cells[values < 0])
        side = 1 << CELL_SHIFT
        centres = np.stack(
            [needed // (CELL_SIDE * CELL_SIDE), (needed // CELL_SIDE) % CELL_SIDE, needed % CELL_SIDE], axis=1
        )
        found = nearest_lab((centres * side + side // 2).astype(np.uint8), palette, allowed).astype(np.int16)
        cache[needed] = found | exact_cells[needed] * np.int16(EXACT_CELL)
        values = cache.take(cells)
    result = values.astype(np.uint8)  # the entry (the flag is above the low byte)
    # Only a colour in a cell that holds a palette colour can be one: the exact test for those.
    candidates = np.flatnonzero(values >= EXACT_CELL)
    if len(candidates):
        packed = keys[candidates]
        position = np.searchsorted(palette_keys, packed)
        np.minimum(position, len(palette_keys) - 1, out=position)
        exact = palette_keys[position] == packed
        result[candidates[exact]] = lookup[position[exact]]
    return result


# Mip block sums of all three channels (and the clear count) in one integer: 16 bits a field
# (a block of 8x8 sums at most 64 * 255 = 16320), red lowest, the clear count at bit 48.
FIELD_BITS = 16
CLEAR_FIELD = 3 * FIELD_BITS
FIELD_ONES = 1 | 1 << FIELD_BITS | 1 << 2 * FIELD_BITS
BYTE_FIELDS = 0xFF * FIELD_ONES


@functools.lru_cache(maxsize=16)
def _mip_table(palette: bytes, transparent: int | None) -> np.ndarray:
    """Each entry's colour as packed 16-bit fields (int64), the transparent entry counting one
    clear pixel."""
    import numpy as np

    colours = np.frombuffer(palette, dtype=np.uint8).reshape(256, 3).astype(np.int64)
    table = colours[:, 0] | colours[:, 1] << FIELD_BITS | colours[:, 2] << 2 * FIELD_BITS
    if transparent is not None:
        table[transparent] |= 1 << CLEAR_FIELD
    table.flags.writeable = False
    return table  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=16)
def _mip_rounding(sizes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per texel of the concatenated levels (of `sizes` texels each): its level's shift (2k for
    level k), the rounding bias of each colour field, and half a block's pixel count."""
    import numpy as np

    shifts = np.concatenate([np.full(size, 2 * level, dtype=np.int64) for level, size in enumerate(sizes, 1)])
    half = np.left_shift(1, shifts - 1)
    return shifts, (half - 1) * FIELD_ONES, half


def mips_from(
    indices: np.ndarray, palette: bytes, transparent: int | None, allowed: np.ndarray, levels: int = 3
) -> list[bytes]:
    """Mips 1..levels of a texture from its mip 0 `indices`: each texel the average colour of
    its 2x2, 4x4 or 8x8 block (rounded half to even) mapped by `cell_nearest` among `allowed`
    (a block at least half clear stays `transparent`)."""
    import numpy as np

    # Integer block sums, all channels and the clear count in one int64 (no field overflows).
    sums = _mip_table(palette, transparent).take(indices.astype(np.intp))
    levels_summed, shapes = [], []
    for _level in range(levels):
        height, width = max(1, sums.shape[0] // 2), max(1, sums.shape[1] // 2)
        sums = _block_sums(sums, height, width)
        levels_summed.append(sums.reshape(-1))
        shapes.append((height, width))
    total = np.concatenate(levels_summed)
    shifts, bias, half = _mip_rounding(tuple(height * width for height, width in shapes))
    # round(v / 2^s), half to even, of each field at once: (v + 2^(s-1) - 1 + (v >> s & 1)) >> s.
    odd = total >> shifts
    odd &= FIELD_ONES
    odd += total
    odd += bias
    odd >>= shifts
    odd &= BYTE_FIELDS
    keys = odd & 0xFF
    keys |= (odd >> (FIELD_BITS - 8)) & 0xFF00
    keys |= (odd >> (2 * FIELD_BITS - 16)) & 0xFF0000
    # All levels mapped in one call (the lookups cost per call more than per texel here).
    mapped = cell_nearest_keys(keys.astype(np.uint32), palette, allowed)
    if transparent is not None:
        mapped[total >> CLEAR_FIELD >= half] = transparent  # at least half the block's pixels clear
    result, start = [], 0
    for height, width in shapes:
        result.append(mapped[start : start + height * width].tobytes())
        start += height * width
    return result


def _block_sums(values: np.ndarray, height: int, width: int) -> np.ndarray:
    """The sums of the 2x2 blocks of `values` ((h, w) or (h, w, 3)) as (height, width) blocks
    (a miptex's sides are multiples of 16: every level has whole blocks)."""
    top, bottom = values[0 : height * 2 : 2], values[1 : height * 2 : 2]
    even, odd = slice(0, width * 2, 2), slice(1, width * 2, 2)
    total = top[:, even] + top[:, odd]
    total += bottom[:, even]
    total += bottom[:, odd]
    return total  # type: ignore[no-any-return]


def mip_allowed(name: str, transparent: int | None, glowing: bool, own_palette: bool) -> np.ndarray:
    """The entries a texture's smaller mips may use: not its transparent index, not a sky's
    clear 0, and fullbrights (224-255) only for a texture that glows or has its own palette."""
    import numpy as np

    allowed = np.ones(256, dtype=bool)
    if not (glowing or own_palette):
        allowed[FULLBRIGHT_ENTRIES:] = False
    if transparent is not None:
        allowed[transparent] = False
    if name.lower().startswith("sky"):
        allowed[0] = False
    return allowed
