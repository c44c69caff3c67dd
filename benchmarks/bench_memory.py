"""Peak resident memory of whole `gamepak create` / `gamepak extract` commands on large packs.

Rows: a 1.75 GiB PAK (7 members of 256 MiB) and a 1 GiB (decompressed) compressed + condensed
(mode 3) RFG pack of text-like members, each created from files and extracted, on tmpfs.
Each command's own peak RSS comes from GNU time. Target: < 100 MiB for every row.

    python benchmarks/bench_memory.py [--rfg-level 1]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time

from _common import GAMEPAK, SCRATCH, compile_bytecode, scratch

MIB = 1 << 20


def peak_rss(command: list[str]) -> tuple[float, float]:
    """(seconds, peak RSS in MiB) of one command, which must succeed. GNU time starts it: a
    process started straight from this one would inherit this one's peak (Linux keeps the
    largest RSS across exec, and Python's subprocess may share memory until exec)."""
    start = time.perf_counter()
    if not os.path.exists("/usr/bin/time"):
        # Without GNU time: wait4's figure, an upper bound (it may include this process's peak).
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        if os.waitstatus_to_exitcode(status):
            raise SystemExit(f"{command} failed")
        return time.perf_counter() - start, usage.ru_maxrss / 1024
    report = SCRATCH / "memory" / "peak-rss.txt"
    subprocess.run(["/usr/bin/time", "-f", "%M", "-o", str(report), *command], check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    return seconds, int(report.read_text().split()[-1]) / 1024


def text_block(size: int) -> bytes:
    """XML-ish text (compresses about as well as the game's tables)."""
    generator = random.Random(3)
    words = ["".join(generator.choice("abcdefghijklmnop") for _ in range(generator.randint(3, 9))) for _ in range(500)]
    lines = []
    total = 0
    while total < size:
        line = f'  <{generator.choice(words[:30])} v="{generator.randint(0, 9999)}">{generator.choice(words)}</x>\n'
        lines.append(line)
        total += len(line)
    return "".join(lines).encode()[:size]


TEXT_CHILD = """
import sys
from bench_memory import text_block
with open(sys.argv[1], "wb") as handle:
    handle.write(text_block(int(sys.argv[2])))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rfg-level", type=int, default=1, help="zlib level of the RFG pack (default 1)")
    arguments = parser.parse_args()
    compile_bytecode()
    work = scratch("memory")
    rows = []

    # 1.75 GiB PAK: one 256 MiB file stored 7 times under different names.
    member = work / "member.bin"
    block = random.Random(1).randbytes(MIB)
    with open(member, "wb") as handle:
        for _ in range(256):
            handle.write(block)
    folder = work / "pak-src"
    folder.mkdir()
    for index in range(7):
        os.link(member, folder / f"part{index}.bin")
    pak = work / "large.pak"
    rows.append(("create 1.75 GiB PAK", *peak_rss([GAMEPAK, "create", str(pak), str(folder)])))
    subprocess.run(["rm", "-rf", str(folder), str(member)], check=True)
    rows.append(("extract 1.75 GiB PAK", *peak_rss([GAMEPAK, "extract", str(pak), "-o", str(work / "pak-out")])))
    subprocess.run(["rm", "-rf", str(work / "pak-out"), str(pak)], check=True)

    # 1 GiB mode-3 RFG pack: 16 text-like members of 64 MiB.
    folder = work / "rfg-src"
    folder.mkdir()
    # Made by a child process, so that this one stays small.
    subprocess.run(
        [sys.executable, "-c", TEXT_CHILD, str(folder / "text0.xtbl"), str(64 * MIB)],
        check=True,
        cwd=os.path.dirname(os.path.abspath(__file__)),
    )
    for index in range(1, 16):
        os.link(folder / "text0.xtbl", folder / f"text{index}.xtbl")
    rfg = work / "large.vpp_pc"
    create = [GAMEPAK, "create", str(rfg), str(folder), "-O", "flags=3", "-O", f"level={arguments.rfg_level}"]
    rows.append(("create 1 GiB mode-3 RFG pack", *peak_rss(create)))
    subprocess.run(["rm", "-rf", str(folder)], check=True)
    rows.append(
        ("extract 1 GiB mode-3 RFG pack", *peak_rss([GAMEPAK, "extract", str(rfg), "-o", str(work / "rfg-out")]))
    )
    subprocess.run(["rm", "-rf", str(work)], check=True)

    for label, seconds, peak in rows:
        print(f"{label:32} {seconds:6.1f} s  peak RSS {peak:6.1f} MiB (target < 100 MiB)")


if __name__ == "__main__":
    main()
