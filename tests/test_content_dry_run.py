"""Content imports' dry runs are read-only, as the edit verbs' are (`test_edit_dry_run`): with
`--dry-run`, `texture`, `table`, `text`, `zone`, `sprite` and `model` import take no edit lock
and clear no stale temporaries; they say what would change while another process edits the
pack, and leave what a killed run left for the next command that writes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from quake_bytes import miptex_bytes, wad_bytes
from rfg_mesh_bytes import build
from sprite_bytes import simple_sprite
from test_cli_texture import _write_peg
from test_edit_dry_run import HOLDER
from test_rfg_locatext import sample_file
from test_rfg_mesh_export import moved_glb, textured_spec
from test_rfg_xtbl import ITEMS, weapons
from test_rfg_zones import nested_pack
from test_scenes import list_line, make_track, mesh_of, png, quad
from test_sprite_cli import other_sprite

import gamepak
from gamepak.models import scene

from conftest import in_process_cli, write_pack

# A case: (the pack, the dry-run command) made in a folder; the command's output must say this.
Case = Callable[[Path], tuple[Path, list[str], str]]
# How a case writes its pack: `conftest.write_pack`, or a stand-in storing names gamepak's
# writers refuse (`test_content_dry_run_refusals`).
Store = Callable[[Path, dict[str, bytes]], Path]


def _peg_pack(work: Path, stem: str = "t", store: Store = write_pack) -> tuple[Path, list[str], str]:
    """A `.vpp_pc` holding a peg pair (`STEM.cpeg_pc`), and a folder whose `glow` image differs."""
    loose = _write_peg(work)
    pack = store(
        work / "textures.vpp_pc",
        {f"{stem}.cpeg_pc": loose.read_bytes(), f"{stem}.gpeg_pc": (work / "t.gpeg_pc").read_bytes()},
    )
    assert in_process_cli("texture", "export", str(pack), "-o", str(work / "out"))[0] == 0
    (glow,) = (work / "out").rglob("glow.*")
    Image.new("RGBA", (8, 8), (1, 2, 3, 255)).save(glow)
    return pack, ["texture", "import", str(pack), str(work / "out")], "would change"


def _wad_pack(work: Path, lump: bytes = b"WALL", store: Store = write_pack) -> tuple[Path, list[str], str]:
    """A PAK holding a WAD of one miptex (`lump`), and a folder whose image of it differs."""
    wad = wad_bytes([(lump, 0x44, miptex_bytes(lump, 16, 16))])
    pack = store(work / "textures.pak", {"gfx/base.wad": wad})
    assert in_process_cli("texture", "export", str(pack), "-o", str(work / "out"))[0] == 0
    (wall,) = (work / "out").rglob("*.png")
    with Image.open(wall) as image:
        pixels = np.array(image.convert("RGBA"))
    pixels[:4, :4] = pixels[8, 8]
    Image.fromarray(pixels).save(wall)
    return pack, ["texture", "import", str(pack), str(work / "out")], "would change"


def _table_pack(work: Path, member: str = "weapons.xtbl", store: Store = write_pack) -> tuple[Path, list[str], str]:
    pack = store(work / "table.vpp_pc", {member: weapons(), "items.xtbl": ITEMS})
    assert in_process_cli("table", "export", str(pack), "-o", str(work / "sheets"))[0] == 0
    (sheet,) = (work / "sheets").rglob("weapons.xtbl.*")
    sheet.write_text(sheet.read_text("utf-8").replace("pistol", "blaster", 1), "utf-8")
    return pack, ["table", "import", str(pack), str(work / "sheets")], "blaster"


def _loose_table(work: Path) -> tuple[Path, list[str], str]:
    table = work / "weapons.xtbl"
    table.write_bytes(weapons())
    assert in_process_cli("table", "export", str(table), "-o", str(work / "sheets"))[0] == 0
    (sheet,) = (work / "sheets").rglob("weapons.xtbl.*")
    sheet.write_text(sheet.read_text("utf-8").replace("pistol", "blaster", 1), "utf-8")
    return table, ["table", "import", str(table), str(work / "sheets")], "blaster"


def _text_pack(
    work: Path, member: str = "locatexts_xx_yy.rfglocatext", store: Store = write_pack
) -> tuple[Path, list[str], str]:
    data = sample_file(work).read_bytes()
    pack = store(work / "misc.vpp_pc", {member: data})
    out = work / "t.json"
    assert in_process_cli("text", "export", str(pack), "-o", str(out))[0] == 0
    rows = json.loads(out.read_text("utf-8"))
    rows[0]["text"] = "Go"
    out.write_text(json.dumps(rows), "utf-8")
    return pack, ["text", "import", str(pack), str(out), "-o", str(pack), "--overwrite"], "would write"


def _zone_pack(work: Path) -> tuple[Path, list[str], str]:
    pack = nested_pack(work)
    assert in_process_cli("zone", "export", str(pack), "-o", str(work / "out"))[0] == 0
    document = work / "out" / "dlc01_dm_01.str2_pc" / "dlc01_09_08_130.layer_pc.json"
    loaded = json.loads(document.read_text())
    loaded["objects"][1]["properties"][1]["value"]["position"] = [7.5, 8, 9]
    document.write_text(json.dumps(loaded))
    return pack, ["zone", "import", str(pack), str(work / "out")], "0x78800002"


def _sprite_pack(work: Path) -> tuple[Path, list[str], str]:
    pack = work / "sprites.f"
    with gamepak.create(pack, "j2me-table") as writer:
        writer.add("0", simple_sprite())
        writer.add("1", other_sprite())
    assert in_process_cli("sprite", "export", str(pack), "-o", str(work / "out"))[0] == 0
    path = work / "out" / "1" / "sprite.json"
    document = json.loads(path.read_text())
    document["aframes"][0][1] = 7
    path.write_text(json.dumps(document))
    return pack, ["sprite", "import", str(pack), str(work / "out")], "would change"


def _mesh_pack(
    work: Path, stem: str = "thing", store: Store = write_pack, pack_name: str = "thing.str2_pc"
) -> tuple[Path, list[str], str]:
    """An RFG mesh pair (`STEM.csmesh_pc`) in a `.str2_pc`, and a glTF of it with one vertex moved."""
    cpu, gpu = build(textured_spec())
    pack = store(work / pack_name, {f"{stem}.csmesh_pc": cpu, f"{stem}.gsmesh_pc": gpu})
    out = work / "thing.glb"
    assert in_process_cli("model", "export", str(pack), f"{stem}.csmesh_pc", "-o", str(out))[0] == 0
    out.write_bytes(moved_glb(out.read_bytes(), 3, (0.0, 0.0, 0.125)))
    return pack, ["model", "import", str(out), "--into", str(pack), f"{stem}.gsmesh_pc"], "would change"


def _scene_track(work: Path, renamed: str | None = None) -> tuple[Path, list[str], str]:
    """A VDrift track, and a glTF of its scene with one object moved: its `objects.jpk` edited
    (with `renamed`, the moved object is a new one of that name)."""
    track = make_track(
        work / "track",
        [list_line("road.joe", "asphalt.png", mipmap=1), list_line("sky.joe", "sky.png", skybox=1)],
        {"road.joe": quad(0, 0, 0, 10), "sky.joe": quad(-100, -100, 60, 200)},
        {"asphalt.png": png((200, 60, 40)), "sky.png": png((30, 200, 60))},
    )
    found = scene.load(track)
    node = next(node for node in found.root.walk() if node.name == "road.joe")
    road = mesh_of(node)
    road.positions = road.positions + np.float32(2.0)
    node.name = renamed or node.name
    scene.save(found, work / "moved.glb")
    pack = track / "objects" / "objects.jpk"
    return pack, ["model", "import", str(work / "moved.glb"), "--into", str(track)], "1 changed"


CASES: dict[str, Case] = {
    "texture-peg": _peg_pack,
    "texture-wad": _wad_pack,
    "table-pack": _table_pack,
    "table-loose": _loose_table,
    "text-pack": _text_pack,
    "zone-pack": _zone_pack,
    "sprite-pack": _sprite_pack,
    "model-mesh": _mesh_pack,
    "model-scene": _scene_track,
}


@pytest.fixture(autouse=True)
def scans_of_this_test(monkeypatch: pytest.MonkeyPatch) -> None:
    import gamepak.core.atomic

    monkeypatch.setattr(gamepak.core.atomic, "_scanned", {})  # each test a new process, as to the folders scanned


def _stale_temporary(target: Path) -> Path:
    """A temporary of `target` that a killed gamepak left beside it."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = target.parent / f".{target.name}.gamepak-{int(dead.stdout)}-0.tmp"
    stale.write_bytes(b"half a pack")
    return stale


