"""gamepak on a system with Windows' `os` module — an EMULATION, not Windows.

No machine here runs Windows, so these tests reduce CPython's `os` surface to what it has on
Windows (no pread/pwrite, no O_CLOEXEC/O_NOFOLLOW/O_DIRECTORY, no dir_fd, no fork, no
copy_file_range; `fcntl`, `resource` and `pwd` unimportable; a stand-in `msvcrt` whose locks
are mandatory byte ranges as on Windows: reads and writes of a locked range through another
handle are refused) and run the library and the CLI there: the portable fallbacks of
`gamepak.core.portable` must give the same results as the Linux fast paths. Real Windows runs
are the CI workflow's job (.github/workflows/ci.yml, once the project is hosted).
"""

from __future__ import annotations

import fcntl as real_fcntl
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

import gamepak

from conftest import in_process_cli

MISSING_ON_WINDOWS = (
    "pread",
    "pwrite",
    "preadv",
    "pwritev",
    "fork",
    "copy_file_range",
    "sendfile",
    "posix_fadvise",
    "sched_getaffinity",
    "O_CLOEXEC",
    "O_NOFOLLOW",
    "O_DIRECTORY",
)
# The same reduction for a whole process (the subprocess test): what `gamepak ls` meets at start.
REDUCE_OS = (
    "import os, sys\n"
    f"for name in {MISSING_ON_WINDOWS!r}:\n"
    "    if hasattr(os, name): delattr(os, name)\n"
    "os.supports_dir_fd = set()\n"
    "for name in ('fcntl', 'resource', 'pwd'): sys.modules[name] = None\n"
)


class MandatoryLocks:
    """`msvcrt.locking` as Windows has it: a MANDATORY byte-range lock, from the handle's current
    position. While a range is locked, every other handle's reads and writes of it are refused
    (ERROR_LOCK_VIOLATION, which CPython raises as PermissionError), in this process too; the
    lock goes when its handle is closed. Other processes are kept out by a real `flock` on the
    handle (the emulation's tests need no byte ranges across processes)."""

    LOCK_VIOLATION = "The process cannot access the file because another process has locked a portion of the file"

    def __init__(self) -> None:
        self.held: dict[tuple[int, int], list[tuple[int, int, int]]] = {}  # file -> (fd, start, end)

    @staticmethod
    def _file(fd: int) -> tuple[int, int]:
        status = real_fstat(fd)
        return status.st_dev, status.st_ino

    def locking(self, fd: int, mode: int, nbytes: int) -> None:
        start = real_lseek(fd, 0, os.SEEK_CUR)
        ranges = self.held.setdefault(self._file(fd), [])
        if mode == 0:  # LK_UNLCK
            ranges[:] = [held for held in ranges if held != (fd, start, start + nbytes)]
            real_fcntl.flock(fd, real_fcntl.LOCK_UN)
            return
        if any(start < end and held_start < start + nbytes for _, held_start, end in ranges):
            raise PermissionError(13, "Permission denied")
        try:
            real_fcntl.flock(fd, real_fcntl.LOCK_EX | real_fcntl.LOCK_NB)
        except BlockingIOError:
            raise PermissionError(13, "Permission denied") from None
        ranges.append((fd, start, start + nbytes))

    def refuse(self, fd: int, start: int, size: int) -> None:
        """PermissionError when another handle holds a lock on bytes [start, start + size)."""
        if not size or not self.held:
            return
        for holder, held_start, end in self.held.get(self._file(fd), ()):
            if holder != fd and start < end and held_start < start + size:
                raise PermissionError(13, self.LOCK_VIOLATION)

    def read(self, fd: int, size: int) -> bytes:
        self.refuse(fd, real_lseek(fd, 0, os.SEEK_CUR), size)
        return real_read(fd, size)

    def write(self, fd: int, data: bytes) -> int:
        self.refuse(fd, real_lseek(fd, 0, os.SEEK_CUR), len(data))
        return real_write(fd, data)

    def close(self, fd: int) -> None:
        for ranges in self.held.values():
            ranges[:] = [held for held in ranges if held[0] != fd]
        real_close(fd)


