"""The one safe extraction path, shared by every format.

Every member name becomes a target path under the destination (`plan_targets`), every member's
bytes must lie inside the archive file, and the whole tree is planned, written under temporary
names and published at once by `ops.safe_tree`, which says what that guarantees: no path
outside the destination, no link on the way, existing files refused unless `overwrite`, and
nothing left of a refused or failed extraction. Members are sent by the kernel with one
`sendfile` each where it can, else read and written (`copy_file_range` for large ones), split by
bytes over one forked process per core when there are many (`ops.copier`).

Duplicate names: the copy the game would load (`Archive.duplicate_wins`) is written under the
name; every other copy is written beside it as `NAME.dupN` (N its member index, with a further
`-K` when that name is taken too), and the manifest records which member each file holds, so
nothing is lost and rebuilds stay exact. A member named like the manifest is renamed the same way.
"""

from __future__ import annotations

import os
import sys
from operator import add

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
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

    from ..core.archive import Entry


def plan_targets(archive: Archive, entries: list[Entry]) -> list[list[str]]:
    """Target path components per entry. Copies of a duplicated name that the game would not
    load, and a member named like the manifest, get a free `.dupN` name instead (with a
    warning for the manifest)."""
    return [key.split("/") for key in _target_keys(archive, entries)]


def _unique_keys(names: list[str]) -> tuple[list[str], bool]:
    """The keys of these extraction names, and whether they are all different and none is the
    manifest's name (the common case: no file needs another name)."""
    keys = names if all_plain(names) else [plain_key(name) for name in names]
    unique = set(keys)
    return keys, len(unique) == len(keys) and MANIFEST_NAME not in unique


def _target_keys(archive: Archive, entries: list[Entry]) -> list[str]:
    """`plan_targets` as `/`-joined strings (what the extraction works with)."""
    if type(archive).extraction_name is Archive.extraction_name:
        names = [entry.name for entry in entries]
    else:
        names = [archive.extraction_name(entry) for entry in entries]
    keys, unique = _unique_keys(names)
    if unique:
        return keys
    keys = list(keys)  # renamed in place below: never the caller's list of names
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
    entries: list[Entry] | None,
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    manifest: bool = False,
    progress: Callable[[Entry], Any] | None = None,
    windows_names: bool | None = None,
) -> list[str]:
    """Extract `entries` of `archive` (None: every member) under `path` safely; returns the files
    written, one per distinct member (a manifest is written beside them, not listed).
    `windows_names` (default: on Windows and macOS) refuses, before anything is written, names
    a Windows file system cannot hold and names that differ only in case."""
    root, keys = extract_tree(
        archive, entries, path, overwrite=overwrite, manifest=manifest, progress=progress, windows_names=windows_names
    )
    return written_paths(root, keys)


def distinct_entries(entries: Iterable[Entry]) -> list[Entry]:
    """Each member once, in the order first given: a member asked for twice is extracted once
    (as `tarfile` and `zipfile` do). A member is known by its index, not by its `Entry` object:
    a lookup may make a new one each time (a PAK's `getinfo` reads its record straight from the
    directory), and a name and an entry can both stand for it."""
    seen: dict[int, Entry] = {}
    for entry in entries:
        seen.setdefault(entry.index, entry)
    return list(seen.values())


def written_paths(root: str, keys: list[str]) -> list[str]:
    """The paths of the files `extract_tree` wrote under `root`, from their keys."""
    prefix = root if root.endswith(os.sep) else root + os.sep
    if os.sep != "/":
        return [prefix + key.replace("/", os.sep) for key in keys]
    return [prefix + key for key in keys]


