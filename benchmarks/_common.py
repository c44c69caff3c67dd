"""Shared helpers for the benchmark scripts: alternating timed runs and medians, and the rows of
the performance goals (issue 48's table) that `make bench` sums up at its end.

A script that measures a goal reports it with `goal_row` (or `ratio_row` for "x times a
reference"), once per row, with the figure measured in that same run:

    from _common import ratio_row
    ratio_row("extract 20k members of 1-16 KiB vs `tar -x`", measured=0.71, at_most=0.5)

which prints `row | goal | measured | met?` and appends the row to `build/bench-rows.tsv`
(GAMEPAK_BENCH_ROWS elsewhere). `make bench` empties that file first and ends with
`benchmarks/summary.py`, which prints every row of the run as one table; a script run alone
adds its rows to the file of the last run (`summary.py --clear` empties it).
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

Timing = TypeVar("Timing")

# Where the goal rows of one `make bench` run are collected (one tab-separated row per line:
# row, goal, measured, met, script), read by benchmarks/summary.py.
ROWS_FILE = Path(
    os.environ.get("GAMEPAK_BENCH_ROWS") or Path(__file__).resolve().parent.parent / "build" / "bench-rows.tsv"
)
SCRATCH = Path(os.environ.get("GAMEPAK_BENCH_DIR", "/dev/shm/gamepak-bench"))
BIN = Path(sys.executable).parent
GAMEPAK = str(BIN / "gamepak")


def scratch(name: str) -> Path:
    """A fresh folder on tmpfs (the disk here is too noisy for timings)."""
    path = SCRATCH / name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def run_clocks(command: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of one command, which must succeed; its output
    is dropped. The CPU time is the process's own: other processes of a busy machine lengthen
    the wall time much more than it."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise subprocess.CalledProcessError(process.returncode, command)
    return wall, usage.ru_utime + usage.ru_stime


def run(command: list[str]) -> float:
    """Wall time of one command, which must succeed."""
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def alternate(rounds: int, contenders: dict[str, Callable[[int], float]]) -> dict[str, float]:
    """Run each contender once per round, alternating, and return the median seconds."""
    return {name: statistics.median(values) for name, values in alternate_times(rounds, contenders).items()}


def alternate_times(rounds: int, contenders: Mapping[str, Callable[[int], Timing]]) -> dict[str, list[Timing]]:
    """Run each contender once per round, alternating, and return every round's result (for a
    minimum: on a shared machine the fastest run is the one least disturbed by the others)."""
    times: dict[str, list[Timing]] = {name: [] for name in contenders}
    for round_number in range(rounds):
        for name, contender in contenders.items():
            times[name].append(contender(round_number))
    return times


def goal_row(row: str, goal: str, measured: str, met: bool | None, *, record: bool = True) -> None:
    """Print one performance goal as `row | goal | measured | met?` and, with `record`, append it
    to ROWS_FILE for the summary at the end of `make bench`. `met` None: not decided (e.g. the
    input was missing)."""
    verdict = "?" if met is None else "yes" if met else "NO"
    print(f"{row} | {goal} | {measured} | {verdict}")
    if record:
        ROWS_FILE.parent.mkdir(parents=True, exist_ok=True)
        script = Path(sys.argv[0]).name
        fields = [row, goal, measured, verdict, script]
        with ROWS_FILE.open("a", encoding="utf-8") as rows:
            rows.write("\t".join(field.replace("\t", " ").replace("\n", " ") for field in fields) + "\n")


def ratio_row(
    row: str,
    measured: float,
    *,
    at_most: float | None = None,
    at_least: float | None = None,
    detail: str = "",
    record: bool = True,
) -> bool:
    """`goal_row` for a ratio to a reference (`1.18x`): the goal is `<= at_most` or `>= at_least`;
    `detail` follows the figure (e.g. which case was the worst). Returns whether it was met."""
    if (at_most is None) == (at_least is None):
        raise ValueError("give exactly one of at_most and at_least")
    met = measured <= at_most if at_most is not None else measured >= at_least  # type: ignore[operator]
    goal = f"<= {at_most:.2f}x" if at_most is not None else f">= {at_least:.2f}x"
    goal_row(row, goal, f"{measured:.2f}x{f' ({detail})' if detail else ''}", met, record=record)
    return met


def child_peak_rss_mib() -> float:
    """The largest resident set of any finished child process, in MiB."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def compile_bytecode() -> None:
    """Make sure .pyc files exist (timings of start-up must not include compiling)."""
    import compileall

    import gamepak

    compileall.compile_dir(os.path.dirname(gamepak.__file__), quiet=1)


def noise(seed: int, size: int) -> bytes:
    """`size` random bytes, the same for the same seed (nothing compresses them)."""
    import random

    return random.Random(seed).randbytes(size)


def source_trees(here: Path, compare: Path | None) -> dict[str, Path]:
    """The source trees to alternate: `compare` (another checkout's `src`, when given), then this one."""
    return {"this tree": here} if compare is None else {"compared": compare.resolve(), "this tree": here}


def run_with_peak(command: list[str], src: Path, **run: Any) -> tuple[float, float, subprocess.CompletedProcess[bytes]]:
    """(seconds, peak RSS in MiB, the finished process) of `command` run with gamepak from the
    source tree `src`, under GNU time (each process's own peak)."""
    if not os.path.exists("/usr/bin/time"):
        raise SystemExit("GNU time (/usr/bin/time) is needed for each command's own peak RSS")
    report = SCRATCH / f"rss-{os.getpid()}.txt"
    start = time.perf_counter()
    finished = subprocess.run(
        ["/usr/bin/time", "-f", "%M", "-o", str(report), *command],
        stdout=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(src)},
        **run,
    )
    seconds = time.perf_counter() - start
    return seconds, int(report.read_text().split()[-1]) / 1024, finished


def print_runs(label: str, results: dict[str, list[tuple[float, float]]], width: int) -> None:
    """One line per source tree: the median seconds and the largest peak RSS of its runs."""
    for name, runs in results.items():
        seconds = statistics.median(run[0] for run in runs)
        peak = max(run[1] for run in runs)
        print(f"{label:{width}} {name:10} {seconds:6.2f} s (median of {len(runs)})  peak RSS {peak:7.1f} MiB")
