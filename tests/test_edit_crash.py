"""kill -9 during edits: the pack must read as the old one or the new one.

Each trial forks a child that edits a small pack and stops itself just before one of its write,
copy, truncate, fsync or rename calls (`run_child`: the call is traced, not guessed from a random
delay), and kills it there with SIGKILL; the trials' calls spread from the edit's first to its
last, so kills land before, between and after its writes, and some leave the new pack.
"""

from __future__ import annotations

import os
import signal
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

import gamepak

from conftest import in_process_cli

TRIALS = 20
SLOWED = ("pwrite", "write", "sendfile", "fsync", "ftruncate", "copy_file_range", "rename", "replace", "link")


def snapshot(path: Path, format_name: str) -> list[tuple[str, bytes]]:
    with gamepak.open(path, format_name) as archive:
        return [(entry.name, archive.read(entry)) for entry in archive.infolist()]


def run_child(edit: Callable[[], object], stop_at: int | None, report: int | None = None) -> int:
    """Fork a child that runs `edit`, counting its system calls that change files (`SLOWED`);
    returns its pid. With `stop_at`, the child stops itself (SIGSTOP) just before its
    `stop_at`-th such call, having written to `report` which call that is ("N name offset"), so
    the kill that follows lands exactly there: between two writes of the edit, not before or
    after it by luck. Without, it writes its number of calls when the edit ends."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fork() in a process with threads: the child only edits
        pid = os.fork()
    if pid:
        return pid
    try:
        calls = [0]
        write = os.write  # the real one: the reports must not count themselves
        # Only this child stops itself: a process it forks (the extractor's second worker) has
        # the traced calls too, and stopping there would leave this child waiting on it forever.
        me = os.getpid()

        for name in SLOWED:
            original = getattr(os, name, None)
            if original is not None:

                def traced(*args: object, _original: Callable[..., object] = original, _name: str = name) -> object:
                    calls[0] += 1
                    if calls[0] == stop_at and os.getpid() == me:
                        offset = args[2] if _name == "pwrite" else ""
                        if report is not None:
                            write(report, f"{calls[0]} {_name} {offset}\n".encode())
                        os.kill(os.getpid(), signal.SIGSTOP)
                    return _original(*args)

                setattr(os, name, traced)
                # The library asks `os.supports_dir_fd` (and kin) what a function can do: the
                # traced one can do the same.
                for support in ("supports_dir_fd", "supports_fd", "supports_follow_symlinks"):
                    supported = getattr(os, support, None)
                    if isinstance(supported, set) and original in supported:
                        supported.add(traced)
        edit()
        if stop_at is None and report is not None:
            write(report, f"{calls[0]}\n".encode())
    except BaseException:
        os._exit(1)
    os._exit(0)


def kill_at(work: Callable[[], None], stop_at: int) -> str | None:
    """Run `work` in a child killed (SIGKILL) just before its `stop_at`-th file-changing call;
    where it landed ("N name offset"), or None when the work ended before that call."""
    read_end, write_end = os.pipe()
    try:
        pid = run_child(work, stop_at, write_end)
        _, status = os.waitpid(pid, os.WUNTRACED)
        if not os.WIFSTOPPED(status):
            return None
        landed = _report(read_end)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return landed
    finally:
        os.close(read_end)
        os.close(write_end)


def _report(read_end: int) -> str:
    import select

    data = b""
    while not data.endswith(b"\n"):
        if not select.select([read_end], [], [], 30)[0]:
            raise AssertionError(f"the child said nothing of where it stopped ({data!r} so far)")
        chunk = os.read(read_end, 256)
        if not chunk:
            break
        data += chunk
    return data.decode().strip()


def trial_kills(
    tmp_path: Path,
    format_name: str,
    pack: Path,
    edit: Callable[[], None],
    old: list[tuple[str, bytes]],
    trials: int = TRIALS,
    in_place: bool = True,
) -> tuple[int, int]:
    """Run edits from the old pack killed at system calls spread over the whole edit, from
    before its first write to before its last call (traced: each kill lands where the child
    stopped itself); returns how many ended old and new."""
    original = pack.read_bytes()
    read_end, write_end = os.pipe()
    try:
        pid = run_child(edit, None, write_end)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        total = int(_report(read_end))
        assert total >= 3, f"the edit made {total} file-changing calls"
        new = snapshot(pack, format_name)
        assert new != old
        outcomes = {"old": 0, "new": 0}
        landed = []
        for trial in range(trials):
            pack.write_bytes(original)
            stop_at = 1 + round(trial * (total - 1) / max(1, trials - 1))  # the first call .. the last
            pid = run_child(edit, stop_at, write_end)
            _, status = os.waitpid(pid, os.WUNTRACED)
            assert os.WIFSTOPPED(status), f"trial {trial}: the edit ended before its call {stop_at} of {total}"
            landed.append(_report(read_end))
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            state = snapshot(pack, format_name)
            assert state in (old, new), f"trial {trial} (killed at {landed[-1]}): the pack reads as neither"
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
    finally:
        os.close(read_end)
        os.close(write_end)
    # Traced: the kills landed before the edit's first call, before its last (after every write
    # but one: mid-write), and at calls between; the uncut run left the new pack.
    calls = {int(line.split()[0]) for line in landed}
    assert {1, total} <= calls and len(calls) >= min(trials, total) // 2, landed
    assert outcomes["old"], outcomes
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
