"""The session every write to the target runs in: each file's state before kept in the record
before its first byte changes, the way back to its original extended when the session commits,
and every file given its state before when it rolls back (in the process, or after a kill)."""

from __future__ import annotations

import contextlib
import os

from .record import Record, identity, missing_folders, read_journal, remove_empty

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any


class Session:
    """One run that writes files of the target: an apply, or a revert's member-by-member part.

    `prepare(keys)` keeps each file's state before (its old inode, linked into the record) and
    names it in the record as this session's, before anything is written; `writing(path)` is
    around each file's write (its in-place edits journaled to disk as they go); `commit(change)`
    makes the run part of the record in one write (each file's way back to its original
    extended, `change` applied to the record); `rollback()` gives every file its state before."""

    def __init__(self, record: Record, kind: str, number: int | None = None) -> None:
        self.record = record
        self.data: dict[str, Any] = {"kind": kind, "number": number, "undo": [], "files": {}}
        self._fresh: dict[str, str] = {}  # file key -> a journal named in the record, not yet used
        self.items: list[dict[str, Any]] = []  # an apply's patches, for the record once committed

    @property
    def steps(self) -> dict[str, dict[str, Any]]:
        return self.data["files"]  # type: ignore[no-any-return]

    def _name(self) -> str:
        return self.record.fresh_name(self.data["kind"])

    def prepare(self, paths: Iterable[str], undo: Iterable[str] = ()) -> None:
        """Keep the state before of each file in `paths` not yet kept; then the record names the
        session (a kill from here on is rolled back by the next command)."""
        self.data["undo"] += list(undo)
        os.makedirs(self.record.folder, exist_ok=True)
        new = [path for path in paths if self.record.key(path) not in self.steps]
        if not new and not undo and self.record.data.get("session") is self.data:
            return
        for path in new:
            key = self.record.key(path)
            before = identity(path)
            step: dict[str, Any] = {
                "before": before,
                "link": None,
                "journals": [],
                "folders": [self.record.key(folder) for folder in missing_folders(path, self.record.target)],
            }
            if before is not None:
                name = self._name()
                _keep_old_file(path, self.record.kept(name))
                step["link"] = name
            # The journal of its first write is named now: that write needs no record write.
            self._fresh[key] = self._name()
            step["journals"].append(self._fresh[key])
            self.steps[key] = step
        self.record.data["session"] = self.data
        self.record.save()

    @contextlib.contextmanager
    def writing(self, path: str) -> Iterator[None]:
        """Around one file's write: its in-place edits are journaled into the record, on disk
        before each overwrite."""
        from ....core.inplace import journaling

        key = self.record.key(path)
        step = self.steps[key]
        name = self._fresh.pop(key, None)
        if name is None:
            name = self._name()
            step["journals"].append(name)
            self.record.save()
        kept = self.record.kept(name)
        fd = os.open(kept, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            with journaling(path, spill=fd):
                yield
        finally:
            os.close(fd)

    def commit(self, change: Callable[[dict[str, Any]], None]) -> None:
        """The session's writes become part of the record: each file's way back to its original
        is extended (or begun, by an apply) and `change(record.data)` is applied, in one write."""
        record = self.record
        for key, step in self.steps.items():
            _extend(record, key, step, self.data["kind"] == "apply")
        change(record.data)
        record.data["session"] = None
        record.save()
        record.sweep()

    def rollback(self) -> None:
        """Give every file the session touched its state before, then forget the session."""
        roll_back(self.record)


def _keep_old_file(path: str, kept: str) -> None:
    """A hard link of `path`'s inode at `kept` (a copy with its times where the file system has
    no hard links): the file as it is now, whatever replaces it later."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(kept)
    try:
        os.link(path, kept)
    except OSError:
        import shutil

        shutil.copy2(path, kept)
        with open(kept, "rb+") as handle:
            os.fsync(handle.fileno())


def _extend(record: Record, key: str, step: dict[str, Any], may_begin: bool) -> None:
    """Extend the way back to `key`'s original with what one committed session kept of it."""
    path = record.path(key)
    after = identity(path)
    before = step.get("before")
    entry = record.files.get(key)
    if after == before:
        return  # not changed by the session
    replaced = before is None or after is None or after[0] != before[0]
    journals = [name for name in step.get("journals", []) if read_journal(record.kept(name)) is not None]
    complete = all(
        read_journal(record.kept(name)) is not None or os.path.getsize(record.kept(name)) == 0
        for name in step.get("journals", [])
        if os.path.exists(record.kept(name))
    )
    if entry is None:
        if not may_begin:
            return  # a revert of a file the record keeps no original of
        if before is None:
            original: dict[str, Any] | None = {"absent": True}
        elif replaced:
            original = {"link": step["link"], "journals": []}
        else:
            original = {"link": None, "journals": journals} if complete else None
        record.files[key] = {"original": original, "identity": after, "folders": step.get("folders", [])}
        return
    entry["identity"] = after
    entry["folders"] = list(dict.fromkeys([*step.get("folders", []), *entry.get("folders", [])]))
    original = entry.get("original")
    if original is None or original.get("absent") or original.get("link"):
        return  # the original is whole already: nothing newer is needed
    if replaced and step.get("link"):
        original["link"] = step["link"]  # the journals kept so far apply to this file
    elif replaced:
        entry["original"] = None  # (a file the chain cannot reach)
    elif complete:
        original["journals"] += journals
    else:
        entry["original"] = None  # an in-place edit overwrote more than its journal holds


def roll_back(record: Record) -> None:
    """Give every file of the record's session its state before (each step is idempotent, so
    a kill during a rollback is finished by the next one), then drop the session."""
    from ....core.atomic import remove_stale_temporaries

    session = record.data.get("session")
    if not session:
        return
    for key, step in reversed(list((session.get("files") or {}).items())):
        path = record.path(key)
        now = identity(path)
        before = step.get("before")
        if before is None:
            if now is not None:
                os.unlink(path)
        elif now is not None and now[0] == before[0]:
            if now != before:  # changed in place: its journals, latest first
                for name in reversed(step.get("journals", [])):
                    journal = read_journal(record.kept(name))
                    if journal is not None:
                        journal.restore(path)
        elif step.get("link") and os.path.exists(record.kept(step["link"])):
            os.replace(record.kept(step["link"]), path)
        remove_empty(record.path(folder) for folder in step.get("folders", []))
        remove_stale_temporaries(os.path.dirname(os.path.abspath(path)), force=True)
    record.data["session"] = None
    record.save()
    record.sweep()
