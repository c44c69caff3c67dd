"""Packs as folders and files: the one path mapping behind the fsspec filesystem and the FUSE mount.

Member names become paths exactly as `extract` writes them (the same checks, the same `.dupN`
names for the copies of a duplicated name that the game would not load), and a member that is
itself a pack (`gamepak.core.nested`) becomes a folder of its members, opened the first time it is
listed. Everything is read through `Archive`: this module only maps paths to members.
"""

from __future__ import annotations

import errno
import threading
from typing import TYPE_CHECKING

from ..core.names import safe_parts
from ..core.nested import nested_formats
from ..errors import GamepakError, UnsafePathError

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import BinaryIO

    from ..core.archive import Archive, Entry


class Node:
    """A file (one member) or a folder: a prefix of member names, a whole pack, or a member that
    is itself a pack (`entry` set and `is_dir`)."""

    __slots__ = (
        "_children",
        "_contents",
        "_unclassified",
        "archive",
        "checked",
        "entry",
        "is_dir",
        "mtime",
        "pack",
        "size",
    )

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
        # For a folder that is a pack: the archive its members come from, once opened.
        self.pack: Archive | None = contents[0] if contents is not None and contents[1] is None else None
        # For a folder that is a pack: (archive, nested member or None, its format); its children
        # are read from the pack when first asked for.
        self._contents = contents
        self._children: dict[str, Node] | None = {} if is_dir and contents is None else None
        # For a plain folder: its members not yet checked for being packs themselves (done for
        # the whole folder the first time its entries are asked for).
        self._unclassified: list[Node] | None = None
        # For a member: whether it has been looked at for being a pack itself.
        self.checked = entry is None

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
        """The node at `path` ("a/b/c"; leading, trailing and doubled slashes are ignored).
        Only the members on the way are looked at for being packs, not their whole folders: a
        deep link into a folder of 100,000 members costs one member's check, not 100,000."""
        node = self.root
        for part in path.split("/"):
            if not part:
                continue
            if not node.is_dir:
                raise NotADirectoryError(errno.ENOTDIR, "a member, not a folder, is on the way", path)
            child = self.entries(node).get(part)
            if child is None:
                raise FileNotFoundError(errno.ENOENT, "no such member or folder", path)
            if not child.checked and self.nested:
                self.classify([child])
            node = child
        return node

    def entries(self, node: Node) -> dict[str, Node]:
        """A folder's entries by name, read from its pack if need be, without looking at which
        members are packs (those not yet `checked` show as files until `classify`)."""
        if not node.is_dir:
            raise NotADirectoryError(errno.ENOTDIR, "not a folder", repr(node))
        children = node._children
        if children is None:
            with self._lock:
                if node._children is None:
                    node._children = self._load(node)
                children = node._children
        return children

    def classify(self, members: list[Node]) -> None:
        """Look at which of `members` (files of one folder) are packs, turning those into folders."""
        if not self.nested:
            return
        with self._lock:
            unchecked = [node for node in members if not node.checked]
            if unchecked:
                self._classify(unchecked)

    def children(self, node: Node) -> dict[str, Node]:
        """A folder's entries by name (reading a pack's directory the first time, and finding
        which of the folder's members are packs the first time it is listed)."""
        if not node.is_dir:
            raise NotADirectoryError(errno.ENOTDIR, "not a folder", repr(node))
        children = node._children
        if children is None or node._unclassified:
            with self._lock:
                if node._children is None:
                    node._children = self._load(node)
                if node._unclassified:
                    self._classify([member for member in node._unclassified if not member.checked])
                    node._unclassified = None
                children = node._children
        return children

    def pack_of(self, node: Node) -> Archive | None:
        """The archive whose members the folder `node` shows (a whole pack or a nested one,
        opened now if need be); None for a plain folder or a nested pack that cannot be read."""
        if not node.is_pack:
            return None
        self.children(node)
        return node.pack

    def prepare(self) -> None:
        """Read every pack's directory and find its nested packs now (a mount does this before
        it appears, so that listings are fast); nested packs are still opened when first used."""

        def visit(folder: Node) -> None:
            for child in self.children(folder).values():
                if child.is_dir and child.entry is None:
                    visit(child)

        visit(self.root)

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
        """A pack folder's entries, read from the pack (its members still unclassified)."""
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
        node.pack = archive
        try:
            top = self._folders_of(archive, node.mtime)
        except GamepakError as exc:
            self.problems.append(f"{archive.filename}: shown empty: {exc}")
            return {}
        node._unclassified = top._unclassified
        assert top._children is not None
        return top._children

    def _folders_of(self, archive: Archive, pack_mtime: float) -> Node:
        """The folder tree of one pack's members (which members are packs is found later, per
        folder, by `_classify`)."""
        entries = archive.infolist()
        unreadable = self._unreadable(archive, entries)
        extraction_name = archive.extraction_name
        member_mtime = archive.member_mtime
        last_wins = archive.duplicate_wins == "last"
        paths: list[tuple[str, ...] | None] = []
        owners: dict[tuple[str, ...], Entry] = {}
        for entry in entries:
            if unreadable and id(entry) in unreadable:
                paths.append(None)
                continue
            try:
                key = tuple(safe_parts(extraction_name(entry)))
            except UnsafePathError as exc:
                self.problems.append(f"{archive.filename}: not shown: {exc}")
                paths.append(None)
                continue
            paths.append(key)
            # The copy the game loads owns the name; `extract` names the others NAME.dupN too.
            if last_wins or key not in owners:
                owners[key] = entry
        top = Node(is_dir=True, mtime=pack_mtime)
        folders: dict[str, Node] = {"": top}  # folder path -> plain folder, made once
        for entry, path in zip(entries, paths):
            if path is None:
                continue
            parts = list(path)
            if owners[path] is not entry:
                parts[-1] = f"{parts[-1]}.dup{entry.index}"
            folder = top if len(parts) == 1 else folders.get("/".join(parts[:-1]))
            if folder is None:
                folder = self._make_folders(folders, top, parts, entry, archive)
                if folder is None:
                    continue
            children = folder._children
            assert children is not None
            name = parts[-1]
            if name in children:
                self.problems.append(f"{archive.filename}: not shown: member {entry.name!r} has the name of a folder")
                continue
            mtime = member_mtime(entry)
            node = Node(
                is_dir=False,
                mtime=pack_mtime if mtime is None else mtime,
                archive=archive,
                entry=entry,
                size=entry.size,
            )
            children[name] = node
            if self.nested:
                if folder._unclassified is None:
                    folder._unclassified = []
                folder._unclassified.append(node)
        assert top._children is not None
        return top

    def _unreadable(self, archive: Archive, entries: list[Entry]) -> set[int]:
        """The members the library refuses to read (bytes outside the file: a hostile size or
        offset), noted as problems and not shown: a file that reads as empty would hide them."""
        try:
            archive._check_data(entries)
        except GamepakError:
            pass
        else:
            return set()
        refused = set()
        for entry in entries:
            try:
                archive._check_data([entry])
            except GamepakError as exc:
                self.problems.append(f"{archive.filename}: not shown: {exc}")
                refused.add(id(entry))
        return refused

    def _make_folders(
        self, folders: dict[str, Node], top: Node, parts: list[str], entry: Entry, archive: Archive
    ) -> Node | None:
        """The folder a member goes in, made with its parents; None (and a problem noted) when
        a member is in the way."""
        folder = top
        for depth, part in enumerate(parts[:-1]):
            assert folder._children is not None
            child = folder._children.get(part)
            if child is None:
                child = Node(is_dir=True, mtime=top.mtime)
                folder._children[part] = child
                folders["/".join(parts[: depth + 1])] = child
            elif not child.is_dir:
                self.problems.append(
                    f"{archive.filename}: not shown: member {entry.name!r} is under "
                    f"{'/'.join(parts[: depth + 1])!r}, which is a member"
                )
                return None
            folder = child
        return folder

    def _classify(self, members: list[Node]) -> None:
        """Turn the members that are packs into folders (one pass over the pack's data)."""
        if not members:
            return
        for node in members:
            node.checked = True
        archive = members[0].archive
        assert archive is not None
        formats = nested_formats(archive, [node.entry for node in members if node.entry is not None])
        for node in members:
            assert node.entry is not None
            format_name = formats.get(node.entry.index)
            if format_name is not None:
                node._contents = (archive, node.entry, format_name)
                node._children = None
                node.is_dir = True
