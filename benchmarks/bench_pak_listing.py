"""Open and list a 100,000-member PAK, import included, vs the Python peer vgio; and
`gamepak ls`. Each measurement is a fresh interpreter timing itself from before the import.

Target: gamepak >= 10x faster than vgio.
"""

from __future__ import annotations

import subprocess
import sys

import gamepak

from _common import GAMEPAK, alternate, compile_bytecode, run, scratch

MEMBERS = 100_000
ROUNDS = 9

GAMEPAK_CODE = """
import time; start = time.perf_counter()
import gamepak
names = gamepak.open({path!r}).namelist()
assert len(names) == {count}
print(time.perf_counter() - start)
"""
VGIO_CODE = """
import time; start = time.perf_counter()
import vgio.quake.pak
names = vgio.quake.pak.PakFile({path!r}).namelist()
assert len(names) == {count}
print(time.perf_counter() - start)
"""


def timed(code: str) -> float:
    result = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return float(result.stdout)


def main() -> None:
    compile_bytecode()
    work = scratch("listing")
    path = str(work / "many.pak")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # more members than Quake allows, on purpose
        with gamepak.create(path, "pak") as writer:
            for index in range(MEMBERS):
                writer.add(f"textures/set{index % 100:02d}/texture{index:06d}.wal", b"x" * (index % 7))
    try:
        import vgio  # noqa: F401

        contenders = {
            "gamepak": lambda _: timed(GAMEPAK_CODE.format(path=path, count=MEMBERS)),
            "vgio": lambda _: timed(VGIO_CODE.format(path=path, count=MEMBERS)),
        }
    except ImportError:
        print("vgio is not installed (pip install vgio): measuring gamepak alone")
        contenders = {"gamepak": lambda _: timed(GAMEPAK_CODE.format(path=path, count=MEMBERS))}
    contenders["gamepak ls (whole command)"] = lambda _: run([GAMEPAK, "ls", path])
    contenders["python -c pass"] = lambda _: run([sys.executable, "-c", "pass"])
    medians = alternate(ROUNDS, contenders)
    for name, seconds in medians.items():
        print(f"{name:28} {seconds * 1000:8.1f} ms")
    if "vgio" in medians:
        print(f"vgio/gamepak: {medians['vgio'] / medians['gamepak']:.1f}x faster (target >= 10x)")


if __name__ == "__main__":
    main()
