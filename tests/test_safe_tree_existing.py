"""Writing a planned tree into folders that exist already (`ops.safe_tree`): the files of each
existing folder are written into one staging folder inside it and moved out once every file is
written, so nothing is held per file (a temporary name and a tuple per file held ~190 bytes a
file before); the plan of an existing destination keeps no set of every file unless a file is
in the way of a folder, and says then what it said with the set."""

from __future__ import annotations

import os
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamepak.core.lazy import Lazy
from gamepak.errors import GamepakError
from gamepak.ops import safe_tree
from gamepak.ops.made_files import write_files, write_made_files
from gamepak.ops.safe_tree import Plan

# Bytes each added file may cost (as tests/test_safe_tree_plan.py allows a new folder's plan):
# its packed name and end offset, the plan's mode slot. Measured: 31, as into a new folder
# (370 before: each file's temporary name and tuple, and the plan's set of every file).
PLAN_BYTES_PER_FILE = 40


def _tree(folder: Path) -> dict[str, bytes | None]:
    """Every path under `folder` and its bytes (None for a folder)."""
    return {str(path.relative_to(folder)): None if path.is_dir() else path.read_bytes() for path in folder.rglob("*")}


def test_the_plan_into_folders_that_exist_costs_a_few_bytes_a_file(tmp_path: Path) -> None:
    def file(index: int) -> tuple[str, bytes]:
        # Half into the destination itself, half into a folder inside it: both exist.
        return f"{'k/' if index % 2 else ''}skin_0_{index:05}.png", b"x"

    peaks = []
    for count in (6_000, 18_000):
        out = tmp_path / f"out{count}"
        (out / "k").mkdir(parents=True)
        (out / "k" / "theirs.txt").write_bytes(b"kept")
        tracemalloc.start()
        try:
            written = write_made_files(out, Lazy(count, file))
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        last = out / "k" / f"skin_0_{count - 1:05}.png"
        assert len(written) == count and last.read_bytes() == b"x" and written[-1] == str(last)
        assert len(os.listdir(out)) == count // 2 + 1 and (out / "k" / "theirs.txt").read_bytes() == b"kept"
    assert (peaks[1] - peaks[0]) / 12_000 < PLAN_BYTES_PER_FILE, peaks


def test_files_appear_in_an_existing_folder_only_once_all_are_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "d").mkdir(parents=True)
    (out / "theirs.txt").write_bytes(b"kept")
    (out / "d" / "old.png").write_bytes(b"old")
    seen: list[list[str]] = []

    def later(data: bytes) -> Callable[[], bytes]:
        def made() -> bytes:
            # While writing: no file in place yet, the old one unchanged, one staging folder each.
            seen.append(sorted(os.listdir(out)) + sorted(os.listdir(out / "d")))
            assert (out / "d" / "old.png").read_bytes() == b"old"
            return data

        return made

    files: list[tuple[str, bytes | Callable[[], bytes]]] = [
        ("a.png", later(b"a")),
        ("d/old.png", later(b"new")),
        ("d/b.png", later(b"b")),
        ("e/c.png", b"c"),
    ]
    written = write_files(out, files, overwrite=True)
    assert written == [str(out / name) for name in ("a.png", "d/old.png", "d/b.png", "e/c.png")]
    assert _tree(out) == {
        "theirs.txt": b"kept",
        "a.png": b"a",
        "d": None,
        "d/old.png": b"new",
        "d/b.png": b"b",
        "e": None,
        "e/c.png": b"c",
    }
    for listing in seen:
        assert "a.png" not in listing and "b.png" not in listing and "c.png" not in listing
        assert len([name for name in listing if name.startswith(".new-files.gamepak-")]) <= 2
    assert any(name.startswith(".new-files.gamepak-") for name in seen[-1])


def test_a_failure_leaves_existing_folders_as_they_were(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "d").mkdir(parents=True)
    (out / "d" / "old.png").write_bytes(b"old")
    before = _tree(out)

    def fail() -> bytes:
        raise OSError(28, "No space left on device")

    files: list[tuple[str, bytes | Callable[[], bytes]]] = [
        ("a.png", b"a"),
        ("d/old.png", b"new"),
        ("d/b.png", b"b"),
        ("e/c.png", b"c"),
        ("z.png", fail),
    ]
    with pytest.raises(GamepakError, match="No space left on device"):
        write_files(out, files, overwrite=True)
    assert _tree(out) == before


def test_every_staged_file_is_moved_even_when_a_listing_misses_some(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """POSIX lets a folder's listing skip files renamed meanwhile: the folder is read again
    until it can be removed."""
    real = os.scandir
    calls = []

    class FirstOnly:
        def __init__(self, fd: int) -> None:
            self.inner = real(fd)

        def __enter__(self) -> Iterator[os.DirEntry[str]]:
            calls.append(1)
            return iter(list(self.inner)[:1])

        def __exit__(self, *exc: object) -> None:
            self.inner.close()

    monkeypatch.setattr(safe_tree.os, "scandir", FirstOnly)
    out = tmp_path / "out"
    out.mkdir()
    write_files(out, [(f"f{index}.png", b"%d" % index) for index in range(5)])
    monkeypatch.undo()
    assert _tree(out) == {f"f{index}.png": b"%d" % index for index in range(5)}
    assert len(calls) == 5


def _plan_with_the_set(root: str, keys: list[str], overwrite: bool) -> Plan:
    """The plan made member by member with the set of every file, as before."""
    plan = Plan.__new__(Plan)
    plan.root, plan.overwrite, plan.root_exists = root, overwrite, True
    plan.folders = {"": 0}
    plan.modes = []
    plan._targets(keys, keys, set(keys))
    return plan


def _outcome(make: Callable[[], Plan]) -> tuple[object, ...]:
    try:
        plan = make()
    except (GamepakError, OSError) as exc:
        return type(exc).__name__, str(exc)
    return plan.folders, plan.modes


PATHS = st.sampled_from(["a", "a/b", "a/b/c", "b", "b/x", "c/d", "d", "e/f/g", "e/f", "x", "x/y", "k/l"])


@settings(max_examples=150, deadline=None)
@given(st.lists(PATHS, max_size=8, unique=True), st.booleans())
def test_the_plan_without_the_set_is_the_plan_with_it(keys: list[str], overwrite: bool) -> None:
    """The same folders and modes, or the same error (the first of several problems
    included), as the member-by-member plan with the set of every file. What exists: files
    `x` and `d`, folders `b` and `e`, and a link `k`."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "x").write_bytes(b"")
        (root / "d").write_bytes(b"")
        (root / "b").mkdir()
        (root / "e").mkdir()
        (root / "k").symlink_to(root / "e")
        expected = _outcome(lambda: _plan_with_the_set(str(root), keys, overwrite))
        assert _outcome(lambda: Plan(str(root), keys, keys, overwrite)) == expected
