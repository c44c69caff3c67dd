"""Which inflater runs, decided in this one place.

- Deflate data whose output size is known and at most `WHOLE_BUDGET`: libdeflate (`deflate` on
  PyPI), 3-5x the standard library's zlib and 2-4x isal on the game's data; it works on whole
  buffers only.
- Anything larger, of unknown size, or read as a seekable stream: isal's streaming
  `decompressobj` (the standard library's where isal is missing): output comes in bounded pieces.
- libdeflate missing (no wheel for a platform): the streaming inflater for every case; the same
  output, slower.

The whole-buffer inflater never decides what is wrong with damaged data: whenever its output is
not exactly the size the caller expects (libdeflate failed, stopped early, or would go on), it
returns None and the caller reads the same bytes with the streaming inflater, whose errors name
the member and offset. So damaged data raises the same gamepak error whichever library is
installed.
"""

from __future__ import annotations

import struct
import zlib
from _thread import _local as _thread_local

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Buffer = bytes | bytearray | memoryview

# Output of one whole-buffer call at most. A pass holds up to three runs at once (the one whose
# members are written, one waiting, one inflating on the second thread), each with its input;
# runs are cut at RUN_TARGET, so only a chunk this large makes a run this large: well under
# the 100 MiB peak extraction keeps (measured: 55 MiB for a 200 MB pack, 8 MiB runs).
WHOLE_BUDGET = 8 << 20
# Runs of a condensed stream's chunks are cut at about this much output (a chunk larger than
# it is a run of its own, up to WHOLE_BUDGET): a 200 MiB mode-3 pack took 12% less CPU in
# 2 MiB runs than in 8 MiB ones (the output is written while it is still in the cache).
RUN_TARGET = 2 << 20
# What a deflate back-reference can reach: the output a continued stream needs before it.
WINDOW = 32 << 10
# The last empty stored block of a sync flush: a stream cut where one ends is byte-aligned with
# every block complete, so a final block may follow.
SYNC_MARK = b"\x00\x00\xff\xff"
# A final empty block with fixed Huffman codes (BFINAL=1, BTYPE=01, end-of-block): closes a
# stream that was cut at a sync flush.
_FINAL_BLOCK = b"\x03\x00"
_STORED = struct.Struct("<BHH")  # a stored block's header (not final): type byte, LEN, NLEN

_UNSET: Any = object()
_whole: Any = _UNSET


def streaming_module() -> tuple[Any, tuple[type[BaseException], ...]]:
    """isal's zlib (about twice as fast; decompression output is the same) or the stdlib's,
    and the errors either raises for damaged data."""
    try:
        from isal import isal_zlib
    except ImportError:
        return zlib, (zlib.error,)
    # isal's stubs call its error an instance; it is an exception class.
    errors: tuple[type[BaseException], ...] = (zlib.error, isal_zlib.error)  # type: ignore[assignment]
    return isal_zlib, errors


def whole_inflater() -> Callable[[Buffer, int], bytearray] | None:
    """libdeflate's raw-deflate decompressor, or None when the `deflate` wheel is missing
    (checked once; `forget_choice` makes the next call check again)."""
    global _whole
    if _whole is _UNSET:
        try:
            import deflate
        except ImportError:
            _whole = None
        else:
            _whole = deflate.deflate_decompress
    return _whole  # type: ignore[no-any-return]


def forget_choice() -> None:
    """Look for libdeflate again on the next call (tests hide and restore it)."""
    global _whole
    _whole = _UNSET


def fits_whole(size: int) -> bool:
    """Whether output of `size` bytes is inflated in one whole-buffer call."""
    return size <= WHOLE_BUDGET and whole_inflater() is not None


def zlib_header_ok(data: Buffer) -> bool:
    """Whether `data` starts with a zlib header the streaming inflater accepts without a
    preset dictionary (deflate, window up to 32 KiB, check bits right, no FDICT)."""
    if len(data) < 2:
        return False
    method, flags = data[0], data[1]
    return method & 0x0F == 8 and method >> 4 <= 7 and not flags & 0x20 and (method << 8 | flags) % 31 == 0


def inflate_whole(deflated: Buffer, size: int, window: bytes = b"", *, cut: bool = False) -> bytearray | None:
    """Raw deflate data inflated in one call to exactly `size` bytes, or None: no libdeflate,
    over the budget, damaged data, or output of another length (the caller then reads it with
    the streaming inflater, which says what is wrong).

    `window` is the output before `deflated` (at most `WINDOW`, the reach of a back-reference),
    for data that continues a stream at a sync-flush point; it is fed to libdeflate, which takes
    no dictionary, as a stored block ahead of the data. `cut` says the data stops at a sync flush
    (no final block yet): a final empty block is added, after checking it does end with one."""
    inflate = whole_inflater()
    if inflate is None or size > WHOLE_BUDGET:
        return None
    if cut and bytes(deflated[-len(SYNC_MARK) :]) != SYNC_MARK:
        return None
    if window or cut:
        prefix = _STORED.pack(0, len(window), len(window) ^ 0xFFFF) + window if window else b""
        deflated = b"".join((prefix, deflated, _FINAL_BLOCK if cut else b""))
    return _exactly(inflate, deflated, len(window), size)


