"""ZIP and tar through the standard library: reading what other tools write, writing what they
read, and malformed input."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path
from typing import Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.errors import CorruptArchiveError, GamepakError, InvalidOptionError

from conftest import in_process_cli, roundtrip, storable_name

MEMBERS = [("a.txt", b"alpha\n"), ("sub/b.bin", bytes(range(256)) * 40), ("empty", b"")]


def zip_bytes(
    members: list[tuple[str, bytes]], compression: int = zipfile.ZIP_DEFLATED, folders: bool = False
) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        if folders:
            archive.writestr("sub/", b"")
        for name, data in members:
            archive.writestr(name, data)
    return buffer.getvalue()


def tar_bytes(members: list[tuple[str, bytes]], mode: str = "w", extras: bool = False) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as archive:  # type: ignore[call-overload]
        if extras:
            folder = tarfile.TarInfo("sub")
            folder.type = tarfile.DIRTYPE
            archive.addfile(folder)
            link = tarfile.TarInfo("link")
            link.type = tarfile.SYMTYPE
            link.linkname = "/etc/passwd"
            archive.addfile(link)
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def read_all(archive: gamepak.Archive) -> list[tuple[str, bytes]]:
    return [(entry.name, archive.read(entry)) for entry in archive.infolist()]


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_reads_zip_written_by_zipfile(compression: int, tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    path.write_bytes(zip_bytes(MEMBERS, compression, folders=True))
    with gamepak.open(path) as archive:
        assert archive.format_name == "zip"
        assert read_all(archive) == MEMBERS  # the folder entry is not a member
        assert archive.header_fields()["folders"] == 1
        assert archive.verify() == []
        archive.extractall(tmp_path / "out")
        with archive.open("sub/b.bin") as stream:
            stream.seek(300)
            assert stream.read(4) == MEMBERS[1][1][300:304]
    assert (tmp_path / "out" / "sub" / "b.bin").read_bytes() == MEMBERS[1][1]


def test_stored_zip_members_are_raw_ranges_of_the_file(tmp_path: Path) -> None:
    data = zip_bytes(MEMBERS, zipfile.ZIP_STORED)
    with gamepak.open(io.BytesIO(data)) as archive:
        for entry, (_, content) in zip(archive.infolist(), MEMBERS, strict=True):
            assert entry.stored_size is None
            assert data[entry.offset : entry.offset + entry.size] == content


@pytest.mark.parametrize("mode", ["w", "w:gz"])
def test_reads_tar_written_by_tarfile(mode: str, tmp_path: Path) -> None:
    path = tmp_path / ("x.tar" if mode == "w" else "x.tgz")
    path.write_bytes(tar_bytes(MEMBERS, mode, extras=True))
    with gamepak.open(path) as archive:
        assert archive.format_name == "tar"
        assert read_all(archive) == MEMBERS
        assert archive.header_fields()["skipped_members"] == {"folders": 1, "symlinks": 1}
        assert archive.header_fields()["gzip"] == (mode == "w:gz")
        assert archive.verify() == []


def test_detection_by_content_not_extension(tmp_path: Path) -> None:
    for name, data, expected in [
        ("z.bin", zip_bytes(MEMBERS), "zip"),
        ("t.bin", tar_bytes(MEMBERS), "tar"),
        ("g.bin", tar_bytes(MEMBERS, "w:gz"), "tar"),
    ]:
        (tmp_path / name).write_bytes(data)
        assert gamepak.detect(tmp_path / name)[0].format == expected
        with gamepak.open(tmp_path / name) as archive:
            assert archive.format_name == expected


@pytest.mark.parametrize("suffix", [".zip", ".tar", ".tar.gz", ".tgz"])
def test_writers_are_read_by_the_standard_library(suffix: str, tmp_path: Path) -> None:
    path = tmp_path / f"out{suffix}"
    with gamepak.create(path) as writer:
        for name, data in MEMBERS:
            writer.add(name, data)
    if suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            assert archive.testzip() is None
            assert [(info.filename, archive.read(info)) for info in archive.infolist()] == MEMBERS
    else:
        with tarfile.open(path) as archive:
            files = archive.getmembers()
            assert [(info.name, archive.extractfile(info).read()) for info in files] == MEMBERS  # type: ignore[union-attr]
            assert all(info.mtime == 0 and info.mode == 0o644 for info in files)
    # The same members give the same bytes (fixed dates, no names in gzip headers).
    again = tmp_path / f"again{suffix}"
    with gamepak.create(again) as writer:
        for name, data in MEMBERS:
            writer.add(name, data)
    assert again.read_bytes() == path.read_bytes()


def test_zip_options(tmp_path: Path) -> None:
    big = [("z", bytes(100_000))]
    stored, _ = roundtrip(tmp_path, "zip", big, compression="store")
    deflated = tmp_path / "d.zip"
    with gamepak.create(deflated, compression="deflate", level=9) as writer:
        writer.add("z", bytes(100_000))
    assert stored.stat().st_size > 100_000 > deflated.stat().st_size
    with pytest.raises(InvalidOptionError, match="compression"):
        gamepak.create(tmp_path / "e.zip", compression="rar")
    with pytest.raises(InvalidOptionError, match="level"):
        gamepak.create(tmp_path / "e.tar", level=10)


@given(
    st.lists(
        st.tuples(st.text(min_size=1, max_size=30).filter(storable_name), st.binary(max_size=2000)),
        max_size=8,
        unique_by=lambda member: member[0],
    ),
    st.sampled_from(["zip", "tar"]),
)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_roundtrip_random_members(tmp_path: Path, members: list[tuple[str, bytes]], format_name: str) -> None:
    # zipfile and tarfile read a trailing '/' as a folder and NUL as the end of a name.
    members = [(name, data) for name, data in members if not name.endswith("/") and "\0" not in name]
    _, read = roundtrip(tmp_path, format_name, members)
    assert read == members


def test_duplicates_later_wins(tmp_path: Path) -> None:
    path, read = roundtrip(tmp_path, "zip", [("a", b"old"), ("a", b"new")])
    assert read == [("a", b"old"), ("a", b"new")]
    with gamepak.open(path) as archive:
        assert archive.read("a") == b"new"


def test_crc_mismatch_is_a_corrupt_archive_error() -> None:
    data = bytearray(zip_bytes([("a.txt", b"hello world")], zipfile.ZIP_STORED))
    data[data.index(b"hello")] ^= 0xFF
    with gamepak.open(io.BytesIO(bytes(data))) as archive:
        # A stored member is read as the raw range it is; verify checks its CRC-32.
        assert archive.read("a.txt") != b"hello world"
        assert any("a.txt" in problem for problem in archive.verify())
    deflated = bytearray(zip_bytes([("a.txt", b"hello world" * 50)]))
    entry_offset = 30 + len("a.txt")
    deflated[entry_offset + 3] ^= 0x01
    with gamepak.open(io.BytesIO(bytes(deflated))) as archive:
        with pytest.raises(CorruptArchiveError, match="a.txt"):
            archive.read("a.txt")
        assert archive.verify()


def test_damaged_lzma_data_is_a_corrupt_archive_error() -> None:
    """Found by fuzz_read_zip (data/fuzz/fuzz_read_zip/lzma-corrupt-data): lzma's LZMAError
    escaped the reader, being none of the errors zipfile's other decoders raise."""
    damaged = bytearray(zip_bytes([("a.txt", b"hello world" * 50)], zipfile.ZIP_LZMA))
    damaged[30 + len("a.txt") + 9] ^= 0xFF  # inside the lzma stream, after its 9-byte properties header
    with gamepak.open(io.BytesIO(bytes(damaged))) as archive:
        with pytest.raises(CorruptArchiveError, match="a.txt.*cannot read the member"):
            archive.read("a.txt")


