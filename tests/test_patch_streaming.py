"""`patch apply` streams what it writes: new members past `scratch.MEMORY_BYTES` in all are
decoded into scratch files (checked as they are written), never held whole; the result is the
same bytes, a bad output still refuses the whole apply, and no scratch file outlives the apply
(nor a kill: the next command removes it)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import zipfile
from pathlib import Path

import pytest

import gamepak
from gamepak.ops.patch import PatchError, scratch
from gamepak.ops.patch.container import Operation, Patch
from gamepak.ops.patch.limits import limits

from conftest import pack_members as contents
from conftest import write_pack as build
from streaming_helpers import KIB, MIB, noise, peak_while, strays, touched

BASE = {
    "maps/big.bsp": noise(1, 300 * KIB),
    "maps/other.bsp": noise(2, 200 * KIB),
    "progs/similar.mdl": noise(3, 120 * KIB),
    "gone.wav": noise(4, 5 * KIB),
    "small.cfg": b"bind w +forward\n",
}
MODDED = {
    "maps/big.bsp": noise(11, 310 * KIB),  # raw
    "maps/other.bsp": noise(12, 190 * KIB),  # raw
    "progs/similar.mdl": touched(BASE["progs/similar.mdl"]),  # zstd delta
    "small.cfg": b"bind w +forward\nbind s +back\n",
    "sound/new1.wav": noise(13, 150 * KIB),  # added
    "sound/new2.wav": noise(14, 60 * KIB),
}


class Spy:
    """What `NewContent.make` returned: bytes held, or scratch files' paths."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.held = 0
        self.files = 0
        original = scratch.NewContent.make

        def make(content: scratch.NewContent, *args: object) -> bytes | str:
            result = original(content, *args)  # type: ignore[arg-type]
            if isinstance(result, str):
                self.files += 1
            else:
                self.held += 1
            return result

        monkeypatch.setattr(scratch.NewContent, "make", make)


def _pak_case(tmp_path: Path) -> tuple[Path, Path]:
    """(the base PAK, the patch turning it into MODDED)."""
    base = build(tmp_path / "base.pak", BASE)
    mod = build(tmp_path / "mod.pak", MODDED)
    patch = tmp_path / "p.gpatch"
    operations = gamepak.patch.make(base, mod, patch)
    assert {operation.encoding for operation in operations if operation.op == "replace"} == {"raw", "zstd-delta"}
    return base, patch


def _folder_case(tmp_path: Path) -> tuple[Path, Path]:
    """(a base game folder: a PAK and plain files, the patch turning it into the modded one)."""
    for side, members in (("base", BASE), ("mod", MODDED)):
        build(tmp_path / side / "id1" / "pak0.pak", members)
    for name, data in BASE.items():
        (tmp_path / "base" / "id1" / "loose" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "base" / "id1" / "loose" / name).write_bytes(data)
    for name, data in MODDED.items():
        (tmp_path / "mod" / "id1" / "loose" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "mod" / "id1" / "loose" / name).write_bytes(data)
    patch = tmp_path / "p.gpatch"
    operations = gamepak.patch.make(tmp_path / "base", tmp_path / "mod", patch)
    plain = [operation for operation in operations if operation.member is None and operation.op != "remove"]
    assert {operation.encoding for operation in plain} == {"raw", "zstd-delta"}
    return tmp_path / "base", patch


def _copy(source: Path, target: Path) -> Path:
    if source.is_dir():
        shutil.copytree(source, target)
    else:
        shutil.copy(source, target)
    return target


def _files(target: Path) -> dict[str, bytes]:
    """Every file of a pack or game folder, by relative path: the bytes, not only the members."""
    if target.is_file():
        return {"": target.read_bytes()}
    return {
        os.path.relpath(os.path.join(root, name), target): Path(root, name).read_bytes()
        for root, _, names in os.walk(target)
        for name in names
    }


