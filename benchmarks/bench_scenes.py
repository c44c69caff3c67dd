"""A whole VDrift track to one glTF scene (issue 35): `gamepak model export TRACK -o track.glb`
of a track the size of pau (1,659 objects, ~35 faces each, 300 distinct 256x256 textures)
against `gamepak extract objects/objects.jpk` plus reading every texture once (the reference:
what any exporter must at least read), alternated in one script; and the export's peak memory.
And the way back (issue 40): `gamepak model import track.glb --into TRACK` of the unchanged
export, timed in the same rounds, against the export.

Targets: the export within 3x the reference; peak memory under 400 MB; the unchanged import
within 2x the export (it writes nothing).

Run from the checkout (`PYTHONPATH=src python benchmarks/bench_scenes.py`): the commands run
with the `src` of the environment's PYTHONPATH.
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

from _common import GAMEPAK, alternate, compile_bytecode, scratch

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


def main() -> None:
    compile_bytecode()
    folder = scratch("scenes")
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


if __name__ == "__main__":
    main()
