"""gamepak.patch: make, info, check, apply (several at once), revert; hostile patch files."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest

import gamepak
from gamepak.cli import main
from gamepak.ops.patch import Patch, PatchError

from conftest import pack_members as contents
from conftest import sample
from conftest import write_pack as build

MEMBERS = {
    "e1m1.bsp": bytes(range(256)) * 40,
    "player.mdl": b"IDPO" + b"\x01" * 3000,
    "hit.wav": b"RIFF" + b"\x02" * 500,
    "gfx.wad": b"WAD2" + b"\x03" * 700,
}


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def modded(members: dict[str, bytes]) -> dict[str, bytes]:
    changed = dict(members)
    data = bytearray(changed["e1m1.bsp"])
    data[5000] ^= 0xFF
    changed["e1m1.bsp"] = bytes(data)
    changed["new.wav"] = b"RIFFnew"
    del changed["gfx.wad"]
    changed["hero.mdl"] = changed.pop("player.mdl")
    return changed


@pytest.fixture(params=["pak", "vpp", "zip"])
def packs(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, Path, Path]:
    extension = {"pak": ".pak", "vpp": ".vpp_pc", "zip": ".zip"}[request.param]
    base = build(tmp_path / f"base{extension}", MEMBERS)
    mod = build(tmp_path / f"mod{extension}", modded(MEMBERS))
    target = tmp_path / f"target{extension}"
    shutil.copy(base, target)
    return base, mod, target


def test_make_records_each_kind_of_operation(packs: tuple[Path, Path, Path], tmp_path: Path) -> None:
    base, mod, _ = packs
    operations = gamepak.patch.make(base, mod, tmp_path / "p.gpatch", name="p")
    kinds = sorted((operation.op, operation.member) for operation in operations)
    assert kinds == [
        ("add", "new.wav"),
        ("remove", "gfx.wad"),
        ("rename", "player.mdl"),
        ("replace", "e1m1.bsp"),
    ]
    replace = next(operation for operation in operations if operation.op == "replace")
    assert replace.encoding == "zstd-delta"
    assert replace.base_sha256 == hashlib.sha256(MEMBERS["e1m1.bsp"]).hexdigest()
    assert (tmp_path / "p.gpatch").stat().st_size < 2048


def test_apply_then_reapply_then_revert(packs: tuple[Path, Path, Path], tmp_path: Path) -> None:
    base, mod, target = packs
    patch = tmp_path / "p.gpatch"
    gamepak.patch.make(base, mod, patch)
    assert gamepak.patch.check(target, [patch]).ok
    gamepak.patch.apply(target, [patch])
    assert contents(target) == contents(mod)
    again = gamepak.patch.apply(target, [patch])  # applying twice changes nothing
    assert not again.to_apply and again.ok
    assert gamepak.patch.revert(target) == ["p.gpatch"]
    assert contents(target) == MEMBERS
    assert not Path(str(target) + ".gamepak-undo").exists()


def test_wrong_base_is_refused_naming_the_member(packs: tuple[Path, Path, Path], tmp_path: Path) -> None:
    base, mod, target = packs
    patch = tmp_path / "p.gpatch"
    gamepak.patch.make(base, mod, patch)
    with gamepak.edit(target) as editor:
        editor.replace("e1m1.bsp", b"someone else's map")
    before = target.read_bytes()
    plan = gamepak.patch.check(target, [patch])
    assert not plan.ok
    assert any("e1m1.bsp" in line and "neither" in line for line in plan.problems())
    with pytest.raises(PatchError, match="e1m1.bsp"):
        gamepak.patch.apply(target, [patch])
    assert target.read_bytes() == before


def two_patches(tmp_path: Path, extension: str = ".pak") -> tuple[Path, Path, Path, Path]:
    base = build(tmp_path / f"base{extension}", MEMBERS)
    one = build(tmp_path / f"one{extension}", {**MEMBERS, "hit.wav": b"RIFF one"})
    two = build(tmp_path / f"two{extension}", {**MEMBERS, "hit.wav": b"RIFF two", "gfx.wad": b"WAD2 two"})
    gamepak.patch.make(base, one, tmp_path / "one.gpatch", name="one")
    gamepak.patch.make(base, two, tmp_path / "two.gpatch", name="two")
    target = tmp_path / f"target{extension}"
    shutil.copy(base, target)
    return base, target, tmp_path / "one.gpatch", tmp_path / "two.gpatch"


def test_conflicts_are_listed_and_nothing_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, target, one, two = two_patches(tmp_path)
    before = sha(target)
    plan = gamepak.patch.check(target, [one, two])
    assert plan.conflicts == [("hit.wav", ["one", "two"])]
    assert main(["patch", "apply", str(target), str(one), str(two)]) == 1
    assert "hit.wav" in capsys.readouterr().err
    assert sha(target) == before
    assert main(["patch", "check", str(target), str(one), str(two)]) == 1


def test_later_wins_and_one_rewrite(tmp_path: Path) -> None:
    _, target, one, two = two_patches(tmp_path, ".vpp_pc")
    inode = target.stat().st_ino
    assert main(["patch", "apply", "--later-wins", str(target), str(one), str(two)]) == 0
    assert contents(target)["hit.wav"] == b"RIFF two"
    assert contents(target)["gfx.wad"] == b"WAD2 two"
    assert target.stat().st_ino != inode  # rebuilt once (temporary + rename)


@pytest.mark.parametrize("extension", [".vpp_pc", ".pak", ".jpk", ".zip"])
def test_revert_one_patch_keeps_the_other(tmp_path: Path, extension: str) -> None:
    base = build(tmp_path / f"base{extension}", MEMBERS)
    one = build(tmp_path / f"one{extension}", {**MEMBERS, "hit.wav": b"RIFF one"})
    two = build(tmp_path / f"two{extension}", {**MEMBERS, "gfx.wad": b"WAD2 two"})
    gamepak.patch.make(base, one, tmp_path / "one.gpatch", name="one")
    gamepak.patch.make(base, two, tmp_path / "two.gpatch", name="two")
    target = tmp_path / f"target{extension}"
    shutil.copy(base, target)
    gamepak.patch.apply(target, [tmp_path / "one.gpatch"])
    gamepak.patch.apply(target, [tmp_path / "two.gpatch"])
    assert main(["patch", "revert", str(target), str(tmp_path / "one.gpatch")]) == 0
    assert contents(target) == {**MEMBERS, "gfx.wad": b"WAD2 two"}
    if extension == ".vpp_pc":
        # Rebuilt: the same bytes as "two" applied alone to the original.
        alone = tmp_path / f"alone{extension}"
        shutil.copy(base, alone)
        gamepak.patch.apply(alone, [tmp_path / "two.gpatch"])
        assert sha(target) == sha(alone)
    assert gamepak.patch.revert(target) == ["two"]
    assert sha(target) == sha(base)  # the original bytes, from the record, whatever the format


def test_nested_members_are_compared_inside(tmp_path: Path) -> None:
    inner = {"a.txt": b"alpha" * 100, "b.txt": b"beta" * 100}
    inner_path = build(tmp_path / "zone.str2_pc", inner)
    inner_mod = build(tmp_path / "zone_mod.str2_pc", {**inner, "b.txt": b"BETA" * 100})
    base = build(tmp_path / "base.vpp_pc", {"zone.str2_pc": inner_path.read_bytes(), "x.xtbl": b"<x/>"})
    mod = build(tmp_path / "mod.vpp_pc", {"zone.str2_pc": inner_mod.read_bytes(), "x.xtbl": b"<x/>"})
    operations = gamepak.patch.make(base, mod, tmp_path / "p.gpatch")
    assert [(operation.op, operation.member) for operation in operations] == [("replace", "zone.str2_pc/b.txt")]
    target = tmp_path / "target.vpp_pc"
    shutil.copy(base, target)
    gamepak.patch.apply(target, [tmp_path / "p.gpatch"])
    with gamepak.open(target) as archive, archive.open_archive("zone.str2_pc") as nested:
        assert nested.read("b.txt") == b"BETA" * 100


def test_folders_with_packs_and_plain_files(tmp_path: Path) -> None:
    for side in ("base", "mod"):
        (tmp_path / side / "id1").mkdir(parents=True)
    build(tmp_path / "base" / "id1" / "pak0.pak", MEMBERS)
    build(tmp_path / "mod" / "id1" / "pak0.pak", modded(MEMBERS))
    (tmp_path / "base" / "id1" / "config.cfg").write_bytes(b"bind w +forward\n")
    (tmp_path / "mod" / "id1" / "config.cfg").write_bytes(b"bind w +forward\nbind s +back\n")
    (tmp_path / "mod" / "id1" / "autoexec.cfg").write_bytes(b"exec x\n")
    patch = tmp_path / "p.gpatch"
    assert main(["patch", "make", str(tmp_path / "base"), str(tmp_path / "mod"), "-o", str(patch)]) == 0
    game = tmp_path / "game"
    shutil.copytree(tmp_path / "base", game)
    original_pak = (game / "id1" / "pak0.pak").read_bytes()
    assert main(["patch", "apply", str(game), str(patch)]) == 0
    assert contents(game / "id1" / "pak0.pak") == modded(MEMBERS)
    assert (game / "id1" / "config.cfg").read_bytes() == (tmp_path / "mod" / "id1" / "config.cfg").read_bytes()
    assert (game / "id1" / "autoexec.cfg").read_bytes() == b"exec x\n"
    assert main(["patch", "revert", str(game)]) == 0
    # Changed in place: its journal (the header and directory bytes written over, its old
    # size) gives it back byte for byte.
    assert (game / "id1" / "pak0.pak").read_bytes() == original_pak
    assert (game / "id1" / "config.cfg").read_bytes() == b"bind w +forward\n"
    assert not (game / "id1" / "autoexec.cfg").exists()


def test_info_lists_metadata(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = build(tmp_path / "base.pak", MEMBERS)
    mod = build(tmp_path / "mod.pak", modded(MEMBERS))
    patch = tmp_path / "p.gpatch"
    code = main(
        [
            "patch",
            "make",
            str(base),
            str(mod),
            "-o",
            str(patch),
            "--name",
            "Fix",
            "--author",
            "me",
            "--game",
            "quake",
            "--link",
            "https://example.org/fix",
        ]
    )
    assert code == 0
    capsys.readouterr()
    assert main(["patch", "info", str(patch), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["name"] == "Fix" and document["author"] == "me" and document["version"] == 1
    assert document["links"] == ["https://example.org/fix"]
    assert len(document["operations"]) == 4
    assert main(["patch", "info", str(patch)]) == 0
    assert "rename player.mdl -> hero.mdl" in capsys.readouterr().out


# -- hostile patch files ---------------------------------------------------------------------


def hostile(tmp_path: Path, manifest: dict, blobs: dict[str, bytes] | None = None) -> Path:
    path = tmp_path / "hostile.gpatch"
    with zipfile.ZipFile(path, "w") as zip_file:
        zip_file.writestr("patch.json", json.dumps(manifest))
        for name, data in (blobs or {}).items():
            zip_file.writestr(name, data, zipfile.ZIP_DEFLATED)
    return path


def manifest_with(operation: dict, version: int = 1) -> dict:
    return {"format": "gamepak-patch", "version": version, "operations": [operation]}


ADD = {
    "op": "add",
    "file": "data/x.pak",
    "member": "a.txt",
    "target_sha256": "0" * 64,
    "size": 3,
    "blob": "blobs/0",
    "encoding": "raw",
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"file": "../outside.pak"}, "'..'"),
        ({"file": "/etc/passwd"}, "absolute"),
        ({"member": "../../x"}, "'..'"),
        ({"file": "C:/x.pak"}, "drive letter"),
        ({"size": 1 << 40}, "size"),
        ({"op": "explode"}, "unknown operation"),
        ({"target_sha256": "xyz"}, "sha256"),
        ({"blob": "../blob"}, "blob"),
        ({"encoding": "lzma"}, "encoding"),
    ],
)
def test_hostile_operations_are_refused(tmp_path: Path, change: dict, message: str) -> None:
    path = hostile(tmp_path, manifest_with({**ADD, **change}), {"blobs/0": b"abc"})
    with pytest.raises(PatchError, match=message):
        Patch.open(path)


def test_a_damaged_manifest_or_blob_is_a_patch_error(tmp_path: Path) -> None:
    # A flipped bit in patch.json's stored bytes: zipfile's own "Bad CRC-32" (fuzz_read_gpatch).
    path = hostile(tmp_path, manifest_with(ADD), {"blobs/0": b"abc"})
    data = bytearray(path.read_bytes())
    data[data.index(b'"format"') + 2] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(PatchError, match="patch.json cannot be read"):
        Patch.open(path)
    # The same in a blob, found when it is read.
    path = hostile(tmp_path, manifest_with({**ADD, "file": "", "size": 300}), {"blobs/0": b"abc" * 100})
    with Patch.open(path) as opened:
        assert opened._zip is not None  # a .gpatch's blobs are a zip's members
        stored = opened._zip.getinfo("blobs/0")
        raw = bytearray(path.read_bytes())
    offset = stored.header_offset + 30 + len(stored.filename) + len(stored.extra) + 2
    raw[offset] ^= 0xFF
    path.write_bytes(bytes(raw))
    with Patch.open(path) as opened, pytest.raises(PatchError, match="blobs/0 cannot be read"):
        opened.blob(opened.operations[0])
    # A central directory asking for a zip version zipfile does not read (NotImplementedError).
    path = hostile(tmp_path, manifest_with(ADD), {"blobs/0": b"abc"})
    data = bytearray(path.read_bytes())
    data[data.index(b"PK\x01\x02") + 6] = 249
    path.write_bytes(bytes(data))
    with pytest.raises(PatchError, match="not a gamepak patch .*version"):
        Patch.open(path)
    # A local header flagged UTF-8 whose name is not (UnicodeDecodeError).
    path = hostile(tmp_path, manifest_with(ADD), {"blobs/0": b"abc"})
    data = bytearray(path.read_bytes())
    data[7] |= 0x08  # general purpose flags, bit 11 (0x800): the name is UTF-8
    data[30:32] = b"\xc2("
    path.write_bytes(bytes(data))
    with pytest.raises(PatchError):
        Patch.open(path)
    # A damaged lzma blob: lzma's LZMAError is none of zipfile's other errors (as fuzz_read_zip
    # found in the zip reader).
    path = tmp_path / "lzma.gpatch"
    with zipfile.ZipFile(path, "w") as zip_file:
        zip_file.writestr("patch.json", json.dumps(manifest_with({**ADD, "file": "", "size": 300})))
        zip_file.writestr("blobs/0", b"abc" * 100, zipfile.ZIP_LZMA)
    with Patch.open(path) as opened:
        assert opened._zip is not None
        stored = opened._zip.getinfo("blobs/0")
    raw = bytearray(path.read_bytes())
    raw[stored.header_offset + 30 + len(stored.filename) + len(stored.extra) + 9] ^= 0xFF
    path.write_bytes(bytes(raw))
    with Patch.open(path) as opened, pytest.raises(PatchError, match="blobs/0 cannot be read"):
        opened.blob(opened.operations[0])


def test_unknown_version_and_not_a_patch(tmp_path: Path) -> None:
    with pytest.raises(PatchError, match="version 2"):
        Patch.open(hostile(tmp_path, manifest_with(ADD, version=2)))
    (tmp_path / "junk.gpatch").write_bytes(b"not a zip at all")
    with pytest.raises(PatchError, match="not a gamepak patch"):
        Patch.open(tmp_path / "junk.gpatch")


def test_a_blob_bigger_than_declared_is_refused(tmp_path: Path) -> None:
    # A bomb: 64 MiB of zeros deflate to almost nothing, declared as a 3-byte member.
    path = hostile(tmp_path, manifest_with(ADD), {"blobs/0": bytes(64 << 20)})
    with pytest.raises(PatchError, match="more than"):
        Patch.open(path)


@pytest.mark.parametrize("size", [3, 2 << 20])  # small: checked in the plan; large: on the worker
def test_bad_bytes_are_refused_before_anything_is_written(tmp_path: Path, size: int) -> None:
    target = build(tmp_path / "x.pak", MEMBERS)
    before = sha(target)
    blob = b"abc" * (size // 3) + b"abc"[: size % 3]
    path = hostile(tmp_path, manifest_with({**ADD, "file": "", "size": size}), {"blobs/0": blob})
    with pytest.raises(PatchError, match="target sha256"):
        gamepak.patch.apply(target, [path])
    assert sha(target) == before
    assert main(["patch", "apply", str(target), str(path)]) == 1
    # Nothing was applied, so nothing is recorded as applied (or pending).
    assert not Path(str(target) + ".gamepak-undo").exists()


def test_import_gamepak_stays_light() -> None:
    import subprocess
    import sys

    code = "import sys, gamepak; print('zstandard' in sys.modules, 'gamepak.ops.patch' in sys.modules)"
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.split() == ["False", "False"]


def test_real_table_one_byte_patch_is_small_and_reverts_exactly(tmp_path: Path) -> None:
    base = tmp_path / "table.vpp_pc"
    shutil.copy(sample("vpp/table.vpp_pc"), base)
    mod = tmp_path / "mod.vpp_pc"
    shutil.copy(base, mod)
    with gamepak.open(base) as archive:
        entry = max(archive.infolist(), key=lambda entry: entry.size)
        data = bytearray(archive.read(entry))
    data[len(data) // 2] ^= 1
    with gamepak.edit(mod) as editor:
        editor.replace(entry.name, bytes(data))
    patch = tmp_path / "p.gpatch"
    gamepak.patch.make(base, mod, patch)
    assert patch.stat().st_size <= 1024
    target = tmp_path / "target.vpp_pc"
    shutil.copy(base, target)
    gamepak.patch.apply(target, [patch])
    assert contents(target) == contents(mod)
    gamepak.patch.revert(target)
    assert sha(target) == sha(base)


@pytest.mark.parametrize("directory", ["end", "start"])
def test_a_full_revert_gives_a_pack_changed_in_place_back_byte_for_byte(tmp_path: Path, directory: str) -> None:
    """Two applies in place (PAK with its directory at the end: appended; at the start: the
    table grows over moved members), then `revert`: the original bytes and modification time,
    from each apply's journal, latest first. A pack changed since an apply is taken back member
    by member instead (its journal no longer describes it)."""
    base = tmp_path / "base.pak"
    with gamepak.create(base, directory=directory) as writer:
        for name, data in MEMBERS.items():
            writer.add(name, data)
    target, one, two = tmp_path / "target.pak", tmp_path / "one.gpatch", tmp_path / "two.gpatch"
    shutil.copy(base, target)
    gamepak.patch.make(base, build(tmp_path / "one.pak", {**MEMBERS, "hit.wav": b"RIFF one"}), one, name="one")
    gamepak.patch.make(base, build(tmp_path / "two.pak", {**MEMBERS, "gfx.wad": b"WAD2 two"}), two, name="two")
    os.utime(target, ns=(1_000_000_000, 1_000_000_000))
    original, inode = target.read_bytes(), target.stat().st_ino
    gamepak.patch.apply(target, [one])
    gamepak.patch.apply(target, [two])
    assert target.stat().st_ino == inode  # both changed it in place
    assert contents(target) == {**MEMBERS, "hit.wav": b"RIFF one", "gfx.wad": b"WAD2 two"}
    assert gamepak.patch.revert(target) == ["two", "one"]
    assert target.read_bytes() == original
    assert target.stat().st_mtime_ns == 1_000_000_000
    # Changed by something else after the apply: member by member, the same members.
    gamepak.patch.apply(target, [one])
    with open(target, "ab") as handle:
        handle.write(b"junk another tool left")
    with pytest.warns(UserWarning, match="changed since gamepak wrote it"):
        gamepak.patch.revert(target)
    assert contents(target) == MEMBERS


def test_a_journal_over_its_limit_is_dropped_and_the_revert_goes_member_by_member(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gamepak.core.inplace import Journal

    monkeypatch.setattr(Journal, "LIMIT", 4)  # the PAK header switch alone is 12 bytes
    base = build(tmp_path / "base.pak", MEMBERS)
    target = tmp_path / "target.pak"
    shutil.copy(base, target)
    gamepak.patch.make(base, build(tmp_path / "one.pak", {**MEMBERS, "hit.wav": b"RIFF one"}), tmp_path / "p.gpatch")
    gamepak.patch.apply(target, [tmp_path / "p.gpatch"])
    record = Path(str(target) + ".gamepak-undo")
    assert not list(record.glob("*-journal-*"))
    gamepak.patch.revert(target)
    assert contents(target) == MEMBERS


# -- kill -9 during apply and revert -----------------------------------------------------------


@pytest.mark.parametrize("extension", [".vpp_pc", ".pak"])
def test_kill_during_apply_and_revert_leaves_old_or_new(tmp_path: Path, extension: str) -> None:
    from test_edit_crash import kill_at

    base = build(tmp_path / f"base{extension}", MEMBERS)
    mod = build(tmp_path / f"mod{extension}", modded(MEMBERS))
    patch = tmp_path / "p.gpatch"
    gamepak.patch.make(base, mod, patch)
    old, new = MEMBERS, contents(mod)
    landed = []
    for trial in range(8):
        folder = tmp_path / f"trial{trial}"
        folder.mkdir()
        target = folder / f"target{extension}"
        shutil.copy(base, target)
        applying = trial % 2 == 0
        if not applying:
            gamepak.patch.apply(target, [patch])

        def work(target: Path = target, applying: bool = applying) -> None:
            if applying:
                gamepak.patch.apply(target, [patch])
            else:
                gamepak.patch.revert(target)

        # Killed just before its file-changing call 1, 4, 7, 10 (traced, not a random delay).
        landed.append(kill_at(work, 1 + 3 * (trial // 2)))
        state = contents(target)
        assert state in (old, new)
        record = Path(str(target) + ".gamepak-undo") / "record.json"
        if record.exists():
            json.loads(record.read_text())  # never half-written
            gamepak.patch.revert(target)  # a finished or interrupted apply reverts cleanly
        else:
            assert state == old
        assert sha(target) == sha(base)  # the original bytes, not only the original members
    assert all(landed), f"some kills came after the work ended: {landed}"


# -- SyncFaction loose-archive mods ------------------------------------------------------------


def test_syncfaction_loose_archive_folder(tmp_path: Path) -> None:
    game = tmp_path / "game"
    (game / "data").mkdir(parents=True)
    build(game / "data" / "misc.vpp_pc", {"camera.xtbl": b"<root>old</root>", "old.xtbl": b"x", "keep.xtbl": b"k"})
    original = contents(game / "data" / "misc.vpp_pc")
    loose = tmp_path / "mod" / "data" / "MISC.vpp"  # any case; .vpp means .vpp_pc
    loose.mkdir(parents=True)
    (loose / "camera.xtbl").write_bytes(b"<root>new</root>")
    (loose / "added.xtbl").write_bytes(b"<root>added</root>")
    (loose / ".delete.json").write_text('["OLD.xtbl"]')
    (loose / ".options.json").write_text('{"Mode": "Compressed"}')
    assert main(["patch", "check", str(game), str(tmp_path / "mod")]) == 0
    assert main(["patch", "apply", str(game), str(tmp_path / "mod")]) == 0
    assert contents(game / "data" / "misc.vpp_pc") == {
        "camera.xtbl": b"<root>new</root>",
        "keep.xtbl": b"k",
        "added.xtbl": b"<root>added</root>",
    }
    assert main(["patch", "revert", str(game)]) == 0
    assert contents(game / "data" / "misc.vpp_pc") == original


def test_syncfaction_members_and_whole_files_are_raw_operations_alike(tmp_path: Path) -> None:
    """A loose archive's member and a whole game file become the same operation (the mod's file
    as it is, replacing what the game has or added beside it), each with its own blob."""
    from gamepak.ops.patch.syncfaction import mod_patch

    game = tmp_path / "game"
    (game / "data").mkdir(parents=True)
    build(game / "data" / "misc.vpp_pc", {"camera.xtbl": b"old"})
    (game / "data" / "table.txt").write_bytes(b"old table")
    loose = tmp_path / "mod" / "data" / "misc.vpp_pc"
    loose.mkdir(parents=True)
    files = {"camera.xtbl": b"new", "added.xtbl": b"added", "table.txt": b"new table", "new.txt": b"brand new"}
    for name, data in files.items():
        (loose if name.endswith(".xtbl") else tmp_path / "mod" / "data").joinpath(name).write_bytes(data)
    patch = mod_patch(tmp_path / "mod", game)
    found = [
        (operation.op, operation.file, operation.member, operation.base_sha256, operation.size, operation.encoding)
        for operation in patch.operations
    ]
    assert found == [
        ("add", "data/misc.vpp_pc", "added.xtbl", None, 5, "raw"),
        ("replace", "data/misc.vpp_pc", "camera.xtbl", None, 3, "raw"),
        ("add", "data/new.txt", None, None, 9, "raw"),
        ("replace", "data/table.txt", None, None, 9, "raw"),
    ]
    names = ["added.xtbl", "camera.xtbl", "new.txt", "table.txt"]
    for operation, name in zip(patch.operations, names, strict=True):
        assert operation.target_sha256 == hashlib.sha256(files[name]).hexdigest()
    assert len({operation.blob for operation in patch.operations}) == 4


def test_syncfaction_mod_conflicts_with_a_patch(tmp_path: Path) -> None:
    game = tmp_path / "game"
    (game / "data").mkdir(parents=True)
    build(game / "data" / "misc.vpp_pc", {"camera.xtbl": b"old"})
    (tmp_path / "modded" / "data").mkdir(parents=True)
    build(tmp_path / "modded" / "data" / "misc.vpp_pc", {"camera.xtbl": b"patched"})
    gamepak.patch.make(game, tmp_path / "modded", tmp_path / "p.gpatch")
    loose = tmp_path / "mod" / "data" / "misc.vpp_pc"
    loose.mkdir(parents=True)
    (loose / "camera.xtbl").write_bytes(b"modded")
    plan = gamepak.patch.check(game, [tmp_path / "p.gpatch", tmp_path / "mod"])
    assert [member for member, _ in plan.conflicts] == ["data/misc.vpp_pc: camera.xtbl"]


def test_a_name_one_pack_refuses_stops_every_pack(tmp_path: Path) -> None:
    game = tmp_path / "game"
    (game / "data").mkdir(parents=True)
    build(game / "data" / "a.vpp_pc", {"x.xtbl": b"a"})
    build(game / "data" / "b.vpp_pc", {"y.xtbl": b"b"})
    before = {name: sha(game / "data" / name) for name in ("a.vpp_pc", "b.vpp_pc")}
    (tmp_path / "mod" / "data" / "a.vpp_pc").mkdir(parents=True)
    (tmp_path / "mod" / "data" / "a.vpp_pc" / "x.xtbl").write_bytes(b"changed")
    (tmp_path / "mod" / "data" / "b.vpp_pc" / "sub").mkdir(parents=True)  # RFG names hold no folders
    (tmp_path / "mod" / "data" / "b.vpp_pc" / "sub" / "z.xtbl").write_bytes(b"z")
    assert main(["patch", "apply", str(game), str(tmp_path / "mod")]) == 1
    assert {name: sha(game / "data" / name) for name in before} == before


def test_a_revert_killed_before_removing_its_empty_record_finishes_next_time(tmp_path: Path) -> None:
    base = build(tmp_path / "base.pak", MEMBERS)
    mod = build(tmp_path / "mod.pak", modded(MEMBERS))
    patch = tmp_path / "p.gpatch"
    gamepak.patch.make(base, mod, patch)
    target = tmp_path / "target.pak"
    shutil.copy(base, target)
    gamepak.patch.apply(target, [patch])
    folder = Path(str(target) + ".gamepak-undo")
    gamepak.patch.revert(target)
    # What a kill between the last record write and the folder's removal leaves behind.
    folder.mkdir()
    from gamepak.ops.patch.undo import RECORD_FORMAT, RECORD_VERSION

    (folder / "record.json").write_text(
        json.dumps({"format": RECORD_FORMAT, "version": RECORD_VERSION, "applications": [], "files": {}})
    )
    assert gamepak.patch.revert(target) == []
    assert not folder.exists() and contents(target) == MEMBERS
    with pytest.raises(gamepak.errors.GamepakError, match="no patches applied"):
        gamepak.patch.revert(target)
