"""The undo record: what `apply` needs to take its patches back, beside the target.

    TARGET.gamepak-undo/
        record.json    {"format": "gamepak-undo", "version": 1, "applications": [
                          {"number": N, "state": "pending" | "done",
                           "patches": [{"name": ..., "undo": "N-K.gpatch"}, ...]}, ...]}
        N-K.gpatch     a patch (the same container) that turns patch K of application N back:
                       the replaced and removed members' old bytes (a delta against the new
                       bytes where smaller), removals of what it added, reverse renames

Order makes it crash-safe: the undo patches are written (each atomically), then record.json
names them as "pending", then the packs change, then record.json says "done". A kill -9 at any
point leaves a record that names only complete files, and an application that never finished
is still reverted correctly: reverting checks each member like applying does (already original
-> skip). Reverting rebuilds packs with their own layout options, so a rebuilt format (RFG) gets
its original bytes back sha256-equal.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os

from .container import Operation, Patch, PatchError, check_relative, write_patch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from .apply import Plan, Step, _Target

RECORD_FORMAT = "gamepak-undo"
RECORD_VERSION = 1


def record_folder(target: str) -> str:
    return os.path.abspath(target).rstrip(os.sep) + ".gamepak-undo"


def _read_record(folder: str) -> dict[str, Any]:
    path = os.path.join(folder, "record.json")
    if not os.path.isfile(path):
        return {"format": RECORD_FORMAT, "version": RECORD_VERSION, "applications": []}
    try:
        with open(path, "rb") as handle:
            record = json.loads(handle.read(16 << 20))
    except ValueError as exc:
        raise PatchError(f"{path}: not an undo record ({exc})") from None
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
        raise PatchError(f"{path}: not an undo record")
    if record.get("version") != RECORD_VERSION:
        raise PatchError(f"{path}: undo record version {record.get('version')!r}; this gamepak reads {RECORD_VERSION}")
    if not isinstance(record.get("applications"), list):
        raise PatchError(f"{path}: applications must be a list")
    return record


def _write_record(folder: str, record: dict[str, Any]) -> None:
    from ...core.atomic import write_bytes

    write_bytes(os.path.join(folder, "record.json"), json.dumps(record, indent=1).encode(), overwrite=True)
    _sync_folder(folder)


def _sync_folder(folder: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _reverse(steps: list[Step], target: str, shared: _Target | None = None) -> tuple[list[Operation], dict[str, bytes]]:
    """The operations that take `steps` back, with the old bytes they need (read now, before
    anything changes; from `shared`, the apply's reader, when given)."""
    from .apply import UNDO_DELTA_BYTES, _Target
    from .delta import FAST_LEVEL, make_delta

    state = shared if shared is not None else _Target(target)
    operations: list[Operation] = []
    blobs: dict[str, bytes] = {}
    try:
        for step in reversed(steps):
            operation = step.operation
            if operation.op == "add":
                operations.append(
                    Operation("remove", operation.file, operation.member, base_sha256=operation.target_sha256)
                )
            elif operation.op == "rename":
                assert operation.new_member is not None
                operations.append(
                    Operation(
                        "rename",
                        operation.file,
                        operation.new_member,
                        new_member=operation.member,
                        base_sha256=operation.target_sha256,
                        target_sha256=operation.base_sha256,
                    )
                )
            else:
                # A change that carries earlier mods' edits goes back to the member as they
                # left it; their own (stacked) steps take it back from there.
                old = step.patch.stacked_start.get(id(operation))
                stacked = old is not None
                if old is None:
                    old = state.member_bytes(operation)
                if old is None:
                    raise PatchError(f"{target}: {operation.where}: vanished while planning")
                name = f"blobs/{len(blobs)}"
                if operation.op == "remove":
                    blobs[name] = old
                    operations.append(
                        Operation(
                            "add",
                            operation.file,
                            operation.member,
                            target_sha256=hashlib.sha256(old).hexdigest(),
                            size=len(old),
                            blob=name,
                            encoding="raw",
                            position=state.member_index(operation),
                        )
                    )
                else:
                    # Large members are kept whole: a delta would hold both in memory with zstd's tables.
                    small = (operation.size or 0) <= UNDO_DELTA_BYTES
                    delta = None
                    if small:
                        new = step.patch.target_bytes(operation, old)
                        if state.keep and not stacked and step.action == "apply":
                            state.new_bytes[id(operation)] = new  # written later: computed once
                        delta = make_delta(new, old, FAST_LEVEL)
                    use_delta = delta is not None and len(delta) < len(old)
                    blobs[name] = delta if use_delta and delta is not None else old
                    operations.append(
                        Operation(
                            "replace",
                            operation.file,
                            operation.member,
                            base_sha256=operation.target_sha256,
                            target_sha256=(None if stacked else state.sha256(operation))
                            or hashlib.sha256(old).hexdigest(),
                            size=len(old),
                            blob=name,
                            encoding="zstd-delta" if use_delta else "raw",
                        )
                    )
    finally:
        if shared is None:
            state.close()
    return operations, blobs


class _Originals:
    """What gives each changed pack back byte for byte on a full revert, while the pack is
    still what the apply left. A pack rebuilt into a new file keeps its old file as a hard link
    in the record (no bytes copied), renamed back. A pack changed in place keeps the journal of
    what its in-place edits overwrote (`core.inplace.Journal`: its old size and modification
    time, and the few old bytes written over: a header, a directory slot), written back."""

    def __init__(self, folder: str, target: str, number: int) -> None:
        self.folder = folder
        self.target = target
        self.number = number
        self.saved: dict[str, dict[str, Any]] = {}
        self.writing = False  # set by `execute` before it touches the first file

    def start_writing(self) -> None:
        self.writing = True

    def _key(self, path: str) -> str:
        return "" if os.path.isfile(self.target) else os.path.relpath(path, self.target).replace(os.sep, "/")

    @contextlib.contextmanager
    def rewriting(self, path: str) -> Iterator[None]:
        """Around one pack's rewrite: before it, its old file is linked into the record and its
        in-place edits are journaled; after it (if it succeeds), the link is kept for a pack
        rebuilt into a new file, the journal for one changed in place."""
        from ...core.inplace import journaling

        key = self._key(path)
        inode = os.stat(path).st_ino
        name = f"{self.number}-original-{len(self.saved)}"
        kept = os.path.join(self.folder, name)
        try:
            os.link(path, kept)
        except OSError:
            name = ""  # a file system without hard links: a rebuilt pack reverts member by member
        try:
            with journaling(path) as journal:
                yield
        except BaseException:
            if name:  # the pack is still the old one: the link is not needed
                with contextlib.suppress(OSError):
                    os.unlink(kept)
            raise
        now = os.stat(path)
        identity = [now.st_ino, now.st_size, now.st_mtime_ns]
        if now.st_ino != inode:  # rebuilt into a new file: the link holds the old one
            if name:
                self.saved[key] = {"original": name, "identity": identity}
            return
        if name:
            os.unlink(kept)  # changed in place: the link holds nothing old
        if journal.size is not None and journal.complete:
            from ...core.atomic import write_bytes

            name = f"{self.number}-journal-{len(self.saved)}"
            write_bytes(os.path.join(self.folder, name), journal.to_bytes(), overwrite=True)
            self.saved[key] = {"journal": name, "identity": identity}


def _restore_originals(target: str, folder: str, application: dict[str, Any]) -> set[str]:
    """Give packs back whole where they are still what the apply left (a kept old file renamed
    back, or a journal written back); returns their paths (their members need no taking back)."""
    restored: set[str] = set()
    originals = application.get("originals")
    if not isinstance(originals, dict):
        return restored
    for key, entry in originals.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("identity"), list):
            continue
        path = target if key == "" else os.path.join(target, *check_relative(key, f"{folder}: record").split("/"))
        try:
            now = os.stat(path)
        except OSError:
            continue
        if [now.st_ino, now.st_size, now.st_mtime_ns] != entry["identity"]:
            continue  # changed since: taken back member by member
        if "journal" in entry:
            from ...core.inplace import Journal

            kept = os.path.join(folder, os.path.basename(str(entry["journal"])))
            if os.path.isfile(kept):
                with open(kept, "rb") as handle:
                    Journal.from_bytes(handle.read(), kept).restore(path)
                restored.add(path)
            continue
        kept = os.path.join(folder, os.path.basename(str(entry.get("original"))))
        if os.path.isfile(kept):
            os.replace(kept, path)
            restored.add(path)
    return restored


