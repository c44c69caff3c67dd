"""`make`: the member-level differences between a base and a modded copy, as a patch file.

Two packs, or two folders (a game's data folder: files compared by relative path; files that are
packs compared member by member). Members are compared by their bytes, not by where the pack
stores them, and packs nested in members (`misc.vpp_pc/zone.str2_pc/x.cpeg_pc`) are compared
member by member too: a pack another tool rewrote with other flags or order yields only its real
changes.
"""

from __future__ import annotations

import hashlib
import os

from .container import MAX_DELTA_BASE_BYTES, Operation, PatchError
from .write import write_patch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ...core.archive import Archive, Entry


class _Builder:
    """The operations found so far and their blobs."""

    def __init__(self) -> None:
        self.operations: list[Operation] = []
        self.blobs: dict[str, bytes] = {}

    def _blob(self, data: bytes) -> str:
        name = f"blobs/{len(self.blobs)}"
        self.blobs[name] = data
        return name

    def add(self, file: str, member: str | None, data: bytes) -> None:
        self.operations.append(
            Operation(
                "add",
                file,
                member,
                target_sha256=_sha256(data),
                size=len(data),
                blob=self._blob(data),
                encoding="raw",
            )
        )

    def replace(self, file: str, member: str | None, base: bytes, data: bytes) -> None:
        encoding, blob = "raw", data
        if len(base) <= MAX_DELTA_BASE_BYTES:
            from .delta import make_delta

            delta = make_delta(base, data)
            if len(delta) < len(data):
                encoding, blob = "zstd-delta", delta
        self.operations.append(
            Operation(
                "replace",
                file,
                member,
                base_sha256=_sha256(base),
                target_sha256=_sha256(data),
                size=len(data),
                blob=self._blob(blob),
                encoding=encoding,
            )
        )

    def remove(self, file: str, member: str | None, base_sha256: str) -> None:
        self.operations.append(Operation("remove", file, member, base_sha256=base_sha256))

    def rename(self, file: str, member: str, new_member: str, sha256: str) -> None:
        self.operations.append(
            Operation("rename", file, member, new_member=new_member, base_sha256=sha256, target_sha256=sha256)
        )


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def member_sha256(archive: Archive, entry: Entry) -> str:
    """A member's sha256, read as a stream."""
    with archive.open(entry) as stream:
        # Member streams are io.RawIOBase with readinto (core.source.SeekableStream).
        return hashlib.file_digest(stream, "sha256").hexdigest()  # type: ignore[arg-type]


def file_sha256(path: str) -> str:
    """A file's sha256, read as a stream."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def loaded_members(archive: Archive) -> dict[str, Entry]:
    """Name -> the entry the game loads for it, in archive order."""
    winners = {id(entry) for name, entry in archive._lookup().items() if name == entry.name}
    return {entry.name: entry for entry in archive.infolist() if id(entry) in winners}


def _compare_packs(builder: _Builder, file: str, base: Archive, modded: Archive, prefix: str = "") -> None:
    from ...core.nested import nested_format

    base_members = loaded_members(base)
    modded_members = loaded_members(modded)
    for name, modded_entry in modded_members.items():
        base_entry = base_members.get(name)
        if base_entry is None:
            continue
        if base_entry.size == modded_entry.size and member_sha256(base, base_entry) == member_sha256(
            modded, modded_entry
        ):
            continue
        inner_format = nested_format(base, base_entry)
        if inner_format is not None and nested_format(modded, modded_entry) == inner_format:
            inner_base = base.open_archive(base_entry, inner_format)
            inner_modded = modded.open_archive(modded_entry, inner_format)
            _compare_packs(builder, file, inner_base, inner_modded, f"{prefix}{name}/")
            continue
        builder.replace(file, prefix + name, base.read(base_entry), modded.read(modded_entry))
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
            builder.add(file, prefix + name, modded.read(entry))
    for name, digest in only_base.items():
        builder.remove(file, prefix + name, digest)


def _pack_format(path: str) -> str | None:
    from ...core.nested import signature_format

    try:
        with open(path, "rb") as handle:
            return signature_format(handle, path)
    except OSError:
        return None


def _read_file(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _compare_files(builder: _Builder, relative: str, base_path: str, modded_path: str) -> None:
    from ...core.opening import open as open_archive

    if os.path.getsize(base_path) == os.path.getsize(modded_path) and file_sha256(base_path) == file_sha256(
        modded_path
    ):
        return
    base_format = _pack_format(base_path)
    if base_format is not None and _pack_format(modded_path) == base_format:
        with open_archive(base_path, base_format) as base, open_archive(modded_path, base_format) as modded:
            _compare_packs(builder, relative, base, modded)
        return
    builder.replace(relative, None, _read_file(base_path), _read_file(modded_path))


def _folder_files(folder: str) -> dict[str, str]:
    from ..inputs import scan_folder

    return dict(scan_folder(folder).members)


def differences(base: str, modded: str) -> tuple[list[Operation], dict[str, bytes]]:
    """The operations that turn `base` into `modded` (two packs or two folders), and their blobs."""
    builder = _Builder()
    if os.path.isdir(base) != os.path.isdir(modded):
        raise PatchError(f"{base}, {modded}: compare two packs or two folders, not one of each")
    if os.path.isdir(base):
        base_files = _folder_files(base)
        modded_files = _folder_files(modded)
        for relative, modded_path in modded_files.items():
            base_path = base_files.get(relative)
            if base_path is None:
                builder.add(relative, None, _read_file(modded_path))
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
    operations, blobs = differences(os.fspath(base), os.fspath(modded))
    write_patch(os.fspath(output), operations, blobs, metadata, overwrite=overwrite)
    return operations
