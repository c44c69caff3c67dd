"""The records of members: what an archive lists and reports, `Entry` (one member), `Problem` (one
finding of `verify`), `RawRange` (member data that is a plain byte range of the file); and what a
writer queues, `PendingMember` (a name and where its data comes from). Below `archive` and
`writer`, which both use them; format modules import them from `core.archive` as before.
"""

from __future__ import annotations

import os
import stat

from ..errors import cannot_read, irregular_kind

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any, BinaryIO, Protocol, TypeAlias

    from .snapshot import InputFile
    from .source import Source

    class MemberOrigin(Protocol):
        """The open archive a queued member comes from (`core.archive.Archive`), by what its
        readers and writers use of it: named so, not imported, as that module builds on this one."""

        _source: Source

        def namelist(self) -> Iterable[str]: ...
        def extraction_name(self, entry: Entry) -> str: ...
        def read(self, member: str | Entry) -> bytes: ...
        def open(self, member: str | Entry) -> BinaryIO: ...
        def _raw_range(self, entry: Entry) -> RawRange | None: ...
        def _check_range(self, entry: Entry) -> None: ...


class Entry:
    """One member: its name, its (decompressed) size, where its data starts in the file, and its
    stored size when that differs from `size` (compressed), else None."""

    __slots__ = ("index", "name", "offset", "size", "stored_size")

    def __init__(self, name: str, size: int, offset: int, stored_size: int | None = None, index: int = 0) -> None:
        self.name = name
        self.size = size
        self.offset = offset
        self.stored_size = stored_size
        self.index = index

    def to_dict(self) -> dict[str, Any]:
        """The fields `gamepak ls --json` prints: `stored_size` is the bytes the pack holds for
        the member (its `size` where it is stored as it is), as `info`'s total."""
        return {
            "name": self.name,
            "size": self.size,
            "offset": self.offset,
            "stored_size": self.size if self.stored_size is None else self.stored_size,
            "index": self.index,
        }

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} {self.name!r} size={self.size} offset={self.offset}"
            f" stored_size={self.stored_size}>"
        )


class Problem:
    """One finding of `Archive.check()`: an "error" (a member's bytes are wrong or unreadable) or a
    "warning" (a field breaks the game's own convention but nothing is lost)."""

    __slots__ = ("member", "message", "offset", "severity")

    def __init__(
        self, message: str, *, severity: str = "error", offset: int | None = None, member: str | None = None
    ) -> None:
        self.message = message
        self.severity = severity
        self.offset = offset
        self.member = member

    def to_dict(self) -> dict[str, Any]:
        """The fields `gamepak verify --json` prints."""
        return {"severity": self.severity, "message": self.message, "offset": self.offset, "member": self.member}

    def __repr__(self) -> str:
        return f"<Problem {self.severity}: {self.message}>"


def split_problems(problems: list[Problem]) -> tuple[list[Problem], list[Problem]]:
    """(errors, warnings) of a check: errors fail `verify`, warnings only with --strict."""
    errors = [problem for problem in problems if problem.severity == "error"]
    return errors, [problem for problem in problems if problem.severity != "error"]


class RawRange:
    """Member data that is a plain byte range of the archive file (copied without decoding)."""

    __slots__ = ("offset", "size")

    def __init__(self, offset: int, size: int) -> None:
        self.offset = offset
        self.size = size


# What `_member_data` yields for each member: a raw range, or the member's bytes in chunks.
# `_member_views` may hand out views into a buffer instead (for writing out only).
if TYPE_CHECKING:
    MemberData: TypeAlias = RawRange | Iterable[bytes]
    MemberViews: TypeAlias = RawRange | Iterable[bytes | memoryview]
else:
    MemberData = MemberViews = object  # annotations only; the real aliases above are for type checkers


class PendingMember:
    """A member queued in a writer: its name and its data (bytes, a path read at close, or a
    member of an open archive: `origin`).

    `origin` is `(archive, entry)` when the data is an existing member (edits, conversions);
    a writer of the same format may then copy the member's stored bytes unchanged. A file is
    read as a snapshot (`core.snapshot`): it must still have the `size` and `mtime_ns` it was
    queued with, else reading it raises InputChangedError."""

    __slots__ = ("data", "mtime_ns", "name", "on_written", "origin", "path", "size")

    def __init__(
        self,
        name: str,
        data: bytes | None,
        path: str | None,
        size: int,
        origin: tuple[MemberOrigin, Entry] | None = None,
        mtime_ns: int | None = None,
    ) -> None:
        self.name = name
        self.data = data
        self.path = path
        self.size = size
        self.origin = origin
        self.mtime_ns = mtime_ns
        # Called once when a writer has consumed the member (drives progress bars).
        self.on_written: Callable[[PendingMember], object] | None = None

    @classmethod
    def from_file(cls, name: str, path: str, info: os.stat_result | None = None) -> PendingMember:
        """A member whose data is the regular file at `path`, as it is now (or as `info`, its
        `os.stat`, says it is)."""
        if info is None:
            try:
                info = os.stat(path)
            except OSError as exc:
                raise cannot_read(path, exc) from exc
        if not stat.S_ISREG(info.st_mode):
            raise cannot_read(path, irregular_kind(info.st_mode))
        return cls(name, None, path, info.st_size, mtime_ns=info.st_mtime_ns)

    def consumed(self) -> None:
        """Tell the progress callback, once, that this member's data has been used."""
        if self.on_written is not None:
            callback, self.on_written = self.on_written, None
            callback(self)

    def read(self) -> bytes:
        """The whole content (for writers that must transform it)."""
        if self.data is not None:
            data = self.data
        elif self.origin is not None:
            archive, entry = self.origin
            data = archive.read(entry)
        else:
            with self.input_file() as source:
                data = source.read_all()
        self.consumed()
        return data

    def input_file(self) -> InputFile:
        """The queued file, opened to be read as a snapshot."""
        from .snapshot import InputFile  # writers only: reading a pack never needs it

        assert self.path is not None
        return InputFile(self.path, self.size, self.mtime_ns)

    def _open(self) -> BinaryIO:
        if self.origin is not None:
            archive, entry = self.origin
            return archive.open(entry)
        return self.input_file()  # type: ignore[return-value]

    def chunks(self, chunk_size: int = 1 << 20) -> Iterator[bytes]:
        """The content in chunks, without holding a large file in memory (a file is checked
        to be unchanged before the last chunk's iteration ends)."""
        if self.data is not None:
            yield self.data
        elif self.origin is not None:
            archive, entry = self.origin
            raw = archive._raw_range(entry)
            if raw is None:
                with archive.open(entry) as handle:
                    while chunk := handle.read(chunk_size):
                        yield chunk
            else:
                # The reads `archive.open(entry)` would make, without a stream object per
                # member (about a third of a small member's cost in a conversion).
                archive._check_range(entry)
                stored, position, end = archive._source, raw.offset, raw.offset + raw.size
                while position < end and (chunk := stored.pread(min(chunk_size, end - position), position)):
                    position += len(chunk)
                    yield chunk
        else:
            with self.input_file() as source:
                yield from source.chunks(chunk_size)
        self.consumed()
