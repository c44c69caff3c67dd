"""The plan's part for RFG zones changed object by object (a replace whose encoding is
"zone-changes"): each patch's changes are replayed on the zone the target holds, whatever
version it is, and several patches changing one zone stack into one change.

A member holding the patch's base gives its target; one holding another version (someone
changed other objects) gets the changes replayed where each still finds what it expects, or
finds it already done; a field changed here to another value refuses the step, naming the
object and property. Two patches of one apply changing the same (object, field) differently
are a conflict named the same way; patches changing different objects apply in order, each on
the zone as the earlier ones left it, and the last one's change carries the earlier ones'
(`Step.carried_by`, `Step.stacked_start`: the undo record takes each back in turn, as for
stacked modinfo.xml edits).
"""

from __future__ import annotations

import hashlib

from ...errors import GamepakError
from .container import ZONE_CHANGES, Operation, PatchError, zone_changes_limit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .target import Plan, Step, Target


def is_zone_changes(operation: Operation) -> bool:
    return operation.op == "replace" and operation.encoding == ZONE_CHANGES


def changes_blob(name: str, base: bytes, target: bytes) -> bytes | None:
    """The "zone-changes" blob turning `base` into `target`, two versions of the RFG zone member
    `name`; None when it is not a zone, the changes do not say all of the difference
    (`diff.changes_between`), or they are past what such a blob may hold (`zone_changes_limit`)."""
    from ...formats.rfg.zone.check import is_zone_name

    if not is_zone_name(name):
        return None
    from ...formats.rfg.zone.diff import changes_between

    blob = changes_between(base, target, name)
    return blob if blob is not None and len(blob) <= zone_changes_limit(len(target)) else None


def judge(state: Target, steps: list[Step], result: Plan, later_wins: bool = False) -> None:
    """Decide the zone-changes `steps` of one member (in patch order, all still "apply"):
    apply (with their new bytes computed: `step.new`), skip, refuse, stacked, or a conflict in
    `result`. `later_wins`: an (object, field) two patches change differently takes the later
    patch's value instead of being a conflict."""
    from ...formats.rfg.zone.diff import replay_with_undo

    operation = steps[0].operation
    size = state.size_of(operation)
    if size is None:
        for step in steps:
            step.action, step.reason = "refuse", "missing"
        return
    too_large = _too_large(size)
    if too_large:
        for step in steps:
            step.action, step.reason = "refuse", too_large
        return
    read: list[tuple[Step, list[Any]]] = []
    for step in steps:
        try:
            read.append((step, step.patch.zone_changes(step.operation)))
        except PatchError as exc:
            step.action, step.reason = "refuse", _without(str(exc), step)
    overridden: dict[int, str] = {}  # id(step) -> the later patch that overrides some of its changes
    if not _settle_clashes(read, result, later_wins, overridden):
        return
    data = state.member_bytes(operation)
    assert data is not None
    applied: list[tuple[Step, bytes]] = []
    for step, changes in read:
        where = f"{step.patch.path}: {operation.where}"
        if not changes:  # every one overridden by a later patch
            step.action, step.reason = "overridden", f"{overridden[id(step)]} comes later"
            continue
        try:
            new, back = replay_with_undo(data, changes, where)
        except GamepakError as exc:
            step.action, step.reason = "refuse", _without(str(exc), step)
            continue
        start_digest = hashlib.sha256(data).hexdigest()
        if start_digest == step.operation.target_sha256 or new == data:
            step.action, step.reason = "skip", "already patched"
            continue
        if (
            start_digest == step.operation.base_sha256
            and id(step) not in overridden  # partly overridden: not its own target any more
            and hashlib.sha256(new).hexdigest() != step.operation.target_sha256
        ):
            step.action, step.reason = "refuse", "its zone changes do not give its target sha256 on its own base"
            continue
        step.new = state.new_content.hold_bytes(where, new)
        if id(step) in overridden:
            step.reason = f"some of its zone changes overridden by {overridden[id(step)]}, which comes later"
        # Its undo: the changes back, replayed as these were, so it can be taken back on its own
        # while later patches' changes of other objects stay.
        step.reverse_changes = back if back is not None and len(back) <= zone_changes_limit(len(data)) else None
        applied.append((step, data))
        data = new
    _stack(applied, overridden)


def _settle_clashes(
    read: list[tuple[Step, list[Any]]], result: Plan, later_wins: bool, overridden: dict[int, str]
) -> bool:
    """Find the (object, field)s two patches of `read` change differently: each pair a conflict
    in `result` (False returned), or, with `later_wins`, left out of the earlier patch's changes
    in `read` (noted in `overridden`)."""
    from ...formats.rfg.zone.diff import change_label, clashes

    settled = True
    for index, (step, changes) in enumerate(read):
        for number, (earlier, earlier_changes) in enumerate(read[:index]):
            found = clashes(earlier_changes, changes)
            if found and later_wins:
                # The later patch's changes of those fields then find the values they expect.
                lost = {(handle, field) for handle, field, _ in found}
                read[number] = (earlier, [change for change in earlier_changes if change.key not in lost])
                overridden[id(earlier)] = step.patch.name
            elif found:
                labels = ", ".join(change_label(handle, field) for handle, field, _ in found[:8])
                more = f" (and {len(found) - 8} more)" if len(found) > 8 else ""
                where = step.operation.where
                result.conflicts.append((f"{where}: {labels}{more}", [earlier.patch.name, step.patch.name]))
                settled = False
    return settled


def _stack(applied: list[tuple[Step, bytes]], overridden: dict[int, str]) -> None:
    """Several steps that change one zone (with the zone each started from): written once, by
    the last; the others are "stacked" into its change."""
    # Each stacked step's undo starts from the zone as the earlier ones left it. Undone by
    # object-level changes, any of them can be taken back alone; where one is a byte-level
    # undo, the earlier ones come back only after the later ones (`carried_by`).
    by_bytes = any(step.reverse_changes is None for step, _ in applied)
    for (step, _start), (carrier, _) in zip(applied, applied[1:], strict=False):
        step.action, step.reason = "stacked", f"its zone changes are in {carrier.patch.name}'s change"
        if id(step) in overridden:
            step.reason += f" (some overridden by {overridden[id(step)]}, which comes later)"
        if by_bytes:
            step.carried_by = carrier.patch.name
    for step, start in applied[1:]:
        step.stacked_start = start


def _without(message: str, step: Step) -> str:
    """A refusal's reason without the patch and member its step line already names."""
    return message.removeprefix(f"{step.patch.path}: ").removeprefix(f"{step.operation.where}: ")


def _too_large(size: int) -> str:
    from ...core import content_limits
    from .limits import ALLOW_LARGE_ADVICE, current

    # The zone limit every zone reader keeps (a patch's --allow-large lifts it here).
    largest = content_limits.current().zone_bytes
    if size > largest and not current().allow_large:
        return f"zone changes replay on the whole zone, {size} bytes here, more than {largest}; {ALLOW_LARGE_ADVICE}"
    return ""
