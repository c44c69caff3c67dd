"""What the content commands over a pack, a folder or a loose file share (tables, zones): the
members a user names by path, file name or glob, and the changed ones written back."""

from __future__ import annotations

import fnmatch
import os

from ..errors import GamepakError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any

    from .edit import Editor


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


def write_back(
    source: str, changed: dict[str, bytes], is_loose: Callable[[str], bool], *, dry_run: bool = False
) -> None:
    """Write changed members back into `source`: one crash-safe edit of a pack, atomic
    rewrites of a folder's files or of a loose file (`is_loose(source)`). With `dry_run`
    nothing is written: a pack's edit is planned only (`pack_edit`)."""
    if not changed:
        return
    if os.path.isdir(source) or is_loose(source):
        if dry_run:
            return
        from ..core.atomic import write_bytes

        folder = os.path.isdir(source)
        for member, data in changed.items():
            write_bytes(os.path.join(source, *member.split("/")) if folder else source, data, overwrite=True)
        return
    with pack_edit(source, dry_run=dry_run) as pack:
        for member, data in changed.items():
            pack.replace(member, data)


def pack_edit(
    pack: str, format: str | None = None, *, options: dict[str, Any] | None = None, dry_run: bool = False
) -> _PackEditing:
    """The one crash-safe edit of `pack` a content import writes through (`with pack_edit(...)
    as editor:`), committed when the block ends without an exception. With `dry_run` the same
    edit is only planned (`Editor(plan_only=True)`: no lock, no temporaries cleared, nothing
    written), so a dry run refuses what the real run would (a name the pack's format cannot
    store, a member that is not there, the writer's options, a member's name a rebuild cannot
    store) with the same message."""
    return _PackEditing(pack, format, options, dry_run)


class _PackEditing:
    """`pack_edit`'s block (a class: `contextlib` and `typing` cost `table check` start-up time,
    tests/test_rfg_xtbl_check_report.py)."""

    def __init__(self, pack: str, format: str | None, options: dict[str, Any] | None, dry_run: bool) -> None:
        self.pack, self.format, self.options, self.dry_run = pack, format, options, dry_run

    def __enter__(self) -> Editor:
        from .edit import Editor

        self.editor = Editor(self.pack, self.format, options=self.options, plan_only=self.dry_run)
        return self.editor

    def __exit__(self, exc_type: object, *rest: object) -> None:
        editor = self.editor
        if exc_type is not None:
            editor.abort()
        elif self.dry_run:
            try:
                editor.check()
            finally:
                editor.abort()
        else:
            editor.commit()
