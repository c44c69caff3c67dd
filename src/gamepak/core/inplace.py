"""Crash-safe edits of an archive file in place: append, make durable, then switch over.

A format's `Archive.append_edit` appends new member data (and, where the format allows, a new
directory) past everything the current header refers to, makes it durable with fsync, and only
then changes the few bytes that decide what the pack holds (a header's directory pointer, a
count, a directory slot) with one write that stays inside one memory page. The kernel copies
such a write into the page cache without checking for signals, so a kill -9 at any moment leaves
either the old pack (plus unreferenced bytes at the end) or the new one.

An edit that is refused leaves the pack byte for byte as it was: every check is made, and every
new member's bytes are read (`InPlaceFile.write_members`), before the first byte of the pack is
written; what can still fail after that is writing the pack itself.
"""

from __future__ import annotations

import contextlib
import os
import struct

from ..errors import FormatLimitError, GamepakError
from .layout import align_up
from .portable import pread, pwrite
from .writer import Output, PendingMember, copy_range, pwrite_all

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import BinaryIO

    from .archive import Archive, Entry

# Switch-over writes stay inside one page of this size (the smallest page Linux uses).
ATOMIC_UNIT = 4096


class Journal:
    """What in-place edits of one file overwrote of it as it was: its size and modification
    time, and the old bytes of every range written or cut inside that size (in the order they
    were overwritten). Enough to give the file back byte for byte (`restore`) while it is still
    what the edits left; `gamepak.patch` keeps one per pack it changes in place."""

    _HEAD = struct.Struct("<4sQqI")
    _REGION = struct.Struct("<QI")
    MAGIC = b"GPJ1"
    GAVE_UP = b"GPJ-"  # what a spilled journal holds once it gave up (LIMIT)

    # Beyond this many saved bytes (a long unreferenced tail cut off, say) the journal gives up
    # rather than hold them in memory: the file is then reverted member by member.
    LIMIT = 64 << 20

    # `count` of a spilled journal: its regions run to the end of the file.
    _OPEN_COUNT = 0xFFFFFFFF

    def __init__(self, size: int | None = None, mtime_ns: int = 0, regions: list[tuple[int, bytes]] | None = None):
        self.size = size  # None until the first in-place write
        self.mtime_ns = mtime_ns
        self.regions = regions if regions is not None else []
        self.complete = True  # False once it gave up (LIMIT)
        self.spill: int | None = None  # an fd each region is also written to, durably

    def start(self, size: int, mtime_ns: int) -> None:
        """The file as it was before the first in-place write (its header goes to `spill`)."""
        self.size, self.mtime_ns = size, mtime_ns
        if self.spill is not None:
            pwrite_all(self.spill, self._HEAD.pack(self.MAGIC, size, mtime_ns, self._OPEN_COUNT), 0)
            os.fsync(self.spill)

    def keep(self, fd: int, offset: int, size: int) -> None:
        """Save the file's bytes at `offset` (those inside its original size) before they change.
        With `spill`, they are on disk (fsync) before this returns, so a kill -9 during the edit
        leaves a journal holding every range the edit has begun to overwrite."""
        assert self.size is not None
        end = min(offset + size, self.size)
        if offset >= end or not self.complete:
            return
        if sum(len(data) for _, data in self.regions) + end - offset > self.LIMIT:
            self.complete, self.regions = False, []
            if self.spill is not None:
                os.ftruncate(self.spill, 0)
                pwrite_all(self.spill, self.GAVE_UP, 0)  # reads as a damaged journal
                os.fsync(self.spill)
            return
        data = pread(fd, end - offset, offset)
        self.regions.append((offset, data))
        if self.spill is not None:
            at = os.fstat(self.spill).st_size
            pwrite_all(self.spill, self._REGION.pack(offset, len(data)) + data, at)
            os.fsync(self.spill)

    def to_bytes(self) -> bytes:
        assert self.size is not None
        parts = [self._HEAD.pack(self.MAGIC, self.size, self.mtime_ns, len(self.regions))]
        for offset, data in self.regions:
            parts += [self._REGION.pack(offset, len(data)), data]
        return b"".join(parts)

    @classmethod
    def from_bytes(cls, data: bytes, where: str) -> Journal:
        try:
            magic, size, mtime_ns, count = cls._HEAD.unpack_from(data)
            if magic != cls.MAGIC:
                raise ValueError("not a journal")
            regions: list[tuple[int, bytes]] = []
            position = cls._HEAD.size
            spilled = count == cls._OPEN_COUNT
            while spilled or len(regions) < count:
                if spilled and position + cls._REGION.size > len(data):
                    break  # a spilled journal ends where its writer stopped
                offset, length = cls._REGION.unpack_from(data, position)
                position += cls._REGION.size
                if position + length > len(data):
                    if spilled:
                        break  # cut by a kill before that range was written over
                    raise ValueError("cut short")
                regions.append((offset, data[position : position + length]))
                position += length
        except (struct.error, ValueError) as exc:
            raise GamepakError(f"{where}: damaged in-place journal ({exc})") from None
        return cls(size, mtime_ns, regions)

    def restore(self, path: str) -> None:
        """Give `path` back its overwritten bytes, its size and its modification time.

        The edits' own steps are undone in reverse: their switch-over writes first (each inside
        one page, so atomic), which make the file read as the old pack again, since in-place
        edits never overwrite bytes the old pack refers to; then the bytes the old pack did not
        refer to, and the size. A kill -9 at any moment leaves the new pack or the old one
        (plus unreferenced bytes). Written in reverse, the earliest saved bytes win."""
        assert self.size is not None
        fd = os.open(path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
        try:
            for offset, data in reversed(self.regions):
                pwrite_all(fd, data, offset)
            os.ftruncate(fd, self.size)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.utime(path, ns=(self.mtime_ns, self.mtime_ns))


# Journals being kept, by absolute path (`journaling`): every InPlaceFile of that path records
# into it.
_JOURNALS: dict[str, Journal] = {}


@contextlib.contextmanager
def journaling(path: str, spill: int | None = None) -> Iterator[Journal]:
    """While active, in-place edits of `path` record what they overwrite in the journal given
    (and, with `spill`, an fd open for writing, durably in that file as they go: `Journal.spill`)."""
    key = os.path.abspath(path)
    journal = _JOURNALS[key] = Journal()
    journal.spill = spill
    try:
        yield journal
    finally:
        _JOURNALS.pop(key, None)


def within_one_page(offset: int, size: int) -> bool:
    """Whether `size` bytes at `offset` lie inside one page (so one write of them is atomic)."""
    return size > 0 and offset // ATOMIC_UNIT == (offset + size - 1) // ATOMIC_UNIT


class InPlaceFile:
    """An archive file opened for writing in place. The size it had when the archive was read
    is checked first: a file changed meanwhile is not touched."""

    def __init__(self, path: str, expected_size: int) -> None:
        self.path = path
        try:
            self.fd = os.open(path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise GamepakError(f"{path}: cannot open for writing: {exc.strerror}") from exc
        info = os.fstat(self.fd)
        size = info.st_size
        if size != expected_size:
            os.close(self.fd)
            raise GamepakError(f"{path}: changed since it was opened ({expected_size} -> {size} bytes)")
        self.size = size
        self.journal = _JOURNALS.get(os.path.abspath(path))
        if self.journal is not None and self.journal.size is None:
            self.journal.start(size, info.st_mtime_ns)

    def _keep(self, offset: int, size: int) -> None:
        if self.journal is not None:
            self.journal.keep(self.fd, offset, size)

    def write_members(self, placed: list[tuple[PendingMember, int]]) -> None:
        """Write new members, each at its offset (ascending, past everything the pack refers to).

        Their bytes are read first, all of them, into a scratch file laid out as they will lie
        in the pack: a member that cannot be read, or that changes while it is read, stops the
        edit before the pack changes (bytes past its live end are unreferenced but still its
        own). The block is then copied into the pack in one go, by the kernel where possible."""
        placed = [(member, offset) for member, offset in placed if member.size]
        if not placed:
            return
        start = placed[0][1]
        end = max(offset + member.size for member, offset in placed)
        self._keep(start, end - start)
        if all(member.data is not None for member, _ in placed):
            # Bytes already in memory cannot fail to be read: written where they go, once.
            out = Output(self.fd)
            for member, offset in placed:
                out.seek(offset)
                out.write_member(member)
            out.flush()
            return
        with _scratch_file(self.path) as scratch:
            out = Output(scratch.fileno())
            for member, offset in placed:
                out.seek(offset - start)  # alignment gaps stay holes: they read as zeros
                out.write_member(member)
            out.flush()
            os.ftruncate(scratch.fileno(), end - start)
            copy_range(scratch.fileno(), 0, self.fd, start, end - start)

    def write(self, data: bytes, offset: int) -> None:
        """Write bytes the current pack does not refer to."""
        self._keep(offset, len(data))
        pwrite_all(self.fd, data, offset)

    def copy(self, source_offset: int, size: int, target_offset: int) -> None:
        """Copy a range of the file to a place the current pack does not refer to."""
        self._keep(target_offset, size)
        copy_range(self.fd, source_offset, self.fd, target_offset, size)

    def truncate(self, size: int) -> None:
        """Cut unreferenced bytes off the end."""
        if self.size > size:
            self._keep(size, self.size - size)
            os.ftruncate(self.fd, size)
            self.size = size

    def sync(self) -> None:
        """Make everything written so far durable before the next switch-over write."""
        os.fsync(self.fd)

    def append_with_directory(
        self, placed: list[tuple[PendingMember, int]], directory: bytes, at: int, header: bytes
    ) -> None:
        """The edit of a pack whose directory follows the data (PAK, WAD): the new members
        where `placed` says, the new directory at `at` and the file cut after it, all on disk
        before the header naming them is switched in (at offset 0), so a kill leaves the old
        pack or the new one."""
        self.write_members(placed)
        self.write(directory, at)
        self.truncate(at + len(directory))
        self.sync()
        self.switch(header, 0)

    def switch(self, data: bytes, offset: int) -> None:
        """The one write that changes what the pack holds: inside one page, then made durable."""
        if not within_one_page(offset, len(data)):
            raise GamepakError(f"{self.path}: internal error: switch-over write of {len(data)} bytes spans pages")
        self._keep(offset, len(data))
        if pwrite(self.fd, data, offset) != len(data):
            raise GamepakError(f"{self.path}: short write at offset {offset}")
        os.fsync(self.fd)

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> InPlaceFile:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _scratch_file(path: str) -> BinaryIO:
    """A nameless temporary file, beside `path` where its folder can hold one (a kernel copy
    from the same file system may share blocks instead of copying), else in the temp folder.
    It has no name to leave behind, whatever happens to this process."""
    import tempfile

    try:
        return tempfile.TemporaryFile(dir=os.path.dirname(os.path.abspath(path)))
    except OSError:
        return tempfile.TemporaryFile()


def append_with_trailing_directory(
    path: str,
    archive: Archive,
    members: list[PendingMember],
    *,
    start: int,
    kept: Callable[[PendingMember, Entry], bytes],
    added: Callable[[PendingMember, int], bytes],
    header: Callable[[int, int, int], bytes],
    align: int = 1,
    limit: int,
    limit_message: str,
) -> None:
    """Make the pack at `path` (opened as `archive`) hold `members`, in this order, when its
    directory follows the data (PAK, WAD): members of `archive` itself stay where they are
    (`kept(member, entry)` gives their record), the others are appended from `start` (past
    everything the header refers to), each at an `align`ed offset (`added(member, offset)`
    gives their record), the new directory after them, and `header(directory offset, directory
    length, record count)` switched in last (`InPlaceFile.append_with_directory`): a kill leaves
    the old pack or the new one. FormatLimitError(`limit_message`) when the pack would end past
    `limit`, before anything is written."""
    position = start
    records = []
    appended: list[tuple[PendingMember, int]] = []
    for member in members:
        origin = member.origin
        if origin is not None and origin[0] is archive:
            records.append(kept(member, origin[1]))
            continue
        position = align_up(position, align)
        appended.append((member, position))
        records.append(added(member, position))
        position += member.size
    directory = b"".join(records)
    if position + len(directory) > limit:
        raise FormatLimitError(limit_message)
    with InPlaceFile(path, archive.size) as target:
        target.append_with_directory(appended, directory, position, header(position, len(directory), len(records)))


class FixedTable:
    """A directory that cannot move: fixed-size records right after a header that counts them
    (JoePack's FAT; a PAK directory placed at the start). Members' data follows it anywhere.

    `header(count)` gives the header bytes for a member count (they must equal the file's for
    the current count); each record keeps its member's data offset in `offset_field` at
    `offset_at`; `record(member, offset)` gives a member's record, or None when the member
    cannot be stored that way (e.g. a name longer than the field)."""

    def __init__(
        self,
        *,
        header: Callable[[int], bytes],
        record_size: int,
        records: list[bytes],
        offset_field: struct.Struct,
        offset_at: int,
        record: Callable[[PendingMember, int], bytes | None],
        align: int = 1,
        limit: int,
        limit_message: str,
    ) -> None:
        self.header = header
        self.table_offset = len(header(len(records)))
        self.record_size = record_size
        self.records = records
        self.offset_field = offset_field
        self.offset_at = offset_at
        self.record = record
        self.align = align
        self.limit = limit
        self.limit_message = limit_message

    def _slot(self, index: int) -> int:
        return self.table_offset + index * self.record_size

    def edit(self, path: str, archive: Archive, members: list[PendingMember]) -> bool:
        """Make the pack hold `members` in place, or return False having written nothing.

        New data goes past the end. Members whose data lies where a growing table needs room
        are copied to the end first, each switched over by rewriting its offset field (the pack
        still reads as the old one). New records are written past the current count, unseen.
        Then one write inside one page changes the count and the records that changed. When
        those bytes span pages, the caller rebuilds the pack."""
        entries = archive.infolist()
        old_count = len(self.records)
        old_end = self._slot(old_count)
        new_end = self._slot(len(members))
        if any(entry.size and entry.offset < old_end for entry in entries):
            return False  # data inside the table: an odd file, rebuilt rather than patched
        position = max([old_end, new_end] + [entry.offset + entry.size for entry in entries])
        moved: dict[int, int] = {}
        for entry in entries:
            if entry.size and entry.offset < new_end:
                position = align_up(position, self.align)
                moved[entry.index] = position
                position += entry.size
        on_disk = bytearray(self.header(old_count) + b"".join(self.records))
        for index, offset in moved.items():
            self.offset_field.pack_into(on_disk, self._slot(index) + self.offset_at, offset)
        table = bytearray(self.header(len(members)))
        appended: list[tuple[PendingMember, int]] = []
        for member in members:
            origin = member.origin
            if origin is not None and origin[0] is archive:
                offset = moved.get(origin[1].index, origin[1].offset)
            elif member.size == 0:
                offset = position  # takes no room: not aligned, so it never points past the end
            else:
                position = align_up(position, self.align)
                offset = position
                appended.append((member, position))
                position += member.size
            record = self.record(member, offset)
            if record is None:
                return False
            table += record
        if position > self.limit:
            raise FormatLimitError(self.limit_message)
        changed = _changed_span(on_disk, table, self._slot(min(old_count, len(members))))
        if changed is not None and not within_one_page(changed[0], changed[1] - changed[0]):
            return False
        field_size = self.offset_field.size
        if not all(within_one_page(self._slot(index) + self.offset_at, field_size) for index in moved):
            return False
        with InPlaceFile(path, archive.size) as target:
            target.write_members(appended)
            for index, offset in moved.items():
                target.copy(entries[index].offset, entries[index].size, offset)
            target.truncate(position)
            target.sync()
            for index, offset in moved.items():
                target.switch(self.offset_field.pack(offset), self._slot(index) + self.offset_at)
            if new_end > old_end:
                target.write(bytes(table[old_end:new_end]), old_end)
                target.sync()
            if changed is not None:
                target.switch(bytes(table[changed[0] : changed[1]]), changed[0])
        return True


def _changed_span(old: bytes | bytearray, new: bytes | bytearray, length: int) -> tuple[int, int] | None:
    """(first, last + 1) of the bytes that differ in the first `length` bytes, or None."""
    if old[:length] == new[:length]:
        return None
    step = ATOMIC_UNIT  # compare by pages first: a large table is not walked byte by byte
    first = next(start for start in range(0, length, step) if old[start : start + step] != new[start : start + step])
    while old[first] == new[first]:
        first += 1
    last = next(
        end for end in range(length, 0, -step) if old[max(0, end - step) : end] != new[max(0, end - step) : end]
    )
    while old[last - 1] == new[last - 1]:
        last -= 1
    return first, last
