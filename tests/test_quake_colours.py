"""CIEDE2000 and the CIELAB mapping `texture build` uses (formats/quake/colours.py), checked
against the 34 reference pairs published with the formula's implementation notes (G. Sharma,
W. Wu, E. N. Dalal, Color Research and Application 30, 2005, table 1)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamepak.formats.quake.colours import ciede2000, map_colours, mean_error, nearest_lab, srgb_to_lab
from gamepak.formats.quake.palette import built_in_palette

# (L1, a1, b1), (L2, a2, b2), ΔE00
SHARMA = [
    ((50.0000, 2.6772, -79.7751), (50.0000, 0.0000, -82.7485), 2.0425),
    ((50.0000, 3.1571, -77.2803), (50.0000, 0.0000, -82.7485), 2.8615),
    ((50.0000, 2.8361, -74.0200), (50.0000, 0.0000, -82.7485), 3.4412),
    ((50.0000, -1.3802, -84.2814), (50.0000, 0.0000, -82.7485), 1.0000),
    ((50.0000, -1.1848, -84.8006), (50.0000, 0.0000, -82.7485), 1.0000),
    ((50.0000, -0.9009, -85.5211), (50.0000, 0.0000, -82.7485), 1.0000),
    ((50.0000, 0.0000, 0.0000), (50.0000, -1.0000, 2.0000), 2.3669),
    ((50.0000, -1.0000, 2.0000), (50.0000, 0.0000, 0.0000), 2.3669),
    ((50.0000, 2.4900, -0.0010), (50.0000, -2.4900, 0.0009), 7.1792),
    ((50.0000, 2.4900, -0.0010), (50.0000, -2.4900, 0.0010), 7.1792),
    ((50.0000, 2.4900, -0.0010), (50.0000, -2.4900, 0.0011), 7.2195),
    ((50.0000, 2.4900, -0.0010), (50.0000, -2.4900, 0.0012), 7.2195),
    ((50.0000, -0.0010, 2.4900), (50.0000, 0.0009, -2.4900), 4.8045),
    ((50.0000, -0.0010, 2.4900), (50.0000, 0.0010, -2.4900), 4.8045),
    ((50.0000, -0.0010, 2.4900), (50.0000, 0.0011, -2.4900), 4.7461),
    ((50.0000, 2.5000, 0.0000), (50.0000, 0.0000, -2.5000), 4.3065),
    ((50.0000, 2.5000, 0.0000), (73.0000, 25.0000, -18.0000), 27.1492),
    ((50.0000, 2.5000, 0.0000), (61.0000, -5.0000, 29.0000), 22.8977),
    ((50.0000, 2.5000, 0.0000), (56.0000, -27.0000, -3.0000), 31.9030),
    ((50.0000, 2.5000, 0.0000), (58.0000, 24.0000, 15.0000), 19.4535),
    ((50.0000, 2.5000, 0.0000), (50.0000, 3.1736, 0.5854), 1.0000),
    ((50.0000, 2.5000, 0.0000), (50.0000, 3.2972, 0.0000), 1.0000),
    ((50.0000, 2.5000, 0.0000), (50.0000, 1.8634, 0.5757), 1.0000),
    ((50.0000, 2.5000, 0.0000), (50.0000, 3.2592, 0.3350), 1.0000),
    ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    ((63.0109, -31.0961, -5.8663), (62.8187, -29.7946, -4.0864), 1.2630),
    ((61.2901, 3.7196, -5.3901), (61.4292, 2.2480, -4.9620), 1.8731),
    ((35.0831, -44.1164, 3.7933), (35.0232, -40.0716, 1.5901), 1.8645),
    ((22.7233, 20.0904, -46.6940), (23.0331, 14.9730, -42.5619), 2.0373),
    ((36.4612, 47.8580, 18.3852), (36.2715, 50.5065, 21.2231), 1.4146),
    ((90.8027, -2.0831, 1.4410), (91.1528, -1.6435, 0.0447), 1.4441),
    ((90.9257, -0.5406, -0.9208), (88.6381, -0.8985, -0.7239), 1.5381),
    ((6.7747, -0.2908, -2.4247), (5.8714, -0.0985, -2.2286), 0.6377),
    ((2.0776, 0.0795, -1.1350), (0.9033, -0.0636, -0.5514), 0.9082),
]


def test_the_published_reference_pairs_to_four_decimals() -> None:
    first = np.array([pair[0] for pair in SHARMA])
    second = np.array([pair[1] for pair in SHARMA])
    expected = np.array([pair[2] for pair in SHARMA])
    assert np.abs(ciede2000(first, second) - expected).max() < 5e-5
    assert np.abs(ciede2000(second, first) - expected).max() < 5e-5  # symmetric, hue wrap included


def test_srgb_to_lab_of_known_colours() -> None:
    lab = srgb_to_lab(np.array([[255, 255, 255], [0, 0, 0], [255, 0, 0], [128, 128, 128]], dtype=np.uint8))
    assert np.allclose(lab[0], (100, 0, 0), atol=1e-3)
    assert np.allclose(lab[1], (0, 0, 0), atol=1e-9)
    assert np.allclose(lab[2], (53.2408, 80.0925, 67.2032), atol=1e-3)  # sRGB red, D65
    assert np.allclose(lab[3], (53.585, 0, 0), atol=1e-2)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(*[st.integers(0, 255)] * 3), min_size=1, max_size=30))
def test_nearest_lab_is_the_smallest_lab_distance_and_keeps_exact_colours(colours: list[tuple[int, int, int]]) -> None:
    palette = built_in_palette()
    table = np.frombuffer(palette, dtype=np.uint8).reshape(256, 3)
    rgb = np.array(colours, dtype=np.uint8)
    allowed = np.ones(256, dtype=bool)
    allowed[224:] = False
    chosen = nearest_lab(rgb, palette, allowed)
    assert (chosen < 224).all()
    lab, lab_table = srgb_to_lab(rgb), srgb_to_lab(table[:224])
    distances = ((lab[:, None, :] - lab_table[None, :, :]) ** 2).sum(axis=2)
    assert np.allclose(distances[np.arange(len(rgb)), chosen], distances.min(axis=1), atol=1e-6)
    # A palette colour maps to itself (its first entry).
    exact = table[rgb[:, 0] % 224]
    again = nearest_lab(exact, palette, allowed)
    assert (table[again] == exact).all()


def test_mean_error_weights_each_pixel() -> None:
    palette = built_in_palette()
    table = np.frombuffer(palette, dtype=np.uint8).reshape(256, 3)
    rgb = np.zeros((2, 2, 3), dtype=np.uint8)
    rgb[:] = table[5]
    indices = np.full((2, 2), 5, dtype=np.uint8)
    assert mean_error(rgb, indices, palette) == 0.0
    indices[0, 0] = 6
    one = float(ciede2000(srgb_to_lab(table[5]), srgb_to_lab(table[6])))
    assert mean_error(rgb, indices, palette) == pytest.approx(one / 4)
    counted = np.array([[True, False], [False, False]])
    assert mean_error(rgb, indices, palette, counted) == pytest.approx(one)
    assert mean_error(rgb, indices, palette, np.zeros((2, 2), dtype=bool)) == 0.0


def test_cielab_nearest_beats_rgb_nearest_in_ciede2000() -> None:
    """The reason for mapping in CIELAB: over many random colours its mean CIEDE2000 error is
    lower than plain RGB distance gives."""
    from gamepak.formats.quake.images import from_rgba

    palette = built_in_palette()
    rng = np.random.default_rng(7)
    rgb = rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)
    allowed = np.ones(256, dtype=bool)
    allowed[224:] = False
    perceptual = map_colours(rgb, palette, allowed)
    plain = from_rgba(np.dstack([rgb, np.full((64, 64), 255, np.uint8)]), palette, None, fullbright=False)
    assert mean_error(rgb, perceptual, palette) < 0.95 * mean_error(rgb, plain, palette)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(*[st.integers(0, 255)] * 3), min_size=1, max_size=40), st.booleans())
def test_cell_nearest_keeps_palette_colours_and_takes_the_cells_nearest(
    colours: list[tuple[int, int, int]], glowing: bool
) -> None:
    from gamepak.formats.quake.colours import CELL_SHIFT, cell_nearest

    palette = built_in_palette()
    table = np.frombuffer(palette, dtype=np.uint8).reshape(256, 3)
    allowed = np.ones(256, dtype=bool)
    allowed[255] = False
    if not glowing:
        allowed[224:] = False
    rgb = np.array(colours, dtype=np.uint8)
    chosen = cell_nearest(rgb, palette, allowed)
    assert allowed[chosen].all()
    held = {tuple(int(v) for v in table[index]): index for index in reversed(np.flatnonzero(allowed))}
    side = 1 << CELL_SHIFT
    for colour, index in zip(rgb, chosen, strict=True):
        key = tuple(int(v) for v in colour)
        if key in held:
            assert index == held[key]  # a palette colour keeps its first allowed entry
        else:
            centre = ((colour.astype(int) >> CELL_SHIFT) * side + side // 2).astype(np.uint8)[None, :]
            assert index == nearest_lab(centre, palette, allowed)[0]


def test_mips_from_average_blocks_and_keep_clear_ones() -> None:
    from gamepak.formats.quake.colours import mips_from

    palette = built_in_palette()
    allowed = np.ones(256, dtype=bool)
    allowed[224:] = False
    indices = np.full((16, 16), 40, dtype=np.uint8)
    indices[:8, :8] = 255  # a clear quarter
    mips = mips_from(indices, palette, 255, allowed)
    assert [len(mip) for mip in mips] == [64, 16, 4]
    mip1 = np.frombuffer(mips[0], dtype=np.uint8).reshape(8, 8)
    assert (mip1[:4, :4] == 255).all() and (mip1[4:, :] == 40).all() and (mip1[:4, 4:] == 40).all()


def test_the_vector_form_matches_the_angle_form() -> None:
    """`ciede2000` works without hue angles; the paper's angle form (kept for exactly opposite
    hues) must give the same, in float64 and float32, hue wraps, neutrals and opposites included."""
    from gamepak.formats.quake.colours import _ciede2000_angles

    rng = np.random.default_rng(47)
    first = np.column_stack([rng.uniform(0, 100, 20000), rng.uniform(-110, 110, (20000, 2))])
    second = np.column_stack([rng.uniform(0, 100, 20000), rng.uniform(-110, 110, (20000, 2))])
    second[:5000] = first[:5000] + rng.uniform(-2, 2, (5000, 3))  # close pairs: ΔH' cancels
    first[::9, 1:] = 0.0  # neutral
    second[::11, 1:] = -first[::11, 1:]  # opposite hues, mean hue undecided
    hue = np.radians(rng.uniform(180, 360, 2000))  # around 275°, where the rotation term lives
    first[-2000:, 1], first[-2000:, 2] = 40 * np.cos(hue), 40 * np.sin(hue)
    second[-2000:, 1], second[-2000:, 2] = 38 * np.cos(hue + 0.2), 38 * np.sin(hue + 0.2)
    # Mean hues around 95°, opposite 275°: where 1 + cos(h - 275°) cancels.
    hue = np.radians(rng.uniform(40, 110, 2000))
    first[-4000:-2000, 1], first[-4000:-2000, 2] = 50 * np.cos(hue), 50 * np.sin(hue)
    second[-4000:-2000, 1], second[-4000:-2000, 2] = 45 * np.cos(hue + 0.7), 45 * np.sin(hue + 0.7)
    expected = _ciede2000_angles(first, second)
    assert np.abs(ciede2000(first, second) - expected).max() < 1e-6
    # Exactly opposite hues are ill-conditioned (the formula jumps there): float32 against float32.
    first32, second32 = first.astype(np.float32), second.astype(np.float32)
    single = ciede2000(first32, second32)
    assert single.dtype == np.float32
    assert np.abs(single - _ciede2000_angles(first32, second32)).max() < 5e-3


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(*[st.integers(0, 255)] * 6), min_size=1, max_size=40))
def test_pixel_lab_and_ciede2000_agree_with_the_reference(pairs: list[tuple[int, ...]]) -> None:
    from gamepak.formats.quake.colours import _ciede2000_angles, _pixel_lab_planes

    values = np.array(pairs, dtype=np.uint8)
    lab = srgb_to_lab(values[:, :3])
    fast = np.stack(_pixel_lab_planes(values[:, :3]), axis=-1)
    assert np.abs(fast - lab).max() < 2e-4
    other = srgb_to_lab(values[:, 3:])
    assert np.abs(ciede2000(lab, other) - _ciede2000_angles(lab, other)).max() < 1e-6


def test_dithering_does_not_depend_on_what_was_dithered_before() -> None:
    """`dither_colours` keeps one Pillow palette (and its colour cache) per palette: a picture
    dithers the same first or after others."""
    from gamepak.formats.quake.colours import _dither_palette, dither_colours

    palette = built_in_palette()
    allowed = np.ones(256, dtype=bool)
    allowed[224:] = False
    rng = np.random.default_rng(9)
    first, second = (rng.integers(0, 256, (32, 32, 3)).astype(np.uint8) for _ in range(2))
    _dither_palette.cache_clear()
    alone = dither_colours(second, palette, allowed)
    _dither_palette.cache_clear()
    dither_colours(first, palette, allowed)
    after = dither_colours(second, palette, allowed)
    assert (alone == after).all()
    assert allowed[alone].all()  # only allowed entries


def test_dithering_rgba_pixels_is_dithering_their_rgb() -> None:
    """RGBA pixels go to Pillow as RGBX (alpha skipped): the same indices as their RGB alone,
    whatever the alpha, and a non-contiguous picture too."""
    from gamepak.formats.quake.colours import dither_colours

    palette = built_in_palette()
    allowed = np.ones(256, dtype=bool)
    allowed[224:] = False
    rng = np.random.default_rng(10)
    rgba = rng.integers(0, 256, (48, 80, 4)).astype(np.uint8)
    rgb = np.ascontiguousarray(rgba[..., :3])
    want = dither_colours(rgb, palette, allowed)
    assert want.shape == (48, 80)
    assert (dither_colours(rgba, palette, allowed) == want).all()
    assert (dither_colours(rgba[..., :3], palette, allowed) == want).all()
    flipped = rgba[::-1]
    assert (dither_colours(flipped, palette, allowed) == dither_colours(rgb[::-1].copy(), palette, allowed)).all()


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from([(16, 16), (32, 16), (16, 48)]),
    st.sampled_from([None, 255]),
)
def test_mips_are_the_rounded_block_means(seed: int, shape: tuple[int, int], transparent: int | None) -> None:
    """Each mip texel: the mean colour of its 2^k block of mip 0, rounded half to even, mapped
    by `cell_nearest`; a block at least half clear stays clear (computed here with float means)."""
    from gamepak.formats.quake.colours import cell_nearest, mips_from

    palette = built_in_palette()
    table = np.frombuffer(palette, dtype=np.uint8).reshape(256, 3)
    allowed = np.ones(256, dtype=bool)
    allowed[224:] = False
    rng = np.random.default_rng(seed)
    # Few distinct entries (one of them 255, clear when `transparent`), so that block means
    # often land on .5 and blocks are often exactly half clear.
    indices = rng.choice(np.append(rng.integers(0, 255, 2), 255), shape).astype(np.uint8)
    mips = mips_from(indices, palette, transparent, allowed)
    for level, mip in enumerate(mips, start=1):
        side = 2**level
        height, width = shape[0] // side, shape[1] // side
        blocks = table[indices].astype(np.float64).reshape(height, side, width, side, 3)
        expected = cell_nearest(np.rint(blocks.mean(axis=(1, 3))).astype(np.uint8).reshape(-1, 3), palette, allowed)
        expected = expected.reshape(height, width)
        if transparent is not None:
            clear = (indices == transparent).reshape(height, side, width, side).mean(axis=(1, 3))
            expected[clear >= 0.5] = transparent
        assert (np.frombuffer(mip, dtype=np.uint8).reshape(height, width) == expected).all()
