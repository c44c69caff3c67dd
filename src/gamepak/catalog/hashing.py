"""Content hashes for the catalog: sha256 (default), blake2b, xxh3 (128-bit, via `xxhash`), none."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..errors import GamepakError

ALGORITHMS = ("sha256", "blake2b", "xxh3", "none")
# Bytes read per step when a member or a file is hashed from a plain byte range.
CHUNK = 1 << 20


class Hasher(Protocol):
    def update(self, data: Any, /) -> None: ...

    def hexdigest(self) -> str: ...


def hasher_factory(algorithm: str) -> Callable[[], Hasher] | None:
    """A constructor of fresh hash objects for `algorithm`, or None for "none"."""
    import hashlib

    if algorithm == "sha256":
        return hashlib.sha256
    if algorithm == "blake2b":
        return hashlib.blake2b
    if algorithm == "xxh3":
        try:
            import xxhash
        except ImportError:
            raise GamepakError("--hash xxh3 needs the xxhash package: pip install 'gamepak[catalog]'") from None
        return xxhash.xxh3_128  # type: ignore[no-any-return]
    if algorithm == "none":
        return None
    raise GamepakError(f"unknown hash {algorithm!r}; choose one of {', '.join(ALGORITHMS)}")


def file_sha256(read_at: Callable[[int, int], bytes], size: int) -> str:
    """sha256 of `size` bytes read in chunks with `read_at(count, offset)`."""
    import hashlib

    digest = hashlib.sha256()
    position = 0
    while position < size:
        chunk = read_at(min(CHUNK, size - position), position)
        if not chunk:
            raise GamepakError(f"file ended at {position} of {size} bytes while hashing")
        digest.update(chunk)
        position += len(chunk)
    return digest.hexdigest()
