"""kill -9 at random moments during edits: the pack must read as the old one or the new one.

Each trial forks a child that edits a small pack with every write, copy, truncate and fsync
slowed by a random pause (so the kill lands between them, not only before or after), and kills
it with SIGKILL after a random delay.
"""

from __future__ import annotations

import os
import random
import signal
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

import gamepak

from conftest import in_process_cli

TRIALS = 20
SLOWED = ("pwrite", "write", "fsync", "ftruncate", "copy_file_range", "rename", "replace", "link")


def snapshot(path: Path, format_name: str) -> list[tuple[str, bytes]]:
    with gamepak.open(path, format_name) as archive:
        return [(entry.name, archive.read(entry)) for entry in archive.infolist()]


def run_child(edit: Callable[[], None], seed: int) -> int:
    """Fork a child that runs `edit` with slowed system calls; returns its pid."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fork() in a process with threads: the child only edits
        pid = os.fork()
    if pid:
        return pid
    try:
        pause = random.Random(seed)
        for name in SLOWED:
            original = getattr(os, name, None)
            if original is not None:

                def slowed(*args: object, _original: Callable[..., object] = original) -> object:
                    time.sleep(pause.uniform(0, 0.002))
                    return _original(*args)

                setattr(os, name, slowed)
        edit()
    except BaseException:
        os._exit(1)
    os._exit(0)


def trial_kills(
    tmp_path: Path,
    format_name: str,
    pack: Path,
    edit: Callable[[], None],
    old: list[tuple[str, bytes]],
    trials: int = TRIALS,
    in_place: bool = True,
) -> tuple[int, int]:
    """Run killed edits from the old pack; returns how many ended old and new."""
    original = pack.read_bytes()
    start = time.perf_counter()
    pid = run_child(edit, 0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    duration = time.perf_counter() - start
    new = snapshot(pack, format_name)
    assert new != old
    outcomes = {"old": 0, "new": 0}
    chooser = random.Random(1234)
    for trial in range(trials):
        pack.write_bytes(original)
        pid = run_child(edit, trial + 1)
        time.sleep(chooser.uniform(0, duration * 1.2))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        state = snapshot(pack, format_name)
        assert state in (old, new), f"trial {trial}: the pack reads as neither the old nor the new one"
        outcomes["old" if state == old else "new"] += 1
        with gamepak.open(pack, format_name) as archive:
            assert archive.verify() == []
        # The next command runs; an in-place edit leaves nothing but the pack in its folder.
        assert in_process_cli("ls", str(pack))[0] == 0
        if in_place:
            assert sorted(os.listdir(tmp_path)) == [pack.name]
        else:
            for leftover in set(os.listdir(tmp_path)) - {pack.name}:
                assert leftover.startswith(f".{pack.name}.gamepak-")  # the rebuild's temporary file
                os.unlink(tmp_path / leftover)
    return outcomes["old"], outcomes["new"]


@pytest.mark.parametrize("directory", ["end", "start"])
def test_kill_during_in_place_pak_edit(tmp_path: Path, directory: str) -> None:
    pack = tmp_path / "crash.pak"
    with gamepak.create(pack, directory=directory) as writer:
        for index in range(6):
            writer.add(f"maps/m{index}.bsp", bytes([index]) * (3000 + index))
    old = snapshot(pack, "pak")

    def edit() -> None:
        with gamepak.edit(pack) as editor:
            editor.replace("maps/m2.bsp", b"R" * 70000)
            editor.add("maps/new.bsp", b"N" * 50000)
            editor.rename("maps/m4.bsp", "maps/four.bsp")
        assert editor.result.method == "in place"

    old_count, new_count = trial_kills(tmp_path, "pak", pack, edit, old)
    assert old_count + new_count == TRIALS


def test_kill_during_in_place_jpk_edit(tmp_path: Path) -> None:
    pack = tmp_path / "crash.jpk"
    with gamepak.create(pack) as writer:
        for index in range(6):
            writer.add(f"car{index}.joe", bytes([index + 1]) * (20 + index))  # small first members move
    old = snapshot(pack, "jpk")

    def edit() -> None:
        with gamepak.edit(pack) as editor:
            editor.add("new1.joe", b"N" * 40000)
            editor.add("new2.joe", b"M" * 30000)
            editor.replace("car3.joe", b"R" * 60000)
        assert editor.result.method == "in place"

    old_count, new_count = trial_kills(tmp_path, "jpk", pack, edit, old)
    assert old_count + new_count == TRIALS


@pytest.mark.parametrize("format_name", ["pak", "jpk"])
def test_interrupted_edit_leaves_no_growth_behind(tmp_path: Path, format_name: str) -> None:
    """Bytes an interrupted append left past the pack's end are reused by the next edit."""
    pack = tmp_path / f"grow.{format_name}"
    with gamepak.create(pack) as writer:
        writer.add("a.txt", b"a" * 100)
    size = pack.stat().st_size
    with open(pack, "ab") as handle:
        handle.write(b"\xff" * 5000)  # what a killed append leaves
    with gamepak.edit(pack) as editor:
        editor.add("b.txt", b"b")
    assert pack.stat().st_size < size + 200
    assert snapshot(pack, format_name) == [("a.txt", b"a" * 100), ("b.txt", b"b")]


def test_kill_during_rebuild(tmp_path: Path) -> None:
    """Compressed RFG packs are rebuilt into a temporary file renamed over the pack."""
    pack = tmp_path / "crash.vpp_pc"
    with gamepak.create(pack, flags=3, level=1) as writer:
        for index in range(8):
            writer.add(f"t{index}.xtbl", b"<row>%d</row>" % index * 200)
    old = snapshot(pack, "vpp")

    def edit() -> None:
        with gamepak.edit(pack) as editor:
            editor.replace("t5.xtbl", b"changed")
            editor.add("new.xtbl", b"N" * 3000)

    old_count, new_count = trial_kills(tmp_path, "vpp", pack, edit, old, trials=12, in_place=False)
    assert old_count + new_count == 12
