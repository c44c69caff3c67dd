"""`gamepak serve` against its targets, with `gamepak ls` of the same pack as the reference run:

- the first byte of a 100,000-member pack's page <= 1 s (a new server: the pack opened by that
  request), and a deep link to its last member <= 1 s (another new server);
- a 1024x1024 DXT5 texture's preview (PNG) <= 0.3 s;
- the server's memory flat in pack size: peak RSS serving (listing, then downloading every
  member of) a 64 MiB and a 512 MiB pack of the same member count.
"""

from __future__ import annotations

import re
import subprocess
import time
import urllib.request
from pathlib import Path

import numpy as np

import gamepak

from _common import GAMEPAK, compile_bytecode, run, scratch

MEMBERS = 100_000


def start(root: Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [GAMEPAK, "serve", str(root), "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    match = re.search(r"(http://[^ ]+)/browse/", process.stdout.readline())
    if not match:
        raise SystemExit(f"the server did not start: {process.stderr.read() if process.stderr else ''}")
    return process, match.group(1)


def stop(process: subprocess.Popen[str]) -> float:
    """Stop the server; its peak resident set in MiB."""
    with open(f"/proc/{process.pid}/status") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
    process.terminate()
    process.wait(timeout=30)
    return peak / 1024


def fetch(url: str) -> tuple[float, float, int]:
    """(seconds to the first byte, seconds to the last, bytes)."""
    began = time.perf_counter()
    with urllib.request.urlopen(url) as response:
        first = response.read(1)
        first_at = time.perf_counter() - began
        size = len(first)
        while chunk := response.read(1 << 20):
            size += len(chunk)
    return first_at, time.perf_counter() - began, size


def make_texture(work: Path) -> Path:
    from gamepak.formats.rfg.peg import Peg, PixelFormat

    y, x = np.mgrid[0:1024, 0:1024]
    rgba = np.stack([x % 256, y % 256, (x ^ y) % 256, np.full_like(x, 255)], axis=-1).astype(np.uint8)
    peg = Peg.new("big.cpeg_pc")
    peg.add_texture("big", rgba, PixelFormat.DXT5)
    cpu, gpu = peg.to_bytes()
    folder = work / "textures"
    folder.mkdir()
    (folder / "big.cpeg_pc").write_bytes(cpu)
    (folder / "big.gpeg_pc").write_bytes(gpu)
    return folder


def main() -> None:
    compile_bytecode()
    work = scratch("serve")
    big = work / "pack"
    big.mkdir()
    with gamepak.create(big / "big.pak") as writer:
        for index in range(MEMBERS):
            writer.add(f"maps/m{index:06}.bin", index.to_bytes(4, "little") * 8)
    reference = min(run([GAMEPAK, "ls", str(big / "big.pak")]) for _ in range(3))
    print(f"gamepak ls of a {MEMBERS:,}-member pack (reference): {reference:.3f} s")

    process, base = start(big)
    first, total, size = fetch(f"{base}/browse/big.pak/maps/")
    warm_first, _, _ = fetch(f"{base}/browse/big.pak/maps/?page=200")
    stop(process)
    print(
        f"first page, new server: first byte {first:.3f} s ({first / reference:.2f}x ls), whole page {total:.3f} s, "
        f"{size / 1e3:.0f} kB (target <= 1 s, <= 2 MB); last page once open: {warm_first:.3f} s"
    )
    process, base = start(big)
    first, total, _ = fetch(f"{base}/browse/big.pak/maps/m{MEMBERS - 1:06}.bin")
    stop(process)
    print(f"deep link to the last member, new server: first byte {first:.3f} s, page {total:.3f} s (target <= 1 s)")

    folder = make_texture(work)
    process, base = start(folder)
    fetch(f"{base}/browse/")  # the server's own start-up (imports) is not the preview's
    first, total, size = fetch(f"{base}/texture/big.cpeg_pc?name=big")
    stop(process)
    print(f"1024x1024 DXT5 texture as PNG: {total:.3f} s, {size / 1e3:.0f} kB (target <= 0.3 s)")

    peaks = {}
    for label, member_size in (("64 MiB", 1 << 20), ("512 MiB", 8 << 20)):
        folder = work / f"sized-{label.split()[0]}"
        folder.mkdir()
        with gamepak.create(folder / "sized.pak") as writer:
            for index in range(64):
                writer.add(f"m{index:02}.bin", bytes([index]) * member_size)
        process, base = start(folder)
        fetch(f"{base}/browse/sized.pak")
        for index in range(64):
            fetch(f"{base}/raw/sized.pak/m{index:02}.bin")
        fetch(f"{base}/browse/sized.pak/m63.bin")
        peaks[label] = stop(process)
    small, large = peaks.values()
    print(
        f"server peak RSS: {small:.0f} MiB serving a 64 MiB pack, {large:.0f} MiB a 512 MiB one "
        f"({large / small:.2f}x for 8x the bytes; flat is ~1x)"
    )


if __name__ == "__main__":
    main()
