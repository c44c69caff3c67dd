"""Edits keep the bytes they do not mean to change (issue 19 class 5): `compact` of a pack no
edit touched is a no-op, and an in-place edit that cuts off bytes after the data says so."""

from __future__ import annotations

from pathlib import Path

import pytest

import gamepak
from gamepak.ops.edit import Editor

MEMBERS = [("a.txt", b"hello"), ("bb.txt", b"world!"), ("c.bin", bytes(range(200)))]


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("p.pak", {}),
        ("p.jpk", {}),
        ("p.jpk", {"name_field_size": 24}),
        ("p.vpp_pc", {"flags": 0}),
        ("p.vpp_pc", {"flags": 1}),
        ("p.vpp_pc", {"flags": 2}),
        ("p.vpp_pc", {"flags": 3}),
        ("p.bin", {"format": "j2me-table"}),
        ("p.bin", {"format": "j2me-offsets"}),
        ("p.bin", {"format": "j2me-end-offsets"}),
        ("p.bin", {"format": "j2me-sized"}),
    ],
)
def test_compact_of_an_unedited_pack_is_a_no_op(tmp_path: Path, name: str, options: dict) -> None:
    path = tmp_path / name
    options = dict(options)
    format_name = options.pop("format", None)
    with gamepak.create(path, format_name, **options) as writer:
        for member, data in MEMBERS:
            writer.add(member if format_name is None else f"{MEMBERS.index((member, data))}.bin", data)
    before = path.read_bytes()
    with Editor(str(path), format_name, compact=True) as editor:
        pass
    assert editor.result.summary().count("no member changed") == 1
    assert path.read_bytes() == before


def _padded_joepack(path: Path, fill: int) -> bytes:
    with gamepak.create(path, name_field_size=20) as writer:
        for member, data in MEMBERS:
            writer.add(member, data)
    padded = bytearray(path.read_bytes())
    for member, _ in MEMBERS:
        start = padded.index(member.encode() + b"\0") + len(member) + 1
        padded[start : start - len(member) - 1 + 20] = bytes([fill]) * (20 - len(member) - 1)
    path.write_bytes(bytes(padded))
    return bytes(padded)


@pytest.mark.parametrize("fill", [0xFF, 0xCD])
def test_compact_keeps_joepack_name_padding(tmp_path: Path, fill: int) -> None:
    path = tmp_path / "padded.jpk"
    before = _padded_joepack(path, fill)
    assert gamepak.open(path).namelist() == [member for member, _ in MEMBERS]
    gamepak.edit(path, compact=True).commit()
    assert path.read_bytes() == before
    # A rebuild for another reason keeps the padding of the members it did not rename.
    with gamepak.edit(path) as editor:
        editor.rename("a.txt", "renamed-a.txt")
        editor.add("d.txt", b"d" * 3)
    after = path.read_bytes()
    assert bytes([fill]) * (20 - len("bb.txt") - 1) in after


def test_an_in_place_add_that_cuts_a_stale_tail_says_so(tmp_path: Path) -> None:
    from conftest import in_process_cli

    path = tmp_path / "tail.jpk"
    with gamepak.create(path, name_field_size=20) as writer:
        for member, data in MEMBERS:
            writer.add(member, data)
    path.write_bytes(path.read_bytes() + b"old data of an earlier edit" * 4)
    (tmp_path / "new.txt").write_bytes(b"new")
    code, out, err = in_process_cli("add", str(path), str(tmp_path / "new.txt"))
    assert code == 0
    assert "in place" in out + err and "108 bytes after the data dropped" in out + err
    # A rebuild drops it too, and says so as well.
    path.write_bytes(path.read_bytes() + b"more old data")
    code, out, err = in_process_cli("compact", str(path))
    assert code == 0 and "compacted" in out + err and "13 bytes after the data dropped" in out + err
    # Appending after the data keeps nothing to report when there was no tail.
    (tmp_path / "newer.txt").write_bytes(b"newer")
    code, out, err = in_process_cli("add", str(path), str(tmp_path / "newer.txt"))
    assert code == 0 and "dropped" not in out + err
