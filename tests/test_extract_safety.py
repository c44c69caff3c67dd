"""The one safe extraction path: hostile names, symlinks, overwrites, atomic files."""

from __future__ import annotations

import io
import os
import struct
from pathlib import Path

import pytest

import gamepak
from gamepak.errors import OutputExistsError, UnsafePathError
from gamepak.extract import safe_parts

from conftest import in_process_cli


def pak_with(names: list[bytes], data: bytes = b"payload") -> bytes:
    body = data * len(names)
    records = b"".join(
        name.ljust(56, b"\0") + struct.pack("<ii", 12 + index * len(data), len(data))
        for index, name in enumerate(names)
    )
    return b"PACK" + struct.pack("<ii", 12 + len(body), len(records)) + body + records


def files_under(folder: Path) -> set[str]:
    return {str(path.relative_to(folder)) for path in folder.rglob("*")}


UNSAFE = [
    b"../evil.txt",
    b"a/../../evil.txt",
    b"/etc/evil.txt",
    b"\\evil.txt",
    b"C:evil.txt",
    b"c:/windows/evil.txt",
    b"..\\..\\evil.txt",
    b"a/..\\..\\evil.txt",
    b"..",
    b"./../evil.txt",
    b"",
    b"a/b/../../../evil.txt",
]


@pytest.mark.parametrize("name", UNSAFE)
def test_unsafe_names_are_refused_and_nothing_is_written(tmp_path: Path, name: bytes) -> None:
    destination = tmp_path / "out"
    archive = gamepak.open(io.BytesIO(pak_with([b"good.txt", name])), "pak")
    with pytest.raises(UnsafePathError):
        archive.extractall(destination)
    assert not (tmp_path / "evil.txt").exists()
    assert not destination.exists() or files_under(destination) == set()


def test_nul_byte_in_name_is_refused() -> None:
    with pytest.raises(UnsafePathError, match="NUL"):
        safe_parts("a\0b")


@pytest.mark.parametrize("name", ["a/./b.txt", "a//b.txt", "a\\b.txt", "./a/b.txt"])
def test_harmless_oddities_are_normalised(name: str) -> None:
    assert safe_parts(name) == ["a", "b.txt"]


def test_symlink_in_destination_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    destination = tmp_path / "out"
    destination.mkdir()
    os.symlink(outside, destination / "link")
    archive = gamepak.open(io.BytesIO(pak_with([b"link/evil.txt"])), "pak")
    with pytest.raises(UnsafePathError, match="symlink"):
        archive.extractall(destination)
    assert list(outside.iterdir()) == []


def test_symlinked_file_target_is_replaced_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("keep me")
    destination = tmp_path / "out"
    destination.mkdir()
    os.symlink(outside, destination / "a.txt")
    archive = gamepak.open(io.BytesIO(pak_with([b"a.txt"])), "pak")
    with pytest.raises(OutputExistsError):
        archive.extractall(destination)
    archive.extractall(destination, overwrite=True)
    assert outside.read_text() == "keep me"
    assert not (destination / "a.txt").is_symlink()
    assert (destination / "a.txt").read_bytes() == b"payload"


def test_existing_files_are_kept_without_overwrite(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_text("mine")
    archive = gamepak.open(io.BytesIO(pak_with([b"a.txt", b"b.txt"])), "pak")
    with pytest.raises(OutputExistsError):
        archive.extractall(tmp_path)
    # Checked before anything is written: a.txt does not appear either.
    assert not (tmp_path / "a.txt").exists()
    assert (tmp_path / "b.txt").read_text() == "mine"
    archive.extractall(tmp_path, overwrite=True)
    assert (tmp_path / "b.txt").read_bytes() == b"payload"


def test_cli_overwrite_refusal_exit_code(tmp_path: Path) -> None:
    pak = tmp_path / "x.pak"
    pak.write_bytes(pak_with([b"a.txt"]))
    out = tmp_path / "out"
    assert in_process_cli("extract", str(pak), "-o", str(out))[0] == 0
    code, _, err = in_process_cli("extract", str(pak), "-o", str(out))
    assert code == 1 and "already exists" in err and "Traceback" not in err
    assert in_process_cli("extract", str(pak), "-o", str(out), "--overwrite")[0] == 0


def test_failed_member_leaves_no_partial_file(tmp_path: Path) -> None:
    data = bytearray(pak_with([b"a.txt", b"b.txt"]))
    struct.pack_into("<i", data, len(data) - 4, 10_000)  # b.txt runs past the end
    archive = gamepak.open(io.BytesIO(bytes(data)), "pak")
    with pytest.raises(gamepak.CorruptArchiveError):
        archive.extractall(tmp_path)
    assert not any(name.startswith(".") or name == "b.txt" for name in os.listdir(tmp_path))


def test_member_file_in_the_way_of_a_folder(tmp_path: Path) -> None:
    archive = gamepak.open(io.BytesIO(pak_with([b"a", b"a/b.txt"])), "pak")
    with pytest.raises(gamepak.GamepakError, match="in the way"):
        archive.extractall(tmp_path)


def test_many_members_take_the_threaded_path(tmp_path: Path) -> None:
    names = [f"d{index % 7}/f{index}.bin".encode() for index in range(600)]
    archive = gamepak.open(io.BytesIO(pak_with(names)), "pak")
    path = tmp_path / "x.pak"
    path.write_bytes(pak_with(names))
    with gamepak.open(path) as on_disk:
        written = on_disk.extractall(tmp_path / "out")
    assert len(written) == 600
    assert all(Path(file).read_bytes() == b"payload" for file in written)
    assert not [name for name in files_under(tmp_path / "out") if ".gamepak-" in name]
    assert archive.read("d0/f0.bin") == b"payload"


def test_few_large_members_are_split_across_threads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gamepak.extract

    monkeypatch.setattr(gamepak.extract, "_THREAD_BYTES", 1000)
    contents = {f"big{index}.bin": os.urandom(5000 + index) for index in range(3)}
    with gamepak.create(tmp_path / "x.pak") as writer:
        for name, data in contents.items():
            writer.add(name, data)
    with gamepak.open(tmp_path / "x.pak") as archive:
        archive.extractall(tmp_path / "out")
    assert {name: (tmp_path / "out" / name).read_bytes() for name in contents} == contents
