"""The one safe extraction path, shared by every format.

1. Plan, writing nothing: every member name is turned into a path under the destination or
   refused (`UnsafePathError`): no `..` parts, no absolute paths or drive letters, no NUL bytes,
   `\\` counts as a separator, no part longer than the file system allows, and no folder on the
   way may be a symlink. Targets that exist are refused unless `overwrite` is given, and every
   member's bytes must lie inside the archive file. A refused extraction leaves no trace.
2. Write, atomically as a whole: what did not exist yet is built under temporary names
   (`.NAME.gamepak-PID-N.tmp`): a new destination folder, each new folder inside an existing
   one, each new file in an existing folder, each file replaced with `overwrite`. Folders are
   made once and opened with `O_DIRECTORY|O_NOFOLLOW`; files are created relative to their
   folder (`O_EXCL|O_NOFOLLOW`) with one `pread` and one `write` each (`copy_file_range` for
   large ones), split by bytes over one forked process per core when there are many
   (`ops.copier`).
3. Publish: only when every member was written are the temporaries renamed into place (one
   rename for a fresh destination). A failure removes everything written; a killed run leaves
   only temporaries, which the next command writing in that folder removes.

Duplicate names: the copy the game would load (`Archive.duplicate_wins`) is written under the
name; every other copy is written beside it as `NAME.dupN` (N its member index, with a further
`-K` when that name is taken too), and the manifest records which member each file holds, so
nothing is lost and rebuilds stay exact. A member named like the manifest is renamed the same way.
"""

from __future__ import annotations

import os
import stat
import sys
from itertools import repeat

from ..core.archive import Archive, RawRange
from ..core.atomic import remove_stale_temporaries, temporary_name, write_all
from ..core.names import NAME_MAX, check_windows_names, safe_parts
from ..core.portable import flag, has_folder_descriptors
from ..errors import GamepakError, OutputExistsError, UnsafePathError
from .copier import chunk_writer, copy_members, write_file
from .manifest import MANIFEST_NAME, manifest_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..core.archive import Entry

_FOLDER = os.O_RDONLY | flag("O_CLOEXEC") | flag("O_DIRECTORY") | flag("O_NOFOLLOW")
# Folder states in a plan.
_EXISTS, _NEW_ROOT, _NEW = 0, 1, 2


def plan_targets(archive: Archive, entries: list[Entry]) -> list[list[str]]:
    """Target path components per entry. Copies of a duplicated name that the game would not
    load, and a member named like the manifest, get a free `.dupN` name instead (with a
    warning for the manifest)."""
    return [key.split("/") for key in _target_keys(archive, entries)]


def _target_keys(archive: Archive, entries: list[Entry]) -> list[str]:
    """`plan_targets` as `/`-joined strings (what the extraction works with)."""
    if type(archive).extraction_name is Archive.extraction_name:
        keys = [entry.name for entry in entries]
    else:
        keys = [archive.extraction_name(entry) for entry in entries]
    if not _all_plain(keys):
        keys = [_plain_key(name) for name in keys]
    unique = set(keys)
    if len(unique) == len(keys) and MANIFEST_NAME not in unique:
        return keys
    owner: dict[str, int] = {}
    order = range(len(entries)) if archive.duplicate_wins == "first" else range(len(entries) - 1, -1, -1)
    for position in order:
        owner.setdefault(keys[position], position)
    renamed = [position for position, key in enumerate(keys) if owner[key] != position]
    if MANIFEST_NAME in owner:
        renamed.append(owner[MANIFEST_NAME])
        renamed.sort()
    taken = set(keys) | {MANIFEST_NAME}
    for key in keys:
        folder = key.rpartition("/")[0]
        while folder and folder not in taken:
            taken.add(folder)
            folder = folder.rpartition("/")[0]
    for position in renamed:
        entry = entries[position]
        folder, _, base = keys[position].rpartition("/")
        candidate = f"{base}.dup{entry.index}"
        attempt = 1
        while (f"{folder}/{candidate}" if folder else candidate) in taken:
            attempt += 1
            candidate = f"{base}.dup{entry.index}-{attempt}"
        if len(os.fsencode(candidate)) > NAME_MAX:
            raise UnsafePathError(entry.name, f"its duplicate copy's name {candidate[:24]!r}... is too long")
        if keys[position] == MANIFEST_NAME:
            import warnings

            warnings.warn(
                f"member {entry.name!r} is extracted as {candidate!r}: {MANIFEST_NAME} is the name of "
                "gamepak's manifest",
                stacklevel=4,
            )
        keys[position] = f"{folder}/{candidate}" if folder else candidate
        taken.add(keys[position])
    return keys


