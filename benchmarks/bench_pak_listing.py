"""Open and list a 100,000-member PAK, import included, vs the Python peer vgio and vs `tar -tf`
of a 100,000-member tar; and the whole `gamepak ls` command. Each library measurement is a fresh
interpreter timing itself from before the import.

Target: gamepak >= 10x faster than vgio. `namelist()` is lazy (names are decoded when used), so
the same with every name made into a str is measured too. Also measured: the same for a JoePack.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

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
# The same, with every name made into a str (what `for name in names` costs in all).
GAMEPAK_EVERY_NAME_CODE = """
import time; start = time.perf_counter()
import gamepak
names = list(gamepak.open({path!r}).namelist())
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
    jpk = str(work / "many.jpk")
    names = [f"textures/set{index % 100:02d}/texture{index:06d}.wal" for index in range(MEMBERS)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # more members than Quake allows, on purpose
        for target in (path, jpk):
            with gamepak.create(target) as writer:
                for index, name in enumerate(names):
                    writer.add(name, b"x" * (index % 7))
    # The same names in a tar (empty files: listing reads only headers).
    tree = work / "tree"
    for folder in sorted({name.rsplit("/", 1)[0] for name in names}):
        (tree / folder).mkdir(parents=True)
    for name in names:
        (tree / name).touch()
    subprocess.run(["tar", "-cf", str(work / "many.tar"), "-C", str(tree), "textures"], check=True)
    subprocess.run(["rm", "-rf", str(tree)], check=True)
    contenders = {
        "gamepak open+namelist": lambda _: timed(GAMEPAK_CODE.format(path=path, count=MEMBERS)),
        "gamepak ... every name a str": lambda _: timed(GAMEPAK_EVERY_NAME_CODE.format(path=path, count=MEMBERS)),
    }
    try:
        import vgio  # noqa: F401

        contenders["vgio open+namelist"] = lambda _: timed(VGIO_CODE.format(path=path, count=MEMBERS))
    except ImportError:
        print("vgio is not installed (pip install vgio): measuring gamepak alone")
    contenders["gamepak open+namelist (jpk)"] = lambda _: timed(GAMEPAK_CODE.format(path=jpk, count=MEMBERS))
    contenders["gamepak ls (whole command)"] = lambda _: run([GAMEPAK, "ls", path])
    contenders["tar -tf (whole command)"] = lambda _: run(["tar", "-tf", str(work / "many.tar")])
    contenders["python -c pass"] = lambda _: run([sys.executable, "-c", "pass"])
    medians = alternate(ROUNDS, contenders)
    for name, seconds in medians.items():
        print(f"{name:30} {seconds * 1000:8.1f} ms")
    if "vgio open+namelist" in medians:
        ratio = medians["vgio open+namelist"] / medians["gamepak open+namelist"]
        print(f"vgio/gamepak: {ratio:.1f}x faster (target >= 10x)")
        ratio = medians["vgio open+namelist"] / medians["gamepak ... every name a str"]
        print(f"vgio/gamepak with every name decoded: {ratio:.1f}x faster")
    ratio = medians["gamepak ls (whole command)"] / medians["tar -tf (whole command)"]
    print(f"gamepak ls / tar -tf: {ratio:.2f}x the time")
    subprocess.run(["rm", "-rf", str(work)], check=True)


if __name__ == "__main__":
    main()
