"""Every file gamepak writes appears whole or not at all.

The content goes to a temporary name in the target's folder (same file system, so the final
rename is atomic) and is moved into place only when complete. Without `overwrite`, the move is a
hard link, which fails if the target appeared meanwhile: no check-then-write race.

Temporary names are `.NAME.gamepak-PID-N.tmp` (NAME shortened so that the whole stays within
the file system's 255-byte limit). A process killed mid-write leaves its temporaries behind; the
next gamepak command that writes in that folder removes those whose process is gone. Scratch
folders (`temporary_folder`, in the system's temp folder or another) are named and cleaned the
same way.
"""

from __future__ import annotations

import itertools
import os

from ..errors import GamepakError  # OutputExistsError, rarely raised, where it is raised

# `core.stored_names.NAME_MAX` (the longest file name, in bytes, that Linux, macOS and Windows
# file systems accept), repeated rather than imported: that module and `struct` were the one
# thing of the reading side a `text import` loaded (~0.8 M instructions). A test holds them equal.
NAME_MAX = 255

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_counter = itertools.count()
# When each folder was last scanned for stale temporaries (a process writing many files into
# one folder scans it once every few seconds, not once per file).
_scanned: dict[str, float] = {}
_RESCAN_SECONDS = 10.0


def temporary_name(base: str, pid: int | None = None) -> str:
    """A fresh temporary name for `base` in the same folder, at most NAME_MAX bytes long."""
    suffix = f".gamepak-{os.getpid() if pid is None else pid}-{next(_counter)}.tmp"
    room = NAME_MAX - 1 - len(suffix)
    encoded = os.fsencode(base)
    if len(encoded) > room:
        # Cut on a character boundary: a partial UTF-8 sequence would be an odd name.
        base = encoded[:room].decode("utf-8", "ignore") if _utf8_names() else os.fsdecode(encoded[:room])
        while len(os.fsencode(base)) > room:
            base = base[:-1]
    return f".{base}{suffix}"


def _utf8_names() -> bool:
    import sys

    return sys.getfilesystemencoding().lower() in ("utf-8", "utf8")


def temporary_pid(name: str) -> int | None:
    """The PID in one of gamepak's temporary names, or None for any other name."""
    if not (name.startswith(".") and name.endswith(".tmp")):
        return None
    marker = name.rfind(".gamepak-", 1)
    if marker < 0:
        return None
    pid, dash, number = name[marker + 9 : -4].partition("-")
    if not (dash and pid.isdigit() and number.isdigit() and pid.isascii() and number.isascii()):
        return None
    return int(pid)


def is_temporary_name(name: str) -> bool:
    """Whether `name` is one of gamepak's temporary names (never a member to pack)."""
    return temporary_pid(name) is not None


def _process_gone(pid: int) -> bool:
    if pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):
        return False  # alive but someone else's (EPERM), or not a PID this system can have
    return False


def remove_stale_temporaries(folder: str, *, dir_fd: int | None = None, force: bool = False) -> list[str]:
    """Remove the temporaries that killed gamepak processes left in `folder` (files, or folders
    of an interrupted extraction); returns their names. A folder is scanned at most once every
    few seconds (always with `force`: a recovery after a kill). With `dir_fd`, `folder` only
    names the folder for bookkeeping and the fd is used."""
    import time

    key = os.path.abspath(folder)
    now = time.monotonic()
    if not force and now - _scanned.get(key, -_RESCAN_SECONDS) < _RESCAN_SECONDS:
        return []
    _scanned[key] = now
    try:
        names = os.listdir(folder if dir_fd is None else dir_fd)
    except OSError:
        return []
    removed = []
    for name in names:
        pid = temporary_pid(name)
        if pid is None or not _process_gone(pid):
            continue
        path = name if dir_fd is not None else os.path.join(folder, name)
        try:
            os.unlink(path, dir_fd=dir_fd)
        except FileNotFoundError:
            continue  # another process cleaned it first
        except OSError:
            # A folder (an interrupted extraction): unlink gives EISDIR, or EPERM on some systems.
            import shutil

            shutil.rmtree(path, ignore_errors=True, dir_fd=dir_fd)
        removed.append(name)
    return removed