def _all_plain(names: list[str]) -> bool:
    """Whether every name is already its own key (`a/b/c.ext`: ASCII, short parts, nothing to
    normalise or refuse), checked with a few scans of all names joined: no step per name."""
    if not names:
        return True
    joined = "\0".join(names)
    if not joined or joined.count("\0") != len(names) - 1 or not joined.isascii() or max(map(len, names)) > NAME_MAX:
        return False
    if "\\" in joined or "//" in joined or ":" in joined or "\0\0" in joined or "\0/" in joined or "/\0" in joined:
        return False
    if joined[0] == "/" or joined[-1] == "/" or joined[0] == "\0" or joined[-1] == "\0":
        return False
    bounded = "/" + joined.replace("\0", "/") + "/"
    return "/./" not in bounded and "/../" not in bounded


def _plain_key(name: str) -> str:
    """The key of one name: itself when plain (the common case), else its checked parts joined."""
    if (
        name
        and name[0] != "/"
        and "\\" not in name
        and "\0" not in name
        and name[1:2] != ":"
        and "//" not in name
        and name[-1] != "/"
        and name.isascii()
        and len(name) <= NAME_MAX
    ):
        parts = name.split("/")
        if "." not in parts and ".." not in parts:
            return name
    return "/".join(safe_parts(name))


class _Plan:
    """Where each file goes and what exists already; built without writing anything.
    Paths are `/`-joined strings relative to the root ("" is the root)."""

    def __init__(self, root: str, keys: list[str], names: list[str], overwrite: bool) -> None:
        self.root = root
        self.overwrite = overwrite
        try:
            info = os.stat(root)
        except FileNotFoundError:
            self.root_exists = False
        except OSError as exc:
            raise GamepakError(f"{root}: cannot use as the destination: {exc.strerror}") from exc
        else:
            if not stat.S_ISDIR(info.st_mode):
                raise GamepakError(f"{root}: the destination is not a folder")
            self.root_exists = True
        # folder -> _EXISTS / _NEW_ROOT (created under a temporary name) / _NEW (inside one)
        folders = self.folders = {"": _EXISTS if self.root_exists else _NEW_ROOT}
        # per target: None (written directly) or "new" / "replace" (through a temporary name)
        self.modes: list[str | None] = []
        files = set(keys)
        if not self.root_exists and self._all_new(keys, files):
            return
        modes = self.modes
        for key, name in zip(keys, names, strict=True):
            folder = key.rpartition("/")[0]
            state = folders.get(folder)
            if state is None:
                state = self._folder(folder, name, files)
            if key in folders:
                raise GamepakError(f"member {name!r} is in the way of a folder other members need")
            modes.append(None if state != _EXISTS else self._existing_target(key, name))

    def _all_new(self, keys: list[str], files: set[str]) -> bool:
        """The plan for a destination that does not exist yet, with set operations instead of
        a step per member; False when a file is in the way of a folder (the member-by-member
        plan then says which)."""
        needed = {key.rpartition("/")[0] for key in keys}
        for folder in list(needed):
            while folder:
                folder = folder.rpartition("/")[0]
                if folder in needed:
                    break
                needed.add(folder)
        needed.discard("")
        if not needed.isdisjoint(files):
            return False
        # Parents before children: make_folders creates them in this order.
        self.folders.update((folder, _NEW) for folder in sorted(needed, key=lambda folder: folder.count("/")))
        self.modes = [None] * len(keys)
        return True

    def _folder(self, folder: str, name: str, files: set[str]) -> int:
        if folder in files:
            raise GamepakError(f"member {folder!r} is a file in the way of member {name!r}")
        parent_folder = folder.rpartition("/")[0]
        parent = self.folders.get(parent_folder)
        if parent is None:
            parent = self._folder(parent_folder, name, files)
        if parent != _EXISTS:
            state = _NEW
        else:
            path = os.path.join(self.root, folder)
            try:
                info = os.lstat(path)
            except FileNotFoundError:
                state = _NEW_ROOT
            else:
                if stat.S_ISLNK(info.st_mode):
                    raise UnsafePathError(name, f"{path} is a symlink")
                if not stat.S_ISDIR(info.st_mode):
                    raise GamepakError(f"{path}: a file is in the way of member {name!r}")
                state = _EXISTS
        self.folders[folder] = state
        return state

    def _existing_target(self, key: str, name: str) -> str:
        path = os.path.join(self.root, key)
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return "new"
        if stat.S_ISDIR(info.st_mode):
            raise GamepakError(f"{path}: a folder is in the way of member {name!r}")
        if not self.overwrite:
            raise OutputExistsError(path)
        return "replace"


