"""Finding the files to catalog: local files and folders (walked in sorted order, never into the
output folder) and fsspec URLs, each as a FileRef with the size and modification time seen, and
opening and reading one of them.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import zlib
from collections.abc import Callable, Iterator
from stat import S_ISREG
from typing import Any, NamedTuple

from ..core.portable import pread
from ..errors import cannot_read


class FileRef(NamedTuple):
    """A file to catalog: where it is, its path relative to the folder scanned, and the size and
    modification time seen when the scan was planned. A named tuple rather than a frozen
    dataclass: a run makes one per file in the client and again in a worker, and pickles them
    between the two (a frozen dataclass's five `object.__setattr__` calls and its pickled
    `__dict__` were a fifth of the client's work per archive)."""

    path: str
    relative: str
    size: int
    mtime_ns: int | None
    url: bool = False

    @property
    def key(self) -> str:
        """A short stable id of this file in this state (names its part files)."""
        return file_key(self.path, self.size, self.mtime_ns)


def file_key(path: str, size: int, mtime_ns: int | None) -> str:
    """`FileRef.key` of a file with these fields."""
    return hashlib.sha1(f"{path}\0{size}\0{mtime_ns}".encode("utf-8", "surrogateescape")).hexdigest()[:16]


class FileSpool:
    """FileRefs kept in an unnamed temporary file rather than in memory, read back in the order
    added: a walk of a million files holds about 350 bytes per FileRef, which was most of what a
    run's client grew by per archive. Written and read in compressed pickled chunks of CHUNK
    refs; the file has no name (removed by the OS however the process ends)."""

    CHUNK = 4096

    def __init__(self, folder: str) -> None:
        import tempfile

        # Closed by close() (the spool is a context manager itself).
        self._file = tempfile.TemporaryFile(dir=folder, prefix=".gamepak-walk-")  # noqa: SIM115
        self._chunk: list[tuple[Any, ...]] = []
        self.count = 0
        self.bytes = 0

    def add(self, ref: FileRef) -> None:
        self._chunk.append(tuple(ref))  # a plain tuple pickles without a call per ref
        self.count += 1
        self.bytes += ref.size
        if len(self._chunk) >= self.CHUNK:
            self._write_chunk()

    def _write_chunk(self) -> None:
        if self._chunk:
            # Paths repeat their folders: compressed, a million refs take ~15 MB, not ~100 MB
            # (OUT may be on tmpfs, which is memory too).
            packed = zlib.compress(pickle.dumps(self._chunk, protocol=pickle.HIGHEST_PROTOCOL), 1)
            self._file.write(len(packed).to_bytes(8, "little") + packed)
            self._chunk = []

    def __iter__(self) -> Iterator[FileRef]:
        """Every ref added, in order (once the adding is done)."""
        self._write_chunk()
        self._file.seek(0)
        while length := int.from_bytes(self._file.read(8), "little"):
            # Only ever this process's own pickles, in a file nobody else can name.
            yield from map(FileRef._make, pickle.loads(zlib.decompress(self._file.read(length))))

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> FileSpool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _is_url(path: str) -> bool:
    return "://" in path and not path.startswith("file://")


def iter_files(roots: list[str], exclude: str | None = None) -> Iterator[FileRef | tuple[str, str]]:
    """Every file under `roots` (folders walked in sorted order), as FileRefs; a problem walking
    yields `(path, line)` instead, the line naming the path (`PATH: cannot read: REASON`, as
    every command says it). `exclude` (the output folder) is never entered."""
    excluded = os.path.realpath(exclude) if exclude else None
    for root in roots:
        if _is_url(root):
            yield from _iter_url(root)
            continue
        local = root[len("file://") :] if root.startswith("file://") else root
        if os.path.isdir(local):
            yield from _iter_folder(local, excluded)
        else:
            try:
                stat = os.stat(local)
            except OSError as exc:
                yield local, str(cannot_read(local, exc))
                continue
            yield FileRef(local, os.path.basename(local), stat.st_size, stat.st_mtime_ns)


def _iter_folder(root: str, excluded: str | None) -> Iterator[FileRef | tuple[str, str]]:
    """os.walk's walk (top down, folder links listed but not entered, a folder that cannot be
    listed reported and skipped), each folder's files then its folders in sorted order, made
    from its scandir entries: a file's path and its stat come from its entry, and the relative
    path of a folder from its parent's (os.walk, then a path join and a stat per file, was a
    quarter of the client's work per archive)."""
    pending = [(root, "")]
    while pending:
        folder, prefix = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=_entry_name)
        except OSError as error:
            where = str(error.filename or folder)
            yield where, f"{where}: cannot list: {error.strerror}"
            continue
        folders = []
        for entry in entries:
            try:
                is_folder = entry.is_dir()
            except OSError:
                is_folder = False
            if is_folder:
                folders.append(entry)
                continue
            try:
                stat = entry.stat()
            except OSError as exc:
                yield entry.path, str(cannot_read(entry.path, exc))
                continue
            if S_ISREG(stat.st_mode):
                yield FileRef(entry.path, prefix + entry.name, stat.st_size, stat.st_mtime_ns)
        for entry in reversed(folders):
            if not entry.is_symlink() and os.path.realpath(entry.path) != excluded:
                pending.append((entry.path, f"{prefix}{entry.name}/"))


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _fsspec_mtime(info: dict[str, Any]) -> int | None:
    import datetime

    for key in ("mtime", "LastModified", "last_modified", "updated", "created"):
        value = info.get(key)
        if value is None:
            continue
        if isinstance(value, (int, float)):
            return int(value * 1_000_000_000)
        if isinstance(value, datetime.datetime):
            return int(value.timestamp() * 1_000_000_000)
        if isinstance(value, str):
            try:
                return int(datetime.datetime.fromisoformat(value).timestamp() * 1_000_000_000)
            except ValueError:
                continue
    return None


def _iter_url(root: str) -> Iterator[FileRef | tuple[str, str]]:
    try:
        import fsspec
        from fsspec.core import url_to_fs
    except ImportError:
        yield root, f"{root}: URLs need fsspec: pip install 'gamepak[catalog]'"
        return
    try:
        fs, base = url_to_fs(root)
        if fs.isdir(base):
            listing = fs.find(base, detail=True)
        else:
            listing = {base: fs.info(base)}
    except (OSError, ValueError) as exc:
        yield root, f"{root}: cannot list: {exc}"
        return
    protocol = root.split("://", 1)[0]
    del fsspec
    for path in sorted(listing):
        info = listing[path]
        if info.get("type") != "file":
            continue
        relative = path[len(base) :].lstrip("/") if path != base else path.rsplit("/", 1)[-1]
        yield FileRef(f"{protocol}://{path}", relative, int(info.get("size") or 0), _fsspec_mtime(info), url=True)


def open_file(ref: FileRef) -> Any:
    """A seekable binary file object for `ref` (a real file, or an fsspec file for URLs)."""
    if ref.url:
        import fsspec

        return fsspec.open(ref.path, "rb").open()
    local = ref.path[len("file://") :] if ref.path.startswith("file://") else ref.path
    return open(local, "rb")


def read_at(handle: Any, count: int, offset: int) -> bytes:
    """Up to `count` bytes at `offset` of a file object (pread when it has a descriptor)."""
    fileno: Callable[[], int] | None = getattr(handle, "fileno", None)
    if fileno is not None and not getattr(handle, "closed", False):
        try:
            return pread(fileno(), count, offset)
        except (OSError, io.UnsupportedOperation, ValueError):
            pass
    handle.seek(offset)
    return handle.read(count)  # type: ignore[no-any-return]
