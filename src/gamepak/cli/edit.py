"""`gamepak add`, `rm`, `mv`, `update` and `compact`: thin over `gamepak.edit`."""

from __future__ import annotations

import os

import click

from ..errors import GamepakError
from ..ops.edit import Editor
from .app import Settings, _folder_members, reader_format_option
from .editing import add_members, finish, plan_update

_EDIT_NOTES = """
PAK and JoePack packs are changed in place where possible: new data is appended and the
directory switched over last, so an interrupted edit leaves the old pack or the new one. The
space old data took stays in the file until `gamepak compact` (or --compact). Other formats
(RFG packfiles, J2ME packs) are rebuilt into a temporary file that replaces the pack. Either
way the pack keeps its own layout choices (alignment, flags, compression, name field size).
Names may run into nested packs: OUTER.str2_pc/INNER.
"""


def _remember_asm(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None:
        ctx.meta["gamepak.asm"] = value


def _edit_options(function: click.decorators.FC) -> click.decorators.FC:
    function = click.option(
        "--asm",
        type=click.Path(dir_okay=False, exists=True),
        expose_value=False,
        callback=_remember_asm,
        help="RFG: a separate .asm_pc file whose entries for the changed .str2_pc containers are "
        "updated too (a .asm_pc inside ARCHIVE is always updated). Same as the writer option asm.",
    )(function)
    function = click.option("--dry-run", is_flag=True, help="Print the planned changes and write nothing.")(function)
    function = click.option(
        "--compact", is_flag=True, help="Rebuild the whole pack, dropping space earlier in-place edits left."
    )(function)
    function = reader_format_option(function)
    return function


def _editor(ctx: click.Context, archive: str, compact: bool) -> Editor:
    settings: Settings = ctx.find_object(Settings) or Settings(None)
    asm = ctx.meta.get("gamepak.asm")
    options = {"asm": asm} if asm is not None else None
    return Editor(archive, settings.format_name, compact=compact, options=options)


def _finish(editor: Editor, dry_run: bool, list_changes: bool = False) -> None:
    """Commit (or with --dry-run only show the plan) and print the summary line."""
    finish(editor, dry_run, click.echo, list_changes)


@click.command("add", epilog=_EDIT_NOTES)
@click.argument("archive", type=click.Path(dir_okay=False))
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--name", help="Member name for a single FILE (default: its file name).")
@click.option("--replace", is_flag=True, help="Replace members that already exist instead of refusing.")
@_edit_options
@click.pass_context
def add_command(
    ctx: click.Context,
    archive: str,
    files: tuple[str, ...],
    name: str | None,
    replace: bool,
    compact: bool,
    dry_run: bool,
) -> None:
    """Add FILES to ARCHIVE. A file is stored under its own name (or --name); a folder adds
    every file under it, named by its path relative to the folder."""
    if name is not None and (len(files) != 1 or os.path.isdir(files[0])):
        raise click.UsageError("--name needs exactly one FILE that is not a folder")
    members: list[tuple[str, str]] = []
    for item in files:
        if os.path.isdir(item):
            members.extend(_folder_members(item))
        else:
            members.append((name or os.path.basename(item), item))
    editor = _editor(ctx, archive, compact)
    add_members(editor, members, replace)
    _finish(editor, dry_run)


@click.command("rm", epilog=_EDIT_NOTES)
@click.argument("archive", type=click.Path(dir_okay=False))
@click.argument("members", nargs=-1, required=True)
@_edit_options
@click.pass_context
def rm_command(ctx: click.Context, archive: str, members: tuple[str, ...], compact: bool, dry_run: bool) -> None:
    """Remove MEMBERS from ARCHIVE: exact names (nested ones too) or glob patterns (`*`, `?`,
    `[...]`) matched against the top pack's names. A name or pattern that matches nothing is
    an error, and nothing is written."""
    editor = _editor(ctx, archive, compact)
    with _aborting(editor):
        for pattern in members:
            if pattern in editor:
                editor.remove(pattern)
                continue
            if not any(character in pattern for character in "*?["):
                raise GamepakError(f"{archive}: no member named {pattern!r}")
            import fnmatch

            matched = [member for member in editor.namelist() if fnmatch.fnmatchcase(member, pattern)]
            if not matched:
                raise GamepakError(f"{archive}: no member matches {pattern!r}")
            for member in matched:
                editor.remove(member)
    _finish(editor, dry_run)


@click.command("mv", epilog=_EDIT_NOTES)
@click.argument("archive", type=click.Path(dir_okay=False))
@click.argument("old")
@click.argument("new")
@_edit_options
@click.pass_context
def mv_command(ctx: click.Context, archive: str, old: str, new: str, compact: bool, dry_run: bool) -> None:
    """Rename member OLD of ARCHIVE to NEW (inside the same pack; NEW must not exist)."""
    editor = _editor(ctx, archive, compact)
    with _aborting(editor):
        editor.rename(old, new)
    _finish(editor, dry_run)


@click.command("update", epilog=_EDIT_NOTES)
@click.argument("archive", type=click.Path(dir_okay=False))
@click.argument("folder", type=click.Path(exists=True, file_okay=False))
@click.option("--delete", is_flag=True, help="Also remove members that have no file in FOLDER.")
@_edit_options
@click.pass_context
def update_command(
    ctx: click.Context,
    archive: str,
    folder: str,
    delete: bool,
    compact: bool,
    dry_run: bool,
) -> None:
    """Make ARCHIVE match FOLDER, a folder it was extracted to: files whose size or bytes
    differ replace their member, new files are added, and with --delete members without a
    file are removed. Prints each change, then a summary. `.gamepak-manifest.json`, gamepak's
    temporary files, symlinked folders and ARCHIVE itself are left out, as `create` does; a
    symlink to a file outside FOLDER is refused."""
    editor = _editor(ctx, archive, compact)
    plan_update(editor, folder, delete, lambda message: click.echo(f"gamepak: {message}", err=True))
    _finish(editor, dry_run, list_changes=True)


@click.command("compact")
@click.argument("archive", type=click.Path(dir_okay=False))
@reader_format_option
@click.pass_context
def compact_command(ctx: click.Context, archive: str) -> None:
    """Rebuild ARCHIVE without the space in-place edits left (old data, old directories),
    keeping its members, their order and its layout choices. Written to a temporary file that
    replaces ARCHIVE."""
    editor = _editor(ctx, archive, True)
    click.echo(editor.commit().summary())


class _aborting:
    """Drops the editor's changes when planning them fails."""

    def __init__(self, editor: Editor) -> None:
        self.editor = editor

    def __enter__(self) -> Editor:
        return self.editor

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is not None:
            self.editor.abort()
