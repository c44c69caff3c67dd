"""The POSIX building blocks gamepak's fast paths use, with portable fallbacks for systems that
lack them (Windows: no `os.pread`/`os.pwrite`, no `O_CLOEXEC`/`O_NOFOLLOW`/`O_DIRECTORY`, no
`dir_fd`, no `fork`, no `fcntl`).

Every choice is made when the function runs, by capability (`hasattr(os, "pread")`,
`os.supports_dir_fd`), never by an attribute access at import time that would fail: the fast
Linux paths stay as they are and these are only their fallbacks. `tests/test_portable.py` runs
the library and the CLI with the `os` module reduced to what CPython has on Windows.
"""

from __future__ import annotations

import os
import sys
import time
from _thread import allocate_lock

from ..errors import GamepakError

# Without pread/pwrite, a position and a read are two calls: one lock keeps them together for
# every descriptor (the fallback is for correctness, not speed).
_SEEK_LOCK = allocate_lock()
# Where the editor's lock lies on Windows. `msvcrt.locking` locks are mandatory: a locked byte
# range refuses every other handle's reads and writes, the editor's own readers included. So the
# lock is on one byte no reader or writer ever touches, far past the end of any pack (Windows
# allows locking past the end of a file), and well inside the largest file size of the file
# systems (8 TiB).
WINDOWS_LOCK_OFFSET = 1 << 43
# How long a replace waits for another program (an antivirus scanner, an editor) to let go of
# the target on Windows, where a file open elsewhere cannot be replaced.
REPLACE_RETRY_SECONDS = 2.0


def flag(name: str) -> int:
    """An `os.O_*` flag, or 0 where the system lacks it (O_CLOEXEC, O_NOFOLLOW, O_DIRECTORY on
    Windows; O_BINARY elsewhere)."""
    return int(getattr(os, name, 0))


def pread(fd: int, size: int, offset: int) -> bytes:
    """`os.pread`, or seek + read under a lock where it is missing."""
    native = getattr(os, "pread", None)
    if native is not None:
        return native(fd, size, offset)  # type: ignore[no-any-return]
    with _SEEK_LOCK:
        os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, size)


def pwrite(fd: int, data: bytes | bytearray | memoryview, offset: int) -> int:
    """`os.pwrite`, or seek + write under a lock where it is missing."""
    native = getattr(os, "pwrite", None)
    if native is not None:
        return native(fd, data, offset)  # type: ignore[no-any-return]
    with _SEEK_LOCK:
        os.lseek(fd, offset, os.SEEK_SET)
        return os.write(fd, data)


def has_folder_descriptors() -> bool:
    """Whether files can be opened, made and renamed relative to an open folder (`dir_fd`)."""
    supported: set[object] = getattr(os, "supports_dir_fd", set())
    return os.open in supported and os.mkdir in supported and os.rename in supported and hasattr(os, "O_DIRECTORY")


def can_fork() -> bool:
    """Whether worker processes can be forked from this one."""
    return hasattr(os, "fork") and sys.platform.startswith("linux")


def file_identity(info: os.stat_result) -> tuple[int, int]:
    """What tells one file from another: (device, inode); on Windows `os.stat` fills both in
    (the volume serial number and the file index)."""
    return info.st_dev, info.st_ino


def same_file(first: str | os.PathLike[str], second: str | os.PathLike[str]) -> bool:
    """Whether two paths name one existing file (False when either cannot be looked up)."""
    try:
        return file_identity(os.stat(first)) == file_identity(os.stat(second))
    except (OSError, ValueError):
        return False


def lock_exclusive(fd: int) -> bool:
    """Take an exclusive lock on an open file without waiting: True if taken (or the system has
    no locks), False if another process holds it. `fcntl.flock` on POSIX, `msvcrt.locking` on
    Windows: a mandatory lock, on the byte at WINDOWS_LOCK_OFFSET, past the end of the pack,
    which every gamepak edit takes and no read or write of the pack touches."""
    try:
        import fcntl
    except ImportError:
        fcntl = None  # type: ignore[assignment]
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        except OSError:
            return True  # a file system without locks: edit unlocked, as before locks existed
        return True
    try:
        import msvcrt
    except ImportError:
        return True  # no advisory locks on this system
    try:
        os.lseek(fd, WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
    except PermissionError:
        return False
    except OSError:
        return True
    return True


def replace(source: str, target: str) -> None:
    """`os.replace`. On Windows a target that another program holds open cannot be replaced: try
    again for a moment, then say so clearly."""
    deadline = time.monotonic() + REPLACE_RETRY_SECONDS
    while True:
        try:
            os.replace(source, target)
            return
        except PermissionError as exc:
            if not sys.platform.startswith("win") and not _emulating_windows():
                raise
            if time.monotonic() >= deadline:
                raise GamepakError(
                    f"{target}: cannot replace it: another program has it open ({exc.strerror}); close it and retry"
                ) from exc
            time.sleep(0.05)


def _emulating_windows() -> bool:
    return "msvcrt" in sys.modules and not hasattr(os, "pread")
