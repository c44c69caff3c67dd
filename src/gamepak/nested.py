"""Packs inside packs: member paths like `outer.str2_pc/inner.txt`, and recursive walks.

A member counts as a nested archive when a format with a signature recognises its bytes
(structural guesses are never used here: any small member would "fit" a J2ME layout).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

from .archive import Archive, Entry
from .errors import GamepakError, MemberNotFoundError
from .registry import FORMATS


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
    from .source import Source

    source = Source.open(stream, name)
    for spec in FORMATS:
        if spec.has_magic and spec.kind == "archive" and spec.sniffer()(source) >= 0.9:
            return spec.name
    return None


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
