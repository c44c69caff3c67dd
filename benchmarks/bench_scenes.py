"""A whole VDrift track to one glTF scene (issue 35): `gamepak model export TRACK -o track.glb`
of a track the size of pau (1,659 objects, ~35 faces each, 300 distinct 256x256 textures)
against `gamepak extract objects/objects.jpk` plus reading every texture once (the reference:
what any exporter must at least read), alternated in one script; and the export's peak memory.
And the way back (issue 40): `gamepak model import track.glb --into TRACK` of the unchanged
export, timed in the same rounds, against the export.

Targets: the export within 3x the reference; peak memory under 400 MB; the unchanged import
within 2x the export (it writes nothing).

Then the worst inputs of issue 41 for scenes, each command's peak RSS (GNU time) against its
input: a list.txt of 1,000,000 objects (refused before it is read), one of 100,000 (the most
read without --allow-large), and a glTF of 300,000 nodes reusing one mesh imported with
--dry-run (minutes and 2 GB before; now refused past the scene node budget, and shown again
with --allow-large), and one of 100,000 such nodes, within the budget.

Each worst input's line also gives the command's peak above the floor (the interpreter with
gamepak's CLI and numpy imported, and the input read whole) per input byte, against the goal
of issue 41 (at most GOAL bytes per input byte).

Run from the checkout (`PYTHONPATH=src python benchmarks/bench_scenes.py`): the commands run
with the `src` of the environment's PYTHONPATH. `--worst` runs only the worst inputs.
"""

from __future__ import annotations

import io
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import gamepak
from gamepak import models
from gamepak.models.mesh import Mesh

from _common import GAMEPAK, alternate, compile_bytecode, goal_row, run_with_peak, scratch

OBJECTS = 1659
TEXTURES = 300
ROUNDS = 5
FIELDS_AFTER_NAMES = "1 0 0 0 1.0 0.0 0 1 1.0 0.9 1.0 0.0 0 0 0"


def build_track(folder: Path) -> Path:
    from PIL import Image

    rng = np.random.default_rng(35)
    objects = folder / "track" / "objects"
    objects.mkdir(parents=True)
    for number in range(TEXTURES):
        pixels = rng.integers(0, 255, (256, 256, 4), dtype=np.uint8)
        pixels[:, :, 3] = 255 if number % 5 else 128
        out = io.BytesIO()
        Image.fromarray(pixels, "RGBA").save(out, "PNG", compress_level=1)
        (objects / f"tex{number}.bmp.png").write_bytes(out.getvalue())
    lines = ["17", ""]
    with gamepak.create(objects / "objects.jpk") as writer:
        for number in range(OBJECTS):
            count = 24
            centre = rng.uniform(-500, 500, 3)
            positions = (centre + rng.normal(size=(count, 3))).astype(np.float32)
            normals = rng.normal(size=(count, 3)).astype(np.float32)
            normals /= np.linalg.norm(normals, axis=1, keepdims=True)
            texcoords = rng.uniform(0, 4, (count, 2)).astype(np.float32)
            triangles = rng.integers(0, count, (35, 3))
            mesh = Mesh.from_vertices(positions, triangles, normals, texcoords)
            writer.add(f"obj{number}.dof-00.joe", models.dumps(mesh, "joe"))
            lines += [f"obj{number}.dof-00.joe tex{number % TEXTURES}.bmp.png {FIELDS_AFTER_NAMES}", ""]
    (objects / "list.txt").write_text("\n".join(lines))
    (folder / "track" / "track.txt").write_text("cull faces = on\n")
    return folder / "track"


# Bytes of peak memory above the floor per input byte each command may use (issue 41).
GOAL = 10.0


