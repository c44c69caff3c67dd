"""`texture build`'s summary error on a sample (issue 47, speed): past 4,096 drawn pixels the mean
CIEDE2000 is measured at one pixel of each 4x4 cell (its place moving from cell to cell), the
drawn ones, unless the sample holds fewer than 1,024 of them; `--exact-error` measures every
drawn pixel. The WAD is the same."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from gamepak.cli import main
from gamepak.formats.quake.ciede2000 import mean_error_keys, pack_rgb
from gamepak.formats.quake.colours import ERROR_EXACT_PIXELS, ERROR_SAMPLE_FLOOR, error_sample
from gamepak.formats.quake.palette import built_in_palette
from gamepak.ops.wad_build import build_wad, encode_wad2, encode_wad3

PALETTE_BYTES = built_in_palette()


def exact_mean(rgba: np.ndarray, indices: np.ndarray, palette: bytes, drawn: np.ndarray | None) -> float:
    """The mean error over every drawn pixel (the figure before sampling)."""
    keys = pack_rgb(rgba[..., :3].reshape(-1, 3))
    chosen = indices.reshape(-1)
    if drawn is not None:
        keys, chosen = keys[drawn.reshape(-1)], chosen[drawn.reshape(-1)]
    return mean_error_keys(keys, chosen, palette)


def textured(seed: int, size: int = 128) -> np.ndarray:
    """A picture as the benchmark makes them: tiles of 8 colours under a light ramp, plus noise
    (nearly every pixel its own colour), opaque."""
    rng = np.random.default_rng(seed)
    ramp = np.linspace(0.6, 1.2, size)[None, :, None] * np.linspace(0.8, 1.1, size)[:, None, None]
    base = rng.integers(30, 220, (8, 3))
    tiles = rng.integers(0, 8, (size // 16, size // 16)).repeat(16, 0).repeat(16, 1)
    rgb = (base[tiles] * ramp + rng.normal(0, 6, (size, size, 3))).clip(0, 255).astype(np.uint8)
    return np.dstack([rgb, np.full((size, size), 255, dtype=np.uint8)])


def gradient(height: int = 128, width: int = 256) -> np.ndarray:
    """A smooth two-way colour gradient, opaque."""
    red = np.linspace(0, 255, width)[None, :].repeat(height, 0)
    green = np.linspace(40, 220, height)[:, None].repeat(width, 1)
    blue = (red + green) / 2
    rgb = np.dstack([red, green, blue]).round().astype(np.uint8)
    return np.dstack([rgb, np.full((height, width), 255, dtype=np.uint8)])


def _sample_places(height: int, width: int) -> list[int]:
    """The sample written from the rule: in the 4x4 cell (i, j), the pixel at place
    (7i + 11j) % 16 of the cell, read row by row."""
    places = []
    for i in range(height // 4):
        for j in range(width // 4):
            place = (7 * i + 11 * j) % 16
            places.append((4 * i + place // 4) * width + 4 * j + place % 4)
    return places


def test_the_sample_is_the_drawn_pixels_of_one_place_a_cell() -> None:
    """A hand-made `{` mask: the sample is exactly the drawn pixels of the rule's places."""
    height, width = 256, 192
    keys = np.arange(height * width, dtype=np.uint32)  # each pixel's key names its position
    chosen = (np.arange(height * width) % 251).astype(np.uint8).reshape(height, width)
    drawn = np.ones((height, width), dtype=bool)
    drawn[::8, :] = False  # clear rows
    drawn[:, 40:48] = False  # a clear band across two cell columns
    sample_keys, sample_chosen, sampled = error_sample(keys, chosen, drawn)
    flat = drawn.reshape(-1)
    want = [place for place in _sample_places(height, width) if flat[place]]
    assert sorted(sample_keys.tolist()) == sorted(want) and sampled == len(want) >= ERROR_SAMPLE_FLOOR
    assert sorted(sample_chosen.tolist()) == sorted(chosen.reshape(-1)[want].tolist())
    assert len(set(want)) == len(want) and len(want) < len(_sample_places(height, width))


