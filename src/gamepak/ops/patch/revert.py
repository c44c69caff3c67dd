"""`revert`: take back what `apply` did to a target (the applied patches' member-level undo,
run through the same plan and write as an apply, and originals given back whole).

Above `apply` and `undo`: it plans and writes the undo patches the record keeps, inside an undo
session, and gives files their originals (`undo.restore`).
"""

from __future__ import annotations

import contextlib
import os

from .apply import execute, plan
from .container import Operation, Patch, PatchError
from .undo.record import Record
from .undo.restore import forget_changed, recover, remove_stale_scratch, restore_original, still_valid, warn_line
from .undo.session import Session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def _file_of(target: str, operation: Operation) -> str:
    """The file of `target` an undo operation changes."""
    return target if os.path.isfile(target) else os.path.join(target, *operation.file.split("/"))


def _refuse_carried(target: str, record: Record, item: dict[str, Any], leaving: list[dict[str, Any]]) -> None:
    """A patch whose edits went into a later patch's change (stacked modinfo.xml mods) comes
    back only once that later one has: until then its edits are part of the later change."""
    carriers = set(item.get("carried_by") or [])
    gone = {id(other) for other in leaving}
    still = [
        other["name"]
        for application in record.applications
        for other in application["patches"]
        if other is not item and id(other) not in gone and other.get("name") in carriers
    ]
    if still:
        raise PatchError(
            f"{target}: {item.get('name')}'s edits were applied inside {', '.join(dict.fromkeys(still))}'s change "
            "of the same members; take that back first (or revert everything)"
        )


def _matches(patch_entry: dict[str, Any], wanted: str) -> bool:
    return wanted in (patch_entry.get("name"), patch_entry.get("path"))


def _wanted_name(record: Record, wanted: str) -> str:
    if not os.path.exists(wanted):
        return wanted
    # A patch file (by its name or file name), or a mod folder or zip (by its file name: the
    # undo record keeps it as the patch's path).
    names = {os.path.basename(os.path.normpath(wanted))}
    if os.path.isfile(wanted):
        with contextlib.suppress(PatchError), Patch.open(wanted) as opened:
            names.add(opened.name)
    return next(
        (
            name
            for name in names
            for application in record.applications
            for item in application["patches"]
            if _matches(item, name)
        ),
        wanted,
    )


def revert(
    target: str | os.PathLike[str],
    patch: str | os.PathLike[str] | None = None,
    *,
    warn: Callable[[str], None] | None = None,
) -> list[str]:
    """Take back what `apply` did to `target`: everything (latest first), or only `patch` (a
    patch file or its name), keeping the others. Every file no applied patch touches any more
    gets its original bytes when nothing else changed it since; `warn` (default: `warnings`)
    hears of the files that another program changed, which are reverted member by member.
    Returns the names of the patches taken back."""
    warn = warn or warn_line
    target = os.fspath(target)
    record = Record(target)
    remove_stale_scratch(target)
    if not record.exists:
        raise PatchError(f"{target}: no patches applied by gamepak (no undo record at {record.folder})")
    recover(record)
    if not record.applications:
        # A revert or an apply killed: finished or rolled back; nothing is left to take back.
        record.sweep()
        return []
    wanted = None if patch is None else _wanted_name(record, os.fspath(patch))
    leaving = [
        item
        for application in reversed(record.applications)
        for item in reversed(application["patches"])
        if wanted is None or _matches(item, wanted)
    ]
    if not leaving:
        raise PatchError(f"{target}: no applied patch named {wanted!r}")
    for item in leaving:
        _refuse_carried(target, record, item, leaving if wanted is None else [item])
    still_touched = record.touched(skip=leaving)
    freed = {key for item in leaving for key in item.get("files", [])} - still_touched
    # Every file this revert may write: one changed by another program since keeps no
    # original (the chain of ways back would skip that program's change).
    forget_changed(record, {key for item in leaving for key in item.get("files", [])}, warn, "taken back")
    restoring = {key for key in freed if key in record.files and still_valid(record, key)}

    session = Session(record, "revert", None)
    try:
        for item in leaving:
            with Patch.open(record.kept(item.get("undo", ""))) as undo:
                undo.operations = [op for op in undo.operations if record.key(_file_of(target, op)) not in restoring]
                result = plan(target, [undo])
                if not result.ok:
                    raise PatchError(
                        f"{target}: cannot take back {item.get('name')}, nothing changed:\n  "
                        + "\n  ".join(result.problems())
                    )
                if result.to_apply:
                    execute(target, result.to_apply, session=session)
        gone = {id(item) for item in leaving}

        def change(data: dict[str, Any]) -> None:
            for application in data["applications"]:
                application["patches"] = [item for item in application["patches"] if id(item) not in gone]
            data["applications"] = [application for application in data["applications"] if application["patches"]]
            for key in list(data["files"]):
                if key in restoring:
                    data["files"][key]["restore"] = True
                elif key not in still_touched:
                    del data["files"][key]  # taken back member by member: no original to keep

        session.commit(change)
    except BaseException:
        if record.data.get("session"):
            session.rollback()
        raise
    for key in sorted(restoring):
        restore_original(record, key)
    record.sweep()
    return [str(item.get("name")) for item in leaving]
