"""`gamepak serve`'s strings page of an `.rfglocatext` named from `table.vpp_pc` beside it: the
first request (the tables read) and the second (the names the server kept, no table read).

The pair is the game's own (`../shared/samples`: `table.vpp_pc`, `locatexts_ar_eg.rfglocatext`,
copied into a scratch folder on tmpfs, outside the project: the server refuses links that leave
its folder) when present, else a made-up pack of 400 tables.
Each round starts a new server; `--compare OTHER/src` alternates with another checkout.

    python benchmarks/bench_serve_strings.py [--rounds 5] [--compare /work/main/src]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import gamepak

from _common import scratch, source_trees

HERE = Path(__file__).resolve().parent.parent / "src"
SAMPLES = Path(os.environ.get("GAMEPAK_SAMPLES", Path(__file__).resolve().parent.parent.parent / "shared" / "samples"))
PAGE = "/strings/locatexts_ar_eg.rfglocatext"


def make_root(work: Path) -> Path:
    root = work / "root"
    root.mkdir()
    table, strings = SAMPLES / "vpp" / "table.vpp_pc", SAMPLES / "rfg" / "locatexts_ar_eg.rfglocatext"
    if table.exists() and strings.exists():
        shutil.copyfile(table, root / "table.vpp_pc")
        shutil.copyfile(strings, root / strings.name)
        return root
    from gamepak.formats.rfg.locatext import LocaEntry, build, identifier_hash

    names = [f"UI_NAME_{number:06d}" for number in range(40_000)]
    with gamepak.create(root / "table.vpp_pc", flags=1) as writer:
        for index in range(400):
            rows = "".join(f"<Row><Name>{name}</Name></Row>" for name in names[index * 100 : index * 100 + 100])
            writer.add(f"t{index}.xtbl", f"<root><Table>{rows}</Table></root>".encode())
    entries = [LocaEntry(identifier_hash(name), f"text {name}".encode("utf-16-le") + b"\0\0") for name in names[:2000]]
    (root / "locatexts_ar_eg.rfglocatext").write_bytes(build(entries))
    return root


def serve(root: Path, src: Path) -> tuple[subprocess.Popen[str], str]:
    environment = {**os.environ, "PYTHONPATH": str(src)}
    process = subprocess.Popen(
        [sys.executable, "-m", "gamepak", "serve", str(root), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=environment,
    )
    assert process.stdout is not None
    match = re.search(r"(http://[^ ]+)/browse/", process.stdout.readline())
    if not match:
        raise SystemExit("the server did not start")
    return process, match.group(1)


def timed(url: str) -> float:
    began = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        page = response.read()
    assert b'<td dir="auto">' in page, page[:300]
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--compare", type=Path)
    arguments = parser.parse_args()
    root = make_root(scratch("serve-strings"))
    trees = source_trees(HERE, arguments.compare)
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in trees}
    for _ in range(arguments.rounds):
        for name, src in trees.items():
            process, base = serve(root, src)
            try:
                times[name][0].append(timed(base + PAGE))
                times[name][1].append(timed(base + PAGE + "?offset=0"))
            finally:
                process.terminate()
                process.wait(timeout=30)
    for name, (first, second) in times.items():
        first_median, second_median = statistics.median(first), statistics.median(second)
        print(
            f"{name}: first request {first_median:.3f} s, second {second_median:.3f} s "
            f"(second/first {second_median / first_median:.2f})"
        )


if __name__ == "__main__":
    main()
