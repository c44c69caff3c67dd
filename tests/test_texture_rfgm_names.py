"""`texture import` of folders RFGM wrote: today's `NAME__index_N__..._.dds` names (with or without
the peg's `NAME__index_N__pegAlign_16_.cpeg_pc/` folder), the older Archiver names, gamepak's own;
an image matching no texture named with the nearest texture, exit 1 when none matched."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image
from test_cli_texture import _dxt1_pair, _rfgm_dds

from gamepak.cli import main
from gamepak.formats.rfg.peg import Peg
from gamepak.formats.rfg.peg.rfgm_names import plain_name, rfgm_textures

from conftest import sample

PEG_FOLDER = "p__index_0__pegAlign_16_.cpeg_pc"


def rfgm_name(stem: str, index: int, label: str, mips: int, size: tuple[int, int], ext: str) -> str:
    """A texture's file name as RFGM's current unpacker writes it."""
    side = f"{size[0]}x{size[1]}"
    return (
        f"{stem}__index_{index}__pegAlign_16__texMips_{mips}__texFmt_{label}__texFlags_none"
        f"__texSize_{side}__texSrc_{side}_{ext}"
    )


def test_plain_name_reads_every_writers_names() -> None:
    long = rfgm_name("heat_map_enemy", 0, "pcDxt1", 4, (32, 32), ".dds")
    assert plain_name(long) == "heat_map_enemy.dds"
    assert plain_name("xray_effect__index_1__pegAlign_16_.cpeg_pc") == "xray_effect.cpeg_pc"
    assert plain_name("zone__index_3_.str2_pc") == "zone.str2_pc"
    assert plain_name("00000 heat_map_enemy.tga PcDxt1 4.dds") == "heat_map_enemy.tga.dds"
    assert plain_name("heat_map_enemy.dds") is None  # gamepak's own: nothing to undo
    assert plain_name("a__b.png") is None
    assert rfgm_textures([long, "00001 glow.tga Pc8888 1.png", "x.png"]) == {
        "heat_map_enemy": [long],
        "glow": ["00001 glow.tga Pc8888 1.png"],
    }


@settings(max_examples=60, deadline=None)
@given(
    stem=st.from_regex(r"[a-z][a-z0-9_]{0,20}[a-z0-9]", fullmatch=True),
    index=st.integers(0, 9999),
    ext=st.sampled_from([".dds", ".png", ".cpeg_pc"]),
)
def test_any_rfgm_name_reads_back_to_its_stem(stem: str, index: int, ext: str) -> None:
    assert plain_name(rfgm_name(stem, index, "pcDxt5", 3, (64, 16), ext)) == stem + ext
    assert plain_name(f"{stem}__index_{index}__pegAlign_16_{ext}") == stem + ext


@pytest.mark.parametrize("in_peg_folder", [False, True], ids=["flat", "peg folder"])
def test_rfgm_named_dds_imports_back_to_the_games_bytes(tmp_path: Path, in_peg_folder: bool) -> None:
    """Before: "0 texture(s) changed", exit 0, the user's files ignored."""
    game = _dxt1_pair(tmp_path / "game", seed=1)
    original = Peg.open(game)
    rfgm = tmp_path / "rfgm"
    folder = rfgm / PEG_FOLDER if in_peg_folder else rfgm
    folder.mkdir(parents=True)
    for index, texture in enumerate(original.textures):
        label = {"DXT1": "pcDxt1", "DXT5": "pcDxt5"}[texture.format.label]
        name = rfgm_name(texture.name[:-4], index, label, texture.mips, (texture.width, texture.height), ".dds")
        (folder / name).write_bytes(_rfgm_dds(original, texture.name, original._frames[index]))
    edited = _dxt1_pair(tmp_path / "edited", seed=2)  # the same entries, other pixels
    assert main(["texture", "import", str(edited), str(rfgm)]) == 0
    assert edited.read_bytes() == game.read_bytes()
    assert (edited.parent / "p.gpeg_pc").read_bytes() == (game.parent / "p.gpeg_pc").read_bytes()


