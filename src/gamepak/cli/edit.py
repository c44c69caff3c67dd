"""`gamepak add`, `rm`, `mv`, `update` and `compact`: thin over `gamepak.edit`."""

from __future__ import annotations

import argparse
import os

from .common import (
    add_command,
    add_format_option,
    count,
    counting_bar,
    ends_quickly,
    folder_members,
    note,
    require_input,
    summary,
    windows_path,
    write_text,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..ops.edit import Editor

EDIT_NOTES = """
PAK and JoePack packs are changed in place where possible: new data is appended and the
directory switched over last, so an interrupted edit leaves the old pack or the new one. The
space old data took stays in the file until `gamepak compact` (or --compact). Other formats
(RFG packfiles, J2ME packs) are rebuilt into a temporary file that replaces the pack. Either
way the pack keeps its own layout choices (alignment, flags, compression, name field size).
Names may run into nested packs: OUTER.str2_pc/INNER.
"""


def _edit_command(
    commands: argparse._SubParsersAction,  # type: ignore[type-arg]
    name: str,
    handler: object,
    summary: str,
    description: str,
) -> argparse.ArgumentParser:
    """An edit command: ARCHIVE first, and the options every edit command takes."""
    parser = add_command(commands, name, handler, summary, description + "\n" + EDIT_NOTES)  # type: ignore[arg-type]
    parser.add_argument("archive", metavar="ARCHIVE")
    parser.add_argument("--dry-run", action="store_true", help="print the planned changes and write nothing")
    parser.add_argument(
        "--compact", action="store_true", help="rebuild the whole pack, dropping space earlier in-place edits left"
    )
    parser.add_argument(
        "--asm",
        metavar="FILE",
        help="RFG: a separate .asm_pc file whose entries for the changed .str2_pc containers are updated too "
        "(a .asm_pc inside ARCHIVE always is); same as the writer option asm",
    )
    add_format_option(parser)
    return parser


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    add = _edit_command(
        commands,
        "add",
        run_add,
        "Add files to a pack (in place where the format allows).",
        "Add FILES to ARCHIVE. A file is stored under its own name (or --name); a folder adds\n"
        "every file under it, named by its path relative to the folder.",
    )
    add.add_argument("files", nargs="+", metavar="FILES")
    add.add_argument("--name", help="member name for a single FILE (default: its file name)")
    add.add_argument("--replace", action="store_true", help="replace members that already exist instead of refusing")

    rm = _edit_command(
        commands,
        "rm",
        run_rm,
        "Remove members (names or globs) from a pack.",
        "Remove MEMBERS from ARCHIVE: exact names (nested ones too) or glob patterns (`*`, `?`,\n"
        "`[...]`) matched against the top pack's names. A name or pattern that matches nothing is\n"
        "an error, and nothing is written.",
    )
    rm.add_argument("members", nargs="+", metavar="MEMBERS")

    mv = _edit_command(
        commands,
        "mv",
        run_mv,
        "Rename a member of a pack.",
        "Rename member OLD of ARCHIVE to NEW (inside the same pack; NEW must not exist).",
    )
    mv.add_argument("old", metavar="OLD")
    mv.add_argument("new", metavar="NEW")

    update = _edit_command(
        commands,
        "update",
        run_update,
        "Sync an extracted folder back into its pack.",
        "Make ARCHIVE match FOLDER, a folder it was extracted to: files whose size or bytes\n"
        "differ replace their member, new files are added, and with --delete members without a\n"
        "file are removed. Prints each change, then a summary. `.gamepak-manifest.json`, gamepak's\n"
        "temporary files, symlinked folders and ARCHIVE itself are left out, as `create` does; a\n"
        "symlink to a file outside FOLDER is refused.",
    )
    update.add_argument("folder", metavar="FOLDER")
    update.add_argument("--delete", action="store_true", help="also remove members that have no file in FOLDER")

    compact = add_command(
        commands,
        "compact",
        run_compact,
        "Rebuild a pack without the space edits left.",
        "Rebuild ARCHIVE without the space in-place edits left (old data, old directories),\n"
        "keeping its members, their order and its layout choices. Written to a temporary file that\n"
        "replaces ARCHIVE.",
    )
    compact.add_argument("archive", metavar="ARCHIVE")
    compact.add_argument("--dry-run", action="store_true", help="say what would be done and write nothing")
    add_format_option(compact)


def _editor(args: argparse.Namespace, compact: bool) -> Editor:
    """The command's editor; a dry run's only plans (no lock, no clean-up: it reads, as `ls`)."""
    from ..errors import GamepakError
    from ..ops.edit import Editor

    require_input(args.archive)
    asm = getattr(args, "asm", None)
    if asm is not None and not os.path.isfile(asm):
        raise GamepakError(f"{asm}: no such file (--asm)")
    options = {"asm": asm} if asm else None
    return Editor(args.archive, args.format_name, compact=compact, options=options, plan_only=args.dry_run)


def _finish(editor: Editor, dry_run: bool, list_changes: bool = False) -> None:
    """Commit (or with --dry-run only show the plan) and print the summary line."""
    if dry_run:
        planned = editor.plan()
        try:
            editor.check()  # what the commit refuses before writing, refused now
        finally:
            editor.abort()
        write_text("".join(f"{line}\n" for line in planned))
        summary(f"{editor.path}: dry run, {count(len(planned), 'change')} planned, nothing written", stdout=True)
        ends_quickly()  # a dry run opened nothing to write (no lock, no temporary)
        return
    if list_changes:
        write_text("".join(f"{line}\n" for line in editor.plan()))
    with counting_bar("writing", ticking=True):
        result = editor.commit()
    summary(result.summary(), stdout=True)


class _aborting:
    """Drops the editor's changes when planning them fails."""

    def __init__(self, editor: Editor) -> None:
        self.editor = editor

    def __enter__(self) -> Editor:
        return self.editor

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is not None:
            self.editor.abort()


def run_add(args: argparse.Namespace) -> None:
    files = args.files
    if args.name is not None and (len(files) != 1 or os.path.isdir(files[0])):
        from ..errors import UsageError  # rarely raised: made on first use

        raise UsageError("--name needs exactly one FILE that is not a folder")
    members: list[tuple[str, str]] = []
    for item in files:
        require_input(item)
        if os.path.isdir(item):
            members.extend(folder_members(item, exclude=(args.archive,)))  # never the pack itself
        else:
            members.append((args.name or os.path.basename(item), item))
    editor = _editor(args, args.compact)
    with _aborting(editor):
        for member_name, path in members:
            editor.add(member_name, path, replace=args.replace)
    _finish(editor, args.dry_run)


def run_rm(args: argparse.Namespace) -> None:
    from ..errors import GamepakError

    editor = _editor(args, args.compact)
    with _aborting(editor):
        for typed in args.members:
            pattern = windows_path(editor, typed)
            if pattern in editor:
                editor.remove(pattern)
                continue
            if not any(character in pattern for character in "*?["):
                raise GamepakError(f"{args.archive}: no member named {pattern!r}")
            matched = editor.glob(pattern)
            if not matched:
                raise GamepakError(f"{args.archive}: no member matches {pattern!r}")
            for member in matched:
                editor.remove(member)
    _finish(editor, args.dry_run)


def run_mv(args: argparse.Namespace) -> None:
    editor = _editor(args, args.compact)
    with _aborting(editor):
        editor.rename(windows_path(editor, args.old), args.new.replace("\\", "/"))
    _finish(editor, args.dry_run)


def run_update(args: argparse.Namespace) -> None:
    from ..errors import GamepakError
    from ..ops.sync import folder_changes

    if not os.path.isdir(args.folder):
        raise GamepakError(f"{args.folder}: no such folder")
    editor = _editor(args, args.compact)
    with counting_bar("comparing", ticking=True), _aborting(editor):
        folder_changes(editor, args.folder, delete=args.delete)
    for skipped in editor.skipped:
        note(f"skipped {skipped}")
    _finish(editor, args.dry_run, list_changes=True)


def run_compact(args: argparse.Namespace) -> None:
    editor = _editor(args, True)
    if args.dry_run:
        editor.abort()
        summary(f"{args.archive}: dry run, would rebuild it without the space edits left; nothing written", stdout=True)
        ends_quickly()
        return
    with counting_bar("compacting", ticking=True):
        result = editor.commit()
    summary(result.summary(), stdout=True)
