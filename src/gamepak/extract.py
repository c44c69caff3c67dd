"""The one safe extraction path, shared by every format.

1. Plan: every member name is turned into a path under the destination or refused
   (`UnsafePathError`): no `..` parts, no absolute paths or drive letters, no NUL bytes, `\\`
   counts as a separator, and no folder on the way may be a symlink. Targets that exist are
   refused unless `overwrite` is given. All of this is checked before the first byte is written.
2. Write: each file goes to a temporary name in its folder and is renamed into place, so an
   interrupted extraction leaves no partial file. Plain byte ranges are copied with `pread` or
   `copy_file_range`, on two threads for many small files.

Duplicate names: the copy the game would load (`Archive.duplicate_wins`) is written under the
name; every other copy is written beside it as `NAME.dupN` (N its member index), and the
manifest records which member each file holds, so nothing is lost and rebuilds stay exact.
"""

from __future__ import annotations

import functools
import json
import os
import re
import stat
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from .archive import RawRange, copy_range
from .atomic import write_all, write_via_temporary
from .errors import CorruptArchiveError, GamepakError, OutputExistsError, UnsafePathError

if TYPE_CHECKING:
    from .archive import Archive, Entry

MANIFEST_NAME = ".gamepak-manifest.json"
MANIFEST_VERSION = 1

_DRIVE = re.compile(r"^[A-Za-z]:")
_SEPARATORS = re.compile(r"[\\/]+")
# Below this many members or bytes, threads cost more than they save.
_THREAD_THRESHOLD = 256
_THREAD_BYTES = 64 << 20
_SMALL_COPY = 8 << 20


def safe_parts(name: str) -> list[str]:
    """The path components a member name stands for, or `UnsafePathError`."""
    if not name:
        raise UnsafePathError(name, "empty name")
    if "\0" in name:
        raise UnsafePathError(name, "NUL byte in name")
    if name[0] in "/\\":
        raise UnsafePathError(name, "absolute path")
    if _DRIVE.match(name):
        raise UnsafePathError(name, "drive letter")
    parts = [part for part in _SEPARATORS.split(name) if part not in ("", ".")]
    if ".." in parts:
        raise UnsafePathError(name, "'..' would leave the destination")
    if not parts:
        raise UnsafePathError(name, "name has no file part")
    return parts


class _Planner:
    """Turns names into checked target paths and creates the folders they need."""

    def __init__(self, root: str, overwrite: bool) -> None:
        self.root = root
        self.overwrite = overwrite
        self.checked_dirs: dict[tuple[str, ...], bool] = {(): False}  # parts -> created by us
        self.planned_files: set[tuple[str, ...]] = set()

    def folder(self, parts: tuple[str, ...], name: str) -> bool:
        """Make sure the folder exists and is no symlink; True if this run created it."""
        known = self.checked_dirs.get(parts)
        if known is not None:
            return known
        if parts in self.planned_files:
            raise GamepakError(f"member {'/'.join(parts)!r} is a file in the way of member {name!r}")
        parent_created = self.folder(parts[:-1], name)
        path = os.path.join(self.root, *parts)
        created = False
        if parent_created:
            os.mkdir(path)
            created = True
        else:
            try:
                info = os.lstat(path)
            except FileNotFoundError:
                os.mkdir(path)
                created = True
            else:
                if stat.S_ISLNK(info.st_mode):
                    raise UnsafePathError(name, f"{path} is a symlink")
                if not stat.S_ISDIR(info.st_mode):
                    raise GamepakError(f"{path}: a file is in the way of member {name!r}")
        self.checked_dirs[parts] = created
        return created

    def check_target(self, parts: list[str], name: str) -> None:
        """Refuse a target that would overwrite something (before anything is written)."""
        if tuple(parts) in self.checked_dirs:
            raise GamepakError(f"member {name!r} is in the way of a folder other members need")
        self.planned_files.add(tuple(parts))
        folder = tuple(parts[:-1])
        if self.checked_dirs.get(folder):
            return  # a folder this run created holds nothing we did not plan
        path = os.path.join(self.root, *parts)
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(info.st_mode):
            raise GamepakError(f"{path}: a folder is in the way of member {name!r}")
        if not self.overwrite:
            raise OutputExistsError(path)


def plan_targets(archive: Archive, entries: list[Entry], names_winning: set[int]) -> list[list[str]]:
    """Target path components per entry; copies of a duplicated name that the game would not
    load get a `.dupN` suffix."""
    targets = []
    for entry in entries:
        parts = safe_parts(archive.extraction_name(entry))
        if id(entry) not in names_winning:
            parts[-1] = f"{parts[-1]}.dup{entry.index}"
        targets.append(parts)
    return targets


def _winners(archive: Archive, entries: list[Entry]) -> set[int]:
    """ids of the entries that own their path (the copy the game loads, per format rules)."""
    by_path: dict[str, Entry] = {}
    ordered = entries if archive.duplicate_wins == "last" else entries[::-1]
    for entry in ordered:
        by_path["/".join(safe_parts(archive.extraction_name(entry)))] = entry
    return {id(entry) for entry in by_path.values()}


