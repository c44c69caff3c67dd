"""Compare two packs (of any formats) or folders, member by member.

A member is compared by name: present on one side only, or changed (size or sha256 differ).
Members present on one side only but with the same bytes as one on the other side are reported
as renamed instead. Where a name is duplicated, the copy the game loads is compared (the format's
`duplicate_wins`). Header fields (`gamepak info`) are compared when both sides are packs of the
same format: a PAK and its ZIP conversion with the same members are equal. Content is hashed
only where sizes do not already settle the question; small packs listed in the same order are
compared byte for byte instead, so a diff of two small equal packs never loads `hashlib` (an
OpenSSL library whose loading alone is a fifth of Python's start-up).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..core.archive import Archive, Entry


# Bytes to read, both sides together, above which hashing each side on its own thread pays for
# importing threads and hashlib.
THREADS_PAY_OFF = 8 << 20
# Members compared byte for byte that a pack stores as plain ranges are read up to this many
# bytes at a time per side, with one read of the span they cover (`Archive.read_many`), not a
# stream each (`gamepak diff` of two equal 20-member PAKs: 81.6 -> 81.1 M instructions).
BATCH_BYTES = 1 << 20


class DiffResult:
    """The differences between side A and side B."""

    def __init__(self, a: str, b: str, format_a: str | None, format_b: str | None) -> None:
        self.a = a
        self.b = b
        self.format_a = format_a  # None for a folder
        self.format_b = format_b
        self.only_in_a: list[str] = []
        self.only_in_b: list[str] = []
        # {"name", "size_a", "size_b", "sha256_a", "sha256_b"} (hashes None when sizes differ).
        self.changed: list[dict[str, Any]] = []
        # {"a": name in A, "b": name in B, "size", "sha256"}.
        self.renamed: list[dict[str, Any]] = []
        # {"field", "a", "b"}.
        self.header: list[dict[str, Any]] = []

    @property
    def equal(self) -> bool:
        """True when no member and no compared header field differs."""
        return not (self.only_in_a or self.only_in_b or self.changed or self.renamed or self.header)

    def to_dict(self) -> dict[str, Any]:
        """The fields `gamepak diff --json` prints."""
        return {
            "a": self.a,
            "b": self.b,
            "format_a": self.format_a,
            "format_b": self.format_b,
            "equal": self.equal,
            "only_in_a": self.only_in_a,
            "only_in_b": self.only_in_b,
            "changed": self.changed,
            "renamed": self.renamed,
            "header": self.header,
        }

    def lines(self) -> list[str]:
        """The differences as lines for people, `diff`-style markers first."""
        lines = [f"- {name}" for name in self.only_in_a]
        lines += [f"+ {name}" for name in self.only_in_b]
        for change in self.changed:
            if change["size_a"] != change["size_b"]:
                lines.append(f"~ {change['name']} (size {change['size_a']} -> {change['size_b']})")
            else:
                lines.append(f"~ {change['name']} (same size {change['size_a']}, content differs)")
        lines += [f"> {rename['a']} -> {rename['b']} (renamed, same bytes)" for rename in self.renamed]
        lines += [f"! header {field['field']}: {field['a']!r} -> {field['b']!r}" for field in self.header]
        return lines

    def __repr__(self) -> str:
        return f"<DiffResult {self.a!r} vs {self.b!r} equal={self.equal}>"


class _Side:
    """One side of a diff: member name -> size, and a way to hash a member's content."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.format_name: str | None = None
        self.header: dict[str, Any] = {}
        self.sizes: dict[str, int] = {}
        self._openers: dict[str, Callable[[], Any]] = {}
        # A pack's member: the archive and entry it comes from (a folder's files: none).
        self.members: dict[str, tuple[Archive, Entry]] = {}
        self._hashes: dict[str, str] = {}
        self.closers: list[Callable[[], object]] = []
        # Called with each member's name once its bytes were read (the CLI's progress line).
        self.progress: Callable[[str], object] | None = None

    def hash_all(self, names: list[str]) -> None:
        """Hash `names` in the order they were listed (archive order): packs whose members
        share one compressed stream are then read in one pass."""
        wanted = set(names)
        for name in self.sizes:
            if name in wanted:
                self.sha256(name)

    def sha256(self, name: str) -> str:
        digest = self._hashes.get(name)
        if digest is None:
            import hashlib

            hasher = hashlib.sha256()
            with self._openers[name]() as stream:
                while chunk := stream.read(1 << 20):
                    hasher.update(chunk)
            digest = self._hashes[name] = hasher.hexdigest()
            if self.progress is not None:
                self.progress(name)
        return digest

    def close(self) -> None:
        for close in reversed(self.closers):
            close()


