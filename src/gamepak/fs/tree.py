"""Packs as folders and files: the one path mapping behind the fsspec filesystem and the FUSE mount.

Member names become paths exactly as `extract` writes them (the same checks, the same `.dupN`
names for the copies of a duplicated name that the game would not load), and a member that is
itself a pack (`gamepak.nested`) becomes a folder of its members, opened the first time it is
listed. Everything is read through `Archive`: this module only maps paths to members.
"""

from __future__ import annotations

import errno
import threading
from typing import TYPE_CHECKING

from ..errors import GamepakError, UnsafePathError
from ..extract import safe_parts
from ..nested import nested_formats

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import BinaryIO

    from ..archive import Archive, Entry


class Node:
    """A file (one member) or a folder: a prefix of member names, a whole pack, or a member that
    is itself a pack (`entry` set and `is_dir`)."""

    __slots__ = ("_children", "_contents", "archive", "entry", "is_dir", "mtime", "size")

    def __init__(
        self,
        *,
        is_dir: bool,
        mtime: float,
        archive: Archive | None = None,
        entry: Entry | None = None,
        size: int = 0,
        contents: tuple[Archive, Entry | None, str | None] | None = None,
    ) -> None:
        self.is_dir = is_dir
        self.mtime = mtime
        self.archive = archive
        self.entry = entry
        self.size = size
        # For a folder that is a pack: (archive, nested member or None, its format); its children
        # are read from the pack when first asked for.
        self._contents = contents
        self._children: dict[str, Node] | None = {} if is_dir and contents is None else None

    @property
    def is_pack(self) -> bool:
        """Whether this folder shows the members of a pack (the root of one, or a nested one)."""
        return self._contents is not None

    def __repr__(self) -> str:
        kind = "folder" if self.is_dir else "file"
        return f"<Node {kind} size={self.size}>"


# One pack to show: a label (its folder name when several packs share a tree), the open
# archive, and the time its members show when the format keeps none (the pack's own mtime).
Pack = tuple[str, "Archive", float]


