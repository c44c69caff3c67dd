"""Reading a whole file: the one way gamepak does it (`read_file`); its first bytes, to tell
what it is (`read_head`).

Every reader that takes a file whole (a table, a translation, a model, a palette, a patch's
plain file) reads it here, so that each of them:
- names the file in one line when it cannot be read (`PATH: cannot read: REASON`);
- refuses a FIFO, a device or a socket instead of opening it (opening a FIFO for reading waits
  for a writer: a command would hang), and a folder;
- refuses a file larger than its cap before allocating anything (the size is the file's own,
  checked again while reading: a file that grows meanwhile stops at the cap);
- costs the file's size in memory once (one `os.read` of the file's size becomes the bytes;
  `read_file_owned` reads into one buffer of that size).
"""

from __future__ import annotations

import io
import os
import stat

from ..errors import GamepakError, cannot_read, irregular_kind

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    # `core.streams` (four classes) is imported by the rare paths that need it, not by every
    # whole read: a `text import` reads its files without either (~2 M
    # instructions).
    from .streams import OwnedBuffer

# What a file read whole may hold unless the caller names its own cap: larger inputs are
# streamed by the readers built for them (packs, models read a window at a time), never read
# whole, so a file past this is refused rather than held.
MAX_WHOLE_FILE_BYTES = 1 << 30