def temporary_folder(base: str, parent: str | None = None) -> str:
    """A new, private folder in `parent` (default: the system's temp folder), named as the
    temporaries beside an output are (`.BASE.gamepak-PID-N.tmp`), after removing the ones dead
    processes left there. The caller removes it when done; if this process is killed first, the
    next one does."""
    if parent is None:
        import tempfile

        parent = tempfile.gettempdir()
    remove_stale_temporaries(parent)
    while True:
        path = os.path.join(parent, temporary_name(base))
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue  # left by a live process that had this PID before: take the next number
        except OSError as exc:
            raise GamepakError(f"{parent}: cannot make a temporary folder: {exc.strerror}") from exc
        return path


def write_via_temporary(path: str | os.PathLike[str], fill: Callable[[int], object], *, overwrite: bool) -> None:
    """Create `path` from what `fill(fd)` writes into a temporary file beside it."""
    target = os.fspath(path)

    def make(temporary: str) -> None:
        try:
            fd = os.open(
                temporary,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0),
                0o644,
            )
        except OSError as exc:
            raise GamepakError(f"{target}: cannot write: {exc.strerror}") from exc
        try:
            fill(fd)
        finally:
            os.close(fd)

    make_via_temporary(target, make, overwrite=overwrite)


def make_via_temporary(path: str | os.PathLike[str], make: Callable[[str], object], *, overwrite: bool) -> None:
    """Create `path` from the file `make(temporary)` makes at a temporary path beside it (a
    copy edited in place, a pack a writer builds); what it left is removed when it fails."""
    target = os.fspath(path)
    if not overwrite and os.path.lexists(target):
        from ..errors import OutputExistsError  # rarely raised: made on first use

        raise OutputExistsError(target)
    folder, base = os.path.split(os.path.abspath(target))
    remove_stale_temporaries(folder)
    temporary = os.path.join(folder, temporary_name(base))
    try:
        make(temporary)
        _publish(temporary, target, overwrite)
    except BaseException:
        try:  # noqa: SIM105 - contextlib costs start-up time
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


def _publish(temporary: str, target: str, overwrite: bool) -> None:
    if overwrite:
        os.replace(temporary, target)
        return
    try:
        os.link(temporary, target)
    except FileExistsError:
        from ..errors import OutputExistsError  # rarely raised: made on first use

        raise OutputExistsError(target) from None
    except OSError:
        # A file system without hard links: the existence check made before writing stands.
        os.rename(temporary, target)
        return
    os.unlink(temporary)


def write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    """Write every byte of `data` to `fd`."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def replace_with_file(path: str | os.PathLike[str], source: str) -> None:
    """Make `path` hold the file `source` (a private scratch file, which is used up), atomically:
    renamed into place when both are on one file system, else copied through a temporary beside
    `path`. Either way a reader sees the old file or the new one."""
    import errno

    target = os.fspath(path)
    try:
        os.replace(source, target)
        return
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise GamepakError(f"{target}: cannot write: {exc.strerror}") from exc

    def fill(fd: int) -> None:
        # Another file system: no kernel copy between them to try.
        with open(source, "rb") as handle:
            while chunk := handle.read(1 << 20):
                write_all(fd, chunk)

    write_via_temporary(target, fill, overwrite=True)
    os.unlink(source)


def write_bytes(path: str | os.PathLike[str], data: bytes, *, overwrite: bool = False) -> None:
    """Create `path` holding `data`, atomically; an existing file is kept unless `overwrite`."""
    write_via_temporary(path, lambda fd: write_all(fd, data), overwrite=overwrite)
