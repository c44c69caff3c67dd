"""`gamepak catalog` and `gamepak catalog-diff`: many archives into a Parquet dataset.

Dask and pyarrow are imported when a command runs, never for `--help` or other commands.
"""

from __future__ import annotations

import argparse

from ..errors import EXIT_DIFFERENT, EXIT_OK, MissingDependencyError, cannot_read
from .common import add_command, add_json_option, count, shows_progress, summary, write_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HASHES = ("sha256", "blake2b", "xxh3", "none")
INSTALL_HINT = "pip install 'gamepak[catalog]'"


def _library() -> Any:
    """gamepak.catalog, or a one-line error naming the extra to install. pyarrow is only looked
    for here: the client of a run does not need to import it."""
    import importlib.util

    for needed in ("dask", "pyarrow"):
        if importlib.util.find_spec(needed) is None:
            raise MissingDependencyError(f"gamepak catalog needs {needed}, which is not installed: {INSTALL_HINT}")
    from .. import catalog

    return catalog


def _scheduler(value: str) -> str:
    if value in ("processes", "threads", "synchronous", "local") or value.startswith(
        ("tcp://", "tls://", "ucx://", "inproc://")
    ):
        return value
    raise argparse.ArgumentTypeError(
        "use processes, threads, synchronous, local or a scheduler address (tcp://HOST:8786)"
    )


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a whole number of at least 1")
    return number


def rate_text(done: int, total: int, first_done: int, seconds: float) -> str:
    """The progress line's figures: archives done of the total, archives per second since the
    first report (`first_done` archives were done then, `seconds` ago) and the time left at
    that rate."""
    figures = f"{done:,}/{total:,} archives"
    if seconds <= 0 or done <= first_done:
        return figures
    rate = (done - first_done) / seconds
    left = round((total - done) / rate)
    return f"{figures}, {rate:,.0f} archives/s, ETA {left // 3600}:{left // 60 % 60:02d}:{left % 60:02d}"


class _Bar:
    """A rich progress bar on stderr when it is a terminal: archives done, their rate, an ETA."""

    def __init__(self) -> None:
        self._bar: Any = None
        self._task: Any = None
        self._first = (0, 0.0)

    def __call__(self, done: int, total: int) -> None:
        if not shows_progress():
            return
        import time

        now = time.monotonic()
        if self._bar is None:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn

            self._bar = Progress(
                TextColumn("cataloging"),
                BarColumn(),
                TextColumn("{task.fields[figures]}"),
                transient=True,
                console=Console(stderr=True),
            )
            self._bar.start()
            self._task = self._bar.add_task("cataloging", total=total, figures="")
            self._first = (done, now)
        figures = rate_text(done, total, self._first[0], now - self._first[1])
        self._bar.update(self._task, completed=done, total=total, figures=figures)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    catalog = add_command(
        commands,
        "catalog",
        run_catalog,
        "Catalog collections of archives into Parquet (Dask).",
        "Catalog every archive under PATHS (folders, files or fsspec URLs) into a Parquet dataset.\n\n"
        "OUT gets seven tables, each a folder of Parquet parts: members (every member, nested packs\n"
        "included, with size, offset, compression, type and content hash), archives (every pack: size,\n"
        "mtime, format, header fields as JSON, check() status with its errors and warnings), textures\n"
        "(every RFG peg texture and Quake image: name, width, height, format, mips, flags), strings\n"
        "(every string of RFG .rfglocatext files and J2ME text packs: member, language, hash, index,\n"
        "string), models (every JOE, MDL and BSP model: vertices, triangles, frames, and the VDrift\n"
        "track or car it belongs to with its texture), zone_objects (every object of RFG zones and\n"
        "layers: zone, class, handle, name, x, y, z) and errors (every file or member that could not\n"
        "be read: path, stage, message). A broken file\n"
        "never stops the scan. Exit 0 once the catalog is written, also when it holds errors rows.",
    )
    catalog.add_argument("paths", nargs="+", metavar="PATHS")
    catalog.add_argument(
        "-o", "--output", dest="out", required=True, metavar="OUT", help="catalog folder to write (Parquet datasets)"
    )
    catalog.add_argument(
        "--hash",
        dest="hash_algorithm",
        choices=HASHES,
        default="sha256",
        help="content hash of every member (xxh3: 128-bit, fastest; none: skip hashing; default: %(default)s)",
    )
    catalog.add_argument(
        "--nested",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="descend into packs inside packs, recognised by their signature (default: on)",
    )
    catalog.add_argument(
        "--guess",
        choices=("strict", "loose", "off"),
        default="strict",
        help="files without a signature or a known extension (J2ME packs, JOE models): strict takes only "
        "convincing, unambiguous structural fits; loose takes any consistent fit; off takes none "
        "(default: %(default)s)",
    )
    catalog.add_argument(
        "--verify",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="record each pack's check() errors and warnings (default: on)",
    )
    catalog.add_argument(
        "--scheduler",
        type=_scheduler,
        default="processes",
        help="scheduler: processes (a pool of --workers processes), Dask's threads or synchronous, local (a "
        "dask.distributed cluster of --workers "
        "processes started for the run), or the address of a dask.distributed scheduler (tcp://HOST:8786; every "
        "worker must see PATHS and OUT under the same names) (default: %(default)s)",
    )
    catalog.add_argument(
        "--workers", type=_positive, default=None, help="workers of a local scheduler (default: one per CPU)"
    )
    catalog.add_argument(
        "--resume",
        action="store_true",
        help="continue OUT: skip files already cataloged with the same size and mtime; changed files are "
        "cataloged again",
    )
    catalog.add_argument("--overwrite", action="store_true", help="replace an existing catalog in OUT")
    catalog.add_argument(
        "--split-size",
        type=_positive,
        default=256,
        metavar="MIB",
        help="archives larger than this many MiB are cataloged in member ranges by several workers "
        "(default: %(default)s)",
    )

    diff = add_command(
        commands,
        "catalog-diff",
        run_catalog_diff,
        "Compare two catalogs.",
        "Compare two catalogs: members added, removed, changed (by hash) and moved between packs.\n\n"
        "Members are matched by pack path (relative to the folder cataloged) and name, so two\n"
        "releases installed in different folders compare. Exit 0 when equal, 3 when different,\n"
        "1 when a catalog cannot be read or the two used different --hash choices.",
    )
    diff.add_argument("old", metavar="OLD")
    diff.add_argument("new", metavar="NEW")
    add_json_option(diff, "the differences as one JSON object")


