"""The `gamepak` command line: thin over the library. Only this package prints or exits."""

from __future__ import annotations

import importlib
import os
import sys
import time
import warnings
from collections.abc import Iterator
from typing import Any

import click

from ..core.archive import Archive, Entry, Problem
from ..core.registry import FORMATS, get_format
from ..errors import GamepakError, InvalidOptionError, MemberNotFoundError, NotAnArchiveError
from ..version import __version__

FORMAT_NAMES = [spec.name for spec in FORMATS]
# Subcommand groups that live in their own modules, imported only when used.
LAZY_GROUPS = {
    "text": ("gamepak.cli.text", "text", "Export and import the strings of J2ME text packs."),
    "model": ("gamepak.cli.model", "model", "Inspect, convert and preview JOE models."),
    "convert": ("gamepak.cli.convert", "convert_command", "Convert a pack to another format."),
    "diff": ("gamepak.cli.convert", "diff_command", "Compare two packs or folders member by member."),
    "add": ("gamepak.cli.edit", "add_command", "Add files to a pack (in place where the format allows)."),
    "rm": ("gamepak.cli.edit", "rm_command", "Remove members (names or globs) from a pack."),
    "mv": ("gamepak.cli.edit", "mv_command", "Rename a member of a pack."),
    "update": ("gamepak.cli.edit", "update_command", "Sync an extracted folder back into its pack."),
    "compact": ("gamepak.cli.edit", "compact_command", "Rebuild a pack without the space edits left."),
    "mount": ("gamepak.cli.mount", "mount_command", "Mount packs read-only as folders (FUSE)."),
    "unmount": ("gamepak.cli.mount", "unmount_command", "Unmount a folder mounted with 'gamepak mount'."),
    "catalog": ("gamepak.cli.catalog", "catalog_command", "Catalog collections of archives into Parquet (Dask)."),
    "catalog-diff": ("gamepak.cli.catalog", "catalog_diff_command", "Compare two catalogs."),
}
# Above this many members or bytes an extraction shows a progress bar (on a terminal).
PROGRESS_MEMBERS = 500
PROGRESS_BYTES = 64 << 20


class LazyGroup(click.Group):
    """A group whose listed sub-groups are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *(n for n in LAZY_GROUPS if _module_exists(n))])

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        command = super().get_command(ctx, name)
        if command is None and name in LAZY_GROUPS and _module_exists(name):
            module_name, attribute, _ = LAZY_GROUPS[name]
            command = getattr(importlib.import_module(module_name), attribute)
        return command


def _module_exists(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(LAZY_GROUPS[name][0]) is not None


class Settings:
    """What the global options set."""

    def __init__(self, format_name: str | None) -> None:
        self.format_name = format_name


def note(message: str) -> None:
    """A line for the user on stderr."""
    click.echo(f"gamepak: {message}", err=True)


def _set_reader_format(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None:
        settings = ctx.find_object(Settings)
        if settings is not None:
            settings.format_name = value


# `gamepak ls --format X` works as well as `gamepak --format X ls`.
reader_format_option = click.option(
    "--format",
    type=click.Choice(FORMAT_NAMES, case_sensitive=False),
    expose_value=False,
    callback=_set_reader_format,
    help="Read ARCHIVE as this format instead of detecting it.",
)


# `-O KEY=VALUE`, repeatable: options of the format being written (see `gamepak formats`).
writer_options_option = click.option(
    "-O",
    "--option",
    "options",
    multiple=True,
    metavar="KEY=VALUE",
    help="A writer option of the format written, e.g. -O align=4 (see 'gamepak formats'). Repeatable.",
)


def open_for(ctx: click.Context, path: str) -> Archive:
    """Open `path` with the global --format, or the detected format (saying which when it was
    only a structural guess)."""
    from .listing import open_noting

    settings: Settings = ctx.find_object(Settings) or Settings(None)
    return open_noting(path, settings.format_name, note)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gamepak")
@click.option(
    "--format",
    "format_name",
    type=click.Choice(FORMAT_NAMES, case_sensitive=False),
    help="Read the input as this format instead of detecting it.",
)
@click.pass_context
def cli(ctx: click.Context, format_name: str | None) -> None:
    """Open, list, extract, create, edit, verify, convert, mount and catalog game asset packs.

    Formats: Quake/Quake II PAK (pak), VDrift JoePack (jpk), Red Faction Guerrilla packfiles
    (vpp) and their .asm_pc tables (asm), Gameloft J2ME packs (j2me-offsets, j2me-end-offsets,
    j2me-table, j2me-sized), zip and tar, and VDrift JOE models (joe, see `gamepak model`).
    `gamepak formats` lists them with their writer options; `gamepak COMMAND --help` documents
    each command.

    Exit codes: 0 success, 1 bad or unreadable input (one line on stderr naming the file and
    the offset), 2 usage error. `diff` and `catalog-diff` exit 1 when their inputs differ.
    """
    ctx.obj = Settings(format_name)


def _split_nested(ctx: click.Context, archive: Archive, path: str) -> tuple[Archive, Entry]:
    from ..core.nested import resolve

    return resolve(archive, path)


@cli.command("ls")
@click.argument("archive", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of member objects.")
@click.option("-l", "--long", "long_format", is_flag=True, help="Show size, stored size and offset.")
@click.option("-r", "--recursive", is_flag=True, help="Also list members of nested archives as OUTER/INNER.")
@reader_format_option
@click.pass_context
def ls_command(ctx: click.Context, archive: str, as_json: bool, long_format: bool, recursive: bool) -> None:
    """List the members of ARCHIVE, one name per line, in archive order."""
    from .listing import ls_text

    with open_for(ctx, archive) as opened:
        text = ls_text(opened, as_json=as_json, long_format=long_format, recursive=recursive)
    if text:
        _write_text(text)


def _write_text(text: str) -> None:
    sys.stdout.buffer.write(text.encode("utf-8", "backslashreplace"))
    sys.stdout.buffer.flush()


@cli.command("info")
@click.argument("archive", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the information as a JSON object.")
@reader_format_option
@click.pass_context
def info_command(ctx: click.Context, archive: str, as_json: bool) -> None:
    """Show ARCHIVE's format, member count, sizes and header fields."""
    from .listing import info_details, info_text

    with open_for(ctx, archive) as opened:
        details = info_details(archive, opened)
    _write_text(info_text(details, as_json))


