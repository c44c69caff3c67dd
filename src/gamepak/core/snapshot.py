"""Input files as writers see them: which file a path is (`core.portable.file_identity`,
`same_file`), and its bytes as one snapshot.

A file is known by its device and inode number, not its path: a hard link, a symlink or a path
spelled another way still names the same file, and a pack must never be its own input (an
in-place edit would read bytes it is overwriting).

A writer lays a pack out from each input file's size as it was when the file was queued, and
reads the file later. An `InputFile` checks the size and modification time the file was queued
with when it is opened, and again after it was read, and that exactly that many bytes were read:
a file that grew, shrank or was rewritten meanwhile raises `InputChangedError` instead of giving
a pack whose directory disagrees with its data (the writer then drops what it wrote). A change
that keeps both the size and the modification time cannot be seen this way.
"""

from __future__ import annotations

import io
import os

from ..errors import cannot_read  # InputChangedError, rarely raised, where it is raised

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator


def _changed_error(error: Exception) -> bool:
    from ..errors import InputChangedError  # made on first use: only when a read failed

    return isinstance(error, InputChangedError)


class InputFile(io.FileIO):
    """An input file opened for reading, which must still be `size` bytes long and modified
    at `mtime_ns` (when given; else when it is opened). Read it with `read_all()` or `chunks()`,
    which check it afterwards, or read it otherwise and call `finish()`. Leaving a `with` block
    on an exception reports a file that changed meanwhile as the cause."""

    def __init__(self, path: str, size: int, mtime_ns: int | None = None) -> None:
        try:
            super().__init__(path, "r")
        except OSError as exc:
            raise cannot_read(path, exc) from exc
        self.path = path
        self.size = size
        info = self._stat()
        self.mtime_ns = info.st_mtime_ns if mtime_ns is None else mtime_ns
        try:
            self._check(info)
        except BaseException:
            self.close()
            raise

    def _stat(self) -> os.stat_result:
        try:
            return os.fstat(self.fileno())
        except OSError as exc:
            raise cannot_read(self.path, exc) from exc

    def _check(self, info: os.stat_result, bytes_read: int | None = None) -> None:
        if info.st_size != self.size:
            why = f"{self.size} -> {info.st_size} bytes"
        elif info.st_mtime_ns != self.mtime_ns:
            why = "modified meanwhile"
        elif bytes_read is not None and bytes_read != self.size:
            why = f"read {bytes_read} of its {self.size} bytes"
        else:
            return
        from ..errors import InputChangedError  # rarely raised: made on first use

        raise InputChangedError(self.path, why)

    def finish(self, bytes_read: int) -> None:
        """Check, after reading `bytes_read` bytes from the start, that they were the whole file
        as it was queued."""
        self._check(self._stat(), bytes_read)

    def read_all(self) -> bytes:
        """The whole content, checked (memory: its size, once)."""
        from .files import read_whole

        try:
            data = read_whole(self, self.size)
        except OSError as exc:
            raise cannot_read(self.path, exc) from exc
        self.finish(len(data))
        return data

    def chunks(self, chunk_size: int = 1 << 20) -> Iterator[bytes]:
        """The content in chunks; checked after the last one, before the iteration ends."""
        remaining = self.size
        while remaining:
            try:
                chunk = self.read(min(chunk_size, remaining))
            except OSError as exc:
                raise cannot_read(self.path, exc) from exc
            if not chunk:
                break
            remaining -= len(chunk)
            yield chunk
        self.finish(self.size - remaining)

    def __exit__(self, exc_type: object, exc: object, traceback: object) -> None:
        try:
            if isinstance(exc, Exception) and not self.closed and not _changed_error(exc):
                # A read that failed because the file changed (it ended early) says so.
                self._check(self._stat())
        finally:
            self.close()
