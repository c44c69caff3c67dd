"""`gamepak mount` / `gamepak unmount`: real FUSE mounts in a subprocess, compared with `extract`.

These need libfuse 3 (the `fuse3` package) and /dev/fuse; without them they skip saying so
(`.ci/run` installs fuse3 when it can). They are few on purpose: the path mapping they share with
the fsspec protocol is tested at length in test_fs.py.
"""

from __future__ import annotations

import ctypes.util
import errno
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import gamepak

from conftest import run_cli


def fuse_missing() -> str | None:
    """Why this machine cannot mount, or None."""
    if not os.path.exists("/dev/fuse"):
        return "/dev/fuse is absent (no FUSE in this machine or container)"
    if not os.access("/dev/fuse", os.R_OK | os.W_OK):
        return "/dev/fuse is not readable and writable by this user"
    if os.environ.get("FUSE_LIBRARY_PATH") is None and ctypes.util.find_library("fuse3") is None:
        return "libfuse 3 is not installed (the fuse3 package)"
    if shutil.which("fusermount3") is None:
        return "fusermount3 is not installed (the fuse3 package)"
    return None


needs_fuse = pytest.mark.skipif(fuse_missing() is not None, reason=f"cannot mount: {fuse_missing()}")


def gamepak_command(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "gamepak", *arguments]


