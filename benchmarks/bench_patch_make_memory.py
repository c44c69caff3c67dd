"""Peak RSS and wall time of `gamepak patch make` between copies that differ in large members, on
/dev/shm.

Rows: two PAKs whose 8 members of 64 MiB differ (new random bytes), and two game folders whose 8
plain files of 64 MiB differ. Each member is 64 MiB and 64 KiB: just past the largest base `make`
makes a delta against (`container.MAX_DELTA_BASE_BYTES`), so the blobs are raw, as new random
bytes would be anyway, and no level-19 delta of noise takes minutes. Each make is a whole
`python -m gamepak` process started by GNU time (its own peak RSS), writing a fresh patch.
`--compare-src DIR` alternates with another source tree (e.g. an export of main's `src`), so
before and after come from the same rounds.

    python benchmarks/bench_patch_make_memory.py [--count 8] [--member-mib 64] [--rounds 3] [--compare-src DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import SCRATCH, scratch

MIB = 1 << 20
PAST_DELTA_LIMIT = 64 << 10  # added to each member's size: past MAX_DELTA_BASE_BYTES
HERE = Path(__file__).resolve().parents[1] / "src"


def noise(seed: int, size: int) -> bytes:
    return random.Random(seed).randbytes(size)


def make_cases(work: Path, count: int, size: int) -> list[tuple[str, Path, Path]]:
    """(label, base, modded) for the PAKs and the folders."""
    import gamepak

    folders = {side: work / side for side in ("base", "modded")}
    for folder in folders.values():
        (folder / "data").mkdir(parents=True)
    with gamepak.create(work / "base.pak") as base, gamepak.create(work / "modded.pak") as modded:
        for index in range(count):
            old, new = noise(index, size), noise(1000 + index, size)
            base.add(f"maps/part{index}.bin", old)
            modded.add(f"maps/part{index}.bin", new)
            (folders["base"] / "data" / f"part{index}.bin").write_bytes(old)
            (folders["modded"] / "data" / f"part{index}.bin").write_bytes(new)
    mib = size // MIB
    return [
        (f"PAK, {count} members of {mib} MiB differ", work / "base.pak", work / "modded.pak"),
        (f"folder, {count} plain files of {mib} MiB differ", folders["base"], folders["modded"]),
    ]


def make(src: Path, base: Path, modded: Path, output: Path) -> tuple[float, float]:
    """(seconds, peak RSS in MiB) of one `gamepak patch make` run from the source tree `src`."""
    report = SCRATCH / "patch-make-memory-rss.txt"
    command = [sys.executable, "-m", "gamepak", "patch", "make", str(base), str(modded), "-o", str(output)]
    output.unlink(missing_ok=True)
    start = time.perf_counter()
    subprocess.run(
        ["/usr/bin/time", "-f", "%M", "-o", str(report), *command],
        check=True,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(src)},
    )
    seconds = time.perf_counter() - start
    output.unlink()  # tmpfs is memory: one patch at a time
    return seconds, int(report.read_text().split()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=8)
    parser.add_argument("--member-mib", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--compare-src", type=Path, help="another source tree to alternate with (e.g. main's)")
    arguments = parser.parse_args()
    if not os.path.exists("/usr/bin/time"):
        raise SystemExit("GNU time (/usr/bin/time) is needed for each command's own peak RSS")
    work = scratch("patch-make-memory")
    sources = {"this tree": HERE}
    if arguments.compare_src is not None:
        sources = {"compared": arguments.compare_src.resolve(), **sources}
    try:
        size = arguments.member_mib * MIB + PAST_DELTA_LIMIT
        for label, base, modded in make_cases(work, arguments.count, size):
            results: dict[str, list[tuple[float, float]]] = {name: [] for name in sources}
            for _ in range(arguments.rounds):
                for name, src in sources.items():
                    results[name].append(make(src, base, modded, work / "p.gpatch"))
            for name, runs in results.items():
                seconds = statistics.median(run[0] for run in runs)
                peak = max(run[1] for run in runs)
                print(f"{label:45} {name:10} {seconds:6.2f} s (median of {len(runs)})  peak RSS {peak:7.1f} MiB")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
