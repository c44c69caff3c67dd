"""What one scan takes and gives: its options (ScanOptions), where its rows go (RowSink), the
counts it reports back (Stats), and the archives and errors rows it and the run's tasks build.
No reading here: scan.py walks the files, content_rows.py fills the content-kind tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import GamepakError
from .discovery import FileRef


def raw_name(name: str) -> bytes | None:
    """The stored bytes of a member name that is not UTF-8 text (the catalog's `raw_name`), else None."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape")
    return None


@dataclass(frozen=True)
class ScanOptions:
    """What the scan computes."""

    hash_algorithm: str = "sha256"
    nested: bool = True
    guess: str = "strict"
    verify: bool = True


class RowSink:
    """Where rows go: per table, anything with `add(row)` and `extend(count, columns, constants)`
    (schema.TableSink); no `textures` sink: no textures rows."""

    def __init__(
        self,
        members: Any,
        archives: Any,
        errors: Any,
        textures: Any = None,
        strings: Any = None,
        models: Any = None,
        zone_objects: Any = None,
    ) -> None:
        self.members = members
        self.archives = archives
        self.errors = errors
        self.textures = textures
        self.strings = strings
        self.models = models
        self.zone_objects = zone_objects


class Stats:
    """Counts a unit of work reports back (the only thing that returns to the client)."""

    def __init__(self) -> None:
        self.archives = 0
        self.members = 0
        self.errors = 0
        self.member_bytes = 0
        self.skipped = 0
        self.textures = 0
        self.strings = 0
        self.models = 0
        self.zone_objects = 0

    def to_dict(self) -> dict[str, int]:
        return dict(vars(self))


# -- rows ---------------------------------------------------------------------------------------
def error_row(
    ref: FileRef, stage: str, message: str, nested_path: str | None = None, member: str | None = None
) -> dict[str, Any]:
    return {
        "path": ref.path,
        "nested_path": nested_path,
        "member": member,
        "stage": stage,
        "message": message,
        "size": ref.size,
        "mtime": ref.mtime_ns,
    }


def archive_row(ref: FileRef, nested_path: str, depth: int, **fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "path": ref.path,
        "nested_path": nested_path,
        "depth": depth,
        "size": ref.size,
        "mtime": ref.mtime_ns,
        "status": "ok",
        "error_count": 0,
        "warning_count": 0,
    }
    row.update(fields)
    return row


def problems_fields(problems: list[Any]) -> dict[str, Any]:
    """The archives columns that `Archive.check()`'s findings fill."""
    errors = sum(1 for p in problems if p.severity == "error")
    warnings = len(problems) - errors
    return {
        "problems": [p.to_dict() for p in problems],
        "error_count": errors,
        "warning_count": warnings,
        "status": "errors" if errors else "warnings" if warnings else "ok",
    }


def describe_error(exc: BaseException) -> str:
    """One line for an errors row: gamepak's own messages as they are, others with their type."""
    if isinstance(exc, GamepakError):
        return str(exc)
    if isinstance(exc, OSError):
        return f"{exc.strerror or exc}"
    return f"{type(exc).__name__}: {exc}"
