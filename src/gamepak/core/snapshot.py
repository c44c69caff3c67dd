"""Input files as writers see them: which file a path is, and its bytes as one snapshot.

A file is known by its device and inode number, not its path: a hard link, a symlink or a path
spelled another way still names the same file, and a pack must never be its own input (an
in-place edit would read bytes it is overwriting).
"""

from __future__ import annotations

import os


def file_identity(info: os.stat_result) -> tuple[int, int]:
    """What tells one file from another: (device, inode)."""
    return info.st_dev, info.st_ino


def same_file(first: str | os.PathLike[str], second: str | os.PathLike[str]) -> bool:
    """Whether two paths name one existing file (False when either cannot be looked up)."""
    try:
        return file_identity(os.stat(first)) == file_identity(os.stat(second))
    except (OSError, ValueError):
        return False
