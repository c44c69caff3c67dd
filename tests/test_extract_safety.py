"""The one safe extraction path: hostile names, symlinks, overwrites, atomic files."""

from __future__ import annotations

import io
import os
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.core.names import safe_parts
from gamepak.errors import OutputExistsError, UnsafePathError

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
    import gamepak.ops.copier

    monkeypatch.setattr(gamepak.ops.copier, "_THREAD_BYTES", 1000)
    contents = {f"big{index}.bin": os.urandom(5000 + index) for index in range(3)}
    with gamepak.create(tmp_path / "x.pak") as writer:
        for name, data in contents.items():
            writer.add(name, data)
    with gamepak.open(tmp_path / "x.pak") as archive:
        archive.extractall(tmp_path / "out")
    assert {name: (tmp_path / "out" / name).read_bytes() for name in contents} == contents


# -- issue 13, part 5: what fuzzing found in extraction ---------------------------------------


def pak_of(members: list[tuple[bytes, bytes]]) -> bytes:
    """A PAK by hand (the writers refuse duplicates): each member's own data."""
    body = b""
    records = b""
    for name, data in members:
        records += name.ljust(56, b"\0") + struct.pack("<ii", 12 + len(body), len(data))
        body += data
    return b"PACK" + struct.pack("<ii", 12 + len(body), len(records)) + body + records


def rfg_with_duplicates(tmp_path: Path) -> Path:
    """An uncompressed RFG pack holding `x`, `x`, `x.dup1` (written as `x`, `y`, `x.dup1`, then
    the second name patched: writers refuse duplicates)."""
    path = tmp_path / "dups.vpp_pc"
    with gamepak.create(path, "vpp", flags=0) as writer:
        writer.add("x", b"first")
        writer.add("y", b"second")
        writer.add("x.dup1", b"third")
    data = bytearray(path.read_bytes())
    spot = data.index(b"x\0y\0x.dup1\0")  # the name block
    data[spot + 2 : spot + 3] = b"x"
    path.write_bytes(bytes(data))
    return path


def test_duplicate_suffixes_are_free_names_pak(tmp_path: Path) -> None:
    pak = tmp_path / "dups.pak"
    pak.write_bytes(pak_of([(b"x", b"first"), (b"x", b"second"), (b"x.dup1", b"third")]))
    with gamepak.open(pak) as archive:
        written = archive.extractall(tmp_path / "out", manifest=True)
    contents = sorted(Path(path).read_bytes() for path in written)
    assert contents == [b"first", b"second", b"third"]  # nothing overwritten
    assert (tmp_path / "out" / "x").read_bytes() == b"first"  # Quake loads the first copy
    assert (tmp_path / "out" / "x.dup1").read_bytes() == b"third"
    assert len(set(written)) == 3
    code, _, err = in_process_cli("create", str(tmp_path / "again.pak"), str(tmp_path / "out"))
    assert code == 0, err
    assert (tmp_path / "again.pak").read_bytes() == pak.read_bytes()


def test_duplicate_suffixes_are_free_names_rfg(tmp_path: Path) -> None:
    with gamepak.open(rfg_with_duplicates(tmp_path)) as archive:
        assert archive.namelist() == ["x", "x", "x.dup1"]
        written = archive.extractall(tmp_path / "out")
    assert sorted(Path(path).read_bytes() for path in written) == [b"first", b"second", b"third"]
    assert (tmp_path / "out" / "x").read_bytes() == b"first"


def long_name_pack(tmp_path: Path, name: str) -> Path:
    path = tmp_path / "long.jpk"
    with gamepak.create(path, "jpk") as writer:
        writer.add(name, b"data")
    return path


