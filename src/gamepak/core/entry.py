"""What an archive lists and reports: `Entry` (one member), `Problem` (one finding of `verify`),
`RawRange` (member data that is a plain byte range of the file). Below `archive` and `writer`,
which both use them; format modules import them from `core.archive` as before.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any, TypeAlias


class Entry:
    """One member: its name, its (decompressed) size, where its data starts in the file, and its
    stored size when that differs from `size` (compressed), else None."""

    __slots__ = ("index", "name", "offset", "size", "stored_size")

    def __init__(self, name: str, size: int, offset: int, stored_size: int | None = None, index: int = 0) -> None:
        self.name = name
        self.size = size
        self.offset = offset
        self.stored_size = stored_size
        self.index = index

    def to_dict(self) -> dict[str, Any]:
        """The fields `gamepak ls --json` prints: `stored_size` is the bytes the pack holds for
        the member (its `size` where it is stored as it is), as `info`'s total."""
        return {
            "name": self.name,
            "size": self.size,
            "offset": self.offset,
            "stored_size": self.size if self.stored_size is None else self.stored_size,
            "index": self.index,
        }

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} {self.name!r} size={self.size} offset={self.offset}"
            f" stored_size={self.stored_size}>"
        )


class Problem:
    """One finding of `Archive.check()`: an "error" (a member's bytes are wrong or unreadable) or a
    "warning" (a field breaks the game's own convention but nothing is lost)."""

    __slots__ = ("member", "message", "offset", "severity")

    def __init__(
        self, message: str, *, severity: str = "error", offset: int | None = None, member: str | None = None
    ) -> None:
        self.message = message
        self.severity = severity
        self.offset = offset
        self.member = member

    def to_dict(self) -> dict[str, Any]:
        """The fields `gamepak verify --json` prints."""
        return {"severity": self.severity, "message": self.message, "offset": self.offset, "member": self.member}

    def __repr__(self) -> str:
        return f"<Problem {self.severity}: {self.message}>"


def split_problems(problems: list[Problem]) -> tuple[list[Problem], list[Problem]]:
    """(errors, warnings) of a check: errors fail `verify`, warnings only with --strict."""
    errors = [problem for problem in problems if problem.severity == "error"]
    return errors, [problem for problem in problems if problem.severity != "error"]


class RawRange:
    """Member data that is a plain byte range of the archive file (copied without decoding)."""

    __slots__ = ("offset", "size")

    def __init__(self, offset: int, size: int) -> None:
        self.offset = offset
        self.size = size


# What `_member_data` yields for each member: a raw range, or the member's bytes in chunks.
# `_member_views` may hand out views into a buffer instead (for writing out only).
if TYPE_CHECKING:
    MemberData: TypeAlias = RawRange | Iterable[bytes]
    MemberViews: TypeAlias = RawRange | Iterable[bytes | memoryview]
else:
    MemberData = MemberViews = object  # annotations only; the real aliases above are for type checkers