def run_catalog(args: argparse.Namespace) -> None:
    paths, out, resume = args.paths, args.out, args.resume
    hash_algorithm, nested, guess, verify = args.hash_algorithm, args.nested, args.guess, args.verify
    scheduler, workers, overwrite, split_size = args.scheduler, args.workers, args.overwrite, args.split_size
    import os

    for path in paths:
        if "://" not in path:
            try:  # (followed: a dangling link is as missing as a name with nothing behind it)
                os.stat(path)
            except OSError as exc:
                raise cannot_read(path, exc) from None
    library = _library()
    options = library.ScanOptions(hash_algorithm=hash_algorithm, nested=nested, guess=guess, verify=verify)
    bar = _Bar()
    try:
        built = library.build_catalog(
            list(paths),
            out,
            options=options,
            scheduler=scheduler,
            workers=workers,
            resume=resume,
            overwrite=overwrite,
            split_bytes=split_size << 20,
            progress=bar,
        )
    finally:
        bar.close()
    resumed = f", {built.resumed} already cataloged" if resume else ""
    contents = "".join(
        f", {count(number, noun)}"
        for number, noun in (
            (built.textures, "texture"),
            (built.strings, "string"),
            (built.models, "model"),
            (built.zone_objects, "zone object"),
        )
        if number
    )
    not_archives = f"{built.skipped} file{' not an archive' if built.skipped == 1 else 's not archives'}"
    summary(
        f"cataloged {count(built.archives, 'archive')}, {count(built.members, 'member')}{contents}, "
        f"{count(built.errors, 'error')} ({not_archives}{resumed}) into {out}"
    )


def run_catalog_diff(args: argparse.Namespace) -> int:
    old, new, as_json = args.old, args.new, args.as_json
    result = _library().diff_catalogs(old, new)
    if as_json:
        from .json_output import print_json

        print_json({"equal": result.equal, **result.to_dict()})
    else:
        for member in result.added:
            write_text(f"+ {member['pack']}/{member['name']}\n")
        for member in result.removed:
            write_text(f"- {member['pack']}/{member['name']}\n")
        for member in result.changed:
            write_text(f"M {member['pack']}/{member['name']} ({member['old_size']} -> {member['new_size']} bytes)\n")
        for member in result.moved:
            write_text(f"> {member['from']}/{member['name']} -> {member['to']}/{member['name']}\n")
        for pack in result.repacked:
            fields = f"; header {', '.join(pack['fields'])}" if pack["fields"] else ""
            write_text(
                f"! {pack['pack']}: bytes changed outside its members ({pack['old_size']} -> "
                f"{pack['new_size']} bytes{fields})\n"
            )
        if result.equal:
            summary("the catalogs hold the same members")
    return EXIT_OK if result.equal else EXIT_DIFFERENT
