"""CIELAB and the CIEDE2000 colour difference, as `texture build` measures its colour mapping.

sRGB (IEC 61966-2-1) is converted to CIELAB under D65. CIEDE2000 follows G. Sharma, W. Wu,
E. N. Dalal, "The CIEDE2000 color-difference formula: implementation notes, supplementary test
data, and mathematical observations", Color Research and Application 30 (2005): the tests check
the paper's 34 reference pairs to four decimals, in float64 and in the float32 the builds use.

A build measures every pixel of every texture (3.3 million for 200 of 128x128), so the pixel
path is written for numpy's costs here: colours come in as packed 24-bit keys (R | G << 8 |
B << 16, the little-endian view of RGBA bytes), each distinct (colour, entry) pair is measured
once when a picture repeats colours, a pixel's CIELAB comes from tables and a Newton step
instead of `np.cbrt` (scalar code), and CIEDE2000 has no trigonometric call but one `exp`.
"""

from __future__ import annotations

import functools
import math

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import SimpleNamespace

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
# CIELAB's cube-root segment starts above (6/29)^3; below it the curve is a straight line.
LAB_EPSILON = (6.0 / 29.0) ** 3
# A picture whose sample of pixels repeats colours at least this often is measured per distinct
# (colour, entry) pair; noise-like pictures (nearly one colour a pixel) pixel by pixel.
DISTINCT_SAMPLE = 1024
DISTINCT_SHARE = 0.5
# Pixels measured in one pass (`ErrorBatch`): numpy's per-call cost against the CPU cache.
BATCH_PIXELS = 32768


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
    scaled = np.cbrt(xyz)
    low = xyz <= LAB_EPSILON
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


@functools.lru_cache(maxsize=8)
def palette_lab_planes(palette: bytes) -> Planes:
    """`palette_lab` as three contiguous L, a, b arrays (what `np.take` gathers from fastest)."""
    import numpy as np

    lab = palette_lab(palette)
    planes = tuple(np.ascontiguousarray(lab[:, channel]) for channel in range(3))
    for plane in planes:
        plane.flags.writeable = False
    return planes  # type: ignore[return-value]


Planes = tuple["np.ndarray", "np.ndarray", "np.ndarray"]


def ciede2000(lab1: np.ndarray, lab2: np.ndarray) -> np.ndarray:
    """The CIEDE2000 difference (kL = kC = kH = 1) between CIELAB colours, element-wise over the
    last axis of two arrays of the same shape (float32 for float32 inputs, else float64)."""
    import numpy as np

    dtype = np.float32 if np.asarray(lab1).dtype == np.float32 == np.asarray(lab2).dtype else np.float64
    lab1, lab2 = np.broadcast_arrays(np.asarray(lab1, dtype=dtype), np.asarray(lab2, dtype=dtype))
    shape = lab1.shape[:-1]
    # Each channel contiguous and at least one-dimensional (the planes are worked in place).
    first = tuple(np.array(lab1[..., channel], dtype=dtype).reshape(-1) for channel in range(3))
    second = tuple(np.array(lab2[..., channel], dtype=dtype).reshape(-1) for channel in range(3))
    return _ciede2000_planes(first, second, dtype).reshape(shape)  # type: ignore[arg-type]


