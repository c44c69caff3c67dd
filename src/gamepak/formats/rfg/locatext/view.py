"""The registry's view of an `.rfglocatext`: a table with no members, for `info` and `verify`.

The format itself (layout, reading, writing) is in the package's `__init__`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ....core.archive import Archive, Entry, Problem
from ....core.registry import made_on_first_use
from ....errors import FormatLimitError
from . import EXTENSION, HEADER, MAX_FILE, build, language_of, scan, sniff

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ....core.archive import PendingMember
    from ....core.writer import ArchiveWriter, Output

__all__ = ["Reader", "Writer", "sniff"]  # noqa: F822 - Writer is made on first use (__getattr__)


class Reader(Archive):
    """An `.rfglocatext` opened for `info` and `verify`: a string table with no members."""

    format_name = "rfglocatext"
    contents_hint = "its strings come out with `gamepak text export` and go back with `gamepak text import`"

    def _load(self) -> None:
        size = self._source.size
        if size > MAX_FILE:
            raise self.corrupt(f"{size} bytes is too large for an .rfglocatext", 0)
        data = self._source.read_exact(size, 0, EXTENSION)
        self.data = data
        self.entries, self.problems = scan(data, self.filename)
        errors = [problem for problem in self.problems if problem.severity == "error"]
        # Only the header's errors stop opening: entry errors are listed by `verify`.
        if errors and (errors[0].offset or 0) < HEADER.size:
            raise self.corrupt(errors[0].message, errors[0].offset)
        self._names = []
        self._entries = []

    def header_fields(self) -> dict[str, Any]:
        _, version, count = HEADER.unpack_from(self.data, 0)
        lengths = [len(entry.raw) for entry in self.entries]
        return {
            "version": version,
            "string_count": count,
            "string_bytes": sum(lengths),
            "empty_strings": lengths.count(2),
            "language": language_of(self.filename),
        }

    def _check(self) -> list[Problem]:
        return [Problem(found.message, severity=found.severity, offset=found.offset) for found in self.problems]

    def _member_data(self, entries: list[Entry]) -> Any:
        return iter(())


def _make_writer() -> type[ArchiveWriter]:
    """The `.rfglocatext` writer's class, made when something writes (`made_on_first_use`):
    `info` and `verify` import nothing of the writing side."""
    from ....core.writer import ArchiveWriter

    class Writer(ArchiveWriter):
        """Writes an empty `.rfglocatext` (no strings); strings come in with `gamepak text import`."""

        format_name = "rfglocatext"
        option_defaults: ClassVar[dict[str, Any]] = {}

        def _check_name(self, name: str) -> None:
            raise FormatLimitError(
                f"an .rfglocatext holds strings by hash, not members ({name!r}); use `gamepak text import`"
            )

        def _write(self, out: Output, members: list[PendingMember]) -> None:
            out.write(build([]))

    return Writer


__getattr__ = made_on_first_use(globals(), {"Writer": _make_writer})