@pytest.mark.parametrize(
    "data",
    [
        b"PK\x03\x04" + bytes(40),
        zip_bytes(MEMBERS)[:-30],
        tar_bytes(MEMBERS)[:700],
        tar_bytes(MEMBERS, "w:gz")[:60],
    ],
    ids=["zip-header-only", "zip-no-end-record", "tar-cut", "tgz-cut"],
)
def test_truncated_files_give_gamepak_errors(data: bytes) -> None:
    with pytest.raises(GamepakError):
        with gamepak.open(io.BytesIO(data)) as archive:
            for entry in archive.infolist():
                archive.read(entry)


@given(st.binary(min_size=4, max_size=600), st.sampled_from([b"PK\x03\x04", b"PK\x05\x06"]))
@settings(max_examples=150, deadline=None)
def test_garbage_zip_never_escapes_as_foreign_exception(data: bytes, magic: bytes) -> None:
    try:
        with gamepak.open(io.BytesIO(magic + data), "zip") as archive:
            for entry in archive.infolist():
                archive.read(entry)
    except GamepakError:
        pass


@given(st.integers(min_value=0, max_value=2000), st.binary(min_size=1, max_size=8))
@settings(max_examples=150, deadline=None)
def test_mutated_tar_never_escapes_as_foreign_exception(position: int, patch: bytes) -> None:
    data = bytearray(tar_bytes(MEMBERS))
    position %= len(data)
    data[position : position + len(patch)] = patch
    try:
        with gamepak.open(io.BytesIO(bytes(data)), "tar") as archive:
            for entry in archive.infolist():
                archive.read(entry)
    except GamepakError:
        pass