@functools.lru_cache(maxsize=2)
def _constants(dtype: type) -> SimpleNamespace:
    """The formula's constants as scalars of `dtype` (numpy converts a Python float on every
    operation; with some seventy operations a texture, that was a tenth of the time)."""
    from types import SimpleNamespace

    import numpy as np

    # T = 1 - 0.17 cos(h - 30°) + 0.24 cos 2h + 0.32 cos(3h + 6°) - 0.20 cos(4h - 63°), with the
    # multiple angles written in c = cos h and s = sin h: T = P(c) + s Q(c).
    a1, b1 = -0.17 * COS_30, -0.17 * SIN_30
    a3, b3 = 0.32 * COS_6, -0.32 * SIN_6
    a4, b4 = -0.20 * COS_63, -0.20 * SIN_63
    values = {
        "zero": 0.0,
        "half": 0.5,
        "one": 1.0,
        "one_and_half": 1.5,
        "minus_half": -0.5,
        "minus_two": -2.0,
        "fifty": 50.0,
        "twenty": 20.0,
        "k_l": 0.015,
        "k_c": 0.045,
        "seventh": 25.0**7,
        "tiny": float(np.finfo(dtype).tiny),
        "p0": 1.0 - 0.24 + a4,
        "p1": a1 - 3.0 * a3,
        "p2": 0.48 - 8.0 * a4,
        "p3": 4.0 * a3,
        "p4": 8.0 * a4,
        "q0": b1 - b3,
        "q1": -4.0 * b4,
        "q2": 4.0 * b3,
        "q3": 8.0 * b4,
        "cos_275": COS_275,
        "sin_275": SIN_275,
        "quarter_pi": math.pi / 4.0,
        "far_cos": -0.5,
        "minus_exponent_cap": -30.0,
        "chroma_floor": 1e-3,
        # The offset's eighth angle (its tangent) at 85°.
        "far_tan": math.tan(RADIANS_85 / 8.0),
        "minus_eighth_scale_squared": -((8.0 / RADIANS_25) ** 2),
        "third_pi": math.pi / 3.0,
        "third": 1.0 / 3.0,
        "opposite": 1e-3 if dtype is np.float32 else 1e-9,
    }
    # arctan u = u - u^3/3 + u^5/5 - ... for |u| <= tan 15°: to u^13 the rest is under 1e-9 of u.
    values.update({f"atan{power}": 1.0 / power for power in (3, 5, 7, 9, 11, 13)})
    # sin x for x in [0, pi/3]: to x^11 the rest is under 1e-9.
    values.update({f"sin{power}": 1.0 / math.factorial(power) for power in (3, 5, 7, 9, 11)})
    return SimpleNamespace(**{name: dtype(value) for name, value in values.items()})