def extract_members(
    archive: Archive,
    entries: list[Entry],
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    manifest: bool = False,
    progress: Callable[[Entry], Any] | None = None,
) -> list[str]:
    """Extract `entries` of `archive` under `path` safely; returns the files written."""
    os.makedirs(path, exist_ok=True)
    root = os.path.realpath(path)
    if manifest and len(entries) != len(archive):
        raise GamepakError("a manifest describes the whole archive: extract every member with it")
    targets = plan_targets(archive, entries, _winners(archive, entries))
    planner = _Planner(root, overwrite)
    for entry, parts in zip(entries, targets, strict=False):
        if manifest and parts == [MANIFEST_NAME]:
            raise UnsafePathError(entry.name, "the member would replace the manifest")
        planner.folder(tuple(parts[:-1]), entry.name)
        planner.check_target(parts, entry.name)
    if manifest:
        planner.check_target([MANIFEST_NAME], MANIFEST_NAME)

    paths = {id(entry): os.path.join(root, *parts) for entry, parts in zip(entries, targets, strict=False)}
    source = archive._source
    raw_batch: list[tuple[Entry, str, RawRange]] = []
    for entry, data in archive._member_data(entries):
        target = paths[id(entry)]
        if isinstance(data, RawRange):
            raw_batch.append((entry, target, data))
            continue
        _write_file(target, functools.partial(_write_chunks, chunks=data))
        if progress is not None:
            progress(entry)

    def copy_raw(batch: Iterable[tuple[Entry, str, RawRange]]) -> None:
        for entry, target, data in batch:
            _write_file(target, functools.partial(_copy_raw, archive, source, data, entry=entry))
            if progress is not None:
                progress(entry)

    total_bytes = sum(data.size for _, _, data in raw_batch)
    if (
        len(raw_batch) > 1
        and source.fd is not None
        and (len(raw_batch) >= _THREAD_THRESHOLD or total_bytes >= _THREAD_BYTES)
    ):
        # The syscalls release the GIL: two threads, each given half of the bytes, keep both
        # cores busy whether the members are many and small or few and large.
        shares: tuple[list[tuple[Entry, str, RawRange]], list[tuple[Entry, str, RawRange]]] = ([], [])
        loads = [0, 0]
        for item in raw_batch:
            lighter = 0 if loads[0] <= loads[1] else 1
            shares[lighter].append(item)
            loads[lighter] += item[2].size + 4096  # a file costs something even when empty
        with ThreadPoolExecutor(max_workers=2) as pool:
            for future in [pool.submit(copy_raw, share) for share in shares]:
                future.result()
    else:
        copy_raw(raw_batch)

    written = [paths[id(entry)] for entry in entries]
    if manifest:
        write_manifest(archive, entries, targets, root)
    return written


def _write_file(path: str, fill: Callable[[int], object]) -> None:
    # The plan already refused targets that exist without --overwrite: replacing is right here,
    # and a rename costs one system call where a no-clobber link costs two.
    write_via_temporary(path, fill, overwrite=True)


def _write_chunks(fd: int, *, chunks: Iterable[bytes]) -> None:
    for chunk in chunks:
        write_all(fd, chunk)


def _copy_raw(archive: Archive, source: Any, data: RawRange, fd: int, entry: Entry) -> None:
    if data.size <= _SMALL_COPY or source.fd is None:
        position = data.offset
        remaining = data.size
        while remaining:
            chunk = source.pread(min(remaining, _SMALL_COPY), position)
            if not chunk:
                raise CorruptArchiveError(
                    "member data is truncated", path=archive.filename, offset=position, member=entry.name
                )
            write_all(fd, chunk)
            position += len(chunk)
            remaining -= len(chunk)
        return
    copy_range(source.fd, source.base + data.offset, fd, 0, data.size)


def write_manifest(archive: Archive, entries: list[Entry], targets: list[list[str]], root: str) -> str:
    """Write the manifest that lets `create` rebuild `archive` from the extracted folder."""
    layout = archive.layout()
    document = {
        "gamepak_manifest": MANIFEST_VERSION,
        "format": archive.format_name,
        "source": os.path.basename(archive.filename),
        "size": archive.size,
        "options": layout.get("options", {}),
        "members": [
            {"name": entry.name, "path": "/".join(parts), "size": entry.size}
            for entry, parts in zip(entries, targets, strict=False)
        ],
        "exact": layout.get("exact", {}),
    }
    path = os.path.join(root, MANIFEST_NAME)
    encoded = json.dumps(document, indent=1, ensure_ascii=True).encode()
    _write_file(path, lambda fd: write_all(fd, encoded))
    return path


def read_manifest(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The manifest of an extracted folder, or None when it has none. Every field is checked
    against the schema (`gamepak.manifest`): a wrong type or an absurd size is an error naming
    the field."""
    from .manifest import validate_manifest

    path = os.path.join(folder, MANIFEST_NAME)
    try:
        with open(path, "rb") as handle:
            document = json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as exc:
        raise GamepakError(f"{path}: unreadable manifest: {exc}") from exc
    return validate_manifest(document, path)