@pytest.mark.parametrize("case", [_pak_case, _folder_case], ids=["pak", "folder"])
def test_streamed_apply_writes_the_same_bytes_and_reverts_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: object
) -> None:
    base, patch = case(tmp_path)  # type: ignore[operator]
    original = _files(base)
    (tmp_path / "held").mkdir()
    (tmp_path / "streamed").mkdir()
    held = _copy(base, tmp_path / "held" / base.name)
    streamed = _copy(base, tmp_path / "streamed" / base.name)
    spy = Spy(monkeypatch)
    gamepak.patch.apply(held, [patch])
    assert spy.files == 0 and spy.held > 0
    spy.held = 0
    monkeypatch.setattr(scratch, "MEMORY_BYTES", KIB)
    gamepak.patch.apply(streamed, [patch])
    # Every output over 1 KiB went through a scratch file; the few small ones fit in memory.
    assert spy.files >= 5 and spy.held <= 2
    assert _files(streamed) == _files(held)
    if base.is_file():
        assert contents(streamed) == MODDED
    else:
        assert contents(streamed / "id1" / "pak0.pak") == MODDED
        assert (streamed / "id1" / "loose" / "sound" / "new1.wav").read_bytes() == MODDED["sound/new1.wav"]
    assert strays(tmp_path / "streamed", *(Path(root) for root, _, _ in os.walk(streamed))) == []
    gamepak.patch.revert(streamed)
    gamepak.patch.revert(held)
    assert _files(streamed) == original == _files(held)


def test_a_plain_file_is_copied_when_the_scratch_folder_is_on_another_file_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    base, patch = _folder_case(tmp_path)
    game = _copy(base, tmp_path / "game")
    monkeypatch.setattr(scratch, "MEMORY_BYTES", KIB)
    renamed = os.replace
    crossed = []

    def replace(source: str, target: str) -> None:
        if ".apply.gamepak-" in str(source):  # out of the scratch folder: as if across devices
            crossed.append(target)
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        renamed(source, target)

    monkeypatch.setattr(os, "replace", replace)
    gamepak.patch.apply(game, [patch])
    assert crossed  # and copied instead, through a temporary beside each file
    assert (game / "id1" / "loose" / "maps" / "big.bsp").read_bytes() == MODDED["maps/big.bsp"]
    assert (game / "id1" / "loose" / "sound" / "new1.wav").read_bytes() == MODDED["sound/new1.wav"]
    assert strays(tmp_path, *(Path(root) for root, _, _ in os.walk(game))) == []


def _adds_only(tmp_path: Path, count: int, size: int) -> tuple[Path, Path]:
    base = build(tmp_path / "base.pak", {"keep.txt": b"kept"})
    added = {f"add{index}.bin": noise(100 + index, size) for index in range(count)}
    mod = build(tmp_path / "mod.pak", {"keep.txt": b"kept", **added})
    patch = tmp_path / "p.gpatch"
    gamepak.patch.make(base, mod, patch)
    target = tmp_path / "target" / "target.pak"
    target.parent.mkdir()
    shutil.copy(base, target)
    return target, patch


