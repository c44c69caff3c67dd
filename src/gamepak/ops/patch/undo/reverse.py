"""An apply's part of the record: the member-level reverse of each patch it applies (N-K.gpatch,
one function per operation kind), written as its session begins, and its application entered
in the record as the session commits."""

from __future__ import annotations

import contextlib
import hashlib
import os

from ..container import ZONE_CHANGES, Operation, Patch, PatchError
from ..write import write_patch
from .restore import forget_changed, recover
from .session import Session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

    from ..target import Plan, Step, Target
    from .record import Record


def _reverse_add(step: Step, state: Target) -> tuple[Operation, bytes | OldMember | None]:
    operation = step.operation
    return Operation("remove", operation.file, operation.member, base_sha256=operation.target_sha256), None


def _reverse_rename(step: Step, state: Target) -> tuple[Operation, bytes | OldMember | None]:
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


class OldMember:
    """A member's (or plain file's) bytes before the apply, streamed from the target into the
    undo patch (`container.write_patch`) instead of held: checked, as they pass, to be the
    bytes the plan hashed."""

    def __init__(self, state: Target, operation: Operation, size: int, sha256: str) -> None:
        self.state = state
        self.operation = operation
        self.size = size
        self.sha256 = sha256

    def chunks(self) -> Iterator[bytes]:
        digest = hashlib.sha256()
        total = 0
        for chunk in self.state.member_chunks(self.operation):
            total += len(chunk)
            if total > self.size:
                break
            digest.update(chunk)
            yield chunk
        if total != self.size or digest.hexdigest() != self.sha256:
            raise PatchError(f"{self.state.target}: {self.operation.where}: changed while being applied")


def _old(step: Step, state: Target) -> tuple[bytes | OldMember, int, str]:
    """The member's bytes before the step (in memory when the plan kept them, else streamed),
    their size and sha256."""
    operation = step.operation
    if step.stacked_start is not None:
        # A change that carries earlier mods' edits goes back to the member as they left it;
        # their own (stacked) steps take it back from there.
        old = step.stacked_start
        return old, len(old), hashlib.sha256(old).hexdigest()
    digest = state.sha256(operation)
    kept = state.kept_bytes(operation)
    if kept is not None and digest is not None:
        return kept, len(kept), digest
    size = state.size_of(operation)
    if size is None or digest is None:
        raise PatchError(f"{state.target}: {operation.where}: vanished while planning")
    return OldMember(state, operation, size, digest), size, digest


def _reverse_remove(step: Step, state: Target) -> tuple[Operation, bytes | OldMember | None]:
    operation = step.operation
    old, size, digest = _old(step, state)
    reverse = Operation(
        "add",
        operation.file,
        operation.member,
        target_sha256=digest,
        size=size,
        blob="blobs/0",
        encoding="raw",
        position=state.member_index(operation),
    )
    return reverse, old


def _reverse_replace(step: Step, state: Target) -> tuple[Operation, bytes | OldMember | None]:
    from ..delta import FAST_LEVEL, make_delta
    from ..target import UNDO_DELTA_BYTES

    operation = step.operation
    old, size, digest = _old(step, state)
    blob: bytes | OldMember = old
    encoding = "raw"
    if step.reverse_changes is not None:
        # A zone's changes taken back by the changes back: replayed on the zone as it is then,
        # they leave later patches' changes of other objects.
        blob, encoding = step.reverse_changes, ZONE_CHANGES
    elif (operation.size or 0) <= UNDO_DELTA_BYTES and size <= UNDO_DELTA_BYTES:
        # Small members get a reverse delta while the old bytes' memory budget lets the record
        # hold it until written (one per member: their number is the mod's); large ones are kept
        # whole (a delta would hold both in memory with zstd's tables), streamed when the plan
        # did not keep them.
        whole = b"".join(old.chunks()) if isinstance(old, OldMember) else old
        new = step.new_bytes()
        if new is None:
            new = step.patch.target_bytes(operation, whole)
        delta = make_delta(new, whole, FAST_LEVEL)
        if len(delta) < len(whole) and state.hold(len(delta)):
            blob, encoding = delta, "zstd-delta"
    reverse = Operation(
        "replace",
        operation.file,
        operation.member,
        base_sha256=_written(step),
        target_sha256=digest,
        size=size,
        blob="blobs/0",
        encoding=encoding,
    )
    return reverse, blob


def _written(step: Step) -> str | None:
    """The sha256 of what the step writes: its target, or for a zone's changes replayed on
    another version of it, of what the plan computed."""
    if step.operation.encoding != ZONE_CHANGES:
        return step.operation.target_sha256
    new = step.new_bytes()
    assert new is not None  # computed by the plan (`zones.judge`)
    return hashlib.sha256(new).hexdigest()


REVERSES: dict[str, Callable[[Step, Target], tuple[Operation, bytes | OldMember | None]]] = {
    "add": _reverse_add,
    "remove": _reverse_remove,
    "replace": _reverse_replace,
    "rename": _reverse_rename,
}


def write_undo_patches(record: Record, number: int, plan: Plan, state: Target) -> list[dict[str, Any]]:
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
        blobs: dict[str, bytes | OldMember] = {}
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


def begin_apply(record: Record, plan: Plan, state: Target, warn: Callable[[str], None]) -> Session:
    """The session of one apply: its undo patches written, each file's state before kept."""
    recover(record)
    paths = list(dict.fromkeys(state.path_of(step.operation) for step in plan.to_apply))
    forget_changed(record, (record.key(path) for path in paths), warn, "a revert will take it back")
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
