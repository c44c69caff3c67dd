"""What `create` packs: its inputs (files, folders, folders extracted with a manifest), and the
files of a folder as `create` and `diff` see them.

A folder's files become members named by their path relative to the folder ('/' between
folders), in sorted order. What is left out is said, never silently dropped:
- a symlinked folder is skipped (followed with `follow`);
- a file symlink is packed when its target is inside the folder; one whose target leaves the
  folder is refused (packed with `follow`), a broken one is refused;
- gamepak's own temporary files (`.NAME.gamepak-PID-N.tmp`), the manifest, the files in
  `exclude` (the output being written) and anything that is not a regular file are skipped.
"""

from __future__ import annotations

import os
import stat

from ..core.atomic import is_temporary_name
from ..core.portable import file_identity, same_file
from ..errors import GamepakError, cannot_read  # the rarely raised ones where they are raised: made on first use
from . import MANIFEST_NAME

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class FolderScan:
    """What `scan_folder` found: members as (name, path), and a sentence per skipped file."""

    def __init__(self) -> None:
        self.members: list[tuple[str, str]] = []
        self.skipped: list[str] = []


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def scan_folder(folder: str, *, follow: bool = False, exclude: tuple[str, ...] = ()) -> FolderScan:
    """The members a folder gives (see the module's docstring). Raises GamepakError naming
    every symlink that leaves the folder (without `follow`) or is broken."""
    scan = FolderScan()
    root = os.path.realpath(folder)
    # Compared as files (device, inode), not paths: a hard link to the output is the output.
    excluded = set()
    for path in exclude:
        try:
            excluded.add(file_identity(os.stat(path)))
        except OSError:
            continue  # not there (yet): nothing in the folder can be it
    refused: list[str] = []
    visited = {root}
    for current, folders, files in os.walk(folder, followlinks=follow):
        kept_folders = []
        for folder_name in sorted(folders):
            path = os.path.join(current, folder_name)
            relative = os.path.relpath(path, folder).replace(os.sep, "/")
            if os.path.islink(path):
                real = os.path.realpath(path)
                if not follow:
                    scan.skipped.append(f"{relative}/: a symlinked folder (--follow to include it)")
                    continue
                if real in visited or _inside(root, real):
                    scan.skipped.append(f"{relative}/: a symlink back into a folder already packed")
                    continue
                visited.add(real)
            kept_folders.append(folder_name)
        folders[:] = kept_folders
        # Per folder, not per file (a folder of thousands of files pays for it once).
        relative_folder = os.path.relpath(current, folder).replace(os.sep, "/")
        prefix = "" if relative_folder == "." else relative_folder + "/"
        for file_name in files:
            path = os.path.join(current, file_name)
            name = prefix + file_name
            if name == MANIFEST_NAME:
                continue
            if is_temporary_name(file_name):
                scan.skipped.append(f"{name}: a gamepak temporary file")
                continue
            try:
                info = os.lstat(path)
                link = stat.S_ISLNK(info.st_mode)
                if link and os.path.exists(path):
                    info = os.stat(path)  # what the link points to
            except OSError as exc:
                raise cannot_read(path, exc) from exc
            if file_identity(info) in excluded:
                scan.skipped.append(f"{name}: the output being written")
                continue
            if link:
                if stat.S_ISLNK(info.st_mode):
                    refused.append(f"{name}: a broken symlink")
                    continue
                real = os.path.realpath(path)
                if not follow and not _inside(real, root):
                    refused.append(f"{name}: a symlink to {real}, outside the folder (--follow to pack it anyway)")
                    continue
            if not stat.S_ISREG(info.st_mode):
                scan.skipped.append(f"{name}: not a regular file")
                continue
            scan.members.append((name, path))
    if refused:
        raise GamepakError(
            f"{folder}: refusing {len(refused)} symlink{'s' if len(refused) != 1 else ''}:\n  " + "\n  ".join(refused)
        )
    scan.members.sort(key=lambda item: item[0])
    return scan


def split_input(item: str) -> tuple[str, str | None]:
    """An INPUT as (path, stored name or None): `SRC=NAME` names what SRC is stored as (for a
    folder: the folder its files go under). A path that exists as written is never split."""
    if os.path.lexists(item):
        return item, None
    for cut in range(len(item) - 1, 0, -1):  # the longest existing SRC wins
        if item[cut] == "=" and os.path.lexists(item[:cut]):
            name = item[cut + 1 :].strip("/")
            if not name:
                from ..errors import UsageError  # rarely raised: made on first use

                raise UsageError(f"{item!r}: the name after '=' is empty")
            return item[:cut], name
    try:  # the reason it is not there (no such file, a path through a file, no permission)
        os.lstat(item)
    except OSError as exc:
        raise cannot_read(item, exc) from None
    return item, None  # (there after all: it appeared meanwhile)


class CreatePlan:
    """The members `create` will write, the format and options, and what to tell the user."""

    def __init__(self, format_name: str) -> None:
        self.format_name = format_name
        self.members: list[tuple[str, str]] = []  # (stored name, file path)
        self.options: dict[str, Any] = {}
        self.allow_duplicates = False
        self.notes: list[str] = []


