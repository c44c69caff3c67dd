"""RFG localization files (issue 33): `text export` to PO and `text import` back, against
`gamepak extract` of a pack of the same size; and what naming entries from table.vpp_pc adds.

Whole commands in fresh processes (what a translator runs), alternated round after round on
/dev/shm, medians of wall time and of CPU time (user + system: on a machine shared with other
work the wall times stretch with the load, CPU times much less):
- export: `gamepak text export FILE -o out.po --names` (no names looked up);
- import: `gamepak text import FILE out.po -o new.rfglocatext` (the unchanged PO: every entry is
  read, compared and the file written);
- reference: `gamepak extract PACK -o DIR` of an uncompressed `.vpp_pc` holding FILE as its one
  member, and of one holding 100 members of the same total size. Goals (the fastest runs
  compared): export within 2x of both, import within 1.5x (issue 48.4).
- names: `text export ... --names table.vpp_pc` minus the export without names. Target <= 0.5 s.

FILE is the game's Arabic file when ../shared/samples is present, else a synthetic one of 7,298
Arabic strings of the same total size (then names are not measured without table.vpp_pc).

    python benchmarks/bench_locatext.py [--rounds 7] [--instructions]

`--instructions` runs `import PO` and the two extracts once each under valgrind (cachegrind, as
bench_startup.py's `--instructions`) and compares the instructions executed instead: the same
figures on a busy machine as on an idle one.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import gamepak
from gamepak.formats.rfg.locatext import LocaEntry, build

from _common import compile_bytecode, ratio_row, scratch

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "samples"
ARABIC = SAMPLES / "rfg" / "locatexts_ar_eg.rfglocatext"
TABLES = SAMPLES / "vpp" / "table.vpp_pc"
SRC = Path(__file__).resolve().parents[1] / "src"


def synthetic(count: int = 7298, seed: int = 3) -> bytes:
    """Arabic-like strings of the game file's lengths (~44 characters on average)."""
    rng = random.Random(seed)
    letters = "".join(chr(code) for code in range(0x0627, 0x064B)) + "  "
    entries = [
        LocaEntry(
            rng.getrandbits(32),
            "".join(rng.choice(letters) for _ in range(rng.randint(0, 88))).encode("utf-16-le") + b"\0\0",
        )
        for _ in range(count)
    ]
    return build(entries)


# CPU seconds (user + system) of each command, by its name's position in a round: on a machine
# shared with other work, wall times stretch with the load; CPU time much less.
CPU: dict[str, list[float]] = {}


