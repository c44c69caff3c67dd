"""`check` and `apply`: plan every patch against the target, record how to undo, then write each pack once."""

from __future__ import annotations

import os

from .apply import Plan, execute, plan
from .container import Patch, PatchError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any


def open_patches(
    target: str | os.PathLike[str],
    patches: Sequence[str | os.PathLike[str]],
    choices: Mapping[str, str] | None = None,
) -> list[Patch]:
    """Patch files, and SyncFaction mods (folders and zips: loose archives, whole files,
    .xdelta files; modinfo.xml, with `choices` naming their user inputs' options), read as
    patches for `target`."""
    from .modinfo import LoadedMod, is_modinfo_mod, refuse_unknown_choices
    from .syncfaction import is_syncfaction_mod, mod_patch

    opened: list[Patch] = []
    paths = [os.fspath(path) for path in patches]
    mods: dict[int, LoadedMod] = {}
    try:
        for index, path in enumerate(paths):
            if is_modinfo_mod(path):
                mods[index] = LoadedMod(path)
        refuse_unknown_choices(choices or {}, list(mods.values()))
        # modinfo.xml mods that edit one member stack, as SyncFaction applies them in order:
        # each one's edits apply to the member as the earlier ones left it, and the later
        # operation, which holds them all, replaces the earlier one.
        stacked: dict[tuple[str, str], bytes] = {}
        producers: dict[tuple[str, str], tuple[Patch, int]] = {}
        for index, path in enumerate(paths):
            if index in mods:
                before = dict(stacked)
                modinfo_key = mods[index].files.find(mods[index].modinfo)
                made = mods.pop(index).patch(target, choices, stacked)
                for index_in_patch, operation in enumerate(made.operations):
                    key = (operation.file, operation.member or "")
                    if key not in stacked or stacked[key] is before.get(key):
                        continue  # not an edit of this mod's
                    earlier = producers.get(key)
                    if earlier is not None:
                        # The earlier operation stays in its patch, carried by this one: the
                        # undo record then takes this one back to the member as the earlier
                        # mods left it (`stacked_start`), and the earlier one from there.
                        earlier[0].carried_by[earlier[1]] = made.name
                        made.stacked_start[index_in_patch] = before[key]
                        made.notes.append(
                            f"{operation.where}: its edits apply on top of {earlier[0].name}'s, in one change"
                        )
                    producers[key] = (made, index_in_patch)
                opened.append(made)
                # The SyncFaction forms beside modinfo.xml (loose archives, deltas ...), and the
                # files neither applies, said as notes.
                beside = mod_patch(
                    path, target, modinfo_key=modinfo_key, used_by_modinfo=made.used_files, required=False
                )
                if beside.operations:
                    opened.append(beside)
                else:
                    made.notes += beside.notes
                    beside.close()
            elif is_syncfaction_mod(path):
                opened.append(mod_patch(path, target))
            else:
                opened.append(Patch.open(path))
    except BaseException:
        for patch in opened:
            patch.close()
        for mod in mods.values():
            mod.close()
        raise
    return opened


