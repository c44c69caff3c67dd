"""The reading `Archive` base. The records it deals in are `core.entry`'s (the `Entry` it lists, the
`PendingMember` a writer or an in-place append (`append_edit`) queues), how names are stored is
`stored_names`'s: format modules import all of them from here.

A format module subclasses `Archive` (and `core.writer.ArchiveWriter`). A reader implements
`_load()` (parse the directory) and, when its members are not plain byte ranges of the file,
`_member_data()` and `_open_member()`. Everything else (lookup, streams, checks, nested archives)
lives here, and safe extraction in `ops.extract`, once for all formats.
"""

from __future__ import annotations

import os
import struct

from ..errors import (
    CorruptArchiveError,
    GamepakError,
    MemberNotFoundError,
    UnsafePathError,
)
from .entry import Entry, MemberData, MemberViews, PendingMember, Problem, RawRange
from .stored_names import (  # noqa: F401 - the names format modules import from here
    FixedRecordNames,
    NameList,
    decode_name,
    decode_name_fields,
    encode_name,
    unsafe_name_reason,
)

# `typing` and `collections.abc` cost milliseconds at import; annotations are strings here
# (PEP 563), so they are needed only by type checkers.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence
    from typing import Any, BinaryIO, ClassVar, Self

    from .source import PathOrFile

# What a malformed file can make the standard library raise while a reader parses it; `_load`
# turns any of these that a format module did not catch itself into a CorruptArchiveError.
PARSE_ERRORS = (struct.error, ValueError, IndexError, UnicodeDecodeError, OverflowError, MemoryError)


# Members may share stored bytes (a pack that stores one file under two names), but bytes read
# over and over turn a small file into a huge extraction: past this much (or the file's size,
# whichever is more) of bytes read again, `Archive.check_shared_bytes` refuses.
SHARED_BYTES_FLOOR = 64 << 20