def test_outputs_over_the_budget_are_never_held_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Twelve 2 MiB members (decoded on the worker thread, past the undo record's delta size):
    with a 1 KiB budget the apply's traced peak stays a fraction of their 24 MiB (a few 1 MiB
    chunks pass through at once, whatever the count: measured 4.7 MiB for 4 or 8 members of 2
    or 4 MiB; 20.7 MiB for 8 x 2 MiB held in memory), and no output is ever built as bytes."""
    count, size = 12, 2 * MIB
    target, patch = _adds_only(tmp_path, count, size)
    monkeypatch.setattr(scratch, "MEMORY_BYTES", KIB)
    from gamepak.ops.patch.container import Patch

    def whole(*args: object) -> bytes:
        raise AssertionError("an output over the budget was built whole")

    monkeypatch.setattr(Patch, "target_bytes", whole)
    monkeypatch.setattr(Patch, "decode", whole)
    peak = peak_while(lambda: gamepak.patch.apply(target, [patch]))
    assert contents(target) == contents(tmp_path / "mod.pak")
    assert peak < count * size // 3, f"peak {peak / MIB:.1f} MiB"
    assert strays(target.parent) == []


def _replaces(tmp_path: Path, count: int, size: int) -> tuple[Path, Path, dict[str, bytes]]:
    """(a PAK of `count` members of `size` bytes, a patch replacing each (raw), the members)."""
    members = {f"m{index}.bin": noise(index, size) for index in range(count)}
    base = build(tmp_path / "base.pak", members)
    mod = build(tmp_path / "mod.pak", {name: noise(100 + index, size) for index, name in enumerate(members)})
    patch = tmp_path / "p.gpatch"
    gamepak.patch.make(base, mod, patch)
    target = tmp_path / "target" / "target.pak"
    target.parent.mkdir()
    shutil.copy(base, target)
    return target, patch, members


@pytest.fixture
def low_budgets(monkeypatch: pytest.MonkeyPatch) -> None:
    """1 KiB of new members and 1 KiB of old ones in memory; no slow level-19 deltas of noise."""
    import sys

    monkeypatch.setattr(scratch, "MEMORY_BYTES", KIB)
    # (`gamepak.ops.patch.apply` and `.make` are the functions; the modules are in sys.modules.)
    monkeypatch.setattr(sys.modules["gamepak.ops.patch.target"], "KEPT_BYTES", KIB)
    monkeypatch.setattr(sys.modules["gamepak.ops.patch.make"], "MAX_DELTA_BASE_BYTES", 0)


@pytest.mark.usefixtures("low_budgets")
def test_old_members_over_the_budget_are_streamed_into_the_undo_record(tmp_path: Path) -> None:
    """Sixteen 2 MiB members replaced: neither their old bytes (hashed, then copied into the undo
    record) nor their new ones are held; the traced peak stays a fraction of either's 32 MiB
    (measured 7.6 MiB for 8 or 16 members of 2 or 4 MiB; 37.6 MiB for 8 x 2 MiB before, the
    old bytes kept)."""
    count, size = 16, 2 * MIB
    target, patch, _ = _replaces(tmp_path, count, size)
    peak = peak_while(lambda: gamepak.patch.apply(target, [patch]))
    assert contents(target) == contents(tmp_path / "mod.pak")
    assert peak < count * size // 3, f"peak {peak / MIB:.1f} MiB"
    with zipfile.ZipFile(Path(f"{target}.gamepak-undo") / "1-1.gpatch") as undo:
        blobs = [info for info in undo.infolist() if info.filename.startswith("blobs/")]
        assert len(blobs) == count and all(info.file_size == size for info in blobs)
    gamepak.patch.revert(target)
    assert target.read_bytes() == (tmp_path / "base.pak").read_bytes()


@pytest.mark.usefixtures("low_budgets")
def test_reverse_deltas_past_the_budget_are_not_held_until_the_undo_record_is_written(tmp_path: Path) -> None:
    """Ninety-six small members half changed: each one's reverse delta (half its size) would wait
    in memory for the undo patch to be written, 12 MiB in all (measured peak 27 MiB, 15 MiB for
    half as many); past the budget the old bytes go raw, streamed again when written."""
    count, size = 96, 256 * KIB
    members = {f"m{index}.bin": noise(index, size) for index in range(count)}
    changed = {
        name: data[: size // 2] + noise(500 + index, size // 2) for index, (name, data) in enumerate(members.items())
    }
    base = build(tmp_path / "base.pak", members)
    gamepak.patch.make(base, build(tmp_path / "mod.pak", changed), tmp_path / "p.gpatch")
    target = tmp_path / "target" / "target.pak"
    target.parent.mkdir()
    shutil.copy(base, target)
    peak = peak_while(lambda: gamepak.patch.apply(target, [tmp_path / "p.gpatch"]))
    assert contents(target) == changed
    assert peak < count * size // 4, f"peak {peak / MIB:.1f} MiB"
    with open(target, "ab") as handle:
        handle.write(b"another tool was here")  # so the revert replays the undo record
    with pytest.warns(UserWarning, match="changed since gamepak wrote it"):
        gamepak.patch.revert(target)
    assert contents(target) == members


@pytest.mark.usefixtures("low_budgets")
def test_a_member_by_member_revert_from_a_streamed_undo_record_gives_the_members_back(tmp_path: Path) -> None:
    target, patch, members = _replaces(tmp_path, 3, 300 * KIB)
    gamepak.patch.apply(target, [patch])
    with open(target, "ab") as handle:
        handle.write(b"another tool was here")  # so the revert replays the undo record
    with pytest.warns(UserWarning, match="changed since gamepak wrote it"):
        gamepak.patch.revert(target)
    assert contents(target) == members
    assert strays(target.parent) == []


def _corrupt(patch: Path, member: str) -> Path:
    """A copy of `patch` whose blob for `member` has one byte flipped past its middle (the
    manifest's sha256 kept)."""
    bad = patch.with_name("bad.gpatch")
    with zipfile.ZipFile(patch) as source, zipfile.ZipFile(bad, "w") as out:
        manifest = json.loads(source.read("patch.json"))
        blob = next(
            operation["blob"]
            for operation in manifest["operations"]
            if operation.get("member") == member or operation.get("file", "").endswith(member)
        )
        for info in source.infolist():
            data = source.read(info)
            if info.filename == blob:
                changed = bytearray(data)
                changed[len(changed) * 3 // 4] ^= 1
                data = bytes(changed)
            out.writestr(info, data)
    return bad


@pytest.mark.parametrize("size", [300 * KIB, 3 * MIB // 2])  # made in the caller; on the worker thread
@pytest.mark.parametrize("where", ["pak", "plain"])
def test_a_streamed_output_that_fails_its_sha256_refuses_everything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int, where: str
) -> None:
    import sys

    # Raw blobs: a level-19 delta of noise is slow. (`gamepak.ops.patch.make` is the function;
    # the module is in sys.modules.)
    monkeypatch.setattr(sys.modules["gamepak.ops.patch.make"], "MAX_DELTA_BASE_BYTES", 0)
    members = {f"m{index}.bin": noise(index, size) for index in range(4)}
    changed = {name: noise(50 + index, size) for index, name in enumerate(members)}
    for side, data in (("base", members), ("mod", changed)):
        build(tmp_path / side / "id1" / "pak0.pak", data)
        (tmp_path / side / "id1" / "loose").mkdir()
        for name, content in data.items():
            (tmp_path / side / "id1" / "loose" / name).write_bytes(content)
    patch = tmp_path / "p.gpatch"
    gamepak.patch.make(tmp_path / "base", tmp_path / "mod", patch)
    bad = _corrupt(patch, "m2.bin" if where == "pak" else "loose/m2.bin")
    game = _copy(tmp_path / "base", tmp_path / "game")
    before = _files(game)
    monkeypatch.setattr(scratch, "MEMORY_BYTES", KIB)
    spy = Spy(monkeypatch)
    with pytest.raises(PatchError, match="target sha256"):
        gamepak.patch.apply(game, [bad])
    assert spy.files >= 1  # others were streamed before the bad one
    assert _files(game) == before
    assert strays(tmp_path, *(Path(root) for root, _, _ in os.walk(game))) == []
    assert not (tmp_path / "game.gamepak-undo").exists()


def test_a_streamed_delta_that_does_not_decode_refuses_everything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, patch = _pak_case(tmp_path)
    bad = _corrupt(patch, "progs/similar.mdl")
    (tmp_path / "game").mkdir()
    target = _copy(base, tmp_path / "game" / "target.pak")
    monkeypatch.setattr(scratch, "MEMORY_BYTES", KIB)
    with pytest.raises(PatchError, match=r"bad\.gpatch: progs/similar\.mdl: (the delta|the patch's bytes)"):
        gamepak.patch.apply(target, [bad])
    assert target.read_bytes() == base.read_bytes()
    assert strays(tmp_path / "game") == []


def test_the_scratch_budget_refuses_before_anything_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target, patch = _adds_only(tmp_path, 4, 200 * KIB)
    before = target.read_bytes()
    monkeypatch.setattr(scratch, "MEMORY_BYTES", KIB)
    with limits(scratch=500 * KIB), pytest.raises(PatchError, match="scratch space.*--allow-large lifts this"):
        gamepak.patch.apply(target, [patch])
    assert target.read_bytes() == before
    assert strays(target.parent) == []
    # The scratch folder is beside the target, on its disk: --allow-large lifts its budget.
    with limits(scratch=500 * KIB, allow_large=True):
        gamepak.patch.apply(target, [patch])
    assert target.read_bytes() != before
    assert [path for path in strays(target.parent) if ".apply." in path] == []


@pytest.mark.parametrize("next_command", ["check", "apply", "revert"])
def test_a_kill_while_streaming_leaves_nothing_the_next_command_keeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, next_command: str
) -> None:
    target, patch = _adds_only(tmp_path, 4, 200 * KIB)
    before = target.read_bytes()
    monkeypatch.setattr(scratch, "MEMORY_BYTES", KIB)
    made = 0
    original = scratch.NewContent.make

    def make_then_die(
        content: scratch.NewContent, patch: Patch, operation: Operation, base: bytes | None
    ) -> bytes | str:
        nonlocal made
        result = original(content, patch, operation, base)
        made += 1
        if made == 2:
            os.kill(os.getpid(), signal.SIGKILL)  # a kill -9 with two scratch files written
        return result

    from test_edit_crash import run_child

    def work() -> None:
        # In the forked child only (it ends by os._exit or the kill: nothing to undo).
        with pytest.MonkeyPatch.context() as patched:
            patched.setattr(scratch.NewContent, "make", make_then_die)
            gamepak.patch.apply(target, [patch])

    pid = run_child(work, None)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    left = strays(target.parent)
    assert len(left) == 1 and len(os.listdir(target.parent / left[0])) == 2  # what the kill left
    if next_command == "check":
        assert gamepak.patch.check(target, [patch]).ok
    elif next_command == "apply":
        gamepak.patch.apply(target, [patch])
        gamepak.patch.revert(target)
    else:
        with pytest.raises(PatchError, match="no patches applied"):
            gamepak.patch.revert(target)
    assert strays(target.parent) == []
    assert target.read_bytes() == before


def test_mod_files_from_a_folder_and_a_zip_stream_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SyncFaction mods: a loose member and a whole file, read from the mod's folder or zip."""
    game = tmp_path / "game"
    build(game / "data" / "misc.vpp_pc", {"camera.xtbl": b"<root>old</root>", "keep.xtbl": b"k"})
    (game / "rfg.bin").write_bytes(noise(1, 100 * KIB))
    mod = tmp_path / "mod"
    (mod / "data" / "misc.vpp_pc").mkdir(parents=True)
    camera, whole = noise(2, 90 * KIB), noise(3, 130 * KIB)
    (mod / "data" / "misc.vpp_pc" / "camera.xtbl").write_bytes(camera)
    (mod / "rfg.bin").write_bytes(whole)
    zipped = Path(shutil.make_archive(str(tmp_path / "mod-zip"), "zip", mod))
    monkeypatch.setattr(scratch, "MEMORY_BYTES", KIB)
    spy = Spy(monkeypatch)
    for source in (mod, zipped):
        before = _files(game)
        gamepak.patch.apply(game, [source])
        assert contents(game / "data" / "misc.vpp_pc") == {"camera.xtbl": camera, "keep.xtbl": b"k"}
        assert (game / "rfg.bin").read_bytes() == whole
        gamepak.patch.revert(game)
        assert _files(game) == before
    assert spy.files == 4 and spy.held == 0
    assert strays(tmp_path, game, game / "data") == []


def test_an_undo_record_of_a_one_byte_change_is_small(tmp_path: Path) -> None:
    """The undo record's reverse delta of a 512 KiB member with one byte changed is a few dozen
    bytes: the fast level's match table is sized for the base (it was sized for the target
    alone, found nothing past ~128 KiB, and stored 300 KB)."""
    size = 512 * KIB
    old = noise(1, size)
    new = old[: size // 2] + bytes([old[size // 2] ^ 1]) + old[size // 2 + 1 :]
    base = build(tmp_path / "base.pak", {"big.bin": old, "small.txt": b"x"})
    gamepak.patch.make(base, build(tmp_path / "mod.pak", {"big.bin": new, "small.txt": b"x"}), tmp_path / "p.gpatch")
    target = tmp_path / "target.pak"
    shutil.copy(base, target)
    gamepak.patch.apply(target, [tmp_path / "p.gpatch"])
    with zipfile.ZipFile(Path(f"{target}.gamepak-undo") / "1-1.gpatch") as undo:
        blobs = [info for info in undo.infolist() if info.filename.startswith("blobs/")]
    assert len(blobs) == 1 and blobs[0].file_size < 200, [(info.filename, info.file_size) for info in blobs]
    gamepak.patch.revert(target)
    assert target.read_bytes() == base.read_bytes()


def test_a_delta_against_a_larger_base_than_make_uses_is_refused_unless_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A delta's base is read whole: a patch whose delta names a member larger than any `make`
    makes deltas against is refused before anything is read, naming it; --allow-large lifts it."""
    from gamepak.ops.patch import container

    size = 256 * KIB
    old = noise(2, size)
    new = old[:100] + b"changed" + old[107:]
    base = build(tmp_path / "base.pak", {"big.bin": old})
    gamepak.patch.make(base, build(tmp_path / "mod.pak", {"big.bin": new}), tmp_path / "p.gpatch")
    target = tmp_path / "target.pak"
    shutil.copy(base, target)
    monkeypatch.setattr(container, "MAX_DELTA_BASE_BYTES", size - 1)
    with pytest.raises(
        PatchError, match=rf"big.bin.*a delta against {size} bytes, more than the {size - 1}.*--allow-large"
    ):
        gamepak.patch.apply(target, [tmp_path / "p.gpatch"])
    assert target.read_bytes() == base.read_bytes()
    with limits(allow_large=True):
        gamepak.patch.apply(target, [tmp_path / "p.gpatch"])
    assert contents(target) == {"big.bin": new}
