"""Budgets for everything a mod decodes: how large an output may be before it is produced.

Every decoder a mod reaches (an `.xdelta`'s windows, a zip member, a patch file's blob, a zstd
member delta) is told its budget first and stops at the first byte over it, so nothing is kept:

- never more than `member` bytes (the patch format's member limit, 4 GiB);
- never more than the size the mod itself declares (a zip entry's size, an operation's `size`,
  the sum of an `.xdelta`'s windows);
- never more than `growth` times the file or member it replaces plus `floor` (a small file may
  become a real one), and never more than `new_file` for a file or member that did not exist,
  unless `allow_large` (`--allow-large`) lifts these two;
- the scratch space `check` and `apply` decode deltas into holds at most `scratch` bytes, and is
  removed when they finish; so does the scratch folder `apply` decodes large new members into
  (`scratch.NewContent`).

    >>> with gamepak.ops.patch.limits.limits(allow_large=True):
    ...     gamepak.patch.apply("game", ["big.zip"])
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses

from .container import MAX_MEMBER_BYTES, PatchError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

ALLOW_LARGE_ADVICE = "--allow-large lifts this"


@dataclasses.dataclass(frozen=True)
class Limits:
    """The budgets in force (see the module's docstring)."""

    member: int = MAX_MEMBER_BYTES
    growth: int = 16
    floor: int = 64 << 20
    new_file: int = 256 << 20
    scratch: int = 8 << 30
    allow_large: bool = False

    def output(self, replaced: int | None) -> int:
        """The most bytes an output may hold that replaces `replaced` bytes (None: a new one)."""
        if self.allow_large:
            return self.member
        allowed = self.new_file if replaced is None else replaced * self.growth + self.floor
        return min(self.member, allowed)

    def check(self, where: str, size: int, replaced: int | None) -> None:
        """PatchError when an output of `size` bytes is over budget, saying which and how to
        raise it."""
        if size > self.member:
            raise PatchError(f"{where}: {size} bytes, more than the {self.member} a member may hold")
        allowed = self.output(replaced)
        if size > allowed:
            if replaced is None:
                why = f"more than the {allowed} a new file may hold"
            else:
                why = f"more than {self.growth} times the {replaced} bytes it replaces (plus {self.floor})"
            raise PatchError(f"{where}: {size} bytes, {why}; {ALLOW_LARGE_ADVICE}")


_DEFAULT = Limits()  # frozen: shared safely
_CURRENT: contextvars.ContextVar[Limits] = contextvars.ContextVar("gamepak_patch_limits", default=_DEFAULT)


def current() -> Limits:
    """The budgets in force here."""
    return _CURRENT.get()


@contextlib.contextmanager
def limits(**changes: int | bool) -> Iterator[Limits]:
    """Budgets changed for the code inside: `limits(allow_large=True)`, `limits(growth=2)`."""
    token = _CURRENT.set(dataclasses.replace(_CURRENT.get(), **changes))  # type: ignore[arg-type]
    try:
        yield _CURRENT.get()
    finally:
        _CURRENT.reset(token)
