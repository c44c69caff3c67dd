"""`gamepak catalog` on a generated collection, on /dev/shm, ratios measured in one run.

The development machine is shared (load ~10 on 2 cores while helpers run): wall-time ratios of
parallel runs are then meaningless, so each parallel figure is also given "on two free cores",
computed from CPU seconds (the client's own CPU plus the busiest worker's).

The collection (scale 1): 2,000 archives of all five formats (PAK, JoePack, RFG packfiles in
three data modes with nested .str2_pc packs, J2ME packs, JOE models), about 100,000 members and
1 GiB. `--scale 0.1` builds a tenth of it for a quick run.

- `processes` with 2 workers vs `synchronous` (target >= 1.6x faster);
- a `dask.distributed.LocalCluster` of 2 worker processes vs `processes` (target within 1.2x),
  warm (a cluster is long-lived) and on its first run; the cluster is the catalog's own
  (`catalog.run.local_cluster`, what `--scheduler local` starts: no statistical profiler, quieter
  monitors);
- hashing throughput of the catalog (sha256, one process, no nested packs, no verify) vs
  `sha256sum` over the same members extracted (target >= 0.8x), end to end (the whole catalog
  run, imports, parsing, Parquet included). The two do not hash the same bytes: the catalog
  also hashes every archive file (its `archive_sha256`, in the same pass as the members) and
  inflates compressed members, so it is also compared with `sha256sum` over the extracted
  members *and* the archives (the same bytes hashed), and with hashlib alone over both (what
  is left is parsing, Parquet and imports). coreutils' sha256sum may not use the CPU's SHA
  instructions where OpenSSL (hashlib) does: the hashlib line shows how much that weighs;
- peak RSS of every worker process (target < 200 MiB);
- `--archives N` instead: N small packs of every format (copies of a few templates, written with
  `os.write` so that making them takes a fraction of cataloging them), cataloged once with 2
  worker processes: peak memory of the whole run (client and workers, PSS summed; target < 500
  MB at a million), archives per second, the row groups written; then `--sample` of them
  (10,000) cataloged by `synchronous`, a LocalCluster of 2 workers and `processes` with 2, in
  alternating rounds: the speed-ups (target >= 1.6x) and whether the rows are the same;
- the textures table: a pack dense with pegs (150 pairs of 4 textures beside 150 other members,
  plain and compressed+condensed as a `.str2_pc` is) cataloged vs the same pack with its CPU
  files renamed so no textures are read (the same members, bytes and hashing); `--textures-only`
  runs just this.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import gamepak

from _common import GAMEPAK, compile_bytecode, goal_row, ratio_row, scratch

TEXT = b"".join(b"<entry id='%d'>value %d of the table</entry>\n" % (i, i * 7) for i in range(4000))


def _member_data(rng: random.Random, pool: bytes, size: int) -> bytes:
    if rng.random() < 0.5:
        start = rng.randrange(0, len(TEXT) - min(size, len(TEXT) - 1))
        data = TEXT[start : start + size]
        return data * (size // max(1, len(data))) + data[: size % max(1, len(data))]
    start = rng.randrange(0, len(pool) - size)
    return pool[start : start + size]


def _sizes(rng: random.Random, count: int, mean: int) -> list[int]:
    return [max(16, min(int(rng.expovariate(1 / mean)), 200_000)) for _ in range(count)]


def _pack(path: Path, format_name: str, members: list[tuple[str, bytes]], **options: object) -> None:
    with gamepak.create(path, format_name, overwrite=True, **options) as writer:
        for name, data in members:
            writer.add(name, data)


def _pack_bytes(folder: Path, format_name: str, members: list[tuple[str, bytes]], **options: object) -> bytes:
    path = folder / f".tmp.{format_name}"
    _pack(path, format_name, members, **options)
    data = path.read_bytes()
    path.unlink()
    return data


def build_collection(root: Path, scale: float, seed: int = 1) -> tuple[int, int]:
    """Write the collection; returns (archives, members) with nested members counted."""
    import numpy as np

    from gamepak.models import Mesh, dumps

    rng = random.Random(seed)
    pool = random.Random(seed).randbytes(8 << 20)
    archive_count = max(20, int(2000 * scale))
    members_total = 0
    mesh = Mesh.from_vertices(
        np.random.default_rng(seed).random((300, 3), dtype=np.float32), np.arange(300).reshape(100, 3) % 300
    )
    joe_data = dumps(mesh, "joe")
    for index in range(archive_count):
        folder = root / f"game{index % 7}" / f"dir{index % 13}"
        folder.mkdir(parents=True, exist_ok=True)
        kind = index % 10
        count = max(2, int(rng.gauss(50, 15)))
        sizes = _sizes(rng, count, 10_500)
        members = [
            (f"data/file{i:04d}.{rng.choice(['txt', 'bin', 'xtbl', 'png'])}", _member_data(rng, pool, s))
            for i, s in enumerate(sizes)
        ]
        if kind in (0, 1, 2):
            _pack(folder / f"pak{index}.pak", "pak", members)
        elif kind in (3, 4):
            _pack(folder / f"jpk{index}.jpk", "jpk", members)
        elif kind in (5, 6, 7):
            flags = {5: 0, 6: 1, 7: 3}[kind]
            inner_members = members[:10]
            inner = _pack_bytes(
                folder, "vpp", [(f"in{i}.xtbl", d) for i, (_, d) in enumerate(inner_members)], flags=3, level=1
            )
            members = [*members[10:], (f"nested{index}.str2_pc", inner)]
            members_total += len(inner_members)
            _pack(
                folder / f"rfg{index}.vpp_pc",
                "vpp",
                [(n.replace("/", "_"), d) for n, d in members],
                flags=flags,
                level=1,
            )
        elif kind == 8:
            if index % 20 == 8:
                (folder / f"model{index}.joe").write_bytes(joe_data)
                continue
            _pack(folder / f"res{index}", "j2me-table", [(str(i), d) for i, (_, d) in enumerate(members[:200])])
            members = members[:200]
        else:
            layout = "j2me-offsets" if index % 20 == 9 else "j2me-sized"
            _pack(folder / f"res{index}", layout, [(str(i), d[:60_000]) for i, (_, d) in enumerate(members)])
        members_total += len(members)
    return archive_count, members_total


# -- many small archives (--archives N) -------------------------------------------------------
FOLDER_FILES = 1000  # files per folder of the many-archives collection


def _templates(folder: Path, seed: int = 1) -> list[tuple[str, bytes]]:
    """Small packs of every format (file suffix, bytes): a few members of 64-1,024 bytes each,
    16 variants per format, RFG packs in three data modes with a nested .str2_pc in one."""
    import numpy as np

    from gamepak.models import Mesh, dumps

    rng = random.Random(seed)
    pool = rng.randbytes(1 << 16)
    mesh = Mesh.from_vertices(
        np.random.default_rng(seed).random((12, 3), dtype=np.float32), np.arange(12).reshape(4, 3)
    )
    templates: list[tuple[str, bytes]] = [(".joe", dumps(mesh, "joe"))]
    for variant in range(16):
        members = [
            (f"data/file{i}.{rng.choice(['txt', 'bin', 'xtbl'])}", _member_data(rng, pool, rng.randrange(64, 1024)))
            for i in range(rng.randrange(2, 7))
        ]
        flat = [(name.replace("/", "_"), data) for name, data in members]
        numbered = [(str(i), data) for i, (_, data) in enumerate(members)]
        templates.append((".pak", _pack_bytes(folder, "pak", members)))
        templates.append((".jpk", _pack_bytes(folder, "jpk", members)))
        for flags in (0, 1, 3):
            listed = flat
            if variant % 4 == 0:
                inner = _pack_bytes(folder, "vpp", flat[:2], flags=3, level=1)
                listed = [*flat, (f"nested{variant}.str2_pc", inner)]
            level = {"level": 1} if flags else {}
            templates.append((".vpp_pc", _pack_bytes(folder, "vpp", listed, flags=flags, **level)))
        for layout in ("j2me-table", "j2me-sized", "j2me-offsets"):
            templates.append(("", _pack_bytes(folder, layout, numbered)))
    return templates


def build_many(root: Path, count: int) -> float:
    """`count` small archives of every format in folders of FOLDER_FILES files (copies of a few
    templates, written with os.write: the generator must not take longer than the catalog);
    returns the seconds it took."""
    started = time.perf_counter()
    root.mkdir(parents=True, exist_ok=True)
    templates = _templates(root)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    for first in range(0, count, FOLDER_FILES):
        folder = root / f"f{first // FOLDER_FILES:04d}"
        folder.mkdir(parents=True)
        descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for index in range(first, min(count, first + FOLDER_FILES)):
                suffix, data = templates[index % len(templates)]
                file = os.open(f"a{index}{suffix}", flags, 0o644, dir_fd=descriptor)
                os.write(file, data)
                os.close(file)
        finally:
            os.close(descriptor)
    return time.perf_counter() - started


class Watch:
    """Peak RSS and CPU seconds of every descendant of a process, sampled every 50 ms."""

    def __init__(self, pid: int, exclude: int | None = None, tree: bool = False) -> None:
        self.pid = pid
        self.exclude = exclude
        self.peaks: dict[int, int] = {}
        # With `tree`: the process itself too, and the largest sum over the tree (PSS: pages
        # that forked workers share with their parent are counted once) seen in one sample.
        self.tree = tree
        self.root_peak = 0
        self.tree_peak = 0
        self.cpu_first: dict[int, float] = {}
        self.cpu_last: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import psutil

        try:
            parent = psutil.Process(self.pid)
        except psutil.NoSuchProcess:
            return
        while not self._stop.is_set():
            try:
                children = parent.children(recursive=True)
            except psutil.NoSuchProcess:
                return
            tree_sum = 0
            if self.tree:
                try:
                    self.root_peak = max(self.root_peak, parent.memory_info().rss)
                    tree_sum += parent.memory_full_info().pss
                except psutil.NoSuchProcess:
                    return
            for child in children:
                try:
                    with child.oneshot():
                        rss = child.memory_info().rss
                        times = child.cpu_times()
                        if self.tree:
                            tree_sum += child.memory_full_info().pss
                except psutil.NoSuchProcess:
                    continue
                cpu = times.user + times.system
                self.peaks[child.pid] = max(self.peaks.get(child.pid, 0), rss)
                self.cpu_first.setdefault(child.pid, cpu)
                self.cpu_last[child.pid] = cpu
            self.tree_peak = max(self.tree_peak, tree_sum)
            time.sleep(0.05)

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()

    def worker_cpu(self, since_start: bool) -> list[float]:
        """CPU seconds of each process seen (the delta since first seen for long-lived ones)."""
        pids = [pid for pid in self.cpu_last if pid != self.exclude]
        return [self.cpu_last[pid] - (self.cpu_first[pid] if since_start else 0.0) for pid in pids]


def timed_catalog(
    collection: Path | list[Path], out: Path, *options: str, cluster: bool = False, tree: bool = False
) -> tuple[float, float, Watch]:
    """One `gamepak catalog` run: (wall seconds, CPU seconds of the command and its own
    children, the watch over the worker processes; with `tree`, over the command too)."""
    shutil.rmtree(out, ignore_errors=True)
    paths = [str(path) for path in (collection if isinstance(collection, list) else [collection])]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.Popen([GAMEPAK, "catalog", *paths, "-o", str(out), *options], stderr=subprocess.PIPE)
    with Watch(os.getpid() if cluster else process.pid, exclude=process.pid, tree=tree) as watch:
        _, err = process.communicate()
        elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if process.returncode:
        sys.exit(f"catalog failed: {err.decode()}")
    print(f"   {' '.join(options)}: {elapsed:.2f} s wall, {cpu:.2f} s CPU  {err.decode().strip()}")
    return elapsed, cpu, watch


def _rows(out: Path) -> dict[str, list[str]]:
    """Every row of every table, sorted (the order of parts and rows is the scheduler's)."""
    from gamepak.catalog.schema import TABLES, read_table

    return {table: sorted(map(repr, read_table(str(out), table).to_pylist())) for table in TABLES}


def _row_groups(out: Path, every: int = 1) -> tuple[int, int, int, int]:
    """(parts, row groups, most rows, most bytes in one row group) over every `every`th part."""
    import pyarrow.parquet as pq

    parts = sorted(out.glob("*/part-*.parquet"))
    groups = most_rows = most_bytes = 0
    for path in parts[::every]:
        metadata = pq.ParquetFile(path).metadata
        for index in range(metadata.num_row_groups):
            group = metadata.row_group(index)
            groups += 1
            most_rows = max(most_rows, group.num_rows)
            most_bytes = max(most_bytes, group.total_byte_size)
    return len(parts), groups, most_rows, most_bytes


def bench_many(count: int, sample: int, rounds: int) -> None:
    """`count` small archives cataloged once (peak memory, archives per second, row groups),
    then a `sample` of them: synchronous vs 2 workers (LocalCluster and processes), alternating
    rounds, and the same rows from each."""
    mib = 2**20
    base = scratch("catalog-many")
    collection = base / "collection"
    generated = build_many(collection, count)
    print(f"generated {count:,} archives in {generated:.1f} s ({count / generated:,.0f} archives/s)")
    out = base / "out"
    wall, cpu, watch = timed_catalog(collection, out, "--workers", "2", tree=True)
    workers = [peak for pid, peak in watch.peaks.items() if pid != watch.pid]
    print(
        f"catalog of {count:,} archives (processes, 2 workers): {wall:.0f} s wall ({count / wall:,.0f} archives/s; "
        f"the generator took {generated / wall:.2f}x that), {cpu:.0f} s CPU; peak memory of the whole run "
        f"(client and workers, PSS summed) {watch.tree_peak / mib:.0f} MiB (target < 500 MB), client RSS "
        f"{watch.root_peak / mib:.0f} MiB, workers {', '.join(f'{peak / mib:.0f}' for peak in workers)} MiB"
    )
    peak_mb = watch.tree_peak / 1e6
    goal_row(
        f"catalog of {count:,} archives: peak memory (PSS, all processes)",
        "< 500 MB",
        f"{peak_mb:.0f} MB",
        peak_mb < 500,
    )
    every = max(1, count // 100_000)
    parts, groups, most_rows, most_bytes = _row_groups(out, every)
    print(
        f"output: {parts:,} parts; {groups:,} row groups in every {every}th part, the largest "
        f"{most_rows:,} rows, {most_bytes / mib:.1f} MiB uncompressed"
    )
    shutil.rmtree(out)
    if not sample:
        shutil.rmtree(base, ignore_errors=True)
        return
    folders = sorted(collection.iterdir())[: max(1, -(-sample // FOLDER_FILES))]
    sampled = min(count, len(folders) * FOLDER_FILES)  # the last folder may be partly filled
    print(f"sample: {sampled:,} archives, {rounds} alternating rounds, medians")
    from gamepak.catalog.run import local_cluster

    outs = {name: base / f"out-{name}" for name in ("synchronous", "cluster", "processes")}
    walls: dict[str, list[float]] = {name: [] for name in outs}
    bounds: dict[str, list[float]] = {name: [] for name in outs}
    timed_catalog(folders, outs["synchronous"], "--scheduler", "synchronous")  # warm the page cache
    with local_cluster(2) as cluster:
        address = cluster.scheduler_address
        timed_catalog(folders, outs["cluster"], "--scheduler", address, cluster=True)  # workers import
        for _ in range(rounds):
            wall, cpu, _ = timed_catalog(folders, outs["synchronous"], "--scheduler", "synchronous")
            walls["synchronous"].append(wall)
            bounds["synchronous"].append(cpu)
            wall, cpu, watch = timed_catalog(folders, outs["cluster"], "--scheduler", address, cluster=True)
            walls["cluster"].append(wall)
            bounds["cluster"].append(cpu + max(watch.worker_cpu(since_start=True), default=0.0))
            wall, cpu, watch = timed_catalog(folders, outs["processes"], "--scheduler", "processes", "--workers", "2")
            pool_cpu = watch.worker_cpu(since_start=False)
            walls["processes"].append(wall)
            bounds["processes"].append(cpu - sum(pool_cpu) + max(pool_cpu, default=0.0))
    wall_median = {name: statistics.median(values) for name, values in walls.items()}
    bound_median = {name: statistics.median(values) for name, values in bounds.items()}
    for name in ("cluster", "processes"):
        print(
            f"  {name} (2 workers) vs synchronous: {wall_median['synchronous'] / wall_median[name]:.2f}x faster in "
            f"wall time, {bound_median['synchronous'] / bound_median[name]:.2f}x on two free cores (target >= 1.6x)"
        )
        _speedup_rows(
            f"catalog of {sampled:,} archives, 2 workers ({name}) vs one process",
            wall_median["synchronous"] / wall_median[name],
            bound_median["synchronous"] / bound_median[name],
        )
    reference = _rows(outs["synchronous"])
    for name in ("cluster", "processes"):
        same = "the same" if _rows(outs[name]) == reference else "NOT the same"
        print(f"  {name}: {same} rows as synchronous ({len(reference['members']):,} members)")
    shutil.rmtree(base, ignore_errors=True)


TRACE_SCRIPT = Path(__file__).resolve().parent / "_catalog_trace.py"


def traced_catalog(
    folders: list[Path], out: Path, trace: Path, *options: str
) -> list[tuple[str, int, float, float, str]]:
    """One `gamepak catalog` run through _catalog_trace.py: its events (name, pid, seconds since
    the command was started, that process's CPU seconds, detail), in time order."""
    shutil.rmtree(out, ignore_errors=True)
    trace.unlink(missing_ok=True)
    paths = [str(path) for path in folders]
    launched = time.clock_gettime(time.CLOCK_MONOTONIC)
    command = [sys.executable, str(TRACE_SCRIPT), str(trace), "catalog", *paths, "-o", str(out), *options]
    subprocess.run(command, check=True, stderr=subprocess.DEVNULL)
    ended = time.clock_gettime(time.CLOCK_MONOTONIC)
    events = [("launch", 0, 0.0, 0.0, ""), ("exit", 0, ended - launched, 0.0, "")]
    for line in trace.read_text().splitlines():
        name, pid, clock, cpu, detail = (line.split(" ", 4) + [""])[:5]
        events.append((name, int(pid), float(clock) - launched, float(cpu), detail))
    return sorted(events, key=lambda event: event[2])


def timeline(events: list[tuple[str, int, float, float, str]]) -> dict[str, float]:
    """The phases of one traced run, in seconds: where its wall time went."""
    client = next(pid for name, pid, *_ in events if name == "client-start")
    first = {name: (clock, cpu) for name, pid, clock, cpu, _ in reversed(events) if pid in (client, 0)}
    tasks: dict[int, list[tuple[float, float, float, float]]] = {}
    starts: dict[int, tuple[float, float]] = {}
    for name, pid, clock, cpu, _ in events:
        if name == "task-start":
            starts[pid] = (clock, cpu)
        elif name == "task-end":
            tasks.setdefault(pid, []).append((*starts.pop(pid), clock, cpu))
    finish = [(clock, pid) for name, pid, clock, *_ in events if name in ("finish-start", "finish-end")]
    first_task = min(runs[0][0] for runs in tasks.values())
    last_task = max(runs[-1][2] for runs in tasks.values())
    phases = {
        "interpreter start": first["client-start"][0],
        "client imports (gamepak.catalog)": first["imports-catalog"][0] - first["client-start"][0],
        "until the walk starts (CLI, output folder)": first["walk-start"][0] - first["imports-catalog"][0],
        "walk": first["walk-end"][0] - first["walk-start"][0],
        "walk end to first unit sent (dask imports, pool)": first["submit"][0] - first["walk-end"][0],
        "first unit sent to first task started": first_task - first["submit"][0],
        "tasks: first start to last end": last_task - first_task,
        "last task end to finish start": finish[0][0] - last_task,
        "finish (walk errors, empty parts)": finish[-1][0] - finish[0][0],
        "finish end to exit": first["exit"][0] - finish[-1][0],
        "total": first["exit"][0],
        "client CPU before the first unit sent": first["submit"][1],
        "client CPU in all": first["client-end"][1],
    }
    if "pool" in first:
        phases["pool ready (from the walk's end; < 0: before)"] = first["pool"][0] - first["walk-end"][0]
    for number, (pid, runs) in enumerate(sorted(tasks.items(), key=lambda item: item[1][0][0])):
        busy = sum(end - start for start, _, end, _ in runs)
        label = "client" if pid == client else f"worker {number + 1}"
        phases[f"{label}: units"] = len(runs)
        phases[f"{label}: first task starts"] = runs[0][0]
        phases[f"{label}: in tasks (wall)"] = busy
        phases[f"{label}: in tasks (CPU)"] = sum(end - start for _, start, _, end in runs)
        phases[f"{label}: between its tasks"] = runs[-1][2] - runs[0][0] - busy
        phases[f"{label}: idle at the end"] = last_task - runs[-1][2]
        phases[f"{label}: CPU outside tasks, first to last"] = (
            runs[-1][3] - runs[0][1] - phases[f"{label}: in tasks (CPU)"]
        )
    return phases


def _cpu_bound(phases: dict[str, float]) -> float:
    """The client's CPU plus the busiest worker's (tasks and what it did between them)."""
    workers = [
        phases[f"{label}: in tasks (CPU)"] + phases[f"{label}: CPU outside tasks, first to last"]
        for label in ("worker 1", "worker 2")
        if f"{label}: units" in phases
    ]
    return phases["client CPU in all"] + max(workers, default=0.0)


def bench_timeline(count: int, rounds: int) -> None:
    """Where the wall time of a 2-worker run goes that the synchronous run does not pay."""
    base = scratch("catalog-timeline")
    collection = base / "collection"
    build_many(collection, count)
    folders = sorted(collection.iterdir())
    out, trace = base / "out", base / "trace.txt"
    traced_catalog(folders, out, trace, "--scheduler", "synchronous")  # warm the page cache
    os.environ["GAMEPAK_CATALOG_TRACE"] = str(trace)  # the cluster's workers trace their tasks too
    sys.path.insert(0, str(TRACE_SCRIPT.parent))
    from gamepak.catalog.run import local_cluster

    results: dict[str, list[dict[str, float]]] = {"synchronous": [], "cluster": [], "processes": []}
    with local_cluster(2) as cluster:
        address = cluster.scheduler_address
        traced_catalog(folders, out, trace, "--scheduler", address)  # the workers import
        for _ in range(rounds):
            for name, options in (
                ("synchronous", ("--scheduler", "synchronous")),
                ("cluster", ("--scheduler", address)),
                ("processes", ("--scheduler", "processes", "--workers", "2")),
            ):
                results[name].append(timeline(traced_catalog(folders, out, trace, *options)))
    for name, runs in results.items():
        print(f"{name} ({count:,} archives; medians of {rounds} rounds, seconds):")
        for phase in runs[0]:
            values = [run[phase] for run in runs if phase in run]
            print(f"  {phase:52s} {statistics.median(values):8.3f}")
    reference = statistics.median(run["total"] for run in results["synchronous"])
    reference_cpu = statistics.median(run["client CPU in all"] for run in results["synchronous"])
    for name in ("cluster", "processes"):
        wall = statistics.median(run["total"] for run in results[name])
        bound = statistics.median(_cpu_bound(run) for run in results[name])
        print(
            f"{name} vs synchronous: {reference / wall:.2f}x in wall time, {reference_cpu / bound:.2f}x on two free "
            "cores (the client's CPU and the busiest worker's, from their first task to their last)"
        )
    shutil.rmtree(base, ignore_errors=True)


def _speedup_rows(row: str, wall: float, cpu: float) -> None:
    """A 2-worker speed-up's goal rows (>= 1.6x): in wall time, and from CPU seconds (the time
    two free cores would take: the client's own work plus the busiest worker's). Under load
    (other work on the two cores) the wall row says NO while the CPU row still shows whether
    the catalog itself meets the goal; on a quiet machine the two agree."""
    ratio_row(row, wall, at_least=1.6, detail="wall time")
    ratio_row(f"{row} (CPU)", cpu, at_least=1.6, detail="CPU seconds: client + busiest worker")


def _hashlib_cpu(paths: list[Path]) -> float:
    import hashlib

    start = time.process_time()
    for path in paths:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
        digest.hexdigest()
    return time.process_time() - start


def _sha256sum(file_list: Path) -> tuple[float, float]:
    """(wall, CPU seconds) of sha256sum over the NUL-separated files listed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(file_list, "rb") as names:
        subprocess.run(["xargs", "-0", "sha256sum"], stdin=names, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def extract_top_level(collection: Path, target: Path) -> int:
    """Extract every archive's own members (what sha256sum hashes); returns their bytes."""
    total = 0
    for index, path in enumerate(sorted(p for p in collection.rglob("*") if p.is_file())):
        if path.suffix == ".joe":
            continue
        with gamepak.open(path) as archive:
            archive.extractall(target / str(index))
            total += sum(entry.size for entry in archive.infolist())
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the 2,000-archive collection")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (medians are reported)")
    parser.add_argument("--textures-only", action="store_true", help="only the textures table's cost")
    parser.add_argument(
        "--archives", type=int, default=0, help="instead: this many small archives of every format (scale and memory)"
    )
    parser.add_argument(
        "--sample", type=int, default=10_000, help="with --archives: archives compared across schedulers"
    )
    parser.add_argument(
        "--timeline", type=int, default=0, metavar="N", help="instead: where the time of a run over N archives goes"
    )
    arguments = parser.parse_args()
    compile_bytecode()
    if arguments.timeline:
        bench_timeline(arguments.timeline, arguments.rounds)
        return
    if arguments.archives:
        bench_many(arguments.archives, min(arguments.sample, arguments.archives), arguments.rounds)
        return
    if arguments.textures_only:
        bench_textures_table(max(arguments.rounds, 7))
        return
    base = scratch("catalog")
    collection = base / "collection"
    started = time.perf_counter()
    archives, members = build_collection(collection, arguments.scale)
    size = sum(p.stat().st_size for p in collection.rglob("*") if p.is_file())
    print(
        f"collection: {archives} archives, {members} members, {size / 2**20:.0f} MiB "
        f"(built in {time.perf_counter() - started:.0f} s)"
    )

    out = base / "out"
    # Warm the page cache and the interpreter's imports once.
    timed_catalog(collection, out, "--scheduler", "synchronous", "--hash", "none", "--no-verify")
    from gamepak.catalog.run import local_cluster

    walls: dict[str, list[float]] = {"synchronous": [], "processes": [], "cluster": []}
    bounds: dict[str, list[float]] = {"synchronous": [], "processes": [], "cluster": []}
    process_peaks: list[int] = []
    cluster_peaks: list[int] = []
    with local_cluster(2) as cluster:
        address = cluster.scheduler_address
        # The first run also imports gamepak, pyarrow and dask into the long-lived workers.
        cold_time, cold_client_cpu, cold_watch = timed_catalog(collection, out, "--scheduler", address, cluster=True)
        cold_bound = cold_client_cpu + max(cold_watch.worker_cpu(since_start=True), default=0.0)
        cluster_peaks.extend(cold_watch.peaks.values())
        # Alternating rounds, medians: the machine is shared and its load swings.
        for _ in range(arguments.rounds):
            wall, cpu, _ = timed_catalog(collection, out, "--scheduler", "synchronous")
            walls["synchronous"].append(wall)
            bounds["synchronous"].append(cpu)
            wall, cpu, watch = timed_catalog(collection, out, "--scheduler", "processes", "--workers", "2")
            # Besides wall time, the time two free cores would take, from CPU seconds: the
            # client's own work plus the busiest worker.
            pool_cpu = watch.worker_cpu(since_start=False)
            walls["processes"].append(wall)
            bounds["processes"].append(cpu - sum(pool_cpu) + max(pool_cpu, default=0.0))
            process_peaks.extend(watch.peaks.values())
            wall, cpu, watch = timed_catalog(collection, out, "--scheduler", address, cluster=True)
            walls["cluster"].append(wall)
            bounds["cluster"].append(cpu + max(watch.worker_cpu(since_start=True), default=0.0))
            cluster_peaks.extend(watch.peaks.values())
    wall_median = {name: statistics.median(values) for name, values in walls.items()}
    bound_median = {name: statistics.median(values) for name, values in bounds.items()}
    synchronous, processes, cluster_time = wall_median["synchronous"], wall_median["processes"], wall_median["cluster"]
    synchronous_cpu, processes_bound, cluster_bound = (
        bound_median["synchronous"],
        bound_median["processes"],
        bound_median["cluster"],
    )
    from gamepak.catalog.schema import read_table

    rows = read_table(str(out), "members", ["size"]).num_rows

    # Hashing: the catalog in one process vs sha256sum, alternating rounds, medians.
    extracted = base / "extracted"
    member_bytes = extract_top_level(collection, extracted)
    extracted_files = sorted(p for p in extracted.rglob("*") if p.is_file())
    archive_files = sorted(p for p in collection.rglob("*") if p.is_file())
    archive_bytes = sum(p.stat().st_size for p in archive_files)
    members_list = base / "members.txt"
    members_list.write_bytes(b"\0".join(os.fsencode(p) for p in extracted_files))
    both_list = base / "both.txt"
    both_list.write_bytes(b"\0".join(os.fsencode(p) for p in [*extracted_files, *archive_files]))
    hashing: dict[str, list[tuple[float, float]]] = {"catalog": [], "members": [], "both": []}
    for _ in range(arguments.rounds):
        wall, cpu, _ = timed_catalog(collection, out, "--scheduler", "synchronous", "--no-nested", "--no-verify")
        hashing["catalog"].append((wall, cpu))
        hashing["members"].append(_sha256sum(members_list))
        hashing["both"].append(_sha256sum(both_list))
    hashed, hashed_cpu = (statistics.median(v[i] for v in hashing["catalog"]) for i in (0, 1))
    sha256sum, sha256sum_cpu = (statistics.median(v[i] for v in hashing["members"]) for i in (0, 1))
    both, both_cpu = (statistics.median(v[i] for v in hashing["both"]) for i in (0, 1))

    mib = 2**20
    process_peak = max(process_peaks, default=0) / mib
    cluster_peak = max(cluster_peaks, default=0) / mib
    print(f"members cataloged (nested included): {rows}")
    print(
        f"processes (2 workers) vs synchronous: {synchronous / processes:.2f}x faster in wall time, "
        f"{synchronous_cpu / processes_bound:.2f}x on two free cores (CPU: {synchronous_cpu:.1f} s vs client + busiest "
        f"worker {processes_bound:.1f} s) (target >= 1.6x; medians of {arguments.rounds} rounds)"
    )
    _speedup_rows(
        "catalog, 2 workers (processes) vs one process", synchronous / processes, synchronous_cpu / processes_bound
    )
    print(
        f"LocalCluster (2 workers) vs processes: {cluster_time / processes:.2f}x the wall time, "
        f"{cluster_bound / processes_bound:.2f}x on two free cores; its first run (workers importing): "
        f"{cold_time / processes:.2f}x wall, {cold_bound / processes_bound:.2f}x on two free cores (target <= 1.2x)"
    )
    print(
        f"hashing (medians of {arguments.rounds} rounds): the catalog (one process, --no-nested --no-verify) hashes "
        f"the {member_bytes / mib:.0f} MiB of the archives' own members (compressed ones inflated) and the "
        f"{archive_bytes / mib:.0f} MiB of the archive files themselves (archive_sha256), and parses, writes Parquet "
        f"and imports; sha256sum of the extracted members hashes the first only"
    )
    print(
        f"  vs sha256sum over the members extracted (the target, >= 0.8x): {sha256sum / hashed:.2f}x wall, "
        f"{sha256sum_cpu / hashed_cpu:.2f}x CPU (catalog {member_bytes / hashed_cpu / 1e6:.0f} MB/s of members "
        f"per CPU second, sha256sum {member_bytes / sha256sum_cpu / 1e6:.0f})"
    )
    print(
        f"  vs sha256sum over the members extracted and the archives (the same bytes hashed): "
        f"{both / hashed:.2f}x wall, {both_cpu / hashed_cpu:.2f}x CPU"
    )
    # The hashing the catalog does (hashlib: OpenSSL, which uses the CPU's SHA instructions
    # where coreutils' sha256sum may not) over the same bytes, in this process.
    hashlib_cpu = _hashlib_cpu(extracted_files)
    hashlib_both_cpu = hashlib_cpu + _hashlib_cpu(archive_files)
    print(
        f"  hashlib alone over the extracted members: {member_bytes / hashlib_cpu / 1e6:.0f} MB/s CPU, "
        f"{sha256sum_cpu / hashlib_cpu:.2f}x sha256sum; over members and archives "
        f"{hashlib_both_cpu:.2f} s CPU: the catalog spends {hashed_cpu / hashlib_both_cpu:.2f}x that"
    )
    print(
        f"peak RSS per worker: processes {process_peak:.0f} MiB, LocalCluster {cluster_peak:.0f} MiB (target < 200 MiB)"
    )
    shutil.rmtree(base, ignore_errors=True)
    bench_textures_table(max(arguments.rounds, 7))


def bench_textures_table(rounds: int) -> None:
    """The catalog of peg-dense packs with the textures table vs without (CPU files renamed)."""
    import numpy as np

    from gamepak.catalog import ScanOptions, build_catalog
    from gamepak.formats.rfg.peg import Peg, PixelFormat

    base = scratch("catalog-textures")
    rng = np.random.default_rng(1)
    members: list[tuple[str, bytes]] = []
    for index in range(150):
        peg = Peg.new(f"p{index}.cpeg_pc")
        for texture in range(4):
            peg.add_texture(f"t{texture}", rng.integers(0, 256, (64, 64, 4), dtype=np.uint8), PixelFormat.DXT1)
        cpu, gpu = peg.to_bytes()
        members += [(f"p{index}.cpeg_pc", cpu), (f"p{index}.gpeg_pc", gpu), (f"m{index}.bin", rng.bytes(20000))]
    renamed = [(name.replace(".cpeg_pc", ".cpeg_px"), data) for name, data in members]
    for folder, listed in (("pegs", members), ("renamed", renamed)):
        (base / folder).mkdir()
        for flags in (0, 3):
            _pack(base / folder / f"mode{flags}.vpp_pc", "vpp", listed, flags=flags)

    def catalog(folder: str, verify: bool) -> float:
        shutil.rmtree(base / "out", ignore_errors=True)
        start = time.perf_counter()
        build_catalog(
            [str(base / folder)], str(base / "out"), options=ScanOptions(verify=verify), scheduler="synchronous"
        )
        return time.perf_counter() - start

    from gamepak.catalog.schema import read_table

    # The table alone (--no-verify on both sides), then with verify (which parses every peg
    # with its GPU file, as `gamepak verify` does).
    for verify in (False, True):
        catalog("pegs", verify), catalog("renamed", verify)
        with_table, without = [], []
        for _ in range(rounds):
            with_table.append(catalog("pegs", verify))
            without.append(catalog("renamed", verify))
        catalog("pegs", verify)  # the last round cataloged the renamed packs
        rows = read_table(str(base / "out"), "textures").num_rows
        a, b = statistics.median(with_table), statistics.median(without)
        print(
            f"textures table{' and peg verify' if verify else ''}: {rows} textures of 300 pegs in 2 packs: "
            f"{a * 1000:.0f} ms vs {b * 1000:.0f} ms without pegs ({a / b:.2f}x), {rounds} alternating rounds"
        )
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
