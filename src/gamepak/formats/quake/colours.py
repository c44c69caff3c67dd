"""Mapping true-colour pictures to a 256-colour palette the way the eye sees it: sRGB to CIELAB
(D65), nearest palette colour by CIELAB distance, optional Floyd-Steinberg dithering (Pillow's),
and the CIEDE2000 colour difference that `texture build` reports for each texture.

CIEDE2000 follows G. Sharma, W. Wu, E. N. Dalal, "The CIEDE2000 color-difference formula:
implementation notes, supplementary test data, and mathematical observations", Color Research
and Application 30 (2005): the tests check the paper's 34 reference pairs to four decimals.
"""

from __future__ import annotations

import functools
import math

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import numpy as np

# sRGB (IEC 61966-2-1) to CIE XYZ, and the D65 white point the sRGB primaries are defined against.
SRGB_TO_XYZ = (
    (0.4124564, 0.3575761, 0.1804375),
    (0.2126729, 0.7151522, 0.0721750),
    (0.0193339, 0.1191920, 0.9503041),
)
WHITE_D65 = (0.95047, 1.0, 1.08883)
TWO_PI = 2.0 * math.pi
COS_30, SIN_30 = math.cos(math.radians(30)), math.sin(math.radians(30))
COS_6, SIN_6 = math.cos(math.radians(6)), math.sin(math.radians(6))
COS_63, SIN_63 = math.cos(math.radians(63)), math.sin(math.radians(63))
RADIANS_275, RADIANS_25 = math.radians(275), math.radians(25)
COS_275, SIN_275 = math.cos(RADIANS_275), math.sin(RADIANS_275)
RADIANS_85 = math.radians(85)
# Quake's fullbright colours start here (formats.quake.palette.FULLBRIGHT_START, not imported:
# this module needs nothing of the palette files).
FULLBRIGHT_ENTRIES = 224
# Rows of pixels mapped per block: the (rows x palette) distance table stays in the CPU cache.
BLOCK = 256


def srgb_to_lab(rgb: np.ndarray, dtype: str = "float64") -> np.ndarray:
    """CIELAB (D65) of 8-bit sRGB colours: (..., 3) uint8 in, (..., 3) floats of `dtype` out
    (float32 where speed matters more than the fifth digit)."""
    import numpy as np

    values = np.arange(256, dtype=np.float64) / 255.0
    # The sRGB transfer curve as a 256-entry table: exact for 8-bit input, no per-pixel powers;
    # the matrix and the white point folded in, so XYZ/white is one product.
    linear_table = np.where(values <= 0.04045, values / 12.92, ((values + 0.055) / 1.055) ** 2.4).astype(dtype)
    linear = linear_table[np.asarray(rgb, dtype=np.uint8)]
    matrix = (np.asarray(SRGB_TO_XYZ) / np.asarray(WHITE_D65)[:, None]).T.astype(dtype)
    xyz = linear @ matrix
    epsilon = (6.0 / 29.0) ** 3
    scaled = np.cbrt(xyz)
    low = xyz <= epsilon
    if low.any():
        scaled[low] = xyz[low] / (3 * (6.0 / 29.0) ** 2) + 4.0 / 29.0
    lab = np.empty(xyz.shape, dtype=dtype)
    lab[..., 0] = 116.0 * scaled[..., 1] - 16.0
    lab[..., 1] = 500.0 * (scaled[..., 0] - scaled[..., 1])
    lab[..., 2] = 200.0 * (scaled[..., 1] - scaled[..., 2])
    return lab


@functools.lru_cache(maxsize=8)
def palette_lab(palette: bytes) -> np.ndarray:
    """The CIELAB colours (float32) of a 768-byte palette, computed once per palette."""
    import numpy as np

    lab = srgb_to_lab(np.frombuffer(palette, dtype=np.uint8).reshape(-1, 3), "float32")
    lab.flags.writeable = False
    return lab


