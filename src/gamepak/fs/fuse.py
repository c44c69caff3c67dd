"""Read-only FUSE mount of packs (libfuse 3 through mfusepy), behind `gamepak mount`.

The folders and files come from `gamepak.fs.tree` (the same mapping as the fsspec protocol) and
bytes from `Archive.open` (the same readers as `extract`). For speed: the whole path tree is built
before the mount appears and kept, packs stay open, reads are large (max_read), and since
nothing can change, the kernel caches attributes, names and file pages (kernel_cache).
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import sys
import threading
from typing import TYPE_CHECKING, Any

from ..errors import GamepakError, MissingDependencyError

if TYPE_CHECKING:
    from types import ModuleType
    from typing import BinaryIO

    from .tree import Node, PackTree

# What the kernel may cache: nothing in a read-only pack changes while it is mounted.
CACHE_SECONDS = 3600
# The largest read the kernel sends at once (it may cap this lower).
MAX_READ = 1 << 20
# libfuse's FUSE_CAP_NO_OPEN_SUPPORT: the kernel may skip OPEN/RELEASE when `open` answers ENOSYS.
FUSE_CAP_NO_OPEN_SUPPORT = 1 << 17
# Members read by path (no OPEN) whose streams are kept open between reads.
OPEN_BY_PATH = 64
# What libfuse's fuse_main returns when its loop stopped because of a signal.
LOOP_ENDED_BY_SIGNAL = 8
INSTALL_HINT = "install the 'fuse3' package (Debian/Ubuntu: apt-get install fuse3; Fedora: dnf install fuse3)"


class FuseUnavailableError(MissingDependencyError):
    """This machine cannot mount: libfuse, its Python binding or /dev/fuse is missing."""


def load_fuse() -> ModuleType:
    """The mfusepy module, or `FuseUnavailableError` saying what to install."""
    try:
        import mfusepy
    except ImportError as exc:
        raise FuseUnavailableError("the Python package mfusepy is missing: pip install mfusepy") from exc
    except (OSError, AttributeError, RuntimeError) as exc:  # mfusepy loads libfuse when imported
        raise FuseUnavailableError(f"libfuse 3 is not installed or too old: {INSTALL_HINT}") from exc
    if sys.platform.startswith("linux"):
        if not os.path.exists("/dev/fuse"):
            raise FuseUnavailableError(
                "/dev/fuse is missing: load the fuse kernel module (modprobe fuse), or in a container "
                "pass the device (--device /dev/fuse)"
            )
        if os.geteuid() != 0 and shutil.which("fusermount3") is None and shutil.which("fusermount") is None:
            # Only root mounts without the setuid helper.
            raise FuseUnavailableError(f"fusermount3 is missing: {INSTALL_HINT}")
    return mfusepy


class PackOperations:
    """The FUSE callbacks (mfusepy's high-level interface) over a `PackTree`: lookups, listings
    and reads; every change is refused (the mount is read-only)."""

    use_ns = True  # times in nanoseconds (mfusepy's current interface)

    def __init__(self, tree: PackTree) -> None:
        self.tree = tree
        self._handles: dict[int, tuple[BinaryIO, threading.Lock]] = {}
        self._next_handle = 1
        self._handles_lock = threading.Lock()
        self._no_open = False
        self._by_path: dict[str, tuple[BinaryIO, threading.Lock]] = {}
        self._uid = os.getuid()
        self._gid = os.getgid()

    def _node(self, path: str) -> Node:
        return self.tree.lookup(path)

    def _attributes(self, node: Node) -> dict[str, Any]:
        mtime = int(node.mtime * 1_000_000_000)
        if node.is_dir:
            mode = stat.S_IFDIR | 0o555
            size = 0
            links = 2
        else:
            mode = stat.S_IFREG | 0o444
            size = max(0, node.size)
            links = 1
        return {
            "st_mode": mode,
            "st_nlink": links,
            "st_size": size,
            "st_blocks": (size + 511) // 512,
            "st_uid": self._uid,
            "st_gid": self._gid,
            "st_mtime": mtime,
            "st_ctime": mtime,
            "st_atime": mtime,
        }

    def init_with_config(self, connection: Any, config: Any) -> None:
        capable = getattr(connection, "capable", 0) if connection is not None else 0
        # A kernel that can skip OPEN and RELEASE for a file system that needs no per-open state
        # saves two of the four round trips a small file costs (lookup, open, read, release):
        # `open` answers ENOSYS once, and reads then come by path with no handle.
        self._no_open = bool(capable & FUSE_CAP_NO_OPEN_SUPPORT)
        if connection is not None and hasattr(connection, "max_read"):
            # libfuse refuses to start unless this matches the max_read mount option.
            connection.max_read = MAX_READ
            connection.max_readahead = MAX_READ
            # The kernel's largest request (max_pages) follows max_write, even for reads.
            connection.max_write = MAX_READ

    def getattr(self, path: str, fh: int | None = None) -> dict[str, Any]:
        return self._attributes(self._node(path))

    def readdir(self, path: str, fh: int) -> list[Any]:
        children = self.tree.listdir(path)
        listing: list[Any] = [".", ".."]
        for name, child in children.items():
            # Only the file type reaches the kernel from here (`ls -R` needs no lookups).
            listing.append((name, stat.S_IFDIR if child.is_dir else stat.S_IFREG, 0))
        return listing

    def open(self, path: str, flags: int) -> int:
        if flags & os.O_ACCMODE != os.O_RDONLY:
            raise OSError(errno.EROFS, "read-only mount")
        node = self._node(path)
        if self._no_open:
            raise OSError(errno.ENOSYS, "no per-open state: reads come by path")
        try:
            stream = self.tree.open(node)
        except GamepakError as exc:
            raise OSError(errno.EIO, str(exc)) from exc
        with self._handles_lock:
            handle = self._next_handle
            self._next_handle += 1
            self._handles[handle] = (stream, threading.Lock())
        return handle

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        stream, lock = self._handles[fh] if fh else self._stream_for(path)
        try:
            with lock:  # one position per handle; other handles read in parallel
                stream.seek(offset)
                return stream.read(size)
        except GamepakError as exc:
            raise OSError(errno.EIO, str(exc)) from exc

    def _stream_for(self, path: str) -> tuple[BinaryIO, threading.Lock]:
        """The stream of a member read by path (no OPEN): kept for the next reads of the same
        file (a compressed member keeps its position and checkpoints), the oldest closed first."""
        with self._handles_lock:
            found = self._by_path.pop(path, None)
            if found is None:
                node = self._node(path)
                try:
                    found = (self.tree.open(node), threading.Lock())
                except GamepakError as exc:
                    raise OSError(errno.EIO, str(exc)) from exc
                if len(self._by_path) >= OPEN_BY_PATH:
                    oldest = next(iter(self._by_path))
                    self._by_path.pop(oldest)[0].close()
            self._by_path[path] = found  # most recently used last
            return found

    def release(self, path: str, fh: int) -> int:
        with self._handles_lock:
            stream, _ = self._handles.pop(fh)
        stream.close()
        return 0

    def statfs(self, path: str) -> dict[str, int]:
        return {"f_bsize": 4096, "f_frsize": 4096, "f_namemax": 255}

    def access(self, path: str, amode: int) -> int:
        self._node(path)
        if amode & os.W_OK:
            raise OSError(errno.EROFS, "read-only mount")
        return 0


def mount(tree: PackTree, mountpoint: str, *, foreground: bool = True, debug: bool = False) -> None:
    """Mount `tree` read-only at `mountpoint`; returns when it is unmounted (Ctrl-C, SIGTERM,
    `gamepak unmount`, fusermount3 -u). With `foreground=False` libfuse detaches into the
    background once the mount is up, and this process's caller returns at once."""
    mfusepy = load_fuse()
    options: dict[str, Any] = {
        "foreground": foreground,
        "debug": debug,
        "ro": True,
        "fsname": "gamepak",
        "subtype": "gamepak",
        "kernel_cache": True,
        "attr_timeout": CACHE_SECONDS,
        "entry_timeout": CACHE_SECONDS,
        "negative_timeout": CACHE_SECONDS,
        "max_read": MAX_READ,
        "default_permissions": True,
        # One thread: reads hold the GIL anyway, and libfuse 3.14's threaded loop warns about its
        # own default settings on every start.
        "nothreads": True,
    }
    try:
        mfusepy.FUSE(PackOperations(tree), mountpoint, **options)
    except RuntimeError as exc:
        # fuse_main returns 8 when its loop ended on a signal (Ctrl-C, SIGTERM): unmounted
        # cleanly. Lower codes are failures before serving (bad options, cannot mount).
        if exc.args != (LOOP_ENDED_BY_SIGNAL,):
            raise GamepakError(f"{mountpoint}: cannot mount (libfuse returned {exc})") from exc


def unmount(mountpoint: str) -> None:
    """Unmount a FUSE mount (fusermount3 -u, else fusermount -u, else umount)."""
    import subprocess

    if not os.path.ismount(mountpoint):
        raise GamepakError(f"{mountpoint}: not a mount point")
    for command in (["fusermount3", "-u"], ["fusermount", "-u"], ["umount"]):
        if shutil.which(command[0]) is None:
            continue
        result = subprocess.run([*command, mountpoint], capture_output=True, text=True)
        if result.returncode == 0:
            return
        reason = (result.stderr.strip().splitlines() or [f"exit status {result.returncode}"])[-1]
        raise GamepakError(f"{mountpoint}: cannot unmount: {reason}")
    raise FuseUnavailableError(f"{mountpoint}: no fusermount3 or umount found: {INSTALL_HINT}")
