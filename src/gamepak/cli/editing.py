"""`add` and `update` without click: the click commands in `cli/edit.py` call these, and so does
the quick path of `gamepak.cli.main`, which answers the plain forms (`gamepak add PACK FILE...
[--name NAME] [--replace] [--compact] [--dry-run]` with files, not folders, and `gamepak update
PACK FOLDER [--delete] [--compact] [--dry-run]`) without importing click: an in-place edit of a
huge pack takes a few milliseconds, and click alone takes longer to import than that."""

from __future__ import annotations

import os

from .listing import write_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..ops.edit import Editor

# The plain forms the quick path answers: command -> its flags (as click spells them).
_FLAGS = {
    "add": {"--replace": "replace", "--compact": "compact", "--dry-run": "dry_run"},
    "update": {"--delete": "delete", "--compact": "compact", "--dry-run": "dry_run"},
}


def add_members(editor: Editor, members: list[tuple[str, str]], replace: bool) -> None:
    """Plan adding each (name, file) pair; the editor is aborted when one is refused."""
    try:
        for member_name, path in members:
            editor.add(member_name, path, replace=replace)
    except BaseException:
        editor.abort()
        raise


def plan_update(editor: Editor, folder: str, delete: bool, warn: Callable[[str], object]) -> None:
    """Plan what makes the pack match `folder` (see `editor.folder_changes`), reporting skipped
    files through `warn`; the editor is aborted when planning fails."""
    from ..ops.edit import folder_changes

    try:
        folder_changes(editor, folder, delete=delete)
    except BaseException:
        editor.abort()
        raise
    for skipped in editor.skipped:
        warn(f"skipped {skipped}")


def finish(editor: Editor, dry_run: bool, echo: Callable[[str], object], list_changes: bool = False) -> None:
    """Commit (or with --dry-run only show the plan) and print the summary line."""
    if dry_run:
        for line in editor.plan():
            echo(line)
        editor.abort()
        echo(f"{editor.path}: dry run, {len(editor.plan())} change(s) planned, nothing written")
        return
    if list_changes:
        for line in editor.plan():
            echo(line)
    result = editor.commit()
    echo(result.summary())


def _parse(command: str, rest: list[str]) -> tuple[list[str], dict[str, Any]] | None:
    """(the paths, the options chosen) of a plain form, or None for anything else."""
    chosen: dict[str, Any] = {}
    paths: list[str] = []
    arguments = iter(rest)
    for argument in arguments:
        if argument in _FLAGS[command]:
            chosen[_FLAGS[command][argument]] = True
        elif command == "add" and argument == "--name" and "name" not in chosen:
            value = next(arguments, None)
            if not value or value.startswith("-"):
                return None
            chosen["name"] = value
        elif argument.startswith("-") or not argument:
            return None
        else:
            paths.append(argument)
    if len(paths) < 2 or os.path.isdir(paths[0]):
        return None
    if command == "add":
        # Folders, missing files and --name with several files: click's checks and messages.
        if not all(os.path.isfile(path) for path in paths[1:]) or ("name" in chosen and len(paths) != 2):
            return None
    elif len(paths) != 2 or not os.path.isdir(paths[1]):
        return None
    return paths, chosen


def run_quick(arguments: list[str]) -> int | None:
    """Answer a plain `add` or `update` without click; None when the arguments need click."""
    command, *rest = arguments
    parsed = _parse(command, rest)
    if parsed is None:
        return None
    (archive, *others), chosen = parsed
    import warnings

    from .listing import _note, _show_warning

    warnings.showwarning = _show_warning

    def echo(line: str) -> None:
        write_text(line + "\n")

    try:
        from ..ops.edit import Editor

        editor = Editor(archive, compact=chosen.get("compact", False))
        dry_run = chosen.get("dry_run", False)
        if command == "add":
            name = chosen.get("name")
            members = [(name or os.path.basename(path), path) for path in others]
            add_members(editor, members, chosen.get("replace", False))
            finish(editor, dry_run, echo)
        else:
            plan_update(editor, others[0], chosen.get("delete", False), _note)
            finish(editor, dry_run, echo, list_changes=True)
        return 0
    except BaseException as exc:
        return _exit_code(exc)


def _exit_code(exc: BaseException) -> int:
    """What `app.run` prints and returns for an exception."""
    from ..errors import InvalidOptionError, NotAnArchiveError
    from .listing import _exit_code as listing_exit_code
    from .listing import _note

    if isinstance(exc, (InvalidOptionError, NotAnArchiveError)):
        _note(f"error: {exc}")
        return 2
    if isinstance(exc, SystemExit):
        return exc.code if isinstance(exc.code, int) else 1
    return listing_exit_code(exc)
