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


def test_unchanged_export_imports_back_byte_identically(tmp_path: Path) -> None:
    target = _write_peg(tmp_path)
    before = target.read_bytes(), (tmp_path / "t.gpeg_pc").read_bytes()
    for kind in ("png", "dds"):
        assert main(["texture", "export", str(target), "-o", str(tmp_path / kind), "--as", kind]) == 0
        assert main(["texture", "import", str(target), str(tmp_path / kind)]) == 0
        assert (target.read_bytes(), (tmp_path / "t.gpeg_pc").read_bytes()) == before


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
    assert "1 texture(s) would change: glow.tga" in err
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
    assert "1 texture(s) changed: a.str2_pc/t.cpeg_pc/wall.tga" in err and "match no texture" not in err
    assert main(["texture", "export", str(pack), "-o", str(tmp_path / "b"), "--peg", "b.str2_pc/t.cpeg_pc"]) == 0
    assert sorted(p.relative_to(tmp_path / "b").as_posix() for p in (tmp_path / "b").rglob("*.png")) == [
        "b.str2_pc/t.cpeg_pc/glow.png",
        "b.str2_pc/t.cpeg_pc/wall.png",
    ]
    assert main(["texture", "ls", str(pack), "--peg", "c.str2_pc/t.cpeg_pc"]) == 1
    assert "no peg 'c.str2_pc/t.cpeg_pc' in this pack" in capsys.readouterr().err


def test_pack_commands_point_a_peg_to_the_texture_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = _write_peg(tmp_path)
    for command in ("ls", "info", "verify"):
        assert main([command, str(target)]) == 1
        assert "an RFG texture set (peg), not a pack: `gamepak texture ls` lists it" in capsys.readouterr().err
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