real_fstat, real_lseek, real_read, real_write, real_close = os.fstat, os.lseek, os.read, os.write, os.close


def _stand_in_msvcrt(locks: MandatoryLocks) -> types.ModuleType:
    module = types.ModuleType("msvcrt")
    module.LK_NBLCK = 2  # type: ignore[attr-defined]
    module.LK_UNLCK = 0  # type: ignore[attr-defined]
    module.locking = locks.locking  # type: ignore[attr-defined]
    return module


def reduce_os_to_windows(patch: pytest.MonkeyPatch) -> MandatoryLocks:
    """Remove from `os` (until `patch` is undone) what CPython lacks on Windows, and make its
    file locks mandatory as Windows' are (reads and writes through `os` of a range another
    handle locked are refused)."""
    for name in MISSING_ON_WINDOWS:
        patch.delattr(os, name, raising=False)
    patch.setattr(os, "supports_dir_fd", set())
    for name in ("fcntl", "resource", "pwd"):
        patch.setitem(sys.modules, name, None)
    locks = MandatoryLocks()
    patch.setitem(sys.modules, "msvcrt", _stand_in_msvcrt(locks))
    patch.setattr(os, "read", locks.read)
    patch.setattr(os, "write", locks.write)
    patch.setattr(os, "close", locks.close)
    return locks


@pytest.fixture
def windows_os(monkeypatch: pytest.MonkeyPatch) -> None:
    reduce_os_to_windows(monkeypatch)


def make_pak(path: Path, members: dict[str, bytes]) -> Path:
    with gamepak.create(path, "pak") as writer:
        for name, data in members.items():
            writer.add(name, data)
    return path


MEMBERS = {"maps/e1m1.bsp": b"bsp" * 1000, "sound/a.wav": b"RIFF" + bytes(range(256)), "readme.txt": b"hello"}


def test_the_emulation_removes_what_windows_lacks(windows_os: None) -> None:
    assert not hasattr(os, "pread") and not hasattr(os, "fork") and not os.supports_dir_fd
    with pytest.raises(ImportError):
        import fcntl  # noqa: F401
    from gamepak.core.portable import can_fork, has_folder_descriptors

    assert not has_folder_descriptors() and not can_fork()


def test_ls_and_cat_read_without_pread(windows_os: None, tmp_path: Path) -> None:
    pak = make_pak(tmp_path / "pak0.pak", MEMBERS)
    code, out, _ = in_process_cli("ls", str(pak))
    assert code == 0 and out.split() == list(MEMBERS)
    with gamepak.open(pak) as archive:
        assert [archive.read(name) for name in MEMBERS] == list(MEMBERS.values())


def test_extraction_by_path_writes_the_same_files(windows_os: None, tmp_path: Path) -> None:
    pak = make_pak(tmp_path / "pak0.pak", MEMBERS)
    with gamepak.open(pak) as archive:
        written = archive.extractall(tmp_path / "out", manifest=True)
    assert len(written) == len(MEMBERS)  # the members' files; the manifest is not one
    for name, data in MEMBERS.items():
        assert (tmp_path / "out" / name).read_bytes() == data
    assert (tmp_path / "out" / ".gamepak-manifest.json").exists()
    assert sorted(p.name for p in (tmp_path / "out").rglob("*") if "gamepak-" in p.name and p.suffix != ".json") == []
    # Existing files are kept unless overwriting is allowed.
    with gamepak.open(pak) as archive, pytest.raises(gamepak.GamepakError):
        archive.extractall(tmp_path / "out")
    (tmp_path / "out" / "readme.txt").write_bytes(b"changed")
    with gamepak.open(pak) as archive:
        archive.extractall(tmp_path / "out", overwrite=True)
    assert (tmp_path / "out" / "readme.txt").read_bytes() == b"hello"


