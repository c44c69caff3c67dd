"""`gamepak text` for RFG localization files: find the `.rfglocatext` (loose, or a member of
a pack, nested too), name its entries, export a translation file, import one back.

The translation forms are in `formats.rfg.locatext.translate`, how a translation is applied
in `formats.rfg.locatext.apply`. Inside a pack, the new pack is written beside the output
under a temporary name (a copy edited with `ops.edit`) and renamed into place, so it appears
whole or not at all.
"""

from __future__ import annotations

import os

from ..errors import GamepakError, MemberNotFoundError
from ..formats.rfg.locatext import EXTENSION, LocaText, is_locatext
from ..formats.rfg.locatext.apply import Applied, apply_translation
from ..formats.rfg.locatext.translate import (
    dump_translation,
    load_translation,
    looks_like_xml,
    translation_format,
    translation_parts,
)

PACK_EXTENSIONS = (".vpp_pc", ".str2_pc")

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from collections.abc import Sequence


class Located:
    """Where a localization file's strings are: `member` of the pack `file` (a nested path, or
    None for the file itself), its parsed table, and the pack's format."""

    def __init__(self, file: str, member: str | None, table: LocaText, format: str | None = None) -> None:
        self.file = file
        self.member = member
        self.table = table
        self.format = format

    @property
    def label(self) -> str:
        return self.file if self.member is None else f"{self.file}/{self.member}"


def _read_head(path: str, size: int = 4) -> bytes:
    from ..core.files import read_head

    return read_head(path, size)


def _read_all(path: str) -> bytes:
    from ..core.files import read_file

    return read_file(path)


def _remove_dead_temporaries(path: str) -> None:
    """Remove the temporaries a killed gamepak process left beside `path` (`core.atomic`: a
    `text import` killed while writing it), as the next edit of a pack does."""
    from ..core.atomic import remove_stale_temporaries

    remove_stale_temporaries(os.path.dirname(os.path.abspath(path)))


def locatext_members(archive: object, prefix: str = "") -> list[str]:
    """The `.rfglocatext` members of an open pack and of the packs inside it, as member paths."""
    from ..core.archive import Archive

    assert isinstance(archive, Archive)
    found = []
    for entry in archive.infolist():
        lowered = entry.name.lower()
        if lowered.endswith(EXTENSION):
            found.append(prefix + entry.name)
        elif lowered.endswith(PACK_EXTENSIONS):
            try:
                inner = archive.open_archive(entry)
            except GamepakError:
                continue
            with inner:
                found += locatext_members(inner, f"{prefix}{entry.name}/")
    return found


def is_locatext_target(file: str, member: str | None = None) -> bool:
    """Whether `gamepak text` should read FILE (or FILE's MEMBER) as an `.rfglocatext`: the file
    starts with its signature, MEMBER is named `.rfglocatext`, or FILE is an RFG pack holding
    one (J2ME packs are never RFG packs)."""
    if member is not None:
        return member.lower().endswith(EXTENSION)
    if not os.path.isfile(file):
        return False
    head = _read_head(file)
    if is_locatext(head):
        return True
    return head == b"\xce\x0a\x89\x51" and file.lower().endswith(PACK_EXTENSIONS)


def locate(
    file: str | os.PathLike[str], member: str | None = None, *, format: str | None = None, read_only: bool = False
) -> Located:
    """The `.rfglocatext` at `file`, or its `member` (a path through nested packs), or the one
    a pack `file` holds. What killed runs left beside `file` is removed first, unless
    `read_only` (an import's dry run)."""
    path = os.fspath(file)
    if not read_only:
        _remove_dead_temporaries(path)
    if member is None and format is None and is_locatext(_read_head(path)):
        from ..core.content_limits import read_strings_file

        return Located(path, None, LocaText.parse(read_strings_file(path), path))
    from ..core.nested import resolve
    from ..core.opening import open as open_archive

    with open_archive(path, format) as archive:
        if member is None:
            found = locatext_members(archive)
            if len(found) != 1:
                listed = ", ".join(found[:8]) + (f" and {len(found) - 8} more" if len(found) > 8 else "")
                what = f"{len(found)} localization files: {listed}; name the MEMBER" if found else "no .rfglocatext"
                raise GamepakError(f"{path}: a {archive.format_name} pack with {what}")
            member = found[0]
        try:
            inner, entry = resolve(archive, member)
        except MemberNotFoundError:
            raise GamepakError(f"{path}: no member {member!r}") from None
        label = f"{path}/{member}"
        from ..core.content_limits import strings_file_too_large

        too_large = strings_file_too_large(label, entry.size)
        if too_large is not None:
            raise GamepakError(too_large)
        data = inner.read(entry)
        return Located(path, member, LocaText.parse(data, label), archive.format_name)


def name_entries(located: Located, sources: Sequence[str] | None, name_lists: Sequence[str] = ()) -> int:
    """Give `located`'s entries the identifiers found in `sources` (None: the packs beside the
    file) and the name lists; returns how many entries are named."""
    from ..formats.rfg.locatext.names import default_sources, find_names

    chosen = default_sources(located.file) if sources is None else list(sources)
    wanted = {entry.hash for entry in located.table.entries}
    names = find_names(chosen, name_lists, wanted)
    return located.table.name(names.identifiers)


class LocaExport:
    """What `export_locatext` did: where the strings were, the translation file's bytes, and
    how many entries were named."""

    def __init__(self, located: Located, data: bytes | None, named: int, output: str | None = None) -> None:
        self.located = located
        # None: written to `output` a block at a time and never held whole (read back if asked).
        self._data = data
        self._output = output
        self.named = named

    @property
    def data(self) -> bytes:
        """The translation file's bytes."""
        if self._data is None:
            assert self._output is not None
            from ..core.files import read_file

            return read_file(self._output, what="the exported translation")
        return self._data


