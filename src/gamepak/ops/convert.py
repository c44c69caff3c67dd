"""Convert a pack from one archive format to another.

Members are streamed from the reader into the target writer (`ArchiveWriter.add_member`): no
member is held whole in memory and nothing is extracted to disk. Every member is offered to the
writer before anything is written, so all the names the target cannot hold (too long, folders in
a flat format, duplicates, unsafe paths) are reported together, and the target file appears only
when every member went in. Formats without member names (the J2ME packs) get members numbered in
source order, keeping each name's extension; the result says which names were dropped.
"""

from __future__ import annotations

import os

from ..errors import GamepakError  # FormatLimitError, rarely raised, where it is raised

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..core.archive import Archive, Entry
    from ..core.writer import ArchiveWriter

# How many refused members an error lists by name before it summarises the rest.
MAX_LISTED = 20


class ConvertResult:
    """What `convert` did: the formats, the member count, and notes for the user (names that
    were numbered, nested packs that were flattened)."""

    def __init__(self, source: str, target: str, source_format: str, target_format: str) -> None:
        self.source = source
        self.target = target
        self.source_format = source_format
        self.target_format = target_format
        self.member_count = 0
        # (name in the source, name in the target) where they differ.
        self.renamed: list[tuple[str, str]] = []
        self.flattened: list[str] = []
        self.notes: list[str] = []

    def __repr__(self) -> str:
        return (
            f"<ConvertResult {self.source!r} ({self.source_format}) -> {self.target!r} ({self.target_format}),"
            f" {self.member_count} members>"
        )


def collect_members(archive: Archive, flatten_nested: bool, opened: list[Archive]) -> list[tuple[str, Archive, Entry]]:
    """(name, archive holding it, entry) for every member; with `flatten_nested`, a member that
    is itself a pack is replaced by its members, named OUTER/INNER (at any depth). Nested
    archives opened on the way are appended to `opened` (the caller closes them)."""
    if flatten_nested:  # only then: a plain convert looks into no member
        from ..core.nested import nested_format

    members: list[tuple[str, Archive, Entry]] = []

    def visit(holder: Archive, prefix: str) -> None:
        for entry in holder.infolist():
            inner_format = nested_format(holder, entry) if flatten_nested else None
            if inner_format is None:
                # What extraction would call it: formats without names add the content's
                # extension (J2ME member 0 holding a PNG is `0.png`).
                members.append((prefix + holder.extraction_name(entry), holder, entry))
                continue
            inner = holder.open_archive(entry, inner_format)
            opened.append(inner)
            visit(inner, f"{prefix}{entry.name}/")

    visit(archive, "")
    return members


def _numbered_name(index: int, name: str) -> str:
    """The name a nameless format stores member `index` under: its number, with the source
    name's extension when it has a plain one (`maps/e1m1.bsp` -> `0.bsp`)."""
    extension = os.path.splitext(name.rpartition("/")[2])[1]
    plain = extension[1:].isascii() and extension[1:].isalnum()
    return f"{index}{extension if plain else ''}"


def _nested_packs(members: list[Any], scratch: str) -> tuple[list[Any], int]:
    """`members` with each group named PACK/... (PACK's extension naming a pack format) packed
    into a nested pack in `scratch` (recursively), placed where its first member was; and how
    many packs were made. A nested pack is a (name, None, file path) item."""
    from ..core.opening import create
    from ..core.registry import format_for_path

    groups: dict[str, list[Any]] = {}
    order: list[Any] = []
    for name, holder, entry in members:
        parts = name.split("/")
        cut = next(
            (
                i
                for i in range(1, len(parts))
                if (spec := format_for_path(parts[i - 1])) is not None and spec.kind == "archive"
            ),
            None,
        )
        if cut is None:
            order.append((name, holder, entry))
            continue
        outer = "/".join(parts[:cut])
        if outer not in groups:
            groups[outer] = []
            order.append(outer)
        groups[outer].append(("/".join(parts[cut:]), holder, entry))
    made = 0
    result: list[Any] = []
    for item in order:
        if not isinstance(item, str):
            result.append(item)
            continue
        inner_members, inner_made = _nested_packs(groups[item], scratch)
        path = os.path.join(scratch, f"{len(os.listdir(scratch))}-{os.path.basename(item)}")  # never reused
        writer = create(path)
        offer_members(writer, inner_members, item)
        writer.close()
        made += 1 + inner_made
        result.append((item, None, path))
    return result, made


def offer_members(writer: ArchiveWriter, members: list[tuple[str, Any, Any]], what: str) -> None:
    """Queue every member in `writer` (a (name, None, file path) item is a file); if the target
    refuses any, abort the writer (nothing is written) and raise one FormatLimitError listing
    every refused member."""
    refused = []
    for name, holder, entry in members:
        try:
            if holder is None:
                writer.add(name, entry)
            else:
                writer.add_member(name, holder, entry)
        except GamepakError as exc:
            refused.append(str(exc))
    if refused:
        writer.abort()
        listed = refused[:MAX_LISTED]
        if len(refused) > MAX_LISTED:
            listed.append(f"... and {len(refused) - MAX_LISTED} more")
        from ..errors import FormatLimitError  # rarely raised: made on first use

        raise FormatLimitError(
            f"{what}: {len(refused)} of {len(members)} member{'s' if len(members) != 1 else ''} cannot go "
            f"into a {writer.format_name} pack; nothing was written:\n  " + "\n  ".join(listed)
        )


