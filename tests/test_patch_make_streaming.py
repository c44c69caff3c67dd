"""`patch make` streams what it stores: blobs past `make.MEMORY_BYTES` in all go to scratch files
beside the output, new members and raw replaces are hashed and copied as streams (never read
whole), the patch is the same bytes whatever the budget, and no scratch folder outlives the make
(nor a kill: the next command writing there removes it)."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterable
from pathlib import Path

import pytest

import gamepak
from gamepak.errors import GamepakError, OutputExistsError
from gamepak.ops.patch import scratch  # (imports the `make` module too)

from conftest import pack_members as contents
from conftest import write_pack as build
from streaming_helpers import KIB, MIB, forbid_whole_reads, noise, peak_while, strays, touched

# `gamepak.ops.patch.make` is the function; the module is in sys.modules.
MAKE = sys.modules["gamepak.ops.patch.make"]


# Replaced members past the delta limit the tests set (256 KiB) are stored raw, the others as
# deltas; every blob but the smallest is past the low budget (1 KiB).
BASE = {
    "maps/big.bsp": noise(1, 300 * KIB),  # raw replace
    "maps/huge.bsp": noise(2, 700 * KIB),  # raw replace
    "progs/similar.mdl": noise(3, 200 * KIB),  # delta
    "gone.wav": noise(4, 5 * KIB),  # removed
    "old/name.wav": noise(5, 150 * KIB),  # renamed
    "small.cfg": b"bind w +forward\n",
}
MODDED = {
    "maps/big.bsp": noise(11, 310 * KIB),
    "maps/huge.bsp": noise(12, 720 * KIB),
    "progs/similar.mdl": touched(BASE["progs/similar.mdl"]),
    "small.cfg": b"bind w +forward\nbind s +back\n",
    "new/name.wav": BASE["old/name.wav"],
    "sound/new1.wav": noise(13, 250 * KIB),  # added
    "sound/new2.wav": noise(14, 60 * KIB),  # added
}


def _paks(root: Path) -> tuple[Path, Path]:
    return build(root / "base.pak", BASE), build(root / "mod.pak", MODDED)


def _nested(root: Path) -> tuple[Path, Path]:
    """Two RFG packs holding a nested pack whose members change (a delta, a raw replace, an
    add), and a member added beside it."""
    inner_base = {"a.bin": noise(20, 200 * KIB), "b.bin": noise(21, 300 * KIB)}
    inner_mod = {"a.bin": touched(inner_base["a.bin"]), "b.bin": noise(22, 300 * KIB), "c.bin": noise(23, 90 * KIB)}
    zone_base = build(root / "zone-base.str2_pc", inner_base).read_bytes()
    zone_mod = build(root / "zone-mod.str2_pc", inner_mod).read_bytes()
    base = build(root / "base.vpp_pc", {"zone.str2_pc": zone_base, "x.xtbl": b"<x/>"})
    modded = build(root / "mod.vpp_pc", {"zone.str2_pc": zone_mod, "x.xtbl": b"<x/>", "y.bin": noise(30, 200 * KIB)})
    return base, modded


def _folders(root: Path) -> tuple[Path, Path]:
    """Two game folders: a PAK and the same members as plain files."""
    for side, members in (("base", BASE), ("mod", MODDED)):
        build(root / side / "id1" / "pak0.pak", members)
        for name, data in members.items():
            path = root / side / "id1" / "loose" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    return root / "base", root / "mod"


class Spy:
    """The blobs `make` handed to `write_patch`: how many as bytes, how many as scratch files."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.held = self.held_bytes = self.streamed = 0
        original = MAKE.write_patch

        def write_patch(path: str, operations: list, blobs: dict, *args: object, **options: object) -> None:
            for blob in blobs.values():
                if isinstance(blob, bytes):
                    self.held += 1
                    self.held_bytes += len(blob)
                else:
                    assert isinstance(blob, scratch.ScratchBlob) and os.path.isfile(blob.path)
                    self.streamed += 1
            original(path, operations, blobs, *args, **options)

        monkeypatch.setattr(MAKE, "write_patch", write_patch)


@pytest.fixture
def small_deltas(monkeypatch: pytest.MonkeyPatch) -> None:
    """Deltas against bases up to 256 KiB only (members past it are replaced raw), and one
    fixed clock: a zip entry's header holds the time it was written."""
    monkeypatch.setattr(MAKE, "MAX_DELTA_BASE_BYTES", 256 * KIB)
    monkeypatch.setattr(time, "time", lambda: 1_700_000_000.0)


