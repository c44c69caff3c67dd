"""`gamepak patch`: patch size, apply cost against a full write, one rewrite for two patches,
peak memory. Ratios within one run, on /dev/shm.

- patch size for one changed byte in the largest member of the real `table.vpp_pc` (goal <= 1 KiB);
- apply of a one-member patch to a 1 GiB PAK vs `gamepak.create` of the same PAK (goal <= 5%);
- apply of that one-byte patch to `table.vpp_pc` vs a full rebuild (`gamepak.edit(compact=True)`,
  goal <= 0.5x). That rebuild copies every unchanged compressed chunk (a copy of the file plus
  the layout detection), so it is a strict reference; a second row compares with a full repack
  from the members (`gamepak.create` with the pack's own options, recompressing everything: what
  a mod manager that repacks does);
- two patches on one pack: how many times the pack file was replaced (goal: once);
- peak RSS of the 1 GiB apply, in a child process (goal < 100 MiB).

`--size-mib` shrinks the PAK for a quick run. Times are medians of `--rounds` rounds (each on a
fresh copy), ratios the median of each round's ratio: this machine's timings swing 2x.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import gamepak

TABLE = Path(__file__).resolve().parents[1].parent / "shared" / "samples" / "vpp" / "table.vpp_pc"


def timed(action: object) -> float:
    start = time.perf_counter()
    action()  # type: ignore[operator]
    return time.perf_counter() - start


def rounds(count: int, prepare: object, actions: dict[str, object]) -> dict[str, list[float]]:
    """Each action timed `count` times, interleaved, `prepare()` before each round."""
    times: dict[str, list[float]] = {name: [] for name in actions}
    for _ in range(count):
        prepare()  # type: ignore[operator]
        for name, action in actions.items():
            times[name].append(timed(action))
    return times


def median_ratio(numerators: list[float], denominators: list[float]) -> float:
    return statistics.median(n / d for n, d in zip(numerators, denominators, strict=True))


def one_byte_patch(folder: Path) -> tuple[Path, Path]:
    base = folder / "table.vpp_pc"
    shutil.copy(TABLE, base)
    # `mod.vpp_pc` keeps the changed member for the direct-edit reference.
    mod = folder / "mod.vpp_pc"
    shutil.copy(base, mod)
    with gamepak.open(base) as archive:
        entry = max(archive.infolist(), key=lambda entry: entry.size)
        data = bytearray(archive.read(entry))
    data[len(data) // 2] ^= 1
    with gamepak.edit(mod) as editor:
        editor.replace(entry.name, bytes(data))
    patch = folder / "table.gpatch"
    gamepak.patch.make(base, mod, patch)
    return base, patch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child-apply", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_apply:
        gamepak.patch.apply(args.child_apply[0], [args.child_apply[1]])
        # VmHWM, not ru_maxrss: Linux carries a process's maxrss across exec, so a child would
        # report the benchmark's own peak (the 1 GiB it wrote) instead of the apply's.
        with open("/proc/self/status") as status:
            print(next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) // 1024)
        return
    root = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(prefix="bench-patch-", dir=root) as temporary:
        folder = Path(temporary)
        if TABLE.exists():
            base, patch = one_byte_patch(folder)
            print(f"patch for one changed byte in table.vpp_pc: {patch.stat().st_size} bytes (goal <= 1024)")
            target = folder / "target.vpp_pc"
            rebuild_copy = folder / "rebuild.vpp_pc"
            edited = folder / "edited.vpp_pc"
            with gamepak.open(folder / "mod.vpp_pc") as archive:
                entry = max(archive.infolist(), key=lambda entry: entry.size)
                data = archive.read(entry)
            with gamepak.open(base) as archive:
                options = archive.layout_options()
                members = [(member.name, archive.read(member)) for member in archive.infolist()]

            def prepare() -> None:
                for copy in (target, rebuild_copy, edited):
                    shutil.copy(base, copy)
                shutil.rmtree(f"{target}.gamepak-undo", ignore_errors=True)

            def replace_member() -> None:
                with gamepak.edit(edited) as editor:
                    editor.replace(entry.name, data)

            def repack() -> None:
                with gamepak.create(folder / "repack.vpp_pc", overwrite=True, **options) as writer:
                    for name, member_data in members:
                        writer.add(name, member_data)

            times = rounds(
                args.rounds,
                prepare,
                {
                    "apply": lambda: gamepak.patch.apply(target, [patch]),
                    "rebuild": lambda: gamepak.edit(rebuild_copy, compact=True).commit(),
                    "direct": replace_member,
                    "repack": repack,
                },
            )
            applied, rebuilt, direct, repacked = (
                statistics.median(times[name]) for name in ("apply", "rebuild", "direct", "repack")
            )
            ratio = median_ratio(times["apply"], times["rebuild"])
            print(
                f"apply to table.vpp_pc {applied:.3f} s vs full rebuild (edit compact: unchanged chunks copied) "
                f"{rebuilt:.3f} s: {ratio:.2f}x (goal <= 0.5x)"
            )
            print(
                f"apply to table.vpp_pc {applied:.3f} s vs full repack from its members (create, same options, "
                f"everything recompressed) {repacked:.3f} s: {median_ratio(times['apply'], times['repack']):.2f}x"
            )
            print(
                f"  (the editor replacing that member directly: {direct:.3f} s; apply adds checks, delta, undo record)"
            )
        else:
            print("table.vpp_pc sample absent: size and RFG apply rows skipped")

        # Two patches on one pack: count the replacements of the pack file (its inode changes).
        shared = {f"m{index}.bin": os.urandom(4096) for index in range(50)}
        for name, changed in (("base", {}), ("one", {"m1.bin": b"one"}), ("two", {"m2.bin": b"two"})):
            with gamepak.create(folder / f"{name}.vpp_pc", overwrite=True) as writer:
                for member, data in {**shared, **changed}.items():
                    writer.add(member, data)
        gamepak.patch.make(folder / "base.vpp_pc", folder / "one.vpp_pc", folder / "one.gpatch")
        gamepak.patch.make(folder / "base.vpp_pc", folder / "two.vpp_pc", folder / "two.gpatch")
        replaced = 0
        original_replace = os.replace

        def counting_replace(source: object, target: object, *rest: object, **keywords: object) -> None:
            nonlocal replaced
            if str(target).endswith("base.vpp_pc"):
                replaced += 1
            original_replace(source, target, *rest, **keywords)  # type: ignore[arg-type]

        os.replace = counting_replace  # type: ignore[assignment]
        try:
            gamepak.patch.apply(folder / "base.vpp_pc", [folder / "one.gpatch", folder / "two.gpatch"])
        finally:
            os.replace = original_replace
        print(f"two patches on one pack: {replaced} rewrite(s) (goal 1)")

        # A large PAK: full create vs a one-member patch.
        member_size = 16 << 20
        count = max(1, (args.size_mib << 20) // member_size)
        source = folder / "member.bin"
        source.write_bytes(os.urandom(member_size))
        pak = folder / "big.pak"

        def create() -> None:
            with gamepak.create(pak, overwrite=True) as writer:
                for index in range(count):
                    writer.add(f"data/{index:04d}.bin", source)

        small_base = folder / "small_base.pak"
        small_mod = folder / "small_mod.pak"
        for path, data in ((small_base, source.read_bytes()), (small_mod, b"patched" + source.read_bytes()[7:])):
            with gamepak.create(path, overwrite=True) as writer:
                writer.add("data/0000.bin", data)
        gamepak.patch.make(small_base, small_mod, folder / "big.gpatch")
        # The apply's own cost, in this process (imports done, as for create), each round on a
        # freshly created PAK; then the same apply again in a child process for its peak
        # memory, after a revert.
        times = rounds(
            args.rounds,
            lambda: shutil.rmtree(f"{pak}.gamepak-undo", ignore_errors=True),
            {"create": create, "apply": lambda: gamepak.patch.apply(pak, [folder / "big.gpatch"])},
        )
        created, applied = statistics.median(times["create"]), statistics.median(times["apply"])
        ratio = median_ratio(times["apply"], times["create"])
        size_mib = pak.stat().st_size >> 20
        gamepak.patch.revert(pak)
        start = time.perf_counter()
        output = subprocess.run(
            [sys.executable, __file__, "--child-apply", str(pak), str(folder / "big.gpatch")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        in_child = time.perf_counter() - start
        peak = int(output.split()[-1])
        print(
            f"apply of a one-member patch to a {size_mib} MiB PAK {applied:.3f} s vs full create {created:.3f} s: "
            f"{100 * ratio:.1f}% (goal <= 5%); {in_child:.3f} s in a new process, imports included"
        )
        print(f"peak RSS of that apply: {peak} MiB (goal < 100)")


if __name__ == "__main__":
    main()
