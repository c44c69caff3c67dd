"""Crash-safe edits of an archive file in place: append, make durable, then switch over.

A format's `Archive.append_edit` appends new member data (and, where the format allows, a new
directory) past everything the current header refers to, makes it durable with fsync, and only
then changes the few bytes that decide what the pack holds (a header's directory pointer, a
count, a directory slot) with one write that stays inside one memory page. The kernel copies
such a write into the page cache without checking for signals, so a kill -9 at any moment leaves
either the old pack (plus unreferenced bytes at the end) or the new one.
"""

from __future__ import annotations

import os

from .archive import Output, PendingMember, _pwrite_all, copy_range
from .errors import GamepakError

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

    def write_member(self, member: PendingMember, offset: int) -> None:
        """Write a member's bytes at `offset` (files are copied by the kernel where possible)."""
        out = Output(self.fd)
        out.seek(offset)
        out.write_member(member)
        out.flush()

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
        if os.pwrite(self.fd, data, offset) != len(data):
            raise GamepakError(f"{self.path}: short write at offset {offset}")
        os.fsync(self.fd)

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> InPlaceFile:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