def _exactly(inflate: Callable[[Buffer, int], bytearray], deflated: Buffer, skip: int, size: int) -> bytearray | None:
    """libdeflate's output of `deflated` past its first `skip` bytes (a window), when it is
    exactly `size` bytes; else None."""
    try:
        # One byte of room past the expected size: more output is seen, never kept.
        out = inflate(deflated, skip + size + 1)
    except Exception:  # deflate.DeflateError, and whatever the binding raises for odd input
        return None
    if len(out) != skip + size:
        return None
    if skip:
        del out[:skip]
    return out


class RunInput:
    """The input buffer of every run of a stream's chunks that `inflate_run` inflates: fresh
    memory is slow to touch, and a run's input (with the window before it) would otherwise be
    read into new bytes, then copied into more.

    The buffer is sized to what a run needs, not to `capacity` (the most a run may take): a
    catalog opens thousands of small condensed packs, and zeroing an 8 MiB buffer for each took
    a fifth of its CPU on them. A run within `THREAD_KEEP` borrows the one buffer its thread
    keeps for that (so small packs, one after another, share it); a larger one uses a buffer of
    this owner's, kept for its later runs. No view of either outlives `inflate_run` (libdeflate
    returns new memory), so the next run may overwrite it."""

    # The buffer a thread keeps between runs at most: what a web server's or a scheduler's idle
    # threads hold is bounded, and a run larger than it is cheap to allocate beside its inflating.
    THREAD_KEEP = 1 << 20

    def __init__(self, capacity: int) -> None:
        self.capacity = _STORED.size + WINDOW + capacity + len(_FINAL_BLOCK)
        self.buffer = bytearray()  # this owner's, for runs larger than THREAD_KEEP

    def inflate_run(
        self, read_into: Callable[[memoryview], int], length: int, size: int, window: bytes, *, skip: int = 0
    ) -> bytearray | None:
        """`length` bytes of raw deflate data that stop at a sync flush, read by
        `read_into(view)` (which returns how much it read), inflated to exactly `size` bytes
        after `window`, as `inflate_whole(data[skip:], size, window, cut=True)` does (`skip`: a
        zlib header at the start, checked); None likewise, or when fewer than `length` bytes
        could be read."""
        inflate = whole_inflater()
        prefix = _STORED.size + len(window) if window else 0
        needed = prefix + length + len(_FINAL_BLOCK)
        if inflate is None or size > WHOLE_BUDGET or needed > self.capacity:
            return None
        if needed > self.THREAD_KEEP:
            if len(self.buffer) < needed:
                # Doubling: a pass whose runs grow allocates a few times, not once per run.
                self.buffer = bytearray(min(self.capacity, max(needed, 2 * len(self.buffer))))
            return self._inflate_in(self.buffer, inflate, read_into, length, size, window, skip)
        # Taken from the thread while in use: a `read_into` that inflates a run of another
        # stream (a pack nested in one being read) gets a buffer of its own.
        buffer = getattr(_thread_buffer, "spare", None) or bytearray(self.THREAD_KEEP)
        _thread_buffer.spare = None
        try:
            return self._inflate_in(buffer, inflate, read_into, length, size, window, skip)
        finally:
            _thread_buffer.spare = buffer

    @staticmethod
    def _inflate_in(
        buffer: bytearray,
        inflate: Callable[[Buffer, int], bytearray],
        read_into: Callable[[memoryview], int],
        length: int,
        size: int,
        window: bytes,
        skip: int,
    ) -> bytearray | None:
        """`inflate_run` with its input read into `buffer` (large enough)."""
        prefix = _STORED.size + len(window) if window else 0
        with memoryview(buffer) as view:
            if window:
                _STORED.pack_into(buffer, 0, 0, len(window), len(window) ^ 0xFFFF)
                view[_STORED.size : prefix] = window
            end = prefix + length
            if read_into(view[prefix:end]) != length:
                return None
            if skip and not zlib_header_ok(view[prefix : prefix + skip]):
                return None
            if bytes(view[end - len(SYNC_MARK) : end]) != SYNC_MARK:
                return None
            view[end : end + len(_FINAL_BLOCK)] = _FINAL_BLOCK
            data = view[: end + len(_FINAL_BLOCK)] if not skip else view[prefix + skip : end + len(_FINAL_BLOCK)]
            return _exactly(inflate, data, len(window), size)


# Each thread's buffer for small runs (`RunInput.THREAD_KEEP`); `_thread` rather than
# `threading`, which would cost start-up time.
_thread_buffer = _thread_local()


def inflate_zlib_whole(data: Buffer, size: int) -> bytearray | None:
    """A whole zlib stream (header, deflate data, then its Adler-32 if it is finished, or a sync
    flush if it was cut there) inflated to exactly `size` bytes, or None as `inflate_whole`
    says. A finished stream's Adler-32 is checked."""
    if whole_inflater() is None or size > WHOLE_BUDGET or not zlib_header_ok(data):
        return None
    body = memoryview(data)[2:]
    if bytes(body[-len(SYNC_MARK) :]) == SYNC_MARK:
        return inflate_whole(body, size, cut=True)
    out = inflate_whole(body, size)
    if out is None or len(body) < 4 or int.from_bytes(body[-4:], "big") != zlib.adler32(out):
        return None
    return out