def _matches(name: str, pattern: str) -> bool:
    """Whether a member name matches a glob; a leading './' (common in PAKs) is optional on
    either side, so 'maps/*' matches './maps/e1m1.bsp'."""
    import fnmatch  # imports `re`: only when patterns are given

    if fnmatch.fnmatchcase(name, pattern):
        return True
    bare_name, bare_pattern = name.removeprefix("./"), pattern.removeprefix("./")
    return (bare_name, bare_pattern) != (name, pattern) and fnmatch.fnmatchcase(bare_name, bare_pattern)


def _select(archive: Archive, patterns: tuple[str, ...]) -> Iterator[tuple[Archive, list[Entry], str]]:
    """(archive, entries, folder prefix) groups that the patterns name; nested paths included."""
    if not patterns:
        yield archive, archive.infolist(), ""
        return
    entries = archive.infolist()
    for pattern in patterns:
        matched = [e for e in entries if _matches(e.name, pattern)]
        if not matched and pattern in archive:
            matched = [archive.getinfo(pattern)]  # the format's own lookup (e.g. ignoring case)
        if matched:
            yield archive, matched, ""
            continue
        # OUTER/INNER: a member (or glob) inside a nested archive.
        from ..core.nested import nested_splits

        for prefix, inner, rest in nested_splits(archive, pattern):
            for inner_archive, inner_entries, inner_prefix in _select(inner, (rest,)):
                yield inner_archive, inner_entries, f"{prefix}/{inner_prefix}"
            break
        else:
            raise MemberNotFoundError(pattern, archive.filename)


@cli.command("extract")
@click.argument("archive", type=click.Path(dir_okay=False))
@click.argument("members", nargs=-1)
@click.option(
    "-o",
    "--output",
    "output",
    default=".",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Folder to extract into (created if missing).",
)
@click.option("--overwrite", is_flag=True, help="Replace files that already exist.")
@click.option(
    "--manifest",
    is_flag=True,
    help="Also write .gamepak-manifest.json so that 'gamepak create' rebuilds the archive byte for byte.",
)
@click.option(
    "--windows-names",
    is_flag=True,
    default=None,
    help="Refuse names Windows cannot hold (CON, 'a:b', trailing dots...) and names that differ only in case "
    "(on by itself on Windows and macOS).",
)
@reader_format_option
@click.pass_context
def extract_command(
    ctx: click.Context,
    archive: str,
    members: tuple[str, ...],
    output: str,
    overwrite: bool,
    manifest: bool,
    windows_names: bool | None,
) -> None:
    """Extract ARCHIVE's members (all, or those named by MEMBERS: names, globs or
    OUTER/INNER paths into nested archives) safely into a folder.

    Names that would land outside the folder (.., absolute paths, drive letters, symlinks) are
    refused before anything is written; existing files are kept unless --overwrite is given.
    A copy of a duplicated name that the game would not load is written as NAME.dupN.
    """
    if manifest and members:
        raise click.UsageError("--manifest describes the whole archive: give no MEMBERS with it")
    with open_for(ctx, archive) as opened:
        count = 0
        for holder, entries, prefix in _select(opened, members):
            destination = os.path.join(output, prefix) if prefix else output
            with _progress(len(entries), sum(e.size for e in entries), "extracting") as advance:
                written = holder.extractall(
                    destination,
                    entries,
                    overwrite=overwrite,
                    manifest=manifest and holder is opened,
                    progress=advance,
                    windows_names=windows_names or None,
                )
            count += len(written)
    note(f"extracted {count} member{'s' if count != 1 else ''} to {output}")


