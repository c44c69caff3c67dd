"""The reading `Archive` base, the `ArchiveWriter` base and the `Entry` they share.

A format module subclasses both. A reader implements `_load()` (parse the directory) and, when
its members are not plain byte ranges of the file, `_member_data()` and `_open_member()`. A writer
implements `_check_name()` and `_write()`. Everything else (lookup, streams, safe extraction,
manifests, nested archives, atomic output) lives here and in `extract.py`, once for all formats.
"""

from __future__ import annotations

import os
import stat
import struct

from ..errors import (
    CorruptArchiveError,
    FormatLimitError,
    GamepakError,
    InvalidOptionError,
    MemberNotFoundError,
    OutputExistsError,
    UnsafePathError,
)
from .portable import pread, pwrite
from .source import MemberStream, Source, read_whole

# `typing` and `collections.abc` cost milliseconds at import; annotations are strings here
# (PEP 563), so they are needed only by type checkers.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any, BinaryIO, ClassVar, TypeAlias

    from .snapshot import InputFile
    from .source import PathOrFile

# What a malformed file can make the standard library raise while a reader parses it; `_load`
# turns any of these that a format module did not catch itself into a CorruptArchiveError.
PARSE_ERRORS = (struct.error, ValueError, IndexError, UnicodeDecodeError, OverflowError, MemoryError)


def unsafe_name_reason(name: str) -> str | None:
    """Why a writer refuses to store `name` (it would leave the folder it is extracted to, or
    means different paths on different systems), or None when the name is fine."""
    if "\\" in name:
        return "backslash in name (use '/' between folders)"
    if name.startswith("/") or (len(name) > 1 and name[1] == ":" and name[0].isascii() and name[0].isalpha()):
        return "absolute path"
    parts = name.split("/")
    if ".." in parts:
        return "'..' would leave the folder it is extracted to"
    if not name or all(part in ("", ".") for part in parts):
        return "the name has no file part"
    if name.endswith("/"):
        return "a trailing '/' names a folder, not a file"
    return None


def decode_name(raw: bytes) -> str:
    """A member name from its stored bytes: UTF-8, with undecodable bytes kept losslessly."""
    return raw.decode("utf-8", "surrogateescape")


def encode_name(name: str) -> bytes:
    """The stored bytes of a member name; the exact inverse of `decode_name`."""
    return name.encode("utf-8", "surrogateescape")


def decode_name_fields(raw: bytes, record_size: int, name_start: int, name_size: int) -> list[str]:
    """The names of fixed-size directory records (each name ends at its first NUL or fills its
    field), decoded as `decode_name` does.

    The fastest pure-Python way measured: `struct.iter_unpack` cuts the name fields, and the
    plain `decode()` (strict UTF-8, no error handler to look up) is tried first; only a
    directory with a name that is not valid UTF-8 is decoded again name by name."""
    if not record_size:
        return []
    fields = struct.Struct(f"<{name_start}x{name_size}s{record_size - name_start - name_size}x")
    view = memoryview(raw)[: len(raw) // record_size * record_size]
    try:
        return [field.partition(b"\0")[0].decode() for (field,) in fields.iter_unpack(view)]
    except UnicodeDecodeError:
        return [decode_name(field.partition(b"\0")[0]) for (field,) in fields.iter_unpack(view)]


class NameList:
    """A read-only, list-like sequence of member names that decodes a name only when it is
    asked for: `len()` and indexing cost nothing up front, and iterating, comparing or `in`
    decode the whole directory once. `list(names)` gives a plain list."""

    __slots__ = ("_count", "_decode_all", "_decode_one", "_decoded")

    def __init__(self, count: int, decode_one: Callable[[int], str], decode_all: Callable[[], list[str]]) -> None:
        self._count = count
        self._decode_one = decode_one
        self._decode_all = decode_all
        self._decoded: list[str] | None = None

    def _list(self) -> list[str]:
        if self._decoded is None:
            self._decoded = self._decode_all()
        return self._decoded

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: Any) -> Any:
        if self._decoded is not None or isinstance(index, slice):
            return self._list()[index]
        position = index + self._count if index < 0 else index
        if not 0 <= position < self._count:
            raise IndexError("name index out of range")
        return self._decode_one(position)

    def __iter__(self) -> Iterator[str]:
        return iter(self._list())

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._list())

    def __contains__(self, name: object) -> bool:
        return name in self._list()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, NameList):
            return self._list() == other._list()
        if isinstance(other, (list, tuple)):
            return self._list() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Iterable[str]) -> list[str]:
        return [*self._list(), *other]

    def __radd__(self, other: Iterable[str]) -> list[str]:
        return [*other, *self._list()]

    def index(self, name: str, *bounds: int) -> int:
        """The position of the first `name` (ValueError if absent), as `list.index`."""
        return self._list().index(name, *bounds)

    def count(self, name: str) -> int:
        """How many members are called `name`."""
        return self._list().count(name)

    def __repr__(self) -> str:
        return repr(self._list())


