"""`gamepak --version` vs `python -c pass`: heavy libraries must load lazily. Target <= 2x."""

from __future__ import annotations

import sys

from _common import GAMEPAK, alternate, compile_bytecode, run

ROUNDS = 21


def main() -> None:
    compile_bytecode()
    medians = alternate(
        ROUNDS,
        {
            "gamepak --version": lambda _: run([GAMEPAK, "--version"]),
            "gamepak --help": lambda _: run([GAMEPAK, "--help"]),
            "python -c pass": lambda _: run([sys.executable, "-c", "pass"]),
        },
    )
    for name, seconds in medians.items():
        print(f"{name:20} {seconds * 1000:7.1f} ms")
    print(f"ratio --version/python: {medians['gamepak --version'] / medians['python -c pass']:.2f}x (target <= 2x)")


if __name__ == "__main__":
    main()
