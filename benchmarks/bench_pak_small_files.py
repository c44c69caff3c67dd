"""Extract a PAK of 20,000 files of 1-64 KiB vs `tar -xf` of the same files, on tmpfs.

Both are whole commands (start-up included), alternated, each round into a fresh folder.
Target: gamepak <= 1.0x tar's time.
"""

from __future__ import annotations

import os
import random
import subprocess

import gamepak

from _common import GAMEPAK, alternate, compile_bytecode, run, scratch

FILES = 20_000
ROUNDS = 7


def main() -> None:
    compile_bytecode()
    work = scratch("small")
    source = work / "src"
    generator = random.Random(1)
    blob = os.urandom(64 << 10)
    names = []
    for index in range(FILES):
        name = f"dir{index % 50:02d}/file{index:05d}.bin"
        path = source / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(blob[: generator.randint(1 << 10, 64 << 10)])
        names.append(name)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # more members than Quake allows, on purpose
        with gamepak.create(work / "files.pak", "pak", align=4) as writer:
            for name in names:
                writer.add(name, source / name)
    subprocess.run(
        ["tar", "-cf", str(work / "files.tar"), "-C", str(source), *sorted({n.split("/")[0] for n in names})],
        check=True,
    )

    def extract_pak(round_number: int) -> float:
        return run([GAMEPAK, "extract", str(work / "files.pak"), "-o", str(work / f"pak{round_number}")])

    def extract_tar(round_number: int) -> float:
        target = work / f"tar{round_number}"
        target.mkdir()
        return run(["tar", "-xf", str(work / "files.tar"), "-C", str(target)])

    medians = alternate(ROUNDS, {"gamepak extract": extract_pak, "tar -xf": extract_tar})
    for name, seconds in medians.items():
        print(f"{name:16} {seconds * 1000:8.1f} ms  ({FILES / seconds:,.0f} files/s)")
    print(f"ratio gamepak/tar: {medians['gamepak extract'] / medians['tar -xf']:.2f}x (target <= 1.0x)")
    subprocess.run(["rm", "-rf", str(work)], check=True)


if __name__ == "__main__":
    main()
