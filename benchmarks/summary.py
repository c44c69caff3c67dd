"""The goals `make bench` measured, as one table: every row the bench scripts of this run reported
with `_common.goal_row` / `ratio_row` (build/bench-rows.tsv), in the order they ran.

    python benchmarks/summary.py            # print the table of the last run
    python benchmarks/summary.py --clear    # empty the rows (`make bench` does this first)

Prints `row | goal | measured | met? | script` as a Markdown table, then how many rows were met.
Exits 0 whether or not the goals were met (the table says which were not); exits 1 when no row
was recorded at all, which means the scripts did not report theirs.
"""

from __future__ import annotations

import argparse
import sys

from _common import ROWS_FILE

HEADER = ("row", "goal", "measured", "met?", "script")


def read_rows() -> list[tuple[str, ...]]:
    """The recorded rows, each (row, goal, measured, met, script); a malformed line is kept whole
    in the first column rather than dropped."""
    if not ROWS_FILE.exists():
        return []
    rows = []
    for line in ROWS_FILE.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        fields = line.split("\t")
        rows.append(tuple(fields) if len(fields) == len(HEADER) else (line, "", "", "?", ""))
    return rows


def table(rows: list[tuple[str, ...]]) -> str:
    """A Markdown table of `rows` under HEADER."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(field.replace("|", "\\|") for field in row) + " |" for row in rows]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clear", action="store_true", help="empty the recorded rows and print nothing")
    args = parser.parse_args()
    if args.clear:
        ROWS_FILE.parent.mkdir(parents=True, exist_ok=True)
        ROWS_FILE.write_text("", encoding="utf-8")
        return 0
    rows = read_rows()
    if not rows:
        print(f"no goal rows were recorded in {ROWS_FILE}", file=sys.stderr)
        return 1
    print(table(rows))
    met = sum(row[3] == "yes" for row in rows)
    print(f"\n{met} of {len(rows)} goals met in this run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