@pytest.mark.parametrize("by_path", [False, True], ids=["folder descriptors", "by path (Windows)"])
def test_both_extraction_routes_list_and_count_the_members_not_the_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by_path: bool
) -> None:
    """`extractall(manifest=True)` and `extract --manifest --json` say the same on both routes:
    one file per member, the manifest written beside them but neither listed nor counted."""
    pak = make_pak(tmp_path / "pak0.pak", MEMBERS)
    if by_path:
        reduce_os_to_windows(monkeypatch)
    from gamepak.core.portable import has_folder_descriptors

    assert has_folder_descriptors() is not by_path
    with gamepak.open(pak) as archive:
        written = archive.extractall(tmp_path / "lib", manifest=True)
    root = (tmp_path / "lib").resolve()
    assert written == [str(root.joinpath(*name.split("/"))) for name in MEMBERS]
    assert (root / ".gamepak-manifest.json").is_file()
    code, out, err = in_process_cli("extract", str(pak), "-o", str(tmp_path / "cli"), "--manifest", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["members"] == len(MEMBERS) and [row["name"] for row in report["written"]] == list(MEMBERS)
    assert report["size"] == sum(map(len, MEMBERS.values()))
    assert (tmp_path / "cli" / ".gamepak-manifest.json").is_file()
    code, _, err = in_process_cli("extract", str(pak), "-o", str(tmp_path / "counted"), "--manifest")
    assert code == 0 and f"extracted {len(MEMBERS)} members" in err, err


def test_extraction_by_path_refuses_links_on_the_way(windows_os: None, tmp_path: Path) -> None:
    pak = make_pak(tmp_path / "pak0.pak", MEMBERS)
    outside = tmp_path / "outside"
    outside.mkdir()
    destination = tmp_path / "out"
    destination.mkdir()
    (destination / "maps").symlink_to(outside)
    with gamepak.open(pak) as archive, pytest.raises(gamepak.GamepakError):
        archive.extractall(destination)
    assert list(outside.iterdir()) == []


def test_in_place_edit_update_and_convert(windows_os: None, tmp_path: Path) -> None:
    pak = make_pak(tmp_path / "pak0.pak", MEMBERS)
    (tmp_path / "new.txt").write_bytes(b"new member")
    code, _, err = in_process_cli("add", str(pak), str(tmp_path / "new.txt"), "--name", "docs/new.txt")
    assert code == 0, err
    with gamepak.open(pak) as archive:
        assert archive.read("docs/new.txt") == b"new member" and archive.read("readme.txt") == b"hello"
    folder = tmp_path / "folder"
    with gamepak.open(pak) as archive:
        archive.extractall(folder)
    (folder / "readme.txt").write_bytes(b"updated")
    code, _, err = in_process_cli("update", str(pak), str(folder))
    assert code == 0, err
    with gamepak.open(pak) as archive:
        assert archive.read("readme.txt") == b"updated"
    code, _, err = in_process_cli("convert", str(pak), str(tmp_path / "pak0.zip"))
    assert code == 0, err
    with gamepak.open(tmp_path / "pak0.zip") as archive:
        assert archive.read("maps/e1m1.bsp") == MEMBERS["maps/e1m1.bsp"]


def test_the_editor_lock_uses_msvcrt(windows_os: None, tmp_path: Path) -> None:
    pak = make_pak(tmp_path / "pak0.pak", MEMBERS)
    with gamepak.edit(pak):
        with pytest.raises(gamepak.GamepakError, match="another gamepak process"):
            gamepak.edit(pak)


def test_the_emulated_lock_is_mandatory_as_on_windows(windows_os: None, tmp_path: Path) -> None:
    """A range one handle locked cannot be read or written through another (in this process
    too), as Windows' msvcrt.locking behaves; the lock ends with its handle."""
    import msvcrt

    path = make_pak(tmp_path / "pak0.pak", MEMBERS)
    holder = os.open(path, os.O_RDONLY)
    other = os.open(path, os.O_RDWR)
    try:
        os.lseek(holder, 0, os.SEEK_SET)
        msvcrt.locking(holder, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        os.lseek(other, 0, os.SEEK_SET)
        with pytest.raises(PermissionError):
            os.read(other, 16)
        with pytest.raises(PermissionError):
            os.write(other, b"x")
        os.lseek(other, 1, os.SEEK_SET)
        assert len(os.read(other, 4)) == 4  # outside the locked byte
        with pytest.raises(PermissionError):
            msvcrt.locking(other, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
    finally:
        os.close(holder)
    os.lseek(other, 0, os.SEEK_SET)
    assert os.read(other, 4) == b"PACK"
    os.close(other)


def test_an_edit_reads_and_writes_its_pack_under_the_mandatory_lock(windows_os: None, tmp_path: Path) -> None:
    """The editor's lock lies past the end of the pack: its own reads, in-place writes and
    other readers meanwhile are not refused (a lock on byte 0 refused them all on Windows)."""
    pak = make_pak(tmp_path / "pak0.pak", MEMBERS)
    with gamepak.edit(pak) as editor:
        with gamepak.open(pak) as reader:  # another handle, while the lock is held
            assert reader.read("readme.txt") == b"hello"
        editor.add("new.txt", b"appended in place")
        editor.add("readme.txt", b"replaced", replace=True)
    with gamepak.open(pak) as archive:
        assert archive.read("new.txt") == b"appended in place" and archive.read("readme.txt") == b"replaced"


def test_catalog_runs_without_fork(windows_os: None, tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    collection = tmp_path / "packs"
    collection.mkdir()
    make_pak(collection / "pak0.pak", MEMBERS)
    code, _, err = in_process_cli("catalog", str(collection), "-o", str(tmp_path / "cat"), "--scheduler", "synchronous")
    assert code == 0, err


def test_a_whole_process_with_windows_os_lists_and_extracts(tmp_path: Path) -> None:
    pak = make_pak(tmp_path / "pak0.pak", MEMBERS)
    script = REDUCE_OS + (
        "from gamepak.cli import main\n"
        f"code = main(['ls', {str(pak)!r}])\n"
        f"code = code or main(['extract', {str(pak)!r}, '-o', {str(tmp_path / 'out')!r}])\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().split() == list(MEMBERS)
    assert (tmp_path / "out" / "maps" / "e1m1.bsp").read_bytes() == MEMBERS["maps/e1m1.bsp"]


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("CON", "reserved"),
        ("sound/aux.wav", "reserved"),
        ("lpt9.txt", "reserved"),
        ("maps/a:b.bsp", "does not allow"),
        ("what?.txt", "does not allow"),
        ("bell\x07.txt", "does not allow"),
        ("readme.", "dot or a space"),
        ("folder /x", "dot or a space"),
        ("a\\b.txt", "backslash"),
        ("C:x.txt", "drive letter"),
    ],
)
def test_names_windows_cannot_hold(name: str, reason: str) -> None:
    from gamepak.core.names import windows_name_problem

    problem = windows_name_problem(name)
    assert problem is not None and reason in problem


@pytest.mark.parametrize("name", ["maps/e1m1.bsp", "console.txt", "com10.txt", "nul_texture.dds", "a.b.c"])
def test_names_windows_can_hold(name: str) -> None:
    from gamepak.core.names import windows_name_problem

    assert windows_name_problem(name) is None


def test_extract_with_windows_names_refuses_before_writing(tmp_path: Path) -> None:
    pak = make_pak(tmp_path / "pak0.pak", {"Readme.txt": b"1", "README.TXT": b"2", "aux.wav": b"3", "ok.txt": b"4"})
    code, _, err = in_process_cli("extract", str(pak), "-o", str(tmp_path / "out"), "--windows-names")
    assert code == 1
    assert "README.TXT" in err and "aux.wav" in err
    assert not (tmp_path / "out").exists()
    # Without the option on Linux, every member is written (the file system can hold them).
    code, _, err = in_process_cli("extract", str(pak), "-o", str(tmp_path / "linux"))
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "linux").iterdir()) == ["README.TXT", "Readme.txt", "aux.wav", "ok.txt"]


@pytest.mark.parametrize("members", [None, ["Readme.txt", "README.TXT", "aux.wav"]], ids=["every member", "named"])
def test_windows_names_are_checked_on_both_extraction_routes(members: list[str] | None, tmp_path: Path) -> None:
    """Every member goes through the directory's columns, named members entry by entry: both
    refuse before writing anything."""
    pak = make_pak(tmp_path / "pak0.pak", {"Readme.txt": b"1", "README.TXT": b"2", "aux.wav": b"3", "ok.txt": b"4"})
    with gamepak.open(pak) as archive, pytest.raises(gamepak.UnsafePathError, match="aux.wav"):
        archive.extractall(tmp_path / "out", members, windows_names=True)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_case_insensitive_destination_emulated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """macOS's APFS folds case: the rules apply there by themselves (emulated by sys.platform)."""
    monkeypatch.setattr(sys, "platform", "darwin")
    pak = make_pak(tmp_path / "pak0.pak", {"Readme.txt": b"1", "README.TXT": b"2"})
    with gamepak.open(pak) as archive, pytest.raises(gamepak.UnsafePathError, match="only in case"):
        archive.extractall(tmp_path / "out")


def _every_command(tmp_path: Path) -> list[list[str]]:
    pak = make_pak(tmp_path / "pak0.pak", MEMBERS)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.txt").write_bytes(b"a")
    (tmp_path / "extra.txt").write_bytes(b"extra")
    return [
        ["info", str(pak)],
        ["ls", "-l", "--json", str(pak)],
        ["cat", str(pak), "readme.txt"],
        ["verify", str(pak)],
        ["detect", str(pak)],
        ["formats"],
        ["create", str(tmp_path / "new.jpk"), str(tmp_path / "src")],
        ["extract", str(pak), "maps/*", "-o", str(tmp_path / "some")],
        ["add", str(pak), str(tmp_path / "extra.txt")],
        ["mv", str(pak), "extra.txt", "docs/extra.txt"],
        ["rm", str(pak), "docs/extra.txt"],
        ["compact", str(pak)],
        ["diff", str(pak), str(pak)],
        ["convert", str(pak), str(tmp_path / "pak0.tar")],
    ]


def test_every_command_gives_the_same_results_under_the_emulation(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    results = {}
    for label in ("linux", "windows"):
        folder = tmp_path / label
        folder.mkdir()
        commands = _every_command(folder)
        with monkeypatch.context() as patch:
            if label == "windows":
                reduce_os_to_windows(patch)
            outcome = []
            for command in commands:
                code, out, err = in_process_cli(*command)
                outcome.append((command[0], code, out.replace(str(folder), "<dir>"), err.replace(str(folder), "<dir>")))
        results[label] = outcome
        assert (folder / "pak0.tar").exists()
    assert results["windows"] == results["linux"]
    assert all(code == 0 for _, code, _, _ in results["linux"]), results["linux"]


def test_member_names_typed_with_backslashes(tmp_path: Path) -> None:
    """cmd and PowerShell complete paths with backslashes: cat, extract, rm and mv take them."""
    pak = make_pak(tmp_path / "pak0.pak", MEMBERS)
    code, out, _ = in_process_cli("cat", str(pak), "maps\\e1m1.bsp")
    assert code == 0 and out.encode() == MEMBERS["maps/e1m1.bsp"]
    code, _, err = in_process_cli("extract", str(pak), "sound\\*", "-o", str(tmp_path / "out"))
    assert code == 0, err
    assert (tmp_path / "out" / "sound" / "a.wav").read_bytes() == MEMBERS["sound/a.wav"]
    assert in_process_cli("mv", str(pak), "maps\\e1m1.bsp", "maps\\start.bsp")[0] == 0
    assert in_process_cli("rm", str(pak), "sound\\a.wav")[0] == 0
    with gamepak.open(pak) as archive:
        assert archive.namelist() == ["maps/start.bsp", "readme.txt"]
