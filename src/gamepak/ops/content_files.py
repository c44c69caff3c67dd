"""What the content commands over a pack, a folder or a loose file share (tables, zones): the
members a user names by path, file name or glob, and the changed ones written back."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Iterable, Iterator

from ..errors import GamepakError


def selected(
    source: str, found: Iterable[tuple[str, bytes]], patterns: Iterable[str], noun: str
) -> Iterator[tuple[str, bytes]]:
    """The (member path, bytes) of `found` that `patterns` name (member paths, file names or
    globs, any case; all when none); a pattern naming none is one error naming `noun`."""
    wanted = [name.replace("\\", "/").lower() for name in patterns]
    hit: set[str] = set()
    for member, data in found:
        if wanted:
            lowered = member.lower()
            names = [
                name for name in wanted if fnmatch.fnmatchcase(lowered, name) or lowered.rsplit("/", 1)[-1] == name
            ]
            if not names:
                continue
            hit.update(names)
        yield member, data
    missing = [name for name in wanted if name not in hit]
    if missing:
        raise GamepakError(f"{source}: no {noun} {', '.join(missing)}")


def write_back(source: str, changed: dict[str, bytes], is_loose: Callable[[str], bool]) -> None:
    """Write changed members back into `source`: one crash-safe edit of a pack, atomic
    rewrites of a folder's files or of a loose file (`is_loose(source)`)."""
    if not changed:
        return
    from ..core.atomic import write_bytes

    if os.path.isdir(source):
        for member, data in changed.items():
            write_bytes(os.path.join(source, *member.split("/")), data, overwrite=True)
    elif is_loose(source):
        for data in changed.values():
            write_bytes(source, data, overwrite=True)
    else:
        from .edit import edit

        with edit(source) as pack:
            for member, data in changed.items():
                pack.replace(member, data)