def _ciede2000_planes(first: Planes, second: Planes, dtype: type) -> np.ndarray:
    """`ciede2000` of colours given as contiguous L, a and b arrays of `dtype`.

    The formula's hue angles cost two arctan2 and five more trigonometric calls an element
    (numpy's are scalar code here): the same quantities come from the unit hue vectors
    u = (a', b) / C' instead. |ΔH'| = sqrt(C1'C2') |u1 - u2| (2 sin(Δh/2) is the chord), its
    sign that of the cross product; the mean hue is the direction of u1 + u2, and T is a
    polynomial in its cosine and sine; its angle from 275° (only the rotation term needs an
    angle) is eight times the arctangent of its eighth angle's tangent, found by halving."""
    import numpy as np

    k = _constants(dtype)
    (l1, a1, b1), (l2, a2, b2) = first, second
    b1_squared, b2_squared = b1 * b1, b2 * b2
    chroma_mean = a1 * a1
    chroma_mean += b1_squared
    np.sqrt(chroma_mean, out=chroma_mean)
    other = a2 * a2
    other += b2_squared
    np.sqrt(other, out=other)
    chroma_mean += other
    chroma_mean *= k.half
    stretch = _rotation_weight(chroma_mean, k)  # sqrt(C̄^7 / (C̄^7 + 25^7))
    stretch *= k.minus_half
    stretch += k.one_and_half  # 1 + G
    a1p, a2p = stretch * a1, stretch * a2
    c1p = a1p * a1p
    c1p += b1_squared
    np.sqrt(c1p, out=c1p)
    c2p = a2p * a2p
    c2p += b2_squared
    np.sqrt(c2p, out=c2p)
    # Unit hue vectors; a neutral colour's is zero (0 times 1/tiny), which makes the mean hue
    # the other's (the formula adds a hue of 0) and ΔH' zero.
    floor1 = np.maximum(c1p, k.tiny)
    u1a = np.divide(a1p, floor1, out=a1p)
    u1b = np.divide(b1, floor1, out=floor1)
    floor2 = np.maximum(c2p, k.tiny)
    u2a = np.divide(a2p, floor2, out=a2p)
    u2b = np.divide(b2, floor2, out=floor2)
    chord = u1a - u2a
    chord *= chord
    across = u1b - u2b
    across *= across
    chord += across
    np.sqrt(chord, out=chord)
    delta_big_h = c1p * c2p
    np.sqrt(delta_big_h, out=delta_big_h)
    delta_big_h *= chord
    # The sign of ΔH' is the cross product's (a zero one's only for exact opposites, which the
    # angle form answers below).
    cross = u1a * u2b
    cross -= u1b * u2a
    np.copysign(delta_big_h, cross, out=delta_big_h)
    u1a += u2a
    u1b += u2b
    sum_a, sum_b = u1a, u1b
    length = sum_a * sum_a
    length += sum_b * sum_b
    np.sqrt(length, out=length)
    # Two neutral colours leave no direction (cos = sin = 0): ΔH' is 0 then, and T with it.
    floor = np.maximum(length, k.tiny)
    sum_a /= floor
    sum_b /= floor
    cosine, sine = sum_a, sum_b
    t = _hue_weight(cosine, sine, k)
    rotation = _rotation(cosine, sine, k)
    l_mean_50 = l1 + l2
    l_mean_50 *= k.half
    l_mean_50 -= k.fifty
    l_mean_50 *= l_mean_50
    s_l = l_mean_50 + k.twenty
    np.sqrt(s_l, out=s_l)
    np.divide(l_mean_50, s_l, out=s_l)
    s_l *= k.k_l
    s_l += k.one
    term_l = l2 - l1
    term_l /= s_l
    c_mean = c1p + c2p
    c_mean *= k.half
    s_c = c_mean * k.k_c
    s_c += k.one
    term_c = c2p - c1p
    term_c /= s_c
    t *= c_mean
    t *= k.k_l
    t += k.one
    term_h = np.divide(delta_big_h, t, out=t)
    rotation *= _rotation_weight(c_mean, k)
    rotation *= k.minus_two  # R_T
    rotation *= term_c
    rotation *= term_h
    term_l *= term_l
    rotation += term_l
    term_c *= term_c
    rotation += term_c
    term_h *= term_h
    rotation += term_h
    # No negative sum to guard against: |R_T| <= 2 sin 60°, so R_T ΔC ΔH >= -0.87 (ΔC² + ΔH²).
    result = np.sqrt(rotation, out=rotation)
    # Nearly opposite hues (u1 + u2 nearly cancels): its direction is noise, and at exactly
    # 180° the formula picks one side itself; the angle form answers for those.
    opposite = length < k.opposite
    if opposite.any():
        opposite &= (c1p > k.zero) & (c2p > k.zero)
    if opposite.any():
        result[opposite] = _ciede2000_angles(
            np.stack([plane[opposite] for plane in first], axis=-1),
            np.stack([plane[opposite] for plane in second], axis=-1),
        )
    return result


def _rotation_weight(chroma: np.ndarray, k: SimpleNamespace) -> np.ndarray:
    """sqrt(C^7 / (C^7 + 25^7)), a new array. Chromas under 1e-3 count as 1e-3: the weight is
    under 1e-15 either way, and the seventh power of a near-grey's chroma would be subnormal
    (a hundred times slower to compute with)."""
    import numpy as np

    power = _seventh_power(np.maximum(chroma, k.chroma_floor))
    denominator = power + k.seventh
    np.divide(power, denominator, out=power)
    return np.sqrt(power, out=power)