def ciede2000(lab1: np.ndarray, lab2: np.ndarray) -> np.ndarray:
    """The CIEDE2000 difference (kL = kC = kH = 1) between CIELAB colours, element-wise over the
    last axis of two arrays of the same shape (float32 for float32 inputs, else float64)."""
    import numpy as np

    # The formula's hue angles cost two arctan2 and five more trigonometric calls an element
    # (most of `texture build`'s time, numpy's arctan2 being scalar code): the same quantities
    # come from the unit hue vectors u = (a', b) / C' instead. |ΔH'| = sqrt(C1'C2') |u1 - u2|
    # (2 sin(Δh/2) is the chord), its sign that of the cross product; the mean hue is the
    # direction of u1 + u2; its angle from 275° (only the rotation term needs an angle) is
    # 2 arcsin of the half angle's sine.
    dtype = np.float32 if np.asarray(lab1).dtype == np.float32 == np.asarray(lab2).dtype else np.float64
    lab1 = np.asarray(lab1, dtype=dtype)
    lab2 = np.asarray(lab2, dtype=dtype)
    # Each channel contiguous: numpy's vector loops skip strided arrays.
    first = (lab1[..., 0].copy(), lab1[..., 1].copy(), lab1[..., 2].copy())
    second = (lab2[..., 0].copy(), lab2[..., 1].copy(), lab2[..., 2].copy())
    return _ciede2000_planes(first, second, dtype)


Planes = tuple["np.ndarray", "np.ndarray", "np.ndarray"]


def _ciede2000_planes(first: Planes, second: Planes, dtype: type) -> np.ndarray:
    """`ciede2000` of colours given as contiguous L, a and b arrays of `dtype`."""
    import numpy as np

    (l1, a1, b1), (l2, a2, b2) = first, second
    seventh = dtype(25.0**7)
    chroma_mean = (np.sqrt(a1 * a1 + b1 * b1) + np.sqrt(a2 * a2 + b2 * b2)) * dtype(0.5)
    chroma_mean_7 = _seventh_power(chroma_mean)
    stretch = dtype(1.5) - dtype(0.5) * np.sqrt(chroma_mean_7 / (chroma_mean_7 + seventh))  # 1 + G
    a1p, a2p = stretch * a1, stretch * a2
    c1p, c2p = np.sqrt(a1p * a1p + b1 * b1), np.sqrt(a2p * a2p + b2 * b2)
    # Unit hue vectors; a neutral colour's is zero (0 times 1/tiny), which makes the mean hue
    # the other's (the formula adds a hue of 0) and ΔH' zero.
    tiny = np.finfo(dtype).tiny
    inverse1 = dtype(1.0) / np.maximum(c1p, tiny)
    inverse2 = dtype(1.0) / np.maximum(c2p, tiny)
    u1a, u1b, u2a, u2b = a1p * inverse1, b1 * inverse1, a2p * inverse2, b2 * inverse2
    chord_a, chord_b = u1a - u2a, u1b - u2b
    delta_big_h = np.sqrt(c1p * c2p) * np.sqrt(chord_a * chord_a + chord_b * chord_b)
    delta_big_h = np.copysign(delta_big_h, u1a * u2b - u1b * u2a + dtype(0.0))
    sum_a, sum_b = u1a + u2a, u1b + u2b
    length = np.sqrt(sum_a * sum_a + sum_b * sum_b)
    # Two neutral colours leave no direction (cos = sin = 0): ΔH' is 0 then, and T with it.
    inverse = dtype(1.0) / np.maximum(length, tiny)
    cos1, sin1 = sum_a * inverse, sum_b * inverse
    # T's four cosines from cos h and sin h by the multiple-angle identities.
    cos2, sin2 = dtype(2.0) * cos1 * cos1 - dtype(1.0), dtype(2.0) * sin1 * cos1
    cos3, sin3 = cos1 * (dtype(2.0) * cos2 - dtype(1.0)), sin1 * (dtype(2.0) * cos2 + dtype(1.0))
    cos4, sin4 = dtype(2.0) * cos2 * cos2 - dtype(1.0), dtype(2.0) * sin2 * cos2
    t = (
        dtype(1.0)
        - dtype(0.17) * (cos1 * dtype(COS_30) + sin1 * dtype(SIN_30))
        + dtype(0.24) * cos2
        + dtype(0.32) * (cos3 * dtype(COS_6) - sin3 * dtype(SIN_6))
        - dtype(0.20) * (cos4 * dtype(COS_63) + sin4 * dtype(SIN_63))
    )
    # The mean hue's offset from 275° in (-180°, 180°]: cos and sin of it, then twice the arcsine
    # of its half angle's sine.
    cos_off = cos1 * dtype(COS_275) + sin1 * dtype(SIN_275)
    sin_off = sin1 * dtype(COS_275) - cos1 * dtype(SIN_275)
    half = sin_off / np.sqrt(np.maximum(dtype(2.0) * (dtype(1.0) + cos_off), tiny))
    offset = dtype(2.0) * np.arcsin(np.minimum(np.maximum(half, dtype(-1.0)), dtype(1.0)))
    # The mean hue lies in [0°, 360°): an offset of 85° or more is really one of -275° or less;
    # past 120° (cos < -0.5: where 1 + cos cancels) the term below is under 1e-10: none.
    far = (offset >= dtype(RADIANS_85)) | (cos_off < dtype(-0.5))
    offset = np.where(far, dtype(np.pi), offset)
    l_mean_50 = (l1 + l2) * dtype(0.5) - dtype(50.0)
    c_mean = (c1p + c2p) * dtype(0.5)
    c_mean_7 = _seventh_power(c_mean)
    scaled = offset / dtype(RADIANS_25)
    delta_theta = dtype(np.pi / 6.0) * np.exp(-(scaled * scaled))
    r_t = -np.sin(dtype(2.0) * delta_theta) * dtype(2.0) * np.sqrt(c_mean_7 / (c_mean_7 + seventh))
    s_l = dtype(1.0) + dtype(0.015) * l_mean_50 * l_mean_50 / np.sqrt(dtype(20.0) + l_mean_50 * l_mean_50)
    term_l = (l2 - l1) / s_l
    term_c = (c2p - c1p) / (dtype(1.0) + dtype(0.045) * c_mean)
    term_h = delta_big_h / (dtype(1.0) + dtype(0.015) * c_mean * t)
    square = term_l * term_l + term_c * term_c + term_h * term_h + r_t * term_c * term_h
    result = np.sqrt(np.maximum(square, dtype(0.0)))
    # Nearly opposite hues (u1 + u2 nearly cancels): its direction is noise, and at exactly
    # 180° the formula picks one side itself; the angle form answers for those.
    opposite = (length < (1e-3 if dtype is np.float32 else 1e-9)) & (c1p * c2p > 0)
    if opposite.any():
        result[opposite] = _ciede2000_angles(
            np.stack([plane[opposite] for plane in first], axis=-1),
            np.stack([plane[opposite] for plane in second], axis=-1),
        )
    return np.asarray(result)