def _open_side(path: str, format_name: str | None, recursive: bool = False, as_extracted: bool = False) -> _Side:
    side = _Side(path)
    if os.path.isdir(path):
        from .inputs import scan_folder

        for name, file_path in scan_folder(path).members:
            if recursive and _add_nested_file(side, name, file_path):
                continue
            side.sizes[name] = os.path.getsize(file_path)
            side._openers[name] = lambda file_path=file_path: open(file_path, "rb")  # type: ignore[misc]  # noqa: SIM115
        return side
    from ..core.opening import open as open_archive

    archive = open_archive(path, format_name)
    side.closers.append(archive.close)
    side.format_name = archive.format_name
    side.header = archive.header_fields()
    _add_members(side, archive, "", recursive, as_extracted)
    return side


def _add_members(side: _Side, archive: Archive, prefix: str, recursive: bool, as_extracted: bool = False) -> None:
    """The members of `archive` as `prefix + name`, keeping the copy the game loads; with
    `recursive`, a member that is a pack is replaced by its members (OUTER/INNER); with
    `as_extracted`, named as `extract` writes them (`0.png` for a J2ME member `0`, `x` for a
    PAK's `./x`), to compare with a folder."""
    winners = {id(entry) for name, entry in archive._lookup().items() if name == entry.name}
    for entry in archive.infolist():  # archive order
        if id(entry) not in winners:
            continue
        # A name extraction refuses is compared as stored.
        name = prefix + ((archive.extracted_path(entry) or entry.name) if as_extracted else entry.name)
        if recursive:
            from ..core.nested import nested_format  # here: a plain diff looks at no nested pack

            format_name = nested_format(archive, entry)
            if format_name is not None:
                inner = archive.open_archive(entry, format_name)
                side.closers.append(inner.close)
                _add_members(side, inner, name + "/", True, as_extracted)
                continue
        side.sizes[name] = entry.size
        side._openers[name] = lambda archive=archive, entry=entry: archive.open(entry)  # type: ignore[misc]
        side.members[name] = (archive, entry)


def _add_nested_file(side: _Side, name: str, file_path: str) -> bool:
    """With `recursive`, a file of a folder side that is a pack (by its signature) shows as its
    members, as the pack it was extracted from shows it; False when it is not a pack."""
    from ..core.nested import signature_format
    from ..core.opening import open as open_archive

    with open(file_path, "rb") as handle:
        format_name = signature_format(handle, file_path)
    if format_name is None:
        return False
    archive = open_archive(file_path, format_name)
    side.closers.append(archive.close)
    _add_members(side, archive, name + "/", True)
    return True


def diff(
    a: str | os.PathLike[str],
    b: str | os.PathLike[str],
    *,
    format_a: str | None = None,
    format_b: str | None = None,
    recursive: bool = False,
    progress: Callable[[str], object] | None = None,
) -> DiffResult:
    """Compare packs or folders `a` and `b` (see the module's docstring for what counts).

    `format_a`/`format_b` name a side's format instead of detecting it. With `recursive`, packs
    inside packs (and pack files inside folders) are compared member by member, as OUTER/INNER.
    `progress(name)` is called as each member's bytes have been read, from either side (and
    from two threads when both sides are hashed at once).
    Raises the errors of `gamepak.open` when a side cannot be read."""
    a, b = os.fspath(a), os.fspath(b)
    # A pack against a folder: the pack's members named as `extract` would write them.
    a_folder, b_folder = os.path.isdir(a), os.path.isdir(b)
    side_a = _open_side(a, format_a, recursive, as_extracted=b_folder and not a_folder)
    try:
        side_b = _open_side(b, format_b, recursive, as_extracted=a_folder and not b_folder)
        side_a.progress = side_b.progress = progress
        try:
            return _compare(side_a, side_b)
        finally:
            side_b.close()
    finally:
        side_a.close()


def _hash_both(side_a: _Side, names_a: list[str], side_b: _Side, names_b: list[str]) -> None:
    """Hash members of both sides, each side in its own archive order, on two threads (sha256
    and the reads release the GIL, so both cores work)."""
    small = sum(side_a.sizes[name] for name in names_a) + sum(side_b.sizes[name] for name in names_b) < THREADS_PAY_OFF
    if not names_a or not names_b or small:
        # Threads pay off only on megabytes: importing them costs milliseconds of start-up.
        side_a.hash_all(names_a)
        side_b.hash_all(names_b)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=2) as pool:
        for future in [pool.submit(side_a.hash_all, names_a), pool.submit(side_b.hash_all, names_b)]:
            future.result()


def _byte_comparison_pays(side_a: _Side, side_b: _Side, names: list[str]) -> bool:
    """Whether the members `names` of both sides are better compared byte for byte, in pairs,
    than hashed side by side: when they are few megabytes (two hashing threads pay off only
    above that) and both sides list them in the same order (a pack whose members share one
    compressed stream is then still read front to back)."""
    if 2 * sum(side_a.sizes[name] for name in names) >= THREADS_PAY_OFF:
        return False
    wanted = set(names)
    return [name for name in side_b.sizes if name in wanted] == names


