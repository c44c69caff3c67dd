"""Member deltas: a zstd frame compressed with the base member as a raw-content dictionary
(zstd's "patch from" idea), so bytes the target shares with the base cost a reference."""

from __future__ import annotations

from ...errors import GamepakError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

# Level 19 finds the long matches a delta is made of, for patches people share (made once,
# downloaded often); undo records are written on every apply and use a fast level.
SHARED_LEVEL = 19
FAST_LEVEL = 1
# Levels below this are zstd's fast strategies, whose match table `make_delta` sizes for the base;
# the largest it asks for is 2**24 entries (64 MiB).
FAST_LEVEL_LIMIT = 3
MAX_HASH_LOG = 24


def _window_log(size: int) -> int:
    return min(31, max(10, size.bit_length() + 1))


def make_delta(base: bytes, target: bytes, level: int = SHARED_LEVEL) -> bytes:
    """A delta turning `base` into `target`."""
    import zstandard

    dictionary = zstandard.ZstdCompressionDict(base, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
    settings = {
        "window_log": _window_log(len(base) + len(target)),
        "source_size": len(target),
        "write_content_size": True,
        "write_checksum": True,
        "write_dict_id": False,
    }
    parameters = zstandard.ZstdCompressionParameters.from_level(level, **settings)
    # The fast levels (undo records) size their match table for the target alone: past ~128 KiB
    # of base they find no matches in it (one byte changed in 256 KiB gave a 131 KB delta at
    # level 1, 43 B with a table sized for the base, in 1.1 ms). The slow levels search deeply
    # enough already, and shared patches keep the bytes they had.
    hash_log = min(MAX_HASH_LOG, max(10, len(base).bit_length() - 2))
    if level < FAST_LEVEL_LIMIT and parameters.hash_log < hash_log:
        parameters = zstandard.ZstdCompressionParameters.from_level(level, hash_log=hash_log, **settings)
    return zstandard.ZstdCompressor(dict_data=dictionary, compression_params=parameters).compress(target)


def apply_delta(base: bytes, delta: bytes, size: int) -> bytes:
    """`make_delta`'s target from `base`; a frame declaring another size than `size` (or
    inflating past it) is refused."""
    import zstandard

    decompressor = _decompressor(base, delta, size)
    try:
        data: bytes = decompressor.decompress(delta, max_output_size=size)
    except zstandard.ZstdError as exc:
        raise GamepakError(f"the delta does not decode against this base ({exc})") from None
    if len(data) != size:
        raise GamepakError(f"the delta gives {len(data)} bytes, the patch says {size}")
    return data


def _decompressor(base: bytes, head: bytes, size: int) -> Any:
    """A decoder of deltas against `base`, once the frame starting with `head` is seen to
    declare `size` bytes (a frame declaring anything else is refused before decoding)."""
    import zstandard

    try:
        declared = zstandard.frame_content_size(head)
    except zstandard.ZstdError as exc:
        raise GamepakError(f"not a zstd delta ({exc})") from None
    if declared != size:
        raise GamepakError(f"the delta declares {declared} bytes, the patch {size}")
    dictionary = zstandard.ZstdCompressionDict(base, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
    return zstandard.ZstdDecompressor(dict_data=dictionary, max_window_size=1 << 31)


def delta_chunks(base: bytes, delta: Iterator[bytes], size: int, chunk_size: int) -> Iterator[bytes]:
    """`apply_delta`'s target from the delta's chunks, in chunks of `chunk_size`: the delta is
    never held whole. The output still passes through zstd's window, which `make_delta` sizes to
    cover base and target (so a match may reach anywhere in them): the decoder keeps up to the
    whole output in its own buffer (measured: a streamed 64 MiB decode peaks as high as a
    one-shot one). What this bounds is everything around it, and only one such output is
    decoded at a time; its size is within the `limits` budgets, checked before decoding."""
    try:
        yield from _decoded(base, _ChunkReader(delta), size, chunk_size)
    finally:
        close = getattr(delta, "close", None)  # generators: the blob's file or zip entry, now
        if close is not None:
            close()


def _decoded(base: bytes, reader: _ChunkReader, size: int, chunk_size: int) -> Iterator[bytes]:
    import zstandard

    head = reader.read(_FRAME_HEADER_MAX)
    decompressor = _decompressor(base, head, size)
    reader.unread(head)
    total = 0
    try:
        # Any object with read() will do; the stubs name file objects only.
        with decompressor.stream_reader(reader, read_size=chunk_size, closefd=False) as stream:  # type: ignore[arg-type]
            while chunk := stream.read(min(chunk_size, size + 1 - total)):
                total += len(chunk)
                if total > size:
                    break
                yield chunk
    except zstandard.ZstdError as exc:
        raise GamepakError(f"the delta does not decode against this base ({exc})") from None
    if total != size:
        raise GamepakError(f"the delta gives {total if total <= size else 'more'} bytes, the patch says {size}")


_FRAME_HEADER_MAX = 18  # zstd's largest frame header (ZSTD_FRAMEHEADERSIZE_MAX)


class _ChunkReader:
    """An iterator of byte chunks as the file-like object zstandard's stream reader reads."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._pending = b""

    def unread(self, data: bytes) -> None:
        self._pending = data + self._pending

    def read(self, size: int = -1) -> bytes:
        while len(self._pending) < size or size < 0:
            chunk = next(self._chunks, None)
            if chunk is None:
                break
            self._pending += chunk
        if size < 0:
            data, self._pending = self._pending, b""
        else:
            data, self._pending = self._pending[:size], self._pending[size:]
        return data