def _ciede2000_angles(lab1: np.ndarray, lab2: np.ndarray) -> np.ndarray:
    """`ciede2000` as the paper writes it, with hue angles (the reference the fast form is
    tested against, and its answer for exactly opposite hues)."""
    import numpy as np

    # float32 inputs stay float32 (the summary's two decimals); anything else is float64.
    dtype = np.float32 if np.asarray(lab1).dtype == np.float32 == np.asarray(lab2).dtype else np.float64
    lab1 = np.asarray(lab1, dtype=dtype)
    lab2 = np.asarray(lab2, dtype=dtype)
    l1, a1, b1 = lab1[..., 0], lab1[..., 1], lab1[..., 2]
    l2, a2, b2 = lab2[..., 0], lab2[..., 1], lab2[..., 2]
    seventh = 25.0**7
    chroma_mean = (np.sqrt(a1 * a1 + b1 * b1) + np.sqrt(a2 * a2 + b2 * b2)) / 2.0
    chroma_mean_7 = _seventh_power(chroma_mean)
    g = 0.5 * (1.0 - np.sqrt(chroma_mean_7 / (chroma_mean_7 + seventh)))
    a1p, a2p = (1.0 + g) * a1, (1.0 + g) * a2
    c1p, c2p = np.sqrt(a1p * a1p + b1 * b1), np.sqrt(a2p * a2p + b2 * b2)
    # Hue angles in radians in [0, 2pi), 0 for a neutral colour (atan2(0, 0) is 0 too).
    h1p = np.arctan2(b1, a1p)
    h1p = np.where(h1p < 0, h1p + TWO_PI, h1p)
    h2p = np.arctan2(b2, a2p)
    h2p = np.where(h2p < 0, h2p + TWO_PI, h2p)
    chroma_product = c1p * c2p
    neutral = chroma_product == 0
    delta_h = h2p - h1p
    delta_h = np.where(delta_h > np.pi, delta_h - TWO_PI, np.where(delta_h < -np.pi, delta_h + TWO_PI, delta_h))
    delta_h = np.where(neutral, 0.0, delta_h)
    delta_big_h = 2.0 * np.sqrt(chroma_product) * np.sin(delta_h / 2.0)
    total = h1p + h2p
    far = np.abs(h1p - h2p) > np.pi
    h_mean = np.where(far & ~neutral, np.where(total < TWO_PI, total + TWO_PI, total - TWO_PI), total)
    h_mean = np.where(neutral, h_mean, h_mean / 2.0)
    # T's four cosines from cos h and sin h by the multiple-angle identities: two trig calls, not four.
    cos1, sin1 = np.cos(h_mean), np.sin(h_mean)
    cos2, sin2 = 2.0 * cos1 * cos1 - 1.0, 2.0 * sin1 * cos1
    cos3, sin3 = cos1 * (2.0 * cos2 - 1.0), sin1 * (2.0 * cos2 + 1.0)
    cos4, sin4 = 2.0 * cos2 * cos2 - 1.0, 2.0 * sin2 * cos2
    t = (
        1.0
        - 0.17 * (cos1 * COS_30 + sin1 * SIN_30)
        + 0.24 * cos2
        + 0.32 * (cos3 * COS_6 - sin3 * SIN_6)
        - 0.20 * (cos4 * COS_63 + sin4 * SIN_63)
    )
    l_mean_50 = (l1 + l2) / 2.0 - 50.0
    c_mean = (c1p + c2p) / 2.0
    c_mean_7 = _seventh_power(c_mean)
    delta_theta = (np.pi / 6.0) * np.exp(-(((h_mean - RADIANS_275) / RADIANS_25) ** 2))
    r_t = -np.sin(2.0 * delta_theta) * 2.0 * np.sqrt(c_mean_7 / (c_mean_7 + seventh))
    s_l = 1.0 + 0.015 * l_mean_50 * l_mean_50 / np.sqrt(20.0 + l_mean_50 * l_mean_50)
    term_l = (l2 - l1) / s_l
    term_c = (c2p - c1p) / (1.0 + 0.045 * c_mean)
    term_h = delta_big_h / (1.0 + 0.015 * c_mean * t)
    return np.asarray(np.sqrt(term_l * term_l + term_c * term_c + term_h * term_h + r_t * term_c * term_h))


