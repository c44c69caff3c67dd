"""`gamepak texture`: ls, export, import, add, rm on built pegs and the real pack."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from gamepak.cli import main
from gamepak.errors import GamepakError, OutputExistsError
from gamepak.formats.rfg.peg import Peg, PixelFormat

from conftest import sample


def _write_peg(folder: Path) -> Path:
    rng = np.random.default_rng(3)
    peg = Peg.new("t.cpeg_pc")
    peg.add_texture("wall", rng.integers(0, 256, (16, 16, 4), dtype=np.uint8), PixelFormat.DXT5)
    peg.add_texture("glow", rng.integers(0, 256, (8, 8, 4), dtype=np.uint8), PixelFormat.A8R8G8B8)
    cpu, gpu = peg.to_bytes()
    (folder / "t.gpeg_pc").write_bytes(gpu)
    target = folder / "t.cpeg_pc"
    target.write_bytes(cpu)
    return target


def test_ls_json_lists_every_texture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = _write_peg(tmp_path)
    assert main(["texture", "ls", str(target), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["name"], r["format"], r["width"], r["mips"]) for r in rows] == [
        ("wall.tga", "DXT5", 16, 5),
        ("glow.tga", "8888", 8, 4),
    ]


def _write_other_peg(folder: Path) -> Path:
    """A pair with the same textures as `_write_peg`'s (names, sizes, formats, mips) holding
    other pixels: an import of `_write_peg`'s export must change every one of them."""
    rng = np.random.default_rng(4)
    peg = Peg.new("t.cpeg_pc")
    peg.add_texture("wall", rng.integers(0, 256, (16, 16, 4), dtype=np.uint8), PixelFormat.DXT5)
    peg.add_texture("glow", rng.integers(0, 256, (8, 8, 4), dtype=np.uint8), PixelFormat.A8R8G8B8)
    cpu, gpu = peg.to_bytes()
    folder.mkdir(exist_ok=True)
    (folder / "t.gpeg_pc").write_bytes(gpu)
    (folder / "t.cpeg_pc").write_bytes(cpu)
    return folder / "t.cpeg_pc"


def test_unchanged_export_imports_back_byte_identically(tmp_path: Path) -> None:
    """An unchanged export changes nothing; the same export imported into a pair holding other
    pixels gives the exported pair back (DDS: byte for byte; PNG: the same images, 8888 exact)."""
    target = _write_peg(tmp_path)
    before = target.read_bytes(), (tmp_path / "t.gpeg_pc").read_bytes()
    exported = Peg.open(target)
    for kind in ("png", "dds"):
        assert main(["texture", "export", str(target), "-o", str(tmp_path / kind), "--as", kind]) == 0
        assert main(["texture", "import", str(target), str(tmp_path / kind)]) == 0
        assert (target.read_bytes(), (tmp_path / "t.gpeg_pc").read_bytes()) == before
        other = _write_other_peg(tmp_path / f"other-{kind}")
        assert other.read_bytes() == target.read_bytes()  # same entries...
        assert (other.parent / "t.gpeg_pc").read_bytes() != before[1]  # ...other pixels
        assert main(["texture", "import", str(other), str(tmp_path / kind)]) == 0
        imported = Peg.open(other)
        if kind == "dds":
            assert (other.read_bytes(), (other.parent / "t.gpeg_pc").read_bytes()) == before
        else:
            assert np.array_equal(imported.read_image("glow"), exported.read_image("glow"))
            wall = imported.read_image("wall").astype(int) - exported.read_image("wall").astype(int)
            assert np.abs(wall).mean() < 8  # DXT5 encoded again from the exported pixels


def test_an_edited_png_changes_only_its_texture(tmp_path: Path) -> None:
    target = _write_peg(tmp_path)
    main(["texture", "export", str(target), "-o", str(tmp_path / "out")])
    glow_before = Peg.open(target).mip_data("glow")
    Image.new("RGBA", (32, 32), (200, 10, 10, 255)).save(tmp_path / "out" / "wall.png")
    assert main(["texture", "import", str(target), str(tmp_path / "out")]) == 0
    peg = Peg.open(target)
    assert (peg.texture("wall").width, peg.texture("wall").mips) == (32, 5)
    assert peg.mip_data("glow") == glow_before
    assert np.abs(peg.read_image("wall")[..., :3].astype(int) - [200, 10, 10]).max() <= 8  # 5/6-bit endpoints