def gamepak_command(*arguments: str, label: str = "") -> float:
    """Wall time of one `gamepak` command in a fresh process (this checkout's code); its CPU
    time goes to CPU[label]."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "gamepak", *arguments], check=True, env=env, capture_output=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    CPU.setdefault(label, []).append(cpu)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument(
        "--instructions", action="store_true", help="count instructions under valgrind (one run each) instead of timing"
    )
    args = parser.parse_args()
    compile_bytecode()
    work = scratch("locatext")
    data = ARABIC.read_bytes() if ARABIC.exists() else synthetic()
    source = work / "locatexts_ar_eg.rfglocatext"
    source.write_bytes(data)
    one = work / "one.vpp_pc"
    with gamepak.create(one, "vpp", flags=0) as writer:
        writer.add(source.name, data)
    many = work / "many.vpp_pc"
    piece = len(data) // 100
    with gamepak.create(many, "vpp", flags=0) as writer:
        for number in range(100):
            writer.add(f"member{number:03}.bin", data[number * piece : (number + 1) * piece])
    po = work / "out.po"
    gamepak_command("text", "export", str(source), "-o", str(po), "--names")

    def fresh(name: str, number: int) -> Path:
        path = work / f"{name}{number}"
        shutil.rmtree(path, ignore_errors=True)
        return path

    if args.instructions:
        count_instructions(work, source, po, one, many)
        shutil.rmtree(work, ignore_errors=True)
        return
    names = "export PO, names from table.vpp_pc"
    contenders = {
        "export PO": lambda n: gamepak_command(
            "text", "export", str(source), "-o", str(fresh("e", n)), "--to", "po", "--names", label="export PO"
        ),
        "import PO": lambda n: gamepak_command(
            "text", "import", str(source), str(po), "-o", str(fresh("i", n)), "--names", label="import PO"
        ),
        "extract 1 member": lambda n: gamepak_command(
            "extract", str(one), "-o", str(fresh("x", n)), label="extract 1 member"
        ),
        "extract 100 members": lambda n: gamepak_command(
            "extract", str(many), "-o", str(fresh("y", n)), label="extract 100 members"
        ),
    }
    if TABLES.exists():
        contenders[names] = lambda n: gamepak_command(
            "text", "export", str(source), "-o", str(fresh("n", n)), "--to", "po", "--names", str(TABLES), label=names
        )
    runs: dict[str, list[float]] = {name: [] for name in contenders}
    for round_number in range(args.rounds):  # interleaved: each round runs every contender once
        for name, contender in contenders.items():
            runs[name].append(contender(round_number))
    medians = {name: statistics.median(values) for name, values in runs.items()}
    fastest = {name: min(values) for name, values in runs.items()}
    print(f"file: {'the game' if ARABIC.exists() else 'synthetic'} Arabic .rfglocatext, {len(data):,} bytes")
    cpu = {name: statistics.median(values) for name, values in CPU.items()}
    print(f"  {'':40} {'wall min':>9} {'median':>9}    {'CPU':>7}")
    for name, seconds in medians.items():
        print(f"  {name:40} {fastest[name] * 1000:6.0f} ms {seconds * 1000:6.0f} ms {cpu[name] * 1000:7.0f} ms")
    # Goals: import <= 1.5x extract (issue 48.4), export <= 2x (issue 33); the ratio of the
    # fastest runs (the machine is shared: the minimum is the run disturbed least).
    for what, goal in (("export PO", 2.0), ("import PO", 1.5)):
        for reference in ("extract 1 member", "extract 100 members"):
            ratio_row(
                f"text {what} vs {reference} of a pack of the same size",
                fastest[what] / fastest[reference],
                at_most=goal,
                detail=f"min of {args.rounds}; median wall {medians[what] / medians[reference]:.2f}x, "
                f"CPU {cpu[what] / cpu[reference]:.2f}x",
            )
    if TABLES.exists():
        print(
            f"  naming from table.vpp_pc adds wall {medians[names] - medians['export PO']:.2f} s, "
            f"CPU {cpu[names] - cpu['export PO']:.2f} s (target <= 0.5 s)"
        )
    shutil.rmtree(work, ignore_errors=True)


def count_instructions(work: Path, source: Path, po: Path, one: Path, many: Path) -> None:
    """`import PO` and the extracts, once each under valgrind, as `gamepak_command` runs them;
    the import's instructions over each extract's as the goal's rows (issue 48.4: at most 1.5x)."""
    from bench_startup import instructions

    os.environ["PYTHONPATH"] = str(SRC)  # the commands run this checkout's code
    runs = {
        "import PO": ["text", "import", str(source), str(po), "-o", str(work / "i-counted"), "--names"],
        "extract 1 member": ["extract", str(one), "-o", str(work / "x-counted")],
        "extract 100 members": ["extract", str(many), "-o", str(work / "y-counted")],
    }
    counts = {name: instructions([sys.executable, "-m", "gamepak", *arguments]) for name, arguments in runs.items()}
    for name, count in counts.items():
        print(f"  {name:40} {count / 1e6:7.1f} M instructions")
    for reference in ("extract 1 member", "extract 100 members"):
        ratio_row(
            f"text import PO vs {reference} of a pack of the same size, in instructions",
            counts["import PO"] / counts[reference],
            at_most=1.5,
            detail=f"{counts['import PO'] / 1e6:.1f} M vs {counts[reference] / 1e6:.1f} M",
        )


if __name__ == "__main__":
    main()