def _seventh_power(values: np.ndarray) -> np.ndarray:
    """x**7 by multiplication (numpy's float power is ten times slower)."""
    square = values * values
    return square * square * square * values  # type: ignore[no-any-return]


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


def dither_colours(rgb: np.ndarray, palette: bytes, allowed: np.ndarray) -> np.ndarray:
    """Palette indices for (h, w, 3) uint8 pixels by Floyd-Steinberg error diffusion over the
    allowed entries only (Pillow's, which measures distance in RGB)."""
    import numpy as np
    from PIL import Image

    holder, back = _dither_palette(palette, np.packbits(allowed).tobytes())
    with Image.fromarray(np.ascontiguousarray(rgb), "RGB") as picture:
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
    import numpy as np

    # Pixel by pixel: real textures have nearly as many distinct colours as pixels (noise), so
    # sorting them out first (np.unique) cost more than it saved.
    pixels = rgb.reshape(-1, 3)
    chosen = indices.ravel()
    if counted is not None:
        keep = counted.ravel()
        pixels, chosen = pixels[keep], chosen[keep]
    if len(chosen) == 0:
        return 0.0
    entries = palette_lab(palette)
    target = (entries[:, 0][chosen], entries[:, 1][chosen], entries[:, 2][chosen])
    errors = _ciede2000_planes(_pixel_lab_planes(pixels), target, np.float32)
    return float(errors.sum(dtype=np.float64) / len(chosen))


