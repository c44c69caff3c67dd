"""Mapping true-colour pictures to a 256-colour palette the way the eye sees it: sRGB to CIELAB
(D65), nearest palette colour by CIELAB distance, optional Floyd-Steinberg dithering (Pillow's),
and the CIEDE2000 colour difference that `texture build` reports for each texture.

CIEDE2000 follows G. Sharma, W. Wu, E. N. Dalal, "The CIEDE2000 color-difference formula:
implementation notes, supplementary test data, and mathematical observations", Color Research
and Application 30 (2005): the tests check the paper's 34 reference pairs to four decimals.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import numpy as np

# sRGB (IEC 61966-2-1) to CIE XYZ, and the D65 white point the sRGB primaries are defined against.
SRGB_TO_XYZ = (
    (0.4124564, 0.3575761, 0.1804375),
    (0.2126729, 0.7151522, 0.0721750),
    (0.0193339, 0.1191920, 0.9503041),
)
WHITE_D65 = (0.95047, 1.0, 1.08883)
# Rows of pixels mapped per block: the (rows x palette) distance table stays in the CPU cache.
BLOCK = 256


def srgb_to_lab(rgb: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of 8-bit sRGB colours: (..., 3) uint8 in, (..., 3) float64 out."""
    import numpy as np

    values = np.arange(256, dtype=np.float64) / 255.0
    # The sRGB transfer curve as a 256-entry table: exact for 8-bit input, no per-pixel powers.
    linear_table = np.where(values <= 0.04045, values / 12.92, ((values + 0.055) / 1.055) ** 2.4)
    linear = linear_table[np.asarray(rgb, dtype=np.uint8)]
    xyz = linear @ np.asarray(SRGB_TO_XYZ).T / np.asarray(WHITE_D65)
    epsilon = (6.0 / 29.0) ** 3
    scaled = np.where(xyz > epsilon, np.cbrt(xyz), xyz / (3 * (6.0 / 29.0) ** 2) + 4.0 / 29.0)
    lab = np.empty(xyz.shape, dtype=np.float64)
    lab[..., 0] = 116.0 * scaled[..., 1] - 16.0
    lab[..., 1] = 500.0 * (scaled[..., 0] - scaled[..., 1])
    lab[..., 2] = 200.0 * (scaled[..., 1] - scaled[..., 2])
    return lab


def ciede2000(lab1: np.ndarray, lab2: np.ndarray) -> np.ndarray:
    """The CIEDE2000 difference (kL = kC = kH = 1) between CIELAB colours, element-wise over the
    last axis of two arrays of the same shape."""
    import numpy as np

    lab1 = np.asarray(lab1, dtype=np.float64)
    lab2 = np.asarray(lab2, dtype=np.float64)
    l1, a1, b1 = lab1[..., 0], lab1[..., 1], lab1[..., 2]
    l2, a2, b2 = lab2[..., 0], lab2[..., 1], lab2[..., 2]
    seventh = 25.0**7
    chroma_mean = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2.0
    g = 0.5 * (1.0 - np.sqrt(chroma_mean**7 / (chroma_mean**7 + seventh)))
    a1p, a2p = (1.0 + g) * a1, (1.0 + g) * a2
    c1p, c2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    # Hue angles in degrees, 0 for a neutral colour (a' = b = 0: atan2 gives 0 there too).
    h1p = np.degrees(np.arctan2(b1, a1p)) % 360.0
    h2p = np.degrees(np.arctan2(b2, a2p)) % 360.0
    neutral = (c1p * c2p) == 0
    delta_l = l2 - l1
    delta_c = c2p - c1p
    difference = h2p - h1p
    delta_h = np.where(
        difference > 180.0, difference - 360.0, np.where(difference < -180.0, difference + 360.0, difference)
    )
    delta_h = np.where(neutral, 0.0, delta_h)
    delta_big_h = 2.0 * np.sqrt(c1p * c2p) * np.sin(np.radians(delta_h) / 2.0)
    l_mean = (l1 + l2) / 2.0
    c_mean = (c1p + c2p) / 2.0
    total = h1p + h2p
    h_mean = np.where(
        np.abs(h1p - h2p) <= 180.0, total / 2.0, np.where(total < 360.0, (total + 360.0) / 2.0, (total - 360.0) / 2.0)
    )
    h_mean = np.where(neutral, total, h_mean)
    t = (
        1.0
        - 0.17 * np.cos(np.radians(h_mean - 30.0))
        + 0.24 * np.cos(np.radians(2.0 * h_mean))
        + 0.32 * np.cos(np.radians(3.0 * h_mean + 6.0))
        - 0.20 * np.cos(np.radians(4.0 * h_mean - 63.0))
    )
    delta_theta = 30.0 * np.exp(-(((h_mean - 275.0) / 25.0) ** 2))
    r_c = 2.0 * np.sqrt(c_mean**7 / (c_mean**7 + seventh))
    s_l = 1.0 + 0.015 * (l_mean - 50.0) ** 2 / np.sqrt(20.0 + (l_mean - 50.0) ** 2)
    s_c = 1.0 + 0.045 * c_mean
    s_h = 1.0 + 0.015 * c_mean * t
    r_t = -np.sin(np.radians(2.0 * delta_theta)) * r_c
    term_c = delta_c / s_c
    term_h = delta_big_h / s_h
    return np.asarray(np.sqrt((delta_l / s_l) ** 2 + term_c**2 + term_h**2 + r_t * term_c * term_h))


