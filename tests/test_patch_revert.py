"""Revert is exact on every path: by name, some then all, the latest, a failed apply (a hash
mismatch, a delta that fails half-way), a kill -9 at any moment. Every file ends sha256-equal to
its original once nothing of gamepak's remains applied; the record is kept while it holds an
original a later revert needs."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

import gamepak
from gamepak.ops.patch import PatchError

from conftest import in_process_cli, sample
from conftest import pack_members as contents
from conftest import write_pack as build

MEMBERS = {
    "e1m1.bsp": bytes(range(256)) * 40,
    "player.mdl": b"IDPO" + b"\x01" * 3000,
    "hit.wav": b"RIFF" + b"\x02" * 500,
    "gfx.wad": b"WAD2" + b"\x03" * 700,
}
# JoePack, PAK (in place), zip, tar, RFG (rebuilt)
EXTENSIONS = [".pak", ".jpk", ".zip", ".tar", ".vpp_pc"]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def record_of(target: Path) -> Path:
    return Path(str(target) + ".gamepak-undo")


def two_patches(tmp_path: Path, extension: str) -> tuple[Path, Path, Path, Path]:
    """A target (a copy of base) and two patches changing different members of it."""
    base = build(tmp_path / f"base{extension}", MEMBERS)
    one = build(tmp_path / f"one{extension}", {**MEMBERS, "hit.wav": b"RIFF one" * 30, "new.txt": b"added"})
    two = build(tmp_path / f"two{extension}", {k: v for k, v in MEMBERS.items() if k != "gfx.wad"})
    gamepak.patch.make(base, one, tmp_path / "one.gpatch", name="one")
    gamepak.patch.make(base, two, tmp_path / "two.gpatch", name="two")
    target = tmp_path / f"target{extension}"
    shutil.copy(base, target)
    return base, target, tmp_path / "one.gpatch", tmp_path / "two.gpatch"


@pytest.mark.parametrize("extension", EXTENSIONS)
def test_revert_by_name_of_the_only_patch_gives_the_original_bytes(tmp_path: Path, extension: str) -> None:
    base, target, one, _ = two_patches(tmp_path, extension)
    gamepak.patch.apply(target, [one])
    assert sha(target) != sha(base)
    assert gamepak.patch.revert(target, one) == ["one"]
    assert sha(target) == sha(base)
    assert not record_of(target).exists()


@pytest.mark.parametrize("extension", EXTENSIONS)
@pytest.mark.parametrize("order", ["first-then-all", "latest-then-first", "first-then-latest"])
def test_two_patches_reverted_in_any_order_give_the_original_bytes(tmp_path: Path, extension: str, order: str) -> None:
    base, target, one, two = two_patches(tmp_path, extension)
    gamepak.patch.apply(target, [one])
    gamepak.patch.apply(target, [two])
    if order == "first-then-all":
        gamepak.patch.revert(target, one)
        assert contents(target) == {k: v for k, v in MEMBERS.items() if k != "gfx.wad"}
        assert gamepak.patch.revert(target) == ["two"]
    elif order == "latest-then-first":
        gamepak.patch.revert(target, two)
        assert record_of(target).exists()  # it still holds what takes "one" back
        gamepak.patch.revert(target, one)
    else:
        gamepak.patch.revert(target, one)
        gamepak.patch.revert(target, two)
    assert sha(target) == sha(base)
    assert not record_of(target).exists()


@pytest.mark.parametrize("extension", [".vpp_pc", ".pak"])
def test_one_apply_of_two_patches_reverted_one_by_one(tmp_path: Path, extension: str) -> None:
    base, target, one, two = two_patches(tmp_path, extension)
    gamepak.patch.apply(target, [one, two])
    gamepak.patch.revert(target, two)
    assert contents(target) == {**MEMBERS, "hit.wav": b"RIFF one" * 30, "new.txt": b"added"}
    gamepak.patch.revert(target, one)
    assert sha(target) == sha(base)


def test_folders_and_plain_files_come_back_and_created_folders_go(tmp_path: Path) -> None:
    for side in ("base", "mod"):
        (tmp_path / side / "id1").mkdir(parents=True)
    build(tmp_path / "base" / "id1" / "pak0.pak", MEMBERS)
    build(tmp_path / "mod" / "id1" / "pak0.pak", {**MEMBERS, "hit.wav": b"RIFF mod"})
    (tmp_path / "base" / "id1" / "config.cfg").write_bytes(b"bind w +forward\n")
    (tmp_path / "mod" / "id1" / "config.cfg").write_bytes(b"bind w +back\n")
    (tmp_path / "mod" / "id1" / "maps" / "deep").mkdir(parents=True)
    (tmp_path / "mod" / "id1" / "maps" / "deep" / "new.bsp").write_bytes(b"map")
    patch = tmp_path / "p.gpatch"
    gamepak.patch.make(tmp_path / "base", tmp_path / "mod", patch, name="p")
    game = tmp_path / "game"
    shutil.copytree(tmp_path / "base", game)
    before = {str(path.relative_to(game)): sha(path) for path in game.rglob("*") if path.is_file()}
    gamepak.patch.apply(game, [patch])
    assert (game / "id1" / "maps" / "deep" / "new.bsp").exists()
    gamepak.patch.revert(game, patch)
    after = {str(path.relative_to(game)): sha(path) for path in game.rglob("*") if path.is_file()}
    assert after == before
    assert not (game / "id1" / "maps").exists()  # the folders the patch made went with it


def test_a_file_changed_by_another_program_is_reverted_member_by_member_with_a_warning(tmp_path: Path) -> None:
    _, target, one, _ = two_patches(tmp_path, ".vpp_pc")
    gamepak.patch.apply(target, [one])
    with gamepak.edit(target) as editor:  # another program (here: a plain edit) changes it
        editor.add("other.txt", b"someone else")
    code, _, err = in_process_cli("patch", "revert", str(target), str(one))
    assert code == 0, err
    assert "warning" in err and target.name in err and "changed since" in err
    assert contents(target) == {**MEMBERS, "other.txt": b"someone else"}
    assert not record_of(target).exists()


# -- an apply is all or nothing -----------------------------------------------------------------


def _mixed_game(tmp_path: Path) -> Path:
    game = tmp_path / "game"
    build(game / "data" / "misc.vpp_pc", {"camera.xtbl": b"<root><Table><C>1</C></Table></root>", "x.xtbl": b"x"})
    build(game / "data" / "table.vpp_pc", {"weapons.xtbl": b"<root><Table><W>1</W></Table></root>"})
    build(game / "data" / "terr.vpp_pc", {"a.xtbl": b"<root>a</root>" * 20})
    return game


def _xdelta(source: Path, target: Path, delta: Path) -> None:
    import subprocess

    if shutil.which("xdelta3") is None:
        pytest.skip("xdelta3 is not installed")
    subprocess.run(["xdelta3", "-e", "-S", "none", "-f", "-s", str(source), str(target), str(delta)], check=True)


def _mixed_mod(tmp_path: Path, game: Path, name: str, hashes: dict[str, str] | None) -> Path:
    """A mod combining modinfo.xml edits, a loose-archive folder and a whole-file delta."""
    mod = tmp_path / name
    (mod / "data" / "misc.vpp_pc").mkdir(parents=True)
    (mod / "data" / "misc.vpp_pc" / "camera.xtbl").write_bytes(b"<root><Table><C>2</C></Table></root>")
    (mod / "modinfo.xml").write_text(
        f'<Mod Name="{name}"><Changes><Edit File="data\\table.vpp_pc\\weapons.xtbl"><W>{name}</W></Edit>'
        "</Changes></Mod>"
    )
    modded = build(tmp_path / f"{name}-terr.vpp_pc", {"a.xtbl": b"<root>A</root>" * 20})
    _xdelta(game / "data" / "terr.vpp_pc", modded, mod / "data" / "terr.xdelta")
    if hashes is not None:
        (mod / ".mod.hashes.json").write_text(json.dumps(hashes))
    return mod


def snapshot(game: Path) -> dict[str, str]:
    return {str(path.relative_to(game)): sha(path) for path in sorted(game.rglob("*")) if path.is_file()}


def test_a_hash_mismatch_takes_the_whole_apply_back_naming_file_expected_and_found(tmp_path: Path) -> None:
    game = _mixed_game(tmp_path)
    before = snapshot(game)
    mod = _mixed_mod(tmp_path, game, "bad", {"data/misc.vpp_pc": "ab" * 32})
    code, _, err = in_process_cli("patch", "apply", str(game), str(mod))
    assert code == 1
    lines = [line for line in err.splitlines() if "misc.vpp_pc" in line]
    assert lines and "ab" * 32 in err and "expected" in err and "found" in err, err
    assert "no undo record" not in err
    assert snapshot(game) == before
    assert not record_of(game).exists()


def test_a_failed_apply_never_takes_back_an_earlier_apply(tmp_path: Path) -> None:
    """mod_a installed in an earlier run; apply([mod_bad, mod_a]) fails its hash check: only
    what this run wrote is taken back (by its application number, never by name)."""
    game = _mixed_game(tmp_path)
    original = snapshot(game)
    loose = tmp_path / "mod_a"
    (loose / "data" / "misc.vpp_pc").mkdir(parents=True)
    (loose / "data" / "misc.vpp_pc" / "x.xtbl").write_bytes(b"mod a")
    gamepak.patch.apply(game, [loose])
    with_a = snapshot(game)
    bad = tmp_path / "mod_bad"
    (bad / "data" / "table.vpp_pc").mkdir(parents=True)
    (bad / "data" / "table.vpp_pc" / "weapons.xtbl").write_bytes(b"bad")
    (bad / ".mod.hashes.json").write_text(json.dumps({"data/table.vpp_pc": "cd" * 32}))
    with pytest.raises(PatchError, match="cd" * 32):
        gamepak.patch.apply(game, [bad, loose])
    assert snapshot(game) == with_a
    assert gamepak.patch.revert(game) == ["mod_a"]
    assert snapshot(game) == original


def test_a_write_that_fails_half_way_leaves_every_file_original(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure after the first pack is written (a full disk, say) takes back what was written."""
    game = _mixed_game(tmp_path)
    before = snapshot(game)
    mod = _mixed_mod(tmp_path, game, "mixed", None)
    from gamepak.ops import edit as edit_module

    commits = []
    real_commit = edit_module.Editor.commit

    def failing_commit(self: edit_module.Editor) -> object:
        commits.append(self.path)
        if len(commits) == 2:
            self.abort()
            raise OSError(28, "No space left on device")
        return real_commit(self)

    monkeypatch.setattr(edit_module.Editor, "commit", failing_commit)
    with pytest.raises(OSError, match="No space"):
        gamepak.patch.apply(game, [mod])
    assert len(commits) == 2
    assert snapshot(game) == before
    assert not record_of(game).exists()


