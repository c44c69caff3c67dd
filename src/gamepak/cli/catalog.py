"""`gamepak catalog` and `gamepak catalog-diff`: many archives into a Parquet dataset.

Dask and pyarrow are imported when a command runs, never for `--help` or other commands.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from ..errors import GamepakError
from .app import _stderr_console, note

HASHES = ("sha256", "blake2b", "xxh3", "none")
INSTALL_HINT = "pip install 'gamepak[catalog]'"


def _library() -> Any:
    """gamepak.catalog, or a one-line error naming the extra to install. pyarrow is only looked
    for here: the client of a run does not need to import it."""
    import importlib.util

    for needed in ("dask", "pyarrow"):
        if importlib.util.find_spec(needed) is None:
            raise GamepakError(f"gamepak catalog needs {needed}: {INSTALL_HINT}")
    from .. import catalog

    return catalog


def _check_scheduler(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if value in ("processes", "threads", "synchronous") or value.startswith(
        ("tcp://", "tls://", "ucx://", "inproc://")
    ):
        return value
    raise click.BadParameter("use processes, threads, synchronous or a scheduler address (tcp://HOST:8786)")


class _Bar:
    """A rich progress bar on stderr when it is a terminal."""

    def __init__(self) -> None:
        self._bar: Any = None
        self._task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if not sys.stderr.isatty():
            return
        if self._bar is None:
            from rich.progress import Progress

            self._bar = Progress(transient=True, console=_stderr_console())
            self._bar.start()
            self._task = self._bar.add_task("cataloging", total=total)
        self._bar.update(self._task, completed=done)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


@click.command("catalog")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "-o",
    "--output",
    "out",
    required=True,
    metavar="OUT",
    type=click.Path(file_okay=False),
    help="Catalog folder to write (a Parquet dataset per table).",
)
@click.option(
    "--hash",
    "hash_algorithm",
    type=click.Choice(HASHES),
    default="sha256",
    show_default=True,
    help="Content hash of every member (xxh3: 128-bit, fastest; none: skip hashing).",
)
@click.option(
    "--nested/--no-nested",
    default=True,
    show_default=True,
    help="Descend into packs inside packs (recognised by their signature).",
)
@click.option(
    "--guess",
    type=click.Choice(["strict", "loose", "off"]),
    default="strict",
    show_default=True,
    help="Files without a signature or a known extension (J2ME packs, JOE models): strict takes only convincing, "
    "unambiguous structural fits; loose takes any consistent fit; off takes none.",
)
@click.option(
    "--verify/--no-verify", default=True, show_default=True, help="Record each pack's check() errors and warnings."
)
@click.option(
    "--scheduler",
    default="processes",
    show_default=True,
    callback=_check_scheduler,
    help="Dask scheduler: processes, threads, synchronous, or the address of a dask.distributed scheduler "
    "(tcp://HOST:8786; "
    "every worker must see PATHS and OUT under the same names).",
)
@click.option(
    "--workers", type=click.IntRange(1), default=None, help="Workers of a local scheduler [default: one per CPU]."
)
@click.option(
    "--resume",
    is_flag=True,
    help="Continue OUT: skip files already cataloged with the same size and mtime; changed files are cataloged again.",
)
@click.option("--overwrite", is_flag=True, help="Replace an existing catalog in OUT.")
@click.option(
    "--split-size",
    type=click.IntRange(1),
    default=256,
    show_default=True,
    metavar="MIB",
    help="Archives larger than this many MiB are cataloged in member ranges by several workers.",
)
def catalog_command(
    paths: tuple[str, ...],
    out: str,
    hash_algorithm: str,
    nested: bool,
    guess: str,
    verify: bool,
    scheduler: str,
    workers: int | None,
    resume: bool,
    overwrite: bool,
    split_size: int,
) -> None:
    """Catalog every archive under PATHS (folders, files or fsspec URLs) into a Parquet dataset.

    OUT gets three tables, each a folder of Parquet parts: members (every member, nested packs
    included, with size, offset, compression, type and content hash), archives (every pack: size,
    mtime, format, header fields as JSON, check() status with its errors and warnings) and
    errors (every file or member that could not be read: path, stage, message). A broken file
    never stops the scan. Exit 0 once the catalog is written, also when it holds errors rows.
    """
    library = _library()
    options = library.ScanOptions(hash_algorithm=hash_algorithm, nested=nested, guess=guess, verify=verify)
    bar = _Bar()
    try:
        summary = library.build_catalog(
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
    resumed = f", {summary.resumed} already cataloged" if resume else ""
    note(
        f"cataloged {summary.archives} archives, {summary.members} members, {summary.errors} errors "
        f"({summary.skipped} files not archives{resumed}) into {out}"
    )


@click.command("catalog-diff")
@click.argument("old", type=click.Path(exists=True, file_okay=False))
@click.argument("new", type=click.Path(exists=True, file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the differences as one JSON object.")
def catalog_diff_command(old: str, new: str, as_json: bool) -> None:
    """Compare two catalogs: members added, removed, changed (by hash) and moved between packs.

    Members are matched by pack path (relative to the folder cataloged) and name, so two
    releases installed in different folders compare. Exit 0 when equal, 1 when different,
    2 on trouble (a missing catalog, different --hash choices), as diff(1) does.
    """
    try:
        result = _library().diff_catalogs(old, new)
    except GamepakError as exc:
        note(f"error: {exc}")
        raise SystemExit(2) from None
    if as_json:
        click.echo(json.dumps({"equal": result.equal, **result.to_dict()}, indent=1))
    else:
        for member in result.added:
            click.echo(f"+ {member['pack']}/{member['name']}")
        for member in result.removed:
            click.echo(f"- {member['pack']}/{member['name']}")
        for member in result.changed:
            click.echo(f"M {member['pack']}/{member['name']} ({member['old_size']} -> {member['new_size']} bytes)")
        for member in result.moved:
            click.echo(f"> {member['from']}/{member['name']} -> {member['to']}/{member['name']}")
        if result.equal:
            note("the catalogs hold the same members")
    raise SystemExit(0 if result.equal else 1)
