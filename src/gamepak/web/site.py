"""What `gamepak serve` shows: a folder (or one pack) as places reached by URL segments.

Folders on disk are walked as they are; a file that is a pack (the catalog's rule: its extension,
a signature, or a convincing structural fit) becomes a folder of its members through
`gamepak.fs.tree.PackTree`, the mapping behind the mount, so nested packs open the same way and
member names go through the same checks as `extract`. Nothing outside ROOT is reachable: every
segment is checked, symbolic links are followed only when they stay inside ROOT, and only
folders and regular files are opened (a FIFO would block a worker). Finding names under ROOT
is `web.search`'s.
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import errno
import functools
import os
import stat
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, BinaryIO

from ..errors import GamepakError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..core.archive import Archive, Entry
    from ..fs.tree import Node, PackTree


class Refused(GamepakError):
    """A path that leads outside ROOT or names something the viewer never opens (403)."""


class NotFound(GamepakError):
    """A path that names nothing (404)."""


class Busy(GamepakError):
    """The server ran short of something for a while (file descriptors, memory): try again (503)."""


# Open packs kept for the next request (each holds a file descriptor and its directory).
OPEN_PACKS = 32
# OS errors that say the server, not the file, is short of something: never remembered.
TRANSIENT_ERRNOS = frozenset(
    getattr(errno, name)
    for name in ("EMFILE", "ENFILE", "ENOMEM", "EAGAIN", "EINTR", "ENOBUFS")
    if hasattr(errno, name)
)


def transient_os_error(exc: BaseException) -> OSError | None:
    """The OS error behind `exc` (itself, or what a GamepakError was raised from) when it is a
    passing shortage, else None."""
    for cause in (exc, exc.__cause__):
        if isinstance(cause, OSError) and cause.errno in TRANSIENT_ERRNOS:
            return cause
    return None


@dataclass(eq=False)
class _OpenPack:
    """A pack file opened for the viewer, as the cache keeps it: closed once it has left the
    cache (evicted, or replaced after its file changed) and no request holds it any more."""

    key: tuple[int, int]
    tree: PackTree | None
    archive: Archive | None
    problem: str | None
    users: int = 0
    retired: bool = False

    def close(self) -> None:
        if self.tree is not None:
            self.tree.close()  # the nested packs it opened
        if self.archive is not None:
            self.archive.close()


# The packs the running request holds (see `Site.session`).
_HELD: contextvars.ContextVar[list[_OpenPack] | None] = contextvars.ContextVar("gamepak_web_held", default=None)


@dataclass
class Place:
    """What one URL path names: a folder on disk, a pack (whole or nested), a plain folder
    inside a pack, or a file (on disk, or a member)."""

    segments: list[str]
    kind: str  # "folder", "pack" or "file"
    disk_path: str | None = None  # the folder or file on disk, for places outside packs
    tree: PackTree | None = None
    node: Node | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.segments[-1] if self.segments else ""

    @property
    def in_pack(self) -> bool:
        return self.node is not None

    @property
    def archive(self) -> Archive | None:
        """The pack a "pack" place shows."""
        if self.kind != "pack" or self.tree is None or self.node is None:
            return None
        return self.tree.pack_of(self.node)

    @property
    def size(self) -> int:
        if self.node is not None:
            return self.node.size
        if self.disk_path is not None and self.kind == "file":
            return os.stat(self.disk_path).st_size
        return 0

    @property
    def entry(self) -> Entry | None:
        return self.node.entry if self.node is not None else None

    def open(self) -> BinaryIO:
        """The bytes of a file place (a member is read as `extract` reads it)."""
        if self.kind != "file" and not (self.node is not None and self.node.entry is not None):
            raise NotFound(f"{self.path}: a folder has no bytes")
        if self.node is not None:
            assert self.tree is not None
            return self.tree.open(self.node)
        assert self.disk_path is not None
        return open(self.disk_path, "rb")

    def sibling(self, name: str) -> Place | None:
        """The file `name` beside this one (a peg's GPU partner), matched by the peg partner
        rule (`same_name`: case ignored, as the game does)."""
        from ..formats.rfg.peg.sources import same_name

        if self.node is not None:
            assert self.tree is not None
            parent = self.tree.lookup("/".join(self.segments[self._pack_depth : -1]))
            for child_name, child in self.tree.children(parent).items():
                if same_name(child_name, name) and not child.is_dir:
                    found = Place(self.segments[:-1] + [child_name], "file", tree=self.tree, node=child)
                    found._pack_depth, found._pack_key = self._pack_depth, self._pack_key
                    return found
            return None
        assert self.disk_path is not None
        folder = os.path.dirname(self.disk_path)
        for child_name in os.listdir(folder):
            if same_name(child_name, name):
                candidate = os.path.join(folder, child_name)
                if os.path.isfile(candidate) and not os.path.islink(candidate):
                    return Place(self.segments[:-1] + [child_name], "file", disk_path=candidate)
        return None

    @property
    def path(self) -> str:
        return "/".join(self.segments)

    # How many leading segments lead to the pack the tree shows, and that pack file's path,
    # size and modification time (set by Site.resolve).
    _pack_depth: int = 0
    _pack_key: tuple[str, int, int] | None = None

    @property
    def identity(self) -> tuple[object, ...]:
        """What tells this file's bytes apart from any other's, for caches: the file's path, size
        and modification time, and for a member the path inside its pack."""
        if self.node is not None and self._pack_key is not None:
            return (*self._pack_key, "/".join(self.segments[self._pack_depth :]))
        assert self.disk_path is not None
        info = os.stat(self.disk_path)
        return (self.disk_path, info.st_size, info.st_mtime_ns)


@dataclass(slots=True)
class Row:
    """One line of a listing (`node`: the member's, inside a pack)."""

    name: str
    is_folder: bool
    size: int | None
    stored_size: int | None
    type: str
    node: Node | None = None


def _member_row(name: str, node: Node) -> Row:
    entry = node.entry
    if node.is_pack:
        format_name = node._contents[2] if node._contents is not None else None
        kind = f"pack: {format_name}" if format_name else "pack"
    elif node.is_dir:
        kind = "folder"
    else:
        kind = type_by_name(name)
    return Row(
        name,
        node.is_dir,
        entry.size if entry is not None else None,
        entry.stored_size if entry is not None else None,
        kind,
        node,
    )


def _is_content(path: str, label: str) -> bool:
    """Whether the file at `path` is a kind of the content registry (by name or signature)."""
    from ..content import of_member

    with open(path, "rb") as handle:
        head = handle.read(64)
    return bool(of_member(label, head, probe=False))


def check_segment(segment: str) -> None:
    """Refuse a URL segment that could step out of its folder (`..`, an encoded slash, NUL)."""
    if segment in ("", ".", "..") or "/" in segment or "\\" in segment or "\0" in segment:
        raise Refused(f"refused path segment {segment!r}")


def type_by_name(name: str) -> str:
    """A listing's type column for a file not yet looked into: from its extension."""
    dot = name.rfind(".")
    return _type_of_extension(name[dot:].lower() if dot > 0 else "")


@functools.lru_cache(maxsize=4096)
def _type_of_extension(extension: str) -> str:
    from ..catalog.kinds import EXTENSIONS
    from ..core.registry import format_for_path

    spec = format_for_path("x" + extension) if extension else None
    if spec is not None:
        return f"pack: {spec.name}" if spec.kind == "archive" else f"model/{spec.name}"
    return EXTENSIONS.get(extension, "")


class Site:
    """ROOT (a folder, or one pack) as places: `resolve(segments)`, `rows(place)` (names found
    anywhere under it: `web.search.search_site`)."""

    def __init__(self, root: str, *, catalog: str | None = None) -> None:
        real = os.path.realpath(root)
        if not os.path.exists(real):
            raise NotFound(f"{root}: no such file or folder")
        self.root = real
        self.label = os.path.basename(real.rstrip(os.sep)) or real
        self.catalog = catalog if catalog is not None else _catalog_in(real)
        self._lock = threading.Lock()
        self._packs: collections.OrderedDict[str, _OpenPack] = collections.OrderedDict()
        self.root_is_pack = os.path.isfile(real)
        if self.root_is_pack:
            with self.session():
                if self._tree(real, os.stat(real), self.label)[0] is None:
                    raise GamepakError(f"{root}: not a pack gamepak can read, and not a folder")

    # -- holding packs ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        """Hold every pack opened or found in the cache inside the block (its threads included:
        they run in a copy of its context), so that one leaving the cache meanwhile is closed
        when the block ends rather than under a reader. A request runs in one session."""
        held: list[_OpenPack] = []
        token = _HELD.set(held)
        try:
            yield
        finally:
            _HELD.reset(token)
            self._release(held)

    @contextlib.contextmanager
    def keep(self) -> Iterator[None]:
        """Hold the packs the current session holds for the block too (a preview thread the
        request gave up on keeps reading them after the request ended)."""
        with self._lock:
            kept = list(_HELD.get() or [])
            for pack in kept:
                pack.users += 1
        try:
            yield
        finally:
            self._release(kept)

    def _release(self, held: list[_OpenPack]) -> None:
        with self._lock:
            for pack in held:
                pack.users -= 1
            done = [pack for pack in held if pack.retired and pack.users == 0]
        for pack in dict.fromkeys(done):
            pack.close()

    def open_packs(self) -> int:
        """How many pack files the cache holds open."""
        with self._lock:
            return sum(1 for pack in self._packs.values() if pack.archive is not None)

    def close(self) -> None:
        """Close every pack the cache holds (the server is stopping)."""
        with self._lock:
            packs = list(self._packs.values())
            self._packs.clear()
        for pack in packs:
            pack.close()

    # -- resolving -------------------------------------------------------------------------------
    def resolve(self, segments: list[str], *, as_file: bool = False) -> Place:
        """The place `segments` (decoded URL segments) names; raises Refused or NotFound.
        `as_file`: a pack at the end of the path is the file it is, not a folder of members."""
        for segment in segments:
            check_segment(segment)
        if self.root_is_pack:
            info = os.stat(self.root)
            tree, _ = self._tree(self.root, info, self.label)
            assert tree is not None
            return self._in_tree(tree, segments, 0, as_file, (self.root, info.st_size, info.st_mtime_ns))
        path = self.root
        for depth, segment in enumerate(segments):
            path = os.path.join(path, segment)
            info = self._stat_inside(path)
            if stat.S_ISDIR(info.st_mode):
                continue
            if not stat.S_ISREG(info.st_mode):
                raise Refused(f"{'/'.join(segments[: depth + 1])}: not a regular file or folder")
            last = depth == len(segments) - 1
            if last and as_file:
                return Place(list(segments), "file", disk_path=path)
            tree, problem = self._tree(path, info, segment)
            if tree is not None:
                return self._in_tree(tree, segments, depth + 1, as_file, (path, info.st_size, info.st_mtime_ns))
            if last:
                place = Place(list(segments), "file", disk_path=path)
                if problem:
                    place.problems.append(problem)
                return place
            raise NotFound(f"{'/'.join(segments[: depth + 1])}: a file, not a folder")
        return Place(list(segments), "folder", disk_path=path)

    def _stat_inside(self, path: str) -> os.stat_result:
        try:
            info = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            raise NotFound(f"{os.path.relpath(path, self.root)}: no such file or folder") from None
        if stat.S_ISLNK(info.st_mode):
            target = os.path.realpath(path)
            if os.path.commonpath([target, self.root]) != self.root:
                raise Refused(f"{os.path.relpath(path, self.root)}: a link that leads outside the served folder")
            try:
                info = os.stat(target)
            except OSError:
                raise NotFound(f"{os.path.relpath(path, self.root)}: a broken link") from None
        return info

    def _in_tree(
        self, tree: PackTree, segments: list[str], depth: int, as_file: bool, pack_key: tuple[str, int, int]
    ) -> Place:
        inner = segments[depth:]
        try:
            node = tree.lookup("/".join(inner))
        except (FileNotFoundError, NotADirectoryError):
            raise NotFound(f"{'/'.join(segments)}: no such member") from None
        if as_file and node.entry is not None:
            kind = "file"
        elif node.is_pack:
            kind = "pack"
        elif node.is_dir:
            kind = "folder"
        else:
            kind = "file"
        place = Place(list(segments), kind, tree=tree, node=node)
        place._pack_depth, place._pack_key = depth, pack_key
        if kind == "pack":
            place.problems = list(tree.problems)
        return place

    def _tree(self, path: str, info: os.stat_result, label: str) -> tuple[PackTree | None, str | None]:
        """The pack tree of the file at `path` (None when it is not a pack), opened once and kept
        while the file's size and modification time stay the same; and why it is shown as a file
        when it looks like a pack that cannot be read. A shortage (no file descriptor left) is
        `Busy` and not remembered; neither is any other OS error (the file may be fixed)."""
        key = (info.st_size, info.st_mtime_ns)
        with self._lock:
            cached = self._packs.get(path)
            if cached is not None and cached.key == key:
                self._packs.move_to_end(path)
                self._hold(cached)
                return cached.tree, cached.problem
        tree, archive, problem, remember = self._open_tree(path, label)
        opened = _OpenPack(key, tree, archive, problem)
        retired = []
        with self._lock:
            self._hold(opened)
            if remember:
                replaced = self._packs.pop(path, None)
                if replaced is not None:
                    retired.append(replaced)
                self._packs[path] = opened
                while len(self._packs) > OPEN_PACKS:
                    retired.append(self._packs.popitem(last=False)[1])
            else:
                retired.append(opened)
            for pack in retired:
                pack.retired = True
            done = [pack for pack in retired if pack.users == 0]
        for pack in done:  # the ones a request holds close when it ends (see `session`)
            pack.close()
        return tree, problem

    def _hold(self, pack: _OpenPack) -> None:
        held = _HELD.get()
        if held is not None:
            pack.users += 1
            held.append(pack)

    def _open_tree(self, path: str, label: str) -> tuple[PackTree | None, Archive | None, str | None, bool]:
        """(tree, archive, problem, whether to remember the answer) for the file at `path`."""
        from ..catalog.detect import choose
        from ..core.opening import open as open_archive
        from ..core.registry import get_format
        from ..errors import AmbiguousFormatError
        from ..fs.tree import PackTree

        try:
            with open(path, "rb") as handle:
                chosen = choose(handle, label, "strict")
        except AmbiguousFormatError as exc:
            return None, None, str(exc), True
        except (OSError, GamepakError) as exc:
            self._check_shortage(exc, label)
            return None, None, f"{label}: cannot be read: {_reason(exc)}", not _os_error_in(exc)
        if chosen is None:
            return None, None, None, True
        detection, _ = chosen
        if get_format(detection.format).kind != "archive" and _is_content(path, label):
            # A map, a model, a localization file: a file with its preview (the content
            # registry's), as the same file inside a pack is, not a pack of no members.
            return None, None, None, True
        try:
            archive = open_archive(path, detection.format)
        except GamepakError as exc:
            self._check_shortage(exc, label)
            return None, None, f"{label}: not readable as {detection.format}: {exc}", not _os_error_in(exc)
        try:
            mtime = os.stat(path).st_mtime
            return PackTree([(label, archive, mtime)]), archive, None, True
        except BaseException:
            archive.close()
            raise

    @staticmethod
    def _check_shortage(exc: BaseException, label: str) -> None:
        shortage = transient_os_error(exc)
        if shortage is not None:
            raise Busy(f"{label}: cannot be opened now: {shortage.strerror} (try again)") from shortage

    # -- listings --------------------------------------------------------------------------------
    def rows(self, place: Place) -> list[Row]:
        """The entries of a folder place, in the order found (the caller sorts and pages). Inside
        a pack, members not yet looked at for being packs show by their names: `classify` the
        rows a page shows (a folder of 100,000 members is listed without reading them all)."""
        if place.node is not None:
            assert place.tree is not None
            return [_member_row(name, child) for name, child in place.tree.entries(place.node).items()]
        assert place.disk_path is not None
        rows = []
        with os.scandir(place.disk_path) as found:
            for item in found:
                try:
                    info = item.stat()
                except OSError:
                    continue
                is_folder = stat.S_ISDIR(info.st_mode)
                rows.append(
                    Row(
                        item.name,
                        is_folder,
                        None if is_folder else info.st_size,
                        None,
                        "folder" if is_folder else type_by_name(item.name),
                    )
                )
        return rows

    def classify(self, place: Place, rows: list[Row]) -> list[Row]:
        """`rows` of a folder inside a pack with the members that are packs shown as packs."""
        if place.tree is None:
            return rows
        nodes = [row.node for row in rows if row.node is not None and not row.node.checked]
        if not nodes:
            return rows
        place.tree.classify(nodes)
        return [_member_row(row.name, row.node) if row.node is not None else row for row in rows]


def _os_error_in(exc: BaseException) -> bool:
    return isinstance(exc, OSError) or isinstance(exc.__cause__, OSError)


def _reason(exc: BaseException) -> str:
    """An error as a page says it: an OS error by its own words, others whole."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)


def _catalog_in(root: str) -> str | None:
    """A catalog made of ROOT and kept in it (`gamepak catalog ROOT -o ROOT/NAME.catalog`), if any:
    search (`web.search`) then reads it instead of walking."""
    if not os.path.isdir(root):
        return None
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return None
    for name in names:
        candidate = os.path.join(root, name)
        if name.endswith(".catalog") and os.path.isdir(os.path.join(candidate, "members")):
            return candidate
    return None
