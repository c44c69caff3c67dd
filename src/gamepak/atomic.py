"""Every file gamepak writes appears whole or not at all.

The content goes to a temporary name in the target's folder (same file system, so the final
rename is atomic) and is moved into place only when complete. Without `overwrite`, the move is a
hard link, which fails if the target appeared meanwhile: no check-then-write race.
"""

from __future__ import annotations

import contextlib
import itertools
import os

from .errors import GamepakError, OutputExistsError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_counter = itertools.count()


def write_via_temporary(path: str | os.PathLike[str], fill: Callable[[int], object], *, overwrite: bool) -> None:
    """Create `path` from what `fill(fd)` writes into a temporary file beside it."""
    target = os.fspath(path)
    if not overwrite and os.path.lexists(target):
        raise OutputExistsError(target)
    folder, base = os.path.split(os.path.abspath(target))
    temporary = os.path.join(folder, f".{base}.gamepak-{os.getpid()}-{next(_counter)}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise GamepakError(f"{target}: cannot write: {exc.strerror}") from exc
    try:
        try:
            fill(fd)
        finally:
            os.close(fd)
        _publish(temporary, target, overwrite)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def _publish(temporary: str, target: str, overwrite: bool) -> None:
    if overwrite:
        os.replace(temporary, target)
        return
    try:
        os.link(temporary, target)
    except FileExistsError:
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


def write_bytes(path: str | os.PathLike[str], data: bytes, *, overwrite: bool = False) -> None:
    """Create `path` holding `data`, atomically; an existing file is kept unless `overwrite`."""
    write_via_temporary(path, lambda fd: write_all(fd, data), overwrite=overwrite)
