"""The strings kinds' `export` and `import` verbs in their family's one call signature:

    export(file, output, member, *, <the kind's options>) -> StringsDone
    import(file, translation, output, member, *, <the kind's options>) -> StringsDone

each handing the work to its module (`ops.locatext` for RFG localization files,
`formats.j2me.text` for J2ME strings) and saying what was done in the same words, so
`gamepak text` prints any kind's result alike.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing `typing` was a sixth of `text import`'s CPU time
    from collections.abc import Sequence
    from typing import Any


class StringsDone:
    """What a strings verb did: the translation file's bytes (an export to standard output; empty
    when it was written to a file), how many strings, where they were, notes to show before
    and after the summary, and the summary of an import."""

    def __init__(
        self,
        *,
        data: bytes = b"",
        count: int = 0,
        where: str = "",
        notes: Sequence[str] = (),
        after: Sequence[str] = (),
        summary: str = "",
        unchanged: bool = False,
        written: bool = True,
    ) -> None:
        self.data = data
        self.count = count
        self.where = where
        self.notes = list(notes)
        self.after = list(after)
        self.summary = summary
        # An import whose result is the stored bytes: nothing changed (`written`: a copy was
        # still written to another output).
        self.unchanged = unchanged
        self.written = written


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


# -- RFG localization files --------------------------------------------------------------------
def locatext_export(
    file: str,
    output: str | None,
    member: str | None,
    *,
    format: str | None = None,
    translation: str | None = None,
    names: Sequence[str] | None = None,
    source: str | None = None,
    overwrite: bool = False,
) -> StringsDone:
    from ..ops.locatext import export_locatext

    result = export_locatext(
        file, output, member, format=format, translation=translation, names=names, source=source, overwrite=overwrite
    )
    count = len(result.located.table)
    return StringsDone(
        # Written to `output` a block at a time: not read back whole (the file holds it).
        data=result.data if output is None else b"",
        count=count,
        where=result.located.label,
        after=[f"{result.named} of {count} strings named; the others are exported by hash (#xxxxxxxx)"],
    )


def locatext_import(
    file: str,
    translation: str,
    output: str,
    member: str | None,
    *,
    format: str | None = None,
    translation_kind: str | None = None,
    names: Sequence[str] | None = None,
    delete: bool = False,
    overwrite: bool = False,
    dry_run: bool = False,
) -> StringsDone:
    from ..ops.locatext import import_locatext

    result = import_locatext(
        file,
        translation,
        output,
        member,
        format=format,
        translation_kind=translation_kind,
        names=names,
        delete=delete,
        overwrite=overwrite,
        dry_run=dry_run,
    )
    if result.unchanged:
        return StringsDone(where=result.located.label, unchanged=True, written=result.written)
    applied = result.applied
    parts = [f"{_plural(len(applied.changed), 'string')} changed"]
    if applied.added:
        parts.append(f"{len(applied.added)} added")
    if applied.removed:
        parts.append(f"{len(applied.removed)} removed")
    inside = f" in member {result.located.member}" if result.located.member is not None else ""
    return StringsDone(count=len(applied.changed), where=result.located.label, summary=", ".join(parts) + inside)


# -- J2ME strings ------------------------------------------------------------------------------
def _j2me_notes(file: str, member: str | None, chosen: str | None, result: Any) -> list[str]:
    """Which member of a pack held the strings and what was skipped (FILE a pack given without
    MEMBER)."""
    if member is not None or result.member is None:
        return []
    from ..core.registry import get_format

    notes = []
    if chosen is None and not get_format(result.format).has_magic:
        notes.append(f"{file}: read as {result.format} (no signature; --format to choose another)")
    skipped = f"; skipped {len(result.skipped)}:" if result.skipped else ""
    notes.append(f"{file}: the strings are member {result.member}{skipped}")
    notes.extend(f"  skipped {name}: {why}" for name, why in result.skipped)
    return notes


def _where(file: str, result: Any) -> str:
    return f"{file}/{result.member}" if result.member is not None else os.fspath(file)


def j2me_export(
    file: str,
    output: str | None,
    member: str | None,
    *,
    format: str | None = None,
    format_name: str | None = None,
    kind: str = "auto",
    translation: str | None = None,
    overwrite: bool = False,
) -> StringsDone:
    """`format`: the pack's format to read (given or detected); `format_name`: the one the user
    gave (None: a structural guess is said)."""
    from ..formats.j2me.text import export_strings

    result = export_strings(
        file, output, member, format=format, kind=kind, translation=translation, overwrite=overwrite
    )
    return StringsDone(
        data=result.data,
        count=len(result.table),
        where=_where(file, result),
        notes=_j2me_notes(file, member, format_name, result),
    )


def j2me_import(
    file: str,
    translation: str,
    output: str,
    member: str | None,
    *,
    format: str | None = None,
    format_name: str | None = None,
    kind: str = "auto",
    translation_kind: str | None = None,
    overwrite: bool = False,
) -> StringsDone:
    from ..formats.j2me.text import import_strings

    result = import_strings(
        file,
        translation,
        output,
        member,
        format=format,
        kind=kind,
        translation_kind=translation_kind,
        overwrite=overwrite,
    )
    inside = f" in member {result.member}" if result.member is not None else ""
    return StringsDone(
        count=result.changed,
        where=_where(file, result),
        notes=_j2me_notes(file, member, format_name, result),
        summary=f"{_plural(result.changed, 'string')} changed{inside}",
    )
