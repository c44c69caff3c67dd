"""Writing what gamepak makes from members (texture images, tables, zones, sprites; a mod
folder) the way members are extracted: `write_files`/`write_made_files` over `ops.safe_tree`'s
plan (names checked, nothing outside the folder, the whole set at once or not at all), and
`replace_folder` for a folder replaced as a whole."""

from __future__ import annotations

import os
import sys

from ..core.atomic import write_all
from ..core.portable import has_folder_descriptors
from ..core.stored_names import safe_parts
from ..errors import GamepakError
from .copier import write_file
from .safe_tree import PathTree, Plan, TreeWriter, all_plain, plain_key, write_plan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from array import array
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any, TypeAlias

    # A file's bytes: as they are, as pieces written one after the other (a large file made in
    # pieces is never joined: the join would hold it twice), or a function making either when
    # the file is written.
    FileData: TypeAlias = bytes | list[bytes] | Callable[[], bytes | list[bytes]]


def write_files(
    path: str | os.PathLike[str],
    files: Sequence[tuple[str, FileData]],
    *,
    overwrite: bool = False,
    windows_names: bool | None = None,
) -> list[str]:
    """Write `files` (`/`-separated name, bytes) under `path` the way members are extracted:
    names checked as member names are, no folder on the way may be a link, existing files
    refused unless `overwrite`, and (with folder descriptors) the whole set appearing at once or
    not at all. For what gamepak makes from members (texture images). A file's bytes may be a
    list of pieces, or a function making them, called when that file is written. Returns the
    files written."""
    return list(write_made_files(path, files, overwrite=overwrite, windows_names=windows_names))


def write_made_files(
    path: str | os.PathLike[str],
    files: Sequence[tuple[str, FileData]],
    *,
    overwrite: bool = False,
    windows_names: bool | None = None,
) -> Sequence[str]:
    """`write_files` for a million tiny files (a model's skins): give `files` as a sequence
    made when read (`core.lazy.Lazy`) and their bytes as functions, and no list of their
    bytes or of the paths written is ever held (each path is made when read). The names are
    kept packed (`PackedStrings`, a byte a character and 4 a name) and each file's bytes are
    made as it is written: a str per name held until the end was most of the peak."""
    root = os.path.realpath(path)
    keys, plain, twice = _made_keys(files)
    if twice:
        raise GamepakError(f"{root}: two outputs would be written as {', '.join(twice[:5])}")
    # The names as given, for messages: the keys when every name is its own key, else each
    # name made again from `files` when a message needs it.
    names: Sequence[str] = keys if plain else _names_of(files)
    if windows_names or (windows_names is None and sys.platform.startswith(("win", "darwin"))):
        from ..core.names import check_windows_names  # only then: see ops.extract

        check_windows_names(list(names), list(keys))
    plan = Plan(root, keys, names, overwrite)
    modes = plan.modes or [None] * len(keys)
    if not has_folder_descriptors():
        tree = PathTree(plan)
        try:
            tree.start()
            for key, mode, (_, data) in zip(keys, modes, files, strict=True):

                def fill_handle(handle: Any, data: FileData = data) -> None:
                    for chunk in _chunks(data):
                        handle.write(chunk)

                tree.write(key, mode, fill_handle)
        except OSError as exc:
            raise GamepakError(f"{root}: cannot write there: {exc.strerror or exc}") from exc
        return _written(root, keys)

    def fill(writer: TreeWriter) -> None:
        # Each file's slot taken as it is written: a list of a million slots would outweigh
        # the names (what `file_slots` does at once, file by file). A plain name is its own
        # key: taken from `files` as made, not decoded again from the packed keys.
        for index, ((name, data), mode) in enumerate(zip(files, modes, strict=True)):
            key = name if plain else keys[index]
            folder_fd, create_name = writer.file_slot(key, mode)

            def fill_fd(fd: int, data: FileData = data) -> None:
                for chunk in _chunks(data):
                    write_all(fd, chunk)

            write_file(folder_fd, create_name, key, fill_fd)

    write_plan(plan, "write", fill)
    return _written(root, keys)


def _chunks(data: FileData) -> Sequence[bytes]:
    """The pieces of a file's bytes, one after the other."""
    made = data() if callable(data) else data
    return made if isinstance(made, list) else [made]