def _hue_weight(cosine: np.ndarray, sine: np.ndarray, k: SimpleNamespace) -> np.ndarray:
    """T of the mean hue h (cos h, sin h given): P(cos h) + sin h Q(cos h), a new array."""
    polynomial = cosine * k.p4
    for name in ("p3", "p2", "p1"):
        polynomial += getattr(k, name)
        polynomial *= cosine
    polynomial += k.p0
    odd = cosine * k.q3
    for name in ("q2", "q1"):
        odd += getattr(k, name)
        odd *= cosine
    odd += k.q0
    odd *= sine
    polynomial += odd
    return polynomial


def _rotation(cosine: np.ndarray, sine: np.ndarray, k: SimpleNamespace) -> np.ndarray:
    """sin(2 Δθ), Δθ = 30° exp(-((h̄ - 275°) / 25°)^2), of the mean hue h̄ (cos, sin given), a
    new array. The mean hue lies in [0°, 360°): an offset θ from 275° of 85° or more is really
    θ - 360°, and there the term is zero to float precision."""
    import numpy as np

    cos_off = cosine * k.cos_275
    cos_off += sine * k.sin_275
    sin_off = sine * k.cos_275
    sin_off -= cosine * k.sin_275
    # Past 120° (cos < -0.5) the term is under 1e-10, and 1 + cos θ below cancels: taken as zero.
    far = cos_off < k.far_cos
    # Halving the angle three times: cos(θ/2) = sqrt((1 + cos θ)/2), tan(θ/4) = sin(θ/2) /
    # (1 + cos(θ/2)) with sin(θ/2) = sin θ / (2 cos(θ/2)), tan(θ/8) = t / (1 + sqrt(1 + t^2)):
    # |θ/8| <= 15° where the term counts (|θ| < 120°), where arctan's series is short.
    cos_off *= k.half
    cos_off += k.half
    np.maximum(cos_off, k.tiny, out=cos_off)
    cos_half = np.sqrt(cos_off, out=cos_off)
    denominator = cos_half + k.one
    denominator *= cos_half
    denominator += denominator
    tangent = np.divide(sin_off, denominator, out=sin_off)  # tan(θ/4)
    root = tangent * tangent
    root += k.one
    np.sqrt(root, out=root)
    root += k.one
    tangent /= root  # tan(θ/8)
    wrapped = tangent >= k.far_tan  # θ >= 85°: θ - 360° instead
    square = np.multiply(tangent, tangent, out=root)
    series = square * k.atan13
    for power in (11, 9, 7, 5, 3):
        series = np.subtract(getattr(k, f"atan{power}"), series, out=series)
        series *= square
    series = np.subtract(k.one, series, out=series)
    series *= tangent  # θ/8
    np.subtract(series, k.quarter_pi, out=series, where=wrapped)
    exponent = series * k.minus_eighth_scale_squared
    exponent *= series  # -(θ / 25°)^2
    # Capped at -30 (e^-30: the term is then 1e-13 of the others, invisible in a float32 sum),
    # the far ones too: beyond it exp() and the sine's powers below would reach subnormal
    # floats, which cost a hundred times more.
    np.maximum(exponent, k.minus_exponent_cap, out=exponent)
    np.copyto(exponent, k.minus_exponent_cap, where=far)
    angle = np.exp(exponent, out=exponent)
    angle *= k.third_pi  # 2 Δθ, in [0, π/3]
    square = np.multiply(angle, angle, out=square)
    sine_series = square * k.sin11
    for power in (9, 7, 5, 3):
        sine_series = np.subtract(getattr(k, f"sin{power}"), sine_series, out=sine_series)
        sine_series *= square
    sine_series = np.subtract(k.one, sine_series, out=sine_series)
    sine_series *= angle
    return sine_series


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
    """x**7 by multiplication (numpy's float power is ten times slower), a new array."""
    square = values * values
    power = square * square
    power *= square
    power *= values
    return power  # type: ignore[no-any-return]


