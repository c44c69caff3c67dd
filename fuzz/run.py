#!/usr/bin/env python3
"""Run every fuzz harness for its share of a time budget (`make fuzz-long FUZZ_MINUTES=10`).

    python fuzz/run.py --minutes 10 [--corpus build/fuzz-corpus] [--crashes build/fuzz-crashes] [HARNESS ...]

The seeds are written first (`seeds.py`); each harness then fuzzes its own corpus folder, which
keeps what libFuzzer found interesting, so the next campaign starts where this one stopped. A
crash input is written to the crashes folder (`<harness>-crash-<sha1>`, or `-timeout-`, `-oom-`)
and the harness is started again for the rest of its share: one finding does not end the
search. The end is a table of executions per minute per harness (start-up included) and the
crash files; the exit code is 1 when anything crashed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
# A restart costs start-up (imports) and re-reading the corpus: not worth it for a few seconds.
MIN_RUN_SECONDS = 5
# The same bug found again and again after restarts: give the other harnesses their time.
MAX_CRASHES_PER_HARNESS = 10
# One input slower than this is a finding (a hang); memory past the limit too.
TIMEOUT_SECONDS = 30
RSS_LIMIT_MB = 2048
STATUS_LINE = re.compile(rb"^#(\d+)\s", re.MULTILINE)
EXECUTED = re.compile(rb"stat::number_of_executed_units:\s*(\d+)")
ARTIFACT = re.compile(rb"Test unit written to (\S+)")


@dataclass
class Result:
    """What one harness did in its share of the budget."""

    harness: str
    executions: int = 0
    seconds: float = 0.0
    crashes: list[str] = field(default_factory=list)

    @property
    def per_minute(self) -> float:
        return self.executions * 60 / self.seconds if self.seconds else 0.0


def executions_in(output: bytes) -> int:
    """Executions libFuzzer reports: its final statistics, or (after a crash, which prints none)
    the last status line."""
    final = EXECUTED.search(output)
    if final:
        return int(final.group(1))
    counts = [int(match) for match in STATUS_LINE.findall(output)]
    return max(counts, default=0)


def fuzz_one(harness: str, seconds: float, corpus: Path, crashes: Path, logs: Path) -> Result:
    """Fuzz one harness for `seconds`, restarting it after each crash while time is left."""
    result = Result(harness)
    folder = corpus / harness
    folder.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + seconds
    run = 0
    while True:
        left = deadline - time.monotonic()
        if left < MIN_RUN_SECONDS and run:
            break
        run += 1
        scratch = tempfile.mkdtemp(prefix=f"{harness}-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
        command = [
            sys.executable,
            str(HERE / f"{harness}.py"),
            str(folder),
            f"-max_total_time={max(1, int(left))}",
            f"-artifact_prefix={crashes}/{harness}-",
            f"-timeout={TIMEOUT_SECONDS}",
            f"-rss_limit_mb={RSS_LIMIT_MB}",
            "-print_final_stats=1",
        ]
        started = time.monotonic()
        try:
            completed = subprocess.run(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env={**os.environ, "GAMEPAK_FUZZ_SCRATCH": scratch},
                check=False,
            )
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        result.seconds += time.monotonic() - started
        output = completed.stdout
        (logs / f"{harness}-{run}.log").write_bytes(output)
        result.executions += executions_in(output)
        if completed.returncode == 0:
            break
        found = [match.decode() for match in ARTIFACT.findall(output)]
        result.crashes += found or [f"(exit code {completed.returncode}, see {logs}/{harness}-{run}.log)"]
        print(f"  {harness}: crash {len(result.crashes)}: {result.crashes[-1]}", flush=True)
        if len(result.crashes) >= MAX_CRASHES_PER_HARNESS or not found:
            break
    return result


def harnesses() -> list[str]:
    """Every harness in this folder, by name (fuzz_read_pak, ...)."""
    return [path.stem for path in sorted(HERE.glob("fuzz_*.py"))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--minutes", type=float, default=10.0, help="the whole budget, shared by the harnesses")
    parser.add_argument("--corpus", type=Path, default=Path("build/fuzz-corpus"))
    parser.add_argument("--crashes", type=Path, default=Path("build/fuzz-crashes"))
    parser.add_argument("--logs", type=Path, default=Path("build/fuzz-logs"))
    parser.add_argument("names", nargs="*", metavar="HARNESS", help="only these harnesses (default: all)")
    args = parser.parse_args(argv)
    known = harnesses()
    chosen = args.names or known
    unknown = sorted(set(chosen) - set(known))
    if unknown:
        parser.error(f"no harness named {', '.join(unknown)}; there are: {', '.join(known)}")
    for folder in (args.corpus, args.crashes, args.logs):
        folder.mkdir(parents=True, exist_ok=True)

    sys.path.insert(0, str(HERE))
    from seeds import DEFAULT_SAMPLES, write_seeds

    write_seeds(args.corpus, DEFAULT_SAMPLES if DEFAULT_SAMPLES.is_dir() else None)
    share = args.minutes * 60 / len(chosen)
    print(f"fuzz: {len(chosen)} harnesses, {share:.0f} s each; corpus {args.corpus}, crashes {args.crashes}")
    results = []
    for harness in chosen:
        print(f"fuzz: {harness}", flush=True)
        results.append(fuzz_one(harness, share, args.corpus, args.crashes.resolve(), args.logs))

    width = max(len(result.harness) for result in results)
    print(f"\n{'harness':<{width}}  {'executions':>10}  {'seconds':>7}  {'exec/min':>9}  {'corpus':>6}  crashes")
    for result in results:
        corpus_files = sum(1 for _ in (args.corpus / result.harness).iterdir())
        print(
            f"{result.harness:<{width}}  {result.executions:>10}  {result.seconds:>7.0f}  "
            f"{result.per_minute:>9.0f}  {corpus_files:>6}  {len(result.crashes)}"
        )
    crashed = [crash for result in results for crash in result.crashes]
    for crash in crashed:
        print(f"crash: {crash}")
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