def loose_mod_info(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """What `gamepak patch info` shows of a SyncFaction mod (a folder or a zip):
    `syncfaction.describe_mod`'s fields and `path`; None when `path` is not one."""
    from .syncfaction import describe_mod, is_syncfaction_mod

    if not is_syncfaction_mod(path):
        return None
    return {"path": os.fspath(path), **describe_mod(path)}


def check(
    target: str | os.PathLike[str],
    patches: Sequence[str | os.PathLike[str]],
    *,
    later_wins: bool = False,
    choices: Mapping[str, str] | None = None,
) -> Plan:
    """Whether `patches` (patch files, SyncFaction mod folders and zips) apply cleanly to
    `target`; writes nothing of theirs (an apply or revert a kill interrupted is first rolled
    back or finished). `choices` picks modinfo.xml inputs' options ({"NAME": "OPTION"})."""
    from .apply import refuse_over_budget
    from .target import Target

    _recover(os.fspath(target))
    paths = [os.fspath(path) for path in patches]
    expected = _listed_hashes(paths)
    opened = open_patches(target, paths, choices)
    state = Target(os.fspath(target))
    try:
        result = plan(target, opened, later_wins=later_wins, state=state)
        refuse_over_budget(result, state)
        if result.ok and not result.to_apply:
            _refuse_already_wrong(os.fspath(target), expected)
        return result
    finally:
        state.close()
        for patch in opened:
            patch.close()


def apply(
    target: str | os.PathLike[str],
    patches: Sequence[str | os.PathLike[str]],
    *,
    later_wins: bool = False,
    dry_run: bool = False,
    choices: Mapping[str, str] | None = None,
    warn: Callable[[str], None] | None = None,
) -> Plan:
    """Apply patch files to `target` (a pack or a game folder) in one pass: every operation is
    checked first; a conflict or refusal raises `PatchError` listing them and writes nothing.
    An undo record is written beside the target before any pack changes (`revert`); whatever
    fails once writing has begun (a `.mod.hashes.json` mismatch, a full disk, a kill) gives
    every file back its bytes before. `choices` picks modinfo.xml inputs' options ({"NAME":
    "OPTION"}; default: each first). `warn` (default: `warnings`) hears of files another program
    changed since gamepak wrote them."""
    from .apply import refuse_over_budget
    from .target import Target
    from .undo import Record, begin_apply, finish_apply
    from .undo.restore import warn_line

    if not dry_run:
        _recover(os.fspath(target))
    paths = [os.fspath(path) for path in patches]
    expected = _listed_hashes(paths)
    opened = open_patches(target, paths, choices)
    # One reader for the whole apply: each changed member is read and hashed once, for the
    # check, the undo record and the new bytes.
    state = Target(os.fspath(target), keep=True)
    try:
        result = plan(target, opened, later_wins=later_wins, state=state)
        refuse_over_budget(result, state)
        if not result.ok:
            raise PatchError(f"{os.fspath(target)}: not applied, nothing written:\n  " + "\n  ".join(result.problems()))
        if dry_run:
            return result
        if not result.to_apply:
            _refuse_already_wrong(os.fspath(target), expected)
            return result
        # Large members' new bytes are decoded and checked in a worker thread meanwhile the
        # undo record is written (both are needed before the first pack is touched).
        state.new_bytes_ahead(result.to_apply)
        session = begin_apply(Record(os.fspath(target)), result, state, warn or warn_line)
        try:
            state.finish_ahead()
            execute(os.fspath(target), result.to_apply, session=session, shared=state)
            _check_mod_hashes(os.fspath(target), expected)
            finish_apply(session)
        except BaseException:
            # Taken back by this run's own session (its application number), never by name:
            # earlier applications of the same patches stay.
            session.rollback()
            raise
        return result
    finally:
        state.close()
        for patch in opened:
            patch.close()


def _listed_hashes(paths: Sequence[str]) -> dict[str, tuple[str, str]]:
    """SyncFaction's `.mod.hashes.json` of each mod (`syncfaction.listed_hashes`): the files the
    mods must produce, as {path: (sha256, listing)}. Read before anything is written, so a
    malformed listing refuses the apply instead of failing after it."""
    from .syncfaction import listed_hashes

    expected: dict[str, tuple[str, str]] = {}
    for path in paths:
        expected.update(listed_hashes(path))
    return expected


def _recover(target: str) -> None:
    """What a kill -9 during an apply or a revert left on `target`: rolled back or finished."""
    from .undo import Record, recover

    if os.path.exists(target):
        recover(Record(target))


def _wrong_hashes(target: str, expected: dict[str, tuple[str, str]]) -> list[str]:
    """The listed files that are missing or hold other bytes, one line each: the file, the
    SHA-256 listed and the one found."""
    from .digests import file_sha256
    from .modfiles import real_path

    # Listed paths start at the game's root (data/...); TARGET may be the game or its data folder.
    normalized = os.path.normpath(target)
    root = os.path.dirname(normalized) if os.path.basename(normalized).lower() == "data" else target
    wrong = []
    for file, (digest, listing) in expected.items():
        real = real_path(root, file.split("/"))
        actual = None if real is None else file_sha256(os.path.join(root, *real.split("/")))
        if actual != digest:
            found = "the file is missing" if actual is None else f"found {actual}"
            wrong.append(f"{file}: expected SHA-256 {digest}, {found} (listed in {listing})")
    return wrong


def _refuse_already_wrong(target: str, expected: dict[str, tuple[str, str]]) -> None:
    """Every operation already holds its target, so the files are the result: a mod whose
    `.mod.hashes.json` lists other bytes does not hold (another mod changed the file)."""
    wrong = _wrong_hashes(target, expected)
    if wrong:
        raise PatchError(
            f"{target}: already holds every change, but not what the mod's .mod.hashes.json lists; nothing "
            "written:\n  " + "\n  ".join(wrong)
        )


def _check_mod_hashes(target: str, expected: dict[str, tuple[str, str]]) -> None:
    """Checked once this apply is written, before it is recorded as done: a mismatch raises,
    and the apply's session takes every file back."""
    wrong = _wrong_hashes(target, expected)
    if wrong:
        raise PatchError(
            f"{target}: not applied, every file taken back (nothing kept): the result is not what the "
            f"mod's .mod.hashes.json lists: {'; '.join(wrong)}"
        )
