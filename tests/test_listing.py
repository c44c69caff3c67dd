"""Lazy member names (PAK, JoePack): decoded only when asked, exactly as one by one."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import gamepak
from gamepak.core.archive import decode_name, decode_name_fields

from conftest import in_process_cli, quick_cli


def pak_of(fields: list[bytes]) -> bytes:
    records = b"".join(field.ljust(56, b"\0") + struct.pack("<ii", 12, 0) for field in fields)
    return b"PACK" + struct.pack("<ii", 12, len(records)) + records


def jpk_of(fields: list[bytes], width: int) -> bytes:
    start = 16 + len(fields) * (8 + width)
    records = b"".join(struct.pack("<II", start, 0) + field.ljust(width, b"\0") for field in fields)
    return b"JPK01.00" + struct.pack("<II", len(fields), width) + records


FIELDS = [b"plain.txt", "caf\u00e9/\u20ac.dat".encode(), b"bad\xff\xfe.bin", b"name\0garbage", b"x" * 56, b""]


def test_pak_names_decode_like_one_by_one() -> None:
    archive = gamepak.open(io.BytesIO(pak_of(FIELDS)), "pak")
    assert len(archive) == len(FIELDS)
    assert archive.namelist() == [decode_name(field[:56].partition(b"\0")[0]) for field in FIELDS]


def test_jpk_names_decode_like_one_by_one() -> None:
    archive = gamepak.open(io.BytesIO(jpk_of(FIELDS, 60)), "jpk")
    assert len(archive) == len(FIELDS)
    assert archive.namelist() == [decode_name(field.partition(b"\0")[0]) for field in FIELDS]
    assert [entry.name for entry in archive.infolist()] == archive.namelist()


def test_pak_lookup_without_building_entries() -> None:
    data = pak_of([b"a.txt", b"dup", b"dup", b"b/c.txt"])
    archive = gamepak.open(io.BytesIO(data), "pak")
    assert archive.getinfo("dup").index == 1  # Quake loads the first copy
    assert archive.getinfo("b/c.txt").index == 3
    assert archive._entries is None  # answered from the raw directory
    assert "a.txt" in archive and "a.tx" not in archive and "zzz" not in archive
    with pytest.raises(gamepak.MemberNotFoundError):
        archive.getinfo("c.txt")  # a suffix of a name is not a name
    archive.infolist()
    assert archive.getinfo("dup").index == 1


@given(st.lists(st.binary(max_size=12), max_size=20), st.integers(min_value=1, max_value=16))
def test_name_fields_match_one_by_one(fields: list[bytes], width: int) -> None:
    for start in (0, 8):
        size = 8 + width
        padded = [field[:width].ljust(width, b"\0") for field in fields]
        raw = b"".join(field + b"\x01" * 8 if start == 0 else b"\x02" * 8 + field for field in padded)
        expected = [decode_name(field[:width].partition(b"\0")[0]) for field in fields]
        assert decode_name_fields(raw, size, start, width) == expected


@pytest.mark.parametrize(
    "arguments", [["ls"], ["ls", "-l"], ["ls", "--json"], ["ls", "--long"], ["info"], ["info", "--json"]]
)
def test_ls_and_info_import_nothing_heavy_and_match_in_process(tmp_path: Path, arguments: list[str]) -> None:
    pak = tmp_path / "x.pak"
    with gamepak.create(pak) as writer:
        writer.add("maps/e1m1.bsp", b"bsp")
        writer.add("caf\u00e9.txt", b"text")
    code, out, err = quick_cli(*arguments, str(pak))
    assert code == 0 and err.endswith("heavy imported: []\n")
    expected = in_process_cli(*arguments, str(pak))
    assert (code, out) == expected[:2]


def test_errors_are_one_line_with_the_exit_code_of_their_kind(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.pak")
    code, _, err = quick_cli("ls", missing)
    assert code == 1 and err.startswith("gamepak: error:") and "missing.pak" in err
    junk = tmp_path / "junk.pak"
    junk.write_bytes(b"PACK" + b"\xff" * 8)
    code, _, err = quick_cli("info", str(junk))
    assert code == 1 and "error" in err and "Traceback" not in err
    code, _, err = quick_cli("ls", str(tmp_path))
    assert code == 1 and "a folder, not a pack" in err
    code, _, err = quick_cli("ls", "--no-such-option", missing)
    assert code == 2 and "unrecognized arguments" in err


@pytest.mark.parametrize(
    "options",
    [
        [],
        ["--overwrite"],
        ["--manifest"],
        ["-o", "DEST"],
        ["--overwrite", "--manifest", "-o", "DEST"],
    ],
)
def test_extract_keeps_existing_files_unless_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: list[str]
) -> None:
    pak = tmp_path / "x.pak"
    with gamepak.create(pak) as writer:
        writer.add("maps/e1m1.bsp", b"bsp")
        writer.add("a.txt", b"text")
    monkeypatch.chdir(tmp_path)  # without -o, the output is the current folder
    arguments = ["extract", str(pak), *[str(tmp_path / "dest") if option == "DEST" else option for option in options]]
    first, again = quick_cli(*arguments), quick_cli(*arguments)
    assert first[0] == 0 and "extracted 2 members" in first[2] and first[2].endswith("heavy imported: []\n")
    assert again[0] == (0 if "--overwrite" in options else 1)  # existing files kept without it
    folder = tmp_path / "dest" if "DEST" in options else tmp_path
    assert (folder / "maps" / "e1m1.bsp").read_bytes() == b"bsp"


def test_extract_into_a_file_is_refused(tmp_path: Path) -> None:
    pak = tmp_path / "x.pak"
    with gamepak.create(pak) as writer:
        writer.add("a.txt", b"text")
    (tmp_path / "file").write_text("x")
    code, _, err = quick_cli("extract", str(pak), "-o", str(tmp_path / "file"))
    assert code == 1 and "not a folder" in err
