"""`check` and `apply`: plan every patch against the target, record how to undo, then write each pack once."""

from __future__ import annotations

import os

from .apply import Plan, execute, plan
from .container import Patch, PatchError
from .undo import record_application

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


def open_patches(target: str | os.PathLike[str], patches: Sequence[str | os.PathLike[str]]) -> list[Patch]:
    """Patch files, and SyncFaction mod folders (read as patches for `target`)."""
    from .syncfaction import is_mod_folder, loose_archive_patch

    opened: list[Patch] = []
    try:
        for path in patches:
            path = os.fspath(path)
            if os.path.isdir(path) and is_mod_folder(path):
                opened.append(loose_archive_patch(path, os.fspath(target)))
            else:
                opened.append(Patch.open(path))
    except BaseException:
        for patch in opened:
            patch.close()
        raise
    return opened


def check(
    target: str | os.PathLike[str], patches: Sequence[str | os.PathLike[str]], *, later_wins: bool = False
) -> Plan:
    """Whether `patches` (patch files or SyncFaction mod folders) apply cleanly to `target`;
    writes nothing."""
    opened = open_patches(target, patches)
    try:
        return plan(target, opened, later_wins=later_wins)
    finally:
        for patch in opened:
            patch.close()


def apply(
    target: str | os.PathLike[str],
    patches: Sequence[str | os.PathLike[str]],
    *,
    later_wins: bool = False,
    dry_run: bool = False,
) -> Plan:
    """Apply patch files to `target` (a pack or a game folder) in one pass: every operation is
    checked first; a conflict or refusal raises `PatchError` listing them and writes nothing.
    An undo record is written beside the target before any pack changes (`revert`)."""
    from .apply import _Target

    opened = open_patches(target, patches)
    # One reader for the whole apply: each changed member is read and hashed once, for the
    # check, the undo record and the new bytes.
    state = _Target(os.fspath(target), keep=True)
    try:
        result = plan(target, opened, later_wins=later_wins, state=state)
        if not result.ok:
            raise PatchError(f"{os.fspath(target)}: not applied, nothing written:\n  " + "\n  ".join(result.problems()))
        if dry_run or not result.to_apply:
            return result
        with record_application(os.fspath(target), result, state) as (steps, keeper):
            execute(os.fspath(target), steps, keeper, state)
        return result
    finally:
        state.close()
        for patch in opened:
            patch.close()
