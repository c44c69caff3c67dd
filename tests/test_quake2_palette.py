"""Quake II images (.wal) are drawn through Quake II's palette: the game's pics/colormap.pcx
(in the pack, or near a loose file), else the one gamepak ships (a marked data file), never
Quake 1's without a word; --palette overrides; every command says which palette it used."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from quake_bytes import qpic_bytes, wal_bytes

import gamepak
from gamepak.cli import main
from gamepak.formats.quake import palette


def _pcx(colour: tuple[int, int, int]) -> bytes:
    """A 256-colour PCX whose palette is `colour` everywhere: the end of a colormap.pcx."""
    return b"\x0a" + bytes(127) + bytes(16 * 16) + b"\x0c" + bytes(colour) * 256


def _loose_wal(root: Path) -> Path:
    """baseq2/textures/e1u1/floor.wal, as a Quake II install lays it out."""
    path = root / "baseq2" / "textures" / "e1u1" / "floor.wal"
    path.parent.mkdir(parents=True)
    path.write_bytes(wal_bytes(16, 16))
    return path


def _exported_colour(folder: Path) -> tuple[int, ...]:
    [png] = sorted(folder.rglob("*.png"))
    return tuple(np.asarray(Image.open(png))[0, 1])


def test_a_wal_without_colormap_is_never_drawn_through_quake_1s_palette(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: exported through Quake 1's palette without a word, exit 0."""
    monkeypatch.setattr(palette, "QUAKE2_PALETTE_DATA", str(tmp_path / "none.hex"))  # as shipped today: empty
    wal = _loose_wal(tmp_path)
    capsys.readouterr()
    assert main(["texture", "export", str(wal), "-o", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(wal) in err
    assert "Quake II's palette" in err and "--palette" in err
    assert not (tmp_path / "out").exists()
    # A listing draws nothing: it lists the image and says no palette was found.
    assert main(["texture", "ls", str(wal)]) == 0
    listed = capsys.readouterr()
    assert "wal" in listed.out and "palette: none found" in listed.err and "--palette" in listed.err


def test_the_shipped_quake2_palette_is_used_and_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "quake2-palette.hex"
    data.write_text("# a test palette\n" + (bytes([1, 2, 3]) * 256).hex() + "\n")
    monkeypatch.setattr(palette, "QUAKE2_PALETTE_DATA", str(data))
    wal = _loose_wal(tmp_path)
    capsys.readouterr()
    assert main(["texture", "export", str(wal), "-o", str(tmp_path / "out")]) == 0
    assert "palette: Quake II's palette (built in; no pics/colormap.pcx found)" in capsys.readouterr().err
    assert _exported_colour(tmp_path / "out") == (1, 2, 3, 255)
    data.write_text("00" * 700)
    assert main(["texture", "export", str(wal), "-o", str(tmp_path / "again")]) == 1
    assert "700 bytes, not 768" in capsys.readouterr().err


def test_the_games_colormap_near_a_loose_wal_wins_and_palette_overrides_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wal = _loose_wal(tmp_path)
    colormap = tmp_path / "baseq2" / "pics" / "colormap.pcx"
    colormap.parent.mkdir()
    colormap.write_bytes(_pcx((0, 0, 200)))
    capsys.readouterr()
    assert main(["texture", "export", str(wal), "-o", str(tmp_path / "out")]) == 0
    assert f"palette: {colormap}" in capsys.readouterr().err
    assert _exported_colour(tmp_path / "out") == (0, 0, 200, 255)
    assert main(["texture", "import", str(wal), str(tmp_path / "out")]) == 0  # same palette: unchanged
    assert "unchanged" in capsys.readouterr().err
    own = tmp_path / "mine.lmp"
    own.write_bytes(bytes([9, 8, 7]) * 256)
    assert main(["texture", "export", str(wal), "-o", str(tmp_path / "own"), "--palette", str(own)]) == 0
    assert f"palette: {own} (--palette)" in capsys.readouterr().err
    assert _exported_colour(tmp_path / "own") == (9, 8, 7, 255)


def test_a_pack_uses_its_colormap_for_wal_and_quakes_palette_for_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(palette, "QUAKE2_PALETTE_DATA", str(tmp_path / "none.hex"))
    pak = tmp_path / "pak0.pak"
    with gamepak.create(pak) as writer:
        writer.add("gfx/box.lmp", qpic_bytes(1, 1, b"\1"))  # a Quake 1 picture: Quake's palette
        writer.add("pics/colormap.pcx", _pcx((0, 0, 200)))
        writer.add("textures/e1u1/floor.wal", wal_bytes(16, 16))
    capsys.readouterr()
    assert main(["texture", "ls", str(pak), "--json"]) == 0
    rows = {row["file"]: row["palette"] for row in json.loads(capsys.readouterr().out)}
    assert rows == {
        "gfx/box.lmp": f"{pak}:pics/colormap.pcx",  # the pack's only palette, as before
        "textures/e1u1/floor.wal": f"{pak}:pics/colormap.pcx",
    }
    # A pack of Quake 1 images only never looks for Quake II's palette.
    q1 = tmp_path / "q1.pak"
    with gamepak.create(q1) as writer:
        writer.add("gfx/box.lmp", qpic_bytes(1, 1, b"\1"))
    assert main(["texture", "export", str(q1), "-o", str(tmp_path / "q1")]) == 0
    assert "palette: Quake's palette (built in: LibreQuake's)" in capsys.readouterr().err


def test_the_shipped_data_file_is_marked_and_loads() -> None:
    """The data file says what it is; while it holds no palette, quake2_palette() says so."""
    text = Path(palette.QUAKE2_PALETTE_DATA).read_text(encoding="ascii")
    assert text.startswith("# gamepak data file: the Quake II palette")
    loaded = palette.quake2_palette()
    assert loaded is None or len(loaded) == 768