@contextlib.contextmanager
def record_application(
    target: str, plan: Plan, shared: _Target | None = None
) -> Iterator[tuple[list[Step], _Originals]]:
    """Write the undo record of `plan` (pending), let the caller apply its steps, then mark it
    done. `shared`: the apply's reader, whose kept bytes the record is made from."""
    steps = plan.to_apply
    recorded = plan.to_record
    folder = record_folder(target)
    os.makedirs(folder, exist_ok=True)
    record = _read_record(folder)
    number = 1 + max((entry.get("number", 0) for entry in record["applications"]), default=0)
    entry: dict[str, Any] = {"number": number, "state": "pending", "patches": []}
    by_patch: dict[int, list[Step]] = {}
    order: list[Patch] = []
    for step in recorded:
        if id(step.patch) not in by_patch:
            order.append(step.patch)
        by_patch.setdefault(id(step.patch), []).append(step)
    for index, patch in enumerate(order, 1):
        operations, blobs = _reverse(by_patch[id(patch)], target, shared)
        undo_name = f"{number}-{index}.gpatch"
        write_patch(
            os.path.join(folder, undo_name),
            operations,
            blobs,
            {"name": f"undo of {patch.name}"},
            overwrite=True,
            deflate=False,
        )
        item: dict[str, Any] = {"name": patch.name, "path": os.path.basename(patch.path), "undo": undo_name}
        carriers = sorted(
            {patch.carried_by[id(step.operation)] for step in by_patch[id(patch)] if step.action == "stacked"}
        )
        if carriers:
            item["carried_by"] = carriers  # its edits are inside these patches' changes
        entry["patches"].append(item)
    record["applications"].append(entry)
    _write_record(folder, record)
    keeper = _Originals(folder, target, number)
    try:
        yield steps, keeper
    except BaseException:
        if not keeper.writing:
            # Refused before any file was touched: the entry would stand for an apply that
            # never happened. (Once writing has begun, the pending entry is what reverts it.)
            _forget(folder, record, entry)
        raise
    entry["originals"] = keeper.saved
    entry["state"] = "done"
    _write_record(folder, record)


