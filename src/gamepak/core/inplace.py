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

import os
import struct

from ..errors import FormatLimitError, GamepakError
from .layout import align_up
from .portable import pwrite
from .writer import Output, PendingMember, _pwrite_all, copy_range

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import BinaryIO

    from .archive import Archive

# Switch-over writes stay inside one page of this size (the smallest page Linux uses).
ATOMIC_UNIT = 4096


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
        size = os.fstat(self.fd).st_size
        if size != expected_size:
            os.close(self.fd)
            raise GamepakError(f"{path}: changed since it was opened ({expected_size} -> {size} bytes)")
        self.size = size

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
        _pwrite_all(self.fd, data, offset)

    def copy(self, source_offset: int, size: int, target_offset: int) -> None:
        """Copy a range of the file to a place the current pack does not refer to."""
        copy_range(self.fd, source_offset, self.fd, target_offset, size)

    def truncate(self, size: int) -> None:
        """Cut unreferenced bytes off the end."""
        if self.size > size:
            os.ftruncate(self.fd, size)
            self.size = size

    def sync(self) -> None:
        """Make everything written so far durable before the next switch-over write."""
        os.fsync(self.fd)

    def switch(self, data: bytes, offset: int) -> None:
        """The one write that changes what the pack holds: inside one page, then made durable."""
        if not within_one_page(offset, len(data)):
            raise GamepakError(f"{self.path}: internal error: switch-over write of {len(data)} bytes spans pages")
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
