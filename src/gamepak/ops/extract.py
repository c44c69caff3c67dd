"""The one safe extraction path, shared by every format.

Every member name becomes a target path under the destination (`plan_targets`), every member's
bytes must lie inside the archive file, and the whole tree is planned, written under temporary
names and published at once by `ops.safe_tree`, which says what that guarantees: no path
outside the destination, no link on the way, existing files refused unless `overwrite`, and
nothing left of a refused or failed extraction. Members are written with one `pread` and one
`write` each (`copy_file_range` for large ones), split by bytes over one forked process per core
when there are many (`ops.copier`).

Duplicate names: the copy the game would load (`Archive.duplicate_wins`) is written under the
name; every other copy is written beside it as `NAME.dupN` (N its member index, with a further
`-K` when that name is taken too), and the manifest records which member each file holds, so
nothing is lost and rebuilds stay exact. A member named like the manifest is renamed the same way.
"""

from __future__ import annotations

import os
import sys

from ..core.archive import Archive, RawRange
from ..core.atomic import write_all
from ..core.portable import has_folder_descriptors
from ..core.stored_names import NAME_MAX
from ..errors import GamepakError, UnsafePathError
from . import MANIFEST_NAME
from .copier import chunk_writer, copy_members, write_file
from .copy_jobs import Job, PlannedJobs
from .safe_tree import PathTree, Plan, TreeWriter, all_plain, plain_key, write_plan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..core.archive import Entry


def plan_targets(archive: Archive, entries: list[Entry]) -> list[list[str]]:
    """Target path components per entry. Copies of a duplicated name that the game would not
    load, and a member named like the manifest, get a free `.dupN` name instead (with a
    warning for the manifest)."""
    return [key.split("/") for key in _target_keys(archive, entries)]


def _target_keys(archive: Archive, entries: list[Entry]) -> list[str]:
    """`plan_targets` as `/`-joined strings (what the extraction works with)."""
    if type(archive).extraction_name is Archive.extraction_name:
        keys = [entry.name for entry in entries]
    else:
        keys = [archive.extraction_name(entry) for entry in entries]
    if not all_plain(keys):
        keys = [plain_key(name) for name in keys]
    unique = set(keys)
    if len(unique) == len(keys) and MANIFEST_NAME not in unique:
        return keys
    owner: dict[str, int] = {}
    order = range(len(entries)) if archive.duplicate_wins == "first" else range(len(entries) - 1, -1, -1)
    for position in order:
        owner.setdefault(keys[position], position)
    renamed = [position for position, key in enumerate(keys) if owner[key] != position]
    if MANIFEST_NAME in owner:
        renamed.append(owner[MANIFEST_NAME])
        renamed.sort()
    taken = set(keys) | {MANIFEST_NAME}
    for key in keys:
        folder = key.rpartition("/")[0]
        while folder and folder not in taken:
            taken.add(folder)
            folder = folder.rpartition("/")[0]
    for position in renamed:
        entry = entries[position]
        folder, _, base = keys[position].rpartition("/")
        candidate = f"{base}.dup{entry.index}"
        attempt = 1
        while (f"{folder}/{candidate}" if folder else candidate) in taken:
            attempt += 1
            candidate = f"{base}.dup{entry.index}-{attempt}"
        if len(os.fsencode(candidate)) > NAME_MAX:
            raise UnsafePathError(entry.name, f"its duplicate copy's name {candidate[:24]!r}... is too long")
        if keys[position] == MANIFEST_NAME:
            import warnings

            warnings.warn(
                f"member {entry.name!r} is extracted as {candidate!r}: {MANIFEST_NAME} is the name of "
                "gamepak's manifest",
                stacklevel=4,
            )
        keys[position] = f"{folder}/{candidate}" if folder else candidate
        taken.add(keys[position])
    return keys


def extract_members(
    archive: Archive,
    entries: list[Entry],
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    manifest: bool = False,
    progress: Callable[[Entry], Any] | None = None,
    windows_names: bool | None = None,
) -> list[str]:
    """Extract `entries` of `archive` under `path` safely; returns the files written.
    `windows_names` (default: on Windows and macOS) refuses, before anything is written, names a
    Windows file system cannot hold and names that differ only in case."""
    root, keys = extract_tree(
        archive, entries, path, overwrite=overwrite, manifest=manifest, progress=progress, windows_names=windows_names
    )
    return written_paths(root, keys)


def written_paths(root: str, keys: list[str]) -> list[str]:
    """The paths of the files `extract_tree` wrote under `root`, from their keys."""
    prefix = root if root.endswith(os.sep) else root + os.sep
    if os.sep != "/":
        return [prefix + key.replace("/", os.sep) for key in keys]
    return [prefix + key for key in keys]


