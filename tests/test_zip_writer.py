"""The zip writer's own path for a new zip of stored or deflated members (formats/zip.py
`write_new_zip`): byte for byte what `zipfile` wrote for the same members before (the reference
below is that code), read back by gamepak and `zipfile`, and tested by `unzip -t` where installed.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.formats import zip as zip_format

METHODS = {"store": zipfile.ZIP_STORED, "deflate": zipfile.ZIP_DEFLATED}


def zipfile_bytes(members: list[tuple[str, bytes]], compression: str) -> bytes:
    """What the writer wrote through `zipfile` for new members (its code before `write_new_zip`)."""
    method = METHODS[compression]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=method, compresslevel=None) as archive:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=zip_format.FIXED_DATE)
            info.compress_type = method
            info.external_attr = 0o100644 << 16
            info.file_size = len(data)
            with pytest.warns(UserWarning) if name in archive.NameToInfo else _nothing():
                target = archive.open(info, "w")
            with target:
                target.write(data)
    return buffer.getvalue()


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc_info: object) -> None:
        return None


def gamepak_bytes(tmp_path: Path, members: list[tuple[str, bytes]], compression: str) -> bytes:
    target = tmp_path / "out.zip"
    target.unlink(missing_ok=True)
    with gamepak.create(target, compression=compression, allow_duplicates=True) as writer:
        for name, data in members:
            writer.add(name, data)
    return target.read_bytes()


NAMES = st.text(alphabet="abcé/._-", min_size=1, max_size=12).filter(
    lambda name: not name.startswith("/") and ".." not in name.split("/") and not name.endswith("/")
)
DATA = st.one_of(
    st.binary(max_size=3000),
    st.builds(lambda byte, size: bytes([byte]) * size, st.integers(0, 255), st.integers(0, 5000)),
)


# Members up to WHOLE_MEMBER are deflated whole and their header written once; larger ones
# stream, their header rewritten after the data: made small (1000), both paths in one zip.
@pytest.mark.parametrize("whole_member", [zip_format.WHOLE_MEMBER, 1000])
@settings(max_examples=40, deadline=None)
@given(members=st.lists(st.tuples(NAMES, DATA), max_size=6), compression=st.sampled_from(sorted(METHODS)))
def test_a_new_zip_is_byte_for_byte_what_zipfile_wrote(
    tmp_path_factory: pytest.TempPathFactory, members: list[tuple[str, bytes]], compression: str, whole_member: int
) -> None:
    try:
        expected = zipfile_bytes(members, compression)
    except ValueError:
        return  # a name the writer refuses before writing (checked elsewhere)
    tmp_path = tmp_path_factory.mktemp("zip")
    original, zip_format.WHOLE_MEMBER = zip_format.WHOLE_MEMBER, whole_member
    try:
        written = gamepak_bytes(tmp_path, members, compression)
    except gamepak.GamepakError:
        return
    finally:
        zip_format.WHOLE_MEMBER = original
    assert written == expected
    with zipfile.ZipFile(io.BytesIO(written)) as archive:
        assert archive.testzip() is None
        assert [(info.filename, archive.read(info)) for info in archive.infolist()] == members


def test_zip64_records_as_zipfile_writes_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Past the limits (made small here, in both modules): zip64 extra fields in the local headers
    # (size + 5% over the limit), in the central directory (sizes and offsets), and the zip64
    # end records (too many members).
    for module in (zipfile, zip_format):
        monkeypatch.setattr(module, "ZIP64_LIMIT", 1000)
    monkeypatch.setattr(zipfile, "ZIP_FILECOUNT_LIMIT", 5)
    monkeypatch.setattr(zip_format, "ZIP64_COUNT_LIMIT", 5)
    members = [(f"m{index}.bin", bytes([index]) * size) for index, size in enumerate([10, 980, 2000, 5, 1500, 7, 3])]
    for compression in METHODS:
        written = gamepak_bytes(tmp_path, members, compression)
        assert written == zipfile_bytes(members, compression)
        assert b"PK\x06\x06" in written and b"PK\x06\x07" in written


def test_an_empty_zip_and_a_read_back(tmp_path: Path) -> None:
    assert gamepak_bytes(tmp_path, [], "deflate") == zipfile_bytes([], "deflate") == b"PK\x05\x06" + bytes(18)
    members = [("docs/a.txt", b"text " * 100), ("é.bin", bytes(range(256)))]
    target = tmp_path / "read.zip"
    with gamepak.create(target) as writer:
        for name, data in members:
            writer.add(name, data)
    with gamepak.open(target) as archive:
        assert [(entry.name, archive.read(entry)) for entry in archive.infolist()] == members
        assert archive.verify() == []


@pytest.mark.skipif(shutil.which("unzip") is None, reason="unzip not installed")
def test_unzip_tests_a_new_zip_as_sound(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "page.txt").write_bytes(b"page " * 1000)
    (folder / "empty.bin").write_bytes(b"")
    (folder / "random.bin").write_bytes(bytes(range(256)) * 40)
    for compression in METHODS:
        target = tmp_path / f"{compression}.zip"
        with gamepak.create(target, compression=compression) as writer:
            for path in sorted(folder.rglob("*")):
                if path.is_file():
                    writer.add(path.relative_to(folder).as_posix(), str(path))
        result = subprocess.run(["unzip", "-t", str(target)], capture_output=True, text=True, check=False)
        assert result.returncode == 0 and "No errors detected" in result.stdout, result.stdout + result.stderr


def test_a_new_zip_imports_no_zipfile(tmp_path: Path) -> None:
    probe = (
        "import sys, gamepak\n"
        "with gamepak.create(sys.argv[1]) as writer:\n    writer.add('a.txt', b'text')\n"
        "print('zipfile' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "a.zip")], capture_output=True, text=True)
    assert result.stdout.split() == ["False"], result.stderr
    # a level, bzip2 or a zip source still go through zipfile (the probe sees it)
    probe = probe.replace("gamepak.create(sys.argv[1])", "gamepak.create(sys.argv[1], compression='bzip2')")
    result = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "b.zip")], capture_output=True, text=True)
    assert result.stdout.split() == ["True"], result.stderr


@pytest.mark.parametrize("level", [1, 9])
def test_a_level_given_is_the_level_the_members_are_deflated_at(tmp_path: Path, level: int) -> None:
    """`-O level=N` (writer option `level`): each new member's data is a raw deflate stream at that
    level (zipfile applies the archive's level only to members added by name: it was ignored)."""
    import zipfile
    import zlib

    data = b"".join(b"the quick brown fox jumps over the lazy dog %d\n" % number for number in range(3000))
    target = tmp_path / f"level{level}.zip"
    with gamepak.create(target, "zip", level=level) as writer:
        writer.add("a.txt", data)
    with zipfile.ZipFile(target) as archive:
        info = archive.getinfo("a.txt")
        assert archive.read("a.txt") == data
    packer = zlib.compressobj(level, zlib.DEFLATED, -15)
    expected = packer.compress(data) + packer.flush()
    raw = target.read_bytes()
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    assert raw[start : start + info.compress_size] == expected


def test_the_reader_spells_the_zip_constants_as_the_format_module_does() -> None:
    """`formats.zip_reader` repeats two constants of `formats.zip` (importing them would make the
    two modules a circle): they must not drift apart."""
    from gamepak.formats import zip as zip_format
    from gamepak.formats import zip_reader

    assert zip_reader._LOCAL_MAGIC == zip_format.LOCAL_MAGIC
    assert {code: name for name, code in zip_format.COMPRESSION_NAMES.items()} == zip_reader._METHOD_NAMES