def _live_copies_kept(
    members: list[tuple[str, Archive, Any]], source_wins: str, target_format: str
) -> list[tuple[str, Archive, Any]]:
    """The members in an order where the copy of a duplicated name that the source's game
    loads is the one the target's game loads: when one loads the first copy and the other the
    last, each name's copies are written in reverse (in the places they had)."""
    if len({name for name, _, _ in members}) == len(members):
        return members  # no name twice (the common case): the target's reader is not asked
    from ..core.registry import get_format

    if get_format(target_format).reader_class().duplicate_wins == source_wins:
        return members
    places: dict[str, list[int]] = {}
    for index, (name, _, _) in enumerate(members):
        places.setdefault(name, []).append(index)
    ordered = list(members)
    for indices in places.values():
        if len(indices) > 1:
            for place, index in zip(indices, reversed(indices)):
                ordered[place] = members[index]
    return ordered


def _same_file(first: str, second: str) -> bool:
    """`core.portable.same_file` (two paths naming one existing file), with `os.path`'s own
    comparison: a conversion needs nothing else of that module (~0.4 M instructions)."""
    try:
        return os.path.samefile(first, second)
    except (OSError, ValueError):
        return False


def convert(
    source: str | os.PathLike[str],
    target: str | os.PathLike[str],
    format: str | None = None,
    *,
    source_format: str | None = None,
    overwrite: bool = False,
    flatten_nested: bool = False,
    nest: bool = False,
    allow_duplicates: bool = False,
    progress: Callable[[Any], object] | None = None,
    **options: Any,
) -> ConvertResult:
    """Write the members of the pack at `source` into a new pack at `target`.

    The target's format is `format`, else the one `target`'s extension names; `options` are
    its writer options. `source_format` names the source's format instead of detecting it.
    With `flatten_nested`, members of nested packs become members named OUTER/INNER; `nest` is
    the way back: members named OUTER/INNER, where OUTER's extension names a pack format
    (`zone.str2_pc/`), are packed into a nested pack of that format.
    Duplicate names are kept only with `allow_duplicates` (where the target can hold them).
    `progress(member)` is called as each member is written.

    Raises FormatLimitError listing every member the target cannot hold (nothing is written),
    NotAnArchiveError for a model format, OutputExistsError unless `overwrite`, GamepakError
    when `target` is the source file itself, and the errors of `gamepak.open` for the source.
    """
    from ..core.opening import create
    from ..core.opening import open as open_archive

    source_path, target_path = os.fspath(source), os.fspath(target)
    if _same_file(source_path, target_path):
        raise GamepakError(f"{target_path}: is the source pack itself; convert into another file")
    opened: list[Archive] = []
    archive = open_archive(source_path, source_format)
    try:
        writer = create(target_path, format, overwrite=overwrite, allow_duplicates=allow_duplicates, **options)
        writer.progress = progress
        result = ConvertResult(source_path, target_path, archive.format_name, writer.format_name)
        members = collect_members(archive, flatten_nested, opened)
        result.flattened = [inner.filename for inner in opened]
        named = [(name, entry.name) for name, _, entry in members if not name.endswith(entry.name)]
        if named and writer.stores_names:
            result.renamed = [(old, new) for new, old in named]
            result.notes.append(
                f"{archive.format_name} members have no names: {len(named)} named by number and content "
                f"(e.g. {named[0][0]})"
            )
        if not writer.stores_names:
            numbered = []
            for index, (name, holder, entry) in enumerate(members):
                new_name = _numbered_name(index, name)
                if new_name != name:
                    result.renamed.append((name, new_name))
                numbered.append((new_name, holder, entry))
            members = numbered
            if result.renamed:
                result.notes.append(
                    f"{writer.format_name} packs have no member names: {len(result.renamed)} name"
                    f"{'s' if len(result.renamed) != 1 else ''} dropped, members numbered 0..{len(members) - 1}"
                    " in source order (each keeps its extension)"
                )
        if opened:
            result.notes.append(
                f"flattened {len(opened)} nested pack{'s' if len(opened) != 1 else ''}: "
                "their members are named OUTER/INNER"
            )
        members = _live_copies_kept(members, archive.duplicate_wins, writer.format_name)
        scratch = None
        try:
            if nest:
                from ..core.atomic import temporary_folder

                scratch = temporary_folder("convert-nest")
                members, made = _nested_packs(members, scratch)
                if made:
                    result.notes.append(f"packed {made} nested pack{'s' if made != 1 else ''} from OUTER/INNER names")
            offer_members(writer, members, f"{source_path} -> {target_path}")
            writer.close()
        finally:
            if scratch is not None:
                import shutil

                shutil.rmtree(scratch, ignore_errors=True)
        result.member_count = len(members)
        return result
    finally:
        for inner in reversed(opened):
            inner.close()
        archive.close()
