"""The output plan of `ops.made_files.write_made_files` (a model's million 1x1 skins written as
PNGs) costs a few bytes a file beside the names themselves: the names are kept packed (one
blob and an end offset each, not a str each), duplicates are found by bucketed hashes instead
of a set or a sorted copy of the names, and a fresh destination's plan builds no set of every
file. Each check stays: two names for one file, a file where a folder goes, and every hostile
name are refused before anything is written."""

from __future__ import annotations

import tracemalloc
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamepak.core.lazy import Lazy
from gamepak.errors import GamepakError, UnsafePathError
from gamepak.ops import made_files, safe_tree
from gamepak.ops.made_files import _made_keys, _twice, write_files, write_made_files

# Bytes each added file may cost, its name made when read and packed (18 bytes here)
# included. Measured: 31 (the packed name, its end offset, the plan's mode slot); 89 and up
# when every name was held as a str in a list, with a sorted copy to find duplicates.
PLAN_BYTES_PER_FILE = 40


def test_the_plan_costs_a_few_bytes_a_file(tmp_path: Path) -> None:
    def file(index: int) -> tuple[str, bytes]:
        return f"k/skin_0_{index:05}.png", b"x"  # made when read, as a model's skins are

    peaks = []
    for count in (10_000, 30_000):
        tracemalloc.start()
        try:
            written = write_made_files(tmp_path / f"out{count}", Lazy(count, file))
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        last = tmp_path / f"out{count}" / "k" / f"skin_0_{count - 1:05}.png"
        assert len(written) == count and last.read_bytes() == b"x" and written[-1] == str(last)
    # Each file's cost apart from the fixed one (a batch of names being checked, ~100 kB).
    assert (peaks[1] - peaks[0]) / 20_000 < PLAN_BYTES_PER_FILE, peaks


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


NAMES = st.sampled_from(["a", "b", "c/d", "c/e", "f.png", "g/h/i", "./a", "c\\d", "\u00e9.png", "\udcff.png"])


@settings(max_examples=200)
@given(st.lists(NAMES, max_size=12), st.booleans())
def test_made_keys_find_exactly_the_keys_listed_more_than_once(names: list[str], collide: bool) -> None:
    """Found by hash, checked by key: with every key hashed alike (`collide`, a module global
    over the built-in), distinct keys are still told apart and only true repeats reported."""
    if collide:
        setattr(made_files, "hash", lambda key: 7)  # noqa: B010 - a name the module does not define
    try:
        keys, plain, twice = _made_keys([(name, b"") for name in names])
    finally:
        if collide:
            delattr(made_files, "hash")
    expected = [safe_tree.plain_key(name) for name in names]
    assert list(keys) == expected and plain == all(key == name for key, name in zip(expected, names, strict=True))
    assert twice == sorted(key for key, number in Counter(expected).items() if number > 1)


def test_many_keys_fill_many_buckets_and_repeats_are_still_found() -> None:
    names = [f"s/{number}.png" for number in range(20_000)] + ["s/77.png", "s/19999.png"]
    keys, plain, twice = _made_keys([(name, b"") for name in names])
    assert plain and len(keys) == len(names) and keys[-1] == "s/19999.png"
    assert twice == ["s/19999.png", "s/77.png"]


def test_two_made_files_for_one_path_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    files = Lazy(5_000, lambda index: (f"d/{index % 4_999}.png", b"x"))
    with pytest.raises(GamepakError, match=r"two outputs would be written as d/0\.png$"):
        write_made_files(tmp_path / "out", files)
    assert not (tmp_path / "out").exists()
