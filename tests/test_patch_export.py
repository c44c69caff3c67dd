"""`patch make --as pak|syncfaction`: the changes written as the mods the games already read."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import gamepak

from conftest import in_process_cli
from conftest import pack_members as contents
from conftest import write_pack as pack


def test_an_override_pak_gives_the_modded_files_and_reports_deletions(tmp_path: Path) -> None:
    base = pack(tmp_path / "base" / "pak0.pak", {"maps/e1m1.bsp": b"map", "gfx/a.lmp": b"A", "old.cfg": b"x"})
    modded = pack(tmp_path / "mod" / "pak0.pak", {"maps/e1m1.bsp": b"MAP2", "gfx/a.lmp": b"A", "new.cfg": b"y"})
    out = tmp_path / "pak1.pak"
    code, _, err = in_process_cli("patch", "make", str(base), str(modded), "--as", "pak", "-o", str(out))
    assert code == 0 and "old.cfg: removed, but an override pak cannot delete" in err
    override = contents(out)
    assert override == {"maps/e1m1.bsp": b"MAP2", "new.cfg": b"y"}
    # Quake reads pak0, then pak1: the later one wins.
    seen = {**contents(base), **override}
    assert {k: v for k, v in seen.items() if k != "old.cfg"} == contents(modded)
    # Two Quake folders work the same way (files of the packs by their member names).
    shutil.copytree(tmp_path / "base", tmp_path / "game-a")
    shutil.copytree(tmp_path / "mod", tmp_path / "game-b")
    (tmp_path / "game-b" / "autoexec.cfg").write_bytes(b"bind x")
    folder_out = tmp_path / "pak2.pak"
    code, _, _ = in_process_cli(
        "patch", "make", str(tmp_path / "game-a"), str(tmp_path / "game-b"), "--as", "pak", "-o", str(folder_out)
    )
    assert code == 0 and contents(folder_out) == {"maps/e1m1.bsp": b"MAP2", "new.cfg": b"y", "autoexec.cfg": b"bind x"}


def test_a_syncfaction_mod_folder_applies_back_to_the_modded_members(tmp_path: Path) -> None:
    zone = pack(tmp_path / "zone.str2_pc", {"crate.cpeg_pc": b"cpu", "crate.gpeg_pc": b"gpu"})
    base_members = {"camera.xtbl": b"<root>1</root>", "old.xtbl": b"gone", "zone.str2_pc": zone.read_bytes()}
    base = tmp_path / "base"
    pack(base / "data" / "misc.vpp_pc", base_members)
    changed_zone = pack(tmp_path / "zone2.str2_pc", {"crate.cpeg_pc": b"CPU2", "crate.gpeg_pc": b"gpu"})
    modded_members = {"camera.xtbl": b"<root>2</root>", "zone.str2_pc": changed_zone.read_bytes(), "new.xtbl": b"n"}
    modded = tmp_path / "modded"
    pack(modded / "data" / "misc.vpp_pc", modded_members)
    out = tmp_path / "mymod"
    code, _, err = in_process_cli("patch", "make", str(base), str(modded), "--as", "syncfaction", "-o", str(out))
    assert code == 0, err
    folder = out / "data" / "misc.vpp_pc"
    assert json.loads((folder / ".delete.json").read_text()) == ["old.xtbl"]
    assert (folder / "zone.str2_pc").exists()  # a nested change ships the whole .str2_pc
    game = tmp_path / "game"
    shutil.copytree(base, game)
    code, _, err = in_process_cli("patch", "apply", str(game), str(out))
    assert code == 0, err
    with gamepak.open(game / "data" / "misc.vpp_pc") as result, gamepak.open(modded / "data" / "misc.vpp_pc") as want:
        assert sorted(result.namelist()) == sorted(want.namelist())
        for name in want.namelist():
            if name.endswith(".str2_pc"):
                with result.open_archive(name) as a, want.open_archive(name) as b:
                    assert {n: a.read(n) for n in a.namelist()} == {n: b.read(n) for n in b.namelist()}
            else:
                assert result.read(name) == want.read(name)
    code, _, err = in_process_cli("patch", "make", str(base), str(modded), "--as", "syncfaction", "-o", str(out))
    assert code == 1 and "already exists" in err


def _xdelta(source: Path, target: Path, out: Path) -> None:
    import pyxdelta

    assert pyxdelta.run(str(source), str(target), str(out))


def _vcdiff_without_checksum(target: bytes) -> bytes:
    """A VCDIFF delta by RFC 3284's byte layout, with no source and no checksum (as `xdelta3 -n`
    writes them): one window, one ADD of the whole target (default code table, instruction 1:
    ADD, size as a varint)."""

    from gamepak.formats.vcdiff import encode_varint as varint

    instructions = b"\x01" + varint(len(target))
    encoding = varint(len(target)) + b"\x00" + varint(len(target)) + varint(len(instructions)) + varint(0)
    encoding += target + instructions
    return b"\xd6\xc3\xc4\x00" + b"\x00" + b"\x00" + varint(len(encoding)) + encoding


def test_an_xdelta_without_checksum_is_applied_with_a_note(tmp_path: Path) -> None:
    """A delta without checksum decodes against any file: gamepak cannot refuse a wrong base,
    so it says so (and .mod.hashes.json, when the mod has one, still checks the result)."""
    game = tmp_path / "game"
    misc = pack(game / "data" / "misc.vpp_pc", {"a.xtbl": b"<root>a</root>"})
    modded = pack(tmp_path / "modded.vpp_pc", {"a.xtbl": b"<root>b</root>"}).read_bytes()
    mod = tmp_path / "mod" / "data"
    mod.mkdir(parents=True)
    (mod / "misc.xdelta").write_bytes(_vcdiff_without_checksum(modded))
    code, _, err = in_process_cli("patch", "apply", str(game), str(tmp_path / "mod"))
    assert code == 0, err
    assert "carries no checksum" in err and "misc.vpp_pc" in err
    assert misc.read_bytes() == modded
    # A delta xdelta3 wrote with its checksum gives no such note.
    other = tmp_path / "other" / "data"
    other.mkdir(parents=True)
    _xdelta(misc, pack(tmp_path / "again.vpp_pc", {"a.xtbl": b"<root>c</root>"}), other / "misc.xdelta")
    code, _, err = in_process_cli("patch", "apply", str(game), str(tmp_path / "other"))
    assert code == 0 and "checksum" not in err, err


def test_a_syncfaction_xdelta_and_a_whole_pack_apply_and_revert(tmp_path: Path) -> None:
    """`data/misc.xdelta` patches `data/misc.vpp_pc` (checked against the game's bytes first);
    `data/table.vpp_pc` replaces the game's; revert gives the original bytes back."""
    game = tmp_path / "game"
    misc = pack(game / "data" / "misc.vpp_pc", {"a.xtbl": b"<root>a</root>" * 50})
    table = pack(game / "data" / "table.vpp_pc", {"t.xtbl": b"<root>t</root>"})
    original = {path.name: path.read_bytes() for path in (misc, table)}
    modded_misc = pack(tmp_path / "modded-misc.vpp_pc", {"a.xtbl": b"<root>A</root>" * 50, "b.xtbl": b"b"})
    mod = tmp_path / "mod" / "data"
    mod.mkdir(parents=True)
    _xdelta(misc, modded_misc, mod / "misc.xdelta")
    pack(mod / "table.vpp_pc", {"t.xtbl": b"<root>T</root>"})
    code, _, err = in_process_cli("patch", "apply", str(game), str(tmp_path / "mod"))
    assert code == 0, err
    assert misc.read_bytes() == modded_misc.read_bytes()
    assert contents(table) == {"t.xtbl": b"<root>T</root>"}
    assert in_process_cli("patch", "revert", str(game))[0] == 0
    assert {path.name: path.read_bytes() for path in (misc, table)} == original
    # A delta made for other bytes is refused, nothing written.
    pack(game / "data" / "misc.vpp_pc", {"a.xtbl": b"something else"})
    before = misc.read_bytes()
    code, _, err = in_process_cli("patch", "apply", str(game), str(tmp_path / "mod"))
    assert code == 1 and "does not apply" in err and "xdelta3:" not in err
    assert misc.read_bytes() == before and contents(table) == {"t.xtbl": b"<root>t</root>"}


def test_mod_hashes_are_checked_and_a_mismatch_keeps_nothing(tmp_path: Path) -> None:
    """`.mod.hashes.json` lists the files a SyncFaction mod must produce: a mismatch takes the
    apply back (nothing kept, no undo record left); a match applies."""
    import hashlib

    game = tmp_path / "game"
    misc = pack(game / "data" / "misc.vpp_pc", {"a.xtbl": b"<root>a</root>"})
    before = misc.read_bytes()
    mod = tmp_path / "mod"
    (mod / "data" / "misc.vpp_pc").mkdir(parents=True)
    (mod / "data" / "misc.vpp_pc" / "a.xtbl").write_bytes(b"<root>modded</root>")
    (mod / ".mod.hashes.json").write_text(json.dumps({"data/misc.vpp_pc": "AB" * 32}))
    code, _, err = in_process_cli("patch", "apply", str(game), str(mod))
    assert code == 1 and ".mod.hashes.json" in err and "nothing kept" in err
    assert misc.read_bytes() == before
    assert not list(tmp_path.rglob("*gamepak-undo*"))  # the undo record went with the change
    # The right hash: what applying gives.
    scratch = tmp_path / "scratch"
    shutil.copytree(game, scratch)
    (mod / ".mod.hashes.json").unlink()
    assert in_process_cli("patch", "apply", str(scratch), str(mod))[0] == 0
    right = hashlib.sha256((scratch / "data" / "misc.vpp_pc").read_bytes()).hexdigest().upper()
    (mod / ".mod.hashes.json").write_text(json.dumps({"data/misc.vpp_pc": right}))
    code, _, err = in_process_cli("patch", "apply", str(game), str(mod))
    assert code == 0, err
    assert contents(misc) == {"a.xtbl": b"<root>modded</root>"}


def test_what_a_mod_says_is_printed(tmp_path: Path) -> None:
    """A loose-archive mod's `.options.json` asks for a data mode the pack does not take: the
    CLI says so (the mod patches' notes used to be dropped)."""
    game = tmp_path / "game"
    pack(game / "data" / "misc.vpp_pc", {"a.xtbl": b"<root>a</root>"})
    mod = tmp_path / "mod" / "data" / "misc.vpp_pc"
    mod.mkdir(parents=True)
    (mod / "a.xtbl").write_bytes(b"<root>b</root>")
    (mod / ".options.json").write_text(json.dumps({"Mode": "Compressed"}))
    code, _, err = in_process_cli("patch", "apply", str(game), str(tmp_path / "mod"))
    assert code == 0 and "note:" in err and "keeps its own data mode (Compressed asked)" in err


def _hashes_mod(tmp_path: Path, hashes: object) -> tuple[Path, Path, bytes]:
    """A game with data/misc.vpp_pc and a loose-archive mod changing it, listing `hashes`."""
    game = tmp_path / "game"
    misc = pack(game / "data" / "misc.vpp_pc", {"a.xtbl": b"<root>a</root>"})
    mod = tmp_path / "mod"
    (mod / "data" / "misc.vpp_pc").mkdir(parents=True)
    (mod / "data" / "misc.vpp_pc" / "a.xtbl").write_bytes(b"<root>modded</root>")
    listing = mod / ".mod.hashes.json"
    listing.write_text(hashes if isinstance(hashes, str) else json.dumps(hashes))
    return game, mod, misc.read_bytes()


def _modded_sha256(tmp_path: Path, game: Path, mod: Path) -> str:
    """The sha256 of misc.vpp_pc once `mod` is applied (on a copy, without the listing)."""
    import hashlib

    scratch = tmp_path / "scratch"
    shutil.copytree(game, scratch)
    listing = mod / ".mod.hashes.json"
    saved = listing.read_bytes()
    listing.unlink()
    assert in_process_cli("patch", "apply", str(scratch), str(mod))[0] == 0
    listing.write_bytes(saved)
    return hashlib.sha256((scratch / "data" / "misc.vpp_pc").read_bytes()).hexdigest()


def test_a_malformed_mod_hashes_listing_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    """The listing is read before the apply: a bad one used to fail after the write, exit 1
    with the change kept."""
    for hashes, said in (
        ("{not json", "not JSON"),
        (["data/misc.vpp_pc"], "must map file paths"),
        ({"data/misc.vpp_pc": "not a digest"}, "is not a SHA-256 hex digest"),
        ({"../outside.bin": "AB" * 32}, "'../outside.bin'"),
    ):
        game, mod, before = _hashes_mod(tmp_path / said.replace(" ", "-").strip("'./"), hashes)
        for command in ("check", "apply"):
            code, _, err = in_process_cli("patch", command, str(game), str(mod))
            assert code == 1 and ".mod.hashes.json" in err and said in err, (hashes, err)
        assert (game / "data" / "misc.vpp_pc").read_bytes() == before
        assert not list(game.parent.glob("*gamepak-undo*"))


def test_mod_hashes_paths_match_as_the_game_finds_them(tmp_path: Path) -> None:
    """SyncFaction runs on Windows: a listed `Data\\MISC.vpp_pc` is the game's data/misc.vpp_pc
    (it used to be 'missing', and the apply taken back)."""
    game, mod, _ = _hashes_mod(tmp_path, {})
    right = _modded_sha256(tmp_path, game, mod)
    (mod / ".mod.hashes.json").write_text(json.dumps({"Data\\MISC.vpp_pc": right.upper()}))
    code, _, err = in_process_cli("patch", "apply", str(game), str(mod))
    assert code == 0, err
    assert contents(game / "data" / "misc.vpp_pc") == {"a.xtbl": b"<root>modded</root>"}


def test_mod_hashes_are_checked_when_every_change_is_already_there(tmp_path: Path) -> None:
    """The mod's member is already in place but another mod changed the pack too: the file is
    not what the listing says, so check and apply refuse (nothing to take back, nothing written)
    instead of reporting success."""
    game, mod, _ = _hashes_mod(tmp_path, {})
    right = _modded_sha256(tmp_path, game, mod)
    (mod / ".mod.hashes.json").write_text(json.dumps({"data/misc.vpp_pc": right}))
    assert in_process_cli("patch", "apply", str(game), str(mod))[0] == 0
    assert in_process_cli("patch", "apply", str(game), str(mod))[0] == 0  # applying twice changes nothing
    other = tmp_path / "other"
    (other / "data" / "misc.vpp_pc").mkdir(parents=True)
    (other / "data" / "misc.vpp_pc" / "b.xtbl").write_bytes(b"other mod")
    assert in_process_cli("patch", "apply", str(game), str(other))[0] == 0
    after_other = (game / "data" / "misc.vpp_pc").read_bytes()
    for command in ("check", "apply"):
        code, _, err = in_process_cli("patch", command, str(game), str(mod))
        assert code == 1 and "already holds every change" in err and "data/misc.vpp_pc: expected SHA-256" in err, err
    assert (game / "data" / "misc.vpp_pc").read_bytes() == after_other


def _zipped(path: Path, entries: dict[str, bytes]) -> Path:
    import zipfile

    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return path


def _leftover_mod_folders() -> list[str]:
    import tempfile

    return [name for name in os.listdir(tempfile.gettempdir()) if name.startswith(".mods.gamepak-")]


@pytest.mark.parametrize("root", ["", "Better Tables/"])
def test_a_zipped_loose_archive_mod_applies_and_reverts_by_the_zips_name(tmp_path: Path, root: str) -> None:
    """SyncFaction mods are shared as zips: data/ at the top or one folder down, with loose
    archives, .delete.json and .mod.hashes.json, read as the unzipped folder would be."""
    import hashlib

    game = tmp_path / "game"
    misc = pack(game / "data" / "misc.vpp_pc", {"a.xtbl": b"<root>a</root>", "old.xtbl": b"old"})
    before = misc.read_bytes()
    expected = {"a.xtbl": b"<root>b</root>", "new.xtbl": b"new"}
    probe = tmp_path / "probe.vpp_pc"
    pack(probe, expected)
    mod = _zipped(
        tmp_path / "tables.zip",
        {
            f"{root}data/misc.vpp_pc/a.xtbl": b"<root>b</root>",
            f"{root}data/misc.vpp_pc/new.xtbl": b"new",
            f"{root}data/misc.vpp_pc/.delete.json": b'["old.xtbl"]',
            f"{root}.mod.hashes.json": json.dumps(
                {"data/misc.vpp_pc": hashlib.sha256(probe.read_bytes()).hexdigest()}
            ).encode(),
            "readme.txt": b"not part of the mod",
        },
    )
    leftovers = _leftover_mod_folders()
    code, _, err = in_process_cli("patch", "check", str(game), str(mod))
    assert code == 0, err
    assert misc.read_bytes() == before
    code, _, err = in_process_cli("patch", "apply", str(game), str(mod))
    assert code == 0, err
    assert contents(misc) == expected
    assert _leftover_mod_folders() == leftovers  # the unpacked copy is gone
    code, _, err = in_process_cli("patch", "revert", str(game), str(mod))
    assert code == 0, err
    assert misc.read_bytes() == before


def test_a_hostile_zipped_mod_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    game = tmp_path / "game"
    misc = pack(game / "data" / "misc.vpp_pc", {"a.xtbl": b"<root>a</root>"})
    before = misc.read_bytes()
    climbing = _zipped(tmp_path / "climb.zip", {"data/misc.vpp_pc/a.xtbl": b"x", "../escape.txt": b"x"})
    code, _, err = in_process_cli("patch", "apply", str(game), str(climbing))
    assert code == 1 and "escape.txt" in err, err
    assert misc.read_bytes() == before and not (tmp_path / "escape.txt").exists()
    # A game that lacks the pack the mod names: refused by name, nothing kept.
    missing = _zipped(tmp_path / "missing.zip", {"data/other.vpp_pc/a.xtbl": b"x"})
    code, _, err = in_process_cli("patch", "apply", str(game), str(missing))
    assert code == 1 and "other.vpp_pc" in err, err
    assert misc.read_bytes() == before
    assert not _leftover_mod_folders()
    # Any other zip is still "not a gamepak patch".
    other = _zipped(tmp_path / "other.zip", {"readme.txt": b"hello"})
    code, _, err = in_process_cli("patch", "apply", str(game), str(other))
    assert code == 1 and "no patch.json" in err


def test_patch_info_lists_what_a_loose_archive_mod_changes(tmp_path: Path) -> None:
    entries = {
        "data/misc.vpp_pc/a.xtbl": b"<root>b</root>",
        "data/misc.vpp_pc/.delete.json": b'["old.xtbl"]',
        "data/misc.vpp_pc/.options.json": b'{"Mode": "Compressed"}',
        "data/table.vpp_pc": b"a whole pack",
    }
    folder = tmp_path / "mod"
    for name, data in entries.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    for mod in (folder, _zipped(tmp_path / "mod.zip", {f"Mod/{name}": data for name, data in entries.items()})):
        code, out, err = in_process_cli("patch", "info", "--json", str(mod))
        assert code == 0, err
        document = json.loads(out)
        assert document["name"] == mod.name
        assert document["changes"] == [
            {"action": "remove", "file": "data/misc.vpp_pc", "member": "old.xtbl"},
            {"action": "put", "file": "data/misc.vpp_pc", "member": "a.xtbl", "size": 14},
            {"action": "replace file", "file": "data/table.vpp_pc", "size": 12},
        ]
        assert document["data_modes"] == {"data/misc.vpp_pc": "Compressed"}
        code, out, _ = in_process_cli("patch", "info", str(mod))
        assert code == 0 and "put data/misc.vpp_pc/a.xtbl (14 bytes)" in out and "SyncFaction loose archives" in out
