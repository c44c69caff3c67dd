"""The `gamepak://` fsspec protocol: any pack gamepak reads, as a read-only filesystem.

Registered through the `fsspec.specs` entry point, so with gamepak installed and nothing imported:

    >>> import fsspec
    >>> fsspec.open("gamepak://maps/e1m1.bsp::/games/quake/pak0.pak").open().read(4)
    >>> fsspec.filesystem("gamepak", fo="pak0.pak").ls("maps")
    >>> pandas.read_csv("gamepak://data/scores.csv::zip://mod.pak::https://example.org/mod.zip")

The pack is opened once and read by ranges through the same readers as `gamepak extract`
(a local file directly, with `pread`; anything else through the file object fsspec gives);
nested packs are folders (`outer.vpp_pc/inner.str2_pc/member`). Paths map to members in
`gamepak.fs.tree`, shared with the FUSE mount.
"""

from __future__ import annotations

import datetime
import io
import os
import weakref
from typing import TYPE_CHECKING, Any

from fsspec.archive import AbstractArchiveFileSystem
from fsspec.core import OpenFile

from ..core.opening import open as open_archive
from .tree import Node, PackTree

if TYPE_CHECKING:
    from typing import BinaryIO

    from ..core.archive import Archive

# Buffer of the stream wrapped around a raw member view: small reads (a CSV parser's lines)
# come from memory, large ones go straight to the pack.
_BUFFER_SIZE = 1 << 16


