"""gamepak's exceptions: one base, a few precise subclasses.

Library code raises only these on malformed data or impossible requests; the CLI turns any
`GamepakError` into one line on stderr and exit code 1.

    GamepakError
      UnknownFormatError
        AmbiguousFormatError*, UnnamedFormatError*
      CorruptArchiveError
      MemberNotFoundError (also a KeyError)
      UnsafePathError
      UnsupportedFeatureError
        InvalidOptionError*, NotAnArchiveError*
      FormatLimitError*, InputChangedError*, MissingDependencyError*, UsageError*
      OutputExistsError* (also a FileExistsError)

The classes marked * are rarely raised and made on first use (PEP 562's module `__getattr__`,
each by its maker in `_MAKERS`): CPython spends about 0.1 M instructions making a class, and
those nine, made for nothing, were about 1.4% of every command's start-up. Made now or later
they are the same classes: `from gamepak.errors import X`, `gamepak.errors.X`, `except X`,
`isinstance`, pickling by name and the hierarchy above are unchanged. Their bases are made
with the module.
"""

from __future__ import annotations

import os
import stat  # loaded with `os` already: no start-up cost
from _thread import allocate_lock  # `threading` would cost start-up time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class GamepakError(Exception):
    """Base of every error gamepak raises on bad input or an impossible request."""

    # The line as the command line says it, where its advice differs from the library's (an
    # option, `--format`, instead of a keyword argument, `format=`); None: the same line.
    cli_message: str | None = None

    def for_cli(self, message: str) -> GamepakError:
        """This error, saying `message` on the command line; returns it (to raise)."""
        self.cli_message = message
        return self


class UnknownFormatError(GamepakError):
    """No format fits the file, or the format name asked for does not exist."""


class CorruptArchiveError(GamepakError):
    """The data contradicts its format. Carries the file, the byte offset and the member."""

    def __init__(
        self,
        message: str,
        *,
        path: str | os.PathLike[str] | None = None,
        offset: int | None = None,
        member: str | None = None,
    ) -> None:
        self.reason = message
        self.path = os.fspath(path) if path is not None else None
        self.offset = offset
        self.member = member
        super().__init__(self._format())

    def _format(self) -> str:
        where = []
        if self.path is not None:
            where.append(str(self.path))
        if self.offset is not None:
            # A signed field read as negative has no meaningful hex form ("0x-100").
            where.append(f"offset {self.offset}" + (f" (0x{self.offset:x})" if self.offset >= 0 else ""))
        if self.member is not None:
            where.append(f"member {self.member!r}")
        return ": ".join([*where, self.reason])


class MemberNotFoundError(GamepakError, KeyError):
    """No member of that name. A `KeyError`, as `zipfile.getinfo` raises."""

    def __init__(self, name: str, archive: str | None = None) -> None:
        self.name = name
        self.archive = archive
        super().__init__(name)

    def __str__(self) -> str:
        where = f"{self.archive}: " if self.archive else ""
        return f"{where}no member named {self.name!r}"