def test_the_mixed_mod_reverts_by_name_to_the_original_bytes(tmp_path: Path) -> None:
    game = _mixed_game(tmp_path)
    before = snapshot(game)
    mod = _mixed_mod(tmp_path, game, "mixed", None)
    gamepak.patch.apply(game, [mod])
    assert snapshot(game) != before
    taken = gamepak.patch.revert(game, mod)
    assert taken and set(taken) <= {"mixed"}
    assert snapshot(game) == before
    assert not record_of(game).exists()


# -- kill -9 during apply and revert -----------------------------------------------------------


def _stray_temporaries(*folders: Path) -> list[str]:
    from gamepak.core.atomic import is_temporary_name

    return [name for folder in folders for name in os.listdir(folder) if is_temporary_name(name)]


@pytest.mark.parametrize("extension", [".vpp_pc", ".pak"])
@pytest.mark.parametrize("what", ["apply", "revert-by-name", "revert"])
def test_kill_at_any_moment_then_revert_gives_the_original_bytes(tmp_path: Path, extension: str, what: str) -> None:
    from test_edit_crash import kill_at

    landed = []
    for trial in range(6):
        folder = tmp_path / f"trial{trial}"
        folder.mkdir()
        base, target, one, two = two_patches(folder, extension)
        original = sha(base)
        if what != "apply":
            gamepak.patch.apply(target, [one])
            gamepak.patch.apply(target, [two])

        def work(target: Path = target, one: Path = one, two: Path = two) -> None:
            if what == "apply":
                gamepak.patch.apply(target, [one, two])
            elif what == "revert-by-name":
                gamepak.patch.revert(target, one)
            else:
                gamepak.patch.revert(target)

        # Killed just before its file-changing call 1, 3, 5, ... (traced, not a random delay).
        landed.append(kill_at(work, 1 + 2 * trial))
        record = record_of(target) / "record.json"
        if record.exists():
            json.loads(record.read_text())  # never half-written
        try:
            gamepak.patch.revert(target)
        except PatchError as exc:
            assert "no patches applied" in str(exc)
        assert sha(target) == original, (trial, what)
        assert not record_of(target).exists()
        assert _stray_temporaries(folder) == []
    assert sum(1 for where in landed if where) >= 3, f"kills that landed mid-work: {landed}"


