"""Content hashes for the catalog: sha256 (default), blake2b, xxh3 (128-bit, via `xxhash`), none;
and the two ways a pack is read once for both its members' digests and its own sha256:
`RangeHashes` (members that are plain byte ranges) and `HashingSource` (members a format decodes)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

from ..core.source import Source
from ..errors import GamepakError, MissingDependencyError

ALGORITHMS = ("sha256", "blake2b", "xxh3", "none")
# Bytes read per step when a member or a file is hashed from a plain byte range.
CHUNK = 1 << 20


class Hasher(Protocol):
    def update(self, data: Any, /) -> None: ...

    def hexdigest(self) -> str: ...


def hasher_factory(algorithm: str) -> Callable[..., Hasher] | None:
    """A constructor of hash objects for `algorithm` (called with no argument, or with the first
    bytes to hash), or None for "none"."""
    import hashlib

    if algorithm == "sha256":
        return hashlib.sha256
    if algorithm == "blake2b":
        return hashlib.blake2b
    if algorithm == "xxh3":
        try:
            import xxhash
        except ImportError:
            raise MissingDependencyError(
                "--hash xxh3 needs the xxhash package: pip install 'gamepak[catalog]'"
            ) from None
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


class RangeHashes:
    """The digests of many byte ranges of one file, read once front to back in `chunk`-byte
    steps into one reused buffer: no read, generator or object per range (the catalog's fast
    path for members that are plain byte ranges of their pack). With `file_hasher`, every byte
    of the file also feeds it in the same pass (the whole file is read then, gaps between ranges
    included); without, stretches that no range covers are skipped.

    Ranges may overlap and come in any order; each must lie inside the file (`size` bytes).
    As each range is done, `digests[i]` gets its hex digest (None without `new_hasher`) and
    `described[i]` what `describe(i, head)` returns for its first `head_bytes` bytes (the
    member's type); heads are not kept. A range the run did not finish (the file ended early:
    `run()` raises) keeps `described[i]` None."""

    def __init__(
        self,
        offsets: list[int],
        sizes: list[int],
        size: int,
        new_hasher: Callable[..., Hasher] | None,
        describe: Callable[[int, bytes], Any],
        head_bytes: int,
        file_hasher: Hasher | None = None,
        chunk: int | None = None,
    ) -> None:
        self.offsets = offsets
        self.sizes = sizes
        self.size = size
        self.new_hasher = new_hasher
        self.describe = describe
        self.head_bytes = head_bytes
        self.file_hasher = file_hasher
        self.chunk = chunk or CHUNK
        self.digests: list[str | None] = [None] * len(offsets)
        self.described: list[Any] = [None] * len(offsets)

    def run(self, read_into: Callable[[memoryview, int], int]) -> None:
        """Read and hash; `read_into(view, offset)` fills `view` with the file's bytes at
        `offset` and returns how many it read (fewer only at the end of the file)."""
        offsets, sizes, digests, described = self.offsets, self.sizes, self.digests, self.described
        new_hasher, describe, head_bytes, file_hasher = (
            self.new_hasher,
            self.describe,
            self.head_bytes,
            self.file_hasher,
        )
        order = []
        for index, length in enumerate(sizes):
            if length:
                order.append(index)
            else:
                digests[index] = new_hasher().hexdigest() if new_hasher is not None else None
                described[index] = describe(index, b"")
        order.sort(key=offsets.__getitem__)
        limit = self.size if file_hasher is not None else max((offsets[i] + sizes[i] for i in order), default=0)
        buffer = scratch_buffer(min(self.chunk, limit))
        # Ranges begun in an earlier chunk: [index, end, hasher or None, head so far].
        open_ranges: list[list[Any]] = []
        following = 0  # the next range (in offset order) not yet begun
        position = 0
        while True:
            if not open_ranges and file_hasher is None and following < len(order):
                position = max(position, offsets[order[following]])
            if position >= limit:
                return
            got = read_into(buffer[: min(len(buffer), limit - position)], position)
            if got <= 0:
                raise GamepakError(f"file ended at {position} of {limit} bytes while hashing")
            chunk = buffer[:got]
            chunk_end = position + got
            if file_hasher is not None:
                file_hasher.update(chunk)
            if open_ranges:
                still_open = []
                for state in open_ranges:
                    index, end, hasher, head = state
                    piece = chunk[: min(end, chunk_end) - position]
                    if hasher is not None:
                        hasher.update(piece)
                    if len(head) < head_bytes:
                        state[3] = head = head + bytes(piece[: head_bytes - len(head)])
                    if end <= chunk_end:
                        digests[index] = hasher.hexdigest() if hasher is not None else None
                        described[index] = describe(index, head)
                    else:
                        still_open.append(state)
                open_ranges = still_open
            while following < len(order):
                index = order[following]
                start = offsets[index]
                if start >= chunk_end:
                    break
                following += 1
                end = start + sizes[index]
                piece = chunk[start - position : end - position]
                if end <= chunk_end:  # the common case: the whole range is in this chunk
                    if new_hasher is not None:
                        digests[index] = new_hasher(piece).hexdigest()
                    described[index] = describe(index, bytes(piece[:head_bytes]))
                    continue
                hasher = new_hasher(piece) if new_hasher is not None else None
                open_ranges.append([index, end, hasher, bytes(piece[:head_bytes])])
            position = chunk_end


_scratch = threading.local()


def scratch_buffer(size: int) -> memoryview:
    """A writable buffer of at least `size` bytes (at least 1), reused by this thread: fresh
    memory costs page faults on every use (see PERF-NOTES)."""
    buffer: bytearray | None = getattr(_scratch, "buffer", None)
    if buffer is None or len(buffer) < size:
        buffer = _scratch.buffer = bytearray(max(size, 1 << 16))
    return memoryview(buffer)[: max(size, 1)]


class HashingSource(Source):
    """A file's source that hashes the file from the reads made through it: bytes read at the
    hashed frontier feed `hasher` as they pass (the stored bytes of compressed members, while
    the format inflates them); a read past the frontier first hashes the gap before it, and
    `finish()` the rest of the file. Every byte is hashed once, in order, whatever the reads."""

    def __init__(self, source: Source, hasher: Hasher) -> None:
        super().__init__(name=source.name, size=source.size, fd=source.fd, fileobj=source._fileobj, base=source.base)
        self._lock = source._lock  # one lock per file object, as Source.open shares it
        self._inner = source
        self.hasher = hasher
        self.frontier = 0

    def pread(self, size: int, offset: int) -> bytes:
        data = self._inner.pread(size, offset)
        end = offset + len(data)
        if data and end > self.frontier:
            if offset > self.frontier:
                self._hash_to(offset)
            self.hasher.update(memoryview(data)[self.frontier - offset :])
            self.frontier = end
        return data

    def _hash_to(self, stop: int) -> None:
        while self.frontier < stop:
            chunk = self._inner.pread(min(CHUNK, stop - self.frontier), self.frontier)
            if not chunk:
                raise GamepakError(f"file ended at {self.frontier} of {self.size} bytes while hashing")
            self.hasher.update(chunk)
            self.frontier += len(chunk)

    def finish(self) -> str:
        """The file's hex digest, once the bytes not read yet are hashed."""
        self._hash_to(self.size)
        return self.hasher.hexdigest()

    def close(self) -> None:
        """Nothing: the archive's own source owns the file."""
