"""gamepak diff: members only in A or B, changed, renamed, header fields; exit codes 0/1/2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gamepak

from conftest import in_process_cli, run_cli

BASE = [("a.txt", b"alpha"), ("b.bin", b"\x00" * 100), ("c/d.txt", b"delta")]


def make(path: Path, members: list[tuple[str, bytes]], **options: object) -> Path:
    with gamepak.create(path, **options) as writer:  # type: ignore[arg-type]
        for name, data in members:
            writer.add(name, data)
    return path


def test_equal_packs_of_different_formats_and_folders_exit_0(tmp_path: Path) -> None:
    pak = make(tmp_path / "a.pak", BASE)
    zipped = make(tmp_path / "a.zip", BASE)
    pak.parent.joinpath("folder").mkdir()
    pak.parent.joinpath("folder", "c").mkdir()
    for name, data in BASE:
        (tmp_path / "folder" / name).write_bytes(data)
    for other in (zipped, tmp_path / "folder", make(tmp_path / "same.pak", BASE)):
        code, out, err = in_process_cli("diff", str(pak), str(other))
        assert (code, out) == (0, "equal\n"), err
        assert gamepak.diff(pak, other).equal


def test_every_kind_of_difference_exit_3_and_json(tmp_path: Path) -> None:
    a = make(tmp_path / "a.pak", [*BASE, ("old.txt", b"moved bytes"), ("gone.txt", b"only in a")])
    b = make(
        tmp_path / "b.zip",
        [
            ("a.txt", b"ALPHA"),  # same size, other bytes
            ("b.bin", b"\x00" * 101),  # other size
            ("c/d.txt", b"delta"),
            ("new.txt", b"moved bytes"),  # old.txt renamed
            ("added.txt", b"only in b"),
        ],
    )
    code, out, _ = in_process_cli("diff", "--json", str(a), str(b))
    assert code == 3
    report = json.loads(out)
    assert report["equal"] is False
    assert (report["format_a"], report["format_b"]) == ("pak", "zip")
    assert report["only_in_a"] == ["gone.txt"]
    assert report["only_in_b"] == ["added.txt"]
    changed = {change["name"]: change for change in report["changed"]}
    assert set(changed) == {"a.txt", "b.bin"}
    assert changed["b.bin"]["size_a"] == 100 and changed["b.bin"]["size_b"] == 101
    assert changed["a.txt"]["sha256_a"] != changed["a.txt"]["sha256_b"]
    assert report["renamed"] == [{"a": "old.txt", "b": "new.txt", "size": 11, "sha256": report["renamed"][0]["sha256"]}]
    assert report["header"] == []  # different formats: members only
    code, out, _ = in_process_cli("diff", str(a), str(b))
    assert code == 3
    assert out.splitlines() == [
        "- gone.txt",
        "+ added.txt",
        "~ a.txt (same size 5, content differs)",
        "~ b.bin (size 100 -> 101)",
        "> old.txt -> new.txt (renamed, same bytes)",
    ]


def test_header_fields_differ_between_packs_of_one_format(tmp_path: Path) -> None:
    a = make(tmp_path / "a.pak", BASE)
    b = make(tmp_path / "b.pak", BASE, directory="start")
    result = gamepak.diff(a, b)
    assert not result.equal and not result.changed
    assert "directory_offset" in [field["field"] for field in result.header]
    code, out, _ = in_process_cli("diff", str(a), str(b))
    assert code == 3 and "! header directory_offset" in out


def test_the_loaded_copy_of_a_duplicate_is_compared(tmp_path: Path) -> None:
    a = make(tmp_path / "a.pak", [("x", b"first"), ("x", b"other")], allow_duplicates=True)
    b = make(tmp_path / "b.zip", [("x", b"first")])
    assert gamepak.diff(a, b).equal  # Quake loads the first copy


@pytest.mark.parametrize("bad", ["corrupt", "missing", "unknown"])
def test_errors_exit_1(tmp_path: Path, bad: str) -> None:
    good = make(tmp_path / "a.pak", BASE)
    other = tmp_path / "other.pak"
    if bad == "corrupt":
        other.write_bytes(b"PACK" + b"\xff" * 8)
    elif bad == "unknown":
        other = tmp_path / "other.bin"
        other.write_bytes(b"\x01\x02\x03")
    result = run_cli("diff", str(good), str(other))
    assert result.returncode == 1
    assert b"Traceback" not in result.stderr and result.stderr.strip()


def test_usage_error_exit_2() -> None:
    assert in_process_cli("diff", "--bogus", "a", "b")[0] == 2


@given(
    st.lists(st.from_regex(r"[a-z]{1,8}", fullmatch=True), min_size=1, max_size=8, unique=True),
    st.data(),
)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_random_changes_are_found(tmp_path: Path, names: list[str], data: st.DataObject) -> None:
    before = {name: f"{name}:0".encode() for name in names}
    removed = set(data.draw(st.lists(st.sampled_from(names), unique=True)))
    changed = set(data.draw(st.lists(st.sampled_from(names), unique=True))) - removed
    added = {f"new{index}" for index in range(data.draw(st.integers(0, 3)))}
    after = {name: content for name, content in before.items() if name not in removed}
    after.update({name: f"{name}:changed".encode() for name in changed})
    after.update({name: f"{name}:added".encode() for name in added})
    a = make(tmp_path / "a.pak", list(before.items()), overwrite=True)
    b = make(tmp_path / "b.zip", list(after.items()), overwrite=True)
    result = gamepak.diff(a, b)
    assert set(result.only_in_a) == removed
    assert set(result.only_in_b) == added
    assert {change["name"] for change in result.changed} == changed
    assert result.renamed == []
    assert result.equal == (not removed and not changed and not added)


def test_recursive_diff_looks_inside_nested_packs(tmp_path: Path) -> None:
    """-r compares packs inside packs member by member, and a pack with its own extraction
    (nested packs left as files) is equal (issue 19 classes 2 and 14)."""
    inner = make(tmp_path / "zone.str2_pc", [("a.txt", b"alpha"), ("b.txt", b"beta")])
    outer = make(tmp_path / "outer.vpp_pc", [("zone.str2_pc", inner.read_bytes()), ("c.txt", b"gamma")])
    changed_inner = make(tmp_path / "zone2.str2_pc", [("a.txt", b"ALPHA"), ("b.txt", b"beta")])
    changed = make(tmp_path / "changed.vpp_pc", [("zone.str2_pc", changed_inner.read_bytes()), ("c.txt", b"gamma")])
    plain = gamepak.diff(outer, changed)
    assert [item["name"] for item in plain.changed] == ["zone.str2_pc"]
    deep = gamepak.diff(outer, changed, recursive=True)
    assert [item["name"] for item in deep.changed] == ["zone.str2_pc/a.txt"]
    folder = tmp_path / "extracted"
    gamepak.open(outer).extractall(folder)
    assert gamepak.diff(outer, folder).equal
    assert gamepak.diff(outer, folder, recursive=True).equal
    code, out, _ = in_process_cli("diff", "-r", str(outer), str(changed))
    assert code == 3 and "zone.str2_pc/a.txt" in out


def test_a_format_per_side(tmp_path: Path) -> None:
    a = make(tmp_path / "a.pak", BASE)
    b = tmp_path / "b.bin"
    b.write_bytes(make(tmp_path / "b.jpk", BASE).read_bytes())
    code, _, _ = in_process_cli("diff", str(a), str(b), "--format-b", "jpk")
    assert code == 0
    code, _, err = in_process_cli("diff", str(a), str(b), "--format", "jpk")
    assert code == 1 and "a.pak" in err


@pytest.mark.parametrize("order", ["same", "reversed"])
def test_byte_comparison_and_hashing_find_the_same_changes(tmp_path: Path, order: str) -> None:
    # Small packs listed in the same order are compared byte for byte; another order is hashed
    # side by side. Both must report the same changes, with the sha256 of what changed.
    import hashlib

    members = [(f"m{index}.bin", bytes([index]) * (300 + index)) for index in range(6)]
    changed = [(name, data if name != "m3.bin" else b"X" + data[1:]) for name, data in members]
    a = make(tmp_path / "a.pak", members)
    b = make(tmp_path / "b.pak", changed if order == "same" else changed[::-1])
    result = gamepak.diff(a, b)
    assert [change["name"] for change in result.changed] == ["m3.bin"]
    change = result.changed[0]
    assert change["sha256_a"] == hashlib.sha256(members[3][1]).hexdigest()
    assert change["sha256_b"] == hashlib.sha256(changed[3][1]).hexdigest()
    assert not result.only_in_a and not result.only_in_b and not result.renamed


def test_a_small_equal_diff_does_not_load_hashlib(tmp_path: Path) -> None:
    # Start-up (issue 17): loading OpenSSL through hashlib is a fifth of Python's start-up, and
    # two equal small packs need no hash.
    import subprocess
    import sys

    a = make(tmp_path / "a.pak", BASE)
    b = make(tmp_path / "b.pak", BASE)
    probe = "import sys, gamepak; assert gamepak.diff(sys.argv[1], sys.argv[2]).equal; print('hashlib' in sys.modules)"
    output = subprocess.run([sys.executable, "-c", probe, str(a), str(b)], capture_output=True, text=True, check=True)
    assert output.stdout.strip() == "False"


@given(
    contents=st.lists(st.binary(max_size=40), min_size=1, max_size=10),
    flips=st.lists(st.booleans(), min_size=10, max_size=10),
    batch_bytes=st.integers(0, 64),
)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_members_compared_in_batches_find_what_hashing_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, contents: list[bytes], flips: list[bool], batch_bytes: int
) -> None:
    # Plain ranges are read a batch of up to BATCH_BYTES at a time per side (any size: one
    # member over it is streamed); what differs is what sha256 says differs.
    import hashlib
    import shutil

    from gamepak.ops import diff as diff_module

    monkeypatch.setattr(diff_module, "BATCH_BYTES", batch_bytes)
    members = [(f"m{index}.bin", data) for index, data in enumerate(contents)]
    changed = [
        (name, data[:-1] + bytes([data[-1] ^ 1]) if data and flip else data)
        for (name, data), flip in zip(members, flips)
    ]
    a = make(tmp_path / "a.pak", members, overwrite=True)
    b = make(tmp_path / "b.pak", changed, overwrite=True)
    seen: list[str] = []
    result = gamepak.diff(a, b, progress=seen.append)
    expected = [
        name
        for (name, old), (_, new) in zip(members, changed)
        if hashlib.sha256(old).digest() != hashlib.sha256(new).digest()
    ]
    assert [change["name"] for change in result.changed] == expected
    assert sorted(seen) == sorted([name for name, _ in members] + expected * 2)  # once each; hashed: per side
    folder = tmp_path / "folder"
    shutil.rmtree(folder, ignore_errors=True)  # tmp_path is shared by the examples
    with gamepak.open(b) as pack:
        pack.extractall(folder)
    assert [change["name"] for change in gamepak.diff(a, folder).changed] == expected


def test_plain_members_are_compared_without_a_stream_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gamepak.core.archive import Archive

    opened: list[str] = []
    plain_open = Archive.open

    def recorded(self: Archive, member: Any) -> Any:
        opened.append(str(member))
        return plain_open(self, member)

    monkeypatch.setattr(Archive, "open", recorded)
    a = make(tmp_path / "a.pak", BASE)
    b = make(tmp_path / "b.pak", BASE)
    assert gamepak.diff(a, b).equal and opened == []
