"""Shared helpers for the benchmark scripts: alternating timed runs and medians."""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SCRATCH = Path(os.environ.get("GAMEPAK_BENCH_DIR", "/dev/shm/gamepak-bench"))
BIN = Path(sys.executable).parent
GAMEPAK = str(BIN / "gamepak")


def scratch(name: str) -> Path:
    """A fresh folder on tmpfs (the disk here is too noisy for timings)."""
    path = SCRATCH / name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def run(command: list[str]) -> float:
    """Wall time of one command, which must succeed."""
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def alternate(rounds: int, contenders: dict[str, Callable[[int], float]]) -> dict[str, float]:
    """Run each contender once per round, alternating, and return the median seconds."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for round_number in range(rounds):
        for name, contender in contenders.items():
            times[name].append(contender(round_number))
    return {name: statistics.median(values) for name, values in times.items()}


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
