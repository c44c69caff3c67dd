"""Dry runs are read-only (issue 48, item 3): `add`, `rm`, `mv`, `update` and `compact` with
`--dry-run` take no edit lock and clear no stale temporaries, as `ls` does neither; the next
command that edits still does both. `gamepak.edit(..., plan_only=True)` is the editor they use."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import gamepak
from gamepak.errors import GamepakError

from conftest import in_process_cli, pack_members, write_pack

# Holds the edit lock of the pack named by argv[1] until its stdin closes.
HOLDER = """
import sys, gamepak
editor = gamepak.edit(sys.argv[1])
print("locked", flush=True)
sys.stdin.read()
editor.abort()
"""


@pytest.fixture
def locked_pack(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """(a PAK another process is editing, a stale temporary a killed run left beside it)."""
    pack = write_pack(tmp_path / "pack.pak", {"docs/a.txt": b"a", "docs/b.txt": b"b"})
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(pack)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        yield pack, stale_temporary(tmp_path)  # left after the holder's editor cleared the folder
    finally:
        holder.communicate("", timeout=60)


def stale_temporary(folder: Path) -> Path:
    """A temporary of `pack.pak` that a killed gamepak left in `folder`."""
    import gamepak.core.atomic

    gamepak.core.atomic._scanned.clear()  # as in a new process: `folder` not scanned yet
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = folder / f".pack.pak.gamepak-{int(dead.stdout)}-0.tmp"
    stale.write_bytes(b"half a pack")
    return stale


@pytest.fixture(autouse=True)
def scans_of_this_test(monkeypatch: pytest.MonkeyPatch) -> None:
    import gamepak.core.atomic

    monkeypatch.setattr(gamepak.core.atomic, "_scanned", {})  # the process's own record left as it was


def dry_runs(pack: Path, work: Path) -> list[list[str]]:
    new = work / "new.txt"
    new.write_bytes(b"new")
    folder = work / "extracted"
    folder.mkdir()
    (folder / "docs").mkdir()
    (folder / "docs" / "a.txt").write_bytes(b"changed")
    return [
        ["add", str(pack), str(new), "--dry-run"],
        ["rm", str(pack), "docs/a.txt", "--dry-run"],
        ["mv", str(pack), "docs/a.txt", "docs/c.txt", "--dry-run"],
        ["update", str(pack), str(folder), "--delete", "--dry-run"],
        ["compact", str(pack), "--dry-run"],
    ]


def test_a_dry_run_neither_waits_for_the_lock_nor_clears_temporaries(
    locked_pack: tuple[Path, Path], tmp_path: Path
) -> None:
    pack, stale = locked_pack
    before = pack.read_bytes()
    work = tmp_path / "work"
    work.mkdir()
    for command in dry_runs(pack, work):
        code, out, err = in_process_cli(*command)
        assert (code, err) == (0, ""), command
        assert "dry run" in out and "nothing written" in out
        assert stale.exists(), command
    assert pack.read_bytes() == before


def test_an_edit_still_refuses_under_the_lock_and_then_clears_temporaries(
    locked_pack: tuple[Path, Path], tmp_path: Path
) -> None:
    pack, stale = locked_pack
    code, _, err = in_process_cli("rm", str(pack), "docs/a.txt")
    assert code == 1 and err == f"gamepak: error: {pack}: another gamepak process is editing it\n"
    # An editor that may commit clears them first, then asks for the lock (as before).
    assert not stale.exists()


def test_the_next_edit_clears_what_a_dry_run_left(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack.pak", {"docs/a.txt": b"a"})
    stale = stale_temporary(tmp_path)
    assert in_process_cli("rm", str(pack), "docs/a.txt", "--dry-run")[0] == 0
    assert stale.exists()
    code, out, err = in_process_cli("mv", str(pack), "docs/a.txt", "docs/b.txt")
    assert (code, err) == (0, "") and "1 renamed" in out
    assert not stale.exists()
    assert pack_members(pack) == {"docs/b.txt": b"a"}


def test_a_plan_only_editor_refuses_to_commit(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack.pak", {"docs/a.txt": b"a"})
    before = pack.read_bytes()
    editor = gamepak.edit(pack, plan_only=True)
    editor.add("docs/b.txt", b"b")
    assert editor.plan() == ["add docs/b.txt (1 bytes)"]
    with pytest.raises(GamepakError, match=r"pack\.pak: this editor only plans \(a dry run\) and cannot commit"):
        editor.commit()
    with pytest.raises(GamepakError, match="the editor is closed"):
        editor.add("docs/c.txt", b"c")  # the refused commit closed it, as abort() would
    with pytest.raises(GamepakError, match="only plans"), gamepak.edit(pack, plan_only=True) as planned:
        planned.remove("docs/a.txt")
    assert pack.read_bytes() == before
    with gamepak.edit(pack) as editor:  # nothing held: an editor that may commit opens at once
        editor.add("docs/b.txt", b"b")
    assert pack_members(pack) == {"docs/a.txt": b"a", "docs/b.txt": b"b"}


@pytest.mark.parametrize(
    "verb",
    [["rm", "b.txt"], ["mv", "b.txt", "c.txt"], ["add", "NEW", "--name", "n.txt"]],
    ids=["rm", "mv", "add"],
)
def test_a_dry_run_refuses_a_name_the_rebuild_would_refuse(tmp_path: Path, verb: list[str]) -> None:
    """A packfile is rebuilt whole: a member stored as `sub/a.txt` (a '/' its writer refuses,
    another tool wrote it) stops the real edit of any other member, and so its dry run
    (`Editor.check`), with the same line."""
    pack = write_pack(tmp_path / "p.vpp_pc", {"sub_a.txt": b"a", "b.txt": b"b"})
    pack.write_bytes(pack.read_bytes().replace(b"sub_a.txt", b"sub/a.txt"))
    (tmp_path / "new.txt").write_bytes(b"new")
    command = [verb[0], str(pack), *[str(tmp_path / "new.txt") if word == "NEW" else word for word in verb[1:]]]
    before = pack.read_bytes()
    real = in_process_cli(*command)
    assert real[0] == 1 and "names hold no folders" in real[2], real
    dry = in_process_cli(*command, "--dry-run")
    assert (dry[0], dry[2]) == (real[0], real[2])
    assert pack.read_bytes() == before