@pytest.mark.parametrize("name", ["n" * 300, "folder/" + "n" * 300, "é" * 130])
def test_names_past_the_file_system_limit_are_refused_cleanly(tmp_path: Path, name: str) -> None:
    with gamepak.open(long_name_pack(tmp_path, name)) as archive:
        with pytest.raises(UnsafePathError, match="bytes") as caught:
            archive.extractall(tmp_path / "out")
    assert name[:10] in str(caught.value)
    assert not (tmp_path / "out").exists()
    code, _, err = in_process_cli("extract", str(tmp_path / "long.jpk"), "-o", str(tmp_path / "out"))
    assert code == 1 and "refusing member" in err and "Traceback" not in err


@pytest.mark.parametrize("existing", [False, True])
def test_names_near_the_limit_extract(tmp_path: Path, existing: bool) -> None:
    name = "n" * 250
    destination = tmp_path / "out"
    if existing:
        destination.mkdir()  # the member gets a temporary name beside its final one
    with gamepak.open(long_name_pack(tmp_path, name)) as archive:
        archive.extractall(destination)
        archive.extractall(destination, overwrite=True)
    assert (destination / name).read_bytes() == b"data"
    assert os.listdir(destination) == [name]


def test_atomic_temporary_names_respect_the_limit(tmp_path: Path) -> None:
    from gamepak.core.atomic import NAME_MAX, temporary_name, write_bytes

    for base in ["a" * 255, "é" * 127, "x"]:
        assert len(os.fsencode(temporary_name(base))) <= NAME_MAX
    write_bytes(tmp_path / ("a" * 255), b"ok")
    assert (tmp_path / ("a" * 255)).read_bytes() == b"ok"


@pytest.mark.parametrize(
    ("names", "error"),
    [
        ([b"deep/er/good.txt", b"../evil.txt"], UnsafePathError),
        ([b"deep/er/good.txt", b"taken.txt"], OutputExistsError),
        ([b"deep/er/good.txt", b"link/x.txt"], UnsafePathError),
    ],
)
def test_refused_extraction_writes_nothing(tmp_path: Path, names: list[bytes], error: type[Exception]) -> None:
    destination = tmp_path / "out"
    destination.mkdir()
    (destination / "taken.txt").write_text("mine")
    os.symlink(tmp_path, destination / "link")
    before = files_under(destination)
    with pytest.raises(error):
        gamepak.open(io.BytesIO(pak_with(names)), "pak").extractall(destination)
    assert files_under(destination) == before


def test_member_named_like_the_manifest_is_renamed_with_a_note(tmp_path: Path) -> None:
    pak = tmp_path / "m.pak"
    pak.write_bytes(pak_of([(b".gamepak-manifest.json", b'{"not": "ours"}'), (b"a.txt", b"a")]))
    for manifest in (False, True):
        destination = tmp_path / f"out{manifest}"
        with gamepak.open(pak) as archive, pytest.warns(UserWarning, match="manifest"):
            written = archive.extractall(destination, manifest=manifest)
        assert Path(written[0]).name == ".gamepak-manifest.json.dup0"
        assert Path(written[0]).read_bytes() == b'{"not": "ours"}'
        from gamepak.ops.manifest import read_manifest

        document = read_manifest(destination)
        assert (document is not None) == manifest
    code, _, err = in_process_cli("extract", str(pak), "-o", str(tmp_path / "cli"))
    assert code == 0 and "warning" in err and ".dup0" in err
    assert in_process_cli("create", str(tmp_path / "again.pak"), str(tmp_path / "outTrue"))[0] == 0
    assert (tmp_path / "again.pak").read_bytes() == pak.read_bytes()


def dead_pid() -> int:
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_stale_temporaries_of_dead_processes_are_removed(tmp_path: Path) -> None:
    from gamepak.core.atomic import write_bytes

    pid = dead_pid()
    (tmp_path / f".a.bin.gamepak-{pid}-0.tmp").write_bytes(b"partial")
    (tmp_path / f".out.gamepak-{pid}-7.tmp").mkdir()
    (tmp_path / f".out.gamepak-{pid}-7.tmp" / "inside.bin").write_bytes(b"x")
    live = tmp_path / f".b.bin.gamepak-{os.getppid()}-0.tmp"  # a running process's: kept
    live.write_bytes(b"busy")
    (tmp_path / "keep.gamepak-1-0.tmp").write_bytes(b"not ours: no leading dot")
    write_bytes(tmp_path / "new.bin", b"new")
    assert sorted(os.listdir(tmp_path)) == sorted([live.name, "keep.gamepak-1-0.tmp", "new.bin"])


