"""`check` and `apply`: one plan for several patches, then each pack rewritten once.

Every operation is checked against the target before anything is written: the member holds the
patch's base -> apply; it already holds the target -> skip (applying twice changes nothing);
anything else -> refused, naming the member. Two patches changing one member to different bytes
conflict; `later_wins=True` keeps the later patch's change (the order given) instead. An RFG
zone changed object by object ("zone-changes") is judged by `zones.judge`: replayed on a member
holding neither base nor target, and stacked with other patches' changes of other objects.
Operations are grouped per pack and each pack goes through one `gamepak.edit` commit (in place
for PAK/JoePack, a temporary file + rename otherwise; an RFG rebuild reuses unchanged
compressed data).
"""

from __future__ import annotations

import contextlib
import os

from .container import Operation, Patch, PatchError
from .target import Plan, Step, Target

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from .limits import Limits
    from .undo.session import Session


def _judge(target: Target, operation: Operation) -> tuple[str, str]:
    current = target.sha256(operation)
    if operation.op == "add":
        if current is None:
            return "apply", ""
        if current == operation.target_sha256:
            return "skip", "already added"
        return "refuse", "already exists with other bytes"
    if operation.op == "remove":
        if current is None:
            return "skip", "already removed"
        if current == operation.base_sha256 or operation.base_sha256 is None:
            return "apply", ""
        return "refuse", "holds other bytes than the patch removes"
    if operation.op == "replace":
        if current == operation.target_sha256:
            return "skip", "already patched"
        # A mod folder's replacement does not say what it replaces (base_sha256 None).
        if current == operation.base_sha256 or (operation.base_sha256 is None and current is not None):
            return "apply", ""
        return "refuse", "missing" if current is None else "holds neither the patch's base nor its target"
    assert operation.new_member is not None
    renamed = target.sha256(operation, operation.new_member)
    if current == operation.base_sha256 and renamed is None:
        return "apply", ""
    if current is None and renamed == operation.target_sha256:
        return "skip", "already renamed"
    if current is None:
        return "refuse", "missing"
    return "refuse", f"cannot rename: {operation.new_member} exists" if renamed else "holds other bytes"


def _effect(operation: Operation) -> tuple[str, str | None]:
    return (operation.op, None if operation.op == "remove" else operation.target_sha256)


def plan(
    target: str | os.PathLike[str], patches: Sequence[Patch], *, later_wins: bool = False, state: Target | None = None
) -> Plan:
    """Check every operation of `patches` against `target` (nothing is written). `state`: the
    apply's shared reader (kept open by the caller)."""
    if state is not None:
        return _plan(state, patches, later_wins)
    state = Target(os.fspath(target))
    try:
        return _plan(state, patches, later_wins)
    finally:
        state.close()


def _keys(operation: Operation) -> list[tuple[str, str | None]]:
    keys = [operation.key]
    if operation.new_member is not None:
        keys.append((operation.file, operation.new_member))
    return keys


def _plan(state: Target, patches: Sequence[Patch], later_wins: bool) -> Plan:
    result = Plan(state.target)
    owners: dict[tuple[str, str | None], list[Step]] = {}
    for patch in patches:
        for index, operation in enumerate(patch.operations):
            carrier = patch.carried_by.get(index)
            if carrier is not None:  # written by the later change; taken back in its own step
                reason = f"its edits are in {carrier}'s change"
                result.steps.append(Step(patch, operation, "stacked", reason, carried_by=carrier))
                continue
            step = Step(patch, operation, "apply", stacked_start=patch.stacked_start.get(index))
            result.steps.append(step)
            for key in _keys(operation):
                owners.setdefault(key, []).append(step)
    from .zones import is_zone_changes

    for key, steps in owners.items():
        patches_here = {id(step.patch) for step in steps}
        if len(patches_here) < 2:
            continue
        if all(is_zone_changes(step.operation) for step in steps):
            continue  # object-level changes of one zone: they stack unless they clash (`zones.judge`)
        effects = {_effect(step.operation) for step in steps}
        if len(effects) == 1:
            for step in steps[1:]:  # the same change twice: done once
                if step.action == "apply":
                    step.action, step.reason = "skip", f"same change as {steps[0].patch.name}"
            continue
        if later_wins:
            last = steps[-1].patch
            for step in steps:
                if step.patch is not last:
                    step.action, step.reason = "overridden", f"{last.name} comes later"
            continue
        member = steps[0].operation.where if key == steps[0].operation.key else f"{key[0]}: {key[1]}"
        names = list(dict.fromkeys(step.patch.name for step in steps))
        result.conflicts.append((member, names))
    zone_steps: dict[tuple[str, str | None], list[Step]] = {}
    for step in result.steps:
        if step.action != "apply":
            continue
        if is_zone_changes(step.operation):
            zone_steps.setdefault(step.operation.key, []).append(step)
        else:
            step.action, step.reason = _judge(state, step.operation)
    if zone_steps:
        from .zones import judge

        for steps in zone_steps.values():
            judge(state, steps, result, later_wins)
    return result


