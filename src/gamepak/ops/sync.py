"""`gamepak update`: the edits that make a pack match a folder it was extracted to. Files whose
size or bytes differ replace their member, new files are added, members without a file are
removed on request; files under a folder named like a nested pack go into that pack. The bytes
are compared in one pass in archive order, so a compressed stream is decoded once."""

from __future__ import annotations

import os

from ..errors import GamepakError, cannot_read

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..core.archive import Archive
    from ..core.writer import PendingMember
    from .edit import Editor
    from .edit_members import PackEdit


def folder_changes(editor: Editor, folder: str, *, delete: bool = False) -> None:
    """Plan what makes the pack match an extracted `folder`: files whose size or bytes differ
    replace their member, new files are added, and with `delete` members without a file are
    removed. Files under a folder named like a member that is a pack (what `extract PACK
    'OUTER.str2_pc/*'` writes) go into that nested pack. The manifest file of `extract
    --manifest` is ignored."""
    from .inputs import scan_folder

    # The same files `create` would pack: no links out of the folder, no gamepak temporaries,
    # never the pack itself.
    scan = scan_folder(folder, exclude=(editor.path,))
    editor.skipped.extend(scan.skipped)
    _pack_changes(editor, editor._root, list(scan.members), delete)


def _pack_changes(editor: Editor, pack: PackEdit, files: list[tuple[str, str]], delete: bool) -> None:
    """`folder_changes` for one pack: `files` are (path relative to the pack, file)."""
    from ..core.names import safe_parts

    by_path: dict[str, PendingMember] = {}
    for member in pack.members:
        assert member.origin is not None
        archive, entry = member.origin
        try:
            key = "/".join(safe_parts(archive.extraction_name(entry)))
        except GamepakError:
            continue  # a name no extraction could have written: left alone
        by_path[key] = member
    seen: set[str] = set()
    same_size: list[tuple[PendingMember, str]] = []
    nested: dict[str, list[tuple[str, str]]] = {}
    for relative, path in files:
        existing = by_path.get(relative)
        if existing is None:
            holder = _nested_holder(pack, by_path, relative)
            if holder is not None:
                key, inner = holder
                nested.setdefault(key, []).append((inner, path))
                seen.add(key)
                continue
            seen.add(relative)
            editor.add(pack.prefix + relative, path)
            continue
        seen.add(relative)
        if os.path.getsize(path) != existing.size:
            editor._replace(pack, pack.members.index(existing), path)
        else:
            same_size.append((existing, path))
    for member, path in _differing(pack.archive, same_size):
        editor._replace(pack, pack.members.index(member), path)
    for key, inner_files in nested.items():
        child = pack._child(pack.members.index(by_path[key]))
        assert child is not None
        _pack_changes(editor, child, inner_files, delete)
    if delete:
        for key, member in by_path.items():
            if key not in seen:
                editor.remove(pack.prefix + member.name)


def _nested_holder(pack: PackEdit, by_path: dict[str, PendingMember], relative: str) -> tuple[str, str] | None:
    """(the member key, the path inside it) when `relative` lies under a member that is a pack."""
    parts = relative.split("/")
    for cut in range(len(parts) - 1, 0, -1):
        key = "/".join(parts[:cut])
        member = by_path.get(key)
        if member is not None:
            if pack._child(pack.members.index(member)) is None:
                return None
            return key, "/".join(parts[cut:])
    return None


def _differing(archive: Archive, candidates: list[tuple[PendingMember, str]]) -> list[tuple[PendingMember, str]]:
    """The (member, file) pairs whose bytes differ, read in one pass in archive order (a
    compressed stream is decoded once, not once per member)."""
    by_entry = {id(member.origin[1]): (member, path) for member, path in candidates if member.origin is not None}
    differing = []
    entries = [member.origin[1] for member, _ in candidates if member.origin is not None]
    entries.sort(key=lambda entry: entry.index)
    # A rebuild after this pass reads parts of the old pack again (the RFG writer: the window
    # before the first changed member).
    archive.keep_seek_points()
    for entry, chunks in archive.iter_data(entries):
        member, path = by_entry[id(entry)]
        if not _same_chunks(chunks, path):
            differing.append((member, path))
    return differing


def _same_chunks(chunks: Iterable[bytes], path: str) -> bool:
    """Whether the chunks hold exactly the file's bytes (the chunks are always consumed)."""
    same = True
    try:
        with open(path, "rb") as handle:
            for chunk in chunks:
                if same and handle.read(len(chunk)) != chunk:
                    same = False
            if same and handle.read(1):
                same = False
    except OSError as exc:
        raise cannot_read(path, exc) from exc
    return same
