"""`texture build`'s engine rules (issue 47 item 1): --case, qpakman's file names, fullbrights
only where asked (`_fbr`, --fullbright masks), sky size and its clear front layer, `+0name`
sequences without gaps, --resize, --dither, the alpha threshold, and per-texture CIEDE2000."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from gamepak.cli import main
from gamepak.formats.quake import wad
from gamepak.formats.quake.palette import built_in_palette

PALETTE = np.frombuffer(built_in_palette(), dtype=np.uint8).reshape(256, 3)


def _solid(path: Path, size: tuple[int, int], colour: tuple[int, ...]) -> None:
    Image.new("RGBA" if len(colour) == 4 else "RGB", size, colour).save(path)


def _mip0(out: Path, name: str) -> np.ndarray:
    with wad.Reader(out) as reader:
        record = reader.read(name)
    width, height = int.from_bytes(record[16:20], "little"), int.from_bytes(record[20:24], "little")
    return np.frombuffer(record[40 : 40 + width * height], dtype=np.uint8).reshape(height, width)


def _build(folder: Path, out: Path, *extra: str) -> int:
    return main(["texture", "build", str(folder), "-o", str(out), *extra])


def test_case_upper_and_qpakman_file_names(tmp_path: Path) -> None:
    folder = tmp_path / "pics"
    folder.mkdir()
    for stem in ("star_Water", "plus_0Lava", "plus_1Lava", "minu_Tile", "brick"):
        _solid(folder / f"{stem}.png", (16, 16), (90, 60, 40))
    out = tmp_path / "t.wad"
    assert _build(folder, out) == 0
    with wad.Reader(out) as reader:
        assert sorted(reader.namelist()) == sorted(["+0Lava", "+1Lava", "-Tile", "*Water", "brick"])
        assert reader.read("*Water")[:7] == b"*Water\0"  # the miptex's own name field too
    assert _build(folder, out, "--case", "upper", "--overwrite") == 0
    with wad.Reader(out) as reader:
        assert sorted(reader.namelist()) == sorted(["+0LAVA", "+1LAVA", "-TILE", "*WATER", "BRICK"])


def test_fullbrights_only_where_asked(tmp_path: Path) -> None:
    folder = tmp_path / "pics"
    masks = tmp_path / "masks"
    folder.mkdir()
    masks.mkdir()
    glow = tuple(int(value) for value in PALETTE[250])  # exactly a fullbright entry
    for stem in ("plain", "lamp_fbr", "panel"):
        _solid(folder / f"{stem}.png", (32, 16), glow)
    mask = np.zeros((16, 32), dtype=np.uint8)
    mask[:, :16] = 255
    Image.fromarray(mask, "L").save(masks / "panel.png")
    out = tmp_path / "t.wad"
    assert _build(folder, out, "--fullbright", str(masks)) == 0
    assert (_mip0(out, "plain") < 224).all()  # an exact fullbright colour, not asked for: ordinary
    assert (_mip0(out, "lamp") == 250).all()  # `_fbr`: kept (and the suffix dropped)
    panel = _mip0(out, "panel")
    assert (panel[:, :16] == 250).all() and (panel[:, 16:] < 224).all()
    with wad.Reader(out) as reader:  # the smaller mips follow the mask
        record = reader.read("panel")
    mip1 = np.frombuffer(record[40 + 512 : 40 + 512 + 128], dtype=np.uint8).reshape(8, 16)
    assert (mip1[:, :8] >= 224).all() and (mip1[:, 8:] < 224).all()


def test_fullbright_mask_folder_must_exist(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "pics"
    folder.mkdir()
    _solid(folder / "a.png", (16, 16), (1, 2, 3))
    assert _build(folder, tmp_path / "t.wad", "--fullbright", str(tmp_path / "nope")) == 1
    assert "not a folder of fullbright masks" in capsys.readouterr().err
    assert not (tmp_path / "t.wad").exists()


def test_sky_is_256x128_and_clear_in_its_front_half(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "pics"
    folder.mkdir()
    _solid(folder / "sky1.png", (128, 128), (20, 30, 120))
    out = tmp_path / "t.wad"
    assert _build(folder, out) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "sky1.png: 128x128: a sky texture is 256x128" in err
    assert not out.exists()
    sky = np.zeros((128, 256, 4), dtype=np.uint8)
    sky[..., :3] = (20, 30, 120)
    sky[..., 3] = 255
    sky[:64, :128, 3] = 0  # clear, in the front layer
    sky[:64, 128:, 3] = 0  # "clear" in the back layer: the back layer is opaque
    sky[100:, :, :3] = 0  # opaque black: a near-black entry, not 0 (which the front half draws clear)
    Image.fromarray(sky, "RGBA").save(folder / "sky1.png")
    assert _build(folder, out) == 0
    indices = _mip0(out, "sky1")
    assert (indices[:64, :128] == 0).all()
    assert (indices[64:, :] != 0).all() and (indices[:64, 128:] != 0).all()  # opaque: never the clear index


def test_resize_scales_to_multiples_of_16_and_skies_to_256x128(tmp_path: Path) -> None:
    folder = tmp_path / "pics"
    folder.mkdir()
    _solid(folder / "odd.png", (24, 20), (200, 100, 50))
    _solid(folder / "skyfoo.png", (300, 100), (20, 30, 120))
    out = tmp_path / "t.wad"
    assert _build(folder, out) == 1
    assert _build(folder, out, "--resize") == 0
    assert _mip0(out, "odd").shape == (16, 32)
    assert _mip0(out, "skyfoo").shape == (128, 256)


@pytest.mark.parametrize(
    ("stems", "message"),
    [
        (["+0lava", "+2lava"], "+2lava.png: the animation +0lava has no frame +1lava"),
        (["+0lava", "+1lava", "+a_lava", "+c_lava"], "+c_lava.png: the animation +a_lava has no frame +b_lava"),
        (["+1lava"], "+1lava.png: the animation +0lava has no frame +0lava"),
        (["+xlava"], "an animated texture is + then a frame 0-9 (or a-j) then a name"),
        (["+0"], "an animated texture is + then a frame"),
    ],
)
def test_animation_gaps_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], stems: list[str], message: str
) -> None:
    folder = tmp_path / "pics"
    folder.mkdir()
    for stem in stems:
        _solid(folder / f"{stem}.png", (16, 16), (1, 2, 3))
    out = tmp_path / "t.wad"
    assert _build(folder, out) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err
    assert not out.exists()


def test_whole_sequences_build(tmp_path: Path) -> None:
    folder = tmp_path / "pics"
    folder.mkdir()
    for stem in ("+0lava", "+1LAVA", "plus_2lava", "+a_b", "+b_b"):
        _solid(folder / f"{stem}.png", (16, 16), (1, 2, 3))
    assert _build(folder, tmp_path / "t.wad") == 0


def test_dither_spreads_a_gradient_over_more_entries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "pics"
    folder.mkdir()
    ramp = np.zeros((64, 64, 3), dtype=np.uint8)
    ramp[..., 0] = np.linspace(30, 220, 64, dtype=np.uint8)[None, :]
    ramp[..., 1] = 90
    ramp[..., 2] = 60
    Image.fromarray(ramp, "RGB").save(folder / "ramp.png")
    _solid(folder / "flat.png", (16, 16), tuple(int(v) for v in PALETTE[40]))
    plain, dithered = tmp_path / "plain.wad", tmp_path / "dither.wad"
    assert _build(folder, plain) == 0
    capsys.readouterr()
    assert _build(folder, dithered, "--dither") == 0
    err = capsys.readouterr().err
    nearest, spread = _mip0(plain, "ramp"), _mip0(dithered, "ramp")
    assert (spread < 224).all()  # dithering never reaches for a fullbright
    # Nearest colours make bands (every row alike); error diffusion makes rows differ.
    assert (nearest == nearest[0]).all() and not (spread == spread[0]).all()
    # The average colour of the dithered picture stays closer to the ramp's.
    drawn_plain = PALETTE[nearest].astype(float).mean(axis=(0, 1))
    drawn_dither = PALETTE[spread].astype(float).mean(axis=(0, 1))
    truth = ramp.astype(float).mean(axis=(0, 1))
    assert np.abs(drawn_dither - truth).sum() < np.abs(drawn_plain - truth).sum()
    assert (_mip0(dithered, "flat") == 40).all()  # a palette colour stays exactly itself
    assert "flat" in err and "mean CIEDE2000 0.00" in err


def test_alpha_threshold_option(tmp_path: Path) -> None:
    folder = tmp_path / "pics"
    folder.mkdir()
    fence = np.full((16, 16, 4), (90, 60, 40, 200), dtype=np.uint8)
    fence[:, :8, 3] = 100
    Image.fromarray(fence, "RGBA").save(folder / "{grate.png")
    out = tmp_path / "t.wad"
    assert _build(folder, out) == 0
    indices = _mip0(out, "{grate")
    assert (indices[:, :8] == 255).all() and (indices[:, 8:] != 255).all()
    assert _build(folder, out, "--overwrite", "--alpha-threshold", "220") == 0
    assert (_mip0(out, "{grate") == 255).all()
    assert _build(folder, out, "--overwrite", "--alpha-threshold", "0") == 0
    assert (_mip0(out, "{grate") != 255).all()


def test_summary_gives_each_texture_its_ciede2000(tmp_path: Path) -> None:
    from gamepak.formats.quake.colours import ciede2000, srgb_to_lab
    from gamepak.ops.wad_build import build_wad

    folder = tmp_path / "pics"
    folder.mkdir()
    colour = (PALETTE[40].astype(int) + (3, -2, 4)).clip(0, 255).astype(np.uint8)
    _solid(folder / "near.png", (16, 16), tuple(int(v) for v in colour))
    built = build_wad(folder, tmp_path / "t.wad")
    (texture,) = built
    index = int(_mip0(tmp_path / "t.wad", "near")[0, 0])
    expected = float(ciede2000(srgb_to_lab(colour), srgb_to_lab(PALETTE[index])))
    assert texture.error == pytest.approx(expected, rel=1e-4) and texture.error > 0.5  # float32
    assert (texture.name, texture.width, texture.height, texture.fullbright, texture.clear) == ("near", 16, 16, 0, 0)


def test_wad3_dither_and_brace(tmp_path: Path) -> None:
    folder = tmp_path / "pics"
    folder.mkdir()
    rng = np.random.default_rng(3)
    noisy = np.dstack([rng.integers(0, 256, (32, 32, 3)), np.full((32, 32), 255)]).astype(np.uint8)
    noisy[:4, :, 3] = 0
    Image.fromarray(noisy, "RGBA").save(folder / "{noise.png")
    out = tmp_path / "hl.wad"
    assert _build(folder, out, "--wad3", "--dither") == 0
    with wad.Reader(out) as reader:
        record = reader.read("{noise")
    indices = np.frombuffer(record[40 : 40 + 1024], dtype=np.uint8).reshape(32, 32)
    assert (indices[:4] == 255).all() and (indices[4:] != 255).all()
    end = 40 + 1024 + 256 + 64 + 16
    assert record[end : end + 2] == b"\0\1" and record[end + 2 + 765 : end + 2 + 768] == b"\0\0\xff"


def test_bad_masks_and_thresholds_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "pics"
    masks = tmp_path / "masks"
    folder.mkdir()
    masks.mkdir()
    _solid(folder / "panel.png", (16, 16), (90, 60, 40))
    (masks / "panel.png").write_bytes(b"not a picture")
    out = tmp_path / "t.wad"
    assert _build(folder, out, "--fullbright", str(masks)) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(masks / "panel.png") in err and "not an image Pillow reads" in err
    assert _build(folder, out, "--alpha-threshold", "300") == 1
    assert "alpha threshold 300: between 0 and 256" in capsys.readouterr().err
    assert not out.exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["masks", "pics"]
