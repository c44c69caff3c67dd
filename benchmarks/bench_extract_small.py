"""Extract many small members vs `tar -xf` of the same files, on tmpfs, whole commands.

Rows (seeded sizes, each round into a fresh folder, contenders alternated; the ratio is of the
quickest run of each, the one least disturbed by a shared machine):
- PAK, 20,000 members of 1-16 KiB in 350 folders (the shape of real game data);
- PAK, 20,000 members of 1-64 KiB in 50 folders;
- JoePack, the 350-folder tree;
- uncompressed `.vpp_pc`, 20,000 members of 1-16 KiB with flat names (RFG packs have no folders).
Goal (issue 48): gamepak <= 0.5x tar's time on every row.

    python benchmarks/bench_extract_small.py [--rounds 7] [--rows pak350,pak50,jpk350,vpp]
    python benchmarks/bench_extract_small.py --timeline 7 --rows jpk350   # where a run's time goes
    python benchmarks/bench_extract_small.py --floor --rows jpk350        # and the kernel's floor

`--timeline N` (needs `strace`) runs each row's extraction N times and prints, per run and as
the minimum of each step, its timeline: process start -> first fork -> first file written ->
last file written -> exit (the files' times from their ctime/mtime, so only as fine as the
file system's clock).

`--floor` (needs a C compiler) adds two contenders to each round: `_extract_floor.c`, which
makes the same files the way gamepak does (openat relative to the folder, one `sendfile`,
close) without Python, on one process and on two: the kernel's part alone, so what is left
between it and gamepak is Python's (its start, the planning before the fork, the loop per file).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import warnings
from collections.abc import Callable
from typing import Any

import gamepak

from _common import GAMEPAK, compile_bytecode, ratio_row, run, scratch

FILES = 20_000
# Issue 48 item 2: gamepak's time at most half of `tar -x`'s on every row.
GOAL = 0.5


def make_tree(root: str, folders: int, largest: int, seed: int) -> list[str]:
    """Write FILES files of 1 KiB..`largest` into `folders` folders (none: flat); their names."""
    generator = random.Random(seed)
    blob = random.Random(seed + 1).randbytes(largest)
    names = []
    made = set()
    for index in range(FILES):
        if folders:
            folder = f"set{index % folders:03d}"
            name = f"{folder}/file{index:05d}.bin"
            if folder not in made:
                os.mkdir(os.path.join(root, folder))
                made.add(folder)
        else:
            name = f"file{index:05d}.bin"
        size = generator.randint(1 << 10, largest)
        fd = os.open(os.path.join(root, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, blob[:size])
        os.close(fd)
        names.append(name)
    return names


def build(work: str, row: str) -> tuple[str, str]:
    """The pack and the tar of one row's tree."""
    folders, largest, format_name = {
        "pak350": (350, 16 << 10, "pak"),
        "pak50": (50, 64 << 10, "pak"),
        "jpk350": (350, 16 << 10, "jpk"),
        "vpp": (0, 16 << 10, "vpp"),
    }[row]
    tree = os.path.join(work, f"{row}-tree")
    os.mkdir(tree)
    names = make_tree(tree, folders, largest, seed=len(row))
    extension = {"pak": "pak", "jpk": "jpk", "vpp": "vpp_pc"}[format_name]
    pack = os.path.join(work, f"{row}.{extension}")
    options: dict[str, Any] = {"flags": 0} if format_name == "vpp" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # more members than Quake allows, on purpose
        with gamepak.create(pack, format_name, **options) as writer:
            for name in names:
                writer.add(name, os.path.join(tree, name))
    archive = os.path.join(work, f"{row}.tar")
    tops = sorted({name.split("/")[0] for name in names})
    subprocess.run(["tar", "-cf", archive, "-C", tree, *tops], check=True)
    subprocess.run(["rm", "-rf", tree], check=True)
    return pack, archive


def floor_contenders(work: str, row: str, pack: str) -> dict[str, Callable[[int], float]]:
    """`_extract_floor` on one and on two processes, for `--floor` (none without a C compiler)."""
    import shutil

    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        print("--floor: no C compiler here, no floor measured")
        return {}
    program = os.path.join(work, "extract-floor")
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_extract_floor.c")
    subprocess.run([compiler, "-O2", "-o", program, source], check=True)
    with gamepak.open(pack) as archive:
        members = [(entry.name, entry.offset, entry.size) for entry in archive.infolist()]
    folders = sorted({name.rpartition("/")[0] for name, _, _ in members} - {""}, key=lambda path: path.count("/"))
    number = {folder: index for index, folder in enumerate(["", *folders])}
    jobs = os.path.join(work, f"{row}.jobs")
    with open(jobs, "w", encoding="utf-8") as listing:
        listing.write(f"{len(folders)} {len(members)}\n" + "".join(f"{folder}\n" for folder in folders))
        listing.writelines(
            f"{number[name.rpartition('/')[0]]} {offset} {size} {name}\n" for name, offset, size in members
        )

    def floor(workers: int) -> Callable[[int], float]:
        def extract(round_number: int) -> float:
            target = os.path.join(work, f"{row}-floor{workers}-{round_number}")
            return run([program, jobs, pack, target, str(workers)])

        return extract

    return {"floor 1": floor(1), "floor 2": floor(2)}