# -- pixels: packed keys to CIELAB -------------------------------------------------------------
# The cube root's first guess comes from the float32 bit pattern of its argument: exponent and
# CUBE_BITS mantissa bits index a table of the cube roots of bin centres (relative error under
# 2^-11 / 3), and one Newton step squares that error (3e-8, float32's own rounding).
CUBE_BITS = 10
CUBE_FIRST_EXPONENT = 119  # 2^-8, below LAB_EPSILON: smaller values take the straight segment


@functools.lru_cache(maxsize=1)
def _lab_tables() -> tuple[np.ndarray, tuple[tuple[np.generic, ...], ...], np.ndarray]:
    """For `_key_lab_planes`: the linear light of the 256 channel values, the sRGB-to-XYZ/white
    matrix (float32 scalars, by output), and the cube-root guess table."""
    import numpy as np

    values = np.arange(256, dtype=np.float64) / 255.0
    linear = np.where(values <= 0.04045, values / 12.92, ((values + 0.055) / 1.055) ** 2.4).astype(np.float32)
    matrix = np.asarray(SRGB_TO_XYZ) / np.asarray(WHITE_D65)[:, None]
    rows = tuple(tuple(np.float32(value) for value in row) for row in matrix)
    # XYZ/white of 8-bit sRGB lies in [0, 1] (+ rounding): exponents up to 2^0.
    bins = np.arange((128 - CUBE_FIRST_EXPONENT) << CUBE_BITS, dtype=np.int64) + (CUBE_FIRST_EXPONENT << CUBE_BITS)
    shift = 23 - CUBE_BITS
    lower = (bins << shift).astype(np.uint32).view(np.float32).astype(np.float64)
    upper = ((bins + 1) << shift).astype(np.uint32).view(np.float32).astype(np.float64)
    return linear, rows, np.cbrt((lower + upper) / 2.0).astype(np.float32)


def _key_lab_planes(keys: np.ndarray) -> Planes:
    """CIELAB (float32) of packed sRGB keys (R | G << 8 | B << 16, uint32) as contiguous L, a
    and b arrays: what `srgb_to_lab` gives, to float32 precision."""
    import numpy as np

    linear, rows, guesses = _lab_tables()
    k = _constants(np.float32)
    red = (keys & 255).astype(np.intp)
    green = (keys >> 8).astype(np.intp)
    green &= 255
    blue = (keys >> 16).astype(np.intp)
    blue &= 255
    channels = (linear.take(red), linear.take(green), linear.take(blue))
    epsilon = np.float32(LAB_EPSILON)
    scaled = []
    for row in rows:
        value = channels[0] * row[0]
        value += channels[1] * row[1]
        value += channels[2] * row[2]
        bins = value.view(np.int32) >> (23 - CUBE_BITS)
        bins -= CUBE_FIRST_EXPONENT << CUBE_BITS
        np.maximum(bins, 0, out=bins)
        guess = guesses.take(bins)
        # Newton: g' = (2g + v / g^2) / 3; near black the straight segment, chosen below.
        safe = np.maximum(value, epsilon)
        square = guess * guess
        np.divide(safe, square, out=safe)
        guess += guess
        guess += safe
        guess *= k.third
        low = value <= epsilon
        if low.any():
            guess[low] = value[low] * np.float32(1.0 / (3 * (6.0 / 29.0) ** 2)) + np.float32(4.0 / 29.0)
        scaled.append(guess)
    x, y, z = scaled
    x -= y  # a* / 500
    x *= np.float32(500.0)
    z -= y
    z *= np.float32(-200.0)  # b* = 200 (y - z)
    y *= np.float32(116.0)
    y -= np.float32(16.0)
    return y, x, z


def _pixel_lab_planes(pixels: np.ndarray) -> Planes:
    """CIELAB (float32) of (n, 3) uint8 sRGB pixels as contiguous L, a and b arrays."""
    return _key_lab_planes(pack_rgb(pixels))


def pack_rgb(pixels: np.ndarray) -> np.ndarray:
    """(n, 3) uint8 colours as packed keys R | G << 8 | B << 16 (uint32)."""
    import numpy as np

    keys = pixels[:, 2].astype(np.uint32)
    keys <<= 8
    keys |= pixels[:, 1]
    keys <<= 8
    keys |= pixels[:, 0]
    return keys


