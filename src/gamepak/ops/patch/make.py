"""`make`: the member-level differences between a base and a modded copy, as a patch file.

Two packs, or two folders (a game's data folder: files compared by relative path; files that are
packs compared member by member). Members are compared by their bytes, not by where the pack
stores them, and packs nested in members (`misc.vpp_pc/zone.str2_pc/x.cpeg_pc`) are compared
member by member too: a pack another tool rewrote with other flags or order yields only its real
changes.

An RFG zone member is recorded as its object-level changes ("zone-changes", `zones.py`) when
those say all of the difference, so patches changing different objects of one zone stack; an
`.asm_pc` whose changes are only what the RFG writer derives from the changed `.str2_pc` members
on apply is left out of a gamepak patch (two zone patches would otherwise clash on its sizes).

Memory stays bounded whatever the number and size of the changes. The blobs are held in memory
up to `MEMORY_BYTES` in all; past it, each goes to a file in a private scratch folder beside the
output (`scratch.ScratchFiles`: on its file system, never a tmpfs `/tmp`), which `write_patch`
copies into the patch a chunk at a time. The folder is removed when `make` ends, whether it
succeeds or fails; one a killed process left is removed by the next command writing there. A
member is read whole only for a delta, whose base is at most `MAX_DELTA_BASE_BYTES`; a new
member, or one replaced whole, is hashed and copied as a stream.
"""

from __future__ import annotations

import hashlib
import os

from .container import BLOB_CHUNK, MAX_DELTA_BASE_BYTES, MAX_MEMBER_BYTES, ZONE_CHANGES, Operation, PatchError
from .digests import bytes_sha256 as _sha256
from .digests import file_sha256, member_sha256
from .write import write_patch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, BinaryIO

    from ...core.archive import Archive, Entry
    from ...errors import GamepakError
    from .scratch import ScratchBlob, ScratchFiles

# Blobs a make holds in memory, in all, as `scratch.MEMORY_BYTES` for an apply's new members:
# within it, many small changes cost no file each; past it, memory would grow with the patch (8
# members of 64 MiB replaced were all held until the patch was written: 659 MiB peak RSS, 23 MiB
# now, `benchmarks/bench_patch_make_memory.py`).
MEMORY_BYTES = 64 << 20


class _Source:
    """One side's member or plain file: its size, and its bytes whole or as a stream."""

    size: int

    def read(self) -> bytes:
        raise NotImplementedError

    def open(self) -> BinaryIO:
        raise NotImplementedError

    def sha256(self) -> str:
        raise NotImplementedError

    def ended(self, count: int) -> GamepakError:
        """The error when the stream gave `count` bytes, not `size`."""
        raise NotImplementedError

    def chunks(self, digest: Any) -> Iterator[bytes]:
        """The bytes as a stream, `BLOB_CHUNK` at a time, each added to `digest` as it passes;
        `ended` when they are not `size` bytes."""
        total = 0
        with self.open() as stream:
            # One byte past the size at most: a file growing while it is read is not followed.
            while chunk := stream.read(min(BLOB_CHUNK, self.size + 1 - total)):
                total += len(chunk)
                if total > self.size:
                    break
                digest.update(chunk)
                yield chunk
        if total != self.size:
            raise self.ended(total)


class _Member(_Source):
    def __init__(self, archive: Archive, entry: Entry) -> None:
        self.archive = archive
        self.entry = entry
        self.size = entry.size

    def read(self) -> bytes:
        return self.archive.read(self.entry)

    def open(self) -> BinaryIO:
        return self.archive.open(self.entry)

    def sha256(self) -> str:
        return member_sha256(self.archive, self.entry)

    def ended(self, count: int) -> GamepakError:
        if count > self.size:
            return self.archive.corrupt(f"member gives more than its {self.size} bytes", member=self.entry.name)
        # As `Archive.read` says it.
        return self.archive.corrupt(f"member ends after {count} of its {self.size} bytes", member=self.entry.name)