class FixedRecordNames:
    """For readers whose directory is fixed-size records, each with a name field (PAK, JoePack):
    the raw directory is kept as one bytes object, the count comes from its length, and names
    are decoded only when asked for (`namelist()` is a `NameList`)."""

    _directory: bytes
    _record_size: int
    _name_start: int
    _name_size: int
    _count: int
    _decoded: list[str] | None

    def _keep_directory(self, raw: bytes, record_size: int, name_start: int, name_size: int) -> None:
        self._directory = raw
        self._record_size = record_size
        self._name_start = name_start
        self._name_size = name_size
        self._count = len(raw) // record_size if record_size else 0
        self._decoded = None

    # `Archive` keeps names in `_names`; here they are made on first use.
    @property
    def _names(self) -> list[str]:
        names = self._decoded
        if names is None:
            names = self._decoded = decode_name_fields(
                self._directory, self._record_size, self._name_start, self._name_size
            )
        return names

    @_names.setter
    def _names(self, value: list[str]) -> None:
        if value:  # the base class's initial empty list is not an answer
            self._decoded = value

    def _name_at(self, index: int) -> str:
        start = index * self._record_size + self._name_start
        return decode_name(self._directory[start : start + self._name_size].partition(b"\0")[0])

    def namelist(self) -> NameList:
        """Member names in archive order (duplicates included), decoded as they are used."""
        return NameList(self._count, self._name_at, lambda: self._names)

    def __len__(self) -> int:
        return self._count


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
        """The fields `gamepak ls --json` prints."""
        return {
            "name": self.name,
            "size": self.size,
            "offset": self.offset,
            "stored_size": self.stored_size,
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


class RawRange:
    """Member data that is a plain byte range of the archive file (copied without decoding)."""

    __slots__ = ("offset", "size")

    def __init__(self, offset: int, size: int) -> None:
        self.offset = offset
        self.size = size


# What `_member_data` yields for each member: a raw range, or the member's bytes in chunks.
if TYPE_CHECKING:
    MemberData: TypeAlias = RawRange | Iterable[bytes]
else:
    MemberData = object  # annotations only; the real alias above is for type checkers


class Archive:
    """A readable archive, in `zipfile`'s vocabulary. Open one with `gamepak.open()`."""

    format_name: ClassVar[str] = ""
    # Which copy of a duplicated name the game loads: "first" or "last".
    duplicate_wins: ClassVar[str] = "last"
    # Whether the game looks names up ignoring case (getinfo falls back to that).
    case_insensitive: ClassVar[bool] = False
    # Whether members are known by position only (named "0", "1", ...): an editor renumbers
    # the members after a removed one, and cannot rename. Such a member also answers to the
    # name `extract` gives it ("0.png": the number and the type its bytes show), in every verb.
    positional_names: ClassVar[bool] = False
    _by_extracted: dict[str, Entry] | None = None

    def __init__(self, file: PathOrFile, *, name: str | None = None) -> None:
        self._source = Source.open(file, name)
        self.filename = self._source.name
        self._names: list[str] = []
        self._entries: list[Entry] | None = None
        self._by_name: dict[str, Entry] | None = None
        try:
            self._load()
        except GamepakError:
            self._source.close()
            raise
        except PARSE_ERRORS as exc:
            self._source.close()
            raise CorruptArchiveError(f"malformed {self.format_name} data: {exc}", path=self.filename) from exc

    # -- what a format implements ------------------------------------------------------------
    def _load(self) -> None:
        """Parse the directory: set `self._names`, and `self._entries` unless
        `_build_entries` builds them later (worth it when listing names must be fast)."""
        raise NotImplementedError

    def _build_entries(self) -> list[Entry]:
        raise NotImplementedError

    def _member_data(self, entries: list[Entry]) -> Iterator[tuple[Entry, MemberData]]:
        """Each entry's data, in the given order (which is archive order when extracting all).
        Chunk iterables must be consumed before the next item is taken."""
        for entry in entries:
            self._check_range(entry)
            yield entry, RawRange(entry.offset, entry.size)

    def _raw_range(self, entry: Entry) -> RawRange | None:
        """Where a member's bytes lie unchanged in the file (writers copy them with the kernel),
        or None when reading them means decoding. A format that overrides `_member_data` or
        `_open_member` overrides this too for the members it stores plainly."""
        cls = type(self)
        if cls._member_data is not Archive._member_data or cls._open_member is not Archive._open_member:
            return None
        return RawRange(entry.offset, entry.size)

    def _open_member(self, entry: Entry) -> BinaryIO:
        """A seekable stream over one member. The default fits raw ranges."""
        self._check_range(entry)
        return MemberStream(self._source, entry.offset, entry.size, f"{self.filename}/{entry.name}")  # type: ignore[return-value]

    def extraction_name(self, entry: Entry) -> str:
        """The relative path a member is extracted to (formats without names add an extension
        that says what the content is)."""
        return entry.name

    def member_mtime(self, entry: Entry) -> float | None:
        """When a member was last modified (seconds since the epoch), for formats that store it;
        None (the default) when the format keeps no times."""
        return None

    def header_fields(self) -> dict[str, Any]:
        """Format-specific header fields for `gamepak info`."""
        return {}

    def member_compression(self, entry: Entry) -> str:
        """How a member's bytes are stored: "none", or the codec's name (formats that know it
        override this; the default can only tell stored from compressed)."""
        return "none" if entry.stored_size is None else "compressed"

    def _verify(self) -> list[str]:
        """Format-specific problems; the default checks each raw range lies inside the file."""
        problems = []
        for entry in self.infolist():
            end = entry.offset + (entry.stored_size if entry.stored_size is not None else entry.size)
            if entry.offset < 0 or entry.size < 0 or end > self._source.size:
                problems.append(
                    f"member {entry.name!r}: data at {entry.offset}..{end} lies outside the file "
                    f"({self._source.size} bytes)"
                )
        return problems

    def layout(self) -> dict[str, Any]:
        """What a manifest must keep to rebuild this file byte for byte: writer `options`
        (layout choices that survive edited members) and `exact` (hints used only while the
        members are unchanged)."""
        return {"options": {}, "exact": {}}

    def layout_options(self) -> dict[str, Any]:
        """The writer options that keep this pack's own choices (flags, alignment, field sizes):
        what an edited copy is written with. Formats override it when `layout()` is costly."""
        return dict(self.layout()["options"])

    def append_edit(self, path: str, members: list[PendingMember]) -> bool:
        """Make the file at `path` (the file this archive was opened from) hold `members`, in
        this order, by appending and switching over in place, crash-safely and without copying
        unchanged members (those whose `origin` is this archive). Return False, having written
        nothing, when the format or this particular change cannot be done that way: the caller
        then rebuilds the pack. Limits are checked before anything is written."""
        return False

    def keep_seek_points(self) -> None:
        """A hint before a pass over the members (`iter_data`) that parts of them will be read
        again (an edit about to rebuild the pack): a format that decodes shared streams may
        leave resume points during the pass, at a small cost, so that later reads start near
        their target instead of at the stream's start. The default does nothing."""

    # -- the public API ------------------------------------------------------------------------
    @property
    def size(self) -> int:
        """The archive's size in bytes."""
        return self._source.size

    def namelist(self) -> NameList:
        """Member names in archive order (duplicates included): a read-only list-like sequence
        (`list(archive.namelist())` for a list)."""
        names = self._names
        return NameList(len(names), names.__getitem__, lambda: names)

    def infolist(self) -> list[Entry]:
        """Member entries in archive order."""
        if self._entries is None:
            self._entries = self._build_entries()
        return list(self._entries)

    def _lookup(self) -> dict[str, Entry]:
        if self._by_name is None:
            entries = self.infolist()
            if self.duplicate_wins == "first":
                entries = entries[::-1]
            table = {entry.name: entry for entry in entries}
            if self.case_insensitive:
                for entry in entries:
                    table.setdefault(entry.name.lower(), entry)
            self._by_name = table
        return self._by_name

    def extracted_path(self, entry: Entry) -> str | None:
        """The path `extract` writes `entry` under, '/'-separated (`maps/x` for a PAK's
        `./maps/x`, `0.png` for a J2ME member `0`); None for a name extraction refuses."""
        from .names import safe_parts

        try:
            return "/".join(safe_parts(self.extraction_name(entry)))
        except GamepakError:
            return None

    def _extracted_names(self) -> dict[str, Entry]:
        """Entries by the path `extract` gives them (only names that differ from the stored ones;
        built on the first lookup that misses)."""
        if self._by_extracted is None:
            table: dict[str, Entry] = {}
            entries = self.infolist()
            for entry in entries[::-1] if self.duplicate_wins == "first" else entries:
                path = self.extracted_path(entry)
                if path is not None and path != entry.name:
                    table[path] = entry
            self._by_extracted = table
        return self._by_extracted

    def getinfo(self, name: str) -> Entry:
        """The entry the game would load for `name`; `MemberNotFoundError` (a KeyError) if none."""
        table = self._lookup()
        entry = table.get(name)
        if entry is None and self.case_insensitive:
            entry = table.get(name.lower())
        if entry is None:
            # The name `extract` writes the member under (a J2ME member "0" as "0.png", a
            # PAK's "./maps/x" as "maps/x"): every verb takes it too.
            entry = self._extracted_names().get(name.replace("\\", "/"))
        if entry is None:
            raise MemberNotFoundError(name, self.filename)
        return entry

    def _entry(self, member: str | Entry) -> Entry:
        return member if isinstance(member, Entry) else self.getinfo(member)

    def read(self, member: str | Entry) -> bytes:
        """A member's whole content. Memory: about its size, once (the stream fills one buffer
        that becomes the result); no more than the archive's size is allocated before the
        member's bytes arrive, whatever size its header declares."""
        entry = self._entry(member)
        with self.open(entry) as stream:
            data = read_whole(stream, entry.size, first_buffer=self.size)
        if len(data) != entry.size:
            raise self.corrupt(f"member ends after {len(data)} of its {entry.size} bytes", member=entry.name)
        return data

    def open(self, member: str | Entry) -> BinaryIO:
        """A seekable binary stream over one member, reading on demand."""
        return self._open_member(self._entry(member))

    def iter_data(
        self, members: Iterable[str | Entry] | None = None, chunk_size: int = 1 << 20
    ) -> Iterator[tuple[Entry, Iterator[bytes]]]:
        """Each member with its bytes in chunks, in the order given (archive order by default),
        decoding shared compressed streams once. Consume each member's chunks before the next."""
        entries = self.infolist() if members is None else [self._entry(m) for m in members]
        for entry, data in self._member_data(entries):
            if isinstance(data, RawRange):
                yield entry, self._raw_chunks(data, chunk_size)
            else:
                yield entry, iter(data)

    def _raw_chunks(self, data: RawRange, chunk_size: int) -> Iterator[bytes]:
        position, end = data.offset, data.offset + data.size
        while position < end:
            chunk = self._source.read_exact(min(chunk_size, end - position), position, "member data")
            position += len(chunk)
            yield chunk

    def extract(self, member: str | Entry, path: str | os.PathLike[str] = ".", *, overwrite: bool = False) -> str:
        """Extract one member under `path`; returns the file written."""
        from ..ops.extract import extract_members

        return extract_members(self, [self._entry(member)], path, overwrite=overwrite)[0]

    def extractall(
        self,
        path: str | os.PathLike[str] = ".",
        members: Iterable[str | Entry] | None = None,
        *,
        overwrite: bool = False,
        manifest: bool = False,
        progress: Any = None,
        windows_names: bool | None = None,
    ) -> list[str]:
        """Extract members (all by default) safely under `path`; returns the files written.
        With `manifest=True`, also writes what `gamepak.create` needs to rebuild the archive.
        `windows_names`: refuse names Windows cannot hold and names that differ only in case
        (default: on Windows and macOS, whose file systems need it)."""
        from ..ops.extract import extract_members

        entries = self.infolist() if members is None else [self._entry(m) for m in members]
        return extract_members(
            self,
            entries,
            path,
            overwrite=overwrite,
            manifest=manifest,
            progress=progress,
            windows_names=windows_names,
        )

    def verify(self) -> list[str]:
        """Every error found, as sentences; an empty list means the archive is sound.
        Warnings (fields that break the game's convention but lose nothing) are in `check()`."""
        return [problem.message for problem in self.check() if problem.severity == "error"]

    def check(self) -> list[Problem]:
        """Every error and warning found, with where it is. Formats override `_check()`; what
        other verbs care about is added here for every format: names `extract` refuses, and
        bytes no member or directory holds."""
        try:
            problems = self._check()
        except GamepakError as exc:
            return [Problem(str(exc), offset=getattr(exc, "offset", None), member=getattr(exc, "member", None))]
        from .names import safe_parts

        for entry in self.infolist():
            try:
                safe_parts(self.extraction_name(entry))
            except UnsafePathError as exc:
                problems.append(
                    Problem(
                        f"member {entry.name!r}: extract refuses this name: {exc.reason}",
                        severity="warning",
                        member=entry.name,
                    )
                )
        extra = self.unheld_bytes()
        if extra:
            problems.append(
                Problem(
                    f"{extra} bytes after the last member's data that nothing in the pack points to "
                    "(left by an edit, or data hidden from the game; compact drops them)",
                    severity="warning",
                    offset=self.size - extra,
                )
            )
        return problems

    def unheld_bytes(self) -> int:
        """How many bytes at the end of the file no member, header or directory holds (formats
        that can tell say; 0 by default)."""
        return 0

    def _check(self) -> list[Problem]:
        """Format-specific errors and warnings; the default turns `_verify()`'s sentences into errors."""
        return [Problem(message) for message in self._verify()]

    def open_archive(self, member: str | Entry, format: str | None = None) -> Archive:
        """Open a member that is itself an archive, without writing it anywhere."""
        from .opening import open as open_archive

        entry = self._entry(member)
        stream = self.open(entry)
        return open_archive(stream, format=format, name=f"{self.filename}/{entry.name}")

    def _check_range(self, entry: Entry) -> None:
        stored = entry.stored_size if entry.stored_size is not None else entry.size
        if entry.offset < 0 or stored < 0 or entry.offset + stored > self._source.size:
            raise CorruptArchiveError(
                f"data ({stored} bytes) runs past the end of the file ({self._source.size} bytes)",
                path=self.filename,
                offset=entry.offset,
                member=entry.name,
            )

    def _plain_ranges(self) -> bool:
        """Whether every member's data is the plain byte range `(entry.offset, entry.size)` of
        the file, so extraction may copy it without going through `_member_data`. True when the
        format keeps the default `_member_data`; a format that overrides it may say so too
        (e.g. when a pack is not compressed)."""
        return type(self)._member_data is Archive._member_data

    def _check_data(self, entries: list[Entry]) -> None:
        """Refuse, before anything is extracted, a member whose stored bytes lie outside the file.
        The default checks formats whose members are plain ranges (`_plain_ranges`); others
        check as they read (and a failed extraction leaves nothing behind), or override this."""
        if not self._plain_ranges():
            return
        file_size = self._source.size
        for entry in entries:
            if not (entry.offset >= 0 and 0 <= entry.size <= file_size - entry.offset):
                self._check_range(entry)

    def corrupt(self, message: str, offset: int | None = None, member: str | None = None) -> CorruptArchiveError:
        """A `CorruptArchiveError` about this archive, for format modules to raise."""
        return CorruptArchiveError(message, path=self.filename, offset=offset, member=member)

    def close(self) -> None:
        """Release the file (a caller-supplied file object stays open)."""
        self._source.close()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.infolist())

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        try:
            self.getinfo(name)
        except MemberNotFoundError:
            return False
        return True

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.filename!r} members={len(self)}>"


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
        origin: tuple[Archive, Entry] | None = None,
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
                raise GamepakError(f"{path}: cannot read: {exc.strerror}") from exc
        if not stat.S_ISREG(info.st_mode):
            raise GamepakError(f"{path}: not a file")
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
            with archive.open(entry) as handle:
                while chunk := handle.read(chunk_size):
                    yield chunk
        else:
            with self.input_file() as source:
                yield from source.chunks(chunk_size)
        self.consumed()


