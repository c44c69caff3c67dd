"""The library API every format shares: open, streams, lookup, create, detect, errors."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

import gamepak
from gamepak.errors import MemberNotFoundError, OutputExistsError, UnknownFormatError, UnsupportedFeatureError

from conftest import sample

# Formats whose writers take arbitrary names; each runs the same contract.
NAMED_FORMATS = ["pak", "jpk"]
MEMBERS = [("dir/a.txt", b"alpha" * 100), ("b.bin", bytes(range(256))), ("empty", b"")]


def build(tmp_path: Path, format_name: str) -> Path:
    path = tmp_path / f"contract.{format_name}"
    with gamepak.create(path, format_name) as writer:
        for name, data in MEMBERS:
            writer.add(name, data)
    return path


@pytest.mark.parametrize("format_name", NAMED_FORMATS)
def test_contract(tmp_path: Path, format_name: str) -> None:
    path = build(tmp_path, format_name)
    with gamepak.open(path) as archive:
        assert archive.format_name == format_name
        assert archive.namelist() == [name for name, _ in MEMBERS]
        assert [entry.name for entry in archive] == archive.namelist()
        assert len(archive) == 3 and "b.bin" in archive and "nope" not in archive
        entry = archive.getinfo("b.bin")
        assert entry.size == 256 and entry.offset > 0
        assert set(entry.to_dict()) >= {"name", "size", "offset", "stored_size"}
        with pytest.raises(KeyError):
            archive.getinfo("missing")
        with pytest.raises(MemberNotFoundError):
            archive.read("missing")
        with archive.open("b.bin") as stream:
            assert stream.seekable()
            stream.seek(250)
            assert stream.read(10) == bytes(range(250, 256))
            stream.seek(-3, io.SEEK_END)
            assert stream.read() == bytes([253, 254, 255])
            assert stream.tell() == 256
        assert archive.read("dir/a.txt") == b"alpha" * 100
        target = archive.extract("dir/a.txt", tmp_path / "one")
        assert Path(target).read_bytes() == b"alpha" * 100
        assert archive.verify() == []


@pytest.mark.parametrize("format_name", NAMED_FORMATS)
def test_open_on_file_object_and_nested(tmp_path: Path, format_name: str) -> None:
    inner = build(tmp_path, format_name)
    outer = tmp_path / "outer.pak"
    with gamepak.create(outer) as writer:
        writer.add("readme.txt", b"hi")
        writer.add(f"inner.{format_name}", inner)
    with open(outer, "rb") as handle, gamepak.open(handle) as archive:
        nested = archive.open_archive(f"inner.{format_name}")
        assert nested.namelist() == [name for name, _ in MEMBERS]
        assert nested.read("b.bin") == bytes(range(256))
    # A non-fd file object: BytesIO.
    with gamepak.open(io.BytesIO(outer.read_bytes())) as archive:
        with archive.open(f"inner.{format_name}") as stream:
            assert gamepak.open(stream).read("dir/a.txt") == b"alpha" * 100
    from gamepak.core.nested import resolve, walk

    with gamepak.open(outer) as archive:
        holder, entry = resolve(archive, f"inner.{format_name}/b.bin")
        assert holder.read(entry) == bytes(range(256))
        paths = [path for path, _, _ in walk(archive)]
        assert f"inner.{format_name}/dir/a.txt" in paths


def test_writer_is_atomic_and_refuses_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "x.pak"
    with pytest.raises(RuntimeError):
        with gamepak.create(path) as writer:
            writer.add("a", b"1")
            raise RuntimeError("interrupted")
    assert os.listdir(tmp_path) == []
    build(tmp_path, "pak")
    with pytest.raises(OutputExistsError):
        gamepak.create(tmp_path / "contract.pak")
    with gamepak.create(tmp_path / "contract.pak", overwrite=True) as writer:
        writer.add("new", b"")
    assert gamepak.open(tmp_path / "contract.pak").namelist() == ["new"]
    assert sorted(os.listdir(tmp_path)) == ["contract.pak"]


def test_writer_reads_member_files_from_disk(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(300_000))
    with gamepak.create(tmp_path / "x.pak") as writer:
        writer.add("big.bin", big)
        writer.add("small", b"s")
    with gamepak.open(tmp_path / "x.pak") as archive:
        assert archive.read("big.bin") == big.read_bytes()


def test_unknown_option_and_format(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedFeatureError, match="no option"):
        gamepak.create(tmp_path / "x.pak", bogus=1)
    with pytest.raises(UnknownFormatError):
        gamepak.create(tmp_path / "x.zzz")
    with pytest.raises(UnknownFormatError):
        gamepak.open(io.BytesIO(b"just some text that is no archive at all"), "nope")


def test_detect_samples() -> None:
    assert gamepak.detect(sample("pak/quakespasm.pak"))[0].format == "pak"
    assert gamepak.detect(sample("jpk/test1.jpk"))[0].format == "jpk"
    best = gamepak.detect(sample("jpk/garage_objects.jpk"))[0]
    assert best.has_magic and best.confidence >= 0.9


def test_detect_nothing_for_text() -> None:
    assert [d for d in gamepak.detect(io.BytesIO(b"hello, world\n" * 3)) if d.has_magic] == []
    with pytest.raises(UnknownFormatError):
        gamepak.open(io.BytesIO(b""))


def test_hostile_member_count_is_rejected_before_allocating() -> None:
    import struct

    # A JoePack claiming 2^32-1 members of 4 GiB names: refused from the header alone.
    data = b"JPK01.00" + struct.pack("<II", 0xFFFFFFFF, 0xFFFFFFFF)
    with pytest.raises(gamepak.CorruptArchiveError, match="past the end"):
        gamepak.open(io.BytesIO(data))
    # A PAK whose directory claims 2^31 bytes (2^25 members).
    data = b"PACK" + struct.pack("<ii", 12, 0x7FFFFFFF)
    with pytest.raises(gamepak.CorruptArchiveError, match="past the end"):
        gamepak.open(io.BytesIO(data))


def test_import_is_light() -> None:
    import subprocess
    import sys

    heavy = "{'numpy', 'click', 'rich', 'PIL', 'pygltflib', 'polib', 'isal', 'typing'}"
    code = f"import sys, gamepak; print(sorted({heavy} & set(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize("suffix", [".pak", ".jpk"])
def test_namelist_is_a_lazy_list_like_sequence(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"many{suffix}"
    names = [f"dir{index % 3}/file{index}.txt" for index in range(50)]
    with gamepak.create(path) as writer:
        for name in names:
            writer.add(name, name.encode())
    with gamepak.open(path) as archive:
        listed = archive.namelist()
        assert len(listed) == 50 and listed[0] == names[0] and listed[-1] == names[-1]
        assert listed._decoded is None  # type: ignore[attr-defined]  # single names decoded one by one
        assert listed[10:12] == names[10:12]
        with pytest.raises(IndexError):
            listed[50]
        assert listed == names and names == listed and listed != names[:-1]
        assert list(listed) == names and sorted(listed) == sorted(names)
        assert "dir1/file1.txt" in listed and listed.index("dir1/file1.txt") == 1
        assert listed.count(names[0]) == 1 and listed + ["x"] == [*names, "x"]
        assert json.loads(json.dumps(list(listed))) == names


# -- reading a member whole costs its size once (issue 20, finding 9) --------------------------
@pytest.mark.parametrize(
    ("format_name", "suffix", "options"),
    [
        ("pak", ".pak", {}),
        ("vpp", ".vpp_pc", {"flags": 1, "level": 1}),
        ("vpp", ".vpp_pc", {"flags": 3, "level": 1}),
        ("zip", ".zip", {"level": 1}),
        ("tar", ".tar.gz", {"level": 1}),
    ],
    ids=["pak", "vpp1", "vpp3", "zip", "tgz"],
)
def test_read_of_a_large_member_allocates_its_size_once(
    tmp_path: Path, format_name: str, suffix: str, options: dict[str, Any]
) -> None:
    import tracemalloc

    size = 24 << 20
    data = bytes(range(256)) * (size // 256)
    path = tmp_path / f"big{suffix}"
    with gamepak.create(path, format_name, **options) as writer:
        writer.add("small.txt", b"small")
        writer.add("big.bin", data)
    with gamepak.open(path) as archive:
        tracemalloc.start()
        try:
            read = archive.read("big.bin")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert type(read) is bytes and read == data
    # The member once, plus the decoder's own buffers and seek points (a few MiB, whatever the
    # size); chunks joined at the end would need the member twice.
    assert peak < size + (6 << 20)


def test_read_allocates_no_more_than_the_file_before_a_declared_size_arrives(tmp_path: Path) -> None:
    import struct
    import tracemalloc

    from gamepak.errors import CorruptArchiveError

    path = tmp_path / "liar.zip"
    with gamepak.create(path) as writer:
        writer.add("a.bin", b"hello" * 100)
    raw = bytearray(path.read_bytes())
    struct.pack_into("<I", raw, raw.find(b"PK\x01\x02") + 24, 0xF0000000)  # says 3.75 GiB
    path.write_bytes(bytes(raw))
    with gamepak.open(path) as archive:
        assert archive.getinfo("a.bin").size == 0xF0000000
        tracemalloc.start()
        try:
            with pytest.raises(CorruptArchiveError, match="member ends after 500 of its 4026531840 bytes"):
                archive.read("a.bin")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 4 << 20
