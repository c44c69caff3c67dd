"""`texture build` speed (issue 47): a WAD2 of 200 textures of 128x128 from PNGs, against
Pillow's own `quantize` of the same PNGs to the same palette (read and quantised, Floyd-Steinberg
as Pillow does by default). Goal: build at most 2x Pillow's time.

The pictures are what textures look like to a quantiser: a smooth light gradient, a pattern of
a few hundred colours and a little noise, each its own (so about 2,000-10,000 distinct colours
a picture). Both contenders run in this process, alternating, median of the rounds; build
includes everything it does (names, sizes, CIELAB mapping, four mips, each texture's CIEDE2000
and the WAD written).

    python benchmarks/bench_texture_build.py [--count 200] [--size 128] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from PIL import Image

from gamepak.core.memory import keep_freed_heap
from gamepak.formats.quake.palette import built_in_palette
from gamepak.ops.wad_build import build_wad

from _common import alternate, ratio_row, scratch

GOAL = 2.0


def make_pictures(folder: str, count: int, size: int) -> list[str]:
    rng = np.random.default_rng(47)
    paths = []
    ramp = np.linspace(0.6, 1.2, size)[None, :, None] * np.linspace(0.8, 1.1, size)[:, None, None]
    for number in range(count):
        base = rng.integers(30, 220, (8, 3))
        tiles = rng.integers(0, 8, (size // 16, size // 16)).repeat(16, 0).repeat(16, 1)
        picture = base[tiles] * ramp + rng.normal(0, 6, (size, size, 3))
        path = os.path.join(folder, f"tex{number:03d}.png")
        Image.fromarray(picture.clip(0, 255).astype(np.uint8), "RGB").save(path, compress_level=1)
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--size", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    # As `gamepak texture build` does (process-wide: Pillow's run below gets it too).
    keep_freed_heap()
    root = scratch("texture-build")
    folder = root / "pics"
    folder.mkdir()
    paths = make_pictures(str(folder), args.count, args.size)
    out = root / "t.wad"
    holder = Image.new("P", (1, 1))
    holder.putpalette(built_in_palette())

    def gamepak_build(_round: int) -> float:
        start = time.perf_counter()
        build_wad(folder, out, overwrite=True)
        return time.perf_counter() - start

    def gamepak_dither(_round: int) -> float:
        start = time.perf_counter()
        build_wad(folder, out, overwrite=True, dither=True)
        return time.perf_counter() - start

    def pillow_quantize(_round: int) -> float:
        start = time.perf_counter()
        for path in paths:
            with Image.open(path) as picture, picture.convert("RGB") as rgb, rgb.quantize(palette=holder):
                pass
        return time.perf_counter() - start

    times = alternate(
        args.rounds, {"build": gamepak_build, "build --dither": gamepak_dither, "pillow quantize": pillow_quantize}
    )
    pillow = times["pillow quantize"]
    print(f"{args.count} textures of {args.size}x{args.size}, median of {args.rounds} rounds")
    print(f"  Pillow quantize to Quake's palette: {pillow:.3f} s")
    for name in ("build", "build --dither"):
        print(f"  texture {name}: {times[name]:.3f} s")
    stages(paths)
    ratio_row(
        f"texture build of {args.count} textures of {args.size}x{args.size} vs Pillow quantize",
        times["build"] / pillow,
        at_most=GOAL,
    )
    ratio_row(
        f"texture build --dither of {args.count} textures vs Pillow quantize",
        times["build --dither"] / pillow,
        at_most=GOAL,
        record=False,
    )


def stages(paths: list[str]) -> None:
    """Where a plain build's time goes (one pass, so a rough split): reading the pictures, mip 0
    mapping, the CIEDE2000 summary, the three smaller mips."""
    from gamepak.formats.quake.colours import map_colours, mean_error, mips_from
    from gamepak.ops.wad_build import read_picture

    palette = built_in_palette()
    allowed = np.ones(256, dtype=bool)
    allowed[224:] = False
    spent = dict.fromkeys(("read", "map", "ciede2000", "mips"), 0.0)
    for path in paths:
        start = time.perf_counter()
        rgb = np.ascontiguousarray(read_picture(path, "t", False)[..., :3])
        read = time.perf_counter()
        indices = map_colours(rgb, palette, allowed)
        mapped = time.perf_counter()
        mean_error(rgb, indices, palette)
        measured = time.perf_counter()
        mips_from(indices, palette, None, allowed)
        done = time.perf_counter()
        for stage, seconds in zip(
            spent, (read - start, mapped - read, measured - mapped, done - measured), strict=True
        ):
            spent[stage] += seconds
    print("  stages: " + ", ".join(f"{stage} {seconds:.3f} s" for stage, seconds in spent.items()))


if __name__ == "__main__":
    main()