class _progress:
    """A rich progress bar on stderr for long extractions and creations, when stderr is a
    terminal; yields the per-item callback (None when there is no bar)."""

    def __init__(self, count: int, total_bytes: int, label: str) -> None:
        self.total = count
        self.label = label
        big = count >= PROGRESS_MEMBERS or total_bytes >= PROGRESS_BYTES
        self.enabled = big and sys.stderr.isatty()
        self._bar: Any = None

    def __enter__(self) -> Any:
        if not self.enabled:
            return None
        from rich.progress import Progress

        # No refresh thread: extraction forks worker processes only when no other thread runs.
        self._bar = Progress(transient=True, console=_stderr_console(), auto_refresh=False)
        self._bar.start()
        task = self._bar.add_task(self.label, total=self.total)
        next_refresh = 0.0

        def advance(item: object) -> None:
            nonlocal next_refresh
            self._bar.advance(task)
            now = time.monotonic()
            if now >= next_refresh:
                self._bar.refresh()
                next_refresh = now + 0.1

        return advance

    def __exit__(self, *exc_info: object) -> None:
        if self._bar is not None:
            self._bar.stop()


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)


@cli.command("cat")
@click.argument("archive", type=click.Path(dir_okay=False))
@click.argument("member")
@reader_format_option
@click.pass_context
def cat_command(ctx: click.Context, archive: str, member: str) -> None:
    """Write MEMBER's bytes (or OUTER/INNER's, in a nested archive) to stdout."""
    with open_for(ctx, archive) as opened:
        holder, entry = _split_nested(ctx, opened, member)
        with holder.open(entry) as stream:
            out = sys.stdout.buffer
            while chunk := stream.read(1 << 20):
                out.write(chunk)
            out.flush()


def _parse_option(text: str) -> tuple[str, Any]:
    key, separator, value = text.partition("=")
    if not separator or not key:
        raise click.BadParameter(f"{text!r} is not KEY=VALUE", param_hint="-O/--option")
    lowered = value.lower()
    parsed: Any
    if lowered in ("none", "null", ""):
        parsed = None
    elif lowered in ("true", "yes"):
        parsed = True
    elif lowered in ("false", "no"):
        parsed = False
    else:
        try:
            parsed = int(value, 0)
        except ValueError:
            parsed = value
    return key.replace("-", "_"), parsed


def _folder_members(folder: str) -> list[tuple[str, str]]:
    """(name, path) for the files of `folder` as `create` packs them (gamepak.ops.inputs.scan_folder:
    sorted, symlinks leaving the folder refused), saying what was skipped."""
    from ..ops.inputs import scan_folder

    scan = scan_folder(folder)
    for line in scan.skipped:
        note(f"skipped {os.path.join(folder, '')}{line}")
    return scan.members


def parse_options(texts: tuple[str, ...]) -> dict[str, Any]:
    """-O KEY=VALUE options as a dict: numbers as ints, yes/no as booleans, empty as None."""
    return dict(_parse_option(text) for text in texts)


