"""Convert every model of VDrift's garage_objects.jpk (37 JOE models) to .glb, in process, vs
just reading the pack's members; plus the whole `gamepak model export-all` command (interpreter
start-up included) vs `gamepak ls` on the same pack.

Uses ../shared/samples/jpk/garage_objects.jpk when present, else builds a pack of 37 similar
synthetic models. Target: export-all well under a second on top of interpreter start-up.

Then models of many frames (issue 13: 250,000 empty frames took 9 s and 584 MB to read): reading
them with `joe.read` vs reading the file's bytes, and the peak memory of the read.
"""

from __future__ import annotations

import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import gamepak
from gamepak.content import exporter_for
from gamepak.models import joe
from gamepak.ops.model_export import export_all

from _common import GAMEPAK, alternate, compile_bytecode, scratch

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "samples" / "jpk" / "garage_objects.jpk"
ROUNDS = 15


def synthetic_pack(folder: Path) -> Path:
    """37 box-like JOE models (8-30 faces) in a JoePack, like the garage's."""
    rng = np.random.default_rng(7)
    path = folder / "synthetic.jpk"
    with gamepak.create(path, "jpk") as writer:
        for number in range(37):
            faces = int(rng.integers(8, 31))
            vertices, normals, texcoords = faces, max(1, faces // 2), faces
            corners = np.stack([rng.integers(0, count, (faces, 3)) for count in (vertices, normals, texcoords)], axis=2)
            data = struct.pack("<4siii", b"IDP2", 3, faces, 1)
            data += corners.transpose(0, 2, 1).astype("<u2").tobytes()
            data += struct.pack("<iii", vertices, texcoords, normals)
            data += rng.normal(size=(vertices, 3)).astype("<f4").tobytes()
            unit = rng.normal(size=(normals, 3))
            data += (unit / np.linalg.norm(unit, axis=1, keepdims=True)).astype("<f4").tobytes()
            data += rng.uniform(0, 1, (texcoords, 2)).astype("<f4").tobytes()
            writer.add(f"model{number}.joe", data)
    return path


def run(command: list[str]) -> float:
    """Wall time of one command, which must succeed (its notes on stderr are not shown)."""
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    compile_bytecode()
    folder = scratch("models")
    pack = SAMPLE if SAMPLE.exists() else synthetic_pack(folder)
    print(f"pack: {pack} ({'real sample' if pack == SAMPLE else 'synthetic'})")

    def read_pack(round_number: int) -> float:
        start = time.perf_counter()
        with gamepak.open(pack) as opened:
            for entry in opened.infolist():
                opened.read(entry)
        return time.perf_counter() - start

    def convert(round_number: int) -> float:
        start = time.perf_counter()
        written, skipped = export_all(str(pack), str(folder / f"out{round_number}"), "glb", exporter_for=exporter_for)
        elapsed = time.perf_counter() - start
        assert len(written) == 37 and not skipped, (len(written), skipped)
        return elapsed

    convert(-1)  # warm up: the first call imports numpy and pygltflib
    medians = alternate(ROUNDS, {"read members": read_pack, "export-all to glb": convert})
    print(f"in process, median of {ROUNDS}:")
    for name, seconds in medians.items():
        print(f"  {name:22} {seconds * 1000:8.1f} ms")
    print(
        f"  conversion costs {(medians['export-all to glb'] - medians['read members']) * 1000:.1f} ms "
        f"more than reading ({medians['export-all to glb'] / 37 * 1000:.2f} ms a model)"
    )

    counter = iter(range(10_000))
    commands = {
        "gamepak ls": lambda _: run([GAMEPAK, "ls", str(pack)]),
        "gamepak model export-all": lambda _: run(
            [GAMEPAK, "model", "export-all", str(pack), "-o", str(folder / f"cli{next(counter)}")]
        ),
    }
    cli = alternate(7, commands)
    print("whole command (fresh interpreter), median of 7:")
    for name, seconds in cli.items():
        print(f"  {name:26} {seconds * 1000:8.1f} ms")
    print(
        f"  export-all over ls: {(cli['gamepak model export-all'] - cli['gamepak ls']) * 1000:.1f} ms "
        f"(numpy + pygltflib imports and the conversion)"
    )
    print(
        f"python {sys.version.split()[0]}, numpy {np.__version__}; spread of in-process runs "
        f"{statistics.pstdev([convert(100 + i) for i in range(3)]) * 1000:.1f} ms"
    )


def many_frames(folder: Path) -> None:
    """joe.read of many-frame models vs reading their bytes: time ratio and peak memory."""
    import tracemalloc

    rng = np.random.default_rng(3)
    empty = struct.pack("<4siii", b"IDP2", 3, 0, 250_000) + struct.pack("<iii", 0, 0, 0) * 250_000
    faces, vertices = 100, 60
    indices = np.zeros((faces, 9), dtype="<u2")
    indices[:, :3] = rng.integers(0, vertices, (faces, 3))  # vertex indices; one normal, no texcoords
    frame = indices.tobytes() + struct.pack("<iii", vertices, 0, 1)
    frame += rng.normal(size=vertices * 3 + 3).astype("<f4").tobytes()
    animation = struct.pack("<4siii", b"IDP2", 3, faces, 2000) + frame * 2000
    for label, data in (("250,000 empty frames", empty), ("2,000 frames of 100 faces", animation)):
        path = folder / "frames.joe"
        path.write_bytes(data)

        def read_bytes(_: int, path: Path = path) -> float:
            start = time.perf_counter()
            path.read_bytes()
            return time.perf_counter() - start

        def read_model(_: int, path: Path = path) -> float:
            start = time.perf_counter()
            joe.read(path.read_bytes())
            return time.perf_counter() - start

        medians = alternate(9, {"bytes": read_bytes, "joe.read": read_model})
        tracemalloc.start()
        joe.read(path.read_bytes())
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(
            f"{label} ({len(data) / 2**20:.1f} MiB): joe.read {medians['joe.read'] * 1000:.1f} ms, "
            f"{medians['joe.read'] / medians['bytes']:.0f}x reading the bytes; peak {peak / 2**20:.0f} MiB "
            f"({peak / len(data):.1f}x the file)"
        )


if __name__ == "__main__":
    main()
    many_frames(scratch("model-frames"))
