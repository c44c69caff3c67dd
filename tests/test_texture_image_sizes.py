"""Every image import sized from the image's header before decoding: Quake images as pegs
(more than 4x the replaced image's area refused without --resize, which scales it), and
Pillow's decompression-bomb errors as one line naming the file."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from quake_bytes import miptex_bytes, wad_bytes
from test_cli_texture import _peak_rss_mb, _png_header_only, _rle_tga, _write_peg

from gamepak.cli import main
from gamepak.formats.quake import wad


def _wad_of_one_64x64(folder: Path) -> Path:
    path = folder / "textures.wad"
    path.write_bytes(wad_bytes([(b"wall", 0x44, miptex_bytes(b"wall", 64, 64))]))
    return path


def _tiny_huge_png(path: Path, side: int = 8192) -> None:
    """A side x side PNG of a few kilobytes (1-bit, one colour): 256 MiB once decoded as RGBA."""
    Image.new("1", (side, side), 1).save(path, optimize=True)


def test_a_huge_png_of_tiny_size_is_refused_by_a_quake_import_before_decoding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: an 8192x8192 PNG of 0.2 MB replacing a 64x64 WAD texture peaked at 2.6 GB, exited
    0 and grew the WAD from 5.5 KB to 89 MB."""
    target = _wad_of_one_64x64(tmp_path)
    before = target.read_bytes()
    folder = tmp_path / "in"
    folder.mkdir()
    _tiny_huge_png(folder / "wall.png")
    assert (folder / "wall.png").stat().st_size < 200_000
    code, peak = _peak_rss_mb("texture", "import", str(target), str(folder))
    assert code == 1 and peak < 200, peak
    capsys.readouterr()
    assert main(["texture", "import", str(target), str(folder)]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(folder / "wall.png") in err
    assert "8192x8192 is more than 4x the area of wall (64x64); --resize allows" in err
    assert target.read_bytes() == before
    # An RLE TGA claiming the same size: refused from its header as well.
    (folder / "wall.png").unlink()
    (folder / "wall.tga").write_bytes(_rle_tga(8192, 8192))
    code, peak = _peak_rss_mb("texture", "import", str(target), str(folder))
    assert code == 1 and peak < 200, peak
    assert target.read_bytes() == before


def test_resize_scales_a_large_picture_to_the_quake_images_size(tmp_path: Path) -> None:
    target = _wad_of_one_64x64(tmp_path)
    folder = tmp_path / "in"
    folder.mkdir()
    _tiny_huge_png(folder / "wall.png", 4096)
    code, peak = _peak_rss_mb("texture", "import", str(target), str(folder), "--resize")
    assert code == 0 and peak < 600, peak
    with wad.Reader(target) as reader:
        data = reader.read("wall")
    from gamepak.formats.quake.images import read_miptex, to_rgba
    from gamepak.formats.quake.palette import built_in_palette

    image = read_miptex(data, None, "wall")
    assert (image.width, image.height, len(data)) == (64, 64, 40 + 64 * 64 + 32 * 32 + 16 * 16 + 8 * 8)
    assert to_rgba(image, built_in_palette())[..., :3].mean() > 200  # white, as the picture
    # A picture within 4x the area keeps its own size (as before).
    Image.new("RGBA", (128, 128), (0, 0, 0, 255)).save(folder / "wall.png")
    assert main(["texture", "import", str(target), str(folder)]) == 0
    with wad.Reader(target) as reader:
        assert read_miptex(reader.read("wall"), None, "wall").width == 128


@pytest.mark.parametrize("side", [13000, 20000], ids=["Pillow's warning", "Pillow's error"])
@pytest.mark.parametrize("game", ["quake", "rfg"])
def test_pillows_bomb_limits_are_one_line_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], side: int, game: str
) -> None:
    """Before: "internal error: DecompressionBombError" (Quake), or a warning then a refusal."""
    if game == "quake":
        target, name = _wad_of_one_64x64(tmp_path), "wall.png"
    else:
        target, name = _write_peg(tmp_path), "wall.png"
    before = target.read_bytes()
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / name).write_bytes(_png_header_only(side, side))
    for extra in ([], ["--resize"]):
        capsys.readouterr()
        assert main(["texture", "import", str(target), str(folder), *extra]) == 1
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1, err
        assert str(folder / name) in err and "internal error" not in err
        assert "decompression bomb" in err or "larger than gamepak takes" in err
        assert target.read_bytes() == before


def test_an_rfg_import_keeps_its_size_rule(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The peg import's rule now lives in core.pictures: the same messages as before."""
    target = _write_peg(tmp_path)
    folder = tmp_path / "in"
    folder.mkdir()
    Image.new("RGBA", (64, 64), (9, 9, 9, 255)).save(folder / "wall.png")
    capsys.readouterr()
    assert main(["texture", "import", str(target), str(folder)]) == 1
    assert "64x64 is more than 4x the area of wall.tga (16x16); --resize allows" in capsys.readouterr().err
    assert main(["texture", "import", str(target), str(folder), "--resize"]) == 0


def test_a_model_skin_import_sizes_its_picture_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every Quake kind goes through the same sized read: a loose sample MDL's skin."""
    from conftest import sample

    model = tmp_path / "flame2.mdl"
    shutil.copyfile(sample("quake/flame2.mdl"), model)
    out = tmp_path / "out"
    assert main(["texture", "export", str(model), "-o", str(out)]) == 0
    skin = sorted(out.rglob("*.png"))[0]
    with Image.open(skin) as image:
        width, height = image.size
    Image.fromarray(np.zeros((height * 3, width * 3, 4), dtype=np.uint8)).save(skin)  # 9x the area
    before = model.read_bytes()
    capsys.readouterr()
    assert main(["texture", "import", str(model), str(out)]) == 1
    assert f"{width * 3}x{height * 3} is more than 4x the area" in capsys.readouterr().err
    assert model.read_bytes() == before
