"""RFG zones in patches (issue 46.3): what recording one moved object as object-level changes
("zone-changes") costs against the byte-level zstd delta `patch make` stored before.

Two packs: the real dlcp01_activities.vpp_pc (8 layers), and one made here whose nested
`.str2_pc` holds a layer of LAYER_OBJECTS objects (the real layers' objects repeated with new
handles). In each, one object is moved; the patch is made both ways (the byte-level one by
turning object-level changes off), and each is applied to a fresh copy, as whole `gamepak patch
apply` processes, alternately, medians of ROUNDS, on /dev/shm. Printed: patch file sizes and
apply times, and the time of applying two patches that move two objects of one layer together.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

import gamepak
from gamepak.formats.rfg.zone.model import Zone, ZoneObject, read

from _common import alternate, compile_bytecode, scratch

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "samples"
REAL = SAMPLES / "vpp" / "dlcp01_activities.vpp_pc"


def big_pack(work: Path, layer_objects: int) -> Path:
    real = [read(data) for _, data in gamepak.zones.iter_zones(REAL)]
    objects = [obj for layer in real for obj in layer.objects]
    copies = [
        ZoneObject(
            source.class_hash,
            0x10000 | number,
            source.bbox_raw,
            source.flags,
            num=number,
            properties=list(source.properties),
        )
        for number, source in ((number, objects[number % len(objects)]) for number in range(layer_objects))
    ]
    inner = work / "build" / "cell.str2_pc"
    inner.parent.mkdir(exist_ok=True)
    with gamepak.create(inner, "vpp", overwrite=True, flags=1) as writer:
        writer.add("cell.layer_pc", Zone(copies).to_bytes())
    path = work / "big.vpp_pc"
    with gamepak.create(path, "vpp", overwrite=True) as writer:
        writer.add("cell.str2_pc", inner.read_bytes())
    return path


def moved(source: Path, output: Path, index: int, dx: float) -> Path:
    shutil.copyfile(source, output)
    opened = gamepak.zones.open(output)
    member = sorted(opened)[0]
    obj = opened[member].objects[index]
    x, y, z = obj.position  # type: ignore[misc]
    obj.move_to((x + dx, y, z))
    opened.save()
    return output


def make(base: Path, modded: Path, output: Path, *, objects: bool) -> Path:
    from gamepak.ops.patch import zones as patch_zones

    original = patch_zones.changes_blob
    if not objects:
        patch_zones.changes_blob = lambda name, base, target: None  # type: ignore[assignment]
    try:
        gamepak.patch.make(base, modded, output, name=output.stem, overwrite=True)
    finally:
        patch_zones.changes_blob = original  # type: ignore[assignment]
    return output


def apply_seconds(base: Path, work: Path, patches: list[Path]) -> float:
    target = work / "target.vpp_pc"
    shutil.copyfile(base, target)
    shutil.rmtree(work / "target.vpp_pc.gamepak-undo", ignore_errors=True)
    command = [sys.executable, "-m", "gamepak", "patch", "apply", str(target), *map(str, patches)]
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--layer-objects", type=int, default=400)
    args = parser.parse_args()
    if not REAL.exists():
        raise SystemExit(f"{REAL} is needed (../shared/samples)")
    compile_bytecode()
    work = scratch("patch_zones")
    for label, base in (
        ("real layers", REAL),
        (f"{args.layer_objects}-object layer", big_pack(work, args.layer_objects)),
    ):
        first = moved(base, work / "first.vpp_pc", 3, 10.0)
        second = moved(base, work / "second.vpp_pc", 0, -5.0)
        by_objects = make(base, first, work / "objects.gpatch", objects=True)
        by_bytes = make(base, first, work / "bytes.gpatch", objects=False)
        other = make(base, second, work / "other.gpatch", objects=True)
        runs = {"zone-changes": [by_objects], "zstd-delta": [by_bytes], "two stacked": [by_objects, other]}
        times = alternate(
            args.rounds,
            {
                name: lambda _, base=base, patches=patches: apply_seconds(base, work, patches)  # type: ignore[misc]
                for name, patches in runs.items()
            },
        )
        print(
            f"{label}: patch {by_objects.stat().st_size} B (zone-changes) vs {by_bytes.stat().st_size} B (delta); "
            f"apply {times['zone-changes']:.3f} s vs {times['zstd-delta']:.3f} s "
            f"({times['zone-changes'] / times['zstd-delta']:.2f}x); two stacked {times['two stacked']:.3f} s"
        )


if __name__ == "__main__":
    main()
