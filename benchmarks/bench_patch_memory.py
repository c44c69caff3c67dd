"""Peak RSS and wall time of `gamepak patch apply` replacing large members, on /dev/shm.

Rows: a PAK whose 8 members of 64 MiB a patch replaces (raw blobs: new random bytes), and a game
folder whose 8 plain files of 64 MiB it replaces. Each apply is a whole `python -m gamepak`
process started by GNU time (its own peak RSS), each round on a fresh copy of the target.
`--compare-src DIR` alternates with another source tree (e.g. an export of main's `src`), so
before and after come from the same rounds.

    python benchmarks/bench_patch_memory.py [--count 8] [--member-mib 64] [--rounds 3] [--compare-src DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
from pathlib import Path

from _common import noise, print_runs, run_with_peak, scratch, source_trees

MIB = 1 << 20
HERE = Path(__file__).resolve().parents[1] / "src"


def make_cases(work: Path, count: int, size: int) -> list[tuple[str, Path, Path]]:
    """(label, base target, patch) for the PAK and the folder; the patches are written by hand
    with raw blobs (`make` would try a level-19 delta of every 64 MiB member: minutes)."""
    import gamepak
    from gamepak.ops.patch.container import Operation
    from gamepak.ops.patch.write import write_patch

    pak = work / "base.pak"
    folder = work / "game"
    (folder / "data").mkdir(parents=True)
    pak_operations, plain_operations, blobs = [], [], {}
    with gamepak.create(pak) as writer:
        for index in range(count):
            old, new = noise(index, size), noise(1000 + index, size)
            name = f"maps/part{index}.bin"
            writer.add(name, old)
            (folder / "data" / f"part{index}.bin").write_bytes(old)
            blob = f"blobs/{index}"
            blobs[blob] = new
            hashes = {
                "base_sha256": hashlib.sha256(old).hexdigest(),
                "target_sha256": hashlib.sha256(new).hexdigest(),
                "size": size,
                "blob": blob,
                "encoding": "raw",
            }
            pak_operations.append(Operation("replace", "", name, **hashes))  # type: ignore[arg-type]
            plain_operations.append(Operation("replace", f"data/part{index}.bin", None, **hashes))  # type: ignore[arg-type]
    write_patch(str(work / "pak.gpatch"), pak_operations, blobs, {"name": "pak"}, deflate=False)
    write_patch(str(work / "plain.gpatch"), plain_operations, blobs, {"name": "plain"}, deflate=False)
    return [
        (f"PAK, {count} members of {size // MIB} MiB replaced", pak, work / "pak.gpatch"),
        (f"folder, {count} plain files of {size // MIB} MiB replaced", folder, work / "plain.gpatch"),
    ]


def fresh(base: Path, target: Path) -> None:
    for path in (target, Path(f"{target}.gamepak-undo")):
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    if base.is_dir():
        shutil.copytree(base, target)
    else:
        shutil.copy(base, target)


def apply(src: Path, target: Path, patch: Path) -> tuple[float, float]:
    """(seconds, peak RSS in MiB) of one `gamepak patch apply` run from the source tree `src`."""
    command = [sys.executable, "-m", "gamepak", "patch", "apply", str(target), str(patch)]
    seconds, peak, _ = run_with_peak(command, src, check=True)
    return seconds, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=8)
    parser.add_argument("--member-mib", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--compare-src", type=Path, help="another source tree to alternate with (e.g. main's)")
    arguments = parser.parse_args()
    work = scratch("patch-memory")
    sources = source_trees(HERE, arguments.compare_src)
    try:
        for label, base, patch in make_cases(work, arguments.count, arguments.member_mib * MIB):
            target = work / f"target{base.suffix}"
            results: dict[str, list[tuple[float, float]]] = {name: [] for name in sources}
            for _ in range(arguments.rounds):
                for name, src in sources.items():
                    fresh(base, target)
                    results[name].append(apply(src, target, patch))
            print_runs(label, results, 45)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