@cli.command("create")
@click.argument("out", type=click.Path(dir_okay=False))
@click.argument("inputs", nargs=-1, required=True, metavar="INPUTS...")
@click.option(
    "--format",
    "format_name",
    type=click.Choice(FORMAT_NAMES, case_sensitive=False),
    help="Format to write (default: from OUT's extension, else the manifest's).",
)
@writer_options_option
@click.option("--name", "member_name", metavar="NAME", help="Store a single file INPUT under NAME.")
@click.option("--follow", is_flag=True, help="Follow symlinked folders, and symlinks that leave an INPUT folder.")
@click.option("--allow-duplicates", is_flag=True, help="Keep two members of one name (formats that can hold them).")
@click.option(
    "--asm",
    "asm_table",
    type=click.Path(dir_okay=False, exists=True),
    help="RFG: a separate .asm_pc file whose entries for the .str2_pc containers written are brought "
    "up to date too (a .asm_pc among the members always is). Same as -O asm=FILE.",
)
@click.option("--overwrite", is_flag=True, help="Replace OUT if it exists.")
@click.pass_context
def create_command(
    ctx: click.Context,
    out: str,
    inputs: tuple[str, ...],
    format_name: str | None,
    options: tuple[str, ...],
    member_name: str | None,
    follow: bool,
    allow_duplicates: bool,
    asm_table: str | None,
    overwrite: bool,
) -> None:
    """Create OUT from INPUTS: files (stored under their own names, or SRC=NAME) and folders
    (their files stored with names relative to the folder, in sorted order; FOLDER=PREFIX
    stores them under PREFIX/).

    A folder extracted with --manifest is rebuilt exactly: member order and layout come from
    the manifest, and an unchanged folder gives back the original archive byte for byte. Files
    added to it are appended and members whose file is gone are left out (both are listed);
    'gamepak update ARCHIVE FOLDER' edits the original pack instead. The format comes from
    --format or OUT's extension; a manifest of another format gives member order and names only.

    Symlinks: a file link inside the folder is packed, one leaving it is refused, symlinked
    folders are skipped (--follow packs both). OUT itself and gamepak's temporary files are
    never packed. A model format (joe) is refused: use 'gamepak model import'.
    """
    from ..core.opening import create
    from ..ops.inputs import plan_create, split_input

    settings: Settings = ctx.find_object(Settings) or Settings(None)
    for item in inputs:
        try:
            split_input(item)
        except GamepakError as exc:
            raise click.BadParameter(str(exc), param_hint="INPUTS") from None
    if member_name is not None and (len(inputs) != 1 or os.path.isdir(inputs[0]) or not os.path.lexists(inputs[0])):
        raise click.UsageError("--name names a single file INPUT; for several, write each as SRC=NAME")
    try:
        plan = plan_create(
            out,
            inputs,
            format=format_name or settings.format_name,
            options=parse_options(options),
            follow=follow,
            name=member_name,
        )
    except NotAnArchiveError as exc:
        raise click.UsageError(str(exc)) from None
    for line in plan.notes:
        note(line)
    if asm_table is not None:
        plan.options["asm"] = asm_table
    writer = create(
        out,
        plan.format_name,
        overwrite=overwrite,
        allow_duplicates=allow_duplicates or plan.allow_duplicates,
        **plan.options,
    )
    sizes = [os.path.getsize(path) for _, path in plan.members]
    refused = []
    for name, path in plan.members:
        try:
            writer.add(name, path)
        except GamepakError as exc:
            refused.append(str(exc))
    if refused:
        writer.abort()
        more = f"\n  ... and {len(refused) - 20} more" if len(refused) > 20 else ""
        raise GamepakError(
            f"{out}: {len(refused)} member{'s' if len(refused) != 1 else ''} cannot go into a {writer.format_name} "
            "pack; nothing was written:\n  " + "\n  ".join(refused[:20]) + more
        )
    with writer, _progress(len(sizes), sum(sizes), "writing") as advance:
        writer.progress = advance
    count = len(plan.members)
    note(f"wrote {out} ({count} member{'s' if count != 1 else ''}, {writer.format_name})")


@cli.command("detect")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object per file.")
def detect_command(files: tuple[str, ...], as_json: bool) -> None:
    """Say which formats each FILE fits, most plausible first, with a confidence.
    Exits 1 if some file fits no format."""
    from ..core.opening import detect

    results: list[dict[str, Any]] = []
    unknown = False
    for path in files:
        try:
            found = detect(path)
        except GamepakError as exc:  # one unreadable file does not stop the others
            note(f"error: {exc}")
            unknown = True
            results.append({"file": path, "formats": [], "error": str(exc)})
            continue
        unknown |= not found
        results.append(
            {
                "file": path,
                "formats": [{"format": d.format, "confidence": d.confidence, "signature": d.has_magic} for d in found],
            }
        )
    if as_json:
        import json

        _write_text(json.dumps(results, indent=1) + "\n")
    else:
        for result in results:
            if "error" in result:
                continue
            fits = ", ".join(f"{f['format']} ({f['confidence']:.2f})" for f in result["formats"])
            _write_text(f"{result['file']}: {fits or 'unknown'}\n")
    if unknown:
        raise SystemExit(1)