@functools.lru_cache(maxsize=1)
def _lab_tables() -> tuple[np.ndarray, np.ndarray, float]:
    """For `_pixel_lab_planes`: per channel value, its linear light times each XYZ/white
    coefficient ((3, 3, 256): [output, channel, value]); a cube-root first guess table."""
    import numpy as np

    values = np.arange(256, dtype=np.float64) / 255.0
    linear = np.where(values <= 0.04045, values / 12.92, ((values + 0.055) / 1.055) ** 2.4)
    matrix = np.asarray(SRGB_TO_XYZ) / np.asarray(WHITE_D65)[:, None]
    per_channel = (matrix[:, :, None] * linear[None, None, :]).astype(np.float32)
    # XYZ/white of 8-bit sRGB lies in [0, 1] (+ rounding): guesses at bin centres of CUBE_BINS bins.
    top = 1.001
    centres = (np.arange(CUBE_BINS) + 0.5) * (top / CUBE_BINS)
    return per_channel, np.cbrt(centres).astype(np.float32), CUBE_BINS / top


CUBE_BINS = 4096


def _pixel_lab_planes(pixels: np.ndarray) -> Planes:
    """CIELAB (float32) of (n, 3) uint8 sRGB pixels as contiguous L, a and b arrays: what
    `srgb_to_lab` gives to float32 precision, faster (numpy's cbrt is scalar code: here a table
    guess and two Newton steps, each squaring the relative error: 0.5% -> 3e-5 -> 1e-9)."""
    import numpy as np

    per_channel, guesses, scale = _lab_tables()
    red, green, blue = (pixels[:, channel].astype(np.intp) for channel in range(3))
    epsilon = np.float32((6.0 / 29.0) ** 3)
    scaled = []
    for row in per_channel:
        value = row[0][red] + row[1][green] + row[2][blue]
        guess = guesses[np.minimum((value * np.float32(scale)).astype(np.intp), CUBE_BINS - 1)]
        safe = np.maximum(value, epsilon)
        for _step in range(2):
            guess = (guess + guess + safe / (guess * guess)) * np.float32(1.0 / 3.0)
        low = value <= epsilon  # near black: the straight segment of the curve
        if low.any():
            guess[low] = value[low] * np.float32(1.0 / (3 * (6.0 / 29.0) ** 2)) + np.float32(4.0 / 29.0)
        scaled.append(guess)
    x, y, z = scaled
    return y * np.float32(116.0) - np.float32(16.0), (x - y) * np.float32(500.0), (y - z) * np.float32(200.0)


# -- fast mapping: exact colours, then a per-palette cache of 4x4x4 colour cells --------------
# Pillow's own quantiser looks colours up by cell too. A cell's entry is the allowed palette
# colour nearest in CIELAB to the cell's centre, computed the first time a picture needs it and
# kept for the rest of the build (200 pictures share most of their cells).
CELL_SHIFT = 2
CELL_SIDE = 256 >> CELL_SHIFT


