"""Taking back: what a kill left rolled back or finished (`recover`), and files given their
original bytes (`restore_original`; `patch.revert` uses both, with the applied patches'
member-level undo)."""

from __future__ import annotations

import os

from .record import Record, identity, read_journal, remove_empty
from .session import roll_back

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable


def warn_line(line: str) -> None:
    import warnings

    warnings.warn(line, stacklevel=3)


def restore_original(record: Record, key: str) -> None:
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


def still_valid(record: Record, key: str) -> bool:
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
        if entry is None or entry.get("original") is None or still_valid(record, key):
            continue
        entry["original"] = None
        warn(
            f"{record.path(key)}: changed since gamepak wrote it (by another program?); {doing} member by "
            "member: its original bytes cannot be given back exactly"
        )


def recover(record: Record) -> None:
    """What a kill left: roll back an unfinished session, finish originals being restored, and
    remove what the record no longer names."""
    remove_stale_scratch(record.target)
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
        if still_valid(record, key):
            restore_original(record, key)
        else:
            del record.files[key]
            record.save()
    record.sweep()


def remove_stale_scratch(target: str) -> None:
    """The scratch folders killed applies and reverts of `target` left beside it
    (`scratch.scratch_parent`), whether or not they had begun writing (a kill before the record
    exists leaves one too)."""
    from ....core.atomic import remove_stale_temporaries
    from ..scratch import scratch_parent

    remove_stale_temporaries(scratch_parent(target), force=True)