def measure(work: str, row: str, rounds: int, with_floor: bool = False) -> dict[str, list[float]]:
    pack, archive = build(work, row)

    def extract_pack(round_number: int) -> float:
        return run([GAMEPAK, "extract", pack, "-o", os.path.join(work, f"{row}-pack{round_number}")])

    def extract_tar(round_number: int) -> float:
        target = os.path.join(work, f"{row}-tar{round_number}")
        os.mkdir(target)
        return run(["tar", "-xf", archive, "-C", target])

    contenders = {"gamepak": extract_pack, "tar": extract_tar}
    if with_floor:
        contenders.update(floor_contenders(work, row, pack))
    times: dict[str, list[float]] = {key: [] for name in contenders for key in (name, f"{name} cpu")}
    for round_number in range(rounds):
        order = list(contenders) if round_number % 2 == 0 else list(contenders)[::-1]
        for name in order:
            before = _children_cpu()
            times[name].append(contenders[name](round_number))
            times[f"{name} cpu"].append(_children_cpu() - before)
    return times


def _children_cpu() -> float:
    """User + system seconds of every finished child process so far (forked workers included):
    on a machine other jobs keep busy, wall time mostly measures waiting."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timeline(work: str, row: str, runs: int) -> None:
    """Print where each of `runs` extractions of this row spends its wall time (see --timeline)."""
    import shutil
    import tempfile

    if shutil.which("strace") is None:
        raise SystemExit("--timeline needs strace")

    pack, _ = build(work, row)
    steps: list[list[float]] = []
    for number in range(runs):
        target = os.path.join(work, f"{row}-timeline{number}")
        with tempfile.NamedTemporaryFile("r", suffix=".strace") as trace:
            subprocess.run(
                ["strace", "-f", "--seccomp-bpf", "-ttt", "-e", "trace=execve,clone,clone3,fork,vfork,exit_group"]
                + ["-o", trace.name, GAMEPAK, "extract", pack, "-o", target],
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            lines = trace.read().splitlines()
        main_pid = lines[0].split()[0]
        start = float(lines[0].split()[1])
        forks = [float(line.split()[1]) for line in lines if line.split()[0] == main_pid and " clone" in line]
        ends = [float(line.split()[1]) for line in lines if line.split()[0] == main_pid and "+++ exited" in line]
        created, modified = [], []
        for folder, _, files in os.walk(target):
            for name in files:
                info = os.lstat(os.path.join(folder, name))
                created.append(info.st_ctime_ns / 1e9)
                modified.append(info.st_mtime_ns / 1e9)
        fork = forks[0] if forks else start
        points = [start, fork, min(created), max(modified), ends[-1]]
        step = [(later - earlier) * 1000 for earlier, later in zip(points, points[1:])]
        steps.append(step)
        print(
            f"{row} run {number}: start -> fork {step[0]:6.1f} -> first file {step[1]:6.1f} -> last file "
            f"{step[2]:6.1f} -> exit {step[3]:6.1f} ms (total {sum(step):6.1f})",
            flush=True,
        )
        subprocess.run(["rm", "-rf", target], check=True)
    best = [min(step[index] for step in steps) for index in range(4)]
    print(
        f"{row} min of each step: start -> fork {best[0]:.1f}, -> first file {best[1]:.1f}, -> last file "
        f"{best[2]:.1f}, -> exit {best[3]:.1f} ms"
    )


LABELS = {
    "pak350": "PAK, 20k x 1-16 KiB, 350 folders",
    "pak50": "PAK, 20k x 1-64 KiB, 50 folders",
    "jpk350": "JoePack, 20k x 1-16 KiB, 350 folders",
    "vpp": ".vpp_pc uncompressed, 20k x 1-16 KiB, flat",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--rows", default=",".join(LABELS))
    parser.add_argument("--timeline", type=int, default=0, metavar="N", help="timelines of N runs per row instead")
    parser.add_argument("--floor", action="store_true", help="also time the kernel's floor (needs a C compiler)")
    arguments = parser.parse_args()
    compile_bytecode()
    work = str(scratch("extract-small"))
    if arguments.timeline:
        for row in arguments.rows.split(","):
            timeline(work, row, arguments.timeline)
            subprocess.run(["rm", "-rf", work], check=True)
            os.makedirs(work)
        return
    results = {}
    for row in arguments.rows.split(","):
        times = measure(work, row, arguments.rounds, arguments.floor)
        results[row] = times
        gamepak_time, tar_time = min(times["gamepak"]), min(times["tar"])
        same_round = statistics.median(g / t for g, t in zip(times["gamepak"], times["tar"], strict=True))
        print(
            f"{LABELS[row]:45} gamepak {gamepak_time * 1000:7.1f} ms  tar {tar_time * 1000:7.1f} ms (min of "
            f"{arguments.rounds})  goal <= {GOAL:.2f}x, measured {gamepak_time / tar_time:.2f}x "
            f"(median of same-round ratios {same_round:.2f}x); CPU time "
            f"{min(times['gamepak cpu']) / min(times['tar cpu']):.2f}x",
            flush=True,
        )
        for name in ("floor 1", "floor 2"):
            if name in times:
                floor_time, floor_cpu = min(times[name]), min(times[f"{name} cpu"])
                print(
                    f"  {name} (no Python): {floor_time * 1000:7.1f} ms = {floor_time / tar_time:.2f}x tar's time, "
                    f"CPU {floor_cpu / min(times['tar cpu']):.2f}x",
                    flush=True,
                )
        ratio_row(
            f"extract: {LABELS[row]} vs tar -x",
            gamepak_time / tar_time,
            at_most=GOAL,
            detail=f"min of {arguments.rounds}; CPU {min(times['gamepak cpu']) / min(times['tar cpu']):.2f}x",
        )
        subprocess.run(["rm", "-rf", work], check=True)
        os.makedirs(work)
    subprocess.run(["rm", "-rf", work], check=True)


if __name__ == "__main__":
    main()