KILLED_RUN = """
import os, sys
import gamepak, gamepak.ops.safe_tree

def killed(self):
    os.kill(os.getpid(), 9)  # every member written, nothing published yet

gamepak.ops.safe_tree.TreeWriter.publish = killed
gamepak.open(sys.argv[1]).extractall(sys.argv[2])
"""


@pytest.mark.parametrize("existing", [False, True])
def test_killed_extraction_leaves_only_temporaries_that_the_next_run_removes(tmp_path: Path, existing: bool) -> None:
    import subprocess
    import sys

    names = [f"d{index % 3}/f{index}.bin".encode() for index in range(300)] + [b"top.bin"]
    pak = tmp_path / "x.pak"
    pak.write_bytes(pak_with(names))
    work = tmp_path / "work"
    work.mkdir()
    destination = work / "out"
    if existing:
        destination.mkdir()
    result = subprocess.run([sys.executable, "-c", KILLED_RUN, str(pak), str(destination)])
    assert result.returncode == -9
    leftovers = [path for path in work.rglob("*") if ".gamepak-" in path.name]
    assert leftovers and not (destination / "top.bin").exists()
    with gamepak.open(pak) as archive:
        archive.extractall(destination)
    assert not [path for path in work.rglob("*") if ".gamepak-" in path.name]
    assert len([path for path in destination.rglob("*") if path.is_file()]) == len(names)


def test_truncated_pack_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    # The directory first, then 300 members of 1000 bytes, cut after a third of them.
    start = 12 + 300 * 64
    directory = b"".join(
        f"f{index:03d}.bin".encode().ljust(56, b"\0") + struct.pack("<ii", start + index * 1000, 1000)
        for index in range(300)
    )
    pak = tmp_path / "cut.pak"
    pak.write_bytes(b"PACK" + struct.pack("<ii", 12, len(directory)) + directory + b"d" * 100_000)
    destination = tmp_path / "out"
    with gamepak.open(pak) as archive, pytest.raises(gamepak.CorruptArchiveError, match="past the end"):
        archive.extractall(destination)
    assert not destination.exists()


WORKER_FAILS = """
import os, sys, time
import gamepak, gamepak.ops.copy_workers

real_pread = os.pread
def pread(fd, size, offset):
    if os.getpid() != parent and size in (7, 4):
        # A forked worker meets a file cut short under it: 3 bytes, then nothing.
        return real_pread(fd, 3, offset) if size == 7 else b""
    return real_pread(fd, size, offset)

real_preadv = os.preadv
def preadv(fd, buffers, offset):
    if os.getpid() != parent:
        # Small members are read several at a time: the same file, 3 bytes left of it.
        return real_preadv(fd, [memoryview(buffers[0])[:3]], offset)
    return real_preadv(fd, buffers, offset)

parent = os.getpid()
os.pread = pread
os.preadv = preadv
if hasattr(os, "sendfile"):
    del os.sendfile  # read with pread/preadv (test_extract_sendfile: members sent by the kernel)
real_take = gamepak.ops.copy_workers._take
def take(queue):
    if os.getpid() == parent:
        time.sleep(0.05)  # let the forked worker take batches too
    return real_take(queue)
gamepak.ops.copy_workers._take = take
seen = []
try:
    gamepak.open(sys.argv[1]).extractall(sys.argv[2], progress=seen.append)
except gamepak.CorruptArchiveError as exc:
    print("refused:", exc)
else:
    print("extracted", len(seen))
"""


