"""`texture build`'s fast colour path (issue 47, speed): packed 24-bit keys, cached cells,
CIEDE2000 without trigonometry on float32 planes, distinct (colour, entry) pairs, mips from
packed integer sums, and RGB pictures read without a conversion pass. Each must give the same
indices and the same mean error as a straightforward per-pixel reference written here from
the rules (float64, the paper's angle form of CIEDE2000, one pixel at a time)."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from gamepak.formats.quake.ciede2000 import _ciede2000_angles, ciede2000, mean_error_keys, pack_rgb, srgb_to_lab
from gamepak.formats.quake.colours import CELL_SHIFT, dither_colours, mip_allowed, mips_from
from gamepak.formats.quake.palette import built_in_palette
from gamepak.ops.wad_build import encode_wad2, encode_wad3

PALETTE_BYTES = built_in_palette()
PALETTE = np.frombuffer(PALETTE_BYTES, dtype=np.uint8).reshape(256, 3)
PALETTE_LAB = srgb_to_lab(PALETTE)


def reference_index(colour: np.ndarray, allowed: np.ndarray) -> int:
    """The documented rule, one pixel: a colour the palette holds keeps its first allowed entry;
    any other takes the allowed entry nearest in CIELAB to the centre of its 4x4x4 cell."""
    held = _held(allowed.tobytes())
    if colour.tobytes() in held:
        return held[colour.tobytes()]
    side = 1 << CELL_SHIFT
    centre = (colour.astype(int) >> CELL_SHIFT) * side + side // 2
    distances = ((PALETTE_LAB[allowed] - srgb_to_lab(centre.astype(np.uint8))) ** 2).sum(axis=1)
    return int(np.flatnonzero(allowed)[int(np.argmin(distances))])


def reference_indices(rgb: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """`reference_index` of each pixel of (h, w, 3) `rgb`, each distinct colour worked once."""
    found: dict[bytes, int] = {}
    result = []
    for pixel in rgb.reshape(-1, 3):
        key = pixel.tobytes()
        if key not in found:
            found[key] = reference_index(pixel, allowed)
        result.append(found[key])
    return np.array(result, dtype=np.uint8).reshape(rgb.shape[:2])


@functools.cache
def _held(allowed_key: bytes) -> dict[bytes, int]:
    """Each allowed palette colour and its first allowed entry."""
    held: dict[bytes, int] = {}
    for index in np.flatnonzero(np.frombuffer(allowed_key, dtype=bool)):
        held.setdefault(PALETTE[index].tobytes(), int(index))
    return held


def reference_error(rgb: np.ndarray, indices: np.ndarray, counted: np.ndarray | None = None) -> float:
    """The mean CIEDE2000 (angle form, float64) of each counted pixel against its entry."""
    pixels, chosen = rgb.reshape(-1, 3), indices.reshape(-1)
    if counted is not None:
        pixels, chosen = pixels[counted.reshape(-1)], chosen[counted.reshape(-1)]
    if len(chosen) == 0:
        return 0.0
    errors = [float(_ciede2000_angles(srgb_to_lab(pixel), PALETTE_LAB[index])) for pixel, index in zip(pixels, chosen)]
    return sum(errors) / len(errors)


def allowed_entries(fullbright: bool, transparent: int | None, sky: bool) -> np.ndarray:
    allowed = np.ones(256, dtype=bool)
    if not fullbright:
        allowed[224:] = False
    if transparent is not None:
        allowed[transparent] = False
    if sky:
        allowed[0] = False
    return allowed


def hand_made(
    seed: int, height: int, width: int, *, clear_share: float = 0.0, palette_share: float = 0.3
) -> np.ndarray:
    """RGBA pixels: noise, some exact palette colours, a few repeated colours, some clear."""
    rng = np.random.default_rng(seed)
    rgb = rng.integers(0, 256, (height, width, 3))
    exact = rng.random((height, width)) < palette_share
    rgb[exact] = PALETTE[rng.integers(0, 256, int(exact.sum()))]
    rgb[0, :] = (255, 255, 255)
    rgb[1, :] = (0, 0, 0)
    alpha = np.where(rng.random((height, width)) < clear_share, 0, 255)
    return np.dstack([rgb, alpha]).astype(np.uint8)


@pytest.mark.parametrize(
    ("name", "clear_share", "fullbright"),
    [("wall", 0.0, False), ("{grate", 0.3, False), ("sky_dusk", 0.3, False), ("lava", 0.0, True)],
)
def test_fast_build_equals_the_per_pixel_reference(name: str, clear_share: float, fullbright: bool) -> None:
    rgba = hand_made(len(name), 32, 48 if not name.startswith("sky") else 64, clear_share=clear_share)
    mips, transparent, indices, error, _sampled = encode_wad2(rgba, name, PALETTE_BYTES, fullbright=fullbright)
    sky = name.startswith("sky")
    allowed = allowed_entries(fullbright, transparent, sky)
    clear = rgba[..., 3] < 128
    expected = reference_indices(rgba[..., :3], allowed)
    drawn = None
    if transparent is not None:
        drawn = ~clear
    if sky:
        drawn = ~clear
        drawn[:, clear.shape[1] // 2 :] = True
    # The error is of the mapping, before clear pixels take their index.
    assert error == pytest.approx(reference_error(rgba[..., :3], expected, drawn), rel=2e-5, abs=1e-6)
    if transparent is not None:
        expected[clear] = transparent
    if sky:
        expected[:, : clear.shape[1] // 2][clear[:, : clear.shape[1] // 2]] = 0
    assert (indices == expected).all()
    assert mips[0] == expected.tobytes()


def test_dithered_build_measures_the_dithered_indices() -> None:
    rgba = hand_made(3, 32, 32, clear_share=0.2, palette_share=0.0)
    _mips, transparent, indices, error, _sampled = encode_wad2(rgba, "{dots", PALETTE_BYTES, dither=True)
    allowed = allowed_entries(False, transparent, False)
    dithered = dither_colours(rgba[..., :3], PALETTE_BYTES, allowed)
    clear = rgba[..., 3] < 128
    assert error == pytest.approx(reference_error(rgba[..., :3], dithered, ~clear), rel=2e-5, abs=1e-6)
    dithered[clear] = 255
    assert (indices == dithered).all()


def test_a_fullbright_mask_takes_the_lit_mapping_only_where_it_says() -> None:
    rgba = hand_made(8, 16, 32)
    mask = np.zeros((16, 32), dtype=bool)
    mask[:, :16] = True
    _mips, _transparent, indices, error, _sampled = encode_wad2(rgba, "panel", PALETTE_BYTES, mask=mask)
    rgb = rgba[..., :3]
    plain = reference_indices(rgb[:, 16:], allowed_entries(False, None, False))
    lit = reference_indices(rgb[:, :16], allowed_entries(True, None, False))
    assert (indices[:, 16:] == plain).all()
    assert (indices[:, :16] == lit).all()
    assert error == pytest.approx(reference_error(rgb, indices), rel=2e-5, abs=1e-6)


def test_wad3_measures_against_its_own_palette() -> None:
    rgba = hand_made(5, 16, 16, palette_share=0.0)  # 256 pixels: at most 256 colours
    _mips, own, _transparent, indices, error, _sampled = encode_wad3(rgba, "metal")
    own_lab = srgb_to_lab(np.frombuffer(own, dtype=np.uint8).reshape(256, 3))
    pixels = rgba[..., :3].reshape(-1, 3)
    expected = np.mean(_ciede2000_angles(srgb_to_lab(pixels), own_lab[indices.reshape(-1)]))
    # Every colour is in its own palette: 0, to float32's CIELAB (a few 1e-5).
    assert expected < 1e-9
    assert error == pytest.approx(expected, abs=1e-4)


def test_distinct_pairs_give_the_per_pixel_mean() -> None:
    """A picture of few colours is measured once per (colour, entry) pair, weighted by count;
    a picture of many colours pixel by pixel: both the per-pixel mean."""
    rng = np.random.default_rng(4)
    few = rng.integers(0, 256, (12, 3)).astype(np.uint8)[rng.integers(0, 12, 64 * 64)]
    chosen = rng.integers(0, 224, 12).astype(np.uint8)[rng.integers(0, 12, 64 * 64)]  # not one entry a colour
    many = rng.integers(0, 256, (64 * 64, 3)).astype(np.uint8)
    for pixels in (few, many):
        expected = np.mean(_ciede2000_angles(srgb_to_lab(pixels), PALETTE_LAB[chosen]))
        assert mean_error_keys(pack_rgb(pixels), chosen, PALETTE_BYTES) == pytest.approx(expected, rel=2e-5)
    assert mean_error_keys(pack_rgb(few[:0]), chosen[:0], PALETTE_BYTES) == 0.0


def test_float32_form_matches_the_published_pairs() -> None:
    """The build's float32 CIEDE2000 against Sharma et al.'s pairs: to four decimals, except
    where float32 rounding of the inputs turns two hues exactly opposite (the formula jumps
    there, and the float32 angle form jumps the same way)."""
    from test_quake_colours import SHARMA

    first = np.array([pair[0] for pair in SHARMA], dtype=np.float32)
    second = np.array([pair[1] for pair in SHARMA], dtype=np.float32)
    expected = np.array([pair[2] for pair in SHARMA])
    fast = ciede2000(first, second)
    assert fast.dtype == np.float32
    angles = _ciede2000_angles(first, second)
    jumps = np.abs(angles - expected) > 1e-4
    assert jumps.sum() <= 1  # pair 14: (-0.0010, 2.4900) against (0.0010, -2.4900)
    assert np.abs(fast - expected)[~jumps].max() < 1e-4
    assert np.abs(fast - angles)[jumps].max() < 1e-4


def test_the_rotation_term_around_the_whole_hue_circle() -> None:
    """Mean hues every 0.05° (the rotation term lives around 275°; the formula's mean hue is in
    [0°, 360°), so 355°-5° must not feel 275°'s neighbourhood): the fast form equals the angle
    form in float64."""
    hue = np.radians(np.arange(0, 360, 0.05))
    first = np.column_stack([np.full(len(hue), 50.0), 30 * np.cos(hue - 0.1), 30 * np.sin(hue - 0.1)])
    second = np.column_stack([np.full(len(hue), 55.0), 20 * np.cos(hue + 0.1), 20 * np.sin(hue + 0.1)])
    assert np.abs(ciede2000(first, second) - _ciede2000_angles(first, second)).max() < 1e-6


def test_greys_and_subnormal_chromas_stay_exact() -> None:
    """Near-grey colours (chromas whose seventh power would be subnormal) against greys and
    weakly coloured ones (mean chromas under 1, where the a' stretch G is still felt)."""
    rng = np.random.default_rng(6)
    first = np.column_stack([rng.uniform(0, 100, 2000), rng.uniform(-1e-6, 1e-6, (2000, 2))])
    second = np.column_stack([rng.uniform(0, 100, 2000), rng.uniform(-1.5, 1.5, (2000, 2))])
    second[::5, 1:] = 0.0
    assert np.abs(ciede2000(first, second) - _ciede2000_angles(first, second)).max() < 1e-9


def test_mips_of_white_and_of_clear_halves() -> None:
    """The packed sums at their largest (8x8 blocks of 255 in every channel) and blocks exactly
    half clear (they stay clear)."""
    palette = bytearray(PALETTE_BYTES)
    palette[7 * 3 : 8 * 3] = b"\xff\xff\xff"
    indices = np.full((16, 16), 7, dtype=np.uint8)
    allowed = np.ones(256, dtype=bool)
    allowed[255] = False
    mips = mips_from(indices, bytes(palette), None, allowed)
    assert all(set(mip) == {7} for mip in mips)
    indices[:, ::2] = 255
    mips = mips_from(indices, bytes(palette), 255, allowed)
    assert all(set(mip) == {255} for mip in mips)


@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from([(16, 16), (16, 32), (32, 16)]),
    st.sampled_from(["wall", "{fence", "sky1"]),
    st.floats(0.0, 1.0),
)
def test_fast_path_property(seed: int, shape: tuple[int, int], name: str, palette_share: float) -> None:
    """Random pictures: the indices are the rule's, the mean error the per-pixel mean, the mips
    the rounded block means mapped by the same rule."""
    height, width = shape
    rng = np.random.default_rng(seed)
    # Few distinct colours sometimes (the distinct-pair path), noise otherwise.
    colours = rng.integers(0, 256, (int(rng.integers(1, 40)) if seed % 2 else height * width, 3))
    rgb = colours[rng.integers(0, len(colours), (height, width))]
    exact = rng.random((height, width)) < palette_share
    rgb[exact] = PALETTE[rng.integers(0, 256, int(exact.sum()))]
    alpha = np.where(rng.random((height, width)) < 0.25, 0, 255)
    rgba = np.dstack([rgb, alpha]).astype(np.uint8)
    mips, transparent, indices, error, _sampled = encode_wad2(rgba, name, PALETTE_BYTES)
    sky = name.startswith("sky")
    allowed = allowed_entries(False, transparent, sky)
    expected = reference_indices(rgb.astype(np.uint8), allowed)
    clear = alpha < 128
    drawn = ~clear if transparent is not None or sky else None
    if sky and drawn is not None:
        drawn[:, width // 2 :] = True
    pixels = rgb.reshape(-1, 3).astype(np.uint8)
    counted = np.ones(height * width, dtype=bool) if drawn is None else drawn.reshape(-1)
    errors = _ciede2000_angles(srgb_to_lab(pixels[counted]), PALETTE_LAB[expected.reshape(-1)[counted]])
    assert error == pytest.approx(float(errors.mean()) if counted.any() else 0.0, rel=2e-5, abs=1e-6)
    assert (indices[~clear] == expected[~clear]).all()
    mip_entries = mip_allowed(name, transparent, False, False)
    for level, mip in enumerate(mips[1:], start=1):
        side = 2**level
        blocks = PALETTE[indices].astype(np.float64).reshape(height // side, side, width // side, side, 3)
        means = np.rint(blocks.mean(axis=(1, 3))).astype(np.uint8).reshape(-1, 3)
        want = np.array([reference_index(colour, mip_entries) for colour in means], dtype=np.uint8)
        want = want.reshape(height // side, width // side)
        if transparent is not None:
            share = (indices == transparent).reshape(height // side, side, width // side, side).mean(axis=(1, 3))
            want[share >= 0.5] = transparent
        assert np.frombuffer(mip, dtype=np.uint8).tobytes() == want.tobytes()


def test_rgb_pictures_read_as_opaque_rgba(tmp_path: Path) -> None:
    """An RGB picture is read from Pillow's own four-byte pixels: the same as a conversion to
    RGBA, alpha 255, its size still checked from the header before decoding."""
    from gamepak.errors import GamepakError
    from gamepak.ops.wad_build import read_picture

    rng = np.random.default_rng(2)
    rgb = rng.integers(0, 256, (16, 32, 3)).astype(np.uint8)
    Image.fromarray(rgb, "RGB").save(tmp_path / "wall.png")
    rgba = read_picture(str(tmp_path / "wall.png"), "wall", False)
    assert rgba.shape == (16, 32, 4) and rgba.dtype == np.uint8
    assert (rgba[..., :3] == rgb).all() and (rgba[..., 3] == 255).all()
    Image.fromarray(rgb[:, :24], "RGB").save(tmp_path / "odd.png")
    with pytest.raises(GamepakError, match="multiples of 16"):
        read_picture(str(tmp_path / "odd.png"), "odd", False)


def test_batched_errors_equal_each_pictures_own() -> None:
    """`ErrorBatch` measures pictures together (a large one in cache-sized parts, one of few
    colours by distinct pairs): each ticket's mean is that picture's per-pixel mean."""
    from gamepak.formats.quake.ciede2000 import BATCH_PIXELS, ErrorBatch

    rng = np.random.default_rng(12)
    pictures = [
        rng.integers(0, 256, (300, 3)).astype(np.uint8),
        rng.integers(0, 256, (BATCH_PIXELS + 5000, 3)).astype(np.uint8),  # more than one pass
        rng.integers(0, 256, (7, 3)).astype(np.uint8)[rng.integers(0, 7, 5000)],  # few colours
        np.zeros((0, 3), dtype=np.uint8),
        rng.integers(0, 256, (20000, 3)).astype(np.uint8),
    ]
    batch = ErrorBatch(PALETTE_BYTES)
    tickets = []
    for pixels in pictures:
        chosen = rng.integers(0, 256, len(pixels)).astype(np.uint8)
        tickets.append((batch.add(pack_rgb(pixels), chosen), pixels, chosen))
    for ticket, pixels, chosen in tickets:
        expected = float(_ciede2000_angles(srgb_to_lab(pixels), PALETTE_LAB[chosen]).mean()) if len(pixels) else 0.0
        assert batch.mean(ticket) == pytest.approx(expected, rel=2e-5, abs=1e-6)


def test_build_summary_errors_are_each_textures_own(tmp_path: Path) -> None:
    """`build_wad` measures its WAD2 textures in batches: each line's error is still its own."""
    from gamepak.ops.wad_build import build_wad

    folder = tmp_path / "pics"
    folder.mkdir()
    pictures = {}
    for number, (name, clear_share) in enumerate([("a", 0.0), ("{b", 0.3), ("c", 0.0), ("sky_d", 0.2), ("e", 0.0)]):
        width, height = (256, 128) if name.startswith("sky") else (32 + 16 * number, 48)
        pictures[name] = hand_made(number, height, width, clear_share=clear_share)
        Image.fromarray(pictures[name], "RGBA").save(folder / f"{name}.png")
    built = build_wad(folder, tmp_path / "out.wad")
    assert [texture.name for texture in built] == sorted(pictures)
    for texture in built:
        alone = encode_wad2(pictures[texture.name], texture.name, PALETTE_BYTES)[3]
        assert texture.error == pytest.approx(alone, rel=1e-6)


def test_a_large_picture_is_looked_up_in_parts() -> None:
    """Past `LOOKUP_PART` keys the lookup runs in parts: the same indices as the rule's."""
    from gamepak.formats.quake.colours import LOOKUP_PART, cell_nearest_keys

    rng = np.random.default_rng(13)
    colours = np.vstack([rng.integers(0, 256, (300, 3)), PALETTE[rng.integers(0, 256, 50)]]).astype(np.uint8)
    rgb = colours[rng.integers(0, len(colours), (256, 256))]
    assert rgb.shape[0] * rgb.shape[1] >= 2 * LOOKUP_PART
    allowed = allowed_entries(False, 255, False)
    found = cell_nearest_keys(pack_rgb(rgb.reshape(-1, 3)), PALETTE_BYTES, allowed).reshape(256, 256)
    assert (found == reference_indices(rgb, allowed)).all()
