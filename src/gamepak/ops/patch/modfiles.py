"""A mod's files, from a folder or a zip, looked up as mods name them (any case, either slash).

Every file of a mod is listed when it is opened, and that list is all that is read: a folder is
walked without following links, and a symbolic link (to a file or a folder, at any depth) or a
special file (a FIFO, a device, a socket) is refused, naming it, before anything is read or
written; a file is then opened without following links and checked to be the regular file of
the size that was listed. A zip is read defensively: every name is checked when it is opened (no
`..`, absolute paths or drive letters, no two names equal without case, no link or special
entries), declared sizes are bounded before anything is read, and a file that inflates past its
declared size, or stops short of it, is refused at the first byte over.

A `ModFiles` is also a blob source (`container.BlobSource`): a mod's patch reads its blobs from it.
"""

from __future__ import annotations

import hashlib
import os
import stat

from ...errors import cannot_read
from .container import MAX_MEMBER_BYTES, PatchError, check_relative, zip_read_errors

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

MAX_ZIP_ENTRIES = 200_000
MAX_MOD_FILES = MAX_ZIP_ENTRIES
MAX_MOD_DEPTH = 64
_CHUNK = 1 << 20


class ModFiles:
    """A mod's files by path relative to the mod, looked up without case. `files`: every file,
    {lowercase relative path: the path as the mod spells it}."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.files: dict[str, str] = {}

    def find(self, relative: str) -> str | None:
        """The key of the file `relative` names (any case), None when the mod has none."""
        return relative.lower() if relative.lower() in self.files else None

    def size(self, key: str) -> int:
        raise NotImplementedError

    def chunks(self, key: str, limit: int) -> Iterable[bytes]:
        raise NotImplementedError

    def where(self, key: str) -> str:
        """The file for messages: the mod and the path inside it."""
        return os.path.join(self.path, *self.files[key].split("/"))

    def named(self, name: str) -> list[str]:
        """The files called `name` (without case) at the top or in one folder, shallowest first."""
        found = [key for key in self.files if key.rsplit("/", 1)[-1] == name.lower() and key.count("/") <= 1]
        return [self.files[key] for key in sorted(found, key=lambda key: (key.count("/"), key))]

    def read(self, key: str, limit: int) -> bytes:
        """A whole file, refused when it holds more than `limit` bytes."""
        return b"".join(self.chunks(key, limit))

    def read_blob(self, key: str, size: int) -> bytes:
        """`container.BlobSource`: the file, which must hold exactly `size` bytes."""
        data = self.read(key, size)
        if len(data) != size:
            raise PatchError(f"{self.where(key)}: changed while being applied")
        return data

    def blob_chunks(self, key: str, size: int) -> Iterator[bytes]:
        """`read_blob` in chunks."""
        total = 0
        for chunk in self.chunks(key, size):
            total += len(chunk)
            yield chunk
        if total != size:
            raise PatchError(f"{self.where(key)}: changed while being applied")

    def digest(self, key: str) -> tuple[str, int]:
        """(sha256, size) of a file, read in chunks."""
        digest = hashlib.sha256()
        size = 0
        for chunk in self.chunks(key, MAX_MEMBER_BYTES):
            digest.update(chunk)
            size += len(chunk)
        return digest.hexdigest(), size

    def close(self) -> None:
        pass

    def __enter__(self) -> ModFiles:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class FolderFiles(ModFiles):
    """A mod folder, walked once without following links."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.sizes: dict[str, int] = {}
        self._walk(path, "", 0)

    def _walk(self, folder: str, prefix: str, depth: int) -> None:
        if depth > MAX_MOD_DEPTH:
            raise PatchError(f"{folder}: folders nest deeper than {MAX_MOD_DEPTH} in the mod")
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError as exc:
            raise PatchError(f"{folder}: cannot be listed ({exc.strerror or exc})") from None
        for entry in entries:
            path = os.path.join(folder, entry.name)
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError as exc:
                raise cannot_read(path, exc, error=PatchError) from None
            if stat.S_ISLNK(info.st_mode):
                raise PatchError(f"{path}: a symbolic link in the mod; mods are read without following links")
            relative = f"{prefix}{entry.name}"
            if stat.S_ISDIR(info.st_mode):
                self._walk(path, f"{relative}/", depth + 1)
                continue
            if not stat.S_ISREG(info.st_mode):
                raise PatchError(f"{path}: not a regular file (a FIFO, device or socket) in the mod")
            name = check_relative(relative, path)
            if name.lower() in self.files:
                raise PatchError(f"{path}: the mod holds {name!r} twice (names are matched without case)")
            if len(self.files) >= MAX_MOD_FILES:
                raise PatchError(f"{self.path}: more than {MAX_MOD_FILES} files")
            self.files[name.lower()] = name
            self.sizes[name.lower()] = info.st_size

    def size(self, key: str) -> int:
        return self.sizes[key]

    def chunks(self, key: str, limit: int) -> Iterable[bytes]:
        path = self.where(key)
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = os.open(path, flags)
        except OSError as exc:
            raise cannot_read(path, f"{exc.strerror or exc}; a link is not followed", error=PatchError) from None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size != self.sizes[key]:
                raise PatchError(f"{path}: changed while the mod was read")
            total = 0
            while chunk := handle.read(_CHUNK):
                total += len(chunk)
                if total > limit:
                    raise PatchError(f"{path}: more than the {limit} bytes read")
                yield chunk