def test_a_refused_import_names_the_file_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = _write_peg(tmp_path)
    before = target.read_bytes()
    main(["texture", "export", str(target), "-o", str(tmp_path / "out")])
    Image.new("RGBA", (6, 6)).save(tmp_path / "out" / "wall.png")
    assert main(["texture", "import", str(target), str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "wall.png" in err and "multiples of 4" in err
    assert target.read_bytes() == before


def test_add_and_rm(tmp_path: Path) -> None:
    target = _write_peg(tmp_path)
    Image.new("RGBA", (8, 4), (1, 2, 3, 4)).save(tmp_path / "new.png")
    assert main(["texture", "add", str(target), str(tmp_path / "new.png"), "--name", "decal", "--format", "565"]) == 0
    assert [t.name for t in Peg.open(target).textures] == ["wall.tga", "glow.tga", "decal.tga"]
    assert main(["texture", "rm", str(target), "wall"]) == 0
    assert [t.name for t in Peg.open(target).textures] == ["glow.tga", "decal.tga"]
    assert main(["texture", "rm", str(target), "nothing"]) == 1


def test_export_of_a_pack_lays_out_by_member_path(tmp_path: Path) -> None:
    pack = sample("vpp/xray_effect.str2_pc")
    assert main(["texture", "export", str(pack), "heat_map_enemy", "-o", str(tmp_path), "--as", "dds"]) == 0
    written = tmp_path / "xray_effect.cpeg_pc" / "heat_map_enemy.dds"
    with Image.open(written) as image:
        assert image.size == (32, 32)
    assert sorted(p.name for p in tmp_path.rglob("*.dds")) == ["heat_map_enemy.dds"]


def test_an_edited_png_imported_into_a_pack_passes_verify(tmp_path: Path) -> None:
    import gamepak

    pack = tmp_path / "zone.vpp_pc"
    inner = tmp_path / "xray.str2_pc"
    loose = _write_peg(tmp_path)
    with gamepak.create(inner, "vpp") as writer:
        writer.add("t.cpeg_pc", loose.read_bytes())
        writer.add("t.gpeg_pc", (tmp_path / "t.gpeg_pc").read_bytes())
    with gamepak.create(pack, "vpp") as writer:
        writer.add("xray.str2_pc", inner.read_bytes())
    before = pack.read_bytes()
    assert main(["texture", "export", str(pack), "-o", str(tmp_path / "out")]) == 0
    assert main(["texture", "import", str(pack), str(tmp_path / "out")]) == 0
    assert pack.read_bytes() == before  # nothing changed: nothing written
    folder = tmp_path / "out" / "xray.str2_pc" / "t.cpeg_pc"
    Image.new("RGBA", (32, 16), (10, 200, 10, 255)).save(folder / "wall.png")
    assert main(["texture", "import", str(pack), str(tmp_path / "out")]) == 0
    assert main(["verify", str(pack)]) == 0
    with gamepak.open(pack) as outer, gamepak.open(inner) as _:
        from gamepak.core.nested import resolve

        holder, entry = resolve(outer, "xray.str2_pc/t.cpeg_pc")
        cpu = holder.read(entry)
        gpu = holder.read("t.gpeg_pc")
    peg = Peg.parse(cpu, gpu)
    assert (peg.texture("wall").width, peg.texture("wall").height) == (32, 16)


def test_the_library_functions_behind_the_command(tmp_path: Path) -> None:
    """`gamepak.ops.textures`, which the command is a thin layer over, used directly."""
    from gamepak.ops.textures import add_texture, export_textures, import_textures, remove_textures

    target = _write_peg(tmp_path)
    written = export_textures(target, tmp_path / "out", names=["wall.tga"])
    assert written == [str(tmp_path / "out" / "wall.png")]
    with pytest.raises(OutputExistsError):
        export_textures(target, tmp_path / "out", names=["wall"])
    assert import_textures(target, tmp_path / "out") == []  # unchanged: nothing re-encoded
    Image.new("RGBA", (8, 8), (0, 0, 255, 255)).save(tmp_path / "out" / "wall.png")
    assert import_textures(target, tmp_path / "out") == ["wall.tga"]
    add_texture(target, np.full((4, 4, 4), 7, np.uint8), "dot", PixelFormat.A8)
    assert [t.name for t in Peg.open(target).textures] == ["wall.tga", "glow.tga", "dot.tga"]
    remove_textures(target, ["glow.tga"])
    assert [(t.name, t.format) for t in Peg.open(target).textures] == [
        ("wall.tga", PixelFormat.DXT5),
        ("dot.tga", PixelFormat.A8),
    ]
    with pytest.raises(GamepakError, match="no texture named nothing"):
        export_textures(target, tmp_path / "again", names=["nothing"])
    with pytest.raises(GamepakError, match="unknown image kind"):
        export_textures(target, tmp_path / "again", kind="gif")


def _as_dx10(dds: bytes, dxgi: int) -> bytes:
    """A legacy DDS rewritten with the DX10 header texconv and paint.net write: FourCC `DX10` at
    offset 84, then DDS_HEADER_DXT10 (DXGI format, TEXTURE2D, no flags, array size 1)."""
    return dds[:84] + b"DX10" + dds[88:128] + struct.pack("<5I", dxgi, 3, 0, 1, 0) + dds[128:]


def test_a_dds_from_an_editor_is_copied_when_in_the_entrys_format_else_encoded(tmp_path: Path) -> None:
    target = _write_peg(tmp_path)
    other = Peg.new("o.cpeg_pc")
    other.add_texture("wall", np.random.default_rng(9).integers(0, 256, (16, 16, 4), dtype=np.uint8))
    (tmp_path / "in").mkdir()
    # DX10 BC3_UNORM_SRGB holds DXT5 bytes: copied as they are, never re-encoded.
    (tmp_path / "in" / "wall.dds").write_bytes(_as_dx10(other.to_dds("wall"), 78))
    assert main(["texture", "import", str(target), str(tmp_path / "in")]) == 0
    assert Peg.open(target).mip_data("wall") == other.mip_data("wall")
    # A DXT1 DDS for the DXT5 texture: decoded and encoded into DXT5, the entry's format.
    dxt1 = Peg.new("d.cpeg_pc")
    dxt1.add_texture("wall", np.full((8, 8, 4), (40, 80, 160, 255), np.uint8), PixelFormat.DXT1)
    (tmp_path / "in" / "wall.dds").write_bytes(dxt1.to_dds("wall"))
    assert main(["texture", "import", str(target), str(tmp_path / "in")]) == 0
    peg = Peg.open(target)
    assert (peg.texture("wall").format, peg.texture("wall").width) == (PixelFormat.DXT5, 8)
    assert np.abs(peg.read_image("wall").astype(int) - dxt1.read_image("wall").astype(int)).max() <= 4


def test_tga_is_imported_and_two_changed_images_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = _write_peg(tmp_path)
    main(["texture", "export", str(target), "-o", str(tmp_path / "out")])
    Image.new("RGBA", (8, 8), (0, 255, 0, 255)).save(tmp_path / "out" / "wall.tga")
    assert main(["texture", "import", str(target), str(tmp_path / "out")]) == 0
    assert np.abs(Peg.open(target).read_image("wall").astype(int) - [0, 255, 0, 255]).max() <= 4
    # The exported PNG now differs from what is stored too: which one is meant is unclear.
    before = target.read_bytes()
    Image.new("RGBA", (8, 8), (255, 0, 0, 255)).save(tmp_path / "out" / "wall.tga")
    assert main(["texture", "import", str(target), str(tmp_path / "out")]) == 1
    assert "wall.png and wall.tga both differ from wall.tga" in capsys.readouterr().err
    assert target.read_bytes() == before


def test_dry_run_writes_nothing_and_unmatched_images_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = _write_peg(tmp_path)
    main(["texture", "export", str(target), "-o", str(tmp_path / "out")])
    (tmp_path / "out" / "wall.png").rename(tmp_path / "out" / "wal.png")  # a typo: no such texture
    Image.new("RGBA", (8, 8), (1, 2, 3, 4)).save(tmp_path / "out" / "glow.png")
    capsys.readouterr()
    before = target.read_bytes(), (tmp_path / "t.gpeg_pc").read_bytes()
    assert main(["texture", "import", str(target), str(tmp_path / "out"), "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert "1 texture would change: glow.tga" in err
    assert "warning:" in err and "1 image(s) match no texture and were left alone: wal.png" in err
    assert (target.read_bytes(), (tmp_path / "t.gpeg_pc").read_bytes()) == before
    assert main(["texture", "import", str(target), str(tmp_path / "missing")]) == 1
    assert "not a folder" in capsys.readouterr().err


def test_peg_picks_one_peg_of_a_pack_for_ls_export_and_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import gamepak

    loose = _write_peg(tmp_path)
    pair = [("t.cpeg_pc", loose.read_bytes()), ("t.gpeg_pc", (tmp_path / "t.gpeg_pc").read_bytes())]
    pack = tmp_path / "zone.vpp_pc"
    with gamepak.create(pack, "vpp") as writer:
        for zone in ("a", "b"):
            inner = tmp_path / f"{zone}.str2_pc"
            with gamepak.create(inner, "vpp") as inner_writer:
                for name, data in pair:
                    inner_writer.add(name, data)
            writer.add(inner.name, inner.read_bytes())
    capsys.readouterr()
    assert main(["texture", "ls", str(pack), "--json", "--peg", "B.str2_pc/t.cpeg_pc"]) == 0
    assert {row["peg"] for row in json.loads(capsys.readouterr().out)} == {"b.str2_pc/t.cpeg_pc"}
    assert main(["texture", "export", str(pack), "-o", str(tmp_path / "out")]) == 0
    for zone in ("a", "b"):
        Image.new("RGBA", (8, 8), (9, 9, 9, 255)).save(tmp_path / "out" / f"{zone}.str2_pc" / "t.cpeg_pc" / "wall.png")
    capsys.readouterr()
    assert main(["texture", "import", str(pack), str(tmp_path / "out"), "--peg", "a.str2_pc/t.cpeg_pc"]) == 0
    err = capsys.readouterr().err
    assert "1 texture changed: a.str2_pc/t.cpeg_pc/wall.tga" in err and "match no texture" not in err
    assert main(["texture", "export", str(pack), "-o", str(tmp_path / "b"), "--peg", "b.str2_pc/t.cpeg_pc"]) == 0
    assert sorted(p.relative_to(tmp_path / "b").as_posix() for p in (tmp_path / "b").rglob("*.png")) == [
        "b.str2_pc/t.cpeg_pc/glow.png",
        "b.str2_pc/t.cpeg_pc/wall.png",
    ]
    assert main(["texture", "ls", str(pack), "--peg", "c.str2_pc/t.cpeg_pc"]) == 1
    assert "no peg 'c.str2_pc/t.cpeg_pc' in this pack" in capsys.readouterr().err


def test_pack_commands_point_a_peg_to_the_texture_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = _write_peg(tmp_path)
    for command in ("ls", "info"):
        assert main([command, str(target)]) == 1
        assert "an RFG texture set (peg), not a pack: `gamepak texture ls` lists it" in capsys.readouterr().err
    assert main(["verify", str(target)]) == 0  # a loose peg pair verifies as one (issue 42)
    assert main(["ls", str(tmp_path / "t.gpeg_pc")]) == 1
    assert "give its CPU file (.cpeg_pc) to `gamepak texture`" in capsys.readouterr().err


def test_progress_is_reported_per_texture_and_drawn_only_on_a_terminal_after_a_delay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from gamepak.cli.common import counting_bar
    from gamepak.ops.textures import export_textures, import_textures

    target = _write_peg(tmp_path)
    seen: list[str] = []
    export_textures(target, tmp_path / "out", progress=seen.append)
    assert seen == ["wall.png", "glow.png"]
    seen.clear()
    import_textures(target, tmp_path / "out", progress=seen.append)
    assert seen == ["wall.tga", "glow.tga"]
    with counting_bar("working") as advance:  # not a terminal: no bar at all
        assert advance is None
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    quick = counting_bar("quick", delay=60)
    with quick as advance:
        assert advance is not None
        advance("a")
    assert quick.done == 1 and quick._bar is None and "quick" not in capsys.readouterr().err
    slow = counting_bar("slow work", delay=0)
    with slow as advance:
        assert advance is not None
        for item in "abc":
            advance(item)
    assert slow.done == 3 and slow._bar is not None
    assert "slow work: 1" in capsys.readouterr().err


# -- DDS files as other tools write them ------------------------------------------------------------
def _rfgm_dds(peg: Peg, name: str, frame: bytes, srgb: bool = False) -> bytes:
    """A DDS as RFGM.Archiver's ImageConverter.BuildHeader writes one (rfg-modding/RFGM.Formats),
    field by field: flags CAPS|HEIGHT|WIDTH|PIXELFORMAT|MIPMAPCOUNT|LINEARSIZE, the pitch as
    width*height*4/compression ratio, depth 1, caps COMPLEX|TEXTURE|MIPMAP, FourCC DXT1/DXT5, or
    DX10 with BC1/BC3_UNORM_SRGB for sRGB entries; then the entry's whole frame, padding included."""
    texture = peg.texture(name)
    dxt1 = texture.format == PixelFormat.DXT1
    pitch = texture.width * texture.height * 4 // (8 if dxt1 else 4)
    fourcc = b"DX10" if srgb else (b"DXT1" if dxt1 else b"DXT5")
    header = b"DDS " + struct.pack(
        "<7I", 124, 0x1007 | 0x20000 | 0x80000, texture.height, texture.width, pitch, 1, texture.mips
    )
    header += bytes(44) + struct.pack("<2I4s5I", 32, 0x4, fourcc, 0, 0, 0, 0, 0)
    header += struct.pack("<5I", 0x8 | 0x1000 | 0x400000, 0, 0, 0, 0)
    if srgb:
        header += struct.pack("<5I", 72 if dxt1 else 78, 3, 0, 1, 0)
    return header + frame


def _dxt1_pair(folder: Path, seed: int) -> Path:
    """A loose pair of one 32x32 DXT1 texture with 4 mips (the spec's example: 680 bytes of
    chain, a 688-byte frame) and a 16x16 DXT5 one."""
    rng = np.random.default_rng(seed)
    peg = Peg.new("p.cpeg_pc")
    peg.add_texture("heat_map_enemy", rng.integers(0, 256, (32, 32, 4), dtype=np.uint8), PixelFormat.DXT1, mips=4)
    peg.add_texture("decal", rng.integers(0, 256, (16, 16, 4), dtype=np.uint8), PixelFormat.DXT5)
    cpu, gpu = peg.to_bytes()
    folder.mkdir(exist_ok=True)
    (folder / "p.gpeg_pc").write_bytes(gpu)
    (folder / "p.cpeg_pc").write_bytes(cpu)
    return folder / "p.cpeg_pc"


@pytest.mark.parametrize("srgb", [False, True], ids=["FourCC", "DX10 sRGB"])
def test_rfgm_archiver_dds_exports_import_back_to_the_games_bytes(tmp_path: Path, srgb: bool) -> None:
    """RFGM.Archiver names a texture `{order:05} {name} {format} {mips}.dds` and writes the
    entry's whole frame (the 680-byte chain and its padding: 688 bytes) after its header."""
    game = _dxt1_pair(tmp_path / "game", seed=1)
    original = Peg.open(game)
    frame = original._frames[0]
    assert (len(frame), original.texture("heat_map_enemy").chain_size) == (688, 680)
    rfgm = tmp_path / "rfgm"
    rfgm.mkdir()
    for order, texture in enumerate(original.textures):
        label = {PixelFormat.DXT1: "PcDxt1", PixelFormat.DXT5: "PcDxt5"}[texture.format]
        data = _rfgm_dds(original, texture.name, original._frames[order], srgb)
        (rfgm / f"{order:05} {texture.name} {label} {texture.mips}.dds").write_bytes(data)
    edited = _dxt1_pair(tmp_path / "edited", seed=2)  # the same entries, other pixels
    assert main(["texture", "import", str(edited), str(rfgm)]) == 0
    assert edited.read_bytes() == game.read_bytes()
    assert (edited.parent / "p.gpeg_pc").read_bytes() == (game.parent / "p.gpeg_pc").read_bytes()


def test_a_dds_with_more_mips_or_padding_gives_the_entrys_chain(tmp_path: Path) -> None:
    from gamepak.formats.rfg.peg.dds import dds_bytes

    source = Peg.open(_dxt1_pair(tmp_path / "src", seed=1))
    texture = source.texture("heat_map_enemy")
    full = Peg.new("full.cpeg_pc")  # the same top level, every mip down to 1x1 (6)
    full.add_texture("t", source.read_image("heat_map_enemy"), PixelFormat.DXT1, mips=6)
    longer = dds_bytes(full.texture("t"), source.mip_data("heat_map_enemy") + full.mip_data("t")[680:])
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "heat_map_enemy.dds").write_bytes(longer)
    target = _dxt1_pair(tmp_path / "dst", seed=2)
    assert main(["texture", "import", str(target), str(tmp_path / "in")]) == 0
    imported = Peg.open(target)
    assert imported.texture("heat_map_enemy").mips == texture.mips == 4  # the entry's count
    assert imported.mip_data("heat_map_enemy") == source.mip_data("heat_map_enemy")
    # A DDS that claims 4 mips and holds less than their 680 bytes is refused, naming both.
    (tmp_path / "in" / "heat_map_enemy.dds").write_bytes(dds_bytes(texture, source.mip_data("heat_map_enemy")[:600]))
    assert main(["texture", "import", str(target), str(tmp_path / "in")]) == 1


def test_a_dds_with_fewer_mips_gets_the_rest_made_from_its_smallest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dataclasses import replace

    from gamepak.formats.rfg.peg.dds import dds_bytes
    from gamepak.formats.rfg.peg.pixels import decode, encode_chain

    source = Peg.open(_dxt1_pair(tmp_path / "src", seed=1))
    texture = source.texture("heat_map_enemy")
    two = source.mip_data("heat_map_enemy")[: 512 + 128]  # levels 32x32 and 16x16
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "heat_map_enemy.dds").write_bytes(dds_bytes(replace(texture, mips=2), two))
    target = _dxt1_pair(tmp_path / "dst", seed=2)
    capsys.readouterr()
    assert main(["texture", "import", str(target), str(tmp_path / "in")]) == 0
    assert "2 of the 4 mips heat_map_enemy.tga has; the other 2 made from the smallest given" in capsys.readouterr().err
    chain = Peg.open(target).mip_data("heat_map_enemy")
    assert chain[:640] == two  # the given levels as they are
    smallest = decode(PixelFormat.DXT1, two[512:], 16, 16)
    assert chain[640:] == encode_chain(PixelFormat.DXT1, smallest, 3)[128:]  # 8x8 and 4x4 from 16x16


@pytest.mark.parametrize(("dxgi", "named"), [(2, "DXGI format 2 (R32G32B32A32_FLOAT)"), (999, "DXGI format 999")])
def test_a_dds_of_an_unknown_dx10_format_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dxgi: int, named: str
) -> None:
    target = _write_peg(tmp_path)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "wall.dds").write_bytes(_as_dx10(Peg.open(target).to_dds("wall"), dxgi))
    capsys.readouterr()
    assert main(["texture", "import", str(target), str(tmp_path / "in")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"wall.dds: offset 128: {named} is not one gamepak reads" in err


# -- images sized before they are decoded ---------------------------------------------------------
def _png_header_only(width: int, height: int) -> bytes:
    """A PNG whose IHDR claims width x height RGBA, with one tiny IDAT: a few dozen bytes."""
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")


def _rle_tga(width: int, height: int) -> bytes:
    """An RLE true-colour TGA (type 10) of one colour: 128-pixel run packets, ~5 bytes per 128."""
    header = struct.pack("<BBBHHBHHHHBB", 0, 0, 10, 0, 0, 0, 0, 0, width, height, 32, 8)
    runs, rest = divmod(width * height, 128)
    body = b"\xff\x10\x20\x30\xff" * runs + (bytes([0x80 | (rest - 1)]) + b"\x10\x20\x30\xff" if rest else b"")
    return header + body


def _peak_rss_mb(*arguments: str) -> tuple[int, float]:
    """(exit code, peak RSS in MB) of the CLI run in a fresh interpreter: VmHWM, the high-water
    mark of its own memory (ru_maxrss would carry the forking test process's over the exec)."""
    import os
    import subprocess
    import sys

    script = (
        "import re, sys; from gamepak.cli import main; code = main(sys.argv[1:]); "
        "print(re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read()).group(1)); sys.exit(code)"
    )
    src = str(Path(__file__).resolve().parents[1] / "src")
    done = subprocess.run(
        [sys.executable, "-c", script, *arguments],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": src},
    )
    return done.returncode, int(done.stdout.split()[-1]) / 1024


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="peak memory is read from /proc")
def test_huge_images_are_refused_from_their_header(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = _write_peg(tmp_path)
    before = target.read_bytes(), (tmp_path / "t.gpeg_pc").read_bytes()
    (tmp_path / "in").mkdir()
    cases = [
        ("wall.png", _png_header_only(9000, 9000), "9000x9000 is larger than gamepak takes"),
        ("wall.png", _png_header_only(16, 40000), "16x40000 is larger than gamepak takes"),
        ("wall.tga", _rle_tga(8192, 8192), "8192x8192 is more than 4x the area of wall.tga (16x16)"),
    ]
    for name, data, message in cases:
        for stale in (tmp_path / "in").iterdir():
            stale.unlink()
        (tmp_path / "in" / name).write_bytes(data)
        assert len(data) < 3_000_000
        code, peak = _peak_rss_mb("texture", "import", str(target), str(tmp_path / "in"))
        assert code == 1 and peak < 300, (name, peak)
        capsys.readouterr()
        assert main(["texture", "import", str(target), str(tmp_path / "in")]) == 1
        assert message in capsys.readouterr().err
        assert (target.read_bytes(), (tmp_path / "t.gpeg_pc").read_bytes()) == before
    Image.new("RGBA", (5000, 4000)).save(tmp_path / "big.png")
    assert main(["texture", "add", str(target), str(tmp_path / "big.png"), "--name", "big"]) == 1
    assert "5000x4000 is more than 4096x4096; --resize allows a larger image" in capsys.readouterr().err


def test_resize_allows_an_image_larger_than_4x_the_texture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = _write_peg(tmp_path)
    main(["texture", "export", str(target), "-o", str(tmp_path / "out")])
    Image.new("RGBA", (64, 64), (9, 9, 9, 255)).save(tmp_path / "out" / "wall.png")  # 16x the area
    capsys.readouterr()
    assert main(["texture", "import", str(target), str(tmp_path / "out")]) == 1
    assert "64x64 is more than 4x the area of wall.tga (16x16); --resize allows" in capsys.readouterr().err
    assert Peg.open(target).texture("wall").width == 16
    assert main(["texture", "import", str(target), str(tmp_path / "out"), "--resize"]) == 0
    assert Peg.open(target).texture("wall").width == 64
    Image.new("RGBA", (32, 32), (1, 2, 3, 255)).save(tmp_path / "out" / "wall.png")  # 1/4: allowed
    assert main(["texture", "import", str(target), str(tmp_path / "out")]) == 0


# -- --asm, and advice that runs ---------------------------------------------------------------------
def _zone_with_separate_asm(folder: Path) -> tuple[Path, Path]:
    """zone.vpp_pc holding xray.str2_pc (holding the pair t.cpeg_pc/t.gpeg_pc), and the game's
    separate zone.asm_pc whose container `xray` describes that .str2_pc (sizes still unset)."""
    import gamepak
    from gamepak.formats.rfg.asm import AsmContainer, AsmFile, AsmPrimitive

    loose = _write_peg(folder)
    cpu, gpu = loose.read_bytes(), (folder / "t.gpeg_pc").read_bytes()
    inner = folder / "xray.str2_pc"
    with gamepak.create(inner, "vpp") as writer:
        writer.add("t.cpeg_pc", cpu)
        writer.add("t.gpeg_pc", gpu)
    pack = folder / "zone.vpp_pc"
    with gamepak.create(pack, "vpp") as writer:
        writer.add("xray.str2_pc", inner.read_bytes())
    table = AsmFile([AsmContainer("xray", primitives=[AsmPrimitive("t.cpeg_pc", header_size=1, data_size=1)])])
    asm = folder / "zone.asm_pc"
    asm.write_bytes(table.to_bytes())
    return pack, asm


def _advised(err: str, argv: list[str], asm: Path) -> list[list[str]]:
    """Every command the warnings in `err` advise, as argv lists: each `gamepak ...` quoted in
    backticks, and `pass --asm FILE` as the same command with --asm and the table."""
    import re
    import shlex

    commands = []
    for line in err.splitlines():
        if "warning:" not in line:
            continue
        if "pass --asm FILE" in line:
            commands.append([*argv, "--asm", str(asm)])
        commands += [shlex.split(quoted)[1:] for quoted in re.findall(r"`(gamepak [^`]*)`", line)]
    return commands


def test_every_warnings_advice_is_a_command_that_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import warnings

    from gamepak.formats.rfg.asm import AsmFile

    warnings.simplefilter("always")  # each command is its own process in real use: every warning shown

    pack, asm = _zone_with_separate_asm(tmp_path)
    out = tmp_path / "out"
    assert main(["texture", "export", str(pack), "-o", str(out)]) == 0
    folder = out / "xray.str2_pc" / "t.cpeg_pc"
    Image.new("RGBA", (32, 32), (1, 2, 3, 255)).save(folder / "wall.png")
    Image.new("RGBA", (8, 8), (4, 5, 6, 255)).save(folder / "decal.png")  # no such texture yet
    Image.new("RGBA", (4, 4), (7, 8, 9, 255)).save(tmp_path / "dot.png")
    verbs = [
        ["texture", "import", str(pack), str(out)],
        ["texture", "add", str(pack), str(tmp_path / "dot.png"), "--name", "dot", "--format", "8888"],
        ["texture", "rm", str(pack), "glow"],
    ]
    ran: list[list[str]] = []
    for argv in verbs:
        before = pack.read_bytes()
        capsys.readouterr()
        assert main(argv) == 0
        pending = [(command, before) for command in _advised(capsys.readouterr().err, argv, asm)]
        assert pending, argv  # each of these warns (no .asm_pc in the pack; an unused image)
        while pending:  # an advised command's own advice is run too
            command, advised_on = pending.pop(0)
            if "--asm" in command:
                # "pass --asm FILE": the same command, run that way instead (on the pack as it was).
                pack.write_bytes(advised_on)
            before = pack.read_bytes()
            assert main(command) == 0, command
            ran.append(command)
            err = capsys.readouterr().err
            if "--asm" in command:
                assert "pass --asm FILE" not in err and "updated zone.asm_pc" in err  # it did what it said
            waiting = [queued for queued, _ in pending]
            pending += [(more, before) for more in _advised(err, command, asm) if more not in ran + waiting]
    assert [(command[1], "--asm" in command) for command in ran] == [
        ("import", True),
        ("add", False),  # the unused decal.png, as the warning's command adds it
        ("add", True),  # ... which warns about the .asm_pc in turn
        ("add", True),
        ("rm", True),
    ]
    names = [row["name"] for row in _ls_json(pack, capsys)]
    assert names == ["wall.tga", "decal.tga", "dot.tga"]
    container = AsmFile.parse(asm.read_bytes()).container("xray")
    assert container is not None and container.primitives[0].header_size > 1  # kept current


def _ls_json(source: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    capsys.readouterr()
    assert main(["texture", "ls", str(source), "--json"]) == 0
    return list(json.loads(capsys.readouterr().out))


def test_asm_must_name_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pack, _ = _zone_with_separate_asm(tmp_path)
    before = pack.read_bytes()
    assert main(["texture", "rm", str(pack), "glow", "--asm", str(tmp_path / "missing.asm_pc")]) == 1
    assert "missing.asm_pc: no such file (--asm)" in capsys.readouterr().err
    assert pack.read_bytes() == before


# -- summaries --------------------------------------------------------------------------------------
def test_add_and_rm_say_what_they_did_and_an_empty_ls_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import gamepak

    target = _write_peg(tmp_path)
    Image.new("RGBA", (8, 4), (1, 2, 3, 4)).save(tmp_path / "new.png")
    capsys.readouterr()
    assert main(["texture", "add", str(target), str(tmp_path / "new.png"), "--name", "decal", "--format", "565"]) == 0
    assert capsys.readouterr().err == f"gamepak: added decal.tga (8x4 565, 4 mips) to {target}\n"
    assert main(["texture", "rm", str(target), "wall", "glow"]) == 0
    assert capsys.readouterr().err == f"gamepak: removed 2 textures from {target}: wall.tga, glow.tga\n"
    assert main(["texture", "rm", str(target), "decal", "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["texture", "ls", str(target)]) == 0
    assert capsys.readouterr() == ("", f"gamepak: {target}: no textures\n")
    assert main(["texture", "ls", str(target), "-q"]) == 0
    assert capsys.readouterr() == ("", "")
    empty = tmp_path / "empty.vpp_pc"
    with gamepak.create(empty, "vpp") as writer:
        writer.add("readme.txt", b"no pegs here")
    assert main(["texture", "ls", str(empty)]) == 0
    assert capsys.readouterr().err == f"gamepak: {empty}: no textures\n"
    assert main(["texture", "ls", str(empty), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


# -- one name rule for every writer of names --------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("../../evil.tga", "'..' would leave the destination"),
        ("/abs.tga", "absolute path"),
        ("a/b.tga", "a '/' in a name that holds no folders"),
        ("a\\b.tga", "backslash in name"),
        ("x" * 300, "is 304 bytes; file systems allow 255"),
        ("x" * 250 + ".tgaa", "is 254 bytes; at most 255"),  # fits, but its STEM.png does too: allowed
        ("", "empty name"),
        ("WALL", "differs only in case from 'wall.tga', and the game ignores case"),
        ("wall.dds", "exports to the same file as 'wall.tga'"),
        ("con.tga", "reserved device name on Windows"),
        ("caf\u00e9", "the name block holds ASCII only"),
    ],
)
def test_texture_add_takes_only_names_export_can_write_back_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, problem: str
) -> None:
    target = _write_peg(tmp_path)
    before = target.read_bytes(), (tmp_path / "t.gpeg_pc").read_bytes()
    Image.new("RGBA", (4, 4), (1, 2, 3, 4)).save(tmp_path / "new.png")
    capsys.readouterr()
    code = main(["texture", "add", str(target), str(tmp_path / "new.png"), "--name", name])
    err = capsys.readouterr().err
    if name.endswith(".tgaa"):
        assert code == 0
    else:
        assert code == 1 and problem in err and err.count("\n") == 1, err
        assert (target.read_bytes(), (tmp_path / "t.gpeg_pc").read_bytes()) == before
    # whatever was taken, every texture can be exported again
    assert main(["texture", "export", str(target), "-o", str(tmp_path / "out")]) == 0


@pytest.mark.parametrize("fmt", ["zip", "vpp"])
def test_add_refuses_a_name_extraction_would_refuse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    import gamepak

    pack = tmp_path / f"p.{'zip' if fmt == 'zip' else 'vpp_pc'}"
    with gamepak.create(pack, fmt) as writer:
        writer.add("a.txt", b"a")
    (tmp_path / "f.txt").write_bytes(b"f")
    before = pack.read_bytes()
    for name in ("x" * 300, "d/" + "y" * 256):
        capsys.readouterr()
        assert main(["add", str(pack), str(tmp_path / "f.txt"), "--name", name]) == 1
        assert "255" in capsys.readouterr().err
        assert pack.read_bytes() == before
    assert main(["extract", str(pack), "-o", str(tmp_path / "x")]) == 0


def test_rfgm_8888_exports_import_back_exactly_whatever_the_order(tmp_path: Path) -> None:
    """RFGM.Archiver labels 8888 R8G8B8A8 (DX10 format 28) and writes the stored bytes: a file
    with its name is copied as the entry's bytes under either --order; the same file under
    export's name is taken at its label (red and blue swapped under the default BGRA reading)."""
    (tmp_path / "game").mkdir()
    game = _write_peg(tmp_path / "game")
    stored = Peg.open(game)
    glow = stored.texture("glow")
    header = b"DDS " + struct.pack("<7I", 124, 0x1007 | 0x20000 | 0x8, 8, 8, 8 * 4, 1, glow.mips) + bytes(44)
    header += struct.pack("<2I4s5I", 32, 0x4, b"DX10", 0, 0, 0, 0, 0) + struct.pack("<5I", 0x401008, 0, 0, 0, 0)
    header += struct.pack("<5I", 28, 3, 0, 1, 0)
    frame = stored._frames[1]
    (tmp_path / "rfgm").mkdir()
    (tmp_path / "rfgm" / f"00001 glow.tga Pc8888 {glow.mips}.dds").write_bytes(header + frame)
    for order in ("BGRA", "RGBA"):
        other = _write_other_peg(tmp_path / f"other-{order}")
        assert main(["texture", "import", str(other), str(tmp_path / "rfgm"), "--order", order]) == 0
        assert Peg.open(other).mip_data("glow") == stored.mip_data("glow")
    # RFGM's PNG of it: the stored bytes read as R, G, B, A.
    (tmp_path / "rfgm-png").mkdir()
    raw = np.frombuffer(stored.mip_data("glow")[: 8 * 8 * 4], np.uint8).reshape(8, 8, 4)
    Image.fromarray(raw, "RGBA").save(tmp_path / "rfgm-png" / f"00001 glow.tga Pc8888 {glow.mips}.png")
    other = _write_other_peg(tmp_path / "other-png")
    assert main(["texture", "import", str(other), str(tmp_path / "rfgm-png")]) == 0
    assert Peg.open(other).mip_data("glow") == stored.mip_data("glow")
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "glow.dds").write_bytes(header + frame)
    other = _write_other_peg(tmp_path / "plain-other")
    assert main(["texture", "import", str(other), str(tmp_path / "plain")]) == 0
    swapped = Peg.open(other).read_image("glow")
    assert np.array_equal(swapped, stored.read_image("glow")[..., [2, 1, 0, 3]])
