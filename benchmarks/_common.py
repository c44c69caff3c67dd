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
