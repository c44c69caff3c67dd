"""`apply`: plan every patch against the target, record how to undo, then write each pack once."""

from __future__ import annotations

import os

from .apply import Plan, execute, plan
from .container import Patch, PatchError
from .undo import record_application

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


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
    opened = [Patch.open(path) for path in patches]
    try:
        result = plan(target, opened, later_wins=later_wins)
        if not result.ok:
            raise PatchError(f"{os.fspath(target)}: not applied, nothing written:\n  " + "\n  ".join(result.problems()))
        if dry_run or not result.to_apply:
            return result
        with record_application(os.fspath(target), result) as (steps, keeper):
            execute(os.fspath(target), steps, keeper)
        return result
    finally:
        for patch in opened:
            patch.close()
