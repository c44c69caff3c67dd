"""The `gamepak://` fsspec protocol and the path tree it shares with the FUSE mount: every format,
nested packs, chains over memory:// and zip://, ranges, pandas, and what is refused."""

from __future__ import annotations

import io
import os
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import fsspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.errors import GamepakError
from gamepak.fs.fsspec import GamepakFileSystem
from gamepak.fs.tree import PackTree

# (id, format, writer options, member names): every reader, and each RFG data mode.
CASES = [
    ("pak", "pak", {}, True),
    ("jpk", "jpk", {}, True),
    ("vpp-plain", "vpp", {"flags": 0}, False),
    ("vpp-compressed", "vpp", {"flags": 1, "level": 6}, False),
    ("vpp-condensed", "vpp", {"flags": 2}, False),
    ("vpp-compressed-condensed", "vpp", {"flags": 3, "level": 6, "align": 16}, False),
    ("j2me-table", "j2me-table", {}, False),
    ("j2me-offsets", "j2me-offsets", {}, False),
    ("j2me-end-offsets", "j2me-end-offsets", {}, False),
    ("j2me-sized", "j2me-sized", {}, False),
]


def payload(seed: int, size: int) -> bytes:
    """Bytes that differ at every offset (a misplaced range shows)."""
    return bytes((index * 7 + seed * 13 + index // 251) % 256 for index in range(size))


def members_for(with_folders: bool, format_name: str) -> list[tuple[str, bytes]]:
    if format_name.startswith("j2me"):
        names = ["0", "1", "2", "3"]
    elif with_folders:
        names = ["textures/wall.wal", "maps/e1m1.bsp", "textures/sky/sky1.wal", "readme.txt"]
    else:
        names = ["wall.wal", "e1m1.bsp", "sky1.wal", "readme.txt"]
    sizes = [5000, 60000, 1, 0]
    return [(name, payload(index, size)) for index, (name, size) in enumerate(zip(names, sizes))]


def build(path: Path, format_name: str, options: dict[str, Any], members: list[tuple[str, bytes]]) -> Path:
    with gamepak.create(path, format_name, **options) as writer:
        for name, data in members:
            writer.add(name, data)
    return path


@pytest.fixture(params=CASES, ids=[case[0] for case in CASES])
def pack(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str]:
    case_id, format_name, options, with_folders = request.param
    suffix = {"vpp": ".vpp_pc", "pak": ".pak", "jpk": ".jpk"}.get(format_name, ".bin")
    path = build(tmp_path / f"{case_id}{suffix}", format_name, options, members_for(with_folders, format_name))
    return path, format_name


def expected_files(path: Path, format_name: str) -> dict[str, bytes]:
    """Every member's path (as `extract` names it) and bytes, read by the library."""
    with gamepak.open(path, format_name) as archive:
        return {archive.extraction_name(entry): archive.read(entry) for entry in archive.infolist()}


def test_every_format_lists_and_reads(pack: tuple[Path, str]) -> None:
    path, format_name = pack
    expected = expected_files(path, format_name)
    fs = fsspec.filesystem("gamepak", fo=str(path), format=format_name)
    assert sorted(fs.find("")) == sorted(expected)
    for name, data in expected.items():
        info = fs.info(name)
        assert info["type"] == "file" and info["size"] == len(data)
        assert fs.cat(name) == data
        with fs.open(name) as stream:
            assert stream.seekable()
            middle = len(data) // 2
            stream.seek(middle)
            assert stream.read(1000) == data[middle : middle + 1000]
            stream.seek(-min(1, len(data)), io.SEEK_END)
            assert stream.read() == data[-1:]
            stream.seek(0)
            assert stream.read() == data
        assert fs.cat_file(name, start=3, end=-2) == data[3:-2]
    fs.close()


def test_every_format_over_memory_and_zip(pack: tuple[Path, str], tmp_path: Path) -> None:
    path, format_name = pack
    expected = expected_files(path, format_name)
    memory = fsspec.filesystem("memory")
    memory.pipe(f"/{path.name}", path.read_bytes())
    zipped = tmp_path / "mod.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.write(path, f"game/{path.name}")
    name, data = max(expected.items(), key=lambda item: len(item[1]))
    urls = [
        f"gamepak://{name}::memory://{path.name}",
        f"gamepak://{name}::zip://game/{path.name}::file://{zipped}",
    ]
    for url in urls:
        with fsspec.open(url, gamepak={"format": format_name}) as stream:
            stream.seek(len(data) - 100)
            assert stream.read() == data[-100:]
            stream.seek(0)
            assert stream.read() == data
    chained, root = fsspec.core.url_to_fs(f"gamepak://::memory://{path.name}", gamepak={"format": format_name})
    assert sorted(chained.find(root)) == sorted(expected)
    memory.rm(f"/{path.name}")


def cat_bytes(*arguments: str) -> bytes:
    """What `gamepak cat` writes to stdout, byte for byte (run in this process)."""
    from gamepak.cli import main as run

    out = io.BytesIO()
    wrapper = io.TextIOWrapper(out)
    old_out = sys.stdout
    sys.stdout = wrapper
    try:
        assert run(["cat", *arguments]) == 0
    finally:
        wrapper.flush()
        sys.stdout = old_out
    return out.getvalue()


def test_same_bytes_as_gamepak_cat(pack: tuple[Path, str]) -> None:
    path, format_name = pack
    fs = GamepakFileSystem(fo=str(path), format=format_name)
    with gamepak.open(path, format_name) as archive:
        for entry in archive.infolist():
            assert fs.cat(archive.extraction_name(entry)) == cat_bytes("--format", format_name, str(path), entry.name)


def test_same_bytes_as_gamepak_cat_subprocess(tmp_path: Path) -> None:
    members = members_for(False, "vpp")
    path = build(tmp_path / "cat.vpp_pc", "vpp", {"flags": 3, "level": 6, "align": 16}, members)
    fs = GamepakFileSystem(fo=str(path))
    for name, _ in members:
        result = subprocess.run(
            [sys.executable, "-m", "gamepak", "cat", str(path), name], capture_output=True, check=True, timeout=60
        )
        assert fs.cat(name) == result.stdout


@pytest.fixture
def nested_pack(tmp_path: Path) -> Path:
    """outer.vpp_pc holding inner.str2_pc (compressed, condensed) and a PAK with folders."""
    inner = build(tmp_path / "inner.str2_pc", "vpp", {}, members_for(False, "vpp"))
    pak = build(tmp_path / "maps.pak", "pak", {}, members_for(True, "pak"))
    outer = tmp_path / "outer.vpp_pc"
    with gamepak.create(outer) as writer:
        writer.add("inner.str2_pc", inner)
        writer.add("maps.pak", pak)
        writer.add("notes.txt", b"not a pack")
    return outer


def test_nested_packs_are_folders(nested_pack: Path) -> None:
    fs = fsspec.filesystem("gamepak", fo=str(nested_pack))
    top = {entry["name"]: entry["type"] for entry in fs.ls("")}
    assert top == {"inner.str2_pc": "directory", "maps.pak": "directory", "notes.txt": "file"}
    assert fs.isdir("maps.pak/textures/sky")
    assert fs.ls("maps.pak/textures", detail=False) == ["maps.pak/textures/sky", "maps.pak/textures/wall.wal"]
    assert fs.cat("inner.str2_pc/e1m1.bsp") == payload(1, 60000)
    assert fs.cat("maps.pak/textures/sky/sky1.wal") == payload(2, 1)
    assert fs.info("maps.pak")["size"] == (nested_pack.parent / "maps.pak").stat().st_size
    with fsspec.open(f"gamepak://inner.str2_pc/wall.wal::{nested_pack}") as stream:
        stream.seek(4000)
        assert stream.read() == payload(0, 5000)[4000:]
    with pytest.raises(IsADirectoryError):
        fs.open("maps.pak")
    deeper = nested_pack.parent / "deeper.pak"
    with gamepak.create(deeper) as writer:
        writer.add("levels/outer.vpp_pc", nested_pack)
    deep = GamepakFileSystem(fo=str(deeper))
    assert deep.cat("levels/outer.vpp_pc/maps.pak/textures/sky/sky1.wal") == payload(2, 1)
    assert deep.cat("levels/outer.vpp_pc/inner.str2_pc/readme.txt") == payload(3, 0)
    flat = fsspec.filesystem("gamepak", fo=str(nested_pack), nested=False)
    assert flat.info("maps.pak")["type"] == "file"
    assert flat.cat("maps.pak") == (nested_pack.parent / "maps.pak").read_bytes()


def test_find_glob_walk_get(nested_pack: Path, tmp_path: Path) -> None:
    fs = GamepakFileSystem(fo=str(nested_pack))
    assert fs.glob("maps.pak/textures/*.wal") == ["maps.pak/textures/wall.wal"]
    assert fs.glob("**/sky1.wal") == ["inner.str2_pc/sky1.wal", "maps.pak/textures/sky/sky1.wal"]
    assert "maps.pak/textures" in fs.find("maps.pak", withdirs=True)
    walked = {root: sorted(files) for root, _, files in fs.walk("maps.pak")}
    assert walked["maps.pak/textures/sky"] == ["sky1.wal"]
    fs.get("maps.pak/maps/e1m1.bsp", str(tmp_path / "e1m1.bsp"))
    assert (tmp_path / "e1m1.bsp").read_bytes() == payload(1, 60000)
    fs.get("inner.str2_pc", str(tmp_path / "copied"), recursive=True)
    assert (tmp_path / "copied" / "wall.wal").read_bytes() == payload(0, 5000)
    assert fs.modified("notes.txt").timestamp() == pytest.approx(nested_pack.stat().st_mtime)


def test_file_object_is_read_by_ranges(tmp_path: Path) -> None:
    big = payload(5, 4 << 20)
    path = build(tmp_path / "big.pak", "pak", {}, [("big.bin", big), ("small.txt", b"x")])

    class Counting(io.FileIO):
        bytes_read = 0

        def read(self, size: int | None = -1) -> bytes:
            data = super().read(size)
            Counting.bytes_read += len(data)
            return data

        def readinto(self, buffer: Any) -> int:
            count = super().readinto(buffer)
            Counting.bytes_read += count or 0
            return count  # type: ignore[return-value]

        def fileno(self) -> int:
            raise OSError("no descriptor: force positioned reads through the object")

    with Counting(path, "rb") as handle:
        fs = GamepakFileSystem(fo=handle)
        before = Counting.bytes_read
        with fs.open("big.bin") as stream:
            stream.seek(3 << 20)
            assert stream.read(100) == big[3 << 20 : (3 << 20) + 100]
        assert fs.cat_file("big.bin", start=-10) == big[-10:]
        assert Counting.bytes_read - before < 1 << 20
        fs.close()
        assert not handle.closed  # the caller's file object stays open


def test_pandas_reads_a_csv_member(tmp_path: Path) -> None:
    pandas = pytest.importorskip("pandas", reason="pandas is in the test extra")
    csv = b"name,score\nranger,10\nogre,25\n"
    path = build(tmp_path / "data.pak", "pak", {}, [("tables/scores.csv", csv)])
    frame = pandas.read_csv(f"gamepak://tables/scores.csv::{path}")
    assert list(frame["name"]) == ["ranger", "ogre"] and frame["score"].sum() == 35


def test_protocol_found_through_the_entry_point(tmp_path: Path) -> None:
    path = build(tmp_path / "ep.jpk", "jpk", {}, [("a/b.txt", b"found")])
    code = (
        "import sys, fsspec\n"
        f"data = fsspec.open('gamepak://a/b.txt::{path}').open().read()\n"
        "print(data.decode(), 'gamepak.fs.fsspec' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert result.stdout.split() == ["found", "True"]


def test_refusals(tmp_path: Path, nested_pack: Path) -> None:
    fs = GamepakFileSystem(fo=str(nested_pack))
    with pytest.raises(FileNotFoundError):
        fs.info("missing.txt")
    with pytest.raises(FileNotFoundError):
        fs.cat("maps.pak/nope")
    with pytest.raises(NotADirectoryError):
        fs.ls("notes.txt/below")
    with pytest.raises(OSError):
        fs.open("notes.txt", "wb")
    with pytest.raises(ValueError):
        GamepakFileSystem(fo=str(nested_pack), mode="w")
    assert fs.ls("notes.txt", detail=False) == ["notes.txt"]
    garbage = tmp_path / "garbage.pak"
    garbage.write_bytes(b"PACK" + struct.pack("<ii", 12, 6400))
    with pytest.raises(GamepakError):
        GamepakFileSystem(fo=str(garbage))
    before = nested_pack.read_bytes()
    fs.cat("inner.str2_pc/e1m1.bsp")
    assert nested_pack.read_bytes() == before  # reading never writes


def hand_made_pak(members: list[tuple[bytes, bytes]]) -> bytes:
    """A Quake PAK from the spec's layout: header, data, 64-byte directory records."""
    data = b"".join(content for _, content in members)
    directory = b""
    offset = 12
    for name, content in members:
        directory += struct.pack("<56sii", name, offset, len(content))
        offset += len(content)
    return b"PACK" + struct.pack("<ii", 12 + len(data), len(directory)) + data + directory


def test_duplicates_and_unsafe_names(tmp_path: Path) -> None:
    path = tmp_path / "odd.pak"
    path.write_bytes(
        hand_made_pak(
            [
                (b"a.txt", b"first"),
                (b"a.txt", b"second"),
                (b"../escape.txt", b"no"),
                (b"/abs.txt", b"no"),
                (b"dir/file", b"in dir"),
                (b"dir", b"a file in the way"),
            ]
        )
    )
    fs = GamepakFileSystem(fo=str(path))
    # Quake loads the first copy: it owns the name, the other is a.txt.dup1 as `extract` writes it.
    assert fs.cat("a.txt") == b"first" and fs.cat("a.txt.dup1") == b"second"
    assert fs.cat("dir/file") == b"in dir"
    assert sorted(fs.find("")) == ["a.txt", "a.txt.dup1", "dir/file"]
    problems = " ".join(fs.tree.problems)
    assert "../escape.txt" in problems and "/abs.txt" in problems and "'dir'" in problems


def test_several_packs_in_one_tree(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    first = build(tmp_path / "a" / "same.pak", "pak", {}, [("x.txt", b"one")])
    second = build(tmp_path / "same.pak", "pak", {}, [("x.txt", b"two")])
    other = build(tmp_path / "other.jpk", "jpk", {}, [("y/z.txt", b"three")])
    archives = [gamepak.open(p) for p in (first, second, other)]
    tree = PackTree([(p.name, archive, 1.0) for p, archive in zip((first, second, other), archives)])
    assert sorted(tree.listdir("")) == ["other.jpk", "same.pak", "same.pak-2"]
    with tree.open(tree.lookup("same.pak-2/x.txt")) as stream:
        assert stream.read() == b"two"
    assert tree.lookup("other.jpk/y").is_dir and tree.lookup("other.jpk/y/z.txt").size == 5
    with pytest.raises(IsADirectoryError):
        tree.open(tree.lookup("other.jpk/y"))
    for archive in archives:
        archive.close()


def test_damaged_nested_packs(tmp_path: Path) -> None:
    # A nested PAK whose only name is empty (shown as an empty folder, and said why), and one
    # whose member lies past its end (not shown, as the library refuses it; the problem names it).
    nameless = b"PACK" + struct.pack("<ii", 12, 64) + struct.pack("<56sii", b"", 12, 0)
    past_end = b"PACK" + struct.pack("<ii", 12, 64) + struct.pack("<56sii", b"x.txt", 5000, 10)
    path = build(tmp_path / "outer.pak", "pak", {}, [("a.pak", nameless), ("b.pak", past_end), ("ok.txt", b"ok")])
    fs = GamepakFileSystem(fo=str(path))
    assert fs.ls("", detail=False) == ["a.pak", "b.pak", "ok.txt"]
    assert fs.ls("a.pak") == [] and any("a.pak" in problem and "empty name" in problem for problem in fs.tree.problems)
    assert fs.ls("b.pak", detail=False) == []
    assert any("b.pak" in problem and "x.txt" in problem for problem in fs.tree.problems)
    with pytest.raises(FileNotFoundError):
        fs.cat("b.pak/x.txt")
    assert fs.cat("ok.txt") == b"ok"


names = st.lists(
    st.lists(
        st.text(st.characters(min_codepoint=97, max_codepoint=100), min_size=1, max_size=3), min_size=1, max_size=3
    ),
    min_size=1,
    max_size=12,
    unique_by=lambda parts: "/".join(parts),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(paths=names, data=st.binary(max_size=300))
def test_property_every_member_reachable(
    tmp_path_factory: pytest.TempPathFactory, paths: list[list[str]], data: bytes
) -> None:
    folder = tmp_path_factory.mktemp("prop")
    members = [("/".join(parts), data + index.to_bytes(2, "little")) for index, parts in enumerate(paths)]
    path = build(folder / "p.pak", "pak", {}, members)
    fs = GamepakFileSystem(fo=str(path), nested=False)  # random bytes could be a pack
    found = set(fs.find(""))
    problems = fs.tree.problems
    for name, content in members:
        if name in found:
            assert fs.cat(name) == content
        else:  # only a member in another member's way may be left out, and it is reported
            assert any(repr(name) in problem for problem in problems)
    assert len(found) + len(problems) == len(members)
    fs.close()


def test_local_url_forms(tmp_path: Path) -> None:
    path = build(tmp_path / "u.pak", "pak", {}, [("m.txt", b"local")])
    for url in (f"gamepak://m.txt::{path}", f"gamepak://m.txt::file://{path}", f"gamepak://m.txt::local://{path}"):
        with fsspec.open(url) as stream:
            assert stream.read() == b"local"
    with open(path, "rb") as handle:
        fs = fsspec.filesystem("gamepak", fo=handle)
        assert fs.cat("m.txt") == b"local"
    opened = fsspec.open(f"file://{path}")  # an fsspec OpenFile, as the zip filesystem takes
    assert GamepakFileSystem(fo=opened).cat("m.txt") == b"local"
    assert os.path.exists(path)


def test_pickles_for_dask(nested_pack: Path) -> None:
    import pickle

    fs = fsspec.filesystem("gamepak", fo=str(nested_pack))
    copy = pickle.loads(pickle.dumps(fs))
    assert copy is not fs and copy.cat("maps.pak/readme.txt") == fs.cat("maps.pak/readme.txt") == payload(3, 0)
    opened = fsspec.open(f"gamepak://inner.str2_pc/wall.wal::{nested_pack}")
    with pickle.loads(pickle.dumps(opened)) as stream:
        assert stream.read() == payload(0, 5000)


def test_real_samples_read_like_the_library() -> None:
    from gamepak.core.nested import resolve

    from conftest import SAMPLES

    packs = [SAMPLES / name for name in ("pak/quakespasm.pak", "jpk/garage_objects.jpk", "jpk/test1.jpk")]
    packs += sorted(SAMPLES.glob("vpp/*.vpp_pc")) + sorted(SAMPLES.glob("vpp/*.str2_pc"))
    present = [path for path in packs if path.exists()]
    if not present:
        pytest.skip("no real sample packs (../shared/samples is absent)")
    for path in present:
        fs = GamepakFileSystem(fo=str(path))
        files = fs.find("")
        assert files, path
        with gamepak.open(path) as archive:
            for name in files:
                holder, entry = resolve(archive, name)
                assert fs.cat(name) == holder.read(entry), (path, name)
        fs.close()


def test_fuse_reads_by_path_keep_a_bounded_set_of_streams(tmp_path: Path) -> None:
    """With the kernel skipping OPEN/RELEASE, reads come by path: every byte is right, and at
    most OPEN_BY_PATH member streams stay open (no FUSE needed to check that)."""
    from gamepak.fs.fuse import OPEN_BY_PATH, PackOperations
    from gamepak.fs.tree import PackTree

    members = {f"m{index}.bin": bytes([index % 251]) * (1000 + index) for index in range(OPEN_BY_PATH + 10)}
    path = tmp_path / "many.str2_pc"  # compressed + condensed: streams that keep a position
    with gamepak.create(path) as writer:
        for name, data in members.items():
            writer.add(name, data)
    with gamepak.open(path) as archive:
        operations = PackOperations(PackTree([("", archive, 0.0)]))
        operations._no_open = True
        for name, data in [*members.items(), *list(members.items())[:3]]:
            assert operations.read(f"/{name}", 600, 400, 0) == data[400:1000]
        assert len(operations._by_path) == OPEN_BY_PATH


def test_members_the_library_refuses_are_not_shown(tmp_path: Path) -> None:
    """A hostile offset/size (0xFFFFFF00, 0xFFFFFFFF) is refused by the library; the tree must
    not show it as an empty file that reads without error."""
    good = hand_made_pak([(b"good.txt", b"fine")])
    directory_offset = struct.unpack_from("<i", good, 4)[0]
    hostile = struct.pack("<56sII", b"evil.bin", 0xFFFFFF00, 0xFFFFFFFF)
    data = bytearray(good)
    struct.pack_into("<i", data, 8, 128)
    path = tmp_path / "hostile.pak"
    path.write_bytes(bytes(data[:directory_offset]) + bytes(data[directory_offset:]) + hostile)
    fs = GamepakFileSystem(fo=str(path))
    assert sorted(fs.find("")) == ["good.txt"]
    assert fs.cat("good.txt") == b"fine"
    assert "evil.bin" in " ".join(fs.tree.problems)