# Opening without waiting: a FIFO opened for reading would otherwise block until a writer
# comes (a regular file ignores O_NONBLOCK). Windows has no FIFOs and no O_NONBLOCK.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def read_file(
    path: str | os.PathLike[str],
    *,
    limit: int = MAX_WHOLE_FILE_BYTES,
    what: str = "",
    error: type[GamepakError] = GamepakError,
    label: str | None = None,
) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them.

    `what` names the file's role in the messages ("the palette": `PATH: cannot read the palette:
    ...`); `error` is the GamepakError subclass raised (a reader's own, e.g. PatchError); `label`
    names the file in messages instead of its path (e.g. a glTF's buffer by its URI). Raises
    it, naming the file, when the file cannot be opened or read, is not a regular file, or holds
    more than `limit` bytes."""
    data = _read(os.fspath(path), limit, what, error, label, owned=False)
    assert isinstance(data, bytes)
    return data


def read_file_owned(
    path: str | os.PathLike[str], *, limit: int = MAX_WHOLE_FILE_BYTES, error: type[GamepakError] = GamepakError
) -> OwnedBuffer:
    """`read_file` into a `streams.OwnedBuffer` of the file's size: a bytearray the reader may
    keep views into (the JOE reader's arrays), so the file costs its size once."""
    from .streams import OwnedBuffer

    data = _read(os.fspath(path), limit, "", error, None, owned=True)
    assert isinstance(data, OwnedBuffer)
    return data


def read_head(path: str | os.PathLike[str], size: int, *, error: type[GamepakError] = GamepakError) -> bytes:
    """The first `size` bytes of the regular file at `path` (all of it when it is shorter): what
    tells a file's kind. Raises `error` naming the file, as `read_file` does, when it cannot be
    opened or read or is not a regular file (a FIFO is refused, never waited on)."""
    file = os.fspath(path)
    fd, _ = open_regular(file, file, "", error)
    try:
        return os.read(fd, size)
    except OSError as exc:
        raise cannot_read(file, exc, error=error) from None
    finally:
        os.close(fd)


def open_regular_os(path: str) -> tuple[int, os.stat_result]:
    """A descriptor open on the regular file `path`, opened without waiting, and its stat; an
    OSError otherwise, its strerror the reason: the system's, or `irregular_kind`'s for a FIFO,
    device, socket or folder (links followed: a FIFO's reads would wait for a writer; a folder
    opens on POSIX, its first read failing with an OSError that names no file).

    The one open of an input file: `Source.open` (a pack), `open_regular` below (a file read
    whole, said in the one `cannot read` line) and a scene's files (a texture that cannot be
    read is a warning) word the OSError each their way. Here, in the module that imports
    nothing heavier than `errors`, so that a whole-file read loads no `core.source`."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            # A plain OSError, no class of its own: making one cost every command 0.12 M instructions.
            raise OSError(None, irregular_kind(info.st_mode), path)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def open_regular(file: str, label: str, what: str, error: type[GamepakError]) -> tuple[int, os.stat_result]:
    """A descriptor open on the regular file `file` (opened without waiting: `open_regular_os`)
    and its stat; `cannot_read` naming `label` otherwise."""
    try:
        return open_regular_os(file)
    except OSError as exc:
        raise cannot_read(label, exc, what=what, error=error) from None


def _read(
    file: str, limit: int, what: str, error: type[GamepakError], label: str | None, *, owned: bool
) -> bytes | OwnedBuffer:
    label = file if label is None else label
    fd, info = open_regular(file, label, what, error)
    try:
        if info.st_size > limit:
            raise error(f"{label}: {info.st_size} bytes, more than the {limit} bytes read whole here")
        data: bytes | OwnedBuffer
        if owned:
            with os.fdopen(fd, "rb", buffering=0, closefd=False) as handle:
                data = _read_owned(handle, info.st_size)
        else:
            data = _read_direct(fd, info.st_size, limit)
    except OSError as exc:
        raise cannot_read(label, exc, what=what, error=error) from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise error(f"{label}: more than the {limit} bytes read whole here (it grew while read)")
    return data


def _read_direct(fd: int, size: int, limit: int) -> bytes:
    """The file's bytes, read to its end (it may have grown since `size` was taken), one byte
    past `limit` at most. One `os.read` of the size the file had: the bytes object it allocates
    is the result, shrunk in place by the byte asked for past the end (no buffer zeroed first,
    no copy: 8x faster than growing a buffer for an 850 kB file)."""
    first = os.read(fd, min(size, limit) + 1)
    if not first:
        return first
    # A regular file's read stops short only at its end (or past 2 GiB on Linux): one more
    # byte asked proves the end; a file that grew meanwhile is read on, up to the cap, in a
    # buffer that grows as its bytes arrive (`os.read` would allocate all it is asked for).
    more = os.read(fd, 1) if len(first) <= limit else b""
    if not more:
        return first
    with os.fdopen(fd, "rb", buffering=0, closefd=False) as handle:
        rest = read_whole(handle, limit - len(first), first_buffer=len(first))
    return b"".join((first, more, rest))


def _read_owned(handle: Any, size: int) -> OwnedBuffer:
    """The file's `size` bytes in one buffer of that size (fewer if it shrank since)."""
    from .streams import OwnedBuffer

    buffer = OwnedBuffer(size)
    filled = 0
    with memoryview(buffer) as view:
        while filled < size:
            count = handle.readinto(view[filled:])
            if not count:
                break
            filled += count
    del buffer[filled:]
    return buffer


# `read_whole`: reads up to this size are plain `read()` calls; larger ones fill one buffer in
# place, `_READ_STEP` bytes at a time (what a stream that reads into a temporary holds at once).
_DIRECT_READ = 1 << 20
_READ_STEP = 1 << 20


def read_whole(stream: Any, size: int, first_buffer: int | None = None) -> bytes:
    """Up to `size` bytes of a binary stream, fewer only where it ends, costing about `size`
    bytes of memory once: the stream fills one buffer with `readinto`, and that buffer becomes
    the bytes returned (no chunks joined, no copy at the end).

    `first_buffer` caps what is allocated before any data arrives (a size read from a hostile
    header is not trusted further than, say, the file's size); the buffer then doubles as data
    arrives, up to `size`."""
    if size <= _DIRECT_READ:
        parts = []
        remaining = size
        while remaining:
            part = stream.read(remaining)
            if not part:
                break
            parts.append(part)
            remaining -= len(part)
        return parts[0] if len(parts) == 1 else b"".join(parts)
    # A BytesIO hands its internal bytes object over from `getvalue()` without copying when it
    # is exactly full and no view of it is held (CPython), and grows it with `realloc` (which
    # moves large blocks by remapping pages, not copying): the one buffer becomes the result.
    buffer = io.BytesIO()
    filled = capacity = 0
    while filled < size:
        if filled == capacity:
            capacity = min(size, 2 * capacity or max(first_buffer or size, _DIRECT_READ))
            buffer.seek(capacity - 1)
            buffer.write(b"\0")  # grows the buffer to `capacity` bytes
        with buffer.getbuffer() as whole, whole[filled : min(capacity, filled + _READ_STEP)] as free:
            count = stream.readinto(free)
        if not count:
            break
        filled += count
    buffer.truncate(filled)
    return buffer.getvalue()
