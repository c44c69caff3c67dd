"""Extracting a compressed + condensed packfile: gamepak vs a minimal hand-written extractor.

Builds a ~200 MB (decompressed) flags-3 `.vpp_pc` of text-like members on /dev/shm with
gamepak's writer, then alternates, round after round, into fresh folders on /dev/shm:
- gamepak: the in-process library call `Reader.extractall` (the same path `gamepak extract`
  takes, without the CLI's argument parsing and progress bar);
- gamepak-1thread: the same with the stream's runs inflated on the writing thread (one core);
- gamepak-isal: the same with the `deflate` wheel made unimportable (isal streaming only);
- minimal: struct-parse the directory, ONE stdlib `zlib.decompressobj()` pass over the data
  block (1 MiB of input at a time), write each member with os.open/os.write as it completes.
Prints the medians, the gamepak/minimal ratios (median, and min of the rounds: the quietest
run of each; goal <= 0.3x), the peak RSS of `gamepak extract` (goal < 100 MiB), then the
decompression speed of isal and stdlib zlib on the same data block.

    python benchmarks/bench_vpp_extract.py [--size-mb 200] [--rounds 5] [--level 1]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import struct
import tempfile
import time
import zlib

import gamepak

from _common import goal_row, ratio_row

ENTRY = struct.Struct("<IIIIIII")


def _align(value: int, alignment: int = 2048) -> int:
    return -(-value // alignment) * alignment


def text_corpus(size: int, seed: int = 1) -> bytes:
    """XML-ish text like the game's .xtbl tables: repeated tags, words and numbers."""
    rng = random.Random(seed)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 10))) for _ in range(400)]
    lines = []
    total = 0
    while total < size:
        tag = rng.choice(words[:40])
        body = " ".join(rng.choices(words, k=rng.randint(1, 4)))
        line = f'    <{tag} value="{rng.randint(0, 999)}">{body}</{tag}>\n'
        lines.append(line)
        total += len(line)
    return "".join(lines).encode()[:size]


def build(path: str, size: int, level: int) -> int:
    """Write the packfile; returns the member count."""
    corpus = text_corpus(16 << 20)
    rng = random.Random(2)
    written = 0
    count = 0
    with gamepak.create(path, "vpp", overwrite=True, flags=3, level=level, align=16) as writer:
        while written < size:
            length = min(rng.randint(2_000, 400_000), size - written)
            start = rng.randrange(0, len(corpus) - length)
            writer.add(f"member_{count:05d}.xtbl", corpus[start : start + length])
            written += length
            count += 1
    return count


def minimal_extract(path: str, dest: str) -> None:
    """The hand-written baseline: one stdlib decompressor pass, members written as they end."""
    fd = os.open(path, os.O_RDONLY)
    try:
        header = os.pread(fd, 2048, 0)
        (count,) = struct.unpack_from("<I", header, 340)
        (name_block_size,) = struct.unpack_from("<I", header, 352)
        (compressed_size,) = struct.unpack_from("<I", header, 360)
        entries = list(ENTRY.iter_unpack(os.pread(fd, ENTRY.size * count, 2048)))
        names_at = 2048 + _align(ENTRY.size * count)
        names = os.pread(fd, name_block_size, names_at)
        data_at = names_at + _align(name_block_size)
        members = []
        for name_offset, _, data_offset, _, size, _, _ in entries:
            name = names[name_offset : names.index(b"\0", name_offset)].decode()
            members.append((data_offset, size, os.path.join(dest, name)))
        os.makedirs(dest, exist_ok=True)
        inflate = zlib.decompressobj()
        pending = bytearray()
        pending_start = 0  # stream position of pending[0]
        index = 0
        position = data_at
        end = data_at + compressed_size
        while index < len(members):
            piece = os.pread(fd, min(1 << 20, end - position), position)
            position += len(piece)
            pending += inflate.decompress(piece) if piece else inflate.flush()
            while index < len(members):
                offset, size, target = members[index]
                if offset + size > pending_start + len(pending):
                    break
                view = memoryview(pending)[offset - pending_start : offset - pending_start + size]
                out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                with view:
                    written = 0
                    while written < size:
                        written += os.write(out, view[written:])
                os.close(out)
                index += 1
            if index < len(members):
                cut = members[index][0] - pending_start
                if cut > 0:
                    del pending[:cut]
                    pending_start += cut
            if not piece and index < len(members):
                raise RuntimeError("stream ended early")
    finally:
        os.close(fd)


def gamepak_extract(path: str, dest: str) -> None:
    with gamepak.open(path) as archive:
        archive.extractall(dest)


def gamepak_extract_one_thread(path: str, dest: str) -> None:
    """gamepak with the runs of the stream inflated on the writing thread (what a one-core
    machine gets): shows what the second thread brings."""
    from gamepak.formats.rfg import passes

    saved = passes._second_core
    passes._second_core = lambda: False
    try:
        gamepak_extract(path, dest)
    finally:
        passes._second_core = saved


def gamepak_extract_streaming(path: str, dest: str) -> None:
    """gamepak with the `deflate` wheel made unimportable: isal's streaming inflater for
    everything (what a platform without libdeflate gets)."""
    import sys

    from gamepak.core import inflaters

    saved = sys.modules.get("deflate")
    sys.modules["deflate"] = None  # type: ignore[assignment]
    inflaters.forget_choice()
    try:
        gamepak_extract(path, dest)
    finally:
        if saved is None:
            del sys.modules["deflate"]
        else:
            sys.modules["deflate"] = saved
        inflaters.forget_choice()


