"""Packs inside packs: member paths like `outer.str2_pc/inner.txt`, and recursive walks.

A member counts as a nested archive when a format with a signature recognises its bytes
(structural guesses are never used here: any small member would "fit" a J2ME layout).
"""

from __future__ import annotations

import functools

from ..errors import GamepakError, MemberNotFoundError
from .archive import Archive, Entry
from .registry import FORMATS
from .source import Source

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: `typing` costs milliseconds at start-up
    from collections.abc import Callable, Iterator
    from typing import BinaryIO

# How much of each member `nested_formats` reads up front; sniffers that look further read on
# (opening the member: in a compressed pack, another pass over the stream). Two tar blocks: the
# tar sniffer reads 1024 bytes, and with 512 every member longer than that was opened again.
_HEAD_SIZE = 1024


def nested_format(archive: Archive, entry: Entry) -> str | None:
    """The name of the signature format `entry` is an archive of, or None."""
    if entry.size < 4:
        return None
    try:
        with archive.open(entry) as stream:
            return signature_format(stream, f"{archive.filename}/{entry.name}")
    except GamepakError:
        return None


def signature_format(stream: BinaryIO, name: str) -> str | None:
    """The name of the signature archive format a seekable stream holds, or None."""
    return _sniff(Source.open(stream, name))


def _sniff(source: Source) -> str | None:
    """The signature archive format whose sniffer is sure of `source`, or None."""
    for name, sniffer in _signature_sniffers():
        if sniffer(source) >= 0.9:
            return name
    return None


@functools.cache
def _signature_sniffers() -> tuple[tuple[str, Callable[[Source], float]], ...]:
    # Looked up once: `nested_formats` sniffs every member of a pack.
    return tuple((spec.name, spec.sniffer()) for spec in FORMATS if spec.has_magic and spec.kind == "archive")


class _HeadSource(Source):
    """A member's first bytes, read once; a sniffer that looks past them reads the member."""

    def __init__(self, archive: Archive, entry: Entry, head: bytes) -> None:
        # Not Source.__init__: this runs once per member, and needs no descriptor or lock.
        self.name = entry.name
        self.size = entry.size
        self.fd = None
        self._archive = archive
        self._entry = entry
        self._head = head
        self._whole: Source | None = None

    def pread(self, size: int, offset: int) -> bytes:
        if offset >= 0 and (offset + size <= len(self._head) or len(self._head) == self.size):
            return self._head[offset : offset + size]
        if self._whole is None:
            self._whole = Source.open(self._archive.open(self._entry), f"{self._archive.filename}/{self.name}")
        return self._whole.pread(size, offset)


def nested_formats(archive: Archive, entries: list[Entry] | None = None) -> dict[int, str]:
    """`nested_format` for many members at once (all by default), keyed by entry index: each
    member's head is read once, in archive order (one pass over a shared compressed stream),
    and the signature formats' sniffers run on it. Members that are no archive are left out."""
    found: dict[int, str] = {}
    wanted = archive.infolist() if entries is None else entries
    try:
        # Chunks of the head's size: a raw member costs one small read, and a compressed
        # stream is decoded once, in order.
        for entry, chunks in archive.iter_data([entry for entry in wanted if entry.size >= 4], _HEAD_SIZE):
            try:
                format_name = _sniff(_HeadSource(archive, entry, next(chunks, b"")[:_HEAD_SIZE]))
                if format_name is not None:
                    found[entry.index] = format_name
            except GamepakError:
                continue  # an unreadable member is shown as a file; reading it says why
    except GamepakError:
        pass  # a damaged stream: the members before it were classified, the rest count as files
    return found


def nested_splits(archive: Archive, path: str) -> Iterator[tuple[str, Archive, str]]:
    """(prefix, the nested archive it names, the rest of the path) for each way `path` runs
    through a member that is itself an archive, longest prefix first."""
    parts = path.split("/")
    for cut in range(len(parts) - 1, 0, -1):
        prefix = "/".join(parts[:cut])
        try:
            entry = archive.getinfo(prefix)
        except MemberNotFoundError:
            continue
        format_name = nested_format(archive, entry)
        if format_name is not None:
            yield prefix, archive.open_archive(entry, format_name), "/".join(parts[cut:])


def resolve(archive: Archive, path: str) -> tuple[Archive, Entry]:
    """The archive and entry a member path names, descending into nested archives where a
    prefix of the path is a member that is itself an archive."""
    try:
        return archive, archive.getinfo(path)
    except MemberNotFoundError:
        pass
    for _, inner, rest in nested_splits(archive, path):
        try:
            return resolve(inner, rest)
        except MemberNotFoundError:
            continue
    raise MemberNotFoundError(path, archive.filename)


def walk(archive: Archive, recursive: bool = True, prefix: str = "") -> Iterator[tuple[str, Entry, Archive]]:
    """(path, entry, the archive holding it) for every member, and with `recursive` for every
    member of nested archives too, listed right after the member that holds them."""
    for entry in archive.infolist():
        yield prefix + entry.name, entry, archive
        if recursive:
            format_name = nested_format(archive, entry)
            if format_name is not None:
                inner = archive.open_archive(entry, format_name)
                yield from walk(inner, True, f"{prefix}{entry.name}/")


def iter_named(archive: Archive, accept: Callable[[str], bool], prefix: str = "") -> Iterator[tuple[str, Entry, bytes]]:
    """(member path, entry, bytes) of every member whose name `accept`s, those of one archive
    read in one pass, then those of the archives nested in it (by their member path)."""
    entries = archive.infolist()
    chosen = [entry for entry in entries if accept(entry.name)]
    if chosen:
        for entry, chunks in archive.iter_data(chosen):
            yield prefix + entry.name, entry, b"".join(chunks)
    nested = nested_formats(archive, [entry for entry in entries if not accept(entry.name)])
    for entry in entries:
        if entry.index in nested:
            with archive.open_archive(entry, nested[entry.index]) as inner:
                yield from iter_named(inner, accept, f"{prefix}{entry.name}/")