class PackTree:
    """The folders and files of one or more packs.

    With one pack (and `pack_folders` not set) the root holds its members; with several, the root
    holds one folder per pack, named by its label. `nested=False` shows nested packs as files.
    Lookups raise `FileNotFoundError`, `NotADirectoryError` and `IsADirectoryError`, which both
    fsspec and FUSE understand. Safe to use from several threads.
    """

    def __init__(self, packs: Sequence[Pack], *, nested: bool = True, pack_folders: bool | None = None) -> None:
        self.nested = nested
        # Members that could not be shown (unsafe names, names in each other's way, damaged
        # nested packs), as sentences.
        self.problems: list[str] = []
        self._lock = threading.RLock()
        self._opened: list[Archive] = []  # nested archives this tree opened (and closes)
        if pack_folders is None:
            pack_folders = len(packs) != 1
        if not pack_folders:
            (_, archive, mtime) = packs[0]
            self.root = Node(is_dir=True, mtime=mtime, size=archive.size, contents=(archive, None, None))
            return
        newest = max((mtime for _, _, mtime in packs), default=0.0)
        self.root = Node(is_dir=True, mtime=newest)
        assert self.root._children is not None
        for label, archive, mtime in packs:
            name = label
            suffix = 2
            while name in self.root._children:  # two packs with one base name: a.pak, a.pak-2
                name = f"{label}-{suffix}"
                suffix += 1
            self.root._children[name] = Node(
                is_dir=True, mtime=mtime, size=archive.size, contents=(archive, None, None)
            )

    # -- lookups ---------------------------------------------------------------------------------
    def lookup(self, path: str) -> Node:
        """The node at `path` ("a/b/c"; leading, trailing and doubled slashes are ignored)."""
        node = self.root
        for part in path.split("/"):
            if not part:
                continue
            if not node.is_dir:
                raise NotADirectoryError(errno.ENOTDIR, "a member, not a folder, is on the way", path)
            child = self.children(node).get(part)
            if child is None:
                raise FileNotFoundError(errno.ENOENT, "no such member or folder", path)
            node = child
        return node

    def children(self, node: Node) -> dict[str, Node]:
        """A folder's entries by name (reading a pack's directory the first time)."""
        if not node.is_dir:
            raise NotADirectoryError(errno.ENOTDIR, "not a folder", repr(node))
        children = node._children
        if children is None:
            with self._lock:
                if node._children is None:
                    node._children = self._load(node)
                children = node._children
        return children

    def listdir(self, path: str) -> dict[str, Node]:
        """The entries of the folder at `path`."""
        return self.children(self.lookup(path))

    def open(self, node: Node) -> BinaryIO:
        """A seekable stream over a file's bytes, read by `Archive.open` as `extract` reads it."""
        if node.is_dir or node.archive is None or node.entry is None:
            raise IsADirectoryError(errno.EISDIR, "a folder, not a member", repr(node))
        return node.archive.open(node.entry)

    def walk(self, node: Node | None = None, prefix: str = "") -> Iterator[tuple[str, Node]]:
        """(path, node) for every file and folder below `node` (the root by default), parents
        before their contents."""
        for name, child in self.children(self.root if node is None else node).items():
            path = f"{prefix}{name}"
            yield path, child
            if child.is_dir:
                yield from self.walk(child, f"{path}/")

    def close(self) -> None:
        """Close the nested packs this tree opened (the packs it was given stay open)."""
        with self._lock:
            for archive in self._opened:
                archive.close()
            self._opened.clear()

    # -- building --------------------------------------------------------------------------------
    def _load(self, node: Node) -> dict[str, Node]:
        assert node._contents is not None
        holder, entry, format_name = node._contents
        if entry is None:
            archive = holder
        else:
            try:
                archive = holder.open_archive(entry, format_name)
            except GamepakError as exc:
                self.problems.append(f"{holder.filename}/{entry.name}: shown empty: {exc}")
                return {}
            self._opened.append(archive)
        try:
            return self._folders_of(archive, node.mtime)
        except GamepakError as exc:
            self.problems.append(f"{archive.filename}: shown empty: {exc}")
            return {}

    def _folders_of(self, archive: Archive, pack_mtime: float) -> dict[str, Node]:
        """The folder tree of one pack's members."""
        entries = archive.infolist()
        formats = nested_formats(archive, entries) if self.nested else {}
        paths: list[list[str] | None] = []
        owners: dict[tuple[str, ...], Entry] = {}
        for entry in entries:
            try:
                parts = safe_parts(archive.extraction_name(entry))
            except UnsafePathError as exc:
                self.problems.append(f"{archive.filename}: not shown: {exc}")
                paths.append(None)
                continue
            paths.append(parts)
            key = tuple(parts)
            # The copy the game loads owns the name; `extract` names the others NAME.dupN too.
            if archive.duplicate_wins == "last" or key not in owners:
                owners[key] = entry
        top: dict[str, Node] = {}
        for entry, maybe_parts in zip(entries, paths):
            if maybe_parts is None:
                continue
            parts = maybe_parts
            if owners[tuple(parts)] is not entry:
                parts[-1] = f"{parts[-1]}.dup{entry.index}"
            folder = top
            for depth, part in enumerate(parts[:-1]):
                child = folder.get(part)
                if child is None:
                    child = Node(is_dir=True, mtime=pack_mtime)
                    folder[part] = child
                elif not child.is_dir or child.is_pack:
                    self.problems.append(
                        f"{archive.filename}: not shown: member {entry.name!r} is under "
                        f"{'/'.join(parts[: depth + 1])!r}, which is a "
                        f"{'pack' if child.is_dir else 'member'}"
                    )
                    break
                assert child._children is not None
                folder = child._children
            else:
                name = parts[-1]
                if name in folder:
                    self.problems.append(
                        f"{archive.filename}: not shown: member {entry.name!r} has the name of a folder"
                    )
                    continue
                mtime = archive.member_mtime(entry)
                if mtime is None:
                    mtime = pack_mtime
                format_name = formats.get(entry.index)
                folder[name] = Node(
                    is_dir=format_name is not None,
                    mtime=mtime,
                    archive=archive,
                    entry=entry,
                    size=entry.size,
                    contents=None if format_name is None else (archive, entry, format_name),
                )
        return top