def _listed(names: list[str], limit: int = 8) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def plan_create(
    out: str,
    inputs: list[str] | tuple[str, ...],
    *,
    format: str | None = None,
    options: dict[str, Any] | None = None,
    follow: bool = False,
    name: str | None = None,
) -> CreatePlan:
    """Work out what `gamepak create OUT INPUTS...` writes.

    The format is `format`, else OUT's extension's, else the manifest's. A folder with a
    manifest gives its members in the manifest's order and names, and, when the manifest is of
    the format written, its layout options (and its byte-exact layout while nothing was added,
    removed or renamed). Files added to such a folder are appended, members whose file is gone
    are left out, and a note says so; a manifest of another format gives its order and names
    only, and a note says what was ignored. `name` sets the stored name of a single file INPUT.
    OUT itself and gamepak's temporary files are never packed."""
    from ..core.registry import format_for_path, get_format

    user_options = dict(options or {})
    parsed = [split_input(item) for item in inputs]
    if name is not None:
        if len(parsed) != 1 or os.path.isdir(parsed[0][0]) or parsed[0][1] is not None:
            raise GamepakError("--name names a single file INPUT; for several, write each as SRC=NAME")
        parsed = [(parsed[0][0], name)]
    folders = [path for path, _ in parsed if os.path.isdir(path)]
    manifests: list[tuple[str, dict[str, Any] | None]] = []
    if any(os.path.exists(os.path.join(folder, MANIFEST_NAME)) for folder in folders):
        from .manifest import read_manifest  # only a folder holding a manifest needs the module

        manifests = [(path, read_manifest(path)) for path in folders]
    manifests = [(path, manifest) for path, manifest in manifests if manifest is not None]
    if len(manifests) > 1:
        raise GamepakError(f"{manifests[1][0]}: only one INPUT may be a folder with a manifest")
    manifest_folder, manifest = manifests[0] if manifests else (None, None)

    spec = get_format(format) if format else format_for_path(out)
    if spec is None and manifest is not None:
        spec = get_format(manifest["format"])
    if spec is None:
        from ..errors import UnnamedFormatError  # rarely raised: made on first use

        raise UnnamedFormatError(f"{out}: cannot tell the format from the name; name one with --format")
    if spec.kind == "model":
        from ..errors import NotAnArchiveError  # rarely raised: made on first use

        raise NotAnArchiveError(
            f"{out}: a {spec.description} is a single model, not an archive of members; "
            "make one with 'gamepak model import MODEL OUT.joe'"
        )
    plan = CreatePlan(spec.name)
    added: list[str] = []
    folder_changed = False
    for path, stored in parsed:
        if os.path.isdir(path):
            scan = scan_folder(path, follow=follow, exclude=(out,))
            plan.notes += [f"skipped {os.path.join(path, '')}{line}" for line in scan.skipped]
            if path == manifest_folder:
                assert manifest is not None
                members, folder_changed = _manifest_members(plan, path, manifest, scan)
                plan.members += members
                continue
            prefix = f"{stored}/" if stored else ""
            members = [(prefix + member_name, file_path) for member_name, file_path in scan.members]
        else:
            if same_file(path, out):
                raise GamepakError(f"{path}: is OUT itself; OUT cannot also be an INPUT")
            members = [(stored or os.path.basename(path), path)]
        plan.members += members
        if manifest is not None:
            added += [member_name for member_name, _ in members]
    if added:
        plan.notes.append(
            f"added {len(added)} file{'s' if len(added) != 1 else ''} not in the manifest (at the end): "
            + _listed(added)
        )
    if manifest is None:
        plan.options = user_options
        return plan

    unchanged = not added and not folder_changed
    if manifest["format"] == spec.name:
        plan.options = {**manifest.get("options", {}), **user_options}
        if unchanged and not user_options:
            plan.options["layout"] = manifest.get("exact", {})
        elif not unchanged:
            plan.notes.append(
                "kept the manifest's layout options; the byte-exact layout applies only to the original members "
                f"(to edit the pack itself: gamepak update ARCHIVE {manifest_folder})"
            )
    else:
        plan.options = user_options
        ignored = ", ".join(f"{key}={value}" for key, value in manifest.get("options", {}).items() if value is not None)
        plan.notes.append(
            f"the manifest describes a {manifest['format']} pack; writing {spec.name}: kept its member order and "
            f"names, ignored its layout ({ignored or 'no options'} and the byte-exact layout)"
        )
    names = [member_name for member_name, _ in plan.members]
    plan.allow_duplicates = len(set(names)) != len(names) and len(
        {member["name"] for member in manifest["members"]}
    ) != len(manifest["members"])
    return plan


def _manifest_members(
    plan: CreatePlan, folder: str, manifest: dict[str, Any], scan: FolderScan
) -> tuple[list[tuple[str, str]], bool]:
    """The manifest's members whose files exist, in its order, then the folder's new files;
    and whether the folder differs from its manifest."""
    present = dict(scan.members)
    members = []
    gone = []
    described = set()
    for member in manifest["members"]:
        described.add(member["path"])
        if member["path"] in present:
            members.append((member["name"], present[member["path"]]))
        else:
            gone.append(member["path"])
    new = [(relative, path) for relative, path in scan.members if relative not in described]
    if gone:
        plan.notes.append(
            f"left out {len(gone)} member{'s' if len(gone) != 1 else ''} whose file is gone from {folder}: "
            + _listed(gone)
        )
    if new:
        plan.notes.append(
            f"added {len(new)} file{'s' if len(new) != 1 else ''} not in the manifest (at the end): "
            f"{_listed([relative for relative, _ in new])}"
        )
    return members + new, bool(gone or new)
