"""Edits of zip and tar keep what gamepak does not model (issue 19 class 1): unchanged members
come out as they were stored, with their dates, comments, attributes, owners and compression,
and the folders, links and archive comment stay."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

import gamepak


def rich_zip(path: Path) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        archive.comment = b"archive comment"
        info = zipfile.ZipInfo("stored.txt", date_time=(2004, 8, 3, 10, 20, 30))
        info.compress_type = zipfile.ZIP_STORED
        info.comment = b"member comment"
        info.external_attr = 0o100755 << 16
        archive.writestr(info, b"stored data")
        info = zipfile.ZipInfo("packed.txt", date_time=(2010, 1, 2, 3, 4, 6))
        info.compress_type = zipfile.ZIP_BZIP2
        archive.writestr(info, b"bzip2 data " * 50)
        archive.writestr(zipfile.ZipInfo("folder/"), b"")


def zip_infos(path: Path) -> dict[str, tuple]:
    with zipfile.ZipFile(path) as archive:
        assert archive.testzip() is None
        return {
            info.filename: (info.date_time, info.compress_type, info.comment, info.external_attr, archive.read(info))
            for info in archive.infolist()
        }


@pytest.mark.parametrize("edit", ["add", "rm", "mv"])
def test_zip_edits_keep_unchanged_members_as_stored(tmp_path: Path, edit: str) -> None:
    path = tmp_path / "rich.zip"
    rich_zip(path)
    before = zip_infos(path)
    with gamepak.edit(path) as editor:
        if edit == "add":
            editor.add("new.txt", b"new")
        elif edit == "rm":
            editor.remove("packed.txt")
        else:
            editor.rename("packed.txt", "renamed.txt")
    after = zip_infos(path)
    with zipfile.ZipFile(path) as archive:
        assert archive.comment == b"archive comment"
    assert after["stored.txt"] == before["stored.txt"]
    assert after["folder/"][:4] == before["folder/"][:4]
    if edit == "add":
        assert after["packed.txt"] == before["packed.txt"] and after["new.txt"][4] == b"new"
    elif edit == "mv":
        assert after["renamed.txt"] == before["packed.txt"]


def test_zip_to_zip_with_another_compression_recompresses(tmp_path: Path) -> None:
    path = tmp_path / "rich.zip"
    rich_zip(path)
    gamepak.convert(path, tmp_path / "kept.zip")
    assert zip_infos(tmp_path / "kept.zip")["packed.txt"][1] == zipfile.ZIP_BZIP2
    gamepak.convert(path, tmp_path / "stored.zip", compression="store")
    infos = zip_infos(tmp_path / "stored.zip")
    assert {info[1] for name, info in infos.items() if not name.endswith("/")} == {zipfile.ZIP_STORED}


def rich_tar(path: Path) -> None:
    with tarfile.open(path, "w:gz" if path.name.endswith(".gz") else "w") as archive:
        info = tarfile.TarInfo("bin/tool.sh")
        info.size, info.mode, info.mtime = 5, 0o755, 1_100_000_000
        info.uid, info.gid, info.uname, info.gname = 1000, 100, "modder", "users"
        archive.addfile(info, io.BytesIO(b"#!sh\n"))
        folder = tarfile.TarInfo("empty")
        folder.type, folder.mode = tarfile.DIRTYPE, 0o700
        archive.addfile(folder)
        link = tarfile.TarInfo("latest")
        link.type, link.linkname = tarfile.SYMTYPE, "bin/tool.sh"
        archive.addfile(link)


def tar_infos(path: Path) -> dict[str, tuple]:
    with tarfile.open(path) as archive:
        return {
            info.name: (info.type, info.mode, info.mtime, info.uid, info.gid, info.uname, info.gname, info.linkname)
            for info in archive.getmembers()
        }


@pytest.mark.parametrize("name", ["rich.tar", "rich.tar.gz"])
def test_tar_edits_keep_modes_dates_owners_folders_and_links(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    rich_tar(path)
    before = tar_infos(path)
    with gamepak.edit(path) as editor:
        editor.add("new.txt", b"new")
    after = tar_infos(path)
    for entry in ("bin/tool.sh", "empty", "latest"):
        assert after[entry] == before[entry], entry
    assert gamepak.open(path).read("bin/tool.sh") == b"#!sh\n"
