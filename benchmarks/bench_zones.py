"""RFG zones (issue 46): `gamepak zone export` of a pack holding many zones against what a user
does today to reach their bytes (`gamepak extract` of the pack, then of each nested `.str2_pc`),
and a one-property `zone import` against a one-member `patch apply` of the same change.

The pack is made here: NESTED `.str2_pc` packs (compressed, as the game's are), each holding one
layer built from the real layers of dlcp01_activities.vpp_pc (their objects repeated with new
handles to LAYER_OBJECTS objects). Every contender is a whole process, run alternately, medians
of ROUNDS, outputs into fresh folders on /dev/shm. Targets: export <= 1.0x the extracts; a
one-property import <= 1.0x a one-member patch apply.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import gamepak
from gamepak.formats.rfg.zone.model import Zone, ZoneObject, read

from _common import alternate, compile_bytecode, ratio_row, scratch

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "samples"
PYTHON = sys.executable


def _timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def make_pack(work: Path, nested: int, layer_objects: int) -> Path:
    real = [read(data) for _, data in gamepak.zones.iter_zones(SAMPLES / "vpp" / "dlcp01_activities.vpp_pc")]
    objects = [obj for layer in real for obj in layer.objects]
    members: dict[str, bytes] = {}
    for index in range(nested):
        copies = []
        for number in range(layer_objects):
            source = objects[number % len(objects)]
            copies.append(
                ZoneObject(
                    source.class_hash,
                    (index << 16) | number,
                    source.bbox_raw,
                    source.flags,
                    num=number,
                    properties=list(source.properties),
                )
            )
        layer = Zone(copies).to_bytes()
        inner = work / "build" / f"cell_{index:03}.str2_pc"
        inner.parent.mkdir(exist_ok=True)
        with gamepak.create(inner, "vpp", overwrite=True, flags=1) as writer:
            writer.add(f"cell_{index:03}.layer_pc", layer)
        members[inner.name] = inner.read_bytes()
    pack = work / "zones.vpp_pc"
    with gamepak.create(pack, "vpp", overwrite=True) as writer:
        for name, data in members.items():
            writer.add(name, data)
    shutil.rmtree(work / "build")
    return pack


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--nested", type=int, default=24)
    parser.add_argument("--objects", type=int, default=400, help="objects per layer")
    args = parser.parse_args()
    if not (SAMPLES / "vpp" / "dlcp01_activities.vpp_pc").exists():
        raise SystemExit("../shared/samples/vpp/dlcp01_activities.vpp_pc is absent")
    compile_bytecode()
    work = scratch("zones")
    pack = make_pack(work, args.nested, args.objects)
    cli = [PYTHON, "-m", "gamepak"]
    nested_names = [entry.name for entry in gamepak.open(pack).infolist()]

    def extracts(round_number: int) -> float:
        out = work / f"extract{round_number}"
        elapsed = _timed([*cli, "extract", str(pack), "-o", str(out)])
        for name in nested_names:
            elapsed += _timed([*cli, "extract", str(out / name), "-o", str(out / (name + ".d"))])
        return elapsed

    figures = alternate(
        args.rounds,
        {
            "extract + nested extracts": extracts,
            "zone export": lambda n: _timed([*cli, "zone", "export", str(pack), "-o", str(work / f"export{n}")]),
        },
    )
    ratio_row(
        f"zone export of {args.nested} zones vs extracting the pack and its nested packs",
        figures["zone export"] / figures["extract + nested extracts"],
        at_most=1.0,
        detail=f"{figures['zone export']:.3f} s vs {figures['extract + nested extracts']:.3f} s",
    )

    # One changed property: zone import against a one-member patch apply of the same change.
    documents = work / "one"
    subprocess.run([*cli, "zone", "export", str(pack), "cell_000.layer_pc", "-o", str(documents)], check=True)
    document = next(documents.rglob("*.json"))
    loaded = json.loads(document.read_text())
    for prop in loaded["objects"][0]["properties"]:
        if prop["name"] == "op":
            prop["value"]["position"][0] += 1.0
    document.write_text(json.dumps(loaded))
    modded = work / "modded.vpp_pc"
    shutil.copyfile(pack, modded)
    subprocess.run([*cli, "zone", "import", str(modded), str(documents)], check=True, capture_output=True)
    patch = work / "one.gpatch"
    subprocess.run([*cli, "patch", "make", str(pack), str(modded), "-o", str(patch)], check=True, capture_output=True)

    def fresh(name: str, round_number: int) -> Path:
        target = work / f"{name}{round_number}" / "zones.vpp_pc"
        target.parent.mkdir()
        shutil.copyfile(pack, target)
        return target

    edits = alternate(
        args.rounds,
        {
            "patch apply": lambda n: _timed([*cli, "patch", "apply", str(fresh("apply", n)), str(patch)]),
            "zone import": lambda n: _timed([*cli, "zone", "import", str(fresh("import", n)), str(documents)]),
        },
    )
    ratio_row(
        "one-property zone import vs a one-member patch apply",
        edits["zone import"] / edits["patch apply"],
        at_most=1.0,
        detail=f"{edits['zone import']:.3f} s vs {edits['patch apply']:.3f} s",
    )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
