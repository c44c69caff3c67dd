"""Member-name rules shared by every layer: which path components a stored name stands for on
disk, which names can never be written safely, and what a Windows (or case-insensitive) file
system can hold. Extraction, create's manifests, editing, mounting and the catalog all ask
here (or in `stored_names`, for the rules re-exported below), so one name means one path
everywhere."""

from __future__ import annotations

from ..errors import UnsafePathError

# The rules every read of a name meets (`safe_parts`, `member_matches`, NAME_MAX) and the rule
# of new names (`check_new_name`) live in `stored_names`, which every command that opens a pack
# has loaded already: importing this module for them was 0.6 M instructions of `verify`, `rm`,
# `compact`, `add` and `mv`. Known here too.
from .stored_names import NAME_MAX, check_new_name, member_matches, safe_parts  # noqa: F401

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