def peak_rss_mib(path: str, dest: str) -> float:
    """Peak resident memory of `gamepak extract` of the pack, in its own process (GNU time:
    the bench's own memory, which a forked child starts with, is not counted)."""
    import subprocess
    import sys

    report = dest + ".rss"
    command = [sys.executable, "-m", "gamepak", "extract", path, "-o", dest]
    subprocess.run(["/usr/bin/time", "-f", "%M", "-o", report, *command], check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(dest)
    with open(report) as handle:
        return int(handle.read().split()[-1]) / 1024


def decompress_speed(path: str, rounds: int) -> dict[str, float]:
    """Median seconds to inflate the whole data block with each module (1 MiB input steps)."""
    with gamepak.open(path) as archive:
        start = archive.data_start  # type: ignore[attr-defined]
        length = archive.compressed_size_field  # type: ignore[attr-defined]
    with open(path, "rb") as handle:
        handle.seek(start)
        block = handle.read(length)
    modules = {"zlib": zlib}
    try:
        from isal import isal_zlib

        modules["isal"] = isal_zlib
    except ImportError:
        pass
    times: dict[str, list[float]] = {name: [] for name in modules}
    outputs = {}
    for _ in range(rounds):
        for name, module in modules.items():
            began = time.perf_counter()
            inflate = module.decompressobj()
            total = 0
            digest = 0
            for offset in range(0, len(block), 1 << 20):
                out = inflate.decompress(block[offset : offset + (1 << 20)])
                total += len(out)
                digest = zlib.crc32(out, digest)
            times[name].append(time.perf_counter() - began)
            outputs[name] = (total, digest)
    assert len(set(outputs.values())) == 1, "decompressors disagree"
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--level", type=int, default=1)
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="bench-vpp-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    try:
        path = os.path.join(root, "bench.vpp_pc")
        began = time.perf_counter()
        count = build(path, args.size_mb << 20, args.level)
        print(
            f"built {path}: {count} members, {args.size_mb} MiB decompressed, "
            f"{os.path.getsize(path) / 2**20:.1f} MiB on disk, level {args.level}, "
            f"{time.perf_counter() - began:.1f} s"
        )
        runners = {
            "gamepak": gamepak_extract,
            "minimal": minimal_extract,
            "gamepak-1thread": gamepak_extract_one_thread,
            "gamepak-isal": gamepak_extract_streaming,
        }
        timings: dict[str, list[float]] = {name: [] for name in runners}
        # CPU seconds of this process (every thread): on a machine other jobs keep busy, wall
        # time mostly measures waiting; a quiet machine's wall time is at most this.
        cpu: dict[str, list[float]] = {name: [] for name in runners}
        for round_number in range(args.rounds):
            order = list(runners) if round_number % 2 == 0 else list(runners)[::-1]
            for name in order:
                dest = os.path.join(root, f"out-{name}-{round_number}")
                began, began_cpu = time.perf_counter(), time.process_time()
                runners[name](path, dest)
                timings[name].append(time.perf_counter() - began)
                cpu[name].append(time.process_time() - began_cpu)
            # identical output, then free the space (tmpfs: no inode-reuse penalty)
            sample = "member_00000.xtbl"
            with (
                open(os.path.join(root, f"out-gamepak-{round_number}", sample), "rb") as a,
                open(os.path.join(root, f"out-minimal-{round_number}", sample), "rb") as b,
            ):
                assert a.read() == b.read()
            for name in order:
                shutil.rmtree(os.path.join(root, f"out-{name}-{round_number}"))
        medians = {name: statistics.median(values) for name, values in timings.items()}
        size_mb = args.size_mb * 1.048576
        for name, value in medians.items():
            print(
                f"{name:15s} median {value:.3f} s ({size_mb / value:.0f} MB/s)  rounds: "
                + " ".join(f"{v:.3f}" for v in timings[name])
            )
        for name in ("gamepak", "gamepak-1thread", "gamepak-isal"):
            ratios = [g / m for g, m in zip(timings[name], timings["minimal"])]
            print(
                f"ratio {name}/minimal: median {medians[name] / medians['minimal']:.2f}x, "
                f"min of {args.rounds} {min(timings[name]) / min(timings['minimal']):.2f}x "
                f"(same-round ratios: median {statistics.median(ratios):.2f}x)"
            )
            print(
                f"CPU time {name}/minimal: min of {args.rounds} {min(cpu[name]) / min(cpu['minimal']):.2f}x "
                f"({min(cpu[name]):.3f} s / {min(cpu['minimal']):.3f} s)"
            )
        measured = min(timings["gamepak"]) / min(timings["minimal"])
        ratio_row(
            "extract of a mode-3 RFG pack vs a minimal zlib extractor",
            measured,
            at_most=0.30,
            detail=f"min of {args.rounds} interleaved rounds; CPU {min(cpu['gamepak']) / min(cpu['minimal']):.2f}x",
        )
        peak = peak_rss_mib(path, os.path.join(root, "out-peak"))
        goal_row("peak RSS of that extraction", "< 100 MiB", f"{peak:.0f} MiB", peak < 100)
        speeds = decompress_speed(path, args.rounds)
        for name, value in speeds.items():
            print(f"inflate data block with {name:5s}: median {value:.3f} s ({size_mb / value:.0f} MB/s out)")
        if "isal" in speeds:
            print(f"isal/zlib time: {speeds['isal'] / speeds['zlib']:.2f}x")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