def mean_error_keys(keys: np.ndarray, chosen: np.ndarray, palette: bytes) -> float:
    """The mean CIEDE2000 difference between packed sRGB keys (uint32) and the palette entries
    `chosen` for them (uint8, same length). A picture that repeats colours is measured once
    per distinct (colour, entry) pair, weighted by how often it occurs; the result is the
    same mean (to float32 rounding) either way."""
    batch = ErrorBatch(palette)
    ticket = batch.add(keys, chosen)
    return batch.mean(ticket)


class ErrorBatch:
    """Mean CIEDE2000 errors of several pictures mapped to one palette, measured together in
    batches of about BATCH_PIXELS (some 200 numpy passes a batch: two 128x128 pictures in one
    pass cost 13% less than each alone; larger batches leave the CPU cache). `add` a picture's
    keys and entries, get a ticket; `mean(ticket)` measures what is pending and answers."""

    def __init__(self, palette: bytes) -> None:
        self.palette = palette
        self.pending: list[tuple[int, np.ndarray, np.ndarray, np.ndarray | None, int]] = []
        self.pending_pixels = 0
        self.means: list[float | None] = []

    def add(self, keys: np.ndarray, chosen: np.ndarray) -> int:
        """Queue one picture (24-bit keys, uint32; its entries, uint8); returns its ticket."""
        import numpy as np

        ticket = len(self.means)
        self.means.append(None)
        count = len(keys)
        if count == 0:
            self.means[ticket] = 0.0
            return ticket
        weights = None
        if count >= 2 * DISTINCT_SAMPLE:
            # Sorting costs as much as measuring: only for a picture whose sample repeats colours.
            sample = np.sort(keys[:: count // DISTINCT_SAMPLE])
            if np.count_nonzero(sample[1:] != sample[:-1]) < DISTINCT_SHARE * len(sample):
                pairs = chosen.astype(np.uint32)
                pairs <<= 24
                pairs |= keys
                pairs, weights = np.unique(pairs, return_counts=True)
                keys = pairs & 0xFFFFFF
                chosen = (pairs >> 24).astype(np.uint8)
        self.pending.append((ticket, keys, chosen, weights, count))
        self.pending_pixels += len(keys)
        if self.pending_pixels >= BATCH_PIXELS:
            self.flush()
        return ticket

    def mean(self, ticket: int) -> float:
        """The mean error of the picture `ticket` names (measuring what is pending first)."""
        if self.means[ticket] is None:
            self.flush()
        return self.means[ticket]  # type: ignore[return-value]

    def flush(self) -> None:
        """Measure every pending picture at once."""
        import numpy as np

        if not self.pending:
            return
        pending, self.pending, self.pending_pixels = self.pending, [], 0
        keys = np.concatenate([item[1] for item in pending]) if len(pending) > 1 else pending[0][1]
        chosen = np.concatenate([item[2] for item in pending]) if len(pending) > 1 else pending[0][2]
        lightness, green_red, blue_yellow = palette_lab_planes(self.palette)
        errors = np.empty(len(keys), dtype=np.float32)
        for start in range(0, len(keys), BATCH_PIXELS):  # a large picture in cache-sized parts
            piece = slice(start, start + BATCH_PIXELS)
            entries = chosen[piece].astype(np.intp)
            target = (lightness.take(entries), green_red.take(entries), blue_yellow.take(entries))
            errors[piece] = _ciede2000_planes(_key_lab_planes(keys[piece]), target, np.float32)
        start = 0
        for ticket, item_keys, _chosen, weights, count in pending:
            part = errors[start : start + len(item_keys)]
            start += len(item_keys)
            total = part.sum(dtype=np.float64) if weights is None else np.dot(part.astype(np.float64), weights)
            self.means[ticket] = float(total / count)