@pytest.mark.usefixtures("small_deltas")
@pytest.mark.parametrize("case", [_paks, _nested, _folders], ids=["pak", "nested", "folder"])
def test_the_patch_is_the_same_bytes_whatever_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: object
) -> None:
    base, modded = case(tmp_path / "in")  # type: ignore[operator]
    spy = Spy(monkeypatch)
    held = gamepak.patch.make(base, modded, tmp_path / "held.gpatch")
    assert spy.streamed == 0 and spy.held > 0
    assert {operation.encoding for operation in held if operation.op == "replace"} == {"raw", "zstd-delta"}
    assert any(operation.op == "add" for operation in held)
    spy.held = spy.held_bytes = 0
    monkeypatch.setattr(MAKE, "MEMORY_BYTES", KIB)
    streamed = gamepak.patch.make(base, modded, tmp_path / "streamed.gpatch")
    # Blobs went through scratch files past 1 KiB in all (small deltas fit in memory).
    assert spy.streamed >= 3 and spy.held_bytes <= KIB
    assert [operation.to_dict() for operation in streamed] == [operation.to_dict() for operation in held]
    assert (tmp_path / "streamed.gpatch").read_bytes() == (tmp_path / "held.gpatch").read_bytes()
    assert strays(tmp_path) == []
    # And it applies: the streamed blobs are the members' bytes.
    target = tmp_path / "target" / base.name
    if base.is_dir():
        import shutil

        shutil.copytree(base, target)
        gamepak.patch.apply(target, [tmp_path / "streamed.gpatch"])
        assert contents(target / "id1" / "pak0.pak") == MODDED
        assert (target / "id1" / "loose" / "maps" / "huge.bsp").read_bytes() == MODDED["maps/huge.bsp"]
    else:
        target.parent.mkdir()
        target.write_bytes(base.read_bytes())
        gamepak.patch.apply(target, [tmp_path / "streamed.gpatch"])
        assert contents(target) == contents(modded)


