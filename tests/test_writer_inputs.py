"""What writers read: never the file they write (issue 20, finding 3), and input files as
snapshots that must not change while they are read (finding 2)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import gamepak

from conftest import in_process_cli

# (id, format, file suffix, writer options): one of each way a pack is written or edited.
PACKS = [
    ("pak", "pak", ".pak", {}),
    ("pak-dir-start", "pak", ".pak", {"directory": "start"}),
    ("jpk", "jpk", ".jpk", {}),
    ("vpp0", "vpp", ".vpp_pc", {"flags": 0}),
    ("vpp1", "vpp", ".vpp_pc", {"flags": 1}),
    ("vpp2", "vpp", ".vpp_pc", {"flags": 2}),
    ("vpp3", "vpp", ".vpp_pc", {"flags": 3}),
    ("zip", "zip", ".zip", {}),
    ("tar", "tar", ".tar", {}),
    ("j2me-sized", "j2me-sized", ".bin", {}),
]
PACK_IDS = [pack[0] for pack in PACKS]
MEMBERS = [("a.bin", bytes(range(256)) * 100), ("b.txt", b"hello\n")]


def build(folder: Path, format_name: str, suffix: str, options: dict[str, Any]) -> Path:
    path = folder / f"pack{suffix}"
    with gamepak.create(path, format_name, **options) as writer:
        for index, (name, data) in enumerate(MEMBERS):
            writer.add(str(index) if format_name.startswith("j2me") else name, data)
    return path


def one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gamepak: error: "), err
    return lines[0]


# -- the same file as source and target (finding 3) ------------------------------------------
@pytest.mark.parametrize(("format_name", "suffix", "options"), [pack[1:] for pack in PACKS], ids=PACK_IDS)
@pytest.mark.parametrize("spelling", ["same path", "hard link", "symlink"])
def test_add_refuses_the_pack_itself(
    tmp_path: Path, format_name: str, suffix: str, options: dict[str, Any], spelling: str
) -> None:
    pack = build(tmp_path, format_name, suffix, options)
    before = pack.read_bytes()
    source = pack
    if spelling == "hard link":
        source = tmp_path / "elsewhere.bin"
        os.link(pack, source)
    elif spelling == "symlink":
        source = tmp_path / "pointer.bin"
        source.symlink_to(pack)
    name = "2" if format_name.startswith("j2me") else "self.bin"
    code, _, err = in_process_cli("add", str(pack), str(source), "--name", name, "--format", format_name)
    assert code == 1
    assert "cannot be added to itself" in one_line_error(err)
    assert pack.read_bytes() == before


def test_replacing_a_member_with_the_pack_itself_is_refused(tmp_path: Path) -> None:
    pack = build(tmp_path, "pak", ".pak", {})
    before = pack.read_bytes()
    code, _, err = in_process_cli("add", str(pack), str(pack), "--name", "a.bin", "--replace")
    assert code == 1 and "cannot be added to itself" in one_line_error(err)
    assert pack.read_bytes() == before
    with gamepak.edit(pack) as editor, pytest.raises(gamepak.errors.GamepakError, match="added to itself"):
        editor.replace("a.bin", pack)
    assert pack.read_bytes() == before


@pytest.mark.parametrize("command", ["add", "update"])
def test_a_folder_holding_the_pack_leaves_it_out(tmp_path: Path, command: str) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    for name, data in MEMBERS:
        (folder / name).write_bytes(data)
    pack = build(folder, "jpk", ".jpk", {})
    os.link(pack, folder / "copy.jpk")  # the same file under another name
    code, _, err = in_process_cli(command, str(pack), str(folder), "--replace" if command == "add" else "--delete")
    assert code == 0, err
    assert "pack.jpk: the output being written" in err and "copy.jpk: the output being written" in err
    with gamepak.open(pack) as archive:
        assert sorted(archive.namelist()) == ["a.bin", "b.txt"]
        assert archive.verify() == []


def test_create_leaves_out_its_output_under_any_name(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "a.txt").write_bytes(b"a")
    out = folder / "out.pak"
    code, _, err = in_process_cli("create", str(out), str(folder))
    assert code == 0, err
    os.link(out, folder / "hard.pak")
    code, _, err = in_process_cli("create", str(out), str(folder), "--overwrite")
    assert code == 0, err
    assert "hard.pak: the output being written" in err
    with gamepak.open(out) as archive:
        assert archive.namelist() == ["a.txt"]
    # A single file INPUT that is OUT under another name (the rewrite made OUT a new file).
    (folder / "hard.pak").unlink()
    os.link(out, folder / "hard.pak")
    code, _, err = in_process_cli("create", str(out), str(folder / "hard.pak"), "--overwrite")
    assert code == 1 and "OUT cannot also be an INPUT" in one_line_error(err)


@pytest.mark.parametrize("overwrite", [False, True])
def test_convert_refuses_the_source_as_target(tmp_path: Path, overwrite: bool) -> None:
    pack = build(tmp_path, "pak", ".pak", {})
    before = pack.read_bytes()
    os.link(pack, tmp_path / "same.pak")
    for target in (pack, tmp_path / "same.pak"):
        arguments = ["convert", str(pack), str(target), *(["--overwrite"] if overwrite else [])]
        code, _, err = in_process_cli(*arguments, "--format", "zip")
        assert code == 1
        assert "is the source pack itself" in one_line_error(err)
    assert pack.read_bytes() == before
    with pytest.raises(gamepak.errors.GamepakError, match="source pack itself"):
        gamepak.convert(pack, tmp_path / "same.pak", "pak", overwrite=True)
