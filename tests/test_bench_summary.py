"""`make bench`'s goal table: a bench script reports each goal with `_common.goal_row`/`ratio_row`
(printed as `row | goal | measured | met?` and appended to GAMEPAK_BENCH_ROWS), and
`benchmarks/summary.py` prints every recorded row of the run as one table."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

REPORT = """
from _common import goal_row, ratio_row
assert ratio_row("start-up, every verb", 1.18, at_most=1.25, detail="worst: ls") is True
assert ratio_row("catalog, 2 workers vs one", 1.5, at_least=1.6) is False
goal_row("catalog peak memory, 1M archives", "< 500 MB", "620 MB", False)
goal_row("table check vs ElementTree", "<= 1.00x", "no sample", None)
ratio_row("not recorded", 9.0, at_most=1.0, record=False)
"""


def run_in_benchmarks(arguments: list[str], rows: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *arguments],
        cwd=BENCHMARKS,
        env={**os.environ, "GAMEPAK_BENCH_ROWS": str(rows)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_rows_reported_by_a_script_are_summed_up_in_one_table(tmp_path: Path) -> None:
    rows = tmp_path / "rows.tsv"
    reported = run_in_benchmarks(["-c", REPORT], rows)
    assert reported.returncode == 0, reported.stderr
    assert reported.stdout.splitlines() == [
        "start-up, every verb | <= 1.25x | 1.18x (worst: ls) | yes",
        "catalog, 2 workers vs one | >= 1.60x | 1.50x | NO",
        "catalog peak memory, 1M archives | < 500 MB | 620 MB | NO",
        "table check vs ElementTree | <= 1.00x | no sample | ?",
        "not recorded | <= 1.00x | 9.00x | NO",
    ]
    summary = run_in_benchmarks(["summary.py"], rows)
    assert summary.returncode == 0, summary.stderr
    table = summary.stdout.splitlines()
    assert table[:2] == ["| row | goal | measured | met? | script |", "|---|---|---|---|---|"]
    assert table[2] == "| start-up, every verb | <= 1.25x | 1.18x (worst: ls) | yes | -c |"
    assert table[4] == "| catalog peak memory, 1M archives | < 500 MB | 620 MB | NO | -c |"
    assert "not recorded" not in summary.stdout
    assert table[5] == "| table check vs ElementTree | <= 1.00x | no sample | ? | -c |"
    assert table[-1] == "1 of 4 goals met in this run"


def test_clear_empties_the_rows_and_an_empty_run_is_an_error(tmp_path: Path) -> None:
    rows = tmp_path / "build" / "rows.tsv"
    assert run_in_benchmarks(["-c", REPORT], rows).returncode == 0
    assert run_in_benchmarks(["summary.py", "--clear"], rows).returncode == 0
    assert rows.read_text() == ""
    empty = run_in_benchmarks(["summary.py"], rows)
    assert empty.returncode == 1 and "no goal rows were recorded" in empty.stderr


def test_the_catalog_s_speed_up_has_a_wall_row_and_a_cpu_row(tmp_path: Path) -> None:
    # Under load the wall row says NO while the CPU row shows the catalog itself meets the goal.
    rows = tmp_path / "rows.tsv"
    script = "from bench_catalog import _speedup_rows\n_speedup_rows('catalog, 2 workers vs one', 1.21, 1.74)\n"
    reported = run_in_benchmarks(["-c", script], rows)
    assert reported.returncode == 0, reported.stderr
    recorded = [line.split("\t")[:4] for line in rows.read_text().splitlines()]
    assert recorded == [
        ["catalog, 2 workers vs one", ">= 1.60x", "1.21x (wall time)", "NO"],
        ["catalog, 2 workers vs one (CPU)", ">= 1.60x", "1.74x (CPU seconds: client + busiest worker)", "yes"],
    ]
