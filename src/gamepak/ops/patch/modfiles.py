"""A mod's files, from a folder or a zip, looked up as mods name them (any case, either slash).

A zip is read defensively: every name is checked when it is opened (no `..`, absolute paths or
drive letters, no two names equal without case), declared sizes are bounded before anything is
read, and a file that inflates past its declared size, or stops short of it, is refused. A
folder's file is not followed through a symlink that leaves the mod.
"""

from __future__ import annotations

import hashlib
import os

from .container import MAX_MEMBER_BYTES, PatchError, check_relative, zip_read_errors

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

MAX_ZIP_ENTRIES = 200_000
_CHUNK = 1 << 20


class ModFiles:
    """A mod's files by path relative to the mod, looked up without case."""

    def __init__(self, path: str) -> None:
        self.path = path

    def find(self, relative: str) -> str | None:
        raise NotImplementedError

    def size(self, key: str) -> int:
        raise NotImplementedError

    def chunks(self, key: str, limit: int) -> Iterable[bytes]:
        raise NotImplementedError

    def named(self, name: str) -> list[str]:
        """The files called `name` (without case) at the top or in one folder, shallowest first."""
        raise NotImplementedError

    def read(self, key: str, limit: int) -> bytes:
        """A whole file, refused when it holds more than `limit` bytes."""
        return b"".join(self.chunks(key, limit))

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


class FolderFiles(ModFiles):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.root = os.path.realpath(path)

    def find(self, relative: str) -> str | None:
        current = self.path
        for part in relative.split("/"):
            if not os.path.isdir(current):
                return None
            name = entry_named(current, part)
            if name is None:
                return None
            current = os.path.join(current, name)
        real = os.path.realpath(current)
        if not real.startswith(self.root + os.sep) or not os.path.isfile(real):
            return None  # a symlink out of the mod, or a folder
        return os.path.relpath(current, self.path).replace(os.sep, "/")

    def size(self, key: str) -> int:
        return os.path.getsize(os.path.join(self.path, key))

    def chunks(self, key: str, limit: int) -> Iterable[bytes]:
        path = os.path.join(self.path, key)
        total = 0
        with open(path, "rb") as handle:
            while chunk := handle.read(_CHUNK):
                total += len(chunk)
                if total > limit:
                    raise PatchError(f"{path}: more than the {limit} bytes read")
                yield chunk

    def named(self, name: str) -> list[str]:
        found = []
        for folder in ["", *sorted(entry for entry in listdir(self.path) if _isdir(self.path, entry))]:
            for entry in sorted(listdir(os.path.join(self.path, folder))):
                if entry.lower() == name.lower() and os.path.isfile(os.path.join(self.path, folder, entry)):
                    found.append(f"{folder}/{entry}" if folder else entry)
        return found


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


def _isdir(folder: str, entry: str) -> bool:
    path = os.path.join(folder, entry)
    return os.path.isdir(path) and not os.path.islink(path)


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
            self.names: dict[str, str] = {}  # as the zip spells them
            for info in infos:
                name = check_relative(info.filename, f"{path}: entry {info.filename!r}")
                if info.is_dir():
                    continue
                if name.lower() in self.entries:
                    raise PatchError(f"{path}: holds {name!r} twice (names are matched without case)")
                if info.file_size > MAX_MEMBER_BYTES:
                    raise PatchError(f"{path}: {name} declares {info.file_size} bytes (limit {MAX_MEMBER_BYTES})")
                self.entries[name.lower()] = info
                self.names[name.lower()] = name
        except BaseException:
            self.zip.close()
            raise

    def find(self, relative: str) -> str | None:
        return relative.lower() if relative.lower() in self.entries else None

    def size(self, key: str) -> int:
        return int(self.entries[key].file_size)

    def chunks(self, key: str, limit: int) -> Iterable[bytes]:
        info = self.entries[key]
        where = f"{self.path}: {info.filename}"
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

    def named(self, name: str) -> list[str]:
        found = [key for key in self.entries if key.rsplit("/", 1)[-1] == name.lower() and key.count("/") <= 1]
        return [self.names[key] for key in sorted(found, key=lambda key: (key.count("/"), key))]

    def unpack(self, folder: str, prefix: str = "") -> None:
        """Write the files under `prefix` (a folder of the zip ending in "/", or "" for all) into
        `folder`, new and empty, without the prefix. Names were checked when the zip was opened;
        the declared sizes together must fit in the free space of `folder`'s file system before
        anything is written, and each file is checked against its declared size as it inflates."""
        import shutil

        wanted = {key: name[len(prefix) :] for key, name in self.names.items() if key.startswith(prefix.lower())}
        declared = sum(int(self.entries[key].file_size) for key in wanted)
        free = shutil.disk_usage(folder).free
        if declared > free:
            raise PatchError(f"{self.path}: declares {declared} bytes of files; {folder} has {free} free")
        for key, name in wanted.items():
            path = os.path.join(folder, *name.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "xb") as handle:
                for chunk in self.chunks(key, MAX_MEMBER_BYTES):
                    handle.write(chunk)

    def close(self) -> None:
        self.zip.close()


def open_mod_files(path: str) -> ModFiles:
    if os.path.isdir(path):
        return FolderFiles(path)
    if not os.path.isfile(path):
        raise PatchError(f"{path}: no such mod folder or zip")
    return ZipFiles(path)
