"""A content import's dry run refuses what its real run refuses, with the same message and exit
code: the dry runs plan the pack's edit through `Editor(plan_only=True)` (`ops.content_files.
pack_edit`) as the real run makes it, instead of stopping before the editor. Each case below is
one the dry run used to pass ("would change ...") while the real run refused: a member name the
pack's format cannot store (a packfile's names hold no '/', a WAD's lump names at most 15 bytes,
no name a backslash), on the member changed or on another that the pack's rebuild (or a nested
pack's) writes again (`Editor.check`), a `--asm` that is not there, an output that exists."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from sprite_bytes import simple_sprite
from test_content_dry_run import _mesh_pack, _peg_pack, _scene_track, _table_pack, _text_pack, _wad_pack
from test_rfg_zones import a_layer
from test_sprite_cli import other_sprite

from conftest import in_process_cli, write_pack

# A case: made in a folder, (the file the import would change, the import's command, what the
# refusal says).
Case = Callable[[Path], tuple[Path, list[str], str]]


def _renamed(pack: Path, old: str, new: str) -> Path:
    """`pack` with its member `old` stored as `new` (same length): a name gamepak's writers
    refuse but its readers take, as another tool may have written it."""
    assert len(old) == len(new)
    data = pack.read_bytes()
    assert data.count(old.encode()) == 1, "the name is stored once, uncompressed"
    pack.write_bytes(data.replace(old.encode(), new.encode()))
    return pack


def _slashed_pack(path: Path, members: dict[str, bytes]) -> Path:
    """A packfile of `members` whose names hold '/' (which a packfile's writer refuses): written
    with '_' for each, then renamed in place."""
    pack = write_pack(path, {name.replace("/", "_"): data for name, data in members.items()})
    for name in members:
        if "/" in name:
            _renamed(pack, name.replace("/", "_"), name)
    return pack


SLASH = "names hold no folders ('/')"


def _peg_with_a_slash(work: Path) -> tuple[Path, list[str], str]:
    return *_peg_pack(work, "sub/t", _slashed_pack)[:2], SLASH


def _peg_without_its_asm(work: Path) -> tuple[Path, list[str], str]:
    pack, command, _ = _peg_pack(work)
    return pack, [*command, "--asm", str(work / "missing.asm_pc")], "missing.asm_pc: no such file (--asm)"


def _wad_of_a_long_lump_name(work: Path) -> tuple[Path, list[str], str]:
    """A PAK holding a WAD whose lump name fills its 16 bytes (no NUL: another tool wrote it)."""
    return *_wad_pack(work, b"WALLWALLWALLWALL")[:2], "a WAD name holds at most 15"


def _table_with_a_slash(work: Path) -> tuple[Path, list[str], str]:
    return *_table_pack(work, "sub/weapons.xtbl", _slashed_pack)[:2], SLASH


def _table_beside_a_slash(work: Path) -> tuple[Path, list[str], str]:
    """The table edited is stored well, another member of the pack not: the rebuild refuses it."""

    def store(path: Path, members: dict[str, bytes]) -> Path:
        return _slashed_pack(
            path, {"sub/" + name if name == "items.xtbl" else name: data for name, data in members.items()}
        )

    return *_table_pack(work, store=store)[:2], SLASH


def _text_with_a_slash(work: Path) -> tuple[Path, list[str], str]:
    return *_text_pack(work, "sub/locatexts_xx_yy.rfglocatext", _slashed_pack)[:2], SLASH


def _text_onto_an_existing_file(work: Path) -> tuple[Path, list[str], str]:
    _, command, _ = _text_pack(work)
    taken = work / "taken.vpp_pc"
    taken.write_bytes(b"someone's")
    return taken, [*command[:-3], "-o", str(taken)], "already exists"


def _zone_with_a_slash(work: Path) -> tuple[Path, list[str], str]:
    pack = write_pack(work / "zones.vpp_pc", {"sub_z.layer_pc": a_layer()})
    _renamed(pack, "sub_z.layer_pc", "sub/z.layer_pc")
    assert in_process_cli("zone", "export", str(pack), "-o", str(work / "out"))[0] == 0
    _moved_object(work / "out")
    return pack, ["zone", "import", str(pack), str(work / "out")], SLASH


def _moved_object(folder: Path) -> None:
    """The one layer document exported under `folder` with an object moved."""
    (document,) = folder.rglob("*.layer_pc.json")
    loaded = json.loads(document.read_text())
    loaded["objects"][1]["properties"][1]["value"]["position"] = [7.5, 8, 9]
    document.write_text(json.dumps(loaded))


def _zone_in_a_nested_pack_beside_a_slash(work: Path) -> tuple[Path, list[str], str]:
    """A zone in a `.str2_pc` inside a `.vpp_pc`; another member of the `.str2_pc` is stored as
    `sub/x.txt`: the nested pack's rebuild refuses it."""
    inner = _slashed_pack(work / "build" / "z.str2_pc", {"z.layer_pc": a_layer(), "sub/x.txt": b"x"})
    pack = write_pack(work / "zones.vpp_pc", {"z.str2_pc": inner.read_bytes()})
    assert in_process_cli("zone", "export", str(pack), "-o", str(work / "out"))[0] == 0
    _moved_object(work / "out")
    return pack, ["zone", "import", str(pack), str(work / "out")], SLASH


def _sprite_with_a_slash(work: Path) -> tuple[Path, list[str], str]:
    """Sprites in a `.vpp_pc`, one stored as `sub/hero`, and an edited animation of it."""
    pack = write_pack(work / "sprites.vpp_pc", {"sub_hero": other_sprite(), "other": simple_sprite()})
    _renamed(pack, "sub_hero", "sub/hero")
    assert in_process_cli("sprite", "export", str(pack), "-o", str(work / "out"))[0] == 0
    (path,) = (work / "out").rglob("hero/sprite.json")
    document = json.loads(path.read_text())
    document["aframes"][0][1] = 7
    path.write_text(json.dumps(document))
    return pack, ["sprite", "import", str(pack), str(work / "out")], SLASH


def _mesh_with_a_slash(work: Path) -> tuple[Path, list[str], str]:
    return *_mesh_pack(work, "sub/thing", _slashed_pack, "thing.vpp_pc")[:2], SLASH


def _scene_with_a_backslash(work: Path) -> tuple[Path, list[str], str]:
    """A VDrift track, and a glTF of its scene with a new object whose name holds a backslash
    (a list.txt token, but no name objects.jpk stores)."""
    return *_scene_track(work, "new\\road.joe")[:2], "backslash in name"


CASES: dict[str, Case] = {
    "texture-peg-slash": _peg_with_a_slash,
    "texture-peg-asm": _peg_without_its_asm,
    "texture-wad-long-lump-name": _wad_of_a_long_lump_name,
    "table-pack-slash": _table_with_a_slash,
    "table-pack-other-slash": _table_beside_a_slash,
    "text-pack-slash": _text_with_a_slash,
    "text-output-exists": _text_onto_an_existing_file,
    "zone-pack-slash": _zone_with_a_slash,
    "zone-nested-other-slash": _zone_in_a_nested_pack_beside_a_slash,
    "sprite-pack-slash": _sprite_with_a_slash,
    "model-mesh-slash": _mesh_with_a_slash,
    "model-scene-backslash": _scene_with_a_backslash,
}


@pytest.fixture(autouse=True)
def scans_of_this_test(monkeypatch: pytest.MonkeyPatch) -> None:
    import gamepak.core.atomic

    monkeypatch.setattr(gamepak.core.atomic, "_scanned", {})


@pytest.mark.parametrize("case", list(CASES))
def test_a_dry_run_refuses_what_the_real_run_refuses(tmp_path: Path, case: str) -> None:
    target, command, said = CASES[case](tmp_path)
    before = target.read_bytes()
    real_code, _, real_err = in_process_cli(*command)
    assert real_code == 1 and said in real_err, real_err
    assert target.read_bytes() == before
    dry_code, dry_out, dry_err = in_process_cli(*command, "--dry-run")
    assert (dry_code, dry_err) == (real_code, real_err), dry_out
    assert "would" not in dry_out + dry_err
    assert target.read_bytes() == before


def test_a_pack_edited_in_place_is_not_refused_for_names_it_keeps(tmp_path: Path) -> None:
    """A PAK is edited in place (its other members' records copied as they are): a member name
    its writer would refuse, on a member the import leaves alone, stops neither run. The dry
    run's check queues only the packs the commit rebuilds."""

    def store(path: Path, members: dict[str, bytes]) -> Path:
        pack = write_pack(path, {**members, "odd_name.txt": b"kept"})
        return _renamed(pack, "odd_name.txt", "odd\\name.txt")

    pack, command, _ = _wad_pack(tmp_path, store=store)
    before = pack.read_bytes()
    code, out, err = in_process_cli(*command, "--dry-run")
    assert code == 0 and "would change" in out + err, err
    assert pack.read_bytes() == before
    code, out, err = in_process_cli(*command)
    assert code == 0 and "1 texture changed" in out + err, err
    assert pack.read_bytes() != before