@pytest.mark.parametrize("fail", [False, True])
def test_forked_workers_report_progress_and_failures(tmp_path: Path, fail: bool) -> None:
    import subprocess
    import sys

    names = [f"d{index % 7}/f{index}.bin".encode() for index in range(600)]
    pak = tmp_path / "x.pak"
    pak.write_bytes(pak_with(names))
    code = WORKER_FAILS if fail else WORKER_FAILS.replace("size in (7, 4)", "size == -1")
    result = subprocess.run(
        [sys.executable, "-c", code, str(pak), str(tmp_path / "out")], capture_output=True, text=True, check=True
    )
    if fail:
        assert result.stdout.startswith("refused:") and "truncated" in result.stdout
        assert not (tmp_path / "out").exists()
        assert not [name for name in os.listdir(tmp_path) if ".gamepak-" in name]
    else:
        assert result.stdout.strip() == "extracted 600"
        assert all(path.read_bytes() == b"payload" for path in (tmp_path / "out").rglob("*.bin"))


@given(st.lists(st.text(alphabet="ab/.\\:\0é", max_size=8), min_size=1, max_size=6))
@settings(deadline=None)  # a whole check per example: under load it passed 200 ms (flaky, not slow code)
def test_bulk_name_check_agrees_with_the_per_name_check(names: list[str]) -> None:
    from gamepak.ops.safe_tree import all_plain

    if all_plain(names):
        assert all("/".join(safe_parts(name)) == name for name in names)
    for name in names:
        try:
            expected = "/".join(safe_parts(name))
        except UnsafePathError:
            continue
        if all_plain([name]):
            assert expected == name


def test_a_folder_appearing_meanwhile_is_a_gamepak_error_and_nothing_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gamepak.ops.extract

    destination = tmp_path / "out"
    destination.mkdir()
    real = gamepak.ops.extract._write_members

    def and_someone_else_writes(*arguments: object) -> None:
        real(*arguments)  # type: ignore[arg-type]
        (destination / "d").mkdir()
        (destination / "d" / "theirs.txt").write_text("theirs")

    monkeypatch.setattr(gamepak.ops.extract, "_write_members", and_someone_else_writes)
    archive = gamepak.open(io.BytesIO(pak_with([b"d/a.txt", b"d/b.txt"])), "pak")
    with pytest.raises(gamepak.GamepakError, match="cannot extract"):
        archive.extractall(destination)
    assert files_under(destination) == {"d", "d/theirs.txt"}


LOW_FD_LIMIT = """
import resource, sys
import gamepak
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
written = gamepak.open(sys.argv[1]).extractall(sys.argv[2])
print(len(written), resource.getrlimit(resource.RLIMIT_NOFILE)[0])
"""


def test_more_folders_than_the_open_file_limit(tmp_path: Path) -> None:
    import subprocess
    import sys

    names = [f"f{index}/g/x.bin".encode() for index in range(300)]
    pak = tmp_path / "x.pak"
    pak.write_bytes(pak_with(names))
    result = subprocess.run(
        [sys.executable, "-c", LOW_FD_LIMIT, str(pak), str(tmp_path / "out")], capture_output=True, text=True
    )
    assert result.stdout.split() == ["300", "256"], result.stderr  # the limit is restored afterwards
    assert (tmp_path / "out" / "f299" / "g" / "x.bin").read_bytes() == b"payload"


@pytest.mark.parametrize("names", [[b"a", b"a/b.txt"], [b"a/b/c.txt", b"a/b"], [b"x/a", b"x/a/b/c"]])
def test_member_file_in_the_way_of_a_folder_in_a_new_destination(tmp_path: Path, names: list[bytes]) -> None:
    archive = gamepak.open(io.BytesIO(pak_with(names)), "pak")
    with pytest.raises(gamepak.GamepakError, match="in the way"):
        archive.extractall(tmp_path / "new")
    assert not (tmp_path / "new").exists()


