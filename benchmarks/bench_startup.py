"""Start-up of every command vs the floor of any console script, `python -c "import re"`, with
compiled bytecode (issue 48, item 3). Goal: every command within 1.25x of the floor.

Measured over every verb `gamepak --help` lists (the table `gamepak.cli.COMMANDS` it is printed
from), each as `gamepak VERB --help`, every sub-command of a command group as
`gamepak VERB SUB --help`, and a real run on a tiny pack wherever a verb has a cheap one (`ls`,
`info`, `cat`, `detect`, `verify`, `formats`, `extract`, `create`, `convert`, `diff`, the edits
with `--dry-run`, `texture ls` of a WAD). The machine is shared, so the contenders alternate,
round after round, and each is scored by its fastest run (the one least disturbed), divided by
the fastest run of the floor.

    python benchmarks/bench_startup.py [--rounds 11] [--only ls,verify] [--instructions]

`--instructions` runs each command once under valgrind (cachegrind, no cache simulation) and
compares the instructions executed instead: the same figure on a busy machine as on an idle one
(it leaves out the kernel's time and memory stalls; on the idle machine it came within a few
hundredths of the wall-time ratios).

Prints `command | goal | measured | met?` per command, then the row of issue 48's table (the
worst command) for `make bench`'s summary.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable

import gamepak
from gamepak.cli import COMMANDS, build_parser

from _common import GAMEPAK, alternate_times, compile_bytecode, ratio_row, run_clocks, scratch

GOAL = 1.25
FLOOR = 'python -c "import re"'


def subcommands(verb: str) -> list[str]:
    """The sub-commands of a command group (`texture`: ls, export, ...), none for a plain command."""
    parser = build_parser(verb)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            command = action.choices[verb]
            for inner in command._actions:
                if isinstance(inner, argparse._SubParsersAction):
                    return list(inner.choices)
    return []


def make_inputs(work: str) -> dict[str, str]:
    """The tiny inputs of the real runs: two equal 20-member PAKs, a file to add, a WAD."""
    small = f"{work}/small.pak"
    with gamepak.create(small) as writer:
        for index in range(20):
            writer.add(f"docs/page{index}.txt", bytes(100))
    other = f"{work}/other.pak"
    shutil.copy(small, other)
    new = f"{work}/new.txt"
    with open(new, "wb") as file:
        file.write(b"new")
    folder = f"{work}/folder"
    os.mkdir(folder)
    shutil.copy(new, folder)
    return {"small": small, "other": other, "new": new, "folder": folder}


def real_runs(work: str, inputs: dict[str, str]) -> dict[str, Callable[[int], list[str]]]:
    """Command lines of cheap real runs, per round (a run that writes gets a fresh output)."""
    small, other, new, folder = inputs["small"], inputs["other"], inputs["new"], inputs["folder"]
    return {
        "ls": lambda _: ["ls", small],
        "info": lambda _: ["info", small],
        "cat": lambda _: ["cat", small, "docs/page3.txt"],
        "detect": lambda _: ["detect", small],
        "verify": lambda _: ["verify", small],
        "formats": lambda _: ["formats"],
        "extract": lambda number: ["extract", small, "-o", f"{work}/extracted{number}"],
        "create": lambda number: ["create", f"{work}/created{number}.pak", folder],
        "convert": lambda number: ["convert", small, f"{work}/converted{number}.zip"],
        "diff": lambda _: ["diff", small, other],
        "add": lambda _: ["add", other, new, "--dry-run"],
        "rm": lambda _: ["rm", other, "docs/page1.txt", "--dry-run"],
        "mv": lambda _: ["mv", other, "docs/page1.txt", "docs/moved.txt", "--dry-run"],
        "compact": lambda _: ["compact", other, "--dry-run"],
    }


def instructions(command: list[str]) -> int:
    """Instructions one run of `command` executes, counted by valgrind's cachegrind."""
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind")
    # One hash seed for every run: the random one moves a count by up to 0.2 M instructions,
    # as much as most commands' margin under the goal.
    result = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", *command],
        env={**os.environ, "PYTHONHASHSEED": "0"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=True,
    )
    found = re.search(r"I\s+refs:\s+([\d,]+)", result.stderr)
    if found is None:
        raise SystemExit(f"no instruction count in valgrind's output: {result.stderr[-500:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=11, help="alternating rounds (default 11)")
    parser.add_argument("--only", help="comma-separated verbs to time (default: every verb)")
    parser.add_argument(
        "--instructions", action="store_true", help="count instructions under valgrind (one run each) instead of timing"
    )
    options = parser.parse_args()
    compile_bytecode()
    work = str(scratch("startup"))
    inputs = make_inputs(work)
    verbs = [verb for names in COMMANDS.values() for verb in names]
    if options.only:
        verbs = [verb for verb in verbs if verb in options.only.split(",")]
    commands: dict[str, Callable[[int], list[str]]] = {
        "--version": lambda _: ["--version"],
        "--help": lambda _: ["--help"],
    }
    real = real_runs(work, inputs)
    for verb in verbs:
        commands[f"{verb} --help"] = lambda _, verb=verb: [verb, "--help"]  # type: ignore[misc]
        for sub in subcommands(verb):
            commands[f"{verb} {sub} --help"] = lambda _, verb=verb, sub=sub: [verb, sub, "--help"]  # type: ignore[misc]
        if verb in real:
            commands[" ".join(real[verb](0)).replace(work + "/", "")] = real[verb]
    if options.instructions:
        report_instructions(commands)
        shutil.rmtree(work)
        return
    contenders: dict[str, Callable[[int], tuple[float, float]]] = {
        FLOOR: lambda _: run_clocks([sys.executable, "-c", "import re"])
    }
    for name, argv in commands.items():
        contenders[f"gamepak {name}"] = lambda number, argv=argv: run_clocks([GAMEPAK, *argv(number)])  # type: ignore[misc]
    times = alternate_times(options.rounds, contenders)
    floor_runs = times.pop(FLOOR)
    floor = min(wall for wall, _ in floor_runs)
    floor_cpu = min(cpu for _, cpu in floor_runs)
    print(
        f"{FLOOR}: {floor * 1000:.1f} ms wall, {floor_cpu * 1000:.1f} ms CPU (fastest of {options.rounds}); "
        "each command's fastest run over it (the CPU time's ratio, less disturbed on a busy machine, in brackets):"
    )
    ratios = {}
    for name, runs in times.items():
        wall = min(run[0] for run in runs)
        cpu = min(run[1] for run in runs)
        ratios[name] = wall / floor
        detail = f"{wall * 1000:.1f} ms; CPU {cpu / floor_cpu:.2f}x"
        ratio_row(name, ratios[name], at_most=GOAL, detail=detail, record=False)
    worst = max(ratios, key=ratios.__getitem__)
    slow = sum(ratio > GOAL for ratio in ratios.values())
    ratio_row(
        f'start-up vs `python -c "import re"`, every verb ({len(ratios)} commands)',
        ratios[worst],
        at_most=GOAL,
        detail=f"worst: {worst}; {slow} over the goal",
    )
    shutil.rmtree(work)


def report_instructions(commands: dict[str, Callable[[int], list[str]]]) -> None:
    """Each command's instructions over the floor's, and the worst as the goal's row."""
    floor = instructions([sys.executable, "-c", "import re"])
    print(f"{FLOOR}: {floor / 1e6:.1f} M instructions; each command's count over it:")
    ratios = {}
    for name, argv in commands.items():
        count = instructions([GAMEPAK, *argv(0)])
        ratios[f"gamepak {name}"] = count / floor
        ratio_row(f"gamepak {name}", count / floor, at_most=GOAL, detail=f"{count / 1e6:.1f} M", record=False)
    worst = max(ratios, key=ratios.__getitem__)
    slow = sum(ratio > GOAL for ratio in ratios.values())
    ratio_row(
        f'start-up vs `python -c "import re"` in instructions, every verb ({len(ratios)} commands)',
        ratios[worst],
        at_most=GOAL,
        detail=f"worst: {worst}; {slow} over the goal",
    )


if __name__ == "__main__":
    main()