class Output:
    """The file a writer fills: sequential buffered writes, positioned patches, and kernel-side
    copies from member files."""

    _BUFFER_LIMIT = 1 << 20

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = bytearray()
        self._position = 0  # where the next write lands

    def tell(self) -> int:
        return self._position

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self._buffer += data
        self._position += len(data)
        if len(self._buffer) >= self._BUFFER_LIMIT:
            self.flush()

    def pad_to(self, position: int, fill: bytes = b"\0") -> None:
        """Write filler bytes up to `position` (a no-op if already there)."""
        if position > self._position:
            self.write(fill * (position - self._position) if len(fill) == 1 else fill[: position - self._position])

    def seek(self, position: int) -> None:
        """Continue writing at `position` (which may leave a hole, read back as zeros)."""
        self.flush()
        self._position = position

    def pwrite(self, data: bytes, position: int) -> None:
        """Write at `position` without moving the sequential write position."""
        self.flush()
        _pwrite_all(self.fd, data, position)

    def truncate(self, size: int) -> None:
        """Make the file exactly `size` bytes long (zero-extended or cut)."""
        self.flush()
        os.ftruncate(self.fd, size)

    def flush(self) -> None:
        if self._buffer:
            _pwrite_all(self.fd, self._buffer, self._position - len(self._buffer))
            self._buffer.clear()

    def write_member(self, member: PendingMember) -> None:
        """Append a member's bytes; a file on disk, or a member stored plainly in an archive on
        disk, is copied by the kernel where possible."""
        if member.data is None and member.size >= (64 << 10):
            if member.origin is None:
                self.flush()
                with member.input_file() as input_file:
                    copy_range(input_file.fileno(), 0, self.fd, self._position, member.size)
                    input_file.finish(member.size)
                self._position += member.size
                member.consumed()
                return
            archive, entry = member.origin
            raw = archive._raw_range(entry)
            source = archive._source
            if raw is not None and source.fd is not None and raw.size == member.size:
                archive._check_range(entry)
                self.flush()
                copy_range(source.fd, source.base + raw.offset, self.fd, self._position, raw.size)
                self._position += raw.size
                member.consumed()
                return
        for chunk in member.chunks():
            self.write(chunk)