def _raw_changes(root: Path, count: int, size: int) -> tuple[Path, Path]:
    """Two PAKs: `count` members of `size` bytes replaced by new noise, as many added."""
    base = {f"m{index}.bin": noise(index, size) for index in range(count // 2)}
    modded = {name: noise(100 + index, size) for index, name in enumerate(base)}
    modded.update({f"new{index}.bin": noise(200 + index, size) for index in range(count - len(base))})
    return build(root / "base.pak", base), build(root / "mod.pak", modded)


def test_blobs_over_the_budget_are_never_held_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Twelve 2 MiB members replaced or added (raw): with a 1 KiB budget, make's traced peak stays
    a fraction of their 24 MiB (measured 4.1 MiB; 32.0 MiB before, every blob held until the
    patch was written), and no member past the budget is ever read whole."""
    count, size = 12, 2 * MIB
    base, modded = _raw_changes(tmp_path / "in", count, size)
    monkeypatch.setattr(MAKE, "MEMORY_BYTES", KIB)
    monkeypatch.setattr(MAKE, "MAX_DELTA_BASE_BYTES", 0)  # no slow level-19 deltas of noise
    forbid_whole_reads(monkeypatch)
    patch = tmp_path / "p.gpatch"
    peak = peak_while(lambda: gamepak.patch.make(base, modded, patch))
    assert peak < count * size // 3, f"peak {peak / MIB:.1f} MiB"
    monkeypatch.undo()
    target = tmp_path / "target.pak"
    target.write_bytes(base.read_bytes())
    gamepak.patch.apply(target, [patch])
    assert contents(target) == contents(modded)


def test_plain_files_over_the_budget_are_never_held_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same for a folder's plain files: eight of 2 MiB replaced or added."""
    count, size = 8, 2 * MIB
    for side, seeds in (("base", range(count // 2)), ("mod", range(100, 100 + count))):
        (tmp_path / side).mkdir()
        for number, seed in enumerate(seeds):
            (tmp_path / side / f"f{number}.bin").write_bytes(noise(seed, size))
    monkeypatch.setattr(MAKE, "MEMORY_BYTES", KIB)
    monkeypatch.setattr(MAKE, "MAX_DELTA_BASE_BYTES", 0)
    real_open = open

    def no_whole_reads(path: object, mode: str = "r", *args: object, **options: object) -> object:
        handle = real_open(path, mode, *args, **options)  # type: ignore[call-overload]
        if "b" in mode and "r" in mode and str(path).startswith(str(tmp_path)):
            read = handle.read

            def bounded(size: int = -1) -> bytes:
                assert 0 <= size <= 2 * MIB // 2, f"{path}: read whole"
                return read(size)  # type: ignore[no-any-return]

            handle.read = bounded
        return handle

    monkeypatch.setattr("builtins.open", no_whole_reads)
    peak = peak_while(lambda: gamepak.patch.make(tmp_path / "base", tmp_path / "mod", tmp_path / "p.gpatch"))
    monkeypatch.undo()
    assert peak < count * size // 3, f"peak {peak / MIB:.1f} MiB"
    game = tmp_path / "game"
    import shutil

    shutil.copytree(tmp_path / "base", game)
    gamepak.patch.apply(game, [tmp_path / "p.gpatch"])
    for number in range(count):
        assert (game / f"f{number}.bin").read_bytes() == (tmp_path / "mod" / f"f{number}.bin").read_bytes()


class Written:
    """How many scratch files were written (so a test knows the folder existed)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        original = scratch.ScratchFiles.write

        def write(files: scratch.ScratchFiles, *args: object) -> str:
            path = original(files, *args)  # type: ignore[arg-type]
            self.count += 1
            return path

        monkeypatch.setattr(scratch.ScratchFiles, "write", write)


@pytest.fixture
def low_budget(monkeypatch: pytest.MonkeyPatch) -> Written:
    monkeypatch.setattr(MAKE, "MEMORY_BYTES", KIB)
    monkeypatch.setattr(MAKE, "MAX_DELTA_BASE_BYTES", 0)
    return Written(monkeypatch)


def test_the_scratch_folder_is_gone_after_a_make(tmp_path: Path, low_budget: Written) -> None:
    base, modded = _paks(tmp_path / "in")
    (tmp_path / "out").mkdir()
    gamepak.patch.make(base, modded, tmp_path / "out" / "p.gpatch")
    assert low_budget.count >= 4
    assert strays(tmp_path / "out", tmp_path / "in") == []


def test_the_scratch_folder_is_gone_when_the_output_appears_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, low_budget: Written
) -> None:
    base, modded = _paks(tmp_path / "in")
    output = tmp_path / "p.gpatch"
    compare = MAKE.differences

    def differences(*args: object) -> object:
        found = compare(*args)
        output.write_bytes(b"another program's file")  # after the check made before comparing
        return found

    monkeypatch.setattr(MAKE, "differences", differences)
    with pytest.raises(OutputExistsError):
        gamepak.patch.make(base, modded, output)
    assert low_budget.count >= 4
    assert output.read_bytes() == b"another program's file"
    assert strays(tmp_path) == []


def test_an_existing_output_is_refused_before_comparing(tmp_path: Path, low_budget: Written) -> None:
    base, modded = _paks(tmp_path / "in")
    output = tmp_path / "p.gpatch"
    output.write_bytes(b"kept")
    with pytest.raises(OutputExistsError):
        gamepak.patch.make(base, modded, output)
    assert low_budget.count == 0 and output.read_bytes() == b"kept"
    gamepak.patch.make(base, modded, output, overwrite=True)
    assert gamepak.patch.Patch.open(output).operations
    assert strays(tmp_path) == []


def test_the_scratch_folder_is_gone_when_a_member_cannot_be_read(tmp_path: Path, low_budget: Written) -> None:
    """Added zip members, the last one damaged (its CRC fails at its end): the ones before it are
    in scratch files when the read fails."""
    added = {f"a{index}.bin": noise(40 + index, 100 * KIB) for index in range(4)}
    base = build(tmp_path / "base.zip", {"keep.txt": b"kept"})
    modded = build(tmp_path / "mod.zip", {"keep.txt": b"kept", **added}, "zip")
    data = bytearray(modded.read_bytes())
    last = data.rindex(added["a3.bin"][:64])  # stored, not deflated: the member's own bytes
    data[last + 50 * KIB] ^= 1
    modded.write_bytes(bytes(data))
    with pytest.raises(GamepakError, match="a3.bin"):
        gamepak.patch.make(base, modded, tmp_path / "p.gpatch")
    assert low_budget.count == 3
    assert not (tmp_path / "p.gpatch").exists()
    assert strays(tmp_path) == []


def test_a_kill_during_make_leaves_a_scratch_folder_the_next_make_removes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_edit_crash import run_child

    base, modded = _paks(tmp_path / "in")
    out = tmp_path / "out"  # not where the packs were written (that folder was scanned already)
    out.mkdir()
    monkeypatch.setattr(MAKE, "MEMORY_BYTES", KIB)
    monkeypatch.setattr(MAKE, "MAX_DELTA_BASE_BYTES", 0)
    original = scratch.ScratchFiles.write

    def write_then_die(files: scratch.ScratchFiles, name: str, size: int, chunks: Iterable[bytes]) -> str:
        path = original(files, name, size, chunks)
        if files.count == 2:
            os.kill(os.getpid(), signal.SIGKILL)  # a kill -9 with two scratch files written
        return path

    def work() -> None:
        # In the forked child only (it ends by os._exit or the kill: nothing to undo).
        with pytest.MonkeyPatch.context() as patched:
            patched.setattr(scratch.ScratchFiles, "write", write_then_die)
            gamepak.patch.make(base, modded, out / "p.gpatch")

    pid = run_child(work, None)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    left = strays(out)
    assert len(left) == 1 and ".make." in left[0] and len(os.listdir(out / left[0])) == 2
    monkeypatch.undo()  # the next make holds everything in memory: it makes no scratch folder
    gamepak.patch.make(base, modded, out / "p.gpatch")
    assert strays(out) == []
    assert sorted(os.listdir(out)) == ["p.gpatch"]


@pytest.mark.parametrize("budget", [1 << 30, 1 << 10])
def test_blobs_that_do_not_compress_are_stored_and_the_rest_deflated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, budget: int
) -> None:
    """New random bytes (as already compressed textures and sounds are) are stored as they are:
    deflating them cost most of a make's time to save nothing; text is still deflated. Held in
    memory or streamed from the scratch folder alike, and the patch applies to the same bytes."""
    import zipfile

    monkeypatch.setattr(MAKE, "MEMORY_BYTES", budget)
    random_bytes, text = noise(7, 300 << 10), b"the same line of text\n" * 20000
    base = build(tmp_path / "base.pak", {"keep.txt": b"k"})
    modded = build(tmp_path / "mod.pak", {"keep.txt": b"k", "noise.bin": random_bytes, "text.txt": text})
    gamepak.patch.make(base, modded, tmp_path / "p.gpatch")
    with zipfile.ZipFile(tmp_path / "p.gpatch") as patch:
        methods = {
            info.file_size: info.compress_type for info in patch.infolist() if info.filename.startswith("blobs/")
        }
    assert methods == {len(random_bytes): zipfile.ZIP_STORED, len(text): zipfile.ZIP_DEFLATED}
    gamepak.patch.apply(base, [tmp_path / "p.gpatch"])
    assert contents(base) == {"keep.txt": b"k", "noise.bin": random_bytes, "text.txt": text}


def test_the_same_changes_make_the_same_patch_file_whenever_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A patch's zip entries carry zip's earliest time, not the clock's, so making it again later
    gives the same bytes (a mod's checksum stays put); SOURCE_DATE_EPOCH sets another time."""
    import zipfile

    base = build(tmp_path / "base.pak", {"a.txt": b"a" * 999, "b.txt": b"b"})
    modded = build(tmp_path / "mod.pak", {"a.txt": b"A" * 999, "c.txt": noise(3, 5000)})
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    made = []
    for number, clock in enumerate((1_700_000_000.0, 1_800_000_000.0)):
        monkeypatch.setattr(time, "time", lambda clock=clock: clock)
        gamepak.patch.make(base, modded, tmp_path / f"p{number}.gpatch")
        made.append((tmp_path / f"p{number}.gpatch").read_bytes())
    assert made[0] == made[1]
    with zipfile.ZipFile(tmp_path / "p0.gpatch") as patch:
        assert {info.date_time for info in patch.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    gamepak.patch.make(base, modded, tmp_path / "dated.gpatch")
    with zipfile.ZipFile(tmp_path / "dated.gpatch") as patch:
        assert {info.date_time for info in patch.infolist()} == {(2023, 11, 14, 22, 13, 20)}
