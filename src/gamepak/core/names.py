"""Member-name rules shared by every layer: which path components a stored name stands for on
disk, and which names can never be written safely. Extraction, create's manifests, editing,
mounting and the catalog all ask here, so one name means one path everywhere."""

from __future__ import annotations

import os

from ..errors import UnsafePathError

# The rules every read of a name meets (`safe_parts`, `member_matches`, NAME_MAX) live in
# `stored_names`, which every command that opens a pack has loaded already: importing this
# module for them was 0.6 M instructions of `verify`, `rm` and `compact`. Known here too.
from .stored_names import NAME_MAX, member_matches, safe_parts  # noqa: F401

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable


def check_new_name(
    name: object,
    taken: Iterable[str] = (),
    *,
    flat: bool = False,
    ignore_case: bool = False,
    max_bytes: int = NAME_MAX,
) -> str:
    """The rule every writer of names applies (`add`, `texture add --name`, patch members), so
    nothing is stored that extraction would refuse to take out again: a non-empty string
    without NUL or backslash, that `safe_parts` (extraction's rule) takes: not absolute, no
    drive letter, no '..' part, a file part; no trailing '/'; each part at most `max_bytes`
    bytes on disk (NAME_MAX, the file systems' limit; less where export adds a suffix); no '/'
    at all where names are `flat`; not one of `taken`, nor (`ignore_case`, where the game
    ignores case) the same as one ignoring case. Returns `name`; UnsafePathError says why."""
    if not isinstance(name, str):
        raise UnsafePathError(repr(name), "a name must be text")
    if not name:
        raise UnsafePathError(name, "empty name")
    if "\0" in name:
        raise UnsafePathError(name, "NUL byte in name")
    if "\\" in name:
        raise UnsafePathError(name, "backslash in name (use '/' between folders)")
    parts = safe_parts(name)  # absolute paths, drive letters, '..', names too long to encode
    if flat and "/" in name:
        raise UnsafePathError(name, "a '/' in a name that holds no folders")
    if name.endswith("/"):
        raise UnsafePathError(name, "a trailing '/' names a folder, not a file")
    for part in parts:
        length = len(part) if part.isascii() else len(os.fsencode(part))
        if length > max_bytes:
            raise UnsafePathError(name, f"the path part {part[:24]!r}... is {length} bytes; at most {max_bytes}")
    for other in taken:
        if other == name:
            raise UnsafePathError(name, "the name is taken")
        if ignore_case and other.lower() == name.lower():
            raise UnsafePathError(name, f"differs only in case from {other!r}, and the game ignores case")
    return name


# --- What a Windows (or case-insensitive) file system can hold ------------------------------
# Extraction applies these rules on Windows and macOS by itself, and anywhere when asked
# (`extractall(..., windows_names=True)`, `gamepak extract --windows-names`): packs made on Linux
# are shared with Windows users, whose file systems would refuse these names or, worse, write
# two members into one file.
WINDOWS_RESERVED = frozenset(
    ["CON", "PRN", "AUX", "NUL"] + [f"COM{n}" for n in range(1, 10)] + [f"LPT{n}" for n in range(1, 10)]
)
WINDOWS_FORBIDDEN = frozenset('<>:"|?*') | frozenset(map(chr, range(32)))


def windows_name_problem(name: str) -> str | None:
    """Why Windows cannot hold the member `name` as a path, or None."""
    if "\\" in name:
        return "a backslash, which Windows reads as a folder separator"
    if name[1:2] == ":" and name[:1].isalpha():
        return "a drive letter"
    for part in name.split("/"):
        if not part:
            continue
        bad = sorted(set(part) & WINDOWS_FORBIDDEN)
        if bad:
            shown = ", ".join(repr(c) for c in bad)
            return f"the path part {part!r} holds {shown}, which Windows does not allow in names"
        if part[-1] in ". " and part not in (".", ".."):
            return f"the path part {part!r} ends with a dot or a space, which Windows drops"
        if part.split(".", 1)[0].rstrip(" ").upper() in WINDOWS_RESERVED:
            return f"the path part {part!r} is a reserved device name on Windows"
    return None


def case_collisions(paths: list[str]) -> list[list[str]]:
    """Groups of paths that differ only in case (one file on NTFS and APFS: data loss)."""
    groups: dict[str, list[str]] = {}
    for path in paths:
        groups.setdefault(path.casefold(), []).append(path)
    return [group for group in groups.values() if len(group) > 1]


def check_windows_names(names: list[str], paths: list[str]) -> None:
    """UnsafePathError naming every member Windows could not hold, and every group of paths
    that differ only in case. `names` are the stored names, `paths` where they would be written."""
    problems = [(name, reason) for name in names if (reason := windows_name_problem(name)) is not None]
    for group in case_collisions(paths):
        problems.append(
            (group[0], f"differs only in case from {', '.join(map(repr, group[1:]))}: one file on Windows and macOS")
        )
    if problems:
        first, reason = problems[0]
        more = "".join(f"\n  {name!r}: {why}" for name, why in problems[1:])
        raise UnsafePathError(first, reason + (f" ({len(problems)} members refused){more}" if more else ""))
