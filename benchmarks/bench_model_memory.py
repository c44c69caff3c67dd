"""Peak resident memory of `gamepak model info` and `model export` on a 74 MB JOE (1,090 frames
of 2,000 faces, written by gamepak's own JOE writer), as ratios to the file's size, beside the
floor: the same interpreter running `gamepak formats` (numpy not imported) and reading the file
whole with numpy imported. Targets (issue 29 item 7): info within 1.2x of the file or under
100 MB; export within 2x. Each figure is the command's own `getrusage` peak in a fresh process.

    python benchmarks/bench_model_memory.py
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from _common import scratch

SRC = str(Path(__file__).resolve().parent.parent / "src")
TESTS = str(Path(__file__).resolve().parent.parent / "tests")

# The measuring and model-building scripts are the memory test's own, so both measure alike.
sys.path.insert(0, TESTS)
from test_model_info_memory import BUILD, MEASURE  # noqa: E402

READ_WHOLE = """
import resource, sys
import numpy
data = open(sys.argv[1], "rb").read()
with open("/proc/self/status") as status:
    print(next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")), file=sys.stderr)
"""


def peak_mib(code: str, *arguments: str) -> float:
    env = {**os.environ, "PYTHONPATH": SRC}
    result = subprocess.run([sys.executable, "-c", code, *arguments], capture_output=True, text=True, env=env)
    if result.returncode:
        raise SystemExit(result.stderr)
    return int(result.stderr.strip().splitlines()[-1]) / 1024


def main() -> None:
    folder = scratch("model-memory")
    model = folder / "big.joe"
    env = {**os.environ, "PYTHONPATH": SRC}
    subprocess.run([sys.executable, "-c", BUILD, str(model), "1090", TESTS], check=True, env=env)
    file_mib = model.stat().st_size / (1 << 20)
    rows = {
        "gamepak formats (floor)": peak_mib(MEASURE, "formats"),
        "read the file whole (numpy imported)": peak_mib(READ_WHOLE, str(model)),
        "gamepak model info": peak_mib(MEASURE, "model", "info", str(model)),
        "gamepak model export -o .glb": peak_mib(MEASURE, "model", "export", str(model), "-o", str(folder / "b.glb")),
    }
    print(f"JOE of {file_mib:.1f} MiB ({model.stat().st_size / 1e6:.1f} MB)")
    for name, mib in rows.items():
        print(f"  {name:40} peak {mib:6.1f} MiB = {mib / file_mib:.2f}x the file")


if __name__ == "__main__":
    main()