def main() -> None:
    compile_bytecode()
    folder = scratch("scenes")
    if "--worst" in sys.argv[1:]:
        worst_inputs(folder)
        return
    track = build_track(folder)
    textures = sorted((track / "objects").glob("*.png"))
    print(f"track: {OBJECTS} objects, {TEXTURES} textures ({sum(p.stat().st_size for p in textures) >> 20} MiB)")

    def reference(round_number: int) -> float:
        start = time.perf_counter()
        subprocess.run(
            [GAMEPAK, "extract", str(track / "objects" / "objects.jpk"), "-o", str(folder / f"x{round_number}")],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for path in textures:
            path.read_bytes()
        return time.perf_counter() - start

    def export(round_number: int) -> float:
        start = time.perf_counter()
        subprocess.run(
            [GAMEPAK, "model", "export", str(track), "-o", str(folder / f"t{round_number}.glb")],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return time.perf_counter() - start

    def import_unchanged(round_number: int) -> float:
        # The export of round 0 (made before: contenders run in this order), imported back.
        start = time.perf_counter()
        finished = subprocess.run(
            [GAMEPAK, "model", "import", str(folder / "t0.glb"), "--into", str(track)],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        seconds = time.perf_counter() - start
        if ": unchanged (" not in finished.stderr:
            raise SystemExit(f"the unchanged export did not import back unchanged: {finished.stderr}")
        return seconds

    def start_and_numpy(round_number: int) -> float:
        # What any export in this process model pays before reading a model: Python, the CLI's
        # imports and numpy's.
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import gamepak.cli, numpy"], check=True)
        return time.perf_counter() - start

    def copy_output(round_number: int) -> float:
        # Writing the export's bytes (mostly the textures), as `cp` of a finished one.
        start = time.perf_counter()
        subprocess.run(["cp", str(folder / "t0.glb"), str(folder / f"c{round_number}.glb")], check=True)
        return time.perf_counter() - start

    medians = alternate(
        ROUNDS,
        {
            "extract + read textures": reference,
            "model export TRACK": export,
            "model import --into (same)": import_unchanged,
            "floor: start + numpy": start_and_numpy,
            "floor: cp of the output": copy_output,
        },
    )
    ratio = medians["model export TRACK"] / medians["extract + read textures"]
    for name, seconds in medians.items():
        print(f"{name:28s} {seconds * 1000:8.1f} ms")
    print(f"export / reference: {ratio:.2f}x (target <= 3x)")
    back = medians["model import --into (same)"] / medians["model export TRACK"]
    print(f"import of the unchanged export / export: {back:.2f}x (target <= 2x)")
    floor = medians["floor: start + numpy"] + medians["floor: cp of the output"]
    print(
        f"floor (start + numpy + writing the output) / reference: {floor / medians['extract + read textures']:.2f}x;"
        f" the rest of the export {(medians['model export TRACK'] - floor) * 1000:.0f} ms"
    )

    peak = subprocess.run(
        [
            sys.executable,
            "-c",
            "import resource, sys; from gamepak.cli import main; code = main(sys.argv[1:]);"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)",
            "model",
            "export",
            str(track),
            "-o",
            str(folder / "peak.glb"),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    peak_mib = int(peak.stdout.strip().splitlines()[-1])
    print(f"export peak RSS: {peak_mib} MiB (target < 400); output {(folder / 'peak.glb').stat().st_size >> 20} MiB")

    worst_inputs(folder)


def worst_inputs(folder: Path) -> None:
    import json
    import struct

    from gamepak.models import scene

    src = Path(gamepak.__file__).resolve().parent.parent

    def peak(command: list[str], input_path: Path, label: str) -> float:
        input_bytes = input_path.stat().st_size
        _, floor_mib, _ = run_with_peak(
            [sys.executable, "-c", "import sys, gamepak.cli, numpy; open(sys.argv[1], 'rb').read()", str(input_path)],
            src,
        )
        seconds, peak_mib, finished = run_with_peak(command, src, stderr=subprocess.PIPE)
        said = finished.stderr.decode(errors="replace").strip().splitlines()
        per_byte = max(0.0, peak_mib - floor_mib) * 2**20 / input_bytes
        verdict = "ok  " if per_byte <= GOAL else "OVER"
        print(
            f"{label:44s} {seconds:6.2f} s  peak {peak_mib:6.1f} MiB  input {input_bytes / 2**20:6.1f} MiB  "
            f"{per_byte:5.1f} B/B above the floor {verdict} (goal <= {GOAL:g})  "
            f"exit {finished.returncode}: {said[0][:70] if said else ''}"
        )
        return per_byte

    small = folder / "small"
    (small / "objects").mkdir(parents=True)
    from gamepak.models.mesh import Mesh

    square = Mesh.from_vertices(
        np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], np.float32),
        [[0, 1, 2], [0, 2, 3]],
        np.tile(np.array([[0, 0, 1]], np.float32), (4, 1)),
        np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32),
    )
    with gamepak.create(small / "objects" / "objects.jpk") as writer:
        writer.add("road.joe", models.dumps(square, "joe"))
    line = f"road.joe a.png {FIELDS_AFTER_NAMES}\n"
    listing = small / "objects" / "list.txt"
    for count in (1_000_000, 100_000):
        listing.write_text("17\n" + line * count)
        peak(
            [GAMEPAK, "model", "export", str(small), "-o", str(folder / f"w{count}.glb")],
            listing,
            f"export, list.txt of {count:,} objects",
        )
    peak([GAMEPAK, "model", "info", str(small)], listing, "info, list.txt of 100,000 objects")
    (small / "objects" / "list.txt").write_text("17\n" + line)
    scene.save(scene.load(small), folder / "one.glb")
    data = (folder / "one.glb").read_bytes()
    length = struct.unpack_from("<I", data, 12)[0]
    document = json.loads(data[20 : 20 + length])
    mesh = next(node["mesh"] for node in document["nodes"] if "mesh" in node)
    first = len(document["nodes"])

    def many_nodes(count: int, path: Path) -> None:
        nodes = [*document["nodes"], *({"name": f"n{number}", "mesh": mesh} for number in range(count))]
        nodes[0] = {**nodes[0], "children": [*nodes[0]["children"], *range(first, first + count)]}
        text = json.dumps({**document, "nodes": nodes}, separators=(",", ":")).encode()
        text += b" " * (-len(text) % 4)
        body = struct.pack("<I4s", len(text), b"JSON") + text + data[20 + length :]
        path.write_bytes(struct.pack("<4sII", b"glTF", 2, 12 + len(body)) + body)

    many_nodes(300_000, folder / "many.glb")
    many_nodes(100_000, folder / "hundred.glb")
    # Refused past the scene node budget (core/content_limits.py) while its nodes are read.
    per_byte = peak(
        [GAMEPAK, "model", "import", str(folder / "many.glb"), "--into", str(small), "--dry-run"],
        folder / "many.glb",
        "import --dry-run, 300,000 nodes, one mesh",
    )
    goal_row(
        "scene import --dry-run, 300,000 nodes reusing one mesh (refused)",
        f"<= {GOAL:g} B/B",
        f"{per_byte:.1f} B/B",
        per_byte <= GOAL,
    )
    # What --allow-large still costs (every node a dict, then a NodeMeshes, a list.txt line
    # and a report line): reported, not a goal.
    peak(
        [GAMEPAK, "model", "import", str(folder / "many.glb"), "--into", str(small), "--dry-run", "--allow-large"],
        folder / "many.glb",
        "  the same with --allow-large",
    )
    peak(
        [GAMEPAK, "model", "import", str(folder / "hundred.glb"), "--into", str(small), "--dry-run"],
        folder / "hundred.glb",
        "import --dry-run, 100,000 nodes (within budget)",
    )


if __name__ == "__main__":
    main()