def test_kill_at_any_moment_leaves_all_or_nothing(tmp_path: Path) -> None:
    """kill -9 of `gamepak extract` at a few moments: the new folder is absent or complete, and the
    next extraction leaves no temporaries behind."""
    import subprocess
    import sys

    from test_edit_crash import kill_at

    names = [f"d{index % 13}/f{index}.bin".encode() for index in range(3000)]
    pak = tmp_path / "x.pak"
    pak.write_bytes(pak_with(names, data=b"p" * 2000))
    work = tmp_path / "work"
    work.mkdir()
    landed = []
    for trial, stop_at in enumerate((1, 50, 1000, 1500)):
        destination = work / f"out{trial}"

        def extract(destination: Path = destination) -> None:
            # One process writes every file (in the child only): the traced calls are this
            # process's, so a kill at call N lands at the Nth file-changing call of the whole
            # extraction, whether or not a second core would have taken half of it.
            from gamepak.ops import copier

            copier._worker_count = lambda: 1
            assert in_process_cli("extract", str(pak), "-o", str(destination))[0] == 0

        # Killed just before its file-changing call `stop_at` (traced, not a random delay).
        landed.append(kill_at(extract, stop_at))
        if destination.exists():
            assert len([path for path in destination.rglob("*") if path.is_file()]) == len(names)
        # The next command (a new process) writing in that folder removes the temporaries.
        subprocess.run([sys.executable, "-m", "gamepak", "extract", str(pak), "-o", str(work / f"again{trial}")])
        assert not [path for path in work.iterdir() if ".gamepak-" in path.name]
    assert all(landed), f"kills that came after the extraction ended: {landed}"


@pytest.mark.parametrize("by_path", [False, True], ids=["folder descriptors", "by path (Windows)"])
def test_write_files_is_extractions_safe_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by_path: bool) -> None:
    """What gamepak makes from members (texture images) goes through the same
    checks as extraction: hostile names refused, no folder on the way a link, existing files
    kept, and the set written all at once or not at all."""
    from gamepak.ops import made_files
    from gamepak.ops.made_files import write_files

    if by_path:
        monkeypatch.setattr(made_files, "has_folder_descriptors", lambda: False)

    out = tmp_path / "out"
    written = write_files(out, [("a/b.png", b"one"), ("c.png", b"two")])
    assert sorted(written) == [str(out / "a" / "b.png"), str(out / "c.png")]
    assert (out / "a" / "b.png").read_bytes() == b"one"
    for name in ("../evil.png", "/etc/evil.png", "a/../../evil.png"):
        with pytest.raises(UnsafePathError):
            write_files(out, [("fine.png", b"x"), (name, b"x")])
    assert not (tmp_path / "evil.png").exists() and not (out / "fine.png").exists()
    # One file already there: nothing of the set is written; with overwrite, all of it.
    with pytest.raises(OutputExistsError):
        write_files(out, [("new.png", b"x"), ("c.png", b"changed")])
    assert not (out / "new.png").exists() and (out / "c.png").read_bytes() == b"two"
    write_files(out, [("new.png", b"x"), ("c.png", b"changed")], overwrite=True)
    assert (out / "c.png").read_bytes() == b"changed"
    with pytest.raises(gamepak.GamepakError, match="two outputs"):
        write_files(out, [("d.png", b"1"), ("./d.png", b"2")])
    outside = tmp_path / "outside"
    outside.mkdir()
    (out / "link").symlink_to(outside)
    with pytest.raises(UnsafePathError):
        write_files(out, [("link/x.png", b"x")])
    assert list(outside.iterdir()) == []
    if not by_path:  # a failure half-way through leaves nothing of the set
        calls = []

        def full_disk(fd: int, data: bytes) -> None:
            calls.append(fd)
            if len(calls) == 2:
                raise OSError(28, "No space left on device")
            os.write(fd, data)

        monkeypatch.setattr(made_files, "write_all", full_disk)
        with pytest.raises(gamepak.GamepakError, match="No space left"):
            write_files(out, [("e/1.png", b"1"), ("e/2.png", b"2"), ("3.png", b"3")])
        assert not (out / "e").exists() and not (out / "3.png").exists()
    assert [path.name for path in out.rglob("*") if "gamepak-" in path.name] == []


