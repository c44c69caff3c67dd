"""`texture build` speed (issue 47): a WAD2 of 200 textures of 128x128 from PNGs, against
Pillow's own `quantize` of the same PNGs to the same palette (read and quantised, Floyd-Steinberg
as Pillow does by default). Goal: build at most 2x Pillow's time.

The pictures are what textures look like to a quantiser: a smooth light gradient, a pattern of
a few hundred colours and a little noise, each its own (the noise makes nearly every pixel its
own colour: about 16,000 distinct colours in 16,384 pixels). Both contenders run in this
process, alternating; each round's time is the process's CPU time (user + system: the machine
is shared, and neither contender uses a second thread), and the ratio is of the fastest rounds
(the least disturbed), the medians printed beside them. Build includes everything it does
(names, sizes, CIELAB mapping, four mips, each texture's CIEDE2000 and the WAD written). The
default build estimates each texture's mean CIEDE2000 from one drawn pixel of each 4x4 cell (its
place moving from cell to cell; the goal's row); `--exact-error`, measuring every pixel, is timed beside it
(reported, no goal), and the estimate's deviation from the exact mean is printed (max and
median over the textures, plain and dithered).
`--stages` adds where a plain build's time goes. When ../shared/samples is there, a second row
times real textures the same way: VDrift's garage PNGs (mostly 512x512, a few dozen to a few
thousand colours each), three copies of each.

    python benchmarks/bench_texture_build.py [--count 200] [--size 128] [--rounds 5] [--stages]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import time
from pathlib import Path

import numpy as np
from PIL import Image

from gamepak.core.memory import keep_freed_heap
from gamepak.formats.quake.palette import built_in_palette
from gamepak.ops.wad_build import build_wad

from _common import alternate_times, goal_row, ratio_row, scratch

GOAL = 2.0
SAMPLES = Path(os.environ.get("GAMEPAK_SAMPLES") or Path(__file__).resolve().parents[2] / "shared" / "samples")
GARAGE = SAMPLES / "vdrift" / "garage" / "objects"


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
    parser.add_argument("--stages", action="store_true", help="also time each stage of a plain build")
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
        start = time.process_time()
        build_wad(folder, out, overwrite=True)
        return time.process_time() - start

    def gamepak_exact(_round: int) -> float:
        start = time.process_time()
        build_wad(folder, out, overwrite=True, exact_error=True)
        return time.process_time() - start

    def gamepak_dither(_round: int) -> float:
        start = time.process_time()
        build_wad(folder, out, overwrite=True, dither=True)
        return time.process_time() - start

    def pillow_quantize(_round: int) -> float:
        start = time.process_time()
        for path in paths:
            with Image.open(path) as picture, picture.convert("RGB") as rgb, rgb.quantize(palette=holder):
                pass
        return time.process_time() - start

    rounds = alternate_times(
        args.rounds,
        {
            "build": gamepak_build,
            "build --exact-error": gamepak_exact,
            "build --dither": gamepak_dither,
            "pillow quantize": pillow_quantize,
        },
    )
    fastest = {name: min(times) for name, times in rounds.items()}
    print(f"{args.count} textures of {args.size}x{args.size}, CPU seconds, fastest (median) of {args.rounds} rounds")
    for name, label in (
        ("pillow quantize", "Pillow quantize to Quake's palette"),
        ("build", "texture build"),
        ("build --exact-error", "texture build --exact-error"),
        ("build --dither", "texture build --dither"),
    ):
        print(f"  {label}: {fastest[name]:.3f} s ({statistics.median(rounds[name]):.3f} s)")
    if args.stages:
        stages(paths)
    pillow = fastest["pillow quantize"]
    ratio_row(
        f"texture build of {args.count} textures of {args.size}x{args.size} vs Pillow quantize",
        fastest["build"] / pillow,
        at_most=GOAL,
        detail=f"CPU time, fastest of {args.rounds} rounds",
    )
    goal_row(
        f"texture build --exact-error of {args.count} textures vs Pillow quantize",
        "reported",
        f"{fastest['build --exact-error'] / pillow:.2f}x (CPU time, fastest of {args.rounds} rounds)",
        None,
        record=False,
    )
    deviation(folder, root / "deviation.wad", f"{args.count} made-up textures")
    ratio_row(
        f"texture build --dither of {args.count} textures vs Pillow quantize",
        fastest["build --dither"] / pillow,
        at_most=GOAL,
        detail=f"CPU time, fastest of {args.rounds} rounds",
        record=False,
    )
    real_textures(root, holder, args.rounds)


def real_textures(root: Path, holder: Image.Image, rounds: int) -> None:
    """The same race on real textures (VDrift's garage PNGs, three copies each), when the
    samples are there."""
    pictures = sorted(GARAGE.glob("*.png")) if GARAGE.is_dir() else []
    if not pictures:
        print("  (no ../shared/samples: the real-texture row is skipped)")
        return
    folder = root / "garage"
    folder.mkdir()
    for picture in pictures:
        for copy in range(3):  # names of 15 characters at most, none a sky's
            shutil.copyfile(picture, folder / f"x{picture.stem[:11]}{copy}.png")
    paths = sorted(str(path) for path in folder.iterdir())
    out = root / "garage.wad"

    def build(_round: int) -> float:
        start = time.process_time()
        build_wad(folder, out, overwrite=True)
        return time.process_time() - start

    def pillow(_round: int) -> float:
        start = time.process_time()
        for path in paths:
            with Image.open(path) as picture, picture.convert("RGB") as rgb, rgb.quantize(palette=holder):
                pass
        return time.process_time() - start

    def exact(_round: int) -> float:
        start = time.process_time()
        build_wad(folder, out, overwrite=True, exact_error=True)
        return time.process_time() - start

    contenders = {"build": build, "exact": exact, "pillow": pillow}
    fastest = {name: min(times) for name, times in alternate_times(rounds, contenders).items()}
    print(
        f"{len(paths)} real textures: Pillow {fastest['pillow']:.3f} s, texture build {fastest['build']:.3f} s, "
        f"--exact-error {fastest['exact']:.3f} s ({fastest['exact'] / fastest['pillow']:.2f}x)"
    )
    deviation(folder, out, "real textures")
    ratio_row(
        f"texture build of {len(paths)} real textures (VDrift garage) vs Pillow quantize",
        fastest["build"] / fastest["pillow"],
        at_most=GOAL,
        detail=f"CPU time, fastest of {rounds} rounds",
        record=False,
    )


def deviation(folder: Path, out: Path, label: str) -> None:
    """Print how far each texture's default (sampled) mean CIEDE2000 lies from its exact mean:
    the largest and the median relative deviation, plain and dithered."""
    for dither in (False, True):
        exact = build_wad(folder, out, overwrite=True, exact_error=True, dither=dither)
        default = build_wad(folder, out, overwrite=True, dither=dither)
        deviations = [
            abs(estimate.error / measured.error - 1)
            for estimate, measured in zip(default, exact, strict=True)
            if estimate.sampled and measured.error
        ]
        sampled = f"{len(deviations)} of {len(default)} sampled"
        figures = (
            f"max {max(deviations):.2%}, median {statistics.median(deviations):.2%}" if deviations else "none sampled"
        )
        print(f"  sampled vs exact mean CIEDE2000, {label}{' --dither' if dither else ''}: {figures} ({sampled})")


def stages(paths: list[str], rounds: int = 3) -> None:
    """Where a plain build's time goes (CPU seconds, fastest of `rounds` passes over the
    pictures): reading the pictures, mip 0 mapping, the CIEDE2000 summary (sampled, as by
    default), the three smaller mips, and everything else a build does (names, summaries, the
    WAD written)."""
    from gamepak.formats.quake.ciede2000 import ErrorBatch
    from gamepak.formats.quake.colours import KEY_MASK, cell_nearest_keys, error_sample, mips_from
    from gamepak.ops.wad_build import read_picture

    palette = built_in_palette()
    allowed = np.ones(256, dtype=bool)
    allowed[224:] = False
    best = dict.fromkeys(("read", "map", "ciede2000", "mips"), float("inf"))
    for _round in range(rounds):
        spent = dict.fromkeys(best, 0.0)
        batch = ErrorBatch(palette)  # as the build measures: two pictures a pass
        for path in paths:
            start = time.process_time()
            rgba = read_picture(path, "t", False)
            read = time.process_time()
            keys = rgba.view("<u4").reshape(-1) & KEY_MASK
            indices = cell_nearest_keys(keys, palette, allowed)
            mapped = time.process_time()
            batch.add(*error_sample(keys, indices.reshape(rgba.shape[:2]), None)[:2])  # as the default build
            measured = time.process_time()
            mips_from(indices.reshape(rgba.shape[:2]), palette, None, allowed)
            done = time.process_time()
            for stage, seconds in zip(
                spent, (read - start, mapped - read, measured - mapped, done - measured), strict=True
            ):
                spent[stage] += seconds
        start = time.process_time()
        batch.flush()
        spent["ciede2000"] += time.process_time() - start
        best = {stage: min(best[stage], spent[stage]) for stage in best}
    print("  stages (CPU): " + ", ".join(f"{stage} {seconds:.3f} s" for stage, seconds in best.items()))


if __name__ == "__main__":
    main()
