"""Writing a planned tree of files safely under a destination folder, all at once or not at all:
the machinery behind extraction (`ops.extract`) and what gamepak makes from members
(`ops.made_files`: texture images, tables, sprites).

1. Plan, writing nothing (`Plan`): every name is turned into a path under the destination or
   refused (`UnsafePathError`): no `..` parts, no absolute paths or drive letters, no NUL bytes,
   `\\` counts as a separator, no part longer than the file system allows, and no folder on the
   way may be a symlink. Targets that exist are refused unless `overwrite` is given. A refused
   plan leaves no trace.
2. Write, atomically as a whole (`write_plan`, `TreeWriter`): what did not exist yet is built
   under temporary names (`.NAME.gamepak-PID-N.tmp`): a new destination folder, each new folder
   inside an existing one, and in each existing folder one staging folder holding its new
   files and the files replacing others with `overwrite`. Folders are made once and opened with
   `O_DIRECTORY|O_NOFOLLOW`; files are created relative to their folder (`O_EXCL|O_NOFOLLOW`,
   `ops.copier.write_file`).
3. Publish: only when every file was written are the temporaries renamed into place (one
   rename for a fresh destination, one per file moved out of a staging folder). A failure
   removes everything written; a killed run leaves only temporaries, which the next command
   writing in that folder removes.

Where folder descriptors are missing (Windows), `PathTree` writes the same plan by path: the
same checks, each folder on the way checked with `lstat`, each file written under a temporary
name and renamed into place, but each file on its own, not the whole set at once.
"""

from __future__ import annotations

import os
import stat
from itertools import repeat

from ..core.atomic import remove_stale_temporaries, temporary_name
from ..core.portable import flag
from ..core.stored_names import NAME_MAX, safe_parts
from ..errors import GamepakError, OutputExistsError, UnsafePathError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

_FOLDER = os.O_RDONLY | flag("O_CLOEXEC") | flag("O_DIRECTORY") | flag("O_NOFOLLOW")
# Folder states in a plan.
_EXISTS, _NEW_ROOT, _NEW = 0, 1, 2


def all_plain(names: list[str]) -> bool:
    """Whether every name is already its own key (`a/b/c.ext`: ASCII, short parts, nothing to
    normalise or refuse), checked with a few scans of all names joined: no step per name."""
    if not names:
        return True
    # Every name between slashes, in one string: an empty part anywhere (an empty name, a
    # leading, trailing or doubled '/') shows as "//", found in one scan (one per pair of
    # characters took 40% longer); a NUL is looked for, not used as the names' separator
    # (joining on NULs, counting them and replacing them took 6 M instructions more of
    # 20,000 names).
    bounded = "/" + "/".join(names) + "/"
    if not bounded.isascii() or "\0" in bounded or "\\" in bounded or ":" in bounded:
        return False
    if max(map(len, names)) > NAME_MAX:
        return False
    return "//" not in bounded and "/./" not in bounded and "/../" not in bounded


def plain_key(name: str) -> str:
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


class Plan:
    """Where each file goes and what exists already; built without writing anything.
    Paths are `/`-joined strings relative to the root ("" is the root)."""

    def __init__(self, root: str, keys: Sequence[str], names: Sequence[str], overwrite: bool) -> None:
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
        if not self.root_exists and self._all_new(keys):
            return
        # First without a set of every file (~90 bytes a file), which only tells a member in
        # the way of a folder. The folders planned hold none of the files when no member is,
        # and then this plan is the one the set would have made; else, or on any error (the
        # set may have found another one first), the plan is made again with the set, which
        # refuses what it refused. Planning only looks (lstat): making it again changes nothing.
        try:
            self._targets(keys, names, set())
        except (GamepakError, OSError):
            pass
        else:
            if folders.keys().isdisjoint(keys):
                return
        self.folders = {"": folders[""]}
        self.modes = []
        self._targets(keys, names, set(keys))

    def _targets(self, keys: Sequence[str], names: Sequence[str], files: set[str]) -> None:
        """Plan each member's file in a destination that exists, member by member; `files`
        (every file, or none) tells a file in the way of a folder."""
        folders = self.folders
        modes = self.modes
        for key, name in zip(keys, names, strict=True):
            folder = key.rpartition("/")[0]
            state = folders.get(folder)
            if state is None:
                state = self._folder(folder, name, files)
            if key in folders:
                raise GamepakError(f"member {name!r} is in the way of a folder other members need")
            modes.append(None if state != _EXISTS else self._existing_target(key, name))

    def _all_new(self, keys: Sequence[str]) -> bool:
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
        if not needed.isdisjoint(keys):  # a file where a folder goes (keys iterated: no set of them)
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