# -- members sharing their bytes --------------------------------------------------------------
def _pak_sharing(path: Path, data: bytes, names: list[str]) -> Path:
    """A PAK whose members all point at the same stored bytes."""
    directory = b"".join(struct.pack("<56sii", name.encode(), 12, len(data)) for name in names)
    path.write_bytes(struct.pack("<4sii", b"PACK", 12 + len(data), len(directory)) + data + directory)
    return path


def test_members_read_over_and_over_are_refused_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A small PAK listing many members over the same bytes would write many times its size:
    refused with one line naming the file, nothing written; a few names over shared bytes (a
    pack that stores one file under two names) extract as they are, and so do chosen members."""
    import gamepak.core.archive as archive_module
    from gamepak.errors import CorruptArchiveError

    monkeypatch.setattr(archive_module, "SHARED_BYTES_FLOOR", 1 << 10)
    data = bytes(range(256)) * 64  # 16 KiB
    bomb = _pak_sharing(tmp_path / "bomb.pak", data, [f"f{number}.bin" for number in range(8)])
    with gamepak.open(bomb) as archive, pytest.raises(CorruptArchiveError, match=r"members share their stored bytes"):
        archive.extractall(tmp_path / "out")
    assert not (tmp_path / "out").exists()
    code, _, err = in_process_cli("extract", str(bomb), "-o", str(tmp_path / "out"))
    assert code == 1 and "bomb.pak" in err and "more than once" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()
    code, _, err = in_process_cli("verify", str(bomb))  # said before anyone extracts it
    assert code == 0 and "warning: " in err and "extract refuses the whole archive: members share" in err
    with gamepak.open(bomb) as archive:
        archive.extractall(tmp_path / "two", members=["f1.bin", "f2.bin"])
    assert (tmp_path / "two" / "f2.bin").read_bytes() == data
    twice = _pak_sharing(tmp_path / "twice.pak", data, ["a.bin", "b.bin"])
    with gamepak.open(twice) as archive:
        archive.extractall(tmp_path / "dedup")
    assert (tmp_path / "dedup" / "b.bin").read_bytes() == data


def test_zip_members_over_one_compressed_kernel_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The overlapping zip bomb: many central directory records naming one local file and its
    deflated bytes; refused from the directory, before anything is inflated."""
    import zipfile
    import zlib

    import gamepak.core.archive as archive_module
    from gamepak.errors import CorruptArchiveError

    monkeypatch.setattr(archive_module, "SHARED_BYTES_FLOOR", 1 << 10)
    plain = b"\0" * (1 << 20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = compressor.compress(plain) + compressor.flush()
    crc = zlib.crc32(plain)
    name = b"k.bin"
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc, len(packed), len(plain), len(name), 0)
    body = local + name + packed
    central = b""
    count = 600
    for number in range(count):
        member = f"m{number:04}.bin".encode()
        central += (
            struct.pack(
                "<IHHHHHHIIIHHHHHII",
                0x02014B50,
                20,
                20,
                0,
                8,
                0,
                0,
                crc,
                len(packed),
                len(plain),
                len(member),
                0,
                0,
                0,
                0,
                0,
                0,
            )
            + member
        )
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, len(central), len(body), 0)
    bomb = tmp_path / "bomb.zip"
    bomb.write_bytes(body + central + end)
    assert len(zipfile.ZipFile(bomb).namelist()) == count
    with gamepak.open(bomb) as archive, pytest.raises(CorruptArchiveError, match=r"members share their stored bytes"):
        archive.extractall(tmp_path / "out")
    assert not (tmp_path / "out").exists()