@functools.lru_cache(maxsize=16)
def _cell_tables(palette: bytes, allowed_key: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The lookup tables of one palette and allowed set: each cell's entry (-1: not looked up
    yet; filled in place), which cells hold an allowed palette colour, and those colours packed
    as 24-bit keys, sorted, with the first allowed entry of each."""
    import numpy as np

    allowed = np.unpackbits(np.frombuffer(allowed_key, dtype=np.uint8))[:256].astype(bool)
    table = np.frombuffer(palette, dtype=np.uint8).reshape(256, 3)
    order = np.flatnonzero(allowed)
    packed = _packed(table[order])
    keys, first = np.unique(packed, return_index=True)
    exact_cells = np.zeros(CELL_SIDE**3, dtype=bool)
    exact_cells[_cells(table[order])] = True
    return np.full(CELL_SIDE**3, -1, dtype=np.int16), exact_cells, keys, order[first].astype(np.uint8)


def _packed(columns: np.ndarray) -> np.ndarray:
    """(n, 3) uint8 colours as 24-bit keys."""
    import numpy as np

    return (columns[:, 0].astype(np.uint32) << 16) | (columns[:, 1].astype(np.uint32) << 8) | columns[:, 2]


def _cells(columns: np.ndarray) -> np.ndarray:
    """The 4x4x4 cell number of each of (n, 3) uint8 colours."""
    import numpy as np

    coarse = columns.astype(np.intp) >> CELL_SHIFT
    return (coarse[:, 0] * CELL_SIDE + coarse[:, 1]) * CELL_SIDE + coarse[:, 2]  # type: ignore[no-any-return]


def cell_nearest(columns: np.ndarray, palette: bytes, allowed: np.ndarray) -> np.ndarray:
    """For each 8-bit RGB row of `columns` (n, 3), an allowed palette index: the entry itself
    for a colour the palette holds (its first allowed entry), else the entry nearest in CIELAB
    to the centre of the colour's 4x4x4 cell."""
    import numpy as np

    cache, exact_cells, keys, lookup = _cell_tables(palette, np.packbits(allowed).tobytes())
    cells = _cells(columns)
    values = cache[cells]
    missing = values < 0
    if missing.any():
        needed = np.unique(cells[missing])
        side = 1 << CELL_SHIFT
        centres = np.stack(
            [needed // (CELL_SIDE * CELL_SIDE), (needed // CELL_SIDE) % CELL_SIDE, needed % CELL_SIDE], axis=1
        )
        cache[needed] = nearest_lab((centres * side + side // 2).astype(np.uint8), palette, allowed)
        values = cache[cells]
    result = values.astype(np.uint8)
    # Only a colour in a cell that holds a palette colour can be one: the exact test for those.
    candidates = np.flatnonzero(exact_cells[cells])
    if len(candidates):
        packed = _packed(columns[candidates])
        position = np.searchsorted(keys, packed).clip(0, len(keys) - 1)
        exact = keys[position] == packed
        result[candidates[exact]] = lookup[position[exact]]
    return result


def mips_from(
    indices: np.ndarray, palette: bytes, transparent: int | None, allowed: np.ndarray, levels: int = 3
) -> list[bytes]:
    """Mips 1..levels of a texture from its mip 0 `indices`: each texel the average colour of
    its 2x2, 4x4 or 8x8 block mapped by `cell_nearest` among `allowed` (a block at least half
    clear stays `transparent`)."""
    import numpy as np

    colours = np.frombuffer(palette, dtype=np.uint8).reshape(256, 3).astype(np.int32)
    # Sums of whole blocks in integers: the average is sum / 4^k, exact in float32 (a power of
    # two), and rounded half to even as numpy's rint does.
    sums = colours[indices]
    clear = (indices == transparent).astype(np.int32) if transparent is not None else None
    levels_rounded, shapes, clears = [], [], []
    for level in range(1, levels + 1):
        height, width = max(1, sums.shape[0] // 2), max(1, sums.shape[1] // 2)
        sums = _block_sums(sums, height, width)
        levels_rounded.append(np.rint(sums.astype(np.float32) * np.float32(0.25**level)).astype(np.uint8))
        shapes.append((height, width))
        if clear is not None:
            clear = _block_sums(clear, height, width)
            clears.append(2 * clear >= 4**level)
    # All levels mapped in one call (the lookups cost per call more than per texel here).
    mapped = cell_nearest(np.concatenate([rounded.reshape(-1, 3) for rounded in levels_rounded]), palette, allowed)
    result, start = [], 0
    for number, (height, width) in enumerate(shapes):
        mip = mapped[start : start + height * width].reshape(height, width)
        start += height * width
        if clears:
            mip[clears[number]] = transparent
        result.append(mip.tobytes())
    return result


def _block_sums(values: np.ndarray, height: int, width: int) -> np.ndarray:
    """The sums of the 2x2 blocks of `values` ((h, w) or (h, w, 3)) as (height, width) blocks
    (a miptex's sides are multiples of 16: every level has whole blocks)."""
    top, bottom = values[0 : height * 2 : 2], values[1 : height * 2 : 2]
    even, odd = slice(0, width * 2, 2), slice(1, width * 2, 2)
    return top[:, even] + top[:, odd] + bottom[:, even] + bottom[:, odd]  # type: ignore[no-any-return]


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
