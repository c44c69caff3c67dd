"""What only an editor that may commit needs (`ops.edit`): the lock on the pack, the commit
itself (nested packs rebuilt in a scratch folder, then the pack changed in place or rebuilt), and
the digest that tells whether bytes after the data were kept. Apart from `ops.edit`, so that a
dry run (an editor that only plans) loads none of it."""

from __future__ import annotations

import os

from ..core.archive import PendingMember  # loaded already: the editor has opened the pack
from ..errors import GamepakError, cannot_read

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..core.archive import Archive
    from .edit_members import PackEdit


class Scratch:
    """A temporary folder for rebuilt nested packs, made only when one is needed."""

    def __init__(self) -> None:
        self.folder: str | None = None
        self._count = 0

    def path_for(self, file_name: str) -> str:
        """A fresh path ending in `file_name` (the extension picks a writer's defaults)."""
        if self.folder is None:
            from ..core.atomic import temporary_folder

            # Named with this process's id: what a killed edit leaves, the next edit removes.
            self.folder = temporary_folder("gamepak-edit")
        self._count += 1
        folder = os.path.join(self.folder, str(self._count))
        os.mkdir(folder)
        return os.path.join(folder, file_name)

    def remove(self) -> None:
        if self.folder is not None:
            import shutil

            shutil.rmtree(self.folder, ignore_errors=True)


def lock_pack(path: str) -> int:
    """An fd holding an exclusive advisory lock on the pack: two gamepak edits of one pack at
    once would append at the same place. A second one is refused rather than made to wait,
    since what it read would be stale by the time it got the lock."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise cannot_read(path, exc) from exc
    from ..core.portable import lock_exclusive

    if not lock_exclusive(fd):
        os.close(fd)
        raise GamepakError(f"{path}: another gamepak process is editing it")
    return fd


def digest(path: str, offset: int, size: int) -> bytes:
    """The SHA-256 of `size` bytes of the file at `path` from `offset`."""
    import hashlib

    hasher = hashlib.sha256()
    with open(path, "rb") as handle:
        handle.seek(offset)
        while size > 0 and (chunk := handle.read(min(size, 1 << 20))):
            hasher.update(chunk)
            size -= len(chunk)
    return hasher.digest()


def write_changes(root: PackEdit, path: str, *, compact: bool) -> None:
    """Write the changes planned in `root` (the edit of the pack at `path`): in place where its
    format can append them and `compact` is off, else by a rebuild into a temporary file that
    replaces the pack. What was done goes into `root.result`."""
    scratch = Scratch()
    result = root.result
    try:
        members = final_members(root, scratch)
        tail = _tail(root.archive, path)
        in_place = not compact and root.archive.append_edit(path, members)
        if not in_place:
            mode = os.stat(path).st_mode & 0o7777
            root.writer(path, members).close()
            if os.stat(path).st_mode & 0o7777 != mode:
                os.chmod(path, mode)  # the rebuilt pack keeps the old one's permissions
        if tail is not None and not _tail_kept(path, *tail):
            result.dropped_tail = tail[1]
    finally:
        scratch.remove()
    result.method = "in place" if in_place else "compacted" if compact else "rebuilt"
    result.new_size = os.path.getsize(path)


def final_members(pack: PackEdit, scratch: Scratch) -> list[PendingMember]:
    """The members of `pack` to write, in order; nested packs that changed are rebuilt first."""
    members = []
    for member in pack.members:
        child = pack.children.get(id(member))
        if child is not None and child.any_change():
            built = scratch.path_for(child.writer_name)
            child.writer(built, final_members(child, scratch)).close()
            members.append(PendingMember.from_file(member.name, built))
        else:
            members.append(member)
    return members


def _tail(archive: Archive, path: str) -> tuple[int, int, bytes] | None:
    """(where the bytes after the members' data start, how many, their digest) when a pack
    whose members are plain byte ranges has any."""
    if not archive._plain_ranges():
        return None
    entries = archive.infolist()
    end = max((entry.offset + entry.size for entry in entries), default=0)
    count = archive.size - end
    if count <= 0:
        return None
    return end, count, digest(path, end, count)


def _tail_kept(path: str, end: int, count: int, old_digest: bytes) -> bool:
    """Whether the bytes `_tail` saw are still where they were."""
    return os.path.getsize(path) >= end + count and digest(path, end, count) == old_digest