class UnsafePathError(GamepakError):
    """A member name would be written outside the extraction folder."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason
        super().__init__(f"refusing member {name!r}: {reason}")


class UnsupportedFeatureError(GamepakError):
    """Valid data that gamepak does not handle (yet), or an option the format lacks."""


def cannot_read(
    path: str | os.PathLike[str],
    reason: OSError | str,
    *,
    what: str = "",
    error: type[GamepakError] = GamepakError,
) -> GamepakError:
    """The error for an input that cannot be opened, stat'ed or read, to raise: one line,
    `PATH: cannot read: REASON` (`PATH: cannot read the palette: REASON` with `what`), the
    same for every command. `reason` is the OSError (its strerror: "No such file or directory";
    its text when it has none; "a folder" for EISDIR, as a folder found by `fstat` is said) or
    gamepak's own words ("a folder"); `error` is the GamepakError subclass to make (a reader's
    own, e.g. PatchError). Here, not in `core.files`, because every command loads this module
    already: no start-up cost for the commands that use it."""
    if isinstance(reason, IsADirectoryError):
        reason = "a folder"
    elif isinstance(reason, OSError):
        reason = reason.strerror or str(reason)
    role = f" {what}" if what else ""
    return error(f"{os.fspath(path)}: cannot read{role}: {reason}")


def irregular_kind(mode: int) -> str:
    """What a file of `st_mode` `mode` that is not a regular file is, as `cannot_read` says it:
    "a folder", or "not a regular file (a FIFO, device or socket)"."""
    return "a folder" if stat.S_ISDIR(mode) else "not a regular file (a FIFO, device or socket)"


# The exit codes of the `gamepak` command, one table for every command (`gamepak --help` and the
# README print it). Each code means one thing everywhere: `diff` and `catalog-diff` answer
# "different" with their own code, so a script tells a difference from a missing file.
EXIT_OK = 0
EXIT_BAD_INPUT = 1
EXIT_USAGE = 2
EXIT_DIFFERENT = 3
EXIT_INTERRUPTED = 130
EXIT_CODES = (
    (EXIT_OK, "success (diff, catalog-diff: the inputs are equal)"),
    (
        EXIT_BAD_INPUT,
        "bad, missing or unreadable input, a failed check (verify, patch check), a refused request or a "
        "missing optional dependency; one line on stderr names the file, the offset or member, and the "
        "problem (for a dependency: the command that installs it)",
    ),
    (
        EXIT_USAGE,
        "usage error: an unknown command or option, a missing argument, an option value the format "
        "cannot take, an output whose format cannot be told from its name",
    ),
    (EXIT_DIFFERENT, "diff, catalog-diff: the inputs differ"),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C)"),
)


# The errors that are usage errors (exit code 2), with their subclasses.
USAGE_ERRORS = ("UsageError", "InvalidOptionError", "NotAnArchiveError", "UnnamedFormatError")


def exit_code_for(error: BaseException) -> int:
    """The exit code the CLI gives for `error` (see EXIT_CODES)."""
    # Only the classes made so far: one not made yet has no instance.
    made = tuple(globals()[name] for name in USAGE_ERRORS if name in globals())
    return EXIT_USAGE if isinstance(error, made) else EXIT_BAD_INPUT


# -- the errors made on first use ------------------------------------------------------------------
if TYPE_CHECKING:  # what type checkers (and the library's typed users) see of them

    class AmbiguousFormatError(UnknownFormatError):
        candidates: list[str]

        def __init__(self, message: str, candidates: list[str]) -> None: ...

    class UnnamedFormatError(UnknownFormatError): ...

    class InvalidOptionError(UnsupportedFeatureError):
        option: str | None

        def __init__(self, message: str, option: str | None = None) -> None: ...

    class NotAnArchiveError(UnsupportedFeatureError): ...

    class FormatLimitError(GamepakError): ...

    class InputChangedError(GamepakError):
        path: str
        change: str

        def __init__(self, path: str, change: str) -> None: ...

    class MissingDependencyError(GamepakError): ...

    class OutputExistsError(GamepakError, FileExistsError):
        path: str

        def __init__(self, path: str | os.PathLike[str]) -> None: ...

    class UsageError(GamepakError): ...


def _make_ambiguous_format_error() -> type[GamepakError]:
    class AmbiguousFormatError(UnknownFormatError):
        """Several formats fit equally well; the user has to name one."""

        def __init__(self, message: str, candidates: list[str]) -> None:
            super().__init__(message)
            self.candidates = candidates

    return AmbiguousFormatError


def _make_unnamed_format_error() -> type[GamepakError]:
    class UnnamedFormatError(UnknownFormatError):
        """An output whose format its name does not tell, and none was named (exit code 2)."""

    return UnnamedFormatError


def _make_invalid_option_error() -> type[GamepakError]:
    class InvalidOptionError(UnsupportedFeatureError):
        """A writer option the format lacks, or a value it cannot take (a usage error: the CLI
        exits 2). Carries the option's name."""

        def __init__(self, message: str, option: str | None = None) -> None:
            self.option = option
            super().__init__(message)

    return InvalidOptionError


def _make_not_an_archive_error() -> type[GamepakError]:
    class NotAnArchiveError(UnsupportedFeatureError):
        """A format that holds one thing (a model), asked to act as an archive."""

    return NotAnArchiveError


def _make_format_limit_error() -> type[GamepakError]:
    class FormatLimitError(GamepakError):
        """A writer was asked for something its format cannot hold (too many members, too long a
        name, too large a member)."""

    return FormatLimitError


def _make_input_changed_error() -> type[GamepakError]:
    class InputChangedError(GamepakError):
        """An input file changed (its size or modification time) between being queued and being
        read whole by a writer; what was being written is dropped. Carries the file's path."""

        def __init__(self, path: str, change: str) -> None:
            self.path = path
            self.change = change
            super().__init__(f"{path}: changed while being read ({change}); nothing was written")

    return InputChangedError


def _make_missing_dependency_error() -> type[GamepakError]:
    class MissingDependencyError(GamepakError):
        """An optional dependency a command needs is not installed (exit code 1, the same in every
        command). The message names what is missing and the command that installs it."""

    return MissingDependencyError


def _make_output_exists_error() -> type[GamepakError]:
    class OutputExistsError(GamepakError, FileExistsError):
        """An output file exists and overwriting was not allowed."""

        def __init__(self, path: str | os.PathLike[str]) -> None:
            self.path = os.fspath(path)
            super().__init__(f"{self.path}: already exists (use --overwrite to replace it)")

    return OutputExistsError


def _make_usage_error() -> type[GamepakError]:
    class UsageError(GamepakError):
        """A request the command line cannot take as given (exit code 2)."""

    return UsageError


_MAKERS: dict[str, Callable[[], type[GamepakError]]] = {
    "AmbiguousFormatError": _make_ambiguous_format_error,
    "UnnamedFormatError": _make_unnamed_format_error,
    "InvalidOptionError": _make_invalid_option_error,
    "NotAnArchiveError": _make_not_an_archive_error,
    "FormatLimitError": _make_format_limit_error,
    "InputChangedError": _make_input_changed_error,
    "MissingDependencyError": _make_missing_dependency_error,
    "OutputExistsError": _make_output_exists_error,
    "UsageError": _make_usage_error,
}
_MAKING = allocate_lock()  # two threads asking at once get the same class


def __getattr__(name: str) -> Any:
    maker = _MAKERS.get(name)
    if maker is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    with _MAKING:
        if name not in globals():
            made = maker()
            made.__qualname__ = name  # made inside its maker: named as a module-level class
            globals()[name] = made
    return globals()[name]


def __dir__() -> list[str]:
    return sorted({*globals(), *_MAKERS})