def execute(target: str, steps: list[Step], *, session: Session | None = None, shared: Target | None = None) -> None:
    """Write the applying steps: each pack once, plain files atomically. `session` (the undo
    record's) keeps each file's state before it is written and is around each write;
    `shared`: the apply's reader, whose kept bytes are used (the caller closes it)."""
    state = shared if shared is not None else Target(target)
    groups: dict[str, list[Step]] = {}
    for step in steps:
        groups.setdefault(state.path_of(step.operation), []).append(step)
    try:
        # Bytes, or the path of a scratch file: the editor and `_write_plain` take either.
        prepared: dict[str, list[tuple[Step, bytes | str | None]]] = {}
        for path, group in groups.items():
            prepared[path] = [(step, _new_content(state, step)) for step in group]
    except BaseException:
        if shared is None:
            state.close()
        raise
    if shared is None:
        state.close_reading()
    # Every pack's changes are queued before any pack is written: a name a format refuses stops
    # the whole apply with nothing changed.
    from ..edit import Editor

    editors: dict[str, Editor] = {}
    try:
        for path, items in prepared.items():
            if items[0][0].operation.member is None:
                continue
            # The shared reader's editor (opened and locked by the plan), else a new one.
            editor = editors[path] = (shared.take_editor(path) if shared is not None else None) or Editor(path)
            for step, data in items:
                _queue(editor, step.operation, data)
        if session is not None:
            session.prepare(prepared)
        for path, items in prepared.items():
            with session.writing(path) if session is not None else contextlib.nullcontext():
                if path not in editors:
                    for step, data in items:
                        _write_plain(path, step.operation, data)
                else:
                    editors.pop(path).commit()
    finally:
        for editor in editors.values():
            editor.abort()
        if shared is not None:
            shared.close_archives()  # packs the plan read but nothing changes
        else:
            state.close()  # the scratch files, written or not


def _queue(editor: Any, operation: Operation, data: bytes | str | None) -> None:
    assert operation.member is not None
    if operation.op == "add":
        editor.add(operation.member, data, position=operation.position)
    elif operation.op == "replace":
        editor.replace(operation.member, data)
    elif operation.op == "remove":
        editor.remove(operation.member)
    else:
        assert operation.new_member is not None
        editor.rename(operation.member, operation.new_member)


def _new_content(state: Target, step: Step) -> bytes | str | None:
    operation = step.operation
    if operation.op not in ("add", "replace"):
        return None
    if step.new is not None:
        return step.new
    base = state.member_bytes(operation) if operation.encoding == "zstd-delta" else None
    return state.new_content.make(step.patch, operation, base)


def _write_plain(path: str, operation: Operation, data: bytes | str | None) -> None:
    from ...core.atomic import replace_with_file, write_bytes

    if operation.op == "remove":
        os.unlink(path)
    elif operation.op == "rename":
        raise PatchError(f"{path}: plain files are not renamed by patches")
    else:
        assert data is not None
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        if isinstance(data, str):
            replace_with_file(path, data)  # the scratch file, renamed into place
        else:
            write_bytes(path, data, overwrite=True)


def refuse_over_budget(plan: Plan, state: Target) -> None:
    """Mark each add or replace of `plan` whose declared size is over budget (against the size of
    what it replaces, read through `state`) as refused, before any blob is read or decoded."""
    from ...core.nested import resolve
    from ...errors import GamepakError
    from .limits import current

    budget = current()
    for step in plan.to_apply:
        operation = step.operation
        if operation.op not in ("add", "replace"):
            continue
        replaced: int | None = None
        if operation.op == "replace":
            path = state.path_of(operation)
            try:
                if operation.member is None:
                    replaced = os.path.getsize(path)
                else:
                    replaced = resolve(state.archive(path), operation.member)[1].size
            except (OSError, GamepakError):
                replaced = None
        try:
            budget.check(operation.where, operation.size or 0, replaced)
            _check_delta_base(operation, replaced, budget)
        except PatchError as exc:
            step.action, step.reason = "refuse", str(exc).removeprefix(f"{operation.where}: ")


def _check_delta_base(operation: Any, replaced: int | None, budget: Limits) -> None:
    """A delta's base is read whole: one against a larger member than `make` makes deltas
    against (`container.MAX_DELTA_BASE_BYTES`) is refused unless `allow_large`."""
    from . import container
    from .limits import ALLOW_LARGE_ADVICE

    largest = container.MAX_DELTA_BASE_BYTES
    if operation.encoding == "zstd-delta" and replaced is not None and replaced > largest and not budget.allow_large:
        raise PatchError(
            f"{operation.where}: a delta against {replaced} bytes, more than the {largest} gamepak makes deltas "
            f"against (the base is read whole); {ALLOW_LARGE_ADVICE}"
        )