def entry_named(folder: str, name: str) -> str | None:
    """The entry of `folder` called `name`, matched exactly, else without case."""
    entries = listdir(folder)
    if name in entries:
        return name
    return next((entry for entry in entries if entry.lower() == name.lower()), None)


def real_path(root: str, parts: list[str]) -> str | None:
    """The file `parts` names under `root`, matched without case (as the game, on Windows, finds
    it), as its real relative path; None when there is no such file."""
    real: list[str] = []
    current = root
    for part in parts:
        name = entry_named(current, part)
        if name is None:
            return None
        real.append(name)
        current = os.path.join(current, name)
    return "/".join(real) if os.path.isfile(current) else None


def listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


class ZipFiles(ModFiles):
    """A zip mod: every name is checked when it is opened; sizes are checked before reading and
    again while inflating."""

    def __init__(self, path: str) -> None:
        import zipfile

        super().__init__(path)
        try:
            self.zip = zipfile.ZipFile(path)
        except zip_read_errors() as exc:
            raise PatchError(f"{path}: not a readable zip ({exc})") from None
        try:
            infos = self.zip.infolist()
            if len(infos) > MAX_ZIP_ENTRIES:
                raise PatchError(f"{path}: {len(infos)} entries, more than {MAX_ZIP_ENTRIES}")
            self.entries: dict[str, Any] = {}
            for info in infos:
                name = check_relative(info.filename, f"{path}: entry {info.filename!r}")
                if info.is_dir():
                    continue
                kind = stat.S_IFMT(info.external_attr >> 16)
                if info.create_system == 3 and kind not in (0, stat.S_IFREG):  # made on Unix: its mode
                    what = "a symbolic link" if kind == stat.S_IFLNK else "not a regular file"
                    raise PatchError(f"{path}: entry {name!r} is {what}; mods are read without following links")
                if name.lower() in self.entries:
                    raise PatchError(f"{path}: holds {name!r} twice (names are matched without case)")
                if info.file_size > MAX_MEMBER_BYTES:
                    raise PatchError(f"{path}: {name} declares {info.file_size} bytes (limit {MAX_MEMBER_BYTES})")
                self.entries[name.lower()] = info
                self.files[name.lower()] = name
        except BaseException:
            self.zip.close()
            raise

    def size(self, key: str) -> int:
        return int(self.entries[key].file_size)

    def where(self, key: str) -> str:
        return f"{self.path}: {self.entries[key].filename}"

    def chunks(self, key: str, limit: int) -> Iterable[bytes]:
        info = self.entries[key]
        where = self.where(key)
        if info.file_size > limit:
            raise PatchError(f"{where}: declares {info.file_size} bytes, more than the {limit} read")
        total = 0
        try:
            with self.zip.open(info) as stream:
                while chunk := stream.read(_CHUNK):
                    total += len(chunk)
                    if total > info.file_size:
                        raise PatchError(f"{where}: inflates past the {info.file_size} bytes it declares")
                    yield chunk
        except zip_read_errors() as exc:
            raise PatchError(f"{where}: cannot be read ({exc})") from None
        if total != info.file_size:
            raise PatchError(f"{where}: holds {total} bytes, not the {info.file_size} it declares")

    def close(self) -> None:
        self.zip.close()


def open_mod_files(path: str) -> ModFiles:
    if os.path.isdir(path):
        return FolderFiles(path)
    if not os.path.isfile(path):
        raise PatchError(f"{path}: no such mod folder or zip")
    return ZipFiles(path)
