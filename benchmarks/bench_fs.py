"""Packs as filesystems, on tmpfs, ratios within one run:

1. `cat` of every member of a 20,000-small-file PAK through `gamepak mount` vs `gamepak extract`
   of the same PAK (whole commands; each mount round is a fresh mount, so no member is in the
   kernel's page cache yet). Target <= 3x.
2. 1 MiB at 100 random offsets of a 200 MiB member of a compressed RFG pack through fsspec vs
   reading the member once from the start. Target <= 0.2x (needs seek checkpoints in the RFG
   member stream).
3. `ls -R` of the mount of a 100,000-member PAK. Target < 1 s.

The FUSE parts are skipped, saying why, where FUSE is unavailable.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import time
import warnings
from pathlib import Path

import gamepak

from _common import GAMEPAK, alternate, compile_bytecode, run, scratch

SMALL_FILES = 20_000
LISTED_MEMBERS = 100_000
BIG_MEMBER = 200 << 20
READS = 100
READ_SIZE = 1 << 20
ROUNDS = 5


def fuse_missing() -> str | None:
    import ctypes.util

    if not os.path.exists("/dev/fuse"):
        return "/dev/fuse is absent"
    if ctypes.util.find_library("fuse3") is None or shutil.which("fusermount3") is None:
        return "libfuse 3 is not installed (the fuse3 package)"
    return None


def mounted(packs: list[Path], mountpoint: Path) -> float:
    """Mount in the background; returns the seconds until the mount was up."""
    mountpoint.mkdir(exist_ok=True)
    start = time.perf_counter()
    subprocess.run([GAMEPAK, "mount", "--background", *map(str, packs), str(mountpoint)], check=True)
    while not os.path.ismount(mountpoint):
        time.sleep(0.01)
    return time.perf_counter() - start


def unmount(mountpoint: Path) -> None:
    subprocess.run([GAMEPAK, "unmount", str(mountpoint)], check=True)


def small_files_pak(work: Path) -> Path:
    generator = random.Random(1)
    blob = os.urandom(16 << 10)
    path = work / "files.pak"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # more members than Quake allows, on purpose
        with gamepak.create(path, "pak") as writer:
            for index in range(SMALL_FILES):
                writer.add(f"dir{index % 350:03d}/file{index:05d}.bin", blob[: generator.randint(1 << 10, 16 << 10)])
    return path


def bench_cat_through_mount(work: Path) -> None:
    pak = small_files_pak(work)
    mountpoint = work / "mnt"
    mount_times = []

    def cat_all(round_number: int) -> float:
        mount_times.append(mounted([pak], mountpoint))
        try:
            # Every file's bytes through FUSE: one open/read/close round trip per member.
            return run(["sh", "-c", f"cd {mountpoint} && find . -type f -print0 | xargs -0 cat > /dev/null"])
        finally:
            unmount(mountpoint)

    def extract(round_number: int) -> float:
        return run([GAMEPAK, "extract", str(pak), "-o", str(work / f"out{round_number}")])

    medians = alternate(ROUNDS, {"cat via mount": cat_all, "gamepak extract": extract})
    for name, seconds in medians.items():
        print(f"{name:18} {seconds * 1000:8.1f} ms  ({SMALL_FILES / seconds:,.0f} files/s)")
    print(f"mount of the 20,000-member PAK up in {sorted(mount_times)[len(mount_times) // 2] * 1000:.0f} ms (median)")
    ratio = medians["cat via mount"] / medians["gamepak extract"]
    print(f"ratio cat-through-mount / extract: {ratio:.2f}x (target <= 3x)")


def bench_ls_r(work: Path) -> None:
    path = work / "many.pak"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with gamepak.create(path, "pak") as writer:
            for index in range(LISTED_MEMBERS):
                writer.add(f"textures/set{index % 100:02d}/texture{index:06d}.wal", b"x" * (index % 7))
    mountpoint = work / "mnt100k"
    ready = mounted([path], mountpoint)
    try:
        times = []
        for _ in range(ROUNDS):
            start = time.perf_counter()
            subprocess.run(["ls", "-R", str(mountpoint)], check=True, stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - start)
        print(f"mount of the 100,000-member PAK up in {ready * 1000:.0f} ms")
        print(
            f"ls -R of the mount: first {times[0] * 1000:.0f} ms, median {sorted(times)[len(times) // 2] * 1000:.0f} ms"
            f" (target < 1000 ms)"
        )
    finally:
        unmount(mountpoint)


def bench_rfg_seeks(work: Path) -> None:
    import fsspec

    path = work / "big.vpp_pc"
    # Text-like data that compresses about 3:1, so the inflater's speed is what is measured.
    generator = random.Random(2)
    words = [
        bytes(generator.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(generator.randint(2, 9)))
        for _ in range(4096)
    ]
    chunk = b" ".join(generator.choice(words) for _ in range(200_000))
    data = (chunk * (BIG_MEMBER // len(chunk) + 1))[:BIG_MEMBER]
    with gamepak.create(path, "vpp", flags=1, level=1) as writer:
        writer.add("big.bin", data)
        writer.add("small.txt", b"small")
    del data
    offsets = [generator.randrange(0, BIG_MEMBER - READ_SIZE) for _ in range(READS)]

    def whole(_: int) -> float:
        fs = fsspec.filesystem("gamepak", fo=str(path))
        start = time.perf_counter()
        with fs.open("big.bin") as stream:
            while stream.read(1 << 20):
                pass
        return time.perf_counter() - start

    def random_reads_on(fs: object) -> float:
        start = time.perf_counter()
        with fs.open("big.bin") as stream:  # type: ignore[attr-defined]
            for offset in offsets:
                stream.seek(offset)
                assert len(stream.read(READ_SIZE)) == READ_SIZE
        return time.perf_counter() - start

    def random_reads(_: int) -> float:
        # A fresh open: checkpoints are made on the way to the farthest offset.
        return random_reads_on(fsspec.filesystem("gamepak", fo=str(path)))

    def random_reads_warm(_: int) -> float:
        # The pack stays open (as in a mount or a long-lived filesystem): a first pass made the
        # checkpoints; only the second pass is timed.
        fs = fsspec.filesystem("gamepak", fo=str(path))
        random_reads_on(fs)
        return random_reads_on(fs)

    medians = alternate(
        3, {"read once": whole, "100 random 1 MiB": random_reads, "same, checkpoints made": random_reads_warm}
    )
    for name, seconds in medians.items():
        print(f"{name:24} {seconds * 1000:8.1f} ms")
    for name in ("100 random 1 MiB", "same, checkpoints made"):
        ratio = medians[name] / medians["read once"]
        print(f"ratio {name} / one full read of the 200 MiB compressed RFG member: {ratio:.2f}x (target <= 0.2x)")
    print(
        f"(the {READS} reads return {READS * READ_SIZE >> 20} MiB, which must be inflated: at the full read's speed "
        f"that alone is {READS * READ_SIZE / BIG_MEMBER:.2f}x)"
    )


def main() -> None:
    compile_bytecode()
    work = scratch("fs")
    try:
        print("== fsspec: random reads in a compressed RFG member")
        bench_rfg_seeks(work)
        reason = fuse_missing()
        if reason is not None:
            print(f"== FUSE benchmarks skipped: {reason}")
            return
        print("== FUSE: cat of every member through the mount vs extract")
        bench_cat_through_mount(work)
        print("== FUSE: ls -R of a 100,000-member PAK")
        bench_ls_r(work)
    finally:
        for mountpoint in work.glob("mnt*"):
            if os.path.ismount(mountpoint):
                subprocess.run(["fusermount3", "-u", "-z", str(mountpoint)], check=False)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
