"""What `core.source` makes of a source's bytes beyond plain reads, made only where it is used:
`SeekableStream` (the position bookkeeping of a stream) and `MemberStream` (one byte range of a
source as a read-only file object: a member opened with `Archive.open`, or a pack inside a
pack, read in place), `OwnedBuffer` (a file's bytes read for one reader) and `MappedView`
(`Source.view`'s mapping). A module of its own, imported on first use: `core.source` gives the
first three names as before."""

from __future__ import annotations

import io
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

    class Source(Protocol):
        """What these streams read through: `core.source.Source` (named by its shape, so that
        this module, which `core.source` loads on first use, imports nothing back)."""

        fd: int | None
        base: int
        size: int

        def pread(self, size: int, offset: int) -> bytes: ...

        def read_exact(self, size: int, offset: int, what: str) -> bytes: ...


# Ranges at least this large are mapped rather than read by `Source.view`.
_MAP_THRESHOLD = 1 << 20


class SeekableStream(io.RawIOBase):
    """The position bookkeeping of gamepak's read-only member streams: a subclass knows its
    `size` and implements reading at `self._position`."""

    def __init__(self, size: int, name: str) -> None:
        super().__init__()
        self.size = size
        self.name = name
        self._position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_SET:
            position = offset
        elif whence == io.SEEK_CUR:
            position = self._position + offset
        elif whence == io.SEEK_END:
            position = self.size + offset
        else:
            raise ValueError(f"invalid whence {whence}")
        if position < 0:
            # OSError, as a real file raises: zipfile probes for optional records this way.
            raise OSError(22, "negative seek position")  # EINVAL
        self._position = position
        return position


class MemberStream(SeekableStream):
    """A seekable, read-only binary stream over `size` bytes at `offset` of a source."""

    def __init__(self, source: Source, offset: int, size: int, name: str) -> None:
        super().__init__(size, name)
        self.source = source
        self.offset = offset

    def read(self, size: int | None = -1) -> bytes:
        if self.closed:
            raise ValueError("I/O operation on closed stream")
        remaining = self.size - self._position
        if size is None or size < 0 or size > remaining:
            size = remaining
        if size <= 0:
            return b""
        data = self.source.pread(size, self.offset + self._position)
        self._position += len(data)
        return data

    def readall(self) -> bytes:
        return self.read(-1)

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self.closed:
            raise ValueError("I/O operation on closed stream")
        source = self.source
        offset = self.offset + self._position
        size = min(len(buffer), self.size - self._position, source.size - offset)
        if size <= 0:
            return 0
        if source.fd is None or not hasattr(os, "preadv"):
            data = self.read(size)
            buffer[: len(data)] = data
            return len(data)
        # Straight into the caller's buffer: no bytes object in between.
        with memoryview(buffer) as view, view.cast("B")[:size] as target:
            count = os.preadv(source.fd, [target], source.base + offset)
        self._position += count
        return count


class OwnedBuffer(bytearray):
    """A file's bytes read for one reader alone, which may keep them (its arrays are views into
    them) instead of copying them first."""


class MappedView:
    """The context manager `Source.view` returns (a class: `contextlib` costs start-up time)."""

    def __init__(self, source: Source, size: int, offset: int, what: str) -> None:
        self._args = (source, size, offset, what)
        self._mapping: Any = None
        self._view: memoryview | None = None

    def __enter__(self) -> bytes | memoryview:
        source, size, offset, what = self._args
        if source.fd is None or size < _MAP_THRESHOLD or offset < 0 or offset + size > source.size:
            return source.read_exact(size, offset, what)
        import mmap

        start = source.base + offset
        page_start = start - start % mmap.ALLOCATIONGRANULARITY
        self._mapping = mmap.mmap(source.fd, start + size - page_start, access=mmap.ACCESS_READ, offset=page_start)
        self._view = memoryview(self._mapping)[start - page_start : start - page_start + size]
        return self._view

    def __exit__(self, *exc_info: object) -> None:
        if self._view is not None:
            self._view.release()
            self._mapping.close()
            self._view = self._mapping = None