def test_the_sample_visits_every_place_of_a_cell() -> None:
    """The place moves from cell to cell through all 16 (no row or column of a tile is always
    held, none always missed), one pixel a cell."""
    height = width = 128
    keys = np.arange(height * width, dtype=np.uint32)
    chosen = np.zeros((height, width), dtype=np.uint8)
    sample_keys, _, sampled = error_sample(keys, chosen, None)
    assert sampled == (height // 4) * (width // 4)
    assert {(int(key) // width % 4, int(key) % 4) for key in sample_keys} == {
        (y, x) for y in range(4) for x in range(4)
    }
    assert {(int(key) // width // 4, int(key) % width // 4) for key in sample_keys} == {
        (i, j) for i in range(height // 4) for j in range(width // 4)
    }


def test_encode_wad2_measures_the_grid_of_a_brace_texture() -> None:
    """The build's own figure on a `{` picture: the mean over the drawn grid pixels only."""
    rgba = textured(5, 256)
    rgba[::8, ::4, 3] = 0
    rgba[:, 40:48, 3] = 0
    _mips, transparent, indices, error, sampled = encode_wad2(rgba, "{grate", PALETTE_BYTES)
    drawn = rgba[..., 3] >= 128
    flat = np.zeros(drawn.size, dtype=bool)
    flat[_sample_places(*drawn.shape)] = True
    grid = flat.reshape(drawn.shape)
    assert sampled == np.count_nonzero(grid & drawn) and transparent == 255
    want = exact_mean(rgba, indices, PALETTE_BYTES, grid & drawn)  # clear pixels are 255 now: not on it
    assert error == pytest.approx(want, rel=1e-6)
    exact = encode_wad2(rgba, "{grate", PALETTE_BYTES, exact_error=True)
    assert exact[4] == 0 and exact[3] == pytest.approx(exact_mean(rgba, indices, PALETTE_BYTES, drawn), rel=1e-6)
    assert exact[0] == _mips  # the same miptex either way


@pytest.mark.parametrize(("height", "width"), [(64, 64), (16, 256), (32, 128)])
def test_pictures_of_at_most_4096_drawn_pixels_are_measured_exactly(height: int, width: int) -> None:
    rgba = textured(3, 128)[:height, :width].copy()
    _mips, _transparent, indices, error, sampled = encode_wad2(rgba, "wall", PALETTE_BYTES)
    assert height * width <= ERROR_EXACT_PIXELS and sampled == 0
    assert error == pytest.approx(exact_mean(rgba, indices, PALETTE_BYTES, None), rel=1e-6)


def test_a_large_brace_texture_with_few_drawn_pixels_is_exact() -> None:
    """4,096 drawn pixels in a 128x128 `{` picture: every one counts."""
    rgba = textured(4)
    rgba[64:, :, 3] = 0
    rgba[:32, :, 3] = 0
    assert np.count_nonzero(rgba[..., 3] >= 128) == ERROR_EXACT_PIXELS
    _mips, _transparent, indices, error, sampled = encode_wad2(rgba, "{half", PALETTE_BYTES)
    assert sampled == 0
    assert error == pytest.approx(exact_mean(rgba, indices, PALETTE_BYTES, rgba[..., 3] >= 128), rel=1e-6)


def test_the_limit_is_4096_drawn_pixels() -> None:
    """Only the sample's 4,096 pixels drawn: measured exactly (on the same pixels); one more
    drawn pixel, off the sample: sampled, on the sample's 4,096."""
    rgba = textured(7, 256)
    flat = np.zeros(256 * 256, dtype=bool)
    flat[_sample_places(256, 256)] = True
    places = flat.reshape(256, 256)
    rgba[..., 3] = np.where(places, 255, 0)
    assert encode_wad2(rgba, "{dots", PALETTE_BYTES)[4] == 0
    off = next((row, 0) for row in range(4) if not places[row, 0])
    rgba[off[0], off[1], 3] = 255
    _mips, _transparent, indices, error, sampled = encode_wad2(rgba, "{dots", PALETTE_BYTES)
    assert sampled == ERROR_EXACT_PIXELS
    assert error == pytest.approx(exact_mean(rgba, indices, PALETTE_BYTES, places), rel=1e-6)


def test_a_sample_that_misses_the_drawn_pixels_falls_back_to_all() -> None:
    """Over 4,096 drawn pixels, but under 1,024 of them in the sample (its places clear, but a
    few): every drawn pixel counts."""
    rgba = textured(6)
    places = np.zeros(128 * 128, dtype=bool)
    places[_sample_places(128, 128)[:1000]] = True  # the sample keeps 1,024 - 1,000 drawn pixels
    rgba[..., 3] = np.where(places.reshape(128, 128), 0, 255)
    _mips, _transparent, indices, error, sampled = encode_wad2(rgba, "{holes", PALETTE_BYTES)
    drawn = rgba[..., 3] >= 128
    assert np.count_nonzero(drawn) > ERROR_EXACT_PIXELS and sampled == 0
    assert error == pytest.approx(exact_mean(rgba, indices, PALETTE_BYTES, drawn), rel=1e-6)


@pytest.mark.parametrize(
    ("picture", "dither"),
    [
        *((textured(seed), False) for seed in range(6)),
        (textured(9, 256), False),
        (gradient(), False),
        (gradient(), True),
    ],
    ids=[*(f"textured{seed}" for seed in range(6)), "textured-256", "gradient", "gradient-dither"],
)
def test_the_estimate_is_within_3_percent(picture: np.ndarray, dither: bool) -> None:
    """On benchmark-style pictures and a smooth gradient."""
    _mips, _transparent, indices, error, sampled = encode_wad2(picture, "wall", PALETTE_BYTES, dither=dither)
    height, width = picture.shape[:2]
    assert sampled == ((height + 3) // 4) * ((width + 3) // 4)
    exact = exact_mean(picture, indices, PALETTE_BYTES, None)
    assert error == pytest.approx(exact, rel=0.03)


@pytest.mark.parametrize("seed", range(6))
def test_the_estimate_of_dithered_tiles_is_within_5_percent(seed: int) -> None:
    """Floyd-Steinberg's error peaks on the 16-pixel tiles' edges: a sample of fixed rows and
    columns (every 4th) always held those and erred by up to 15%; one place a cell, moving, does
    not."""
    picture = textured(seed)
    _mips, _transparent, indices, error, _sampled = encode_wad2(picture, "wall", PALETTE_BYTES, dither=True)
    assert error == pytest.approx(exact_mean(picture, indices, PALETTE_BYTES, None), rel=0.05)


@pytest.mark.parametrize("picture", [textured(1), gradient()], ids=["textured", "gradient"])
def test_wad3_samples_too(picture: np.ndarray) -> None:
    _mips, own, _transparent, indices, error, sampled = encode_wad3(picture, "metal")
    assert sampled == np.count_nonzero(np.ones(picture.shape[:2], dtype=bool)[::4, ::4])
    assert error == pytest.approx(exact_mean(picture, indices, own, None), rel=0.03)
    exact = encode_wad3(picture, "metal", exact_error=True)
    assert exact[5] == 0 and exact[4] == pytest.approx(exact_mean(picture, indices, own, None), rel=1e-6)


@settings(max_examples=20, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from([(16, 16), (64, 64), (32, 128), (128, 128), (128, 64)]),
    st.sampled_from(["wall", "{fence", "sky1"]),
    st.floats(0.0, 1.0),
)
def test_sampled_equals_exact_up_to_4096_drawn_pixels(
    seed: int, shape: tuple[int, int], name: str, share: float
) -> None:
    """Whenever a picture has at most 4,096 drawn pixels the default figure is the exact one."""
    height, width = shape
    if name.startswith("sky"):
        height, width = 128, 256
    rng = np.random.default_rng(seed)
    rgba = rng.integers(0, 256, (height, width, 4)).astype(np.uint8)
    rgba[..., 3] = np.where(rng.random((height, width)) < share, 0, 255)
    default = encode_wad2(rgba, name, PALETTE_BYTES)
    exact = encode_wad2(rgba, name, PALETTE_BYTES, exact_error=True)
    drawn_pixels = np.count_nonzero(rgba[..., 3] >= 128) if name.startswith("{") else height * width
    if name.startswith("sky"):
        drawn_pixels = np.count_nonzero(rgba[:, : width // 2, 3] >= 128) + height * (width - width // 2)
    if drawn_pixels <= ERROR_EXACT_PIXELS:
        assert default[4] == 0 and default[3] == exact[3]
    else:
        assert default[4] > 0 or default[3] == exact[3]  # sampled, or fell back to every pixel
    assert default[0] == exact[0]


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "pics"
    folder.mkdir()
    Image.fromarray(textured(2), "RGBA").save(folder / "wall.png")
    brace = textured(3, 256)[:128].copy()
    brace[:, :64, 3] = 0  # 48 of the grid's 64 columns drawn
    Image.fromarray(brace, "RGBA").save(folder / "{grate.png")
    Image.fromarray(textured(4, 128)[:32, :64], "RGBA").save(folder / "small.png")
    return folder


@pytest.mark.parametrize("options", [[], ["--dither"], ["--wad3"], ["--wad3", "--dither"]])
def test_exact_error_gives_the_old_figure_and_the_same_wad(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str]
) -> None:
    """`--exact-error` prints the mean over every drawn pixel; the default says it sampled;
    the WAD's bytes do not change."""
    folder = _folder(tmp_path)
    sampled_wad, exact_wad = tmp_path / "s.wad", tmp_path / "e.wad"
    assert main(["texture", "build", str(folder), "-o", str(sampled_wad), *options]) == 0
    sampled_out = capsys.readouterr().err
    assert main(["texture", "build", str(folder), "-o", str(exact_wad), "--exact-error", *options]) == 0
    exact_out = capsys.readouterr().err
    assert sampled_wad.read_bytes() == exact_wad.read_bytes()
    lines = {line.split()[1]: line for line in sampled_out.splitlines() if "CIEDE2000" in line}
    exact_lines = {line.split()[1]: line for line in exact_out.splitlines() if "CIEDE2000" in line}
    assert "(sampled, 1,024 px)" in lines["wall"] and "(sampled, 1,536 px)" in lines["{grate"]
    assert "(exact)" in lines["small"]
    assert all("(exact)" in line for line in exact_lines.values())
    wad3 = "--wad3" in options
    built = build_wad(folder, tmp_path / "x.wad", exact_error=True, wad3=wad3, dither="--dither" in options)
    for texture in built:
        assert f"mean CIEDE2000 {texture.error:.2f} (exact)" in exact_lines[texture.name]
        assert texture.sampled == 0


def test_build_wad_exact_error_is_the_per_pixel_mean(tmp_path: Path) -> None:
    """The library's keyword: each texture's figure is the mean over all its drawn pixels (as
    measured before sampling existed), the default the grid's estimate, within 3%."""
    folder = _folder(tmp_path)
    exact = {texture.name: texture for texture in build_wad(folder, tmp_path / "e.wad", exact_error=True)}
    default = {texture.name: texture for texture in build_wad(folder, tmp_path / "s.wad")}
    for name, file in (("wall", "wall.png"), ("{grate", "{grate.png")):
        with Image.open(folder / file) as picture:
            rgba = np.asarray(picture.convert("RGBA"))
        _mips, _transparent, indices, _error, _sampled = encode_wad2(rgba, name, PALETTE_BYTES)
        drawn = None if name == "wall" else rgba[..., 3] >= 128
        want = exact_mean(rgba, indices, PALETTE_BYTES, drawn)
        assert exact[name].error == pytest.approx(want, rel=1e-6) and exact[name].sampled == 0
        assert default[name].error == pytest.approx(want, rel=0.03) and default[name].sampled > 0
    assert default["small"].sampled == 0 and default["small"].error == exact["small"].error


def test_a_rebuilt_export_samples_unless_told(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder `texture export` wrote (the manifest path) gives the same kind of figures: sampled
    by default, exact with `exact_error`, and the same WAD."""
    wad = tmp_path / "first.wad"
    build_wad(_folder(tmp_path), wad)
    exported = tmp_path / "exported"
    assert main(["texture", "export", str(wad), "-o", str(exported)]) == 0
    capsys.readouterr()
    default = {texture.name: texture for texture in build_wad(exported, tmp_path / "again.wad")}
    exact = {texture.name: texture for texture in build_wad(exported, tmp_path / "exact.wad", exact_error=True)}
    assert (tmp_path / "again.wad").read_bytes() == (tmp_path / "exact.wad").read_bytes() == wad.read_bytes()
    assert default["wall"].sampled == 1024 and default["{grate"].sampled == 1536 and default["small"].sampled == 0
    assert all(texture.sampled == 0 for texture in exact.values())
    for name, texture in default.items():
        assert texture.note == "as exported"
        assert texture.error == pytest.approx(exact[name].error, rel=0.03)
    assert default["small"].error == exact["small"].error
