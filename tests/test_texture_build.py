"""`gamepak texture build DIR -o textures.wad` (issue 47 item 1, first part): a WAD2 of miptex
from a folder of pictures, read back by vgio (a second reader) with the same names, sizes and
mips; `{` transparency and fullbright rules on hand-made images; bad inputs one line, nothing
written."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from gamepak.cli import main
from gamepak.formats.quake.palette import built_in_palette

PALETTE = np.frombuffer(built_in_palette(), dtype=np.uint8).reshape(256, 3)


def _picture(path: Path, indices: np.ndarray, alpha: np.ndarray | None = None) -> None:
    """A picture whose pixels are exactly the palette colours `indices` (alpha 255 unless given)."""
    rgb = PALETTE[indices]
    a = np.full(indices.shape, 255, dtype=np.uint8) if alpha is None else alpha
    Image.fromarray(np.dstack([rgb, a]).astype(np.uint8), "RGBA").save(path)


def test_a_folder_builds_a_wad2_that_vgio_reads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vgio.quake import wad as vgio_wad

    rng = np.random.default_rng(1)
    folder = tmp_path / "pics"
    folder.mkdir()
    # Entries whose colour no earlier entry has (Quake's palette repeats a few: the first wins).
    packed = [tuple(colour) for colour in PALETTE[:224]]
    unique = np.array([index for index, colour in enumerate(packed) if packed.index(colour) == index], dtype=np.uint8)
    wall = rng.choice(unique, (16, 32)).astype(np.uint8)
    _picture(folder / "Wall_1.png", wall)
    lights = np.full((16, 16), 10, dtype=np.uint8)
    lights[4:8, 4:8] = 250  # a fullbright colour, in a texture asking for them (`_fbr`): kept
    _picture(folder / "lights_fbr.tga", lights)
    Image.new("RGB", (16, 16), (0, 0, 0)).save(folder / "dark.bmp")
    (folder / "notes.txt").write_text("not a picture")
    out = tmp_path / "textures.wad"
    assert main(["texture", "build", str(folder), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "built" in err and "3 textures" in err and "palette: Quake's palette" in err
    assert "mean CIEDE2000 0.00" in err  # exact palette colours: no error
    with vgio_wad.WadFile(str(out)) as wad_file:
        assert wad_file.namelist() == ["Wall_1", "dark", "lights"]
        infos = {info.filename: info for info in wad_file.infolist()}
        assert {info.type for info in infos.values()} == {vgio_wad.LumpType.MIPTEX}
        textures = {name: vgio_wad.Miptexture.read(io.BytesIO(wad_file.read(name))) for name in infos}
    assert (textures["Wall_1"].width, textures["Wall_1"].height) == (32, 16)
    assert textures["Wall_1"].offsets == (40, 40 + 512, 40 + 512 + 128, 40 + 512 + 128 + 32)
    assert bytes(textures["Wall_1"].pixels[:512]) == wall.tobytes()  # exact palette colours kept
    lit = np.frombuffer(bytes(textures["lights"].pixels[:256]), dtype=np.uint8).reshape(16, 16)
    assert (lit[4:8, 4:8] == 250).all() and (lit[8:] == 10).all()
    assert max(textures["dark"].pixels) < 224  # black: an ordinary entry, never a fullbright
    # The same folder again: refused without --overwrite, then the same bytes.
    before = out.read_bytes()
    assert main(["texture", "build", str(folder), "-o", str(out)]) == 1
    assert main(["texture", "build", str(folder), "-o", str(out), "--overwrite"]) == 0
    assert out.read_bytes() == before


def test_nearest_colours_avoid_fullbrights_and_brace_textures_are_clear_under_half_alpha(tmp_path: Path) -> None:
    from gamepak.formats.quake import wad

    folder = tmp_path / "pics"
    folder.mkdir()
    fence = np.full((16, 16, 4), (250, 250, 250, 255), dtype=np.uint8)  # near white: no exact match
    fence[:, :8, 3] = 100  # under the threshold: clear
    fence[:, 8:12, 3] = 130  # over it: kept
    Image.fromarray(fence, "RGBA").save(folder / "{fence.png")
    Image.fromarray(fence, "RGBA").save(folder / "plain.png")  # no `{`: alpha ignored
    out = tmp_path / "t.wad"
    assert main(["texture", "build", str(folder), "-o", str(out)]) == 0
    with wad.Reader(out) as reader:
        brace = np.frombuffer(reader.read("{fence")[40 : 40 + 256], dtype=np.uint8).reshape(16, 16)
        plain = np.frombuffer(reader.read("plain")[40 : 40 + 256], dtype=np.uint8).reshape(16, 16)
    assert (brace[:, :8] == 255).all() and (brace[:, 8:] < 224).all()
    assert (plain < 224).all()  # the nearest ordinary colour, alpha or not


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"a_name_of_sixteen.png": (16, 16)}, "cannot name a miptex (1 to 15 ASCII characters)"),
        ({"wall.png": (16, 16), "WALL.tga": (16, 16)}, "names the same lump as"),
        ({"odd.png": (24, 16)}, "24x16: a texture's sides must be multiples of 16"),
        ({}, "no PNG, TGA or BMP"),
    ],
)
def test_bad_folders_are_one_line_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], files: dict[str, tuple[int, int]], message: str
) -> None:
    folder = tmp_path / "pics"
    folder.mkdir()
    for name, size in files.items():
        Image.new("RGB", size, (1, 2, 3)).save(folder / name)
    capsys.readouterr()
    assert main(["texture", "build", str(folder), "-o", str(tmp_path / "t.wad")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err
    assert not (tmp_path / "t.wad").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pics"]  # no temporary either


def test_a_picture_that_is_not_one_and_a_bomb_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from test_cli_texture import _png_header_only

    folder = tmp_path / "pics"
    folder.mkdir()
    (folder / "fake.png").write_bytes(b"not a png at all")
    assert main(["texture", "build", str(folder), "-o", str(tmp_path / "t.wad")]) == 1
    assert "fake.png: not an image Pillow reads" in capsys.readouterr().err
    (folder / "fake.png").unlink()
    (folder / "huge.png").write_bytes(_png_header_only(20000, 20000))
    assert main(["texture", "build", str(folder), "-o", str(tmp_path / "t.wad")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "huge.png" in err and "decompression bomb" in err
    assert not (tmp_path / "t.wad").exists()


def test_palette_file_is_used_and_a_wrong_one_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gamepak.formats.quake import wad

    folder = tmp_path / "pics"
    folder.mkdir()
    Image.new("RGB", (16, 16), (9, 8, 7)).save(folder / "w.png")
    own = tmp_path / "own.lmp"
    own.write_bytes(bytes([9, 8, 7]) + bytes([200, 200, 200]) * 255)
    assert main(["texture", "build", str(folder), "-o", str(tmp_path / "t.wad"), "--palette", str(own)]) == 0
    assert f"palette: {own} (--palette)" in capsys.readouterr().err
    with wad.Reader(tmp_path / "t.wad") as reader:
        assert set(reader.read("w")[40 : 40 + 256]) == {0}
    own.write_bytes(bytes(700))
    assert main(["texture", "build", str(folder), "-o", str(tmp_path / "u.wad"), "--palette", str(own)]) == 1
    assert "a palette is 768 bytes" in capsys.readouterr().err


def _read_wad3_by_the_spec(data: bytes) -> dict[str, tuple[int, int, list[bytes], bytes]]:
    """A second WAD3 reader written from the layout (quake-assets.md): header "WAD3", count,
    directory offset; 32-byte entries (offset, disk size, size, type 0x43, compression, pad,
    name[16]); each miptex: name[16], width, height, 4 mip offsets, the mips, u16 256 and the
    768-byte palette."""
    import struct

    assert data[:4] == b"WAD3"
    count, directory = struct.unpack_from("<ii", data, 4)
    found = {}
    for index in range(count):
        offset, _disk, size, kind, _comp, _pad, raw = struct.unpack_from("<iiiBBH16s", data, directory + 32 * index)
        assert kind == 0x43
        record = data[offset : offset + size]
        width, height, *offsets = struct.unpack_from("<II4I", record, 16)
        mips = [record[at : at + (width >> level) * (height >> level)] for level, at in enumerate(offsets)]
        end = offsets[3] + (width >> 3) * (height >> 3)
        (colours,) = struct.unpack_from("<H", record, end)
        assert colours == 256
        found[raw.partition(b"\0")[0].decode()] = (width, height, mips, record[end + 2 : end + 2 + 768])
    return found


def test_wad3_textures_carry_their_own_palette(tmp_path: Path) -> None:
    folder = tmp_path / "pics"
    folder.mkdir()
    rng = np.random.default_rng(5)
    colours = rng.integers(0, 256, (40, 3), dtype=np.uint8)  # 40 colours: kept exactly
    picture = colours[rng.integers(0, 40, (32, 32))]
    Image.fromarray(picture, "RGB").save(folder / "hl_wall.png")
    brace = np.dstack([picture[:16, :16], np.full((16, 16), 255, dtype=np.uint8)])
    brace[:, :4, 3] = 0
    Image.fromarray(brace, "RGBA").save(folder / "{grate.png")
    out = tmp_path / "hl.wad"
    assert main(["texture", "build", str(folder), "-o", str(out), "--wad3"]) == 0
    found = _read_wad3_by_the_spec(out.read_bytes())
    width, height, mips, palette = found["hl_wall"]
    assert (width, height, [len(mip) for mip in mips]) == (32, 32, [1024, 256, 64, 16])
    table = np.frombuffer(palette, dtype=np.uint8).reshape(256, 3)
    drawn = table[np.frombuffer(mips[0], dtype=np.uint8)].reshape(32, 32, 3)
    assert np.array_equal(drawn, picture)  # 40 colours fit the texture's own palette exactly
    _w, _h, grate, grate_palette = found["{grate"]
    assert grate_palette[-3:] == b"\0\0\xff"  # Half-Life's clear colour, the last entry
    indices = np.frombuffer(grate[0], dtype=np.uint8).reshape(16, 16)
    assert (indices[:, :4] == 255).all() and (indices[:, 4:] != 255).all()
    # gamepak's own reader draws it back through the texture's palette.
    assert main(["texture", "export", str(out), "-o", str(tmp_path / "back")]) == 0
    assert np.array_equal(np.asarray(Image.open(tmp_path / "back" / "hl_wall.png"))[..., :3], picture)
