"""Quake assets (issue 34), on /dev/shm, ratios measured in one run.

1. `gamepak texture export` of a texture WAD laid out as LibreQuake's lq_dev_legacy.wad (396
   miptex: 301 of 16x16, 85 of 64x64, 8 of 32x32, 2 skies of 256x128; about 680 KB) against
   `gamepak extract` of the same WAD, both whole processes into fresh folders: target within 3x.
2. PNG import of a 256x256 texture with its mips: `import_textures` of a one-texture WAD whose
   exported PNG was edited (read the PNG, nearest colours, mips, write the WAD), and the
   re-encoding step alone (`reencode`): target under 50 ms.
3. `model export` of a BSP29 of 5,000 faces (a grid of quads, 4 textures) to .glb: in process
   (`bsp_to_gltf`) and as a command: target under 1 s.
"""

from __future__ import annotations

import statistics
import struct
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from quake_bytes import miptex_bytes, wad_bytes

from _common import GAMEPAK, alternate, compile_bytecode, run, scratch


def texture_wad(path: Path) -> int:
    rng = np.random.default_rng(34)
    lumps = []
    for count, (width, height) in ((301, (16, 16)), (85, (64, 64)), (8, (32, 32)), (2, (256, 128))):
        for number in range(count):
            mips = [
                rng.integers(0, 224, (height >> level) * (width >> level), dtype=np.uint8).tobytes()
                for level in range(4)
            ]
            name = f"tex{width}_{number}".encode()
            lumps.append((name, 0x44, miptex_bytes(name, width, height, mips)))
    data = wad_bytes(lumps)
    path.write_bytes(data)
    return len(data)


def grid_bsp(faces_per_side: int) -> bytes:
    """A BSP29 of faces_per_side² quads in a flat grid, four textures."""
    n = faces_per_side
    points = [(x * 16.0, y * 16.0, 0.0) for y in range(n + 1) for x in range(n + 1)]
    vertexes = b"".join(struct.pack("<3f", *p) for p in points)
    edges = [(0, 0)]
    surfedges: list[int] = []
    faces = b""
    for y in range(n):
        for x in range(n):
            a, b, c, d = y * (n + 1) + x, (y + 1) * (n + 1) + x, (y + 1) * (n + 1) + x + 1, y * (n + 1) + x + 1
            first = len(surfedges)
            for start, end in ((a, b), (b, c), (c, d), (d, a)):
                surfedges.append(len(edges))
                edges.append((start, end))
            faces += struct.pack("<HhihhBBBBi", 0, 0, first, 4, (x + y) % 4, 255, 255, 255, 255, -1)
    if len(edges) > 65535 or len(points) > 65535:
        raise SystemExit("grid too large for BSP29's 16-bit edges")
    textures = [miptex_bytes(f"wall{k}".encode(), 64, 64) for k in range(4)]
    offsets = []
    position = 4 + 4 * len(textures)
    for texture in textures:
        offsets.append(position)
        position += len(texture)
    contents = {
        0: b'{\n"classname" "worldspawn"\n}\n\0',
        1: struct.pack("<4fi", 0.0, 0.0, 1.0, 0.0, 2),
        2: struct.pack(f"<i{len(textures)}i", len(textures), *offsets) + b"".join(textures),
        3: vertexes,
        6: b"".join(struct.pack("<4f4fii", 1, 0, 0, 0, 0, 1, 0, 0, k, 0) for k in range(4)),
        7: faces,
        12: b"".join(struct.pack("<2H", *edge) for edge in edges),
        13: struct.pack(f"<{len(surfedges)}i", *surfedges),
        14: struct.pack("<9f4iiii", 0, 0, 0, n * 16, n * 16, 0, 0, 0, 0, 0, -1, -1, -1, 0, 0, n * n),
    }
    body = b""
    table = []
    for index in range(15):
        data = contents.get(index, b"")
        table.append(struct.pack("<ii", 124 + len(body), len(data)))
        body += data + b"\0" * (-len(data) % 4)
    return struct.pack("<i", 29) + b"".join(table) + body


