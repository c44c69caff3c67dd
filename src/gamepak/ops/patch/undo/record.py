"""The undo record: what takes `apply` back, beside the target, and the sessions that write files.

    TARGET.gamepak-undo/
        record.json   {"format": "gamepak-undo", "version": 2,
                       "applications": [{"number": N, "patches": [{"name", "path",
                           "undo": "N-K.gpatch", "files": [FILE, ..], "carried_by": [..]}]}],
                       "files": {FILE: {"original": ORIGINAL | null, "identity": [inode, size,
                           mtime_ns] | null, "folders": [..], "restore": true (being restored)}},
                       "session": null | {"kind": "apply" | "revert", "number": N,
                           "undo": [..], "files": {FILE: STEP}},
                       "serial": N (the last kept file's number: names are never reused)}
        N-K.gpatch    the member-level reverse of patch K of application N (a patch file: the
                      replaced and removed members' old bytes, a delta where smaller, removals
                      of what it added, reverse renames)
        sN-*          a file's state before a session wrote it: a hard link of its old inode
                      (a copy where the file system has none), and journals of in-place edits
                      (`core.inplace.Journal`, written to disk before each overwrite)

    FILE        the file's path relative to the target ("" when the target is one pack)
    ORIGINAL    {"absent": true} (no such file before gamepak), or {"link": NAME | null,
                "journals": [NAME, ..]}: the link's file (else the target's) with the journals
                written back latest first is the file's original, byte for byte
    STEP        {"before": identity | null, "link": NAME | null, "journals": [..], "folders": [..]}

What it guarantees. Every write gamepak makes to a file of the target (an apply, a member-level
revert) runs in a `Session`: before the first byte of a file changes, its old inode is linked
into the record and the record names that link and the journal its in-place edits keep, so the
session can give the file its state before exactly: after a failure (a hash check, a full disk,
a delta that fails half-way) in the process, and after a kill -9 in the next `apply`, `check` or
`revert` (`recover`). A committed session extends each file's way back to its original (the
first gamepak write's link or journals), so the original stays reachable from whatever gamepak
last wrote. When no applied patch touches a file any more and the file is still what gamepak
last left (inode, size, modification time), `revert` gives it its original bytes directly
(sha256-equal) instead of replaying members; a file changed by another program since is
reverted member by member with a warning. Restoring is idempotent step by step (each journal
written back is struck from the record), so a kill during a revert is finished by the next
command. The record is written crash-safely (a new file renamed over the old) and removed only
when it holds nothing: no application, no original, no session.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os

from ..container import Operation, Patch, PatchError, check_relative, write_patch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any

    from ..apply import Plan, Step, _Target

RECORD_FORMAT = "gamepak-undo"
RECORD_VERSION = 2
MAX_RECORD_BYTES = 16 << 20


def record_folder(target: str) -> str:
    return os.path.abspath(target).rstrip(os.sep) + ".gamepak-undo"


def identity(path: str) -> list[int] | None:
    """What tells a file apart from the same file changed by anything else: its inode, size and
    modification time; None when there is no such file."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return [info.st_ino, info.st_size, info.st_mtime_ns]


def _warn(line: str) -> None:
    import warnings

    warnings.warn(line, stacklevel=3)


