"""Random access to the bytes of an archive, whatever holds them.

A `Source` reads with `os.pread` when it has a real file descriptor (thread-safe, no shared file
position) and falls back to seek+read under a lock for any other seekable binary file object.
A `MemberStream` is a seekable read-only view of one byte range of a source; opening an archive
on a `MemberStream` (a pack inside a pack) reads the outer file directly, shifted, without
copying the member anywhere.
"""

from __future__ import annotations

import io
import os
import sys
from _thread import allocate_lock
from _weakref import ref as weak_reference  # the `weakref` module's C core (see _DescriptorCloser)

from ..errors import CorruptArchiveError, GamepakError, cannot_read
from .files import open_regular_os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, BinaryIO, TypeAlias

    PathOrFile: TypeAlias = str | os.PathLike[str] | BinaryIO

    from .streams import MappedView, MemberStream, OwnedBuffer, SeekableStream  # noqa: F401 - `__getattr__`


def _portable_pread() -> Callable[[int, int, int], bytes]:
    """`os.pread`'s stand-in where the system lacks it (Windows), imported only there: a module
    less in every command elsewhere."""
    from .portable import pread

    return pread


class _DescriptorCloser:
    """Closes a descriptor once: when called (`Source.close`), or when its owner is dropped
    unclosed. `weakref.finalize`'s job, without the `weakref` module and the `atexit` hook it
    brings (a twentieth of a short command's start-up); a descriptor still open at exit is
    closed by the system."""

    __slots__ = ("_reference", "fd")
    # Closers whose descriptor is open: this keeps each alive (with its weak reference, whose
    # callback fires when the owner goes) until it has closed.
    pending: set[_DescriptorCloser] = set()

    def __init__(self, owner: object, fd: int) -> None:
        self.fd = fd
        self._reference: Any = weak_reference(owner, self._owner_dropped)
        _DescriptorCloser.pending.add(self)

    @property
    def alive(self) -> bool:
        return self in _DescriptorCloser.pending

    def __call__(self) -> None:
        try:
            _DescriptorCloser.pending.remove(self)  # atomic: two threads closing close once
        except KeyError:
            return
        self._reference = None
        os.close(self.fd)

    def _owner_dropped(self, _reference: object) -> None:
        self()


class Source:
    """Positioned reads over a file path, a file descriptor or a seekable file object."""

    _closer: _DescriptorCloser | None = None  # when the source opened its own descriptor

    def __init__(
        self,
        *,
        name: str,
        size: int,
        fd: int | None = None,
        fileobj: BinaryIO | None = None,
        base: int = 0,
        owns_fd: bool = False,
    ) -> None:
        self.name = name
        self.size = size
        self.fd = fd
        self.base = base
        self._fileobj = fileobj
        self._lock = allocate_lock()
        self._parent: Source | None = None
        # A descriptor this source opened is closed by `close()`, or when the source is dropped
        # unclosed (a pack a long-running server forgot must not keep its descriptor).
        if owns_fd and fd is not None:
            self._closer = _DescriptorCloser(self, fd)

    @classmethod
    def open(cls, target: PathOrFile, name: str | None = None) -> Source:
        """Open a path, or wrap a seekable binary file object (which the caller keeps owning)."""
        if isinstance(target, (str, os.PathLike)):
            path = os.fspath(target)
            try:
                fd, info = open_regular_os(path)
            except OSError as exc:
                # `from exc`: the web's pages tell a shortage (EMFILE) by the cause.
                raise cannot_read(path, exc) from exc
            return cls(name=name or path, size=info.st_size, fd=fd, owns_fd=True)
        # Not imported (or still being imported by another thread, its class not made yet):
        # `target` is no MemberStream.
        member_stream = getattr(sys.modules.get(f"{__package__}.streams"), "MemberStream", None)
        if member_stream is not None and isinstance(target, member_stream):
            parent = target.source
            source = cls(
                name=name or target.name,
                size=target.size,
                fd=parent.fd,
                fileobj=parent._fileobj,
                base=parent.base + target.offset,
            )
            source._parent = parent  # keeps the parent's lock shared for file objects
            source._lock = parent._lock
            return source
        fileobj = target
        label = name or str(getattr(fileobj, "name", "<stream>"))
        try:
            if not fileobj.seekable():
                raise GamepakError(f"{label}: the file object is not seekable")
            size = fileobj.seek(0, io.SEEK_END)
        except (OSError, AttributeError, ValueError) as exc:
            raise GamepakError(f"{label}: cannot seek in the file object: {exc}") from exc
        descriptor: int | None = None
        if isinstance(fileobj, (io.FileIO, io.BufferedReader, io.BufferedRandom)):
            try:
                descriptor = fileobj.fileno()
            except (OSError, ValueError):
                descriptor = None
        return cls(name=label, size=size, fd=descriptor, fileobj=fileobj)

    def pread(self, size: int, offset: int) -> bytes:
        """Up to `size` bytes at `offset` (fewer only at the end of the source)."""
        if offset < 0 or size < 0:
            raise CorruptArchiveError("negative offset or size", path=self.name, offset=offset)
        size = max(0, min(size, self.size - offset))
        if size == 0:
            return b""
        if self.fd is not None:
            read_at = getattr(os, "pread", None) or _portable_pread()
            position = self.base + offset
            chunk = read_at(self.fd, size, position)
            if len(chunk) == size or not chunk:
                return chunk  # at once, as a regular file gives it (no list, no join)
            chunks = [chunk]
            remaining = size - len(chunk)
            position += len(chunk)
            while remaining:
                chunk = read_at(self.fd, remaining, position)
                if not chunk:
                    break
                chunks.append(chunk)
                position += len(chunk)
                remaining -= len(chunk)
            return b"".join(chunks)
        assert self._fileobj is not None
        with self._lock:
            self._fileobj.seek(self.base + offset)
            return self._fileobj.read(size)

    def read_exact(self, size: int, offset: int, what: str) -> bytes:
        """Exactly `size` bytes at `offset`, or a `CorruptArchiveError` naming `what`."""
        if offset < 0 or size < 0 or offset + size > self.size:
            raise CorruptArchiveError(
                f"{what} ({size} bytes) runs past the end of the file ({self.size} bytes)",
                path=self.name,
                offset=offset,
            )
        data = self.pread(size, offset)
        if len(data) != size:
            raise CorruptArchiveError(f"{what} is truncated", path=self.name, offset=offset)
        return data

    def view(self, size: int, offset: int, what: str) -> MappedView:
        """Exactly `size` bytes at `offset`, valid inside the `with` block: a memory map of a
        large range of a real file (no copy), else the bytes read."""
        from .streams import MappedView

        return MappedView(self, size, offset, what)

    @property
    def closed(self) -> bool:
        """Whether `close()` has let go of the descriptor this source opened."""
        return self._closer is not None and not self._closer.alive

    def close(self) -> None:
        """Close the descriptor this source opened (again: nothing); reads then fail."""
        if self._closer is not None and self._closer.alive:
            self.fd = None
            self._closer()

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def __getattr__(name: str) -> object:
    """`SeekableStream`, `MemberStream` and `OwnedBuffer`, from `core.streams` (imported on
    first use, where they were moved: subclasses of `io.RawIOBase`, an ABC, cost about 0.15 M
    instructions each to make, a `bytearray` subclass 0.1 M, and listing, extracting or
    converting a PAK, a JoePack or a packfile needs none of them).
    `from gamepak.core.source import MemberStream` works as before."""
    if name in ("SeekableStream", "MemberStream", "OwnedBuffer"):
        from . import streams

        return getattr(streams, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