def _made_keys(files: Sequence[tuple[str, object]]) -> tuple[Sequence[str], bool, list[str]]:
    """(the key of each file's name, packed; whether every name is its own key; the keys
    listed more than once, in order), in one pass over `files`. A repeated key is found by its
    hash: each hash's low bits pick a bucket of a few thousand and 32 more bits are kept in
    it (4 bytes a name, where a sorted list of the keys took 8 and the keys themselves ~65);
    only keys whose hashes repeat are compared themselves."""
    from array import array
    from itertools import islice
    from operator import is_

    from ..core.lazy import PackedStrings

    keys = PackedStrings()
    shift = min(max(len(files).bit_length() - 12, 0), 16)  # buckets of ~4096 hashes
    low = (1 << shift) - 1
    buckets = [array("I") for _ in range(1 << shift)]
    plain = True
    made = iter(files)
    # In batches, each checked by the bulk check extraction uses (`all_plain`): a step per
    # name only where a batch holds one that is not its own key.
    while names := [name for name, _ in islice(made, 1024)]:
        if all_plain(names):
            batch = names
        else:
            batch = [plain_key(name) for name in names]
            plain = plain and all(map(is_, batch, names))
        keys.extend(batch)
        for hashed in map(hash, batch):
            buckets[hashed & low].append((hashed >> shift) & 0xFFFFFFFF)
    suspects = {(number, value) for number, bucket in enumerate(buckets) for value in _repeated(bucket)}
    del buckets
    if not suspects:
        return keys, plain, []
    # Different keys may share a hash: the keys behind one are compared themselves.
    hashes = ((key, hash(key)) for key in keys)
    alike = [key for key, hashed in hashes if (hashed & low, (hashed >> shift) & 0xFFFFFFFF) in suspects]
    return keys, plain, _twice(alike)


def _repeated(values: array[int]) -> set[int]:
    """The values listed more than once."""
    if len(set(values)) == len(values):
        return set()  # the usual case, in one step
    seen: set[int] = set()
    again: set[int] = set()
    for value in values:
        if value in seen:
            again.add(value)
        seen.add(value)
    return again


def _names_of(files: Sequence[tuple[str, object]]) -> Sequence[str]:
    """Each file's name, made again from `files` when read."""
    from ..core.lazy import Lazy

    return Lazy(len(files), lambda index: files[index][0])


def _twice(keys: list[str]) -> list[str]:
    """The keys listed more than once, in order: found in a sorted copy of the list (12 bytes a
    key at most, with the sort's own room), where a set of them would take about 40."""
    from itertools import pairwise

    ordered = sorted(keys)
    return sorted({key for key, following in pairwise(ordered) if key == following})


def _written(root: str, keys: Sequence[str]) -> Sequence[str]:
    """The path of each file written, made when read (a list of a million would outweigh them)."""
    from ..core.lazy import Lazy

    return Lazy(len(keys), lambda index: os.path.join(root, *keys[index].split("/")))


def replace_folder(output: str, files: Mapping[str, bytes | Callable[[int], object]]) -> None:
    """A folder holding exactly `files` (relative `/` path -> bytes, or a function writing them
    to a file descriptor: a large file copied as a stream) at `output`, such as a mod
    `patch make --as` writes: built in a temporary folder beside it and renamed into place, so a
    failure leaves no half folder (the next run removes a temporary a killed one left); an
    existing `output` (the caller's --overwrite) goes only once the new one is in place. Every
    path is checked by extraction's rule first."""
    import shutil

    from ..core.atomic import remove_stale_temporaries, temporary_name, write_bytes, write_via_temporary

    parent, base = os.path.split(os.path.abspath(output))
    planned = {relative: safe_parts(relative) for relative in files}  # no '..', no absolute path
    remove_stale_temporaries(parent)
    building = os.path.join(parent, temporary_name(base))
    try:
        for relative, data in files.items():
            target = os.path.join(building, *planned[relative])
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if isinstance(data, bytes):
                write_bytes(target, data, overwrite=True)
            else:
                write_via_temporary(target, data, overwrite=True)
        if os.path.exists(output):
            old = os.path.join(parent, temporary_name(base))
            os.replace(output, old)
            os.replace(building, output)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(building, output)
    finally:
        shutil.rmtree(building, ignore_errors=True)