@pytest.fixture
def held() -> Iterator[Callable[[Path], None]]:
    """Holds the edit lock of a pack from another process (until the test ends)."""
    holders: list[subprocess.Popen[str]] = []

    def hold(pack: Path) -> None:
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(pack)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        holders.append(holder)
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"

    yield hold
    for holder in holders:
        holder.communicate("", timeout=60)


@pytest.mark.parametrize("case", list(CASES))
def test_a_content_dry_run_neither_waits_for_the_lock_nor_clears_temporaries(
    tmp_path: Path, held: Callable[[Path], None], case: str
) -> None:
    target, command, said = CASES[case](tmp_path)
    if target.suffix != ".xtbl":  # a loose table is written whole, not edited: no lock
        held(target)
    stale = _stale_temporary(target)
    import gamepak.core.atomic

    gamepak.core.atomic._scanned.clear()  # as in a new process: the folder not scanned yet
    before = target.read_bytes()
    code, out, err = in_process_cli(*command, "--dry-run")
    assert code == 0, err
    assert said in out + err
    assert stale.exists()
    assert target.read_bytes() == before
    # The run that writes clears it (and, where a pack is edited, refuses while another holds it).
    code, _, err = in_process_cli(*command)
    if target.suffix == ".xtbl":
        assert code == 0, err
        assert target.read_bytes() != before
    else:
        assert code == 1 and "another gamepak process is editing it" in err, err
    assert not stale.exists()