def wait_for_mount(mountpoint: Path, process: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + 20
    while not os.path.ismount(mountpoint):
        if process is not None and process.poll() is not None:
            _, err = process.communicate()
            pytest.fail(f"gamepak mount exited with {process.returncode}: {err.decode(errors='replace')}")
        if time.monotonic() > deadline:
            pytest.fail(f"{mountpoint} was not mounted within 20 s")
        time.sleep(0.05)


def force_unmount(mountpoint: Path) -> None:
    if os.path.ismount(mountpoint):
        subprocess.run(["fusermount3", "-u", "-z", str(mountpoint)], capture_output=True)


def tree_of(folder: Path) -> dict[str, bytes]:
    """Every file below `folder` (relative path -> bytes), as `os.walk` sees it."""
    files = {}
    for root, _, names in os.walk(folder):
        for name in names:
            path = Path(root, name)
            files[path.relative_to(folder).as_posix()] = path.read_bytes()
    return files


@pytest.fixture
def packs(tmp_path: Path) -> dict[str, Path]:
    """A PAK with folders, nesting a compressed .str2_pc and another PAK; and a JoePack."""
    inner = tmp_path / "src" / "inner.str2_pc"
    inner.parent.mkdir()
    with gamepak.create(inner) as writer:
        writer.add("mesh.bin", bytes(range(256)) * 300)
        writer.add("note.txt", b"inside")
    nested_pak = tmp_path / "src" / "sounds.pak"
    with gamepak.create(nested_pak) as writer:
        writer.add("sound/hit.wav", b"RIFF" + b"\x01" * 5000)
    outer = tmp_path / "game.pak"
    with gamepak.create(outer) as writer:
        writer.add("maps/e1m1.bsp", os.urandom(200_000))
        writer.add("maps/e1m2.bsp", b"")
        writer.add("levels/inner.str2_pc", inner)
        writer.add("sounds.pak", nested_pak)
        writer.add("readme.txt", b"read me\n")
    joe = tmp_path / "cars.jpk"
    with gamepak.create(joe) as writer:
        writer.add("cars/xs/body.joe", b"JOE" * 1000)
    return {"pak": outer, "jpk": joe}


@pytest.fixture
def mountpoint(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "mnt"
    folder.mkdir()
    yield folder
    force_unmount(folder)


def extracted(pack: Path, destination: Path) -> dict[str, bytes]:
    result = run_cli("extract", str(pack), "-o", str(destination))
    assert result.returncode == 0, result.stderr
    return tree_of(destination)


@needs_fuse
def test_mount_shows_what_extract_writes_and_nested_packs(
    packs: dict[str, Path], mountpoint: Path, tmp_path: Path
) -> None:
    process = subprocess.Popen(gamepak_command("mount", str(packs["pak"]), str(mountpoint)), stderr=subprocess.PIPE)
    try:
        wait_for_mount(mountpoint, process)
        seen = tree_of(mountpoint)
        with gamepak.open(packs["pak"]) as archive:
            expected = {}
            for name in ("maps/e1m1.bsp", "maps/e1m2.bsp", "readme.txt"):
                expected[name] = archive.read(name)
            inner = archive.open_archive("levels/inner.str2_pc")
            for entry in inner.infolist():
                expected[f"levels/inner.str2_pc/{entry.name}"] = inner.read(entry)
            expected["sounds.pak/sound/hit.wav"] = archive.open_archive("sounds.pak").read("sound/hit.wav")
        assert seen == expected
        top_level = extracted(packs["pak"], tmp_path / "out")
        for name in ("maps/e1m1.bsp", "maps/e1m2.bsp", "readme.txt"):
            assert seen[name] == top_level[name]
        assert (mountpoint / "levels" / "inner.str2_pc").is_dir()
        info = (mountpoint / "maps" / "e1m1.bsp").stat()
        assert info.st_size == 200_000 and info.st_mtime == pytest.approx(packs["pak"].stat().st_mtime, abs=1)
        listing = subprocess.run(["ls", "-R", str(mountpoint)], capture_output=True, text=True, check=True).stdout
        assert "hit.wav" in listing and "mesh.bin" in listing
        with open(mountpoint / "maps" / "e1m1.bsp", "rb") as handle:  # seek + read of a range
            handle.seek(150_000)
            assert handle.read(10) == expected["maps/e1m1.bsp"][150_000:150_010]

        def write_to(path: Path, mode: str) -> None:
            with open(path, mode) as handle:
                handle.write(b"x")

        for attempt in (
            lambda: write_to(mountpoint / "readme.txt", "ab"),
            lambda: write_to(mountpoint / "new.txt", "wb"),
            lambda: (mountpoint / "maps" / "x").mkdir(),
            lambda: (mountpoint / "readme.txt").unlink(),
            lambda: (mountpoint / "readme.txt").rename(mountpoint / "r.txt"),
        ):
            with pytest.raises(OSError) as caught:
                attempt()
            assert caught.value.errno == errno.EROFS
        result = run_cli("unmount", str(mountpoint))
        assert result.returncode == 0, result.stderr
        assert process.wait(timeout=20) == 0
        assert not os.path.ismount(mountpoint)
    finally:
        force_unmount(mountpoint)
        if process.poll() is None:
            process.kill()
            process.wait()


@needs_fuse
def test_several_packs_in_the_background_without_nesting(
    packs: dict[str, Path], mountpoint: Path, tmp_path: Path
) -> None:
    result = subprocess.run(
        gamepak_command("mount", "--background", "--no-nested", str(packs["pak"]), str(packs["jpk"]), str(mountpoint)),
        capture_output=True,
        timeout=60,
    )
    try:
        assert result.returncode == 0, result.stderr
        wait_for_mount(mountpoint)
        assert sorted(os.listdir(mountpoint)) == ["cars.jpk", "game.pak"]
        # Without nesting, each folder holds exactly what `extract` writes.
        assert tree_of(mountpoint / "game.pak") == extracted(packs["pak"], tmp_path / "pak")
        assert tree_of(mountpoint / "cars.jpk") == extracted(packs["jpk"], tmp_path / "jpk")
        subprocess.run(["fusermount3", "-u", str(mountpoint)], check=True)
        assert not os.path.ismount(mountpoint)
        again = run_cli("unmount", str(mountpoint))
        assert again.returncode == 1 and b"not a mount point" in again.stderr
    finally:
        force_unmount(mountpoint)


@needs_fuse
@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_signals_unmount(packs: dict[str, Path], mountpoint: Path, signal_number: int) -> None:
    process = subprocess.Popen(gamepak_command("mount", str(packs["jpk"]), str(mountpoint)), stderr=subprocess.PIPE)
    try:
        wait_for_mount(mountpoint, process)
        assert (mountpoint / "cars" / "xs" / "body.joe").read_bytes() == b"JOE" * 1000
        process.send_signal(signal_number)
        assert process.wait(timeout=20) == 0
        assert not os.path.ismount(mountpoint)
    finally:
        force_unmount(mountpoint)
        if process.poll() is None:
            process.kill()
            process.wait()


def test_missing_libfuse_says_what_to_install(packs: dict[str, Path], mountpoint: Path) -> None:
    environment = {**os.environ, "FUSE_LIBRARY_PATH": str(mountpoint / "no-libfuse3.so.3")}
    result = subprocess.run(
        gamepak_command("mount", str(packs["pak"]), str(mountpoint)), capture_output=True, env=environment, timeout=60
    )
    assert result.returncode == 1
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1 and "fuse3" in lines[0] and "Traceback" not in lines[0]
    assert not os.path.ismount(mountpoint)


def test_mount_usage_errors(packs: dict[str, Path], tmp_path: Path) -> None:
    assert run_cli("mount", str(packs["pak"])).returncode == 2
    assert run_cli("mount", str(packs["pak"]), str(tmp_path / "missing")).returncode == 1
    result = run_cli("unmount", str(tmp_path))
    assert result.returncode == 1 and b"not a mount point" in result.stderr