def _same_bytes(side_a: _Side, side_b: _Side, name: str) -> bool:
    """Whether member `name` holds the same bytes on both sides (sizes already equal)."""
    with side_a._openers[name]() as stream_a, side_b._openers[name]() as stream_b:
        while True:
            chunk = stream_a.read(1 << 20)
            if chunk != stream_b.read(1 << 20):
                break
            if not chunk:
                if side_a.progress is not None:
                    side_a.progress(name)
                return True
    if side_a.progress is not None:
        side_a.progress(name)
    return False


def _plain_member(side: _Side, name: str) -> tuple[Archive, Entry] | None:
    """(archive, entry) of a member its pack stores as a plain range of bytes, else None."""
    member = side.members.get(name)
    if member is None or member[0]._raw_range(member[1]) is None:
        return None
    return member


def _equal_by_bytes(side_a: _Side, side_b: _Side, names: list[str]) -> set[str]:
    """The members of `names` (sizes equal on both sides) that hold the same bytes on both
    sides: those stored as plain ranges on both sides read in batches of up to BATCH_BYTES per
    side (each batch of one pack per side), the others compared stream against stream."""
    equal: set[str] = set()
    batch: list[str] = []
    batch_bytes = 0
    packs: tuple[Archive, Archive] | None = None

    def compare_batch() -> None:
        if not batch:
            return
        assert packs is not None
        data_a = packs[0].read_many([side_a.members[name][1] for name in batch])
        data_b = packs[1].read_many([side_b.members[name][1] for name in batch])
        for name, bytes_a, bytes_b in zip(batch, data_a, data_b):
            if bytes_a == bytes_b:
                equal.add(name)
            if side_a.progress is not None:
                side_a.progress(name)
        batch.clear()

    for name in names:
        plain_a, plain_b = _plain_member(side_a, name), _plain_member(side_b, name)
        size = side_a.sizes[name]
        if plain_a is None or plain_b is None or size > BATCH_BYTES:
            if _same_bytes(side_a, side_b, name):
                equal.add(name)
            continue
        if packs != (plain_a[0], plain_b[0]) or batch_bytes + size > BATCH_BYTES:
            compare_batch()
            packs, batch_bytes = (plain_a[0], plain_b[0]), 0
        batch.append(name)
        batch_bytes += size
    compare_batch()
    return equal


def _compare(side_a: _Side, side_b: _Side) -> DiffResult:
    result = DiffResult(side_a.label, side_b.label, side_a.format_name, side_b.format_name)
    only_a = [name for name in side_a.sizes if name not in side_b.sizes]
    only_b = [name for name in side_b.sizes if name not in side_a.sizes]
    same_size = [name for name, size in side_a.sizes.items() if side_b.sizes.get(name) == size]
    compare_bytes = _byte_comparison_pays(side_a, side_b, same_size)
    if compare_bytes:
        equal = _equal_by_bytes(side_a, side_b, same_size)
    else:
        _hash_both(side_a, same_size, side_b, same_size)
    for name, size_a in side_a.sizes.items():
        size_b = side_b.sizes.get(name)
        if size_b is None:
            continue
        if size_a != size_b:
            result.changed.append(
                {"name": name, "size_a": size_a, "size_b": size_b, "sha256_a": None, "sha256_b": None}
            )
            continue
        if compare_bytes and name in equal:
            continue
        digest_a, digest_b = side_a.sha256(name), side_b.sha256(name)
        if digest_a != digest_b:
            result.changed.append(
                {"name": name, "size_a": size_a, "size_b": size_b, "sha256_a": digest_a, "sha256_b": digest_b}
            )
    # A member gone from A and one new in B with the same bytes: a rename. Only sizes that occur
    # on both sides need hashing.
    candidates: dict[tuple[int, str], list[str]] = {}
    sizes_b = {side_b.sizes[name] for name in only_b}
    sizes_a = {side_a.sizes[name] for name in only_a}
    _hash_both(
        side_a,
        [name for name in only_a if side_a.sizes[name] in sizes_b],
        side_b,
        [name for name in only_b if side_b.sizes[name] in sizes_a],
    )
    for name in only_a:
        if side_a.sizes[name] in sizes_b:
            candidates.setdefault((side_a.sizes[name], side_a.sha256(name)), []).append(name)
    renamed_a: set[str] = set()
    renamed_b: set[str] = set()
    if candidates:
        candidate_sizes = {size for size, _ in candidates}
        for name in only_b:
            size = side_b.sizes[name]
            if size not in candidate_sizes:
                continue
            waiting = candidates.get((size, side_b.sha256(name)))
            if waiting:
                old = waiting.pop(0)
                renamed_a.add(old)
                renamed_b.add(name)
                result.renamed.append({"a": old, "b": name, "size": size, "sha256": side_b.sha256(name)})
    result.only_in_a = [name for name in only_a if name not in renamed_a]
    result.only_in_b = [name for name in only_b if name not in renamed_b]
    if side_a.format_name is not None and side_a.format_name == side_b.format_name:
        for field in dict.fromkeys([*side_a.header, *side_b.header]):
            value_a, value_b = side_a.header.get(field), side_b.header.get(field)
            if value_a != value_b:
                result.header.append({"field": field, "a": value_a, "b": value_b})
    return result