def extract_tree(
    archive: Archive,
    entries: list[Entry] | None,
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
    root = os.path.realpath(path)
    windows = windows_names or (windows_names is None and sys.platform.startswith(("win", "darwin")))
    if entries is None:
        column_keys = None if manifest else _extract_columns(archive, root, overwrite, progress, windows)
        if column_keys is not None:
            return root, column_keys
        entries = archive.infolist()
    entries = distinct_entries(entries)
    if manifest and len(entries) != len(archive):
        raise GamepakError("a manifest describes the whole archive: extract every member with it")
    keys = _target_keys(archive, entries)
    names = [entry.name for entry in entries]
    if windows:
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
        return root, keys  # the members' files, as below: the manifest is not a member

    def fill(writer: TreeWriter) -> None:
        _write_members(archive, entries, writer, keys, plan.modes, progress)
        if manifest:
            folder_fd, create_name = writer.file_slot(MANIFEST_NAME, plan.modes[-1])
            encoded = manifest_bytes(archive, entries, [key.split("/") for key in keys])
            write_file(folder_fd, create_name, MANIFEST_NAME, lambda fd: write_all(fd, encoded))

    write_plan(plan, "extract", fill)
    return root, keys


def _extract_columns(
    archive: Archive, root: str, overwrite: bool, progress: Callable[[Entry], Any] | None, windows_names: bool
) -> list[str] | None:
    """Every member of an archive that gives its directory as columns (`Archive._plain_columns`)
    extracted from them, without an `Entry` per member; None, having written nothing, when this
    archive or its members need more than the columns say (the entry-by-entry path then does
    it, and says what is wrong when something is: a duplicate name, a range outside the file).

    The same checks as the entry-by-entry path, made on the columns in bulk: the names' keys,
    unique; every range inside the file; the bytes read at most the file's size."""
    cls = type(archive)
    if not (
        archive._plain_ranges()
        and cls.extraction_name is Archive.extraction_name
        and cls._check_data is Archive._check_data
        and cls.check_shared_bytes is Archive.check_shared_bytes
        and has_folder_descriptors()
    ):
        return None
    columns = archive._plain_columns()
    if columns is None:
        return None
    names, offset_column, size_column = columns
    keys, unique = _unique_keys(names)
    if not unique:
        return None
    # As lists (a column's ints made once: the checks, the batches and the workers' jobs
    # each go over them again).
    offsets, sizes = list(offset_column), list(size_column)
    # Offsets and sizes are unsigned fields: a range is outside the file only past its end
    # (the exact check only where the quick bound does not already say so). Bytes read twice
    # cannot pass the limit when all of them together do not.
    file_size = archive._source.size
    if names and (
        (max(offsets) + max(sizes) > file_size and max(map(add, offsets, sizes)) > file_size)
        or sum(sizes) > archive._read_limit()
    ):
        return None
    if windows_names:
        from ..core.names import check_windows_names  # only then: see extract_members

        check_windows_names(names, keys)
    plan = Plan(root, keys, names, overwrite)
    every = _EveryEntry(archive)

    def fill(writer: TreeWriter) -> None:
        _write_members(archive, every, writer, keys, plan.modes, progress, (offsets, sizes))

    write_plan(plan, "extract", fill)
    return keys


class _EveryEntry:
    """Every member's entry by position, made only when one is asked for (a progress callback,
    an error naming its member): an extraction from the columns makes none otherwise."""

    __slots__ = ("archive", "entries")

    def __init__(self, archive: Archive) -> None:
        self.archive = archive
        self.entries: list[Entry] | None = None

    def __getitem__(self, position: int) -> Entry:
        return self.listed()[position]

    def listed(self) -> list[Entry]:
        """Every entry (made on the first call)."""
        if self.entries is None:
            self.entries = self.archive.infolist()
        return self.entries

    def __len__(self) -> int:
        return len(self.archive)


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
    entries: list[Entry] | _EveryEntry,
    writer: TreeWriter,
    keys: list[str],
    modes: list[str | None],
    progress: Callable[[Entry], Any] | None,
    columns: tuple[Sequence[int], Sequence[int]] | None = None,
) -> None:
    """Write every member into its planned file: decoded ones here, plain byte ranges split by
    bytes over the workers. `columns`: the plain ranges' (offsets, sizes), when they come from
    the directory's columns (`entries` then made only when asked for)."""
    jobs: list[Job] | PlannedJobs = []
    if archive._plain_ranges():
        # Plain ranges, all checked against the file size before: the jobs straight from the
        # keys, made by the workers a batch at a time when every file is new.
        if columns is None:
            listed = entries if isinstance(entries, list) else entries.listed()
            columns = [entry.offset for entry in listed], [entry.size for entry in listed]
        offsets, sizes = columns
        if not any(modes):
            jobs = PlannedJobs(offsets, sizes, keys, writer.folder_fds)
        else:
            jobs = [
                (dir_fd, name, offset, size, position)
                for position, ((dir_fd, name), offset, size) in enumerate(
                    zip(writer.file_slots(keys, modes), offsets, sizes, strict=True)
                )
            ]
    else:
        listed = entries if isinstance(entries, list) else entries.listed()
        slots = writer.file_slots(keys, modes)
        slot_of = {id(entry): position for position, entry in enumerate(listed)}
        ranges: list[Job] = []
        jobs = ranges
        for entry, data in archive._member_views(listed):
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