class TreeWriter:
    """Builds the planned tree under temporary names and publishes it, or removes it all."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.pid = os.getpid()
        self.fds: list[int] = []
        self.folder_fds: dict[str, int] = {}
        # New folders under temporary names: (parent fd, temporary name, final name).
        self.pending: list[tuple[int, str, str]] = []
        # The files going into a folder that exists are written into one temporary folder
        # inside it (its staging folder), and moved out of it when everything is written:
        # per file nothing is held (a list of each file's temporary name held ~190 bytes a
        # file, most of an export of a million tiny files). Folder fd -> its staging folder's
        # fd; (folder fd, staging folder's name, its fd) in the order they were made.
        self.staging: dict[int, int] = {}
        self.staged: list[tuple[int, str, int]] = []
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
        # Each folder open, and a staging folder in each that exists (none in a new destination).
        existing = sum(state == _EXISTS for state in plan.folders.values()) if plan.root_exists else 0
        self.limits = _raise_fd_limit(len(plan.folders) + existing + 64)
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
            self.pending.append((parent_fd, temporary, base))
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
                self.pending.append((parent_fd, temporary, base))
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
        """(folder fd, name to create) for one target: a file of a new folder goes straight
        into it, one of a folder that exists (new, or replacing a file) into its staging folder."""
        folder, _, base = key.rpartition("/")
        fd = self.folder_fds[folder]
        if mode is None:
            return fd, base
        staging = self.staging.get(fd)
        if staging is None:
            staging = self._staging_folder(folder, fd)
        return staging, base

    def _staging_folder(self, folder: str, fd: int) -> int:
        """Make the staging folder of the existing folder `folder` (open as `fd`), under a
        temporary name that the next run removes if this one is killed; its fd."""
        self._cleaned(os.path.join(self.plan.root, folder), fd)
        name = temporary_name("new-files", self.pid)
        os.mkdir(name, dir_fd=fd)
        self.staged.append((fd, name, -1))  # listed before it is opened: `discard` removes it
        staging = self._open_folder(name, fd)
        self.staged[-1] = (fd, name, staging)
        self.staging[fd] = staging
        return staging

    def publish(self) -> None:
        """Move every temporary into place: the new folders, then each staging folder's files
        (the folders' own files were written before they were renamed into place)."""
        for dir_fd, temporary, final in self.pending:
            os.replace(temporary, final, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        self.pending.clear()
        for folder_fd, name, staging in self.staged:
            # Renamed as they are read, never listed (a list of a million names would be the
            # peak): POSIX leaves open whether a pass sees every file when others are renamed
            # meanwhile, so the folder is read again while removing it says it is not empty.
            while True:
                moved = False
                with os.scandir(staging) as found:
                    for entry in found:
                        os.replace(entry.name, entry.name, src_dir_fd=staging, dst_dir_fd=folder_fd)
                        moved = True
                try:
                    os.rmdir(name, dir_fd=folder_fd)
                    break
                except OSError as exc:
                    import errno

                    if not moved or exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                        raise
        self.staged.clear()

    def discard(self) -> None:
        """Remove everything this run wrote."""
        import shutil

        for dir_fd, temporary, _ in reversed(self.pending):
            shutil.rmtree(temporary, dir_fd=dir_fd, ignore_errors=True)
        self.pending.clear()
        for folder_fd, name, _ in reversed(self.staged):
            shutil.rmtree(name, dir_fd=folder_fd, ignore_errors=True)
        self.staged.clear()
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


class PathTree:
    """A plan written by path, where folder descriptors are missing (Windows). The guarantees
    stay: every name was checked by the plan (no `..`, no absolute or drive paths); each folder
    on the way is checked with `lstat` to be a real folder, not a link or junction, before
    anything is created in it; each file is written under a temporary name and renamed into
    place, and existing files are replaced only where the plan allows it."""

    def __init__(self, plan: Plan) -> None:
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


def write_plan(plan: Plan, verb: str, fill: Callable[[TreeWriter], None]) -> None:
    """Make the plan's folders, let `fill` write the files into their slots and publish it
    all; on any failure remove everything written. An OSError becomes a GamepakError naming
    the destination (relative to a folder descriptor, the error's file name alone would not
    say where)."""
    writer = TreeWriter(plan)
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