def nearest_lab(rgb: np.ndarray, palette: bytes, allowed: np.ndarray) -> np.ndarray:
    """For each 8-bit RGB row of `rgb` (n, 3), the index of the allowed palette entry nearest in
    CIELAB (the first entry wins a tie, so an exact colour keeps its first entry).
    |c - p|² = |c|² - 2c·p + |p|², and |c|² is the same for every p: one matrix product per block."""
    import numpy as np

    colours = np.frombuffer(palette, dtype=np.uint8).reshape(256, 3)
    candidates = np.flatnonzero(allowed)
    choices = srgb_to_lab(colours[candidates])
    squares = (choices**2).sum(axis=1)
    twice = (-2.0 * choices.T).copy()
    lab = srgb_to_lab(rgb)
    result = np.empty(len(rgb), dtype=np.uint8)
    for start in range(0, len(rgb), BLOCK):
        distance = lab[start : start + BLOCK] @ twice
        distance += squares
        result[start : start + BLOCK] = candidates[distance.argmin(axis=1)]
    return result


def map_colours(rgb: np.ndarray, palette: bytes, allowed: np.ndarray) -> np.ndarray:
    """Palette indices for (h, w, 3) uint8 pixels, each its nearest allowed entry in CIELAB; each
    distinct colour is looked up once."""
    import numpy as np

    height, width = rgb.shape[:2]
    packed = (rgb[..., 0].astype(np.uint32) << 16 | rgb[..., 1].astype(np.uint32) << 8 | rgb[..., 2]).ravel()
    unique, inverse = np.unique(packed, return_inverse=True)
    columns = np.stack([(unique >> 16) & 255, (unique >> 8) & 255, unique & 255], axis=1).astype(np.uint8)
    return nearest_lab(columns, palette, allowed)[inverse].reshape(height, width)


def dither_colours(rgb: np.ndarray, palette: bytes, allowed: np.ndarray) -> np.ndarray:
    """Palette indices for (h, w, 3) uint8 pixels by Floyd-Steinberg error diffusion over the
    allowed entries only (Pillow's, which measures distance in RGB)."""
    import numpy as np
    from PIL import Image

    colours = np.frombuffer(palette, dtype=np.uint8).reshape(256, 3)
    candidates = np.flatnonzero(allowed)
    # Pillow takes a whole 256-entry palette: the allowed colours first, the rest copies of the
    # first allowed one, mapped back to it below.
    table = np.repeat(colours[candidates[:1]], 256, axis=0)
    table[: len(candidates)] = colours[candidates]
    back = np.full(256, candidates[0], dtype=np.uint8)
    back[: len(candidates)] = candidates
    with Image.new("P", (1, 1)) as holder:
        holder.putpalette(table.tobytes())
        with Image.fromarray(np.ascontiguousarray(rgb), "RGB") as picture:
            with picture.quantize(palette=holder, dither=Image.Dither.FLOYDSTEINBERG) as quantised:
                indices = np.asarray(quantised)
    return np.asarray(back[indices])


def mean_error(rgb: np.ndarray, indices: np.ndarray, palette: bytes, counted: np.ndarray | None = None) -> float:
    """The mean CIEDE2000 difference between each pixel's colour and the palette colour it was
    given (`counted`: a mask of the pixels that count, e.g. the opaque ones); each distinct
    (colour, index) pair is measured once."""
    import numpy as np

    colours = np.frombuffer(palette, dtype=np.uint8).reshape(256, 3)
    pixels = rgb.reshape(-1, 3)
    chosen = indices.ravel()
    if counted is not None:
        keep = counted.ravel()
        pixels, chosen = pixels[keep], chosen[keep]
    if len(chosen) == 0:
        return 0.0
    key = (
        pixels[:, 0].astype(np.uint64) << 32
        | pixels[:, 1].astype(np.uint64) << 24
        | pixels[:, 2].astype(np.uint64) << 16
        | chosen.astype(np.uint64)
    )
    pairs, counts = np.unique(key, return_counts=True)
    source = np.stack([(pairs >> 32) & 255, (pairs >> 24) & 255, (pairs >> 16) & 255], axis=1).astype(np.uint8)
    target = colours[(pairs & 255).astype(np.intp)]
    errors = ciede2000(srgb_to_lab(source), srgb_to_lab(target))
    return float((errors * counts).sum() / counts.sum())
