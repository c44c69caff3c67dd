"""Member deltas: a zstd frame compressed with the base member as a raw-content dictionary
(zstd's "patch from" idea), so bytes the target shares with the base cost a reference."""

from __future__ import annotations

from ...errors import GamepakError

# Level 19 finds the long matches a delta is made of, for patches people share (made once,
# downloaded often); undo records are written on every apply and use a fast level.
SHARED_LEVEL = 19
FAST_LEVEL = 1


def _window_log(size: int) -> int:
    return min(31, max(10, size.bit_length() + 1))


def make_delta(base: bytes, target: bytes, level: int = SHARED_LEVEL) -> bytes:
    """A delta turning `base` into `target`."""
    import zstandard

    dictionary = zstandard.ZstdCompressionDict(base, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
    parameters = zstandard.ZstdCompressionParameters.from_level(
        level,
        window_log=_window_log(len(base) + len(target)),
        source_size=len(target),
        write_content_size=True,
        write_checksum=True,
        write_dict_id=False,
    )
    return zstandard.ZstdCompressor(dict_data=dictionary, compression_params=parameters).compress(target)


def apply_delta(base: bytes, delta: bytes, size: int) -> bytes:
    """`make_delta`'s target from `base`; a frame declaring another size than `size` (or
    inflating past it) is refused."""
    import zstandard

    try:
        declared = zstandard.frame_content_size(delta)
    except zstandard.ZstdError as exc:
        raise GamepakError(f"not a zstd delta ({exc})") from None
    if declared != size:
        raise GamepakError(f"the delta declares {declared} bytes, the patch {size}")
    dictionary = zstandard.ZstdCompressionDict(base, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
    decompressor = zstandard.ZstdDecompressor(dict_data=dictionary, max_window_size=1 << 31)
    try:
        data: bytes = decompressor.decompress(delta, max_output_size=size)
    except zstandard.ZstdError as exc:
        raise GamepakError(f"the delta does not decode against this base ({exc})") from None
    if len(data) != size:
        raise GamepakError(f"the delta gives {len(data)} bytes, the patch says {size}")
    return data
