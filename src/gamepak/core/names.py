"""Member-name rules shared by every layer: which path components a stored name stands for on
disk, and which names can never be written safely. Extraction, create's manifests, editing,
mounting and the catalog all ask here, so one name means one path everywhere."""

from __future__ import annotations

import os

from ..errors import UnsafePathError
from .atomic import NAME_MAX


def safe_parts(name: str) -> list[str]:
    """The path components a member name stands for, or `UnsafePathError`."""
    if not name:
        raise UnsafePathError(name, "empty name")
    if "\0" in name:
        raise UnsafePathError(name, "NUL byte in name")
    if name[0] in "/\\":
        raise UnsafePathError(name, "absolute path")
    if name[1:2] == ":" and name[0].isascii() and name[0].isalpha():
        raise UnsafePathError(name, "drive letter")
    parts = [part for part in name.replace("\\", "/").split("/") if part not in ("", ".")]
    if ".." in parts:
        raise UnsafePathError(name, "'..' would leave the destination")
    if not parts:
        raise UnsafePathError(name, "name has no file part")
    for part in parts:
        try:
            length = len(os.fsencode(part))
        except UnicodeError:
            raise UnsafePathError(name, "the name cannot be encoded for this file system") from None
        if length > NAME_MAX:
            raise UnsafePathError(
                name, f"the path part {part[:24]!r}... is {length} bytes; file systems allow {NAME_MAX}"
            )
    return parts