def test_rfgm_named_png_in_a_pack_changes_its_texture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pack = tmp_path / "xray_effect.str2_pc"
    shutil.copyfile(sample("vpp/xray_effect.str2_pc"), pack)
    out = tmp_path / "out"
    assert main(["texture", "export", str(pack), "-o", str(out)]) == 0
    ours = out / "xray_effect.cpeg_pc"
    theirs = out / "xray_effect__index_1__pegAlign_16_.cpeg_pc"
    ours.rename(theirs)
    for index, stem in enumerate(["heat_map_enemy", "heat_map_guerrilla", "heat_map_mpfriendly", "heat_map_vision"]):
        (theirs / f"{stem}.png").rename(theirs / rfgm_name(stem, index, "pcDxt1", 4, (32, 32), ".png"))
    before = pack.read_bytes()
    capsys.readouterr()
    assert main(["texture", "import", str(pack), str(out)]) == 0  # untouched: nothing changes
    assert pack.read_bytes() == before
    assert "warning" not in capsys.readouterr().err
    edited = theirs / rfgm_name("heat_map_enemy", 0, "pcDxt1", 4, (32, 32), ".png")
    Image.new("RGBA", (32, 32), (250, 10, 10, 255)).save(edited)
    assert main(["texture", "import", str(pack), str(out)]) == 0
    assert "1 texture changed: xray_effect.cpeg_pc/heat_map_enemy.tga" in capsys.readouterr().err
    from gamepak.ops.textures import export_textures

    export_textures(pack, tmp_path / "again", names=["heat_map_enemy"])
    with Image.open(tmp_path / "again" / "xray_effect.cpeg_pc" / "heat_map_enemy.png") as image:
        red = np.asarray(image.convert("RGBA"))[..., 0]
    assert red.min() > 200


def test_a_folder_named_after_the_loose_peg_is_taken(tmp_path: Path) -> None:
    """gamepak's pack layout (`DIR/p.cpeg_pc/NAME.png`) given for the loose pair works too."""
    target = _dxt1_pair(tmp_path / "game", seed=1)
    folder = tmp_path / "out" / "p.cpeg_pc"
    folder.mkdir(parents=True)
    Image.new("RGBA", (16, 16), (0, 0, 255, 255)).save(folder / "decal.png")
    assert main(["texture", "import", str(target), str(tmp_path / "out")]) == 0
    assert Peg.open(target).read_image("decal")[..., 2].min() > 200


