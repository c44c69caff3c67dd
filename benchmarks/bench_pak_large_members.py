"""Extract a PAK holding a few members totalling 1 GiB vs `cp` of the same bytes, on tmpfs.

Target: throughput >= 0.9x cp's; peak RSS of the extracting process under 100 MiB.
"""

from __future__ import annotations

import os
import resource
import subprocess

import gamepak

from _common import GAMEPAK, alternate, compile_bytecode, run, scratch

MEMBERS = 4
MEMBER_SIZE = 256 << 20
ROUNDS = 5


def main() -> None:
    compile_bytecode()
    work = scratch("large")
    chunk = os.urandom(1 << 20)
    for index in range(MEMBERS):
        with open(work / f"m{index}.bin", "wb") as handle:
            for _ in range(MEMBER_SIZE >> 20):
                handle.write(chunk)
    with gamepak.create(work / "large.pak", "pak") as writer:
        for index in range(MEMBERS):
            writer.add(f"data/m{index}.bin", work / f"m{index}.bin")
    total = MEMBERS * MEMBER_SIZE
    peaks = []

    def extract(round_number: int) -> float:
        seconds = run([GAMEPAK, "extract", str(work / "large.pak"), "-o", str(work / f"out{round_number}")])
        peaks.append(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
        subprocess.run(["rm", "-rf", str(work / f"out{round_number}")], check=True)
        return seconds

    def copy(round_number: int) -> float:
        target = work / f"cp{round_number}"
        target.mkdir()
        seconds = run(["cp", *[str(work / f"m{i}.bin") for i in range(MEMBERS)], str(target)])
        subprocess.run(["rm", "-rf", str(target)], check=True)
        return seconds

    # cp runs first in each round so the peak RSS read after gamepak is gamepak's own.
    medians = alternate(ROUNDS, {"cp": copy, "gamepak extract": extract})
    for name, seconds in medians.items():
        print(f"{name:16} {seconds * 1000:8.1f} ms  ({total / seconds / 1e9:.2f} GB/s)")
    print(f"throughput gamepak/cp: {medians['cp'] / medians['gamepak extract']:.2f}x (target >= 0.9x)")
    print(f"peak RSS of children (max of gamepak and cp): {max(peaks):.1f} MiB (target < 100 MiB)")
    subprocess.run(["rm", "-rf", str(work)], check=True)


if __name__ == "__main__":
    main()
