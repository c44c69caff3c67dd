"""The output plan of `ops.safe_tree.write_made_files` (a model's million 1x1 skins written as
PNGs) costs a few bytes a file beside the names themselves: the names are the keys when plain
(one list, not two), duplicates are found in a sorted copy instead of a set, and a fresh
destination's plan builds no set of every file. Each check stays: two names for one file, a
file where a folder goes, and every hostile name are refused before anything is written."""

from __future__ import annotations

import tracemalloc
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamepak.core.lazy import Lazy
from gamepak.errors import GamepakError, UnsafePathError
from gamepak.ops.safe_tree import _twice, write_files, write_made_files

# Bytes a file of the plan may cost beyond the names (measured: 17; 77 before, when the names
# were copied into a second list and two sets of them were made).
PLAN_BYTES_PER_FILE = 32


def test_the_plan_costs_a_few_bytes_a_file(tmp_path: Path) -> None:
    count = 20_000
    names = [f"k/skin_0_{number}.png" for number in range(count)]  # held by the caller
    tracemalloc.start()
    try:
        written = write_made_files(tmp_path / "out", Lazy(count, lambda index: (names[index], b"x")))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(written) == count and (tmp_path / "out" / "k" / f"skin_0_{count - 1}.png").read_bytes() == b"x"
    assert peak / count < PLAN_BYTES_PER_FILE, peak / count


@settings(max_examples=200)
@given(st.lists(st.sampled_from(["a", "b", "c/d", "c/e", "f.png", "g/h/i"]), max_size=12))
def test_twice_finds_exactly_the_names_listed_more_than_once(keys: list[str]) -> None:
    assert _twice(keys) == sorted(key for key, number in Counter(keys).items() if number > 1)


def test_two_names_for_one_file_are_refused_plain_or_not(tmp_path: Path) -> None:
    for files in ([("d.png", b"1"), ("e.png", b"2"), ("d.png", b"3")], [("d.png", b"1"), ("./d.png", b"2")]):
        with pytest.raises(GamepakError, match="two outputs would be written as d.png$"):
            write_files(tmp_path / "out", files)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("fresh", [True, False])
def test_a_file_where_a_folder_goes_is_refused(tmp_path: Path, fresh: bool) -> None:
    out = tmp_path / "out"
    if not fresh:
        out.mkdir()
    for files in ([("a", b"1"), ("a/b.png", b"2")], [("a/b.png", b"2"), ("a", b"1")], [("x/a", b""), ("x/a/b/c", b"")]):
        with pytest.raises(GamepakError, match="in the way"):
            write_files(out, files)
    assert not out.exists() or list(out.iterdir()) == []
    with pytest.raises(UnsafePathError):
        write_files(out, [("fine.png", b"x"), ("../evil.png", b"x")])
    assert not (tmp_path / "evil.png").exists()