def test_kill_during_the_mixed_mod_then_revert_gives_the_original_bytes(tmp_path: Path) -> None:
    from test_edit_crash import kill_at

    landed = []
    for trial in range(6):
        folder = tmp_path / f"trial{trial}"
        game = _mixed_game(folder)
        before = snapshot(game)
        mod = _mixed_mod(folder, game, "mixed", None)
        by_name = trial % 2 == 1
        if by_name:
            gamepak.patch.apply(game, [mod])

        def work(game: Path = game, mod: Path = mod, by_name: bool = by_name) -> None:
            if by_name:
                gamepak.patch.revert(game, mod)
            else:
                gamepak.patch.apply(game, [mod])

        # Killed just before its file-changing call 1, 3, 5, ... (traced, not a random delay).
        landed.append(kill_at(work, 1 + 2 * trial))
        try:
            gamepak.patch.revert(game)
        except PatchError as exc:
            assert "no patches applied" in str(exc)
        assert snapshot(game) == before, trial
        assert _stray_temporaries(game / "data") == []
    assert sum(1 for where in landed if where) >= 3, f"kills that landed mid-work: {landed}"


def test_an_interrupted_apply_is_rolled_back_by_the_next_check(tmp_path: Path) -> None:
    """What a kill after the pack was rebuilt, before the record says done, leaves (the child
    dies where the record would be marked done): the next `check` brings the file back to its
    original bytes, removes the record and the temporaries."""
    from test_edit_crash import run_child

    from gamepak.ops.patch import undo

    base, target, one, _ = two_patches(tmp_path, ".vpp_pc")

    def work() -> None:
        undo.Session.commit = lambda *args, **kwargs: os._exit(9)  # type: ignore[method-assign]
        gamepak.patch.apply(target, [one])

    pid = run_child(work, None)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 9
    assert sha(target) != sha(base)  # rebuilt, the record pending
    (tmp_path / ".target.vpp_pc.gamepak-999999-0.tmp").write_bytes(b"a killed rebuild's temporary")
    assert gamepak.patch.check(target, [one]).ok
    assert sha(target) == sha(base)
    assert not record_of(target).exists()
    assert _stray_temporaries(tmp_path) == []


