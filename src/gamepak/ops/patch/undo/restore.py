"""Taking back: what a kill left rolled back or finished (`recover`), files given their original
bytes, and `revert` (the applied patches' member-level undo, and originals given back whole)."""

from __future__ import annotations

import contextlib
import os

from ..container import Operation, Patch, PatchError
from .record import Record, identity, read_journal, remove_empty
from .session import Session, roll_back

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any


def warn_line(line: str) -> None:
    import warnings

    warnings.warn(line, stacklevel=3)


def _restore(record: Record, key: str) -> None:
    """Give `key` its original bytes (entry marked `restore`): idempotent step by step."""
    entry = record.files[key]
    path = record.path(key)
    original = entry.get("original") or {}
    if original.get("absent"):
        if identity(path) is not None:
            os.unlink(path)
    elif original.get("link"):
        kept = record.kept(original["link"])
        if "restoring" not in entry:
            while original["journals"]:
                journal = read_journal(record.kept(original["journals"][-1]))
                if journal is not None:
                    journal.restore(kept)
                original["journals"].pop()
                record.save()
            entry["restoring"] = identity(kept)
            record.save()
        if os.path.exists(kept):
            os.replace(kept, path)
    else:
        while original.get("journals"):
            name = original["journals"][-1]
            entry["applying"] = name
            record.save()
            journal = read_journal(record.kept(name))
            if journal is not None:
                journal.restore(path)
            original["journals"].pop()
            entry.pop("applying")
            entry["identity"] = identity(path)
            record.save()
    remove_empty(record.path(folder) for folder in entry.get("folders", []))
    del record.files[key]
    record.save()


def _still_valid(record: Record, key: str) -> bool:
    """Whether a file is still what gamepak last left (its original is reachable from it)."""
    entry = record.files[key]
    if entry.get("restore") and ("restoring" in entry or "applying" in entry):
        return True  # a restore under way changed it
    return entry.get("original") is not None and identity(record.path(key)) == entry.get("identity")


def forget_changed(record: Record, keys: Iterable[str], warn: Callable[[str], None], doing: str) -> None:
    """Files another program changed since gamepak wrote them: their original cannot be
    reached from what they hold now; say so, and keep only what the member-level undo can do."""
    for key in keys:
        entry = record.files.get(key)
        if entry is None or entry.get("original") is None or _still_valid(record, key):
            continue
        entry["original"] = None
        warn(
            f"{record.path(key)}: changed since gamepak wrote it (by another program?); {doing} member by "
            "member: its original bytes cannot be given back exactly"
        )


def recover(record: Record) -> None:
    """What a kill left: roll back an unfinished session, finish originals being restored, and
    remove what the record no longer names."""
    _remove_stale_scratch(record.target)
    if not record.exists:
        return
    roll_back(record)
    touched = record.touched()
    for key in list(record.files):
        entry = record.files[key]
        if not entry.get("restore") and key in touched:
            continue
        # Marked for restoring by a revert that was killed (or, in a damaged record, no longer
        # needed by any patch): given its original when still what gamepak left.
        if _still_valid(record, key):
            _restore(record, key)
        else:
            del record.files[key]
            record.save()
    record.sweep()


def _remove_stale_scratch(target: str) -> None:
    """The scratch folders killed applies and reverts of `target` left beside it
    (`scratch.scratch_parent`), whether or not they had begun writing (a kill before the record
    exists leaves one too)."""
    from ....core.atomic import remove_stale_temporaries
    from ..scratch import scratch_parent

    remove_stale_temporaries(scratch_parent(target), force=True)


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
    from ..apply import execute, plan

    warn = warn or warn_line
    target = os.fspath(target)
    record = Record(target)
    _remove_stale_scratch(target)
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
    restoring = {key for key in freed if key in record.files and _still_valid(record, key)}

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
        _restore(record, key)
    record.sweep()
    return [str(item.get("name")) for item in leaving]
