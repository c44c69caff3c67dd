"""kill -9 during `texture import`: the target reads as the old or the new one, some kill is
proven to have landed mid-write (a temporary beside the target, or bytes appended in place that
the old header does not yet refer to), and the next import that may write removes what the
dead one left.

The child process is `test_edit_crash.run_child`: every write, fsync, rename ... slowed by a
random pause so that the kills land between them.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image
from quake_bytes import qpic_bytes, wad_bytes
from test_cli_texture import _write_peg
from test_edit_crash import run_child

import gamepak
from gamepak.ops import quake_textures, textures

from conftest import sample

TRIALS = 14


def _temporaries(folder: Path) -> list[str]:
    return sorted(name for name in os.listdir(folder) if ".gamepak-" in name and name.endswith(".tmp"))


def _stat(path: Path) -> tuple[int, int, int]:
    status = os.stat(path)
    return status.st_ino, status.st_size, status.st_mtime_ns


def _kill_trials(
    folder: Path,
    files: list[Path],
    read: Callable[[], object],
    run: Callable[[], object],
    next_command: Callable[[], object],
) -> dict[str, int]:
    """Run `run` once to the end (the new state), then TRIALS times killed at a random moment
    from the old files; each time the state must be the old or the new one, and after
    `next_command` no temporary may be left. Returns counts of old, new and proven mid-write."""
    originals = [path.read_bytes() for path in files]
    old = read()
    start = time.perf_counter()
    pid = run_child(run, 0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    duration = time.perf_counter() - start
    new = read()
    finals = [path.read_bytes() for path in files]
    assert new != old
    counts = {"old": 0, "new": 0, "mid-write": 0}
    chooser = random.Random(41)
    for trial in range(TRIALS):
        for path, data in zip(files, originals, strict=True):
            path.write_bytes(data)
        stats = [_stat(path) for path in files]
        pid = run_child(run, trial + 1)
        if trial % 2:
            # Half the kills wait for the writing to begin (a temporary appears, or a file
            # changes), then land a few slowed system calls later: the window a kill must
            # not tear is short next to the decoding and encoding before it.
            deadline = time.perf_counter() + 2 * duration + 1
            while time.perf_counter() < deadline and not (
                _temporaries(folder) or [_stat(path) for path in files] != stats
            ):
                time.sleep(0.0002)
            time.sleep(chooser.uniform(0, 0.004))
        else:
            time.sleep(chooser.uniform(0.05, 0.95) * duration)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        state = read()
        assert state in (old, new), f"trial {trial}: neither the old nor the new state"
        counts["old" if state == old else "new"] += 1
        now = [path.read_bytes() for path in files]
        # The kill landed while writing: a temporary was being filled, or bytes were appended
        # in place past what the (old) header refers to.
        if _temporaries(folder) or (now not in (originals, finals)):
            counts["mid-write"] += 1
        pid = run_child(next_command, 0)  # the next command, in a process of its own (another PID)
        os.waitpid(pid, 0)
        assert _temporaries(folder) == [], f"trial {trial}: a dead import's temporary stayed"
        assert read() == state  # the next command read it as it was (it had nothing to import)
    return counts


def _nothing(tmp_path: Path) -> Path:
    """An empty folder: the next import from it may write, so it clears what a dead one left,
    and changes nothing (a dry run would clear nothing: it is read-only)."""
    folder = tmp_path / "nothing"
    folder.mkdir(exist_ok=True)
    return folder


def test_kill_during_a_loose_lmp_import(tmp_path: Path) -> None:
    """A loose one-image file is written to a temporary beside it and renamed over it."""
    game = tmp_path / "game"
    game.mkdir()
    path = game / "big.lmp"
    path.write_bytes(qpic_bytes(320, 200, bytes(range(200)) * 320))
    out = tmp_path / "out"
    quake_textures.export_textures(path, out)
    rng = np.random.default_rng(5)
    Image.fromarray(rng.integers(0, 224, (200, 320, 3), dtype=np.uint8)).convert("RGBA").save(out / "big.png")
    counts = _kill_trials(
        game,
        [path],
        path.read_bytes,
        lambda: quake_textures.import_textures(path, out),
        lambda: quake_textures.import_textures(path, _nothing(tmp_path)),
    )
    assert counts["old"] + counts["new"] == TRIALS and counts["mid-write"] >= 1, counts


def test_kill_during_a_quake_pak_import_in_place(tmp_path: Path) -> None:
    """A PAK is edited in place (append, then one switch-over write)."""
    game = tmp_path / "game"
    game.mkdir()
    pak = game / "pak0.pak"
    with gamepak.create(pak) as writer:
        writer.add("gfx/box.lmp", qpic_bytes(64, 64, bytes(range(64)) * 64))
        for index in range(4):
            writer.add(f"sound/s{index}.wav", bytes([index]) * 30000)
    out = tmp_path / "out"
    quake_textures.export_textures(pak, out)
    rng = np.random.default_rng(1)
    Image.fromarray(rng.integers(0, 224, (128, 128, 3), dtype=np.uint8)).convert("RGBA").save(out / "gfx" / "box.png")

    counts = _kill_trials(
        game,
        [pak],
        _members(pak),
        lambda: quake_textures.import_textures(pak, out),
        lambda: quake_textures.import_textures(pak, _nothing(tmp_path)),
    )
    assert counts["old"] + counts["new"] == TRIALS and counts["mid-write"] >= 1, counts


def _members(path: Path) -> Callable[[], object]:
    def read() -> object:
        with gamepak.open(path) as archive:
            return [(entry.name, archive.read(entry)) for entry in archive.infolist()]

    return read


def test_kill_during_a_loose_wad_import(tmp_path: Path) -> None:
    """A loose WAD is a pack: edited in place, as a PAK."""
    game = tmp_path / "game"
    game.mkdir()
    path = game / "gfx.wad"
    lumps = [(f"PIC{index}".encode(), 0x42, qpic_bytes(128, 128, bytes([index]) * 128 * 128)) for index in range(6)]
    path.write_bytes(wad_bytes(lumps))
    out = tmp_path / "out"
    quake_textures.export_textures(path, out)
    rng = np.random.default_rng(2)
    for index in range(6):
        picture = rng.integers(0, 224, (128, 128, 3), dtype=np.uint8)
        Image.fromarray(picture).convert("RGBA").save(out / f"PIC{index}.png")
    counts = _kill_trials(
        game,
        [path],
        _members(path),
        lambda: quake_textures.import_textures(path, out),
        lambda: quake_textures.import_textures(path, _nothing(tmp_path)),
    )
    assert counts["old"] + counts["new"] == TRIALS and counts["mid-write"] >= 1, counts


def test_kill_during_an_rfg_pack_import(tmp_path: Path) -> None:
    """A compressed .str2_pc is rebuilt into a temporary renamed over it."""
    game = tmp_path / "game"
    game.mkdir()
    pack = game / "xray_effect.str2_pc"
    shutil.copyfile(sample("vpp/xray_effect.str2_pc"), pack)
    out = tmp_path / "out"
    textures.export_textures(pack, out)
    rng = np.random.default_rng(3)
    for png in (out / "xray_effect.cpeg_pc").glob("*.png"):
        Image.fromarray(rng.integers(0, 256, (32, 32, 4), dtype=np.uint8), "RGBA").save(png)

    def state() -> object:
        from gamepak.formats.rfg.peg.sources import iter_pegs

        return [(path, [found.mip_data(t.name) for t in found.textures]) for path, found in iter_pegs(pack)]

    counts = _kill_trials(
        game,
        [pack],
        state,
        lambda: textures.import_textures(pack, out),
        lambda: textures.import_textures(pack, _nothing(tmp_path)),
    )
    assert counts["old"] + counts["new"] == TRIALS and counts["mid-write"] >= 1, counts


def test_kill_during_a_loose_peg_import(tmp_path: Path) -> None:
    """A loose pair whose pixels change at the same size: only the GPU file is written (the CPU
    file keeps its bytes), so the pair switches with one rename."""
    game = tmp_path / "game"
    game.mkdir()
    target = _write_peg(game)
    out = tmp_path / "out"
    textures.export_textures(target, out)
    rng = np.random.default_rng(4)
    Image.fromarray(rng.integers(0, 256, (16, 16, 4), dtype=np.uint8), "RGBA").save(out / "wall.png")
    Image.fromarray(rng.integers(0, 256, (8, 8, 4), dtype=np.uint8), "RGBA").save(out / "glow.png")
    gpu = game / "t.gpeg_pc"

    def state() -> object:
        from gamepak.formats.rfg.peg import Peg

        found = Peg.open(target)
        return [found.mip_data(t.name) for t in found.textures]

    counts = _kill_trials(
        game,
        [target, gpu],
        state,
        lambda: textures.import_textures(target, out),
        lambda: textures.import_textures(target, _nothing(tmp_path)),
    )
    assert counts["old"] + counts["new"] == TRIALS and counts["mid-write"] >= 1, counts
