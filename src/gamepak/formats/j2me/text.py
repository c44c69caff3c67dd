"""The strings of Gameloft J2ME games, exported for translators and imported back: the strings
of a file or of a pack's member (in one of the shapes `string_tables` reads) written as a
translation file (`translations`), and a translation written back into the file or the pack.

A pack (any J2ME layout) given without a member: the member that holds strings is used when there
is exactly one; the others are listed as skipped, with the reason.

Translation files keep each string's index:

- JSON: a UTF-8 array of `{"index": N, "text": "..."}`.
- CSV: UTF-8 **with a byte-order mark** (so spreadsheet programs detect UTF-8), header
  `index,text`, fields quoted as needed (commas, quotes, line breaks). Reading accepts a file
  with or without the mark, separated by commas, semicolons or tabs (what spreadsheets save in
  locales whose decimal mark is a comma); the header row tells which.
- PO (gettext, via polib): `msgctxt` is the index, `msgid` the original text, `msgstr` the
  translation. Importing uses `msgstr` when it is non-empty and not marked fuzzy, else the
  original string. An entry whose `msgid` is not the original's string at that index (a PO file
  made from another version of the pack) is imported with a warning naming it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ...core.atomic import write_bytes as write_atomic
from ...errors import GamepakError, MemberNotFoundError
from .records import find_records
from .string_tables import StringTable, TextShapeError, decode_string, find_offset_table, looks_like_text_pack
from .translations import dump_translation, load_translation, translation_format


@dataclass
class TextMember:
    """Where strings were found: the pack's member (None: the file itself) and its table;
    `skipped` lists the pack's other members with the reason each holds no strings."""

    member: str | None
    table: StringTable
    skipped: list[tuple[str, str]] = field(default_factory=list)
    # The pack's format when the strings are a member's (None: the file itself).
    format: str | None = None


@dataclass
class TextExport(TextMember):
    """What `export_strings` did: the translation file's bytes, and where the strings came from."""

    data: bytes = b""


@dataclass
class TextImport(TextMember):
    """What `import_strings` did: how many strings changed, and where."""

    changed: int = 0


def _read_file(path: str | os.PathLike[str]) -> bytes:
    """A strings file or pack, read whole: at most the strings budget (`core.content_limits`)."""
    from ...core.content_limits import read_strings_file

    return read_strings_file(path)


def _find_member(archive: Any, member: str) -> Any:
    """The entry `member` names: a member name, or the name it is extracted under (`0.txt`)."""
    try:
        return archive.getinfo(member)
    except MemberNotFoundError:
        for entry in archive.infolist():
            if archive.extraction_name(entry) == member:
                return entry
        raise


def text_members(archive: Any, kind: str = "auto") -> tuple[list[tuple[Any, StringTable]], list[tuple[str, str]]]:
    """The members of an open pack that hold strings, as (entry, table), and the others as
    (name, why not)."""
    found = []
    skipped = []
    for entry in archive.infolist():
        try:
            found.append((entry, StringTable.parse(archive.read(entry), kind, entry.name)))
        except TextShapeError as exc:
            skipped.append((entry.name, exc.reason))
        except GamepakError as exc:
            skipped.append((entry.name, str(exc).removeprefix(f"{entry.name}: ")))
    return found, skipped


def _open_pack(file: str | os.PathLike[str], format: str | None) -> Any:
    from ...core.opening import open as open_archive

    return open_archive(file, format)


def _locate(archive: Any, label: str, member: str | None, kind: str) -> tuple[Any, TextMember]:
    """The entry holding the strings and what was found: `member`, else the pack's one
    member that holds strings."""
    if member is not None:
        entry = _find_member(archive, member)
        return entry, TextMember(entry.name, StringTable.parse(archive.read(entry), kind, f"{label}/{entry.name}"))
    found, skipped = text_members(archive, kind)
    if len(found) == 1:
        entry, table = found[0]
        return entry, TextMember(entry.name, table, skipped)
    listed = "; ".join(f"{name}: {why}" for name, why in skipped[:5])
    more = f" and {len(skipped) - 5} more" if len(skipped) > 5 else ""
    if not found:
        hint = "; a member of bare NUL-terminated strings reads with --kind blob" if kind == "auto" else ""
        raise TextShapeError(
            f"{label}: a {archive.format_name} pack with no member that holds strings "
            f"({len(skipped)} skipped: {listed}{more}){hint}"
        )
    names = ", ".join(f"{entry.name} ({len(table)} strings)" for entry, table in found)
    raise TextShapeError(
        f"{label}: {len(found)} members of this {archive.format_name} pack hold strings: {names}; name the MEMBER"
    )