class Record:
    """record.json of one target, read (or empty), changed in memory and `save`d atomically."""

    def __init__(self, target: str) -> None:
        self.target = os.fspath(target)
        self.is_pack = os.path.isfile(self.target)
        self.folder = record_folder(self.target)
        self.data: dict[str, Any] = {
            "format": RECORD_FORMAT,
            "version": RECORD_VERSION,
            "applications": [],
            "files": {},
            "session": None,
        }
        path = os.path.join(self.folder, "record.json")
        if os.path.isfile(path):
            self.data = _parse(path)

    @property
    def exists(self) -> bool:
        return os.path.isdir(self.folder)

    @property
    def applications(self) -> list[dict[str, Any]]:
        return self.data["applications"]  # type: ignore[no-any-return]

    @property
    def files(self) -> dict[str, dict[str, Any]]:
        return self.data["files"]  # type: ignore[no-any-return]

    def path(self, key: str) -> str:
        """The file of the target a record key names."""
        if key == "":
            return self.target
        return os.path.join(self.target, *check_relative(key, f"{self.folder}: record").split("/"))

    def key(self, path: str) -> str:
        if self.is_pack:
            return ""
        return os.path.relpath(path, self.target).replace(os.sep, "/")

    def kept(self, name: str) -> str:
        """A file of the record folder (only its base name is taken from the record)."""
        return os.path.join(self.folder, os.path.basename(str(name)))

    def fresh_name(self, what: str) -> str:
        """A name for a new kept file that no file the record names, or holds, has: application
        numbers come back once taken back, so names count on in the record itself."""
        taken = self.referenced()
        while True:
            self.data["serial"] = serial = int(self.data.get("serial", 0)) + 1
            name = f"s{serial}-{what}"
            if name not in taken and not os.path.lexists(self.kept(name)):
                return name

    def next_number(self) -> int:
        return 1 + max((int(entry.get("number", 0)) for entry in self.applications), default=0)

    def save(self) -> None:
        from ....core.atomic import write_bytes

        os.makedirs(self.folder, exist_ok=True)
        write_bytes(os.path.join(self.folder, "record.json"), json.dumps(self.data, indent=1).encode(), overwrite=True)
        _sync_folder(self.folder)

    def referenced(self) -> set[str]:
        """The record folder's files the record names."""
        names = {"record.json"}
        for application in self.applications:
            names.update(str(item.get("undo")) for item in application.get("patches", []))
        for entry in self.files.values():
            original = entry.get("original") or {}
            names.update(str(name) for name in [original.get("link"), *original.get("journals", [])] if name)
        session = self.data.get("session") or {}
        names.update(str(name) for name in session.get("undo", []))
        for step in (session.get("files") or {}).values():
            names.update(str(name) for name in [step.get("link"), *step.get("journals", [])] if name)
        return {os.path.basename(name) for name in names}

    def sweep(self) -> None:
        """Remove the record folder's files the record no longer names (a kill between a record
        write and a removal leaves some), then the folder itself when the record holds nothing."""
        if not self.exists:
            return
        if not self.applications and not self.files and not self.data.get("session"):
            import shutil

            shutil.rmtree(self.folder, ignore_errors=True)
            return
        keep = self.referenced()
        for name in os.listdir(self.folder):
            if name not in keep and not name.startswith("."):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(self.folder, name))

    def touched(self, skip: Iterable[dict[str, Any]] = ()) -> set[str]:
        """The files the applied patches (but those in `skip`) change."""
        skipped = {id(item) for item in skip}
        return {
            key
            for application in self.applications
            for item in application.get("patches", [])
            if id(item) not in skipped
            for key in item.get("files", [])
        }


