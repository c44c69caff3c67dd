"""Peak memory per input byte of each texture reader (Quake WAD, LMP, MIP, SPR, MDL, BSP, and RFG
pegs) on its worst inputs (tests/texture_worst_inputs.py: many tiny images, one image named
from every slot), for `texture ls` and `texture export` (into a new folder, and into a folder
that exists and holds a file). Each figure is the command's own peak
(VmHWM) in a fresh process, less the floor (the same interpreter importing what the commands
import, numpy and Pillow, and reading the file whole), divided by the file's size.

    python benchmarks/bench_texture_memory.py [MIB] [LABEL]  # inputs of about MIB MiB (default 4);
                                                             # only the cases whose label holds LABEL

Goal (issue 41): every command within GOAL bytes per input byte above the floor; each row says
whether it is.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from _common import scratch

SRC = str(Path(__file__).resolve().parent.parent / "src")
TESTS = str(Path(__file__).resolve().parent.parent / "tests")
sys.path.insert(0, TESTS)
from texture_worst_inputs import BUILDERS, peg_many_tiny_textures  # noqa: E402

MEASURE = """
import sys
from gamepak.cli import main
code = main(sys.argv[1:])
with open("/proc/self/status") as status:
    print(next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")), file=sys.stderr)
sys.exit(code)
"""

FLOOR = """
import sys
import numpy, PIL.Image
import gamepak.cli
data = open(sys.argv[1], "rb").read()
with open("/proc/self/status") as status:
    print(next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")), file=sys.stderr)
"""


def peak_kib(code: str, *arguments: str) -> tuple[int, int]:
    """(exit code, peak KiB) of `code` run with `arguments` in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": SRC}
    result = subprocess.run([sys.executable, "-c", code, *arguments], capture_output=True, text=True, env=env)
    lines = result.stderr.strip().splitlines()
    try:
        return result.returncode, int(lines[-1])
    except (IndexError, ValueError):
        return result.returncode, -1


# Bytes of peak memory per input byte above the floor that each command may use (issue 41).
GOAL = 10.0


def measure(path: Path, out: Path) -> dict[str, str]:
    size = path.stat().st_size
    _, floor = peak_kib(FLOOR, str(path))
    # A folder that exists already and holds a file: the plan looks at each target, and each
    # new file goes in place only once every one is written (a new folder is one rename).
    existing = out.with_name(out.name + "-existing")
    existing.mkdir(exist_ok=True)
    (existing / "theirs.txt").write_bytes(b"kept")
    row = {}
    for verb, arguments in (
        ("ls", ["texture", "ls", str(path)]),
        ("export", ["texture", "export", str(path), "-o", str(out)]),
        ("existing", ["texture", "export", str(path), "-o", str(existing)]),
    ):
        code, peak = peak_kib(MEASURE, *arguments)
        extra = max(0, peak - floor) * 1024
        mark = "ok  " if extra / size <= GOAL else "OVER"
        row[verb] = f"{extra / size:7.1f} B/B {mark} ({peak / 1024:6.1f} MiB{'' if code == 0 else f', exit {code}'})"
    row["floor"] = f"{floor / 1024:.1f} MiB"
    return row


def main() -> None:
    mib = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    size = int(mib * (1 << 20))
    folder = scratch("texture-memory")
    # (a peg's builder gives the CPU file and its GPU partner: the value type widened for it)
    builders: dict[str, tuple[Callable[[int], bytes | tuple[bytes, bytes]], str]] = dict(BUILDERS)
    builders["peg, many tiny textures"] = (peg_many_tiny_textures, "many.cpeg_pc")
    print(f"peak memory above the floor per input byte, inputs of about {mib:g} MiB (goal <= {GOAL:g} B/B)")
    for label, (build, name) in builders.items():
        if only not in label:
            continue
        path = folder / name
        built = build(size)
        if isinstance(built, tuple):  # a peg: the CPU file and its GPU partner
            path.write_bytes(built[0])
            (folder / (path.stem + ".gpeg_pc")).write_bytes(built[1])
        else:
            path.write_bytes(built)
        row = measure(path, folder / f"out-{path.name}")
        megabytes = path.stat().st_size / 1e6
        print(
            f"  {label:34} {megabytes:5.1f} MB  ls {row['ls']}  export {row['export']}"
            f"  into a folder that exists {row['existing']}  floor {row['floor']}"
        )


if __name__ == "__main__":
    main()
