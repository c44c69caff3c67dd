"""Hashing one pack's members with as few reads as its format allows: the members stored as plain
byte ranges in one front-to-back pass over the pack (`RangeHashes`), the decoded ones (compressed)
as the format decodes them. Each member's first bytes give its type and show a nested pack.
ArchiveScanner (scan.py) makes one MemberHashes per pack and writes the members rows from it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..core.archive import Archive, Entry, RawRange
from ..core.source import Source
from ..errors import GamepakError
from .detect import nested_signature
from .hashing import Hasher, RangeHashes
from .kinds import member_type
from .rows import Stats

# Bytes of a member kept to guess its type and whether it is a nested pack.
HEAD_BYTES = 4096
# After this many members in a row fail to read, the rest of the archive is not retried.
MAX_CONSECUTIVE_FAILURES = 3


class MemberHashes:
    """What hashing one pack's members found: each member's digest and type (None until it is
    read, and for one that cannot be), the nested packs among them, where the members that
    are plain byte ranges lie (hashed together in one pass), and the bytes of the decoded
    members at the positions in `keep` (peg CPU files: `kept`). `hash_decoded_members` then
    `hash_plain_members` fill it, counting the bytes read in `stats` and reporting each problem
    to `error(stage, problem, nested_path, member)`."""

    def __init__(
        self,
        entries: list[Entry],
        label: str,
        new_hasher: Callable[..., Hasher] | None,
        stats: Stats,
        error: Callable[[str, BaseException | str, str | None, str | None], None],
        keep: set[int] | frozenset[int] = frozenset(),
    ) -> None:
        self.entries = entries
        self.label = label
        self.new_hasher = new_hasher
        self.stats = stats
        self.error = error
        self.keep = keep
        self.kept: dict[int, bytes] = {}
        self.digests: list[str | None] = [None] * len(entries)
        self.kinds: list[str | None] = [None] * len(entries)
        self.nested: dict[int, str] = {}
        self.plain: list[int] = []
        self.plain_offsets: list[int] = []
        self.plain_sizes: list[int] = []

    def describe(self, position: int, head: bytes) -> str:
        """The type of member `position` from its first bytes (noting a nested pack)."""
        entry = self.entries[position]
        inner = nested_signature(head, entry.size, f"{self.label}/{entry.name}")
        if inner is None:
            return member_type(entry.name, head)
        self.nested[position] = inner
        return f"archive/{inner}"

    def hash_decoded_members(self, archive: Archive, nested_path: str) -> None:
        """Hash the members the format decodes; note where the plain ones lie (hashed later,
        in one pass). After MAX_CONSECUTIVE_FAILURES in a row, the rest is not tried."""
        entries = self.entries
        count = len(entries)
        position = 0
        failures = 0
        while position < count:
            data_iterator = archive._member_data(entries[position:])
            while position < count:
                entry = entries[position]
                try:
                    _, data = next(data_iterator)
                    if isinstance(data, RawRange):
                        self.plain.append(position)
                        self.plain_offsets.append(data.offset)
                        self.plain_sizes.append(data.size)
                    else:
                        self._hash_decoded(archive, entry, data, position)
                    failures = 0
                except StopIteration:
                    break
                except Exception as exc:
                    self.error("hash", exc, nested_path, entry.name)
                    position += 1
                    failures += 1
                    if failures >= MAX_CONSECUTIVE_FAILURES and position < count:
                        self.error(
                            "hash",
                            f"{count - position} further members not read after {failures} failures in a row",
                            nested_path,
                            None,
                        )
                        position = count
                    break  # the data iterator is finished after an error: start a new one
                position += 1

    def hash_plain_members(self, archive: Archive, nested_path: str, file_hasher: Hasher | None) -> bool:
        """Hash the plain members (and feed the whole file to `file_hasher`) in one pass;
        False when the file could not be read to its end."""
        plain, offsets, sizes = self.plain, self.plain_offsets, self.plain_sizes
        if not plain and file_hasher is None:
            return True
        try:
            archive.check_shared_bytes([self.entries[position] for position in plain])
        except GamepakError as exc:  # every chunk would be hashed once per member over it
            self.error("hash", exc, nested_path, None)
            plain, offsets, sizes = [], [], []
        source = archive._source
        ranges = RangeHashes(
            offsets,
            sizes,
            source.size,
            self.new_hasher,
            lambda index, head: self.describe(plain[index], head),
            HEAD_BYTES,
            file_hasher,
        )
        done = True
        try:
            ranges.run(_reader_into(source))
        except (OSError, GamepakError) as exc:
            self.error("hash", exc, nested_path, None)
            done = False
        for index, position in enumerate(plain):
            self.kinds[position] = ranges.described[index]
            self.digests[position] = ranges.digests[index]
            if ranges.described[index] is not None:
                self.stats.member_bytes += sizes[index]
        return done

    def _hash_decoded(self, archive: Archive, entry: Entry, data: Any, position: int) -> None:
        hasher: Hasher | None = self.new_hasher() if self.new_hasher is not None else None
        head = b""
        total = 0
        kept: list[bytes] | None = [] if position in self.keep else None
        for chunk in data:
            if len(head) < HEAD_BYTES:
                head += bytes(chunk[: HEAD_BYTES - len(head)])
            if hasher is not None:
                hasher.update(chunk)
            if kept is not None:
                kept.append(bytes(chunk))
            total += len(chunk)
        if total != entry.size:
            raise archive.corrupt(
                f"member data has {total} bytes, its entry says {entry.size}", entry.offset, entry.name
            )
        self.stats.member_bytes += total
        self.digests[position] = hasher.hexdigest() if hasher is not None else None
        self.kinds[position] = self.describe(position, head)
        if kept is not None:
            self.kept[position] = b"".join(kept)


def _reader_into(source: Source) -> Callable[[memoryview, int], int]:
    """`read_into(view, offset)` for `RangeHashes` over `source`: `preadv` straight into the
    buffer when the source has a descriptor, else the source's own reads copied in."""
    fd, base = source.fd, source.base
    if fd is not None and hasattr(os, "preadv"):
        preadv = os.preadv

        def read_into(view: memoryview, offset: int) -> int:
            return preadv(fd, [view], base + offset)

        return read_into

    def copy_into(view: memoryview, offset: int) -> int:
        data = source.pread(len(view), offset)
        view[: len(data)] = data
        return len(data)

    return copy_into