def _parse(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            record = json.loads(handle.read(MAX_RECORD_BYTES))
    except ValueError as exc:
        raise PatchError(f"{path}: not an undo record ({exc})") from None
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
        raise PatchError(f"{path}: not an undo record")
    if record.get("version") == 1:
        return _from_version_1(record)
    if record.get("version") != RECORD_VERSION:
        raise PatchError(f"{path}: undo record version {record.get('version')!r}; this gamepak reads {RECORD_VERSION}")
    if not isinstance(record.get("applications"), list) or not isinstance(record.get("files"), dict):
        raise PatchError(f"{path}: applications must be a list and files a mapping")
    return record


def _from_version_1(record: dict[str, Any]) -> dict[str, Any]:
    """An older gamepak's record: its patches revert member by member (it kept no per-file
    originals that a revert by name could use)."""
    applications = [
        {
            "number": application.get("number", 0),
            "patches": [dict(item, files=[]) for item in application.get("patches", [])],
        }
        for application in record.get("applications") or []
    ]
    return {"format": RECORD_FORMAT, "version": RECORD_VERSION, "applications": applications, "files": {}}


def _sync_folder(folder: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _missing_folders(path: str, stop: str) -> list[str]:
    """The folders above `path` (up to `stop`) that do not exist, deepest first."""
    missing = []
    folder = os.path.dirname(path)
    while folder and os.path.abspath(folder) != os.path.abspath(stop) and not os.path.isdir(folder):
        missing.append(folder)
        folder = os.path.dirname(folder)
    return missing


def _remove_empty(folders: Iterable[str]) -> None:
    for folder in folders:  # deepest first
        with contextlib.suppress(OSError):
            os.rmdir(folder)


def _read_journal(path: str) -> Any:
    """A journal kept in the record, or None when it is empty (nothing was overwritten) or
    unusable (it gave up, or is damaged)."""
    from ....core.inplace import Journal
    from ....errors import GamepakError

    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if not data:
        return None
    try:
        return Journal.from_bytes(data, path)
    except GamepakError:
        return None


# -- sessions ---------------------------------------------------------------------------------------


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
                "folders": [self.record.key(folder) for folder in _missing_folders(path, self.record.target)],
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
    journals = [name for name in step.get("journals", []) if _read_journal(record.kept(name)) is not None]
    complete = all(
        _read_journal(record.kept(name)) is not None or os.path.getsize(record.kept(name)) == 0
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
                    journal = _read_journal(record.kept(name))
                    if journal is not None:
                        journal.restore(path)
        elif step.get("link") and os.path.exists(record.kept(step["link"])):
            os.replace(record.kept(step["link"]), path)
        _remove_empty(record.path(folder) for folder in step.get("folders", []))
        remove_stale_temporaries(os.path.dirname(os.path.abspath(path)), force=True)
    record.data["session"] = None
    record.save()
    record.sweep()


# -- restoring originals -----------------------------------------------------------------------------


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
                journal = _read_journal(record.kept(original["journals"][-1]))
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
            journal = _read_journal(record.kept(name))
            if journal is not None:
                journal.restore(path)
            original["journals"].pop()
            entry.pop("applying")
            entry["identity"] = identity(path)
            record.save()
    _remove_empty(record.path(folder) for folder in entry.get("folders", []))
    del record.files[key]
    record.save()


def _still_valid(record: Record, key: str) -> bool:
    """Whether a file is still what gamepak last left (its original is reachable from it)."""
    entry = record.files[key]
    if entry.get("restore") and ("restoring" in entry or "applying" in entry):
        return True  # a restore under way changed it
    return entry.get("original") is not None and identity(record.path(key)) == entry.get("identity")


def _forget_changed(record: Record, keys: Iterable[str], warn: Callable[[str], None], doing: str) -> None:
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


# -- reverse operations, one function per kind -------------------------------------------------------


def _reverse_add(step: Step, state: _Target) -> tuple[Operation, bytes | None]:
    operation = step.operation
    return Operation("remove", operation.file, operation.member, base_sha256=operation.target_sha256), None


def _reverse_rename(step: Step, state: _Target) -> tuple[Operation, bytes | None]:
    operation = step.operation
    assert operation.new_member is not None
    reverse = Operation(
        "rename",
        operation.file,
        operation.new_member,
        new_member=operation.member,
        base_sha256=operation.target_sha256,
        target_sha256=operation.base_sha256,
    )
    return reverse, None


def _old_bytes(step: Step, state: _Target) -> bytes:
    # A change that carries earlier mods' edits goes back to the member as they left it; their
    # own (stacked) steps take it back from there.
    old = step.stacked_start if step.stacked_start is not None else state.member_bytes(step.operation)
    if old is None:
        raise PatchError(f"{state.target}: {step.operation.where}: vanished while planning")
    return old


def _reverse_remove(step: Step, state: _Target) -> tuple[Operation, bytes | None]:
    operation = step.operation
    old = _old_bytes(step, state)
    reverse = Operation(
        "add",
        operation.file,
        operation.member,
        target_sha256=hashlib.sha256(old).hexdigest(),
        size=len(old),
        blob="blobs/0",
        encoding="raw",
        position=state.member_index(operation),
    )
    return reverse, old


def _reverse_replace(step: Step, state: _Target) -> tuple[Operation, bytes | None]:
    from ..apply import UNDO_DELTA_BYTES
    from ..delta import FAST_LEVEL, make_delta

    operation = step.operation
    old = _old_bytes(step, state)
    delta = None
    # Large members are kept whole: a delta would hold both in memory with zstd's tables.
    if (operation.size or 0) <= UNDO_DELTA_BYTES:
        new = step.new_bytes if step.new_bytes is not None else step.patch.target_bytes(operation, old)
        delta = make_delta(new, old, FAST_LEVEL)
    use_delta = delta is not None and len(delta) < len(old)
    current = None if step.stacked_start is not None else state.sha256(operation)
    reverse = Operation(
        "replace",
        operation.file,
        operation.member,
        base_sha256=operation.target_sha256,
        target_sha256=current or hashlib.sha256(old).hexdigest(),
        size=len(old),
        blob="blobs/0",
        encoding="zstd-delta" if use_delta else "raw",
    )
    return reverse, delta if use_delta and delta is not None else old


REVERSES: dict[str, Callable[[Step, _Target], tuple[Operation, bytes | None]]] = {
    "add": _reverse_add,
    "remove": _reverse_remove,
    "replace": _reverse_replace,
    "rename": _reverse_rename,
}


def write_undo_patches(record: Record, number: int, plan: Plan, state: _Target) -> list[dict[str, Any]]:
    """Write the member-level reverse of each patch of `plan` (`number`-K.gpatch) from the
    apply's reader `state` (the old bytes are read now, before anything changes); returns the
    application's patch items for the record."""
    by_patch: dict[int, tuple[Patch, list[Step]]] = {}
    for step in plan.to_record:
        by_patch.setdefault(id(step.patch), (step.patch, []))[1].append(step)
    os.makedirs(record.folder, exist_ok=True)
    items: list[dict[str, Any]] = []
    for index, (patch, steps) in enumerate(by_patch.values(), 1):
        operations: list[Operation] = []
        blobs: dict[str, bytes] = {}
        for step in reversed(steps):
            reverse, blob = REVERSES[step.operation.op](step, state)
            if blob is not None:
                reverse.blob = f"blobs/{len(blobs)}"
                blobs[reverse.blob] = blob
            operations.append(reverse)
        undo_name = f"{number}-{index}.gpatch"
        write_patch(
            record.kept(undo_name), operations, blobs, {"name": f"undo of {patch.name}"}, overwrite=True, deflate=False
        )
        files = sorted({record.key(state.path_of(step.operation)) for step in steps})
        item: dict[str, Any] = {
            "name": patch.name,
            "path": os.path.basename(patch.path),
            "undo": undo_name,
            "files": files,
        }
        carriers = sorted({step.carried_by for step in steps if step.carried_by})
        if carriers:
            item["carried_by"] = carriers  # its edits are inside these patches' changes
        items.append(item)
    return items


def begin_apply(record: Record, plan: Plan, state: _Target, warn: Callable[[str], None]) -> Session:
    """The session of one apply: its undo patches written, each file's state before kept."""
    recover(record)
    paths = list(dict.fromkeys(state.path_of(step.operation) for step in plan.to_apply))
    _forget_changed(record, (record.key(path) for path in paths), warn, "a revert will take it back")
    number = record.next_number()
    session = Session(record, "apply", number)
    items: list[dict[str, Any]] = []
    try:
        items = write_undo_patches(record, number, plan, state)
        session.prepare(paths, [item["undo"] for item in items])
    except BaseException:
        for item in items:
            with contextlib.suppress(OSError):
                os.unlink(record.kept(item["undo"]))
        if record.data.get("session"):
            session.rollback()
        else:
            record.sweep()
        raise
    session.items = items
    return session


def finish_apply(session: Session) -> None:
    """The apply is done: its application (number and patches) enters the record."""
    entry = {"number": session.data["number"], "patches": session.items}
    session.commit(lambda data: data["applications"].append(entry))


# -- revert -------------------------------------------------------------------------------------------


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

    warn = warn or _warn
    target = os.fspath(target)
    record = Record(target)
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
    _forget_changed(record, {key for item in leaving for key in item.get("files", [])}, warn, "taken back")
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