class _File(_Source):
    def __init__(self, path: str) -> None:
        self.path = path
        self.size = os.path.getsize(path)

    def read(self) -> bytes:
        return _read_file(self.path)

    def open(self) -> BinaryIO:
        return open(self.path, "rb")

    def sha256(self) -> str:
        return file_sha256(self.path)

    def ended(self, count: int) -> GamepakError:
        return PatchError(f"{self.path}: changed while being read ({self.size} bytes, then more or fewer)")


class _Builder:
    """The operations found so far and their blobs: bytes while `MEMORY_BYTES` in all allow, past
    it scratch files in `files`. Without `files`, the operations only (hashes, no blobs, no
    deltas): `export` reads the modded copy itself."""

    def __init__(self, files: ScratchFiles | None) -> None:
        self.operations: list[Operation] = []
        self.blobs: dict[str, bytes | ScratchBlob] = {}
        self.files = files
        self.held = 0

    def _fits(self, size: int) -> bool:
        return self.held + size <= MEMORY_BYTES

    def _blob(self, where: str, data: bytes) -> str:
        name = f"blobs/{len(self.blobs)}"
        if self.files is None or self._fits(len(data)):
            self.held += len(data)
            self.blobs[name] = data
            return name
        from .scratch import ScratchBlob

        self.blobs[name] = ScratchBlob(self.files.write(where, len(data), (data,)), len(data))
        return name

    def _new(self, where: str, source: _Source) -> tuple[str | None, str, int]:
        """(blob, sha256, size) of the new bytes `source` holds: read whole while the budget
        allows, else copied into a scratch file as a stream (hashed on the way); no blob
        without `files`."""
        if self.files is None:
            return None, source.sha256(), source.size
        if self._fits(source.size):
            data = source.read()
            return self._blob(where, data), _sha256(data), len(data)
        from .scratch import ScratchBlob

        digest = hashlib.sha256()
        path = self.files.write(where, source.size, source.chunks(digest))
        name = f"blobs/{len(self.blobs)}"
        self.blobs[name] = ScratchBlob(path, source.size)
        return name, digest.hexdigest(), source.size

    def add(self, file: str, member: str | None, source: _Source) -> None:
        blob, digest, size = self._new(_where(file, member), source)
        self.operations.append(
            Operation(
                "add",
                file,
                member,
                target_sha256=digest,
                size=size,
                blob=blob,
                encoding="raw" if blob else None,
            )
        )

    def replace(
        self, file: str, member: str | None, base: _Source, target: _Source, base_sha256: str | None = None
    ) -> None:
        """A replace of `base` by `target`: an RFG zone's object-level changes when both are
        zones those changes say all of (so patches changing other objects stack), else a zstd
        delta when the base is small enough to be read whole and the delta is smaller, else the
        target's bytes (raw). `base_sha256`: the base's, when the caller has hashed it already."""
        where = _where(file, member)
        if self.files is not None and base.size <= MAX_DELTA_BASE_BYTES:
            from .delta import make_delta

            # zstd's "patch from" takes both whole (and keeps its window over both anyway).
            base_bytes, data = base.read(), target.read()
            encoding, blob = "raw", data
            from .zones import changes_blob

            changes = changes_blob(member or file, base_bytes, data)
            if changes is not None:
                encoding, blob = ZONE_CHANGES, changes
            else:
                delta = make_delta(base_bytes, data)
                if len(delta) < len(data):
                    encoding, blob = "zstd-delta", delta
                del delta
            base_sha256, target_sha256, size = _sha256(base_bytes), _sha256(data), len(data)
            del base_bytes, data  # the base (and a target stored as a delta) freed before the blob is written
            name: str | None = self._blob(where, blob)
        else:
            encoding = "raw"
            if base_sha256 is None:
                base_sha256 = base.sha256()
            name, target_sha256, size = self._new(where, target)
        self.operations.append(
            Operation(
                "replace",
                file,
                member,
                base_sha256=base_sha256,
                target_sha256=target_sha256,
                size=size,
                blob=name,
                encoding=encoding if name else None,
            )
        )

    def remove(self, file: str, member: str | None, base_sha256: str) -> None:
        self.operations.append(Operation("remove", file, member, base_sha256=base_sha256))

    def rename(self, file: str, member: str, new_member: str, sha256: str) -> None:
        self.operations.append(
            Operation("rename", file, member, new_member=new_member, base_sha256=sha256, target_sha256=sha256)
        )


