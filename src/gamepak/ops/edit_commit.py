"""What only an editor that may commit needs (`ops.edit`): the lock on the pack, the scratch
folder of rebuilt nested packs, the digest that tells whether bytes after the data were kept.
Apart from `ops.edit`, so that a dry run (an editor that only plans) loads none of it."""

from __future__ import annotations

import os

from ..errors import GamepakError


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
        raise GamepakError(f"{path}: cannot open: {exc.strerror}") from exc
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