def main() -> None:
    compile_bytecode()
    work = scratch("quake")
    # 1. texture export vs extract
    wad = work / "textures.wad"
    size = texture_wad(wad)
    medians = alternate(
        7,
        {
            "extract": lambda r: run([GAMEPAK, "extract", str(wad), "-o", str(work / f"x{r}")]),
            "texture export": lambda r: run([GAMEPAK, "texture", "export", str(wad), "-o", str(work / f"t{r}")]),
        },
    )
    ratio = medians["texture export"] / medians["extract"]
    print(f"1. {size / 1000:.0f} KB WAD, 396 miptex: extract {medians['extract'] * 1000:.0f} ms, "
          f"texture export {medians['texture export'] * 1000:.0f} ms: {ratio:.2f}x (target <= 3x)")  # fmt: skip

    # 2. PNG import of a 256x256 texture with mips
    from PIL import Image

    from gamepak.formats.quake.images import read_miptex
    from gamepak.formats.quake.palette import built_in_palette
    from gamepak.ops.quake_textures import import_textures, reencode

    one = work / "one.wad"
    rng = np.random.default_rng(1)
    base = rng.integers(0, 224, (256, 256), dtype=np.uint8)
    mips = [base[:: 1 << k, :: 1 << k].tobytes() for k in range(4)]
    original = wad_bytes([(b"big", 0x44, miptex_bytes(b"big", 256, 256, mips))])
    folder = work / "one"
    from gamepak.ops.quake_textures import export_textures

    one.write_bytes(original)
    export_textures(one, folder)
    picture = np.array(Image.open(folder / "big.png"))
    palette = np.frombuffer(built_in_palette(), dtype=np.uint8).reshape(256, 3)
    picture[:64, :64, :3] = palette[9]
    Image.fromarray(picture).save(folder / "big.png")
    whole, whole_cpu, alone, alone_cpu = [], [], [], []
    image = read_miptex(miptex_bytes(b"big", 256, 256, mips), "big", "x")
    for _ in range(15):
        one.write_bytes(original)
        start, cpu = time.perf_counter(), time.process_time()
        changed = import_textures(one, folder)
        whole.append(time.perf_counter() - start)
        whole_cpu.append(time.process_time() - cpu)
        assert changed == ["big"]
        start, cpu = time.perf_counter(), time.process_time()
        reencode(image, picture, built_in_palette())
        alone.append(time.perf_counter() - start)
        alone_cpu.append(time.process_time() - cpu)
    print(f"2. PNG import of 256x256 + mips: whole import {statistics.median(whole) * 1000:.1f} ms "
          f"(CPU {statistics.median(whole_cpu) * 1000:.1f} ms), "
          f"re-encoding alone {statistics.median(alone) * 1000:.1f} ms "
          f"(CPU {statistics.median(alone_cpu) * 1000:.1f} ms; target < 50 ms)")  # fmt: skip

    # 3. BSP of 5,000 faces to glTF
    from gamepak.models.quake import bsp_to_gltf

    data = grid_bsp(71)  # 5,041 faces
    (work / "grid.bsp").write_bytes(data)
    inside = []
    for _ in range(7):
        start = time.perf_counter()
        bsp_to_gltf(data, "grid.bsp", palette=built_in_palette())
        inside.append(time.perf_counter() - start)
    command = [
        run([GAMEPAK, "model", "export", str(work / "grid.bsp"), "-o", str(work / f"g{r}.glb")]) for r in range(5)
    ]
    print(f"3. BSP of 5,041 faces -> .glb: in process {statistics.median(inside) * 1000:.0f} ms, "
          f"command {statistics.median(command) * 1000:.0f} ms (target < 1 s)")  # fmt: skip


if __name__ == "__main__":
    main()