def _pwrite_all(fd: int, data: bytes | bytearray | memoryview, position: int) -> None:
    view = memoryview(data)
    while view:
        written = pwrite(fd, view, position)
        view = view[written:]
        position += written


def copy_range(src_fd: int, src_offset: int, dst_fd: int, dst_offset: int, size: int) -> None:
    """Copy `size` bytes between files by offset: copy_file_range, else pread/pwrite."""
    remaining = size
    use_kernel = hasattr(os, "copy_file_range")
    while remaining:
        copied = 0
        if use_kernel:
            try:
                copied = os.copy_file_range(src_fd, dst_fd, min(remaining, 1 << 30), src_offset, dst_offset)
            except OSError:
                use_kernel = False  # EXDEV across filesystems, ENOSYS, EINVAL on special files
        if not use_kernel:
            chunk = pread(src_fd, min(remaining, 1 << 20), src_offset)
            copied = len(chunk)
            _pwrite_all(dst_fd, chunk, dst_offset)
        if copied == 0:
            raise GamepakError(f"source ended {remaining} bytes early while copying")
        remaining -= copied
        src_offset += copied
        dst_offset += copied


class ArchiveWriter:
    """Builds an archive. Create one with `gamepak.create()`; `add()` members, then `close()`.

    The output is written to a temporary file beside the target and renamed into place only
    when complete; an exception inside a `with` block leaves nothing behind.
    """

    format_name: ClassVar[str] = ""
    # Writer options this format accepts, with their defaults (documented by `gamepak formats`).
    option_defaults: ClassVar[dict[str, Any]] = {}
    # Per option, a function that returns the normalised value or raises ValueError("why");
    # every value given is checked when the writer is made, before anything is read or written.
    option_validators: ClassVar[dict[str, Callable[[Any], Any]]] = {}
    # Whether the format can hold two members of one name (added only with allow_duplicates).
    allows_duplicates: ClassVar[bool] = True
    # False for formats whose members have no names (they are numbered: `0.png`, `1`...).
    stores_names: ClassVar[bool] = True
    # True where the game looks member names up ignoring case: `A.TXT` and `a.txt` are then one
    # name, a duplicate.
    case_insensitive_names: ClassVar[bool] = False
    # True for formats whose names hold no folders (no '/').
    flat_names: ClassVar[bool] = False

    def __init__(
        self, path: str | os.PathLike[str], *, overwrite: bool = False, allow_duplicates: bool = False, **options: Any
    ) -> None:
        self.path = os.fspath(path)
        self.overwrite = overwrite
        self.allow_duplicates = allow_duplicates
        unknown = set(options) - set(self.option_defaults) - {"layout"}
        if unknown:
            raise InvalidOptionError(
                f"format {self.format_name!r} has no option {', '.join(sorted(unknown))}; "
                f"it takes: {', '.join(sorted(self.option_defaults)) or 'none'}",
                sorted(unknown)[0],
            )
        self.options: dict[str, Any] = {**self.option_defaults, **self._validated(options)}
        # The options the caller named (not defaults): a writer copying stored bytes as they are
        # must not do so when the caller asked for another compression.
        self.named_options = set(options) - {"layout"}
        # The pack an editor is rebuilding with this writer (None for a new pack).
        self.edit_of: Archive | None = None
        self._refuse_unused(options)
        self.layout: dict[str, Any] = options.get("layout") or {}
        self.members: list[PendingMember] = []
        self._names_taken: dict[str, str] = {}  # name key -> the first name queued under it
        # Called with each member as the archive is written (the CLI's progress bar).
        self.progress: Callable[[PendingMember], object] | None = None
        self._closed = False
        if not overwrite and os.path.lexists(self.path):
            raise OutputExistsError(self.path)

    def _validated(self, options: dict[str, Any]) -> dict[str, Any]:
        """The options with each value checked (and normalised) by its validator."""
        checked = {}
        for key, value in options.items():
            validator = self.option_validators.get(key)
            if key == "layout" or validator is None:
                checked[key] = value
                continue
            try:
                checked[key] = validator(value)
            except (ValueError, TypeError) as exc:
                given = "" if value is None else value
                raise InvalidOptionError(f"{self.format_name} option {key}={given}: {exc}", key) from None
        return checked

    def _unused_options(self) -> dict[str, str]:
        """Options (of `self.options`, defaults filled in) that would have no effect on this
        output, each with the reason; formats whose options depend on each other override it."""
        return {}

    def _refuse_unused(self, given: dict[str, Any]) -> None:
        """Refuse an option the caller set (to a value, not empty) that the output would ignore:
        an option is never accepted and then silently dropped."""
        unused = self._unused_options()
        for key in sorted(given):
            if key in unused and given[key] is not None:
                why = f"{self.format_name} option {key}={given[key]} has no effect: {unused[key]}"
                raise InvalidOptionError(why, key)

    def _check_name(self, name: str) -> None:
        """Refuse a name the format cannot store (raise FormatLimitError)."""

    def _write(self, out: Output, members: list[PendingMember]) -> None:
        """Write the whole archive."""
        raise NotImplementedError

    def add(self, name: str, data_or_path: bytes | bytearray | memoryview | str | os.PathLike[str]) -> None:
        """Queue a member: its bytes, or the path of a regular file read when the archive is
        written (it must still have the size and modification time it has now)."""
        if self._closed:
            raise GamepakError("the writer is closed")
        self._check_any_name(name)
        if isinstance(data_or_path, (bytes, bytearray, memoryview)):
            data = bytes(data_or_path)
            self._queue(PendingMember(name, data, None, len(data)))
        else:
            self._queue(PendingMember.from_file(name, os.fspath(data_or_path)))

    def add_pending(self, member: PendingMember) -> None:
        """Queue a member prepared elsewhere (an editor's): its name is checked as `add` checks
        it, and a file keeps the size and time it was queued with."""
        if self._closed:
            raise GamepakError("the writer is closed")
        self._check_any_name(member.name)
        self._queue(member)

    def _queue(self, member: PendingMember) -> None:
        self.members.append(member)
        self._names_taken.setdefault(self._name_key(member.name), member.name)

    def _name_key(self, name: str) -> str:
        """What makes two names the same member for the format's readers (case ignored where
        the game looks names up ignoring it)."""
        return name.lower() if self.case_insensitive_names else name

    def add_member(self, name: str, archive: Archive, member: str | Entry) -> None:
        """Queue a member of an open archive under `name`; a writer of the same format may copy
        its stored bytes unchanged. The archive must stay open until the writer is closed."""
        if self._closed:
            raise GamepakError("the writer is closed")
        self._check_any_name(name)
        entry = archive._entry(member)
        self._queue(PendingMember(name, None, None, entry.size, origin=(archive, entry)))

    def _check_any_name(self, name: str) -> None:
        """`check_name`, then refuse a name taken twice (unless allowed and possible)."""
        self.check_name(name)
        taken = self._names_taken.get(self._name_key(name))
        if taken is not None:
            same = "" if taken == name else f" (as {taken!r}: {self.format_name}'s game looks names up ignoring case)"
            if not self.allows_duplicates:
                raise FormatLimitError(f"member name {name!r} is taken{same}: {self.format_name} cannot hold two")
            if not self.allow_duplicates:
                raise FormatLimitError(
                    f"member name {name!r} is added twice{same} "
                    "(allow_duplicates=True / --allow-duplicates to keep both)"
                )

    def check_name(self, name: str) -> None:
        """Refuse a name any writer refuses (empty, NUL, '..' parts, absolute, backslash; '/' in
        a flat format) or this format cannot store (`_check_name`), without queueing anything."""
        if not isinstance(name, str):
            raise GamepakError(f"member name {name!r} is not a string")
        if not name or "\0" in name:
            raise FormatLimitError(f"member name {name!r} is empty or holds a NUL byte")
        reason = unsafe_name_reason(name)
        if reason is not None:
            raise UnsafePathError(name, reason)
        if self.flat_names and "/" in name:
            raise FormatLimitError(f"member name {name!r}: {self.format_name} names hold no folders ('/')")
        self._check_name(name)

    def close(self) -> None:
        """Write the archive and move it into place."""
        if self._closed:
            return
        self._closed = True
        from .atomic import write_via_temporary

        def fill(fd: int) -> None:
            out = Output(fd)
            for member in self.members:
                member.on_written = self.progress
            self._write(out, self.members)
            out.flush()

        write_via_temporary(self.path, fill, overwrite=self.overwrite)

    def abort(self) -> None:
        """Give up: nothing is written."""
        self._closed = True

    def __enter__(self) -> ArchiveWriter:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()
