"""A member asked for twice is extracted once (as `tarfile` and `zipfile` do), in every format,
from the library and the CLI alike: a member is known by its index, not by the `Entry` object a
lookup happens to return (a PAK's `getinfo` makes a new one per call)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gamepak

from conftest import in_process_cli

# Every format `create` writes, with names its writer takes (WAD and RFG packfile names are flat).
FORMATS = ["pak", "jpk", "vpp", "zip", "tar", "wad"]


def _names(format_name: str) -> list[str]:
    if format_name == "wad":
        return ["alpha", "beta", "gamma"]
    return ["alpha.txt", "beta.txt" if format_name == "vpp" else "dir/beta.txt", "gamma.bin"]


def _build(tmp_path: Path, format_name: str) -> Path:
    path = tmp_path / f"pack.{format_name}"
    with gamepak.create(path, format_name) as writer:
        for number, name in enumerate(_names(format_name)):
            writer.add(name, bytes([65 + number]) * (10 + number))
    return path


def _files(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)).replace(os.sep, "/") for path in root.rglob("*") if path.is_file())


@pytest.mark.parametrize("format_name", FORMATS)
def test_a_member_named_twice_is_extracted_once(tmp_path: Path, format_name: str) -> None:
    path = _build(tmp_path, format_name)
    first = _names(format_name)[0]
    with gamepak.open(path) as archive:
        out = tmp_path / "names"
        written = archive.extractall(out, [first, first])
        assert _files(out) == [first]
        assert written == [str(out.resolve() / first)]
        # A name and an entry (from the listing) for the same member: one file too.
        out = tmp_path / "mixed"
        entry = archive.infolist()[0]
        assert len(archive.extractall(out, [entry, first, archive.getinfo(first), entry])) == 1
        assert _files(out) == [first]
        assert (out / first).read_bytes() == b"A" * 10


def test_a_pak_lookup_makes_a_new_entry_each_call(tmp_path: Path) -> None:
    """Why the members are told apart by index: this format's fast lookup gives a new object
    each time (if that changes, the test above still holds, but no longer shows the cause)."""
    with gamepak.open(_build(tmp_path, "pak")) as archive:
        assert archive.getinfo("alpha.txt") is not archive.getinfo("alpha.txt")


def test_copies_of_a_duplicated_name_stay_two_members(tmp_path: Path) -> None:
    """Telling members apart by index does not merge two members that share a name."""
    path = tmp_path / "dup.pak"
    with gamepak.create(path, "pak", allow_duplicates=True) as writer:
        writer.add("same.txt", b"first")
        writer.add("same.txt", b"second")
    with gamepak.open(path) as archive:
        entries = archive.infolist()
        out = tmp_path / "out"
        assert len(archive.extractall(out, [*entries, "same.txt"])) == 2
        assert (out / "same.txt").read_bytes() == b"first"  # Quake loads the first copy
        assert _files(out) == ["same.txt", "same.txt.dup1"]


@pytest.mark.parametrize("format_name", ["pak", "jpk"])
def test_cli_extract_of_a_member_named_twice(tmp_path: Path, format_name: str) -> None:
    path = _build(tmp_path, format_name)
    out = tmp_path / "out"
    code, _, err = in_process_cli("extract", str(path), "alpha.txt", "alpha.txt", "-o", str(out))
    assert code == 0, err
    assert _files(out) == ["alpha.txt"]
    assert "extracted 1 member" in err
    # A glob and a name that both match one member: each file once, listed once.
    out = tmp_path / "glob"
    code, stdout, err = in_process_cli("extract", str(path), "*.txt", "alpha.txt", "-o", str(out), "--json")
    assert code == 0, err
    assert _files(out) == ["alpha.txt", "dir/beta.txt"]
    report = json.loads(stdout)
    assert report["members"] == 2
    assert [row["name"] for row in report["written"]] == ["alpha.txt", "dir/beta.txt"]


@settings(max_examples=30, deadline=None)
@given(picks=st.lists(st.tuples(st.integers(0, 2), st.booleans()), min_size=1, max_size=8))
def test_any_repetition_extracts_each_member_once(
    tmp_path_factory: pytest.TempPathFactory, picks: list[tuple[int, bool]]
) -> None:
    """Any list of names and entries, repeated or not: each named member once, in first-asked
    order, with its own bytes."""
    root = tmp_path_factory.mktemp("twice")
    path = _build(root, "pak")
    names = _names("pak")
    with gamepak.open(path) as archive:
        members = [archive.infolist()[index] if as_entry else names[index] for index, as_entry in picks]
        written = archive.extractall(root / "out", members)
    order = list(dict.fromkeys(index for index, _ in picks))
    assert written == [str((root / "out").resolve() / names[index]) for index in order]
    for index in order:
        assert (root / "out" / names[index]).read_bytes() == bytes([65 + index]) * (10 + index)