# -- a real compressed pack ----------------------------------------------------------------------


def test_real_table_reverted_by_name_gives_the_original_bytes(tmp_path: Path) -> None:
    real = sample("vpp/table.vpp_pc")
    base = tmp_path / "table.vpp_pc"
    shutil.copy(real, base)
    mod = tmp_path / "mod.vpp_pc"
    shutil.copy(base, mod)
    with gamepak.open(base) as archive:
        entry = archive.infolist()[3]
        data = archive.read(entry)
    with gamepak.edit(mod) as editor:
        editor.replace(entry.name, data + b"<!-- modded -->")
    patch = tmp_path / "p.gpatch"
    gamepak.patch.make(base, mod, patch, name="p")
    target = tmp_path / "target.vpp_pc"
    shutil.copy(base, target)
    gamepak.patch.apply(target, [patch])
    assert sha(target) != sha(base)
    assert gamepak.patch.revert(target, "p") == ["p"]
    assert sha(target) == sha(base)


@pytest.mark.parametrize("flags", [0, 1, 2, 3])
def test_every_rfg_mode_with_a_nested_pack_and_an_asm_file_reverts_by_name_exactly(tmp_path: Path, flags: int) -> None:
    """All four packfile modes (none, compressed, condensed, both), a change inside a nested
    .str2_pc and a plain .asm_pc beside the pack: reverted by name, sha256-equal."""

    def game_with(folder: Path, inner: dict[str, bytes], asm: bytes) -> Path:
        zone = build(folder / "zone.str2_pc", inner)
        (folder / "data").mkdir(parents=True)
        with gamepak.create(folder / "data" / "terr.vpp_pc", flags=flags) as writer:
            writer.add("zone.str2_pc", zone.read_bytes())
            writer.add("x.xtbl", b"<root>" + b"x" * 3000 + b"</root>")
        zone.unlink()
        (folder / "data" / "terr.asm_pc").write_bytes(asm)
        return folder

    inner = {"a.xtbl": b"<root>a</root>" * 40, "m.cpeg_pc": b"\x01" * 300}
    base = game_with(tmp_path / "base", inner, b"asm old")
    modded = game_with(tmp_path / "modded", {**inner, "a.xtbl": b"<root>A</root>" * 40}, b"asm new")
    patch = tmp_path / "p.gpatch"
    gamepak.patch.make(base, modded, patch, name="p")
    game = tmp_path / "game"
    shutil.copytree(base, game)
    before = snapshot(game)
    gamepak.patch.apply(game, [patch])
    assert snapshot(game) != before
    assert gamepak.patch.revert(game, "p") == ["p"]
    assert snapshot(game) == before