def test_images_matching_nothing_are_named_with_the_nearest_texture_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: "0 texture(s) changed", exit 0, and advice to `texture add` a duplicate."""
    target = _dxt1_pair(tmp_path / "game", seed=1)
    before = target.read_bytes(), (target.parent / "p.gpeg_pc").read_bytes()
    folder = tmp_path / "typo"
    folder.mkdir()
    Image.new("RGBA", (32, 32), (1, 2, 3, 255)).save(folder / "heat_map_enemi.png")
    Image.new("RGBA", (4, 4), (1, 2, 3, 255)).save(folder / "zzz.png")
    capsys.readouterr()
    assert main(["texture", "import", str(target), str(folder)]) == 1
    err = capsys.readouterr().err
    assert "no image matches a texture" in err and "nothing imported" in err
    assert "heat_map_enemi.png (nearest texture: heat_map_enemy.tga)" in err
    assert "zzz.png (no texture near)" in err
    assert len(err.strip().splitlines()) == 1
    assert (target.read_bytes(), (target.parent / "p.gpeg_pc").read_bytes()) == before
    # One image matching: the others are a warning (each with its nearest name), exit 0.
    Image.new("RGBA", (16, 16), (9, 9, 9, 255)).save(folder / "decal.png")
    assert main(["texture", "import", str(target), str(folder)]) == 0
    err = capsys.readouterr().err
    assert "2 image(s) match no texture" in err and "(nearest texture: heat_map_enemy.tga)" in err
    assert "texture add" in err and "zzz.png" in err.split("texture add")[1]  # advice for the one with no near name


# -- an import that changes nothing says so, and writes nothing ----------------------------------------
def test_reimporting_an_edited_png_is_unchanged_and_leaves_the_pair_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: "1 texture(s) changed" every time, the pair rewritten (new mtime), and --dry-run
    said "would change": the lossy DXT1 re-encode was compared with the PNG."""
    import os

    target = _dxt1_pair(tmp_path / "game", seed=1)
    out = tmp_path / "out"
    assert main(["texture", "export", str(target), "-o", str(out)]) == 0
    rng = np.random.default_rng(7)  # noise: DXT1 cannot hold it, so the decode differs from the PNG
    Image.fromarray(rng.integers(0, 256, (32, 32, 4), dtype=np.uint8), "RGBA").save(out / "heat_map_enemy.png")
    capsys.readouterr()
    assert main(["texture", "import", str(target), str(out)]) == 0
    assert "1 texture changed: heat_map_enemy.tga" in capsys.readouterr().err
    pair = [target, target.parent / "p.gpeg_pc"]
    stored = [path.read_bytes() for path in pair]
    old = 1_000_000_000  # an mtime no write could leave
    for path in pair:
        os.utime(path, ns=(old, old))
    for argv in (["--dry-run"], []):
        assert main(["texture", "import", str(target), str(out), *argv]) == 0
        err = capsys.readouterr().err
        assert "unchanged" in err and "changed:" not in err and "would change" not in err, argv
        assert [path.read_bytes() for path in pair] == stored
        assert [path.stat().st_mtime_ns for path in pair] == [old, old]


def test_reimporting_an_edited_png_into_a_pack_is_unchanged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import os

    pack = tmp_path / "xray_effect.str2_pc"
    shutil.copyfile(sample("vpp/xray_effect.str2_pc"), pack)
    out = tmp_path / "out"
    assert main(["texture", "export", str(pack), "-o", str(out)]) == 0
    rng = np.random.default_rng(8)
    edited = out / "xray_effect.cpeg_pc" / "heat_map_vision.png"
    Image.fromarray(rng.integers(0, 256, (32, 32, 4), dtype=np.uint8), "RGBA").save(edited)
    assert main(["texture", "import", str(pack), str(out)]) == 0
    before = pack.read_bytes()
    os.utime(pack, ns=(1_000_000_000, 1_000_000_000))
    capsys.readouterr()
    for argv in (["--dry-run"], []):
        assert main(["texture", "import", str(pack), str(out), *argv]) == 0
        assert "unchanged" in capsys.readouterr().err
        assert pack.read_bytes() == before and pack.stat().st_mtime_ns == 1_000_000_000


def test_reimporting_an_off_palette_png_into_a_wad_is_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    wad = tmp_path / "gfx.wad"
    shutil.copyfile(sample("quake/gfx.wad"), wad)
    out = tmp_path / "out"
    assert main(["texture", "export", str(wad), "-o", str(out)]) == 0
    png = sorted(out.glob("*.png"))[0]
    with Image.open(png) as image:
        size = image.size
    rng = np.random.default_rng(9)
    Image.fromarray(rng.integers(0, 256, (size[1], size[0], 4), dtype=np.uint8), "RGBA").save(png)
    assert main(["texture", "import", str(wad), str(out)]) == 0
    before = wad.read_bytes()
    os.utime(wad, ns=(1_000_000_000, 1_000_000_000))
    capsys.readouterr()
    for argv in (["--dry-run"], []):
        assert main(["texture", "import", str(wad), str(out), *argv]) == 0
        assert "unchanged" in capsys.readouterr().err
        assert wad.read_bytes() == before and wad.stat().st_mtime_ns == 1_000_000_000