def _where(file: str, member: str | None) -> str:
    return Operation("add", file, member).where


def loaded_members(archive: Archive) -> dict[str, Entry]:
    """Name -> the entry the game loads for it, in archive order."""
    winners = {id(entry) for name, entry in archive._lookup().items() if name == entry.name}
    return {entry.name: entry for entry in archive.infolist() if id(entry) in winners}


def _compare_packs(builder: _Builder, file: str, base: Archive, modded: Archive, prefix: str = "") -> None:
    from ...core.nested import nested_format

    base_members = loaded_members(base)
    modded_members = loaded_members(modded)
    tables: list[tuple[str, Entry, Entry, str | None]] = []
    first_operation = len(builder.operations)
    for name, modded_entry in modded_members.items():
        base_entry = base_members.get(name)
        if base_entry is None:
            continue
        base_digest = None
        if base_entry.size == modded_entry.size:
            base_digest = member_sha256(base, base_entry)
            if base_digest == member_sha256(modded, modded_entry):
                continue
        inner_format = nested_format(base, base_entry)
        if inner_format is not None and nested_format(modded, modded_entry) == inner_format:
            inner_base = base.open_archive(base_entry, inner_format)
            inner_modded = modded.open_archive(modded_entry, inner_format)
            _compare_packs(builder, file, inner_base, inner_modded, f"{prefix}{name}/")
            continue
        if builder.files is not None and name.lower().endswith(".asm_pc"):
            # A gamepak patch (not an export for other tools, which may not update the table).
            tables.append((name, base_entry, modded_entry, base_digest))  # after the .str2_pc it describes
            continue
        builder.replace(file, prefix + name, _Member(base, base_entry), _Member(modded, modded_entry), base_digest)
    only_base = {name: member_sha256(base, entry) for name, entry in base_members.items() if name not in modded_members}
    by_hash: dict[str, list[str]] = {}
    for name, digest in only_base.items():
        by_hash.setdefault(digest, []).append(name)
    for name, entry in modded_members.items():
        if name in base_members:
            continue
        digest = member_sha256(modded, entry)
        waiting = by_hash.get(digest)
        if waiting:
            old = waiting.pop(0)
            del only_base[old]
            builder.rename(file, prefix + old, prefix + name, digest)
        else:
            builder.add(file, prefix + name, _Member(modded, entry))
    for name, digest in only_base.items():
        builder.remove(file, prefix + name, digest)
    # The writer brings a table up to date only when the apply rewrites the pack for a changed
    # .str2_pc: a table whose change is its own (a stale one fixed) stays in the patch.
    str2_changed = any(
        _top_level(operation.member, prefix).lower().endswith(".str2_pc")
        for operation in builder.operations[first_operation:]
    )
    for name, base_entry, modded_entry, base_digest in tables:
        if not (str2_changed and _asm_follows(base, base_entry, modded, modded_entry)):
            builder.replace(file, prefix + name, _Member(base, base_entry), _Member(modded, modded_entry), base_digest)


def _top_level(member: str | None, prefix: str) -> str:
    """The member of the pack at `prefix` that `member` (a nested path) is in, or is."""
    return (member or "").removeprefix(prefix).split("/", 1)[0]


def _asm_follows(base: Archive, base_entry: Entry, modded: Archive, modded_entry: Entry) -> bool:
    """Whether the modded pack's `.asm_pc` is the base's brought up to date with the modded
    `.str2_pc` members beside it: what the RFG writer does itself whenever an apply rewrites the
    pack. Such a table is left out of the patch: recorded, it would name the sizes of this one
    modded copy, and two patches changing different objects of one zone would clash on it."""
    from ...core.nested import nested_format
    from ...errors import GamepakError
    from ...formats.rfg.asm import MAX_FILE, AsmFile, container_name, summarize_str2, update_container

    if max(base_entry.size, modded_entry.size) > MAX_FILE:
        return False
    try:
        table = AsmFile.parse(base.read(base_entry), base_entry.name)
        for name, entry in loaded_members(modded).items():
            container = table.container(container_name(name)) if name.lower().endswith(".str2_pc") else None
            if container is None or nested_format(modded, entry) is None:
                continue
            with modded.open_archive(entry, nested_format(modded, entry)) as inner:
                update_container(container, summarize_str2(inner, name))
        return table.to_bytes() == modded.read(modded_entry)
    except GamepakError:
        return False