def test_cli_lists_and_extracts_zip_and_tar(tmp_path: Path) -> None:
    (tmp_path / "x.zip").write_bytes(zip_bytes(MEMBERS))
    (tmp_path / "x.tgz").write_bytes(tar_bytes(MEMBERS, "w:gz"))
    for name in ("x.zip", "x.tgz"):
        code, out, err = in_process_cli("ls", str(tmp_path / name))
        assert code == 0, err
        assert out.splitlines() == [name for name, _ in MEMBERS]
        code, _, err = in_process_cli("extract", str(tmp_path / name), "-o", str(tmp_path / f"o_{name}"))
        assert code == 0, err
        assert (tmp_path / f"o_{name}" / "sub" / "b.bin").read_bytes() == MEMBERS[1][1]


def test_member_times_come_from_the_archive(tmp_path: Path) -> None:
    import tarfile
    import time
    import zipfile

    zipped = tmp_path / "t.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr(zipfile.ZipInfo("a.txt", date_time=(2004, 6, 1, 12, 30, 0)), b"a")
    with gamepak.open(zipped) as archive:
        assert archive.member_mtime(archive.getinfo("a.txt")) == time.mktime((2004, 6, 1, 12, 30, 0, 0, 0, -1))
    tarred = tmp_path / "t.tar"
    with tarfile.open(tarred, "w") as archive:
        info = tarfile.TarInfo("b.txt")
        info.size, info.mtime = 1, 1_100_000_000
        archive.addfile(info, io.BytesIO(b"b"))
    with gamepak.open(tarred) as archive:
        assert archive.member_mtime(archive.getinfo("b.txt")) == 1_100_000_000


@pytest.mark.parametrize("extension", [".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar.zst"])
def test_compressed_tars_round_trip_and_gnu_tar_reads_them(tmp_path: Path, extension: str) -> None:
    import shutil
    import subprocess

    members = {"a.txt": b"hello\n", "dir/b.bin": bytes(range(256)) * 300}
    path = tmp_path / f"pack{extension}"
    with gamepak.create(path) as writer:
        for name, data in members.items():
            writer.add(name, data)
    with gamepak.open(path) as archive:
        assert archive.format_name == "tar"
        assert {name: archive.read(name) for name in archive.namelist()} == members
        assert archive.check() == []
    kind = {".tar": "none", ".tgz": "gzip", ".tar.gz": "gzip", ".tar.bz2": "bzip2", ".tar.xz": "xz"}
    with gamepak.open(path) as archive:
        assert archive.header_fields()["compression"] == kind.get(extension, "zstd")
    flags = {".tar.zst": ["--zstd"]}.get(extension, [])
    if extension == ".tar.zst" and shutil.which("zstd") is None:
        return  # GNU tar needs the zstd program for that one
    listed = subprocess.run(["tar", *flags, "-tf", str(path)], capture_output=True, check=True, text=True)
    assert listed.stdout.split() == list(members)
    # The same members give the same bytes.
    again = tmp_path / f"again{extension}"
    with gamepak.create(again) as writer:
        for name, data in members.items():
            writer.add(name, data)
    assert again.read_bytes() == path.read_bytes()


@pytest.mark.parametrize(("mode", "extension"), [("w:gz", ".tgz"), ("w:bz2", ".tar.bz2"), ("w:xz", ".tar.xz")])
def test_tars_compressed_by_tarfile_are_read(
    tmp_path: Path, mode: Literal["w:gz", "w:bz2", "w:xz"], extension: str
) -> None:
    path = tmp_path / f"theirs{extension}"
    with tarfile.open(path, mode) as archive:
        info = tarfile.TarInfo("x.txt")
        info.size = 3
        archive.addfile(info, io.BytesIO(b"abc"))
    # Told by signature, not by name.
    renamed = tmp_path / "renamed.bin"
    renamed.write_bytes(path.read_bytes())
    with gamepak.open(renamed, "tar") as archive:
        assert archive.read("x.txt") == b"abc"
    assert gamepak.detect(renamed)[0].format == "tar"


def test_tar_levels_are_checked_per_compression(tmp_path: Path) -> None:
    from gamepak.errors import InvalidOptionError

    with pytest.raises(InvalidOptionError, match="gzip levels are 0 to 9"):
        with gamepak.create(tmp_path / "a.tar.gz", level=19) as writer:
            writer.add("x", b"x")
    with gamepak.create(tmp_path / "a.tar.zst", level=19) as writer:
        writer.add("x", b"x")
    assert gamepak.open(tmp_path / "a.tar.zst").read("x") == b"x"
    assert not (tmp_path / "a.tar.gz").exists()
