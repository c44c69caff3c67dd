"""SHA-256 of bytes, files and members: the one place patch code hashes what it compares
(`make` records the hashes, `target` checks the target against them, `install` checks a mod's
`.mod.hashes.json`)."""

from __future__ import annotations

import hashlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ...core.archive import Archive, Entry


def bytes_sha256(data: bytes) -> str:
    """The hex sha256 of `data`."""
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