def bytes_read_again(ranges: list[tuple[int, int]]) -> tuple[int, int]:
    """(bytes in all, bytes of them that an earlier range already covers) of (offset, length)
    ranges read one after another."""
    total = covered = 0
    reach = -1  # the end of the bytes covered so far, ranges taken by start
    for start, length in sorted(ranges):
        total += length
        end = start + length
        if end > reach:
            covered += end - max(start, reach)
            reach = end
    return total, total - covered


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
    # For a format whose files hold no members (a map's lumps, a string table): where what it
    # holds comes out instead, said when `ls` or `extract` find nothing.
    contents_hint: ClassVar[str | None] = None
    _by_extracted: dict[str, Entry] | None = None

    def __init__(self, file: PathOrFile, *, name: str | None = None) -> None:
        from .source import Source  # here: a writer, which imports this module, needs no reading side

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

    def _member_views(self, entries: list[Entry]) -> Iterator[tuple[Entry, MemberViews]]:
        """`_member_data` for a caller that only writes the bytes out (extraction): chunks may
        be views into a buffer the format reuses, valid until the next member is taken (no copy
        of each member out of a larger decoded run)."""
        return self._member_data(entries)

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
        from .source import MemberStream

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
        from .stored_names import safe_parts

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
        from .files import read_whole

        entry = self._entry(member)
        with self.open(entry) as stream:
            data = read_whole(stream, entry.size, first_buffer=self.size)
        if len(data) != entry.size:
            raise self.corrupt(f"member ends after {len(data)} of its {entry.size} bytes", member=entry.name)
        return data

    def read_many(self, members: Iterable[str | Entry]) -> list[bytes]:
        """`read` of each member, in the order given. Members stored as plain ranges that lie
        close together (a track's thousands of small models) come from one read of the span
        they cover, not one read each."""
        entries = [self._entry(member) for member in members]
        ranges = [self._raw_range(entry) for entry in entries]
        if entries and all(found is not None for found in ranges):
            for entry in entries:
                self._check_range(entry)
            low = min(entry.offset for entry in entries)
            high = max(entry.offset + entry.size for entry in entries)
            # Gaps (other members, padding) cost reading them: worth it only when small.
            if high - low <= 2 * sum(entry.size for entry in entries) + (1 << 16):
                span = memoryview(self._source.read_exact(high - low, low, "member data"))
                return [bytes(span[entry.offset - low : entry.offset - low + entry.size]) for entry in entries]
        return [self.read(entry) for entry in entries]

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
        """Extract members (all by default) safely under `path`; returns the files written, one
        per member. With `manifest=True`, also writes what `gamepak.create` needs to rebuild
        the archive (`.gamepak-manifest.json` under `path`, not in the list returned).
        `windows_names`: refuse names Windows cannot hold and names that differ only in case
        (default: on Windows and macOS, whose file systems need it)."""
        from ..ops.extract import extract_members
        from .collector import collector_paused

        with collector_paused():  # no collection walks the entries and copy jobs as they are made
            entries = None  # every member: read from the directory's columns where it can be (no entries)
            if members is not None:  # entries as they are: no method call per member
                entries = [member if isinstance(member, Entry) else self.getinfo(member) for member in members]
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
        from .stored_names import safe_parts

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
        try:
            self.check_shared_bytes(self.infolist())
        except CorruptArchiveError as exc:  # as `extract` of every member would refuse it
            problems.append(Problem(f"extract refuses the whole archive: {exc.reason}", severity="warning"))
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
        from .detection import open_reader

        entry = self._entry(member)
        stream = self.open(entry)
        inner: Archive = open_reader(stream, format, name=f"{self.filename}/{entry.name}")
        return inner

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

    def _plain_columns(self) -> tuple[list[str], Sequence[int], Sequence[int]] | None:
        """Every member's name, offset and size, in archive order, as three columns made without
        an `Entry` per member (what an extraction of every member needs: 20,000 entries are about
        a tenth of its work before the first file is written), for a format whose members are
        plain ranges (`_plain_ranges`) and whose directory holds them as they are; None (the
        default) where they take more work to get."""
        return None

    def _stored_ranges(self, entries: list[Entry]) -> list[tuple[int, int]] | None:
        """(offset, length) of the bytes each member's data is read from in the file, when that
        is what `offset` and the stored size say (the default: plain ranges); None for a format
        whose offsets mean something else (a member inside a compressed block). Extraction
        uses them to refuse members that share their bytes many times over."""
        if not self._plain_ranges():
            return None
        return [(entry.offset, entry.size) for entry in entries]

    def check_shared_bytes(self, entries: list[Entry]) -> None:
        """Refuse reading all of `entries` when their stored bytes overlap so much that more than
        the file's size (at least `SHARED_BYTES_FLOOR`) would be read again: an archive of a few
        megabytes listing a thousand members over the same bytes would extract (or hash) gigabytes;
        for a zip, a thousand names over one compressed kernel, terabytes."""
        limit = self._read_limit()
        # The default ranges' lengths are the sizes: summed first, without a list of pairs
        # (20,000 members: 2.4 -> 0.5 ms).
        default = type(self)._stored_ranges is Archive._stored_ranges and self._plain_ranges()
        if default and sum(entry.size for entry in entries) <= limit:
            return
        ranges = self._stored_ranges(entries)
        if not ranges:
            return
        if sum(length for _, length in ranges) <= limit:
            return  # not even all of it read twice could pass the limit: no sort needed
        total, again = bytes_read_again(ranges)
        if again > limit:
            raise CorruptArchiveError(
                f"members share their stored bytes: reading these {len(entries)} would read {total} bytes from a "
                f"{self._source.size}-byte file, {again} of them more than once; take the members you need by name",
                path=self.filename,
            )

    def _read_limit(self) -> int:
        """The most bytes an extraction of members may read in all (`check_shared_bytes`)."""
        return max(self._source.size, SHARED_BYTES_FLOOR)

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

    def __enter__(self) -> Self:
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