def extract_tree(
    archive: Archive,
    entries: list[Entry],
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    manifest: bool = False,
    progress: Callable[[Entry], Any] | None = None,
    windows_names: bool | None = None,
) -> tuple[str, list[str]]:
    """`extract_members` without its list of paths: (the folder written under, the key of each
    file written, its path under that folder with `/` between the parts; the distinct entries'
    in order). A caller that only counts the files (the CLI) so makes no path per member."""
    entries = list(dict.fromkeys(entries))  # the same entry twice is one file
    root = os.path.realpath(path)
    if manifest and len(entries) != len(archive):
        raise GamepakError("a manifest describes the whole archive: extract every member with it")
    keys = _target_keys(archive, entries)
    names = [entry.name for entry in entries]
    if windows_names or (windows_names is None and sys.platform.startswith(("win", "darwin"))):
        # Imported here: on Linux, without --windows-names, extraction loads no `core.names`.
        from ..core.names import check_windows_names

        check_windows_names(names, keys)
    if manifest:
        keys.append(MANIFEST_NAME)
        names.append(MANIFEST_NAME)
    plan = Plan(root, keys, names, overwrite)
    if manifest:
        keys.pop()
    archive._check_data(entries)
    archive.check_shared_bytes(entries)
    if manifest:
        from .manifest import manifest_bytes  # only a manifest's writing needs the module
    if not has_folder_descriptors():
        encoded = manifest_bytes(archive, entries, [key.split("/") for key in keys]) if manifest else None
        _extract_by_path(archive, entries, keys, plan, encoded, progress)
        return root, [*keys, MANIFEST_NAME] if manifest else keys

    def fill(writer: TreeWriter) -> None:
        _write_members(archive, entries, writer, keys, plan.modes, progress)
        if manifest:
            folder_fd, create_name = writer.file_slot(MANIFEST_NAME, plan.modes[-1])
            encoded = manifest_bytes(archive, entries, [key.split("/") for key in keys])
            write_file(folder_fd, create_name, MANIFEST_NAME, lambda fd: write_all(fd, encoded))

    write_plan(plan, "extract", fill)
    return root, keys


def _extract_by_path(
    archive: Archive,
    entries: list[Entry],
    keys: list[str],
    plan: Plan,
    manifest: bytes | None,
    progress: Callable[[Entry], Any] | None,
) -> None:
    """The same plan written by path, where folder descriptors are missing (Windows); see
    `PathTree` for how the guarantees stay."""
    import shutil

    tree = PathTree(plan)
    modes = plan.modes or [None] * len(keys)
    try:
        tree.start()
        for position, entry in enumerate(entries):
            with archive.open(entry) as stream:

                def copy(handle: Any, stream: Any = stream) -> None:
                    shutil.copyfileobj(stream, handle, 1 << 20)

                tree.write(keys[position], modes[position], copy)
            if progress is not None:
                progress(entry)
        if manifest is not None:
            mode = modes[len(entries)] if len(modes) > len(entries) else None
            tree.write(MANIFEST_NAME, mode, lambda handle: handle.write(manifest))
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        raise GamepakError(f"{plan.root}: cannot extract there: {exc.strerror or exc}{where}") from exc


def _write_members(
    archive: Archive,
    entries: list[Entry],
    writer: TreeWriter,
    keys: list[str],
    modes: list[str | None],
    progress: Callable[[Entry], Any] | None,
) -> None:
    """Write every member into its planned file: decoded ones here, plain byte ranges split by
    bytes over the workers."""
    jobs: list[Job] | PlannedJobs = []
    if archive._plain_ranges() and not any(modes):
        # Plain ranges, all checked against the file size by _check_data, every file new: the
        # jobs straight from the keys, made by the workers a batch at a time.
        jobs = PlannedJobs(entries, keys, writer.folder_fds)
    elif archive._plain_ranges():
        jobs = [
            (dir_fd, name, entry.offset, entry.size, position)
            for position, ((dir_fd, name), entry) in enumerate(
                zip(writer.file_slots(keys, modes), entries, strict=True)
            )
        ]
    else:
        slots = writer.file_slots(keys, modes)
        slot_of = {id(entry): position for position, entry in enumerate(entries)}
        ranges: list[Job] = []
        jobs = ranges
        for entry, data in archive._member_views(entries):
            position = slot_of[id(entry)]
            dir_fd, name = slots[position]
            if isinstance(data, RawRange):
                ranges.append((dir_fd, name, data.offset, data.size, position))
                continue
            write_file(dir_fd, name, entry.name, chunk_writer(data))
            if progress is not None:
                progress(entry)
    if jobs:
        copy_members(archive, entries, jobs, progress)
