"""Peak RSS and wall time of `gamepak patch make` between copies that differ in large members, on
/dev/shm.

Rows: two PAKs whose 8 members of 64 MiB differ (new random bytes), and two game folders whose 8
plain files of 64 MiB differ. Each member is 64 MiB and 64 KiB: just past the largest base `make`
makes a delta against (`container.MAX_DELTA_BASE_BYTES`), so the blobs are raw, as new random
bytes would be anyway, and no level-19 delta of noise takes minutes. Each make is a whole
`python -m gamepak` process started by GNU time (its own peak RSS), writing a fresh patch.
`--compare-src DIR` alternates with another source tree (e.g. an export of main's `src`), so
before and after come from the same rounds, and checks both wrote the same bytes.

`--as pak` / `--as syncfaction` time `patch make --as` instead (an override pak; a SyncFaction
mod folder, from the folders only, and from two folders holding the PAKs): the changed members
and files copied into the mod.

    python benchmarks/bench_patch_make_memory.py [--count 8] [--member-mib 64] [--rounds 3] [--compare-src DIR]
        [--as pak|syncfaction]
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

from _common import noise, print_runs, run_with_peak, scratch, source_trees

MIB = 1 << 20
PAST_DELTA_LIMIT = 64 << 10  # added to each member's size: past MAX_DELTA_BASE_BYTES
HERE = Path(__file__).resolve().parents[1] / "src"


def make_cases(work: Path, count: int, size: int, with_packed_folders: bool) -> list[tuple[str, Path, Path]]:
    """(label, base, modded) for the PAKs and the folders (and folders holding the PAKs)."""
    import gamepak

    folders = {side: work / side for side in ("base", "modded")}
    for folder in folders.values():
        (folder / "data").mkdir(parents=True)
    with gamepak.create(work / "base.pak") as base, gamepak.create(work / "modded.pak") as modded:
        for index in range(count):
            old, new = noise(index, size), noise(1000 + index, size)
            base.add(f"maps/part{index}.bin", old)
            modded.add(f"maps/part{index}.bin", new)
            (folders["base"] / "data" / f"part{index}.bin").write_bytes(old)
            (folders["modded"] / "data" / f"part{index}.bin").write_bytes(new)
    mib = size // MIB
    cases = [
        (f"PAK, {count} members of {mib} MiB differ", work / "base.pak", work / "modded.pak"),
        (f"folder, {count} plain files of {mib} MiB differ", folders["base"], folders["modded"]),
    ]
    if with_packed_folders:
        # Game folders holding a pack, for a mod folder of members: flat names, as RFG's packs
        # have (export takes the first part of a name with '/' for a nested pack).
        packed = {side: work / f"packed-{side}" / "data" / "misc.pak" for side in ("base", "modded")}
        for path in packed.values():
            path.parent.mkdir(parents=True)
        with gamepak.create(packed["base"]) as base, gamepak.create(packed["modded"]) as modded:
            for index in range(count):
                base.add(f"part{index}.bin", noise(index, size))
                modded.add(f"part{index}.bin", noise(1000 + index, size))
        label = f"folder, a PAK's {count} members of {mib} MiB differ"
        cases.append((label, work / "packed-base", work / "packed-modded"))
    return cases


def digest(output: Path) -> str:
    """The sha256 of a file, or of a folder's files (paths and bytes, in path order)."""
    hashed = hashlib.sha256()
    files = sorted(path for path in output.rglob("*") if path.is_file()) if output.is_dir() else [output]
    for path in files:
        hashed.update(path.relative_to(output).as_posix().encode() + b"\0")
        with path.open("rb") as handle:
            hashed.update(hashlib.file_digest(handle, "sha256").digest())
    return hashed.hexdigest()


def make(src: Path, base: Path, modded: Path, output: Path, kind: str | None) -> tuple[float, float, str]:
    """(seconds, peak RSS in MiB, sha256 of what it wrote) of one `gamepak patch make` run (as
    `kind`, when given) from the source tree `src`."""
    command = [sys.executable, "-m", "gamepak", "patch", "make", str(base), str(modded), "-o", str(output)]
    if kind is not None:
        command += ["--as", kind]
    shutil.rmtree(output, ignore_errors=True) if output.is_dir() else output.unlink(missing_ok=True)
    # `--as` reports what it wrote: only a failure's message is shown.
    seconds, peak, finished = run_with_peak(command, src, stderr=subprocess.PIPE)
    if finished.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{finished.stderr.decode(errors='replace')}")
    written = digest(output)
    shutil.rmtree(output) if output.is_dir() else output.unlink()  # tmpfs is memory: one output at a time
    return seconds, peak, written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=8)
    parser.add_argument("--member-mib", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--compare-src", type=Path, help="another source tree to alternate with (e.g. main's)")
    parser.add_argument("--as", dest="kind", choices=("pak", "syncfaction"), help="time `patch make --as KIND`")
    arguments = parser.parse_args()
    work = scratch("patch-make-memory")
    sources = source_trees(HERE, arguments.compare_src)
    try:
        size = arguments.member_mib * MIB + PAST_DELTA_LIMIT
        output = work / {None: "p.gpatch", "pak": "pak1.pak", "syncfaction": "mymod"}[arguments.kind]
        for label, base, modded in make_cases(work, arguments.count, size, arguments.kind == "syncfaction"):
            if arguments.kind == "syncfaction" and not base.is_dir():
                continue  # a SyncFaction mod is made from two game folders
            if arguments.kind is not None:
                label = f"--as {arguments.kind}: {label}"
            results: dict[str, list[tuple[float, float, str]]] = {name: [] for name in sources}
            for _ in range(arguments.rounds):
                for name, src in sources.items():
                    results[name].append(make(src, base, modded, output, arguments.kind))
            if arguments.kind is not None and len({run[2] for runs in results.values() for run in runs}) != 1:
                raise SystemExit(f"{label}: the source trees wrote different bytes")
            print_runs(label, {name: [run[:2] for run in runs] for name, runs in results.items()}, 60)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