class LocaImport:
    """What `import_locatext` did: where the strings were, what changed, whether the result
    is the strings' stored bytes (`unchanged`) and whether `output` was written."""

    def __init__(self, located: Located, applied: Applied, unchanged: bool = False, written: bool = True) -> None:
        self.located = located
        self.applied = applied
        self.unchanged = unchanged
        self.written = written


def export_locatext(
    file: str | os.PathLike[str],
    output: str | os.PathLike[str] | None = None,
    member: str | None = None,
    *,
    format: str | None = None,
    translation: str | None = None,
    names: Sequence[str] | None = None,
    name_lists: Sequence[str] = (),
    source: str | os.PathLike[str] | None = None,
    overwrite: bool = False,
) -> LocaExport:
    """Export the strings of an `.rfglocatext` (loose, or a pack's `member`) as a translation
    file, naming entries from the tables in `names` (None: the packs beside it) and the name
    lists; `source` is a reference language's file whose strings are shown beside them."""
    located = locate(file, member, format=format)
    named = name_entries(located, names, name_lists)
    sources = None
    if source is not None:
        sources = {entry.hash: entry.text for entry in locate(source).table.entries}
    chosen = translation_format(output, translation)
    title = os.path.basename(located.label)
    if output is None:
        encoded = dump_translation(located.table.entries, chosen, sources=sources, title=title)
        return LocaExport(located, encoded, named)
    from ..core.atomic import write_all, write_via_temporary

    def fill(fd: int) -> None:
        # A block at a time: the whole text and its joined copy were 3.5 bytes per input byte.
        for part in translation_parts(located.table.entries, chosen, sources=sources, title=title):
            write_all(fd, part)

    write_via_temporary(output, fill, overwrite=overwrite)
    return LocaExport(located, None, named, os.fspath(output))


def import_locatext(
    file: str | os.PathLike[str],
    translation: str | os.PathLike[str],
    output: str | os.PathLike[str],
    member: str | None = None,
    *,
    format: str | None = None,
    translation_kind: str | None = None,
    names: Sequence[str] | None = None,
    name_lists: Sequence[str] = (),
    delete: bool = False,
    overwrite: bool = False,
    dry_run: bool = False,
) -> LocaImport:
    """Write `output`: `file` (or the pack `file` with its `member` rebuilt) holding the strings
    of `translation`. Checked whole before anything is written; inside a pack, the new pack
    appears whole or not at all. When the strings come out as stored and `output` is `file`
    itself, nothing is written (its modification time stays); `dry_run` writes nothing."""
    where = os.fspath(translation)
    data = _read_all(where)
    kind = "rfgm-xml" if looks_like_xml(data) else translation_format(translation, translation_kind)
    rows = load_translation(data, kind, where)
    located = locate(file, member, format=format, read_only=dry_run)
    # Identifiers named in the file guard against collisions; only needed when rows name some.
    if rows.identifiers.count(None) != len(rows) and (names is None or names or name_lists):
        name_entries(located, names, name_lists)
    applied = apply_translation(located.table, rows, delete=delete)
    original = located.table.original
    if original is not None and not (applied.changed or applied.added or applied.removed):
        # The strings and their order are as read (an identifier is not stored in the file):
        # the file's own bytes, without comparing every string with them.
        rebuilt, unchanged = original, True
    else:
        rebuilt = located.table.to_bytes()
        unchanged = rebuilt == original
    output = os.fspath(output)
    if unchanged and os.path.lexists(output) and overwrite and os.path.samefile(located.file, output):
        return LocaImport(located, applied, unchanged, written=False)
    if dry_run:
        _plan_write(located, rebuilt, output, overwrite)
        return LocaImport(located, applied, unchanged, written=False)
    if located.member is None:
        from ..core.atomic import write_bytes

        write_bytes(output, rebuilt, overwrite=overwrite)
    else:
        replace_member(
            located.file, located.member, rebuilt, os.fspath(output), format=located.format, overwrite=overwrite
        )
    return LocaImport(located, applied, unchanged)


def _plan_write(located: Located, rebuilt: bytes, output: str, overwrite: bool) -> None:
    """Refuse, as the real import would, what would stop it writing `output`: an output that
    exists without `overwrite`, a pack edit its editor refuses (only planned: no lock)."""
    if os.path.lexists(output) and not overwrite:
        from ..errors import OutputExistsError

        raise OutputExistsError(output)
    if located.member is not None:
        from .content_files import pack_edit

        with pack_edit(located.file, located.format, dry_run=True) as editor:
            editor.replace(located.member, rebuilt)


def replace_member(
    file: str, member: str, data: bytes, output: str, *, format: str | None = None, overwrite: bool = False
) -> None:
    """Write `output`: the pack `file` with `member` (a nested path) holding `data`. The copy is
    edited beside `output` under a temporary name and renamed into place; with `output` the
    pack itself, the pack is edited (crash-safe either way)."""
    from ..core.atomic import make_via_temporary
    from ..errors import OutputExistsError
    from .edit import edit

    if os.path.lexists(output):
        if not overwrite:
            raise OutputExistsError(output)
        if os.path.samefile(file, output):
            with edit(file, format) as editor:
                editor.replace(member, data)
            return

    def make(temporary: str) -> None:
        import shutil

        shutil.copyfile(file, temporary)
        with edit(temporary, format) as editor:
            editor.replace(member, data)

    make_via_temporary(output, make, overwrite=overwrite)