class _Writer:
    """Builds the planned tree under temporary names and publishes it, or removes it all."""

    def __init__(self, plan: _Plan) -> None:
        self.plan = plan
        self.pid = os.getpid()
        self.fds: list[int] = []
        self.folder_fds: dict[str, int] = {}
        # (folder fd, temporary name, final name, is a folder, replaces an existing file)
        self.pending: list[tuple[int, str, str, bool, bool]] = []
        self.made_ancestors: list[str] = []
        self.limits: tuple[int, int] | None = None

    def _open_folder(self, name: str, dir_fd: int | None) -> int:
        fd = os.open(name, _FOLDER, dir_fd=dir_fd)
        self.fds.append(fd)
        return fd

    def _cleaned(self, path: str, fd: int) -> None:
        remove_stale_temporaries(path, dir_fd=fd)

    def make_folders(self) -> None:
        """Create the new folders (tops of new trees under temporary names); open every folder."""
        plan = self.plan
        root = plan.root
        self.limits = _raise_fd_limit(len(plan.folders) + 64)
        if plan.root_exists:
            self.folder_fds[""] = self._open_folder(root, None)
        else:
            parent, base = os.path.split(root)
            missing = []
            while parent and not os.path.isdir(parent):
                missing.append(parent)
                parent = os.path.dirname(parent)
            for folder in reversed(missing):
                os.mkdir(folder)
                self.made_ancestors.append(folder)
            parent_fd = self._open_folder(os.path.dirname(root), None)
            self._cleaned(os.path.dirname(root), parent_fd)
            temporary = temporary_name(base, self.pid)
            os.mkdir(temporary, dir_fd=parent_fd)
            self.pending.append((parent_fd, temporary, base, True, False))
            self.folder_fds[""] = self._open_folder(temporary, parent_fd)
        for folder, state in plan.folders.items():
            if not folder:
                continue
            parent, _, base = folder.rpartition("/")
            parent_fd = self.folder_fds[parent]
            if state == _EXISTS:
                fd = self._open_existing(folder, base, parent_fd)
            elif state == _NEW_ROOT:
                self._cleaned(os.path.join(root, parent), parent_fd)
                temporary = temporary_name(base, self.pid)
                os.mkdir(temporary, dir_fd=parent_fd)
                self.pending.append((parent_fd, temporary, base, True, False))
                fd = self._open_folder(temporary, parent_fd)
            else:
                os.mkdir(base, dir_fd=parent_fd)
                fd = self._open_folder(base, parent_fd)
            self.folder_fds[folder] = fd

    def _open_existing(self, folder: str, base: str, parent_fd: int) -> int:
        try:
            return self._open_folder(base, parent_fd)
        except OSError as exc:
            # ELOOP / ENOTDIR: the folder was swapped for a link or a file since it was checked.
            raise UnsafePathError(folder, f"{os.path.join(self.plan.root, folder)} changed: {exc.strerror}") from exc

    def file_slots(self, keys: list[str], modes: list[str | None]) -> list[tuple[int, str]]:
        """(folder fd, name to create) per target."""
        if not any(modes):
            fds = self.folder_fds
            return [(fds[folder], base) for folder, _, base in map(str.rpartition, keys, repeat("/"))]
        file_slot = self.file_slot
        return [file_slot(key, mode) for key, mode in zip(keys, modes, strict=False)]

    def file_slot(self, key: str, mode: str | None) -> tuple[int, str]:
        """(folder fd, name to create) for one target."""
        folder, _, base = key.rpartition("/")
        fd = self.folder_fds[folder]
        if mode is None:
            return fd, base
        self._cleaned(os.path.join(self.plan.root, folder), fd)
        temporary = temporary_name(base, self.pid)
        self.pending.append((fd, temporary, base, False, mode == "replace"))
        return fd, temporary

    def publish(self) -> None:
        """Move every temporary into place (folders after the files inside them are done)."""
        for dir_fd, temporary, final, is_folder, replaces in self.pending:
            if is_folder or replaces:
                os.replace(temporary, final, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            else:
                os.rename(temporary, final, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        self.pending.clear()

    def discard(self) -> None:
        """Remove everything this run wrote."""
        for dir_fd, temporary, _, is_folder, _ in reversed(self.pending):
            try:
                if is_folder:
                    import shutil

                    shutil.rmtree(temporary, dir_fd=dir_fd, ignore_errors=True)
                else:
                    os.unlink(temporary, dir_fd=dir_fd)
            except OSError:
                pass
        self.pending.clear()
        for folder in reversed(self.made_ancestors):
            try:
                os.rmdir(folder)
            except OSError:
                break

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds.clear()
        _restore_fd_limit(self.limits)
        self.limits = None


def _raise_fd_limit(needed: int) -> tuple[int, int] | None:
    """Every folder stays open while files are written into it: allow that many descriptors.
    Returns the limits to restore afterwards, or None when they were not changed."""
    try:
        if needed + 64 <= os.sysconf("SC_OPEN_MAX"):  # the soft limit, without importing `resource`
            return None
        import resource
    except (ImportError, ValueError, OSError):
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or needed + 64 <= soft:
        return None
    wanted = needed + 256 if hard == resource.RLIM_INFINITY else min(hard, needed + 256)
    try:  # noqa: SIM105 - contextlib costs start-up time
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    except (ValueError, OSError):
        pass  # checked just below
    if needed + 16 > resource.getrlimit(resource.RLIMIT_NOFILE)[0]:
        raise GamepakError(f"extraction needs {needed} folders open at once; the system allows {hard} open files")
    return soft, hard


def _restore_fd_limit(limits: tuple[int, int] | None) -> None:
    if limits is not None:
        import resource

        try:  # noqa: SIM105 - contextlib costs start-up time
            resource.setrlimit(resource.RLIMIT_NOFILE, limits)
        except (ValueError, OSError):
            pass  # the raised limit stays: harmless


def extract_members(
    archive: Archive,
    entries: list[Entry],
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    manifest: bool = False,
    progress: Callable[[Entry], Any] | None = None,
    windows_names: bool | None = None,
) -> list[str]:
    """Extract `entries` of `archive` under `path` safely; returns the files written.
    `windows_names` (default: on Windows and macOS) refuses, before anything is written, names a
    Windows file system cannot hold and names that differ only in case."""
    entries = list(dict.fromkeys(entries))  # the same entry twice is one file
    root = os.path.realpath(path)
    if manifest and len(entries) != len(archive):
        raise GamepakError("a manifest describes the whole archive: extract every member with it")
    keys = _target_keys(archive, entries)
    names = [entry.name for entry in entries]
    if windows_names or (windows_names is None and sys.platform.startswith(("win", "darwin"))):
        check_windows_names(names, keys)
    if manifest:
        keys.append(MANIFEST_NAME)
        names.append(MANIFEST_NAME)
    plan = _Plan(root, keys, names, overwrite)
    if manifest:
        keys.pop()
    archive._check_data(entries)
    if not has_folder_descriptors():
        encoded = manifest_bytes(archive, entries, [key.split("/") for key in keys]) if manifest else None
        return _extract_by_path(archive, entries, keys, plan, encoded, progress)

    def fill(writer: _Writer) -> None:
        _write_members(archive, entries, writer.file_slots(keys, plan.modes), progress)
        if manifest:
            folder_fd, create_name = writer.file_slot(MANIFEST_NAME, plan.modes[-1])
            encoded = manifest_bytes(archive, entries, [key.split("/") for key in keys])
            write_file(folder_fd, create_name, MANIFEST_NAME, lambda fd: write_all(fd, encoded))

    _write_plan(plan, "extract", fill)
    prefix = root + os.sep
    if os.sep != "/":
        return [prefix + key.replace("/", os.sep) for key in keys]
    return [prefix + key for key in keys]


def _extract_by_path(
    archive: Archive,
    entries: list[Entry],
    keys: list[str],
    plan: _Plan,
    manifest: bytes | None,
    progress: Callable[[Entry], Any] | None,
) -> list[str]:
    """The same plan written by path, where folder descriptors are missing (Windows); see
    `_PathTree` for how the guarantees stay."""
    import shutil

    tree = _PathTree(plan)
    modes = plan.modes or [None] * len(keys)
    try:
        tree.start()
        for position, entry in enumerate(entries):
            with archive.open(entry) as stream:

                def copy(handle: Any, stream: Any = stream) -> None:
                    shutil.copyfileobj(stream, handle, 1 << 20)

                tree.write(keys[position], modes[position], copy)
            if progress is not None:
                progress(entry)
        if manifest is not None:
            mode = modes[len(entries)] if len(modes) > len(entries) else None
            tree.write(MANIFEST_NAME, mode, lambda handle: handle.write(manifest))
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        raise GamepakError(f"{plan.root}: cannot extract there: {exc.strerror or exc}{where}") from exc
    if manifest is not None:
        keys = [*keys, MANIFEST_NAME]
    return [os.path.join(plan.root, *key.split("/")) for key in keys]


class _PathTree:
    """A plan written by path, where folder descriptors are missing (Windows). The guarantees
    stay: every name was checked by the plan (no `..`, no absolute or drive paths); each folder
    on the way is checked with `lstat` to be a real folder, not a link or junction, before
    anything is created in it; each file is written under a temporary name and renamed into
    place, and existing files are replaced only where the plan allows it."""

    def __init__(self, plan: _Plan) -> None:
        self.plan = plan
        self.created_root = not os.path.isdir(plan.root)

    def start(self) -> None:
        if self.created_root:
            os.makedirs(self.plan.root)
        self.real_folder(self.plan.root)

    def real_folder(self, path: str) -> None:
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            os.mkdir(path)
            return
        reparse = getattr(info, "st_file_attributes", 0) & 0x400  # FILE_ATTRIBUTE_REPARSE_POINT
        if stat.S_ISLNK(info.st_mode) or reparse:
            raise UnsafePathError(path, "a link on the way out of the destination")
        if not stat.S_ISDIR(info.st_mode):
            raise GamepakError(f"{path}: a file is in the way of a folder members need")

    def write(self, key: str, mode: str | None, fill: Callable[[Any], object]) -> None:
        from ..core.portable import replace

        parts = key.split("/")
        folder = self.plan.root
        for part in parts[:-1]:
            folder = os.path.join(folder, part)
            self.real_folder(folder)
        final = os.path.join(folder, parts[-1])
        if mode is None and os.path.lexists(final):
            raise OutputExistsError(final)
        temporary = os.path.join(folder, temporary_name(parts[-1]))
        with open(temporary, "xb") as handle:
            fill(handle)
        if mode is None:
            os.rename(temporary, final)
        else:
            replace(temporary, final)


def write_files(
    path: str | os.PathLike[str],
    files: list[tuple[str, bytes]],
    *,
    overwrite: bool = False,
    windows_names: bool | None = None,
) -> list[str]:
    """Write `files` (`/`-separated name, bytes) under `path` the way members are extracted:
    names checked as member names are, no folder on the way may be a link, existing files
    refused unless `overwrite`, and (with folder descriptors) the whole set appearing at once or
    not at all. For what gamepak makes from members: texture images, converted models.
    Returns the files written."""
    root = os.path.realpath(path)
    names = [name for name, _ in files]
    keys = [_plain_key(name) for name in names]
    if len(set(keys)) != len(keys):
        seen: set[str] = set()
        twice = sorted({key for key in keys if key in seen or seen.add(key)})  # type: ignore[func-returns-value]
        raise GamepakError(f"{root}: two outputs would be written as {', '.join(twice[:5])}")
    if windows_names or (windows_names is None and sys.platform.startswith(("win", "darwin"))):
        check_windows_names(names, keys)
    plan = _Plan(root, keys, names, overwrite)
    modes = plan.modes or [None] * len(keys)
    if not has_folder_descriptors():
        tree = _PathTree(plan)
        try:
            tree.start()
            for key, mode, (_, data) in zip(keys, modes, files, strict=True):

                def fill_handle(handle: Any, data: bytes = data) -> None:
                    handle.write(data)

                tree.write(key, mode, fill_handle)
        except OSError as exc:
            raise GamepakError(f"{root}: cannot write there: {exc.strerror or exc}") from exc
        return [os.path.join(root, *key.split("/")) for key in keys]

    def fill(writer: _Writer) -> None:
        for (folder_fd, create_name), key, (_, data) in zip(writer.file_slots(keys, modes), keys, files, strict=True):

            def fill_fd(fd: int, data: bytes = data) -> None:
                write_all(fd, data)

            write_file(folder_fd, create_name, key, fill_fd)

    _write_plan(plan, "write", fill)
    return [os.path.join(root, *key.split("/")) for key in keys]


def _write_plan(plan: _Plan, verb: str, fill: Callable[[_Writer], None]) -> None:
    """Make the plan's folders, let `fill` write the files into their slots and publish it
    all; on any failure remove everything written. An OSError becomes a GamepakError naming
    the destination (relative to a folder descriptor, the error's file name alone would not
    say where)."""
    writer = _Writer(plan)
    try:
        writer.make_folders()
        fill(writer)
        writer.publish()
    except OSError as exc:
        writer.discard()
        where = f" ({exc.filename})" if exc.filename else ""
        raise GamepakError(f"{plan.root}: cannot {verb} there: {exc.strerror or exc}{where}") from exc
    except BaseException:
        writer.discard()
        raise
    finally:
        writer.close()


def _write_members(
    archive: Archive,
    entries: list[Entry],
    slots: list[tuple[int, str]],
    progress: Callable[[Entry], Any] | None,
) -> None:
    """Write every member into its slot: decoded ones here, plain byte ranges split by bytes
    over the workers."""
    jobs: list[tuple[int, str, int, int, int]] = []  # folder fd, name, offset, size, position
    if archive._plain_ranges():
        # Plain ranges, all checked against the file size by _check_data: no generator needed.
        jobs = [
            (dir_fd, name, entry.offset, entry.size, position)
            for position, ((dir_fd, name), entry) in enumerate(zip(slots, entries, strict=True))
        ]
    else:
        slot_of = {id(entry): position for position, entry in enumerate(entries)}
        for entry, data in archive._member_data(entries):
            position = slot_of[id(entry)]
            dir_fd, name = slots[position]
            if isinstance(data, RawRange):
                jobs.append((dir_fd, name, data.offset, data.size, position))
                continue
            write_file(dir_fd, name, entry.name, chunk_writer(data))
            if progress is not None:
                progress(entry)
    if jobs:
        copy_members(archive, entries, jobs, progress)
