"""Random access inside one big member of a compressed RFG pack: seek checkpoints at work.

Builds a flags-3 `.vpp_pc` on /dev/shm with one ~200 MiB member (text-like data, zlib level 1),
then alternates, round after round:
- once: read the member once from its start through `Reader.open` (1 MiB reads);
- random: read 1 MiB at 100 random offsets through the same kind of stream (seeks in both
  directions), with the checkpoints the first pass left;
- cold random: the same 100 reads in a freshly opened pack (checkpoints made as it goes).
Prints the medians and the ratios against `once` (issue 10's target: random <= 0.2x), and the
bytes each variant inflated.

    python benchmarks/bench_vpp_seek.py [--size-mb 200] [--rounds 3]
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import gamepak
from gamepak.formats.rfg.packfile import Reader

from _common import alternate, scratch

STEP = 1 << 20


def build(path: Path, size: int) -> None:
    rng = random.Random(7)
    words = [bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))) for _ in range(500)]
    piece = b" ".join(rng.choice(words) for _ in range(200_000))
    with open(path.with_suffix(".member"), "wb") as handle:
        written = 0
        while written < size:
            chunk = piece[: size - written]
            handle.write(chunk)
            written += len(chunk)
    with gamepak.create(path, flags=3, level=1, overwrite=True) as writer:
        writer.add("small.txt", b"x" * 1000)
        writer.add("big.txt", path.with_suffix(".member"))


def read_once(path: Path) -> tuple[float, int]:
    with gamepak.open(path) as archive:
        assert isinstance(archive, Reader)
        start = time.perf_counter()
        with archive.open("big.txt") as stream:
            while stream.read(STEP):
                pass
        return time.perf_counter() - start, archive.inflated_bytes


def read_random(archive: Reader, offsets: list[int]) -> float:
    start = time.perf_counter()
    with archive.open("big.txt") as stream:
        for offset in offsets:
            stream.seek(offset)
            stream.read(STEP)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    folder = scratch("vpp-seek")
    path = folder / "big.vpp_pc"
    size = arguments.size_mb << 20
    build(path, size)
    rng = random.Random(3)
    offsets = [rng.randrange(0, size - STEP) for _ in range(100)]
    warm = gamepak.open(path)
    assert isinstance(warm, Reader)
    read_random(warm, sorted(offsets)[-1:])  # one pass to the end leaves the checkpoints
    inflated: dict[str, int] = {}

    def once(_: int) -> float:
        seconds, inflated["once"] = read_once(path)
        return seconds

    def random_warm(_: int) -> float:
        before = warm.inflated_bytes
        seconds = read_random(warm, offsets)
        inflated["random"] = warm.inflated_bytes - before
        return seconds

    def random_cold(_: int) -> float:
        with gamepak.open(path) as cold:
            assert isinstance(cold, Reader)
            seconds = read_random(cold, offsets)
            inflated["cold random"] = cold.inflated_bytes
            return seconds

    medians = alternate(arguments.rounds, {"once": once, "random": random_warm, "cold random": random_cold})
    for name, seconds in medians.items():
        print(
            f"{name:12} {seconds:8.3f} s  {seconds / medians['once']:5.2f}x once  "
            f"inflated {inflated[name] / (1 << 20):8.1f} MiB"
        )
    warm.close()


if __name__ == "__main__":
    main()