def _forget(folder: str, record: dict[str, Any], entry: dict[str, Any]) -> None:
    """Drop an application from the record, with its undo patches (the whole record folder when
    it was the only one)."""
    record["applications"].remove(entry)
    if not record["applications"]:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
        return
    _write_record(folder, record)
    for item in entry["patches"]:
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(folder, item["undo"]))


def _file_of(target: str, operation: Operation) -> str:
    """The file of `target` an undo operation changes."""
    return target if os.path.isfile(target) else os.path.join(target, *operation.file.split("/"))


def _refuse_carried(target: str, record: dict[str, Any], item: dict[str, Any]) -> None:
    """A patch whose edits went into a later patch's change (stacked modinfo.xml mods) comes
    back only once that later one has: until then its edits are part of the later change."""
    carriers = set(item.get("carried_by") or [])
    still = [
        other["name"]
        for application in record["applications"]
        for other in application["patches"]
        if other is not item and other.get("name") in carriers
    ]
    if still:
        raise PatchError(
            f"{target}: {item.get('name')}'s edits were applied inside {', '.join(dict.fromkeys(still))}'s change "
            "of the same members; take that back first (or revert everything)"
        )


def _matches(patch_entry: dict[str, Any], wanted: str) -> bool:
    return wanted in (patch_entry.get("name"), patch_entry.get("path"))


def revert(target: str | os.PathLike[str], patch: str | os.PathLike[str] | None = None) -> list[str]:
    """Take back what `apply` did to `target`: everything (latest first), or only `patch` (a
    patch file or its name), keeping the others. Returns the names of the patches taken back."""
    from .apply import execute, plan

    target = os.fspath(target)
    folder = record_folder(target)
    record = _read_record(folder)
    if not record["applications"]:
        if os.path.isdir(folder):
            # A revert killed after taking back its last patch, before removing the record:
            # finish its clean-up; nothing is left to take back.
            import shutil

            shutil.rmtree(folder, ignore_errors=True)
            return []
        raise PatchError(f"{target}: no patches applied by gamepak (no undo record at {folder})")
    wanted: str | None = None
    if patch is not None:
        wanted = os.fspath(patch)
        if os.path.exists(wanted):
            # A patch file (by its name or file name), or a mod folder or zip (by its file name:
            # the undo record keeps it as the patch's path).
            names = {os.path.basename(os.path.normpath(wanted))}
            if os.path.isfile(wanted):
                with contextlib.suppress(PatchError), Patch.open(wanted) as opened:
                    names.add(opened.name)
            wanted = next(
                (
                    name
                    for name in names
                    for application in record["applications"]
                    for item in application["patches"]
                    if _matches(item, name)
                ),
                wanted,
            )
    taken_back: list[str] = []
    for application in reversed(list(record["applications"])):
        restored: set[str] = set()
        if wanted is None and application.get("state") == "done":
            restored = _restore_originals(target, folder, application)
        for item in reversed(list(application["patches"])):
            if wanted is not None and not _matches(item, wanted):
                continue
            _refuse_carried(target, record, item)
            undo_path = os.path.join(folder, os.path.basename(str(item.get("undo"))))
            with Patch.open(undo_path) as undo:
                if restored:  # those packs are back whole: nothing of them to take back
                    undo.operations = [op for op in undo.operations if _file_of(target, op) not in restored]
                result = plan(target, [undo])
                if not result.ok:
                    raise PatchError(
                        f"{target}: cannot take back {item.get('name')}:\n  " + "\n  ".join(result.problems())
                    )
                if result.to_apply:
                    execute(target, result.to_apply)
            application["patches"].remove(item)
            _write_record(folder, record)
            with contextlib.suppress(OSError):
                os.unlink(undo_path)
            taken_back.append(str(item.get("name")))
        if not application["patches"]:
            record["applications"].remove(application)
            _write_record(folder, record)
            for entry in (application.get("originals") or {}).values():
                for kind in ("original", "journal"):
                    if isinstance(entry, dict) and kind in entry:
                        with contextlib.suppress(OSError):
                            os.unlink(os.path.join(folder, os.path.basename(str(entry[kind]))))
    if wanted is not None and not taken_back:
        raise PatchError(f"{target}: no applied patch named {wanted!r}")
    if not record["applications"]:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
    return taken_back