def _pack_format(path: str) -> str | None:
    from ...core.nested import signature_format

    try:
        with open(path, "rb") as handle:
            return signature_format(handle, path)
    except OSError:
        return None


def _read_file(path: str) -> bytes:
    from ...core.files import read_file

    return read_file(path, limit=MAX_MEMBER_BYTES, error=PatchError)


def _compare_files(builder: _Builder, relative: str, base_path: str, modded_path: str) -> None:
    from ...core.opening import open as open_archive

    base_digest = None
    if os.path.getsize(base_path) == os.path.getsize(modded_path):
        base_digest = file_sha256(base_path)
        if base_digest == file_sha256(modded_path):
            return
    base_format = _pack_format(base_path)
    if base_format is not None and _pack_format(modded_path) == base_format:
        with open_archive(base_path, base_format) as base, open_archive(modded_path, base_format) as modded:
            _compare_packs(builder, relative, base, modded)
        return
    builder.replace(relative, None, _File(base_path), _File(modded_path), base_digest)


def _folder_files(folder: str) -> dict[str, str]:
    from ..inputs import scan_folder

    return dict(scan_folder(folder).members)


def differences(
    base: str, modded: str, files: ScratchFiles | None = None
) -> tuple[list[Operation], dict[str, bytes | ScratchBlob]]:
    """The operations that turn `base` into `modded` (two packs or two folders), and their blobs:
    bytes up to `MEMORY_BYTES` in all, scratch files in `files` past it. Without `files`, the
    operations only, with no blobs (their sha256 and sizes, no deltas)."""
    builder = _Builder(files)
    if os.path.isdir(base) != os.path.isdir(modded):
        raise PatchError(f"{base}, {modded}: compare two packs or two folders, not one of each")
    if os.path.isdir(base):
        base_files = _folder_files(base)
        modded_files = _folder_files(modded)
        for relative, modded_path in modded_files.items():
            base_path = base_files.get(relative)
            if base_path is None:
                builder.add(relative, None, _File(modded_path))
            else:
                _compare_files(builder, relative, base_path, modded_path)
        for relative, base_path in base_files.items():
            if relative not in modded_files:
                builder.remove(relative, None, file_sha256(base_path))
        return builder.operations, builder.blobs
    from ...core.opening import open as open_archive

    for path in (base, modded):
        if not os.path.isfile(path):
            raise PatchError(f"{path}: no such pack or folder")
    with open_archive(base) as base_archive, open_archive(modded) as modded_archive:
        _compare_packs(builder, "", base_archive, modded_archive)
    return builder.operations, builder.blobs


def make(
    base: str | os.PathLike[str],
    modded: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    **metadata: Any,
) -> list[Operation]:
    """Write a patch turning `base` into `modded` to `output`; returns its operations.
    `metadata`: name, author, description, patch_version, game, links."""
    import sys

    from .scratch import ScratchFiles, scratch_parent

    output = os.fspath(output)
    if not overwrite and os.path.lexists(output):
        from ...errors import OutputExistsError

        raise OutputExistsError(output)  # now, not after comparing two packs for minutes
    # Beside the output: on its file system. No budget but the disk's: these are the user's own
    # bytes, as much as the patch will hold (`limits` bounds what a stranger's mod decodes).
    files = ScratchFiles(scratch_parent(output), f"{os.path.basename(os.path.abspath(output))}.make", sys.maxsize)
    try:
        operations, blobs = differences(os.fspath(base), os.fspath(modded), files)
        write_patch(output, operations, blobs, metadata, overwrite=overwrite)
    finally:
        files.close()
    return operations
