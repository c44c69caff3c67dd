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


# -- inputs are snapshots (finding 2) -----------------------------------------------------------
CHANGES = ["grow", "shrink", "rewrite"]
# (id, format, file suffix, writer options): every writer, the compressed ones included.
WRITERS = [
    ("pak", "pak", ".pak", {}),
    ("jpk", "jpk", ".jpk", {}),
    ("vpp0", "vpp", ".vpp_pc", {"flags": 0}),
    ("vpp1", "vpp", ".vpp_pc", {"flags": 1}),
    ("vpp2", "vpp", ".vpp_pc", {"flags": 2}),
    ("vpp3", "vpp", ".vpp_pc", {"flags": 3}),
    ("str2", "vpp", ".str2_pc", {}),
    ("zip", "zip", ".zip", {}),
    ("zip-store", "zip", ".zip", {"compression": "store"}),
    ("tar", "tar", ".tar", {}),
    ("tgz", "tar", ".tar.gz", {}),
    ("j2me-offsets", "j2me-offsets", ".bin", {}),
]
WRITER_IDS = [writer[0] for writer in WRITERS]
# Small files are read in chunks; large ones are copied by the kernel where the format stores
# them plainly.
SIZES = {"small": 3000, "large": 200_000}


def change(path: Path, how: str) -> None:
    """Change a file as another program might: longer, shorter, or other bytes of the same size
    (with a modification time a coarse clock still tells apart)."""
    data = path.read_bytes()
    before = path.stat()
    if how == "grow":
        path.write_bytes(data + b"appended")
    elif how == "shrink":
        path.write_bytes(data[:-100])
    else:
        path.write_bytes(data[::-1])
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 2_000_000_000))


def input_files(folder: Path, size: int) -> list[Path]:
    paths = []
    for index in range(3):
        path = folder / f"input{index}.bin"
        path.write_bytes(bytes((index * 7 + position) % 251 for position in range(size)))
        paths.append(path)
    return paths


def leftovers(folder: Path) -> list[str]:
    return sorted(name for name in os.listdir(folder) if not name.startswith("input"))


@pytest.mark.parametrize("how", CHANGES)
@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize(("format_name", "suffix", "options"), [writer[1:] for writer in WRITERS], ids=WRITER_IDS)
def test_a_file_changed_after_it_was_queued_writes_nothing(
    tmp_path: Path, format_name: str, suffix: str, options: dict[str, Any], size: str, how: str
) -> None:
    # Another program changes the second file while the writer is busy with the first.
    paths = input_files(tmp_path, SIZES[size])
    out = tmp_path / f"out{suffix}"
    names = [str(index) if format_name.startswith("j2me") else path.name for index, path in enumerate(paths)]
    writer = gamepak.create(out, format_name, **options)
    for name, path in zip(names, paths, strict=True):
        writer.add(name, path)

    def progress(member: Any) -> None:
        if member.name == names[0]:
            change(paths[1], how)

    writer.progress = progress
    with pytest.raises(gamepak.errors.InputChangedError, match="input1.bin: changed while being read"):
        writer.close()
    assert leftovers(tmp_path) == []


@pytest.fixture
def change_once_opened(monkeypatch: pytest.MonkeyPatch) -> Any:
    """`arm(path, how)`: the next time a writer opens `path` to read it, the file changes right
    after the writer checked it, before its bytes are read."""
    from gamepak.core.snapshot import InputFile

    armed: dict[str, str] = {}
    original = InputFile.__init__

    def opened(self: InputFile, path: str, *args: Any, **kwargs: Any) -> None:
        original(self, path, *args, **kwargs)
        how = armed.pop(os.path.abspath(path), None)
        if how is not None:
            change(Path(path), how)

    monkeypatch.setattr(InputFile, "__init__", opened)

    def arm(path: Path, how: str) -> None:
        armed[os.path.abspath(path)] = how

    return arm


@pytest.mark.parametrize("how", CHANGES)
@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize(("format_name", "suffix", "options"), [writer[1:] for writer in WRITERS], ids=WRITER_IDS)
def test_create_refuses_a_file_that_changes_while_read(
    tmp_path: Path,
    format_name: str,
    suffix: str,
    options: dict[str, Any],
    size: str,
    how: str,
    change_once_opened: Any,
) -> None:
    paths = input_files(tmp_path, SIZES[size])
    out = tmp_path / f"out{suffix}"
    change_once_opened(paths[2], how)
    arguments = [f"{path}={index}" for index, path in enumerate(paths)] if format_name.startswith("j2me") else []
    options_given = [f"-O{key}={value}" for key, value in options.items()]
    code, _, err = in_process_cli(
        "create", str(out), *(arguments or map(str, paths)), "--format", format_name, *options_given
    )
    assert code == 1
    assert "input2.bin: changed while being read" in one_line_error(err)
    assert leftovers(tmp_path) == []


def test_an_input_file_checks_what_it_read(tmp_path: Path) -> None:
    from gamepak.core.snapshot import InputFile
    from gamepak.errors import InputChangedError

    path = tmp_path / "input.bin"
    path.write_bytes(b"x" * 5000)
    info = path.stat()
    with InputFile(str(path), 5000, info.st_mtime_ns) as source:
        assert source.read_all() == b"x" * 5000
    with InputFile(str(path), 5000, info.st_mtime_ns) as source:
        assert b"".join(source.chunks(1024)) == b"x" * 5000
    with pytest.raises(InputChangedError, match="4000 -> 5000 bytes"):
        InputFile(str(path), 4000)  # queued when it was shorter
    with InputFile(str(path), 5000, info.st_mtime_ns) as source:
        with pytest.raises(InputChangedError, match="read 1000 of its 5000 bytes"):
            source.read(1000)
            source.finish(1000)
    with InputFile(str(path), 5000, info.st_mtime_ns) as source:
        chunks = source.chunks(1000)
        next(chunks)
        change(path, "shrink")
        with pytest.raises(InputChangedError, match="5000 -> 4900 bytes"):
            list(chunks)
    with pytest.raises(InputChangedError, match="modified meanwhile"):
        InputFile(str(path), 4900, info.st_mtime_ns)
    with pytest.raises(gamepak.errors.GamepakError, match="cannot read"):
        InputFile(str(tmp_path / "missing.bin"), 1)