@pytest.mark.parametrize("extension", [".pak", ".vpp_pc"])
def test_apply_and_revert_again_and_again_keeps_the_original(tmp_path: Path, extension: str) -> None:
    """Application numbers are reused by later runs: nothing the record keeps for a later
    revert is ever written over (a kept file named in the record keeps its bytes)."""
    from gamepak.ops.patch.undo import Record

    base, target, one, two = two_patches(tmp_path, extension)
    seen: dict[str, bytes] = {}

    def kept_files_unchanged() -> None:
        record = Record(str(target))
        names = record.referenced() - {"record.json"} if record.exists else set()
        for name in set(seen) - names:
            del seen[name]  # no longer kept: the name may be used again
        for name in names:
            if os.path.exists(record.kept(name)):  # (a journal of a write that changed nothing)
                data = Path(record.kept(name)).read_bytes()
                assert seen.setdefault(name, data) == data, name

    def apply(patch: Path) -> None:
        gamepak.patch.apply(target, [patch])

    def revert(patch: Path) -> None:
        gamepak.patch.revert(target, patch)

    steps = [
        (apply, one),
        (apply, two),
        (revert, two),
        (revert, one),
        (apply, one),
        (apply, two),
        (revert, two),
        (apply, two),  # number 2 again
        (revert, one),
        (apply, one),
        (revert, two),
    ]
    for action, patch in steps:
        action(patch)
        kept_files_unchanged()
    gamepak.patch.revert(target)
    assert sha(target) == sha(base)
    assert not record_of(target).exists()


def test_a_pak_with_its_directory_at_the_start_comes_back_exactly_after_reverts_by_name(tmp_path: Path) -> None:
    """Its in-place edits write over directory slots (moved members): the chain of journals
    through applies and member-level reverts gives the original back byte for byte."""

    def pak(path: Path, members: dict[str, bytes]) -> Path:
        with gamepak.create(path, directory="start", overwrite=True) as writer:
            for name, data in members.items():
                writer.add(name, data)
        return path

    base = pak(tmp_path / "base.pak", MEMBERS)
    one = pak(tmp_path / "one.pak", {**MEMBERS, "hit.wav": b"RIFF one" * 30, "new.txt": b"added"})
    two = pak(tmp_path / "two.pak", {**MEMBERS, "x/y.txt": b"two", "z.txt": b"zz"})
    gamepak.patch.make(base, one, tmp_path / "one.gpatch", name="one")
    gamepak.patch.make(base, two, tmp_path / "two.gpatch", name="two")
    target = tmp_path / "target.pak"
    shutil.copy(base, target)
    inode = target.stat().st_ino
    gamepak.patch.apply(target, [tmp_path / "one.gpatch"])
    gamepak.patch.apply(target, [tmp_path / "two.gpatch"])
    gamepak.patch.revert(target, "one")
    gamepak.patch.apply(target, [tmp_path / "one.gpatch"])
    assert target.stat().st_ino == inode  # every change in place
    gamepak.patch.revert(target, "two")
    gamepak.patch.revert(target, "one")
    assert sha(target) == sha(base)