class GamepakFileSystem(AbstractArchiveFileSystem):
    """A pack (PAK, JPK, RFG packfile, J2ME pack...) as a read-only filesystem.

    `fo` is the pack: a path or URL (opened with `target_protocol` / `target_options`, as fsspec's
    zip filesystem does) or an open seekable binary file. `format` names the pack's format
    instead of detecting it; `nested=False` shows nested packs as files.
    """

    protocol = "gamepak"
    root_marker = ""
    # The pack stays open while the instance lives; a cached instance would keep a file object
    # the caller may already have closed.
    cachable = False

    def __init__(
        self,
        fo: str | os.PathLike[str] | BinaryIO | OpenFile = "",
        mode: str = "r",
        target_protocol: str | None = None,
        target_options: dict[str, Any] | None = None,
        format: str | None = None,
        nested: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if mode not in ("r", "rb"):
            raise ValueError(f"gamepak filesystems are read-only (mode {mode!r})")
        self.fo: Any = fo
        self._owned: Any = None  # a file object this instance opened, closed with it
        mtime = 0.0
        if isinstance(fo, (str, os.PathLike)):
            local = _local_path(os.fspath(fo), target_protocol)
            if local is not None:
                # A local pack is read with pread (and memory maps) rather than a file object.
                self.archive: Archive = open_archive(local, format)
                mtime = os.stat(local).st_mtime
            else:
                import fsspec

                opened = fsspec.open(os.fspath(fo), mode="rb", protocol=target_protocol, **(target_options or {}))
                mtime = _remote_mtime(opened)
                # Keep the OpenFile: it holds the filesystem the file reads through (a zip://
                # filesystem closes its archive when collected).
                self._target = opened
                self._owned = opened.open()
                try:
                    self.archive = open_archive(self._owned, format, name=os.fspath(fo))
                except BaseException:
                    self._owned.close()
                    raise
        elif isinstance(fo, OpenFile):
            # An fsspec OpenFile (not yet opened), as fsspec's zip filesystem takes too.
            mtime = _remote_mtime(fo)
            self._target = fo
            self._owned = fo.open()
            try:
                self.archive = open_archive(self._owned, format, name=str(fo.path))
            except BaseException:
                self._owned.close()
                raise
        else:
            self.archive = open_archive(fo, format)
        self.tree = PackTree([("", self.archive, mtime)], nested=nested)
        self.dir_cache: dict[str, dict[str, Any]] | None = None
        self._finalizer = weakref.finalize(self, _close, self.tree, self.archive, self._owned)

    @classmethod
    def _strip_protocol(cls, path: Any) -> Any:
        # Member paths are always relative to the pack's root.
        return super()._strip_protocol(path).lstrip("/")

    def close(self) -> None:
        """Close the pack (a file object the caller passed in stays open)."""
        self._finalizer()

    # -- listing ---------------------------------------------------------------------------------
    def _details(self, path: str, node: Node) -> dict[str, Any]:
        info: dict[str, Any] = {
            "name": path,
            "size": node.size if not node.is_dir or node.is_pack else 0,
            "type": "directory" if node.is_dir else "file",
            "mtime": node.mtime,
        }
        if node.entry is not None:
            info["offset"] = node.entry.offset
            info["stored_size"] = node.entry.stored_size
            info["member"] = node.entry.name
        return info

    def _get_dirs(self) -> None:
        """Fill fsspec's `dir_cache` with every path (listing and lookups use the tree instead:
        scanning the cache costs a pass over every member per call)."""
        if self.dir_cache is None:
            self.dir_cache = {path: self._details(path, node) for path, node in self.tree.walk()}

    def info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        path = self._strip_protocol(path).rstrip("/")
        node = self.tree.lookup(path)
        if not path:
            return {"name": "", "size": 0, "type": "directory", "mtime": node.mtime}
        return self._details(path, node)

    def ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Any]:
        path = self._strip_protocol(path).rstrip("/")
        node = self.tree.lookup(path)
        if not node.is_dir:
            entries = [self._details(path, node)]
        else:
            prefix = f"{path}/" if path else ""
            entries = [self._details(prefix + name, child) for name, child in sorted(self.tree.children(node).items())]
        return entries if detail else [entry["name"] for entry in entries]

    def modified(self, path: str) -> datetime.datetime:
        """When the member was last changed (the pack's time for formats that keep none)."""
        return datetime.datetime.fromtimestamp(self.info(path)["mtime"], tz=datetime.UTC)

    # -- reading ---------------------------------------------------------------------------------
    def _open(
        self,
        path: str,
        mode: str = "rb",
        block_size: int | None = None,
        autocommit: bool = True,
        cache_options: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> BinaryIO:
        if "r" not in mode or any(flag in mode for flag in "wax+"):
            raise OSError(f"gamepak filesystems are read-only (mode {mode!r})")
        path = self._strip_protocol(path)
        node = self.tree.lookup(path)
        if node.is_dir:
            raise IsADirectoryError(path)
        stream = self.tree.open(node)
        if isinstance(stream, io.RawIOBase):
            # Raw range views: give text wrappers and small reads a buffer.
            stream = io.BufferedReader(stream, block_size or _BUFFER_SIZE)  # type: ignore[assignment]
        # The pack closes when this filesystem is collected: an open member keeps it alive
        # (`fsspec.open(url).open()` drops every other reference to it).
        stream.filesystem = self  # type: ignore[attr-defined]
        return stream

    def cat_file(self, path: str, start: int | None = None, end: int | None = None, **kwargs: Any) -> bytes:
        """A member's bytes, or the range [start, end) of them (negative counts from the end);
        only that range is read."""
        path = self._strip_protocol(path)
        node = self.tree.lookup(path)
        if node.is_dir:
            raise IsADirectoryError(path)
        size = node.size
        first = 0 if start is None else (max(0, size + start) if start < 0 else min(start, size))
        last = size if end is None else (max(0, size + end) if end < 0 else min(end, size))
        with self.tree.open(node) as stream:
            if first:
                stream.seek(first)
            return stream.read(max(0, last - first))


def _local_path(fo: str, target_protocol: str | None) -> str | None:
    """The local file a pack URL names, or None for any other filesystem."""
    from fsspec.core import split_protocol

    protocol, rest = split_protocol(fo)
    protocol = target_protocol or protocol or "file"
    if protocol not in ("file", "local"):
        return None
    from fsspec.implementations.local import LocalFileSystem

    return str(LocalFileSystem._strip_protocol(rest if target_protocol is None else fo))


def _remote_mtime(opened: Any) -> float:
    """The pack's modification time as its filesystem reports it, or 0 when it has none."""
    try:
        info = opened.fs.info(opened.path)
    except Exception:  # any filesystem's own errors: the time is only a nicety
        return 0.0
    for key in ("mtime", "LastModified", "last_modified", "updated", "created"):
        value = info.get(key)
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, datetime.datetime):
            return value.timestamp()
    return 0.0


def _close(tree: PackTree, archive: Archive, owned: Any) -> None:
    tree.close()
    archive.close()
    if owned is not None:
        owned.close()
