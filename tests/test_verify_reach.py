"""verify sees what the other verbs care about (issue 19 class 10): names `extract` refuses and
bytes nothing points to are warnings; a truncated RFG pack is called truncated, whoever wrote it."""

from __future__ import annotations

import struct
import warnings
import zipfile
from pathlib import Path

import pytest

import gamepak

from conftest import in_process_cli


def test_a_name_extract_refuses_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "evil.zip"
    with warnings.catch_warnings(), zipfile.ZipFile(path, "w") as archive:
        archive.writestr("../evil.txt", b"x")
        archive.writestr("ok.txt", b"y")
    problems = gamepak.open(path).check()
    assert [(p.severity, p.member) for p in problems] == [("warning", "../evil.txt")]
    code, _, err = in_process_cli("verify", str(path))
    assert code == 0 and "extract refuses this name" in err
    assert in_process_cli("verify", "--strict", str(path))[0] == 1


@pytest.mark.parametrize("kind", ["pak", "jpk", "j2me-table", "j2me-offsets"])
def test_bytes_after_the_data_are_a_warning(tmp_path: Path, kind: str) -> None:
    path = tmp_path / f"pack.{kind}"
    with gamepak.create(path, kind) as writer:
        writer.add("0" if kind.startswith("j2me") else "a.txt", b"hello")
    assert gamepak.open(path, kind).check() == []
    path.write_bytes(path.read_bytes() + b"HIDDEN")
    problems = gamepak.open(path, kind).check()
    assert [p.severity for p in problems] == ["warning"]
    assert "6 bytes after the last member's data" in problems[0].message
    assert problems[0].offset == path.stat().st_size - 6


def test_a_pak_with_its_directory_last_has_no_extra_bytes(tmp_path: Path) -> None:
    data = b"hello"
    record = struct.pack("<56sii", b"a.txt", 12, len(data))
    path = tmp_path / "a.pak"
    path.write_bytes(struct.pack("<4sii", b"PACK", 12 + len(data), len(record)) + data + record)
    assert gamepak.open(path).check() == []


@pytest.mark.parametrize("flags", [0, 1, 2, 3])
def test_a_truncated_rfg_pack_is_called_truncated(tmp_path: Path, flags: int) -> None:
    path = tmp_path / "level.str2_pc"
    with gamepak.create(path, flags=flags) as writer:
        writer.add("a.txt", bytes(range(256)) * 40)
        writer.add("b.txt", b"b" * 5000)
    path.write_bytes(path.read_bytes()[:-100])
    try:
        problems = gamepak.open(path).check()
    except gamepak.errors.GamepakError as exc:  # refused at open: also says where it is cut
        assert "truncated" in str(exc) or "past the end" in str(exc)
        return
    messages = [p.message for p in problems if p.severity == "error"]
    assert any("truncated" in message for message in messages), messages
    assert not any("SyncFaction" in p.message for p in problems)