def read_strings(
    file: str | os.PathLike[str],
    member: str | None = None,
    *,
    format: str | None = None,
    kind: str = "auto",
) -> StringTable:
    """The strings of `file` (a text pack, an offset-indexed table or a string blob), or of
    its `member` when given (the pack is read as `format`, or detected). A pack given without
    a member gives the strings of its one member that holds strings."""
    return locate_strings(file, member, format=format, kind=kind).table


def locate_strings(
    file: str | os.PathLike[str],
    member: str | None = None,
    *,
    format: str | None = None,
    kind: str = "auto",
) -> TextMember:
    """Like `read_strings`, saying which member held the strings (and the pack's format) and
    which members were skipped."""
    label = os.fspath(file)
    if member is None and format == "j2me-sized":
        return TextMember(None, StringTable.parse(_read_file(file), "pack", label))
    if member is None and format is None:
        data = _read_file(file)
        if kind != "auto":
            # A pack's header would be taken for strings too (and rewritten as such on import):
            # a file that is a pack is read through its member.
            # (A text pack is itself a two-member j2me-sized pack: --kind pack means the file.)
            whole = kind == "pack" or looks_like_text_pack(data)
            pack_format, _ = (None, None) if whole else _detect_pack(file)
            if pack_format is None:
                return TextMember(None, StringTable.parse(data, kind, label))
            format = pack_format
        if looks_like_text_pack(data) or find_offset_table(data) is not None or find_records(data) is not None:
            return TextMember(None, StringTable.parse(data, kind, label))
        # A pack's header split at its NUL bytes looks like strings: packs first, then blobs.
        format, ambiguity = _detect_pack(file)
        if format is None:
            try:
                return TextMember(None, StringTable.parse(data, kind, label))
            except TextShapeError:
                if ambiguity is not None:
                    raise ambiguity from None
                raise
    with _open_pack(file, format) as archive:
        located = _locate(archive, label, member, kind)[1]
        located.format = archive.format_name
        return located


def _detect_pack(file: str | os.PathLike[str]) -> tuple[str | None, GamepakError | None]:
    """The archive format `file` is detected as (None when none fits or several fit equally
    well: then also that ambiguity, to report if the file is not text either)."""
    from ...core.opening import choose_format
    from ...core.registry import get_format
    from ...errors import AmbiguousFormatError

    try:
        detected = str(choose_format(file).format)
    except AmbiguousFormatError as exc:
        return None, exc
    except GamepakError:
        return None, None
    return (detected if get_format(detected).kind == "archive" else None), None


def export_strings(
    file: str | os.PathLike[str],
    output: str | os.PathLike[str] | None = None,
    member: str | None = None,
    *,
    format: str | None = None,
    kind: str = "auto",
    translation: str | None = None,
    overwrite: bool = False,
) -> TextExport:
    """Export the strings of `file` (or of its `member`; or of the one member of the pack
    `file` that holds strings) as a translation file; writes `output` atomically when given.
    The result holds the file's bytes, the member used and the members skipped."""
    found = locate_strings(file, member, format=format, kind=kind)
    encoded = dump_translation(
        found.table.texts, translation_format(output, translation), source=os.path.basename(os.fspath(file))
    )
    if output is not None:
        write_atomic(output, encoded, overwrite=overwrite)
    return TextExport(found.member, found.table, found.skipped, found.format, data=encoded)


def import_strings(
    file: str | os.PathLike[str],
    translation: str | os.PathLike[str],
    output: str | os.PathLike[str],
    member: str | None = None,
    *,
    format: str | None = None,
    kind: str = "auto",
    translation_kind: str | None = None,
    overwrite: bool = False,
) -> TextImport:
    """Write `output`: `file` with the strings of `translation` (or its `member`'s strings
    replaced, the enclosing pack rebuilt in its own format and layout). Everything is checked
    before anything is written. The result says how many strings changed, in which member."""
    fmt = translation_format(translation, translation_kind)
    located = locate_strings(file, member, format=format, kind=kind)
    table = located.table
    from ...core.files import read_file

    texts = load_translation(
        read_file(translation), len(table), fmt, where=os.fspath(translation), originals=table.texts
    )
    rebuilt = table.rebuild(texts)
    changed = sum(decode_string(raw) != text for raw, text in zip(table.raw_strings, texts))
    if located.member is None:
        write_atomic(output, rebuilt, overwrite=overwrite)
        return TextImport(None, table, located.skipped, changed=changed)
    from ...core.opening import create

    with _open_pack(file, located.format) as archive:
        target = _find_member(archive, located.member)
        layout = archive.layout()
        writer = create(
            output,
            archive.format_name,
            overwrite=overwrite,
            layout=layout.get("exact", {}),
            **layout.get("options", {}),
        )
        with writer:
            for entry in archive.infolist():
                writer.add(entry.name, rebuilt if entry is target else archive.read(entry))
    return TextImport(located.member, table, located.skipped, located.format, changed=changed)
