"""Start-up: `gamepak --version`, `gamepak ls` and `gamepak info` of a small pack vs
`python -c pass` (bytecode compiled first). Target <= 1.5x for each."""

from __future__ import annotations

import shutil
import sys

import gamepak

from _common import GAMEPAK, alternate, compile_bytecode, run, scratch

ROUNDS = 21


def main() -> None:
    compile_bytecode()
    work = scratch("startup")
    small = str(work / "small.pak")
    with gamepak.create(small) as writer:
        for index in range(20):
            writer.add(f"maps/e1m{index}.bsp", bytes(100))
    medians = alternate(
        ROUNDS,
        {
            "python -c pass": lambda _: run([sys.executable, "-c", "pass"]),
            "gamepak --version": lambda _: run([GAMEPAK, "--version"]),
            "gamepak ls small.pak": lambda _: run([GAMEPAK, "ls", small]),
            "gamepak info small.pak": lambda _: run([GAMEPAK, "info", small]),
            "gamepak --help": lambda _: run([GAMEPAK, "--help"]),
        },
    )
    base = medians["python -c pass"]
    for name, seconds in medians.items():
        target = "" if name in ("python -c pass", "gamepak --help") else " (target <= 1.5x)"
        print(f"{name:24} {seconds * 1000:7.1f} ms  {seconds / base:.2f}x{target}")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
