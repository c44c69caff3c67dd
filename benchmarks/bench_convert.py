"""Convert a 256 MiB PAK (1,024 members) to tar and to zip (stored) vs GNU tar packing the same
files from a folder, on tmpfs; and diff of two such packs vs `cmp` of the files.

Targets: `gamepak convert` within 1.5x of `tar -cf` (which starts from files already extracted),
peak RSS under 100 MiB whatever the pack size (members are streamed).
"""

from __future__ import annotations

import os
import resource
import subprocess

import gamepak

from _common import GAMEPAK, alternate, compile_bytecode, run, scratch

MEMBERS = 1024
MEMBER_SIZE = 256 << 10
ROUNDS = 5


def main() -> None:
    compile_bytecode()
    work = scratch("convert")
    folder = work / "files"
    folder.mkdir()
    for index in range(MEMBERS):
        (folder / f"m{index:04}.bin").write_bytes(os.urandom(MEMBER_SIZE))
    with gamepak.create(work / "in.pak") as writer:
        for index in range(MEMBERS):
            writer.add(f"m{index:04}.bin", folder / f"m{index:04}.bin")
    with gamepak.create(work / "other.pak") as writer:
        for index in range(MEMBERS):
            writer.add(f"m{index:04}.bin", folder / f"m{index:04}.bin")
    peaks = []

    def convert_to(suffix: str, *options: str) -> float:
        target = work / f"out.{suffix}"
        seconds = run([GAMEPAK, "convert", str(work / "in.pak"), str(target), "--overwrite", *options])
        peaks.append(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
        target.unlink()
        return seconds

    def gnu_tar(round_number: int) -> float:
        seconds = run(["tar", "-cf", str(work / "ref.tar"), "-C", str(folder), "."])
        (work / "ref.tar").unlink()
        return seconds

    medians = alternate(
        ROUNDS,
        {
            "convert pak->tar": lambda _: convert_to("tar"),
            "convert pak->zip (stored)": lambda _: convert_to("zip", "-O", "compression=store"),
            "tar -cf (files)": gnu_tar,
        },
    )
    reference = medians["tar -cf (files)"]
    total_mib = MEMBERS * MEMBER_SIZE >> 20
    print(f"{MEMBERS} members, {total_mib} MiB; medians of {ROUNDS} alternating runs")
    for name, seconds in medians.items():
        print(f"  {name:28} {seconds * 1000:8.1f} ms  {seconds / reference:5.2f}x tar -cf")
    print(f"  peak RSS of gamepak convert: {max(peaks):.0f} MiB")

    diff_medians = alternate(
        ROUNDS,
        {
            "gamepak diff": lambda _: _diff(work),
            "cmp": lambda _: run(["cmp", str(work / "in.pak"), str(work / "other.pak")]),
        },
    )
    ratio = diff_medians["gamepak diff"] / diff_medians["cmp"]
    print(
        f"  diff of two equal packs: {diff_medians['gamepak diff'] * 1000:.1f} ms, "
        f"{ratio:.2f}x cmp ({diff_medians['cmp'] * 1000:.1f} ms; diff hashes every member with sha256)"
    )


def _diff(work: object) -> float:
    import time

    start = time.perf_counter()
    result = subprocess.run([GAMEPAK, "diff", f"{work}/in.pak", f"{work}/other.pak"], stdout=subprocess.DEVNULL)
    assert result.returncode == 0
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
