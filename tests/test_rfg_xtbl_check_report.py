"""`table check`'s report: its lines and its counts by kind, made in bulk (`check.finding_lines`,
`check.count_kinds`), are what one `str()` and one `Finding.kind` per finding give; and the
command's output on the game's tables."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from gamepak.formats.rfg.xtbl.check import Finding, count_kinds, finding_lines

from conftest import sample

TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
PROBLEMS = (
    st.sampled_from(
        ["not a choice", "not a choice: x", "no such row in a.xtbl", "not a flag (of 3)", "not in the schema", ""]
    )
    | TEXT
)
FINDINGS = st.lists(
    st.builds(Finding, TEXT, TEXT, TEXT, TEXT, PROBLEMS, st.sampled_from(["error", "warning"])), max_size=40
)


@settings(max_examples=60, deadline=None)
@given(FINDINGS)
def test_lines_and_counts_are_one_str_and_one_kind_per_finding(findings: list[Finding]) -> None:
    assert finding_lines(findings) == "".join(f"{finding.severity}: {finding}\n" for finding in findings)
    expected: dict[tuple[str, str], int] = {}
    for finding in findings:
        expected[(finding.severity, finding.kind)] = expected.get((finding.severity, finding.kind), 0) + 1
    # The same counts in the same order: the summary sorts by count, ties in first-seen order.
    assert list(count_kinds(findings).items()) == list(expected.items())


def test_counts_keep_the_order_each_kind_first_appears() -> None:
    findings = [
        Finding("t", "r", "f", "v", problem, "warning")
        for problem in ("not a choice: b", "no such row in x.xtbl", "not a choice: a", "not in the schema")
    ]
    assert list(count_kinds(findings)) == [
        ("warning", "not a choice"),
        ("warning", "no such row in x.xtbl"),
        ("warning", "not in the schema"),
    ]
    assert count_kinds(findings)[("warning", "not a choice")] == 2


def test_check_leaves_the_collector_on(tmp_path: Path) -> None:
    """The command moves what it made to the oldest generation and turns the collector back
    on: in-process callers keep a working collector and nothing frozen."""
    from gamepak.cli import main

    table = tmp_path / "t.xtbl"
    table.write_text("<root><Table><t><Name>a</Name></t></Table></root>", encoding="utf-8")
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    main(["table", "check", str(table)])
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen  # nothing left frozen


def test_game_tables_report() -> None:
    """The game's tables: one line per finding on stdout, the counts by kind on stderr (most
    first), the totals last, and the exit status of a check that found errors."""
    pack = sample("vpp/table.vpp_pc")
    done = subprocess.run(
        [sys.executable, "-m", "gamepak", "table", "check", str(pack)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert len(lines) == 6241  # 6,240 findings and one table that cannot be read
    assert lines[-1].startswith("error: ")
    summary = done.stderr.splitlines()
    assert summary[0] == "gamepak:    5431 warning: not in the schema"
    assert summary[-1] == "gamepak: 3 errors, 6238 warnings"
    counted = sum(int(line.split()[1]) for line in summary if line.split()[2] in ("error:", "warning:"))
    assert counted == 6241


def test_check_imports_neither_json_nor_typing(tmp_path: Path) -> None:
    """`table check` parses no JSON and annotates nothing at run time: neither module is
    imported (start-up: `json` and `typing` were 3-5 ms of its imports)."""
    table = tmp_path / "t.xtbl"
    table.write_text(
        "<root><Table><t><Name>a</Name><Items><Item>1</Item><Item>2</Item></Items></t></Table></root>",
        encoding="utf-8",
    )
    script = (
        "import sys, atexit\n"
        "atexit.register(lambda: sys.stderr.write('MODULES ' + repr(sorted({'json', 'typing'} & set(sys.modules)))))\n"
        "from gamepak.cli import run\n"
        f"sys.argv = ['gamepak', 'table', 'check', {str(table)!r}]\n"
        "run()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert "MODULES []" in done.stderr, done.stderr