def _count(number: int, noun: str) -> str:
    """'1 member', '2 members'."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _model_check(ctx: click.Context, path: str) -> tuple[list[Problem], int] | None:
    """(problems, face count) when `path` is a model (by --format, or by what it is), else None.
    A model that cannot be read raises its ModelError (one line, exit 1)."""
    settings: Settings = ctx.find_object(Settings) or Settings(None)
    if settings.format_name is not None:
        if get_format(settings.format_name).kind != "model":
            return None
    else:
        from ..models import format_for_file

        try:
            if format_for_file(path) != "joe":
                return None
        except GamepakError:
            return None  # unreadable: opening it as an archive says why
    from ..models import load

    # The reader refuses counts, sizes and indices that do not fit (errors); what it only notes
    # (NaN or infinite values, which VDrift reads as they are) are warnings.
    mesh = load(path, "joe")
    return [Problem(f"{path}: {issue}", severity="warning") for issue in mesh.summary()["issues"]], mesh.face_count


@cli.command("verify")
@click.argument("archive", type=click.Path(dir_okay=False))
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too, not only on errors.")
@click.option(
    "--json", "as_json", is_flag=True, help="Print a JSON object: ok, member count, errors and warnings with offsets."
)
@reader_format_option
@click.pass_context
def verify_command(ctx: click.Context, archive: str, strict: bool, as_json: bool) -> None:
    """Check ARCHIVE's structure and every member.

    Errors (data that cannot be read, sizes or offsets that make a member's bytes wrong, hashes
    the game checks) exit 1. Warnings (a field filled in another tool's way, nothing lost) are
    printed and exit 0, or 1 with --strict. A JOE model is checked as a model: counts, sizes and
    indices that do not fit are errors, NaN or infinite values warnings.
    """
    model = _model_check(ctx, archive)
    if model is not None:
        problems, member_count = model
        filename = archive
        what = "face"
    else:
        with open_for(ctx, archive) as opened:
            problems = opened.check()
            member_count = len(opened)
            filename = opened.filename
        what = "member"
    errors = [problem for problem in problems if problem.severity == "error"]
    warnings_found = [problem for problem in problems if problem.severity != "error"]
    failed = bool(errors) or (strict and bool(warnings_found))
    if as_json:
        import json

        report = {
            "file": archive,
            "ok": not failed,
            f"{what}s": member_count,
            "errors": [problem.to_dict() for problem in errors],
            "warnings": [problem.to_dict() for problem in warnings_found],
        }
        _write_text(json.dumps(report, indent=1) + "\n")
    else:
        for problem in problems:
            # Problems that come from errors already name the file.
            text = problem.message if problem.message.startswith(filename) else f"{archive}: {problem.message}"
            click.echo(f"{problem.severity}: {text}", err=True)
        if not errors:
            summary = _count(member_count, what)
            if warnings_found:
                summary += f", {_count(len(warnings_found), 'warning')}"
            click.echo(f"{archive}: OK ({summary})")
    if failed:
        raise SystemExit(1)


@cli.command("formats")
def formats_command() -> None:
    """List the formats, their extensions and their writer options."""
    for spec in FORMATS:
        try:
            defaults = spec.writer_class().option_defaults if spec.kind == "archive" else {}
        except (ImportError, AttributeError):
            defaults = {}
        options = ", ".join(f"{k}={v}" for k, v in defaults.items()) or "none"
        extensions = " ".join(spec.extensions) or "(no extension)"
        click.echo(f"{spec.name:18} {spec.description}  [{extensions}]  options: {options}")


def _show_warning(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
    note(f"warning: {message}")


def run(arguments: list[str]) -> int:
    """Run the command line; GamepakError -> one line and exit 1, usage -> exit 2."""
    warnings.showwarning = _show_warning
    try:
        # Without standalone mode, click returns the code a command passed to `ctx.exit(code)`.
        returned = cli.main(args=arguments, prog_name="gamepak", standalone_mode=False)
    except click.exceptions.Abort:
        note("aborted")
        return 1
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except (InvalidOptionError, NotAnArchiveError) as exc:
        note(f"error: {exc}")
        return 2
    except GamepakError as exc:
        note(f"error: {exc}")
        return 1
    except BrokenPipeError:
        # The reader went away (| head): not an error of ours.
        sys.stderr.close()
        return 0
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        note(f"error: {where}{exc.strerror or exc}")
        return 1
    except KeyboardInterrupt:
        note("interrupted")
        return 130
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    except Exception as exc:  # a bug of ours: one line, the traceback only on request
        if os.environ.get("GAMEPAK_DEBUG"):
            raise
        note(f"internal error: {type(exc).__name__}: {exc} (set GAMEPAK_DEBUG=1 for a traceback)")
        return 1
    return returned if isinstance(returned, int) else 0
