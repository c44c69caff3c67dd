"""`gamepak mount` and `gamepak unmount`: packs as a read-only FUSE filesystem."""

from __future__ import annotations

import argparse
import os

from .common import add_command, add_format_option, note, open_input, summary


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    mount = add_command(
        commands,
        "mount",
        run_mount,
        "Mount packs read-only as folders (FUSE).",
        "Mount ARCHIVE read-only at MOUNTPOINT (an existing folder): its members as files and\n"
        "folders, members that are packs as folders (OUTER/INNER/...), sizes and times from the pack.\n\n"
        "Several archives are shown as one folder each, named after the archive. Runs in the\n"
        "foreground until Ctrl-C, SIGTERM, `gamepak unmount MOUNTPOINT` or `fusermount3 -u\n"
        "MOUNTPOINT`; --background returns once the mount is up. Needs libfuse 3 (the `fuse3`\n"
        "package) and /dev/fuse; without them it says what to install and exits with status 1.",
    )
    mount.add_argument("paths", nargs="+", metavar="ARCHIVE... MOUNTPOINT")
    mount.add_argument(
        "--background", action="store_true", help="return once the mount is up and serve it from a background process"
    )
    mount.add_argument(
        "--no-nested", dest="no_nested", action="store_true", help="show members that are packs as files"
    )
    mount.add_argument(
        "--debug", action="store_true", help="print every FUSE request (libfuse's debug output); implies foreground"
    )
    add_format_option(mount)

    unmount = add_command(
        commands,
        "unmount",
        run_unmount,
        "Unmount a folder mounted with 'gamepak mount'.",
        "Unmount a pack mounted with `gamepak mount` (the same as `fusermount3 -u MOUNTPOINT`).",
    )
    unmount.add_argument("mountpoint", metavar="MOUNTPOINT")


def run_mount(args: argparse.Namespace) -> int | None:
    from ..errors import GamepakError, UsageError
    from ..fs.fuse import load_fuse, mount
    from ..fs.tree import PackTree

    if len(args.paths) < 2:
        raise UsageError("give one or more archives, then the mount point")
    *archive_paths, mountpoint = args.paths
    if not os.path.isdir(mountpoint):
        raise GamepakError(f"{mountpoint}: the mount point is not an existing folder")
    if os.path.ismount(mountpoint):
        raise GamepakError(f"{mountpoint}: something is already mounted there")
    archives = []
    try:
        # The inputs first: a missing pack is the user's to fix whatever this machine lacks.
        for path in archive_paths:
            archives.append(open_input(path, args.format_name))
        load_fuse()  # FuseUnavailableError (a MissingDependencyError) names what to install
        packs = [
            (os.path.basename(path), archive, os.stat(path).st_mtime)
            for path, archive in zip(archive_paths, archives, strict=True)
        ]
        tree = PackTree(packs, nested=not args.no_nested)
        # Read every pack's folders now, so that listings are fast and problems show before
        # the mount appears.
        tree.prepare()
        for problem in tree.problems:
            note(f"warning: {problem}")
        if not args.background:
            summary(f"{mountpoint}: mounted; Ctrl-C or 'gamepak unmount {mountpoint}' unmounts it")
        mount(tree, mountpoint, foreground=not args.background or args.debug, debug=args.debug)
        tree.close()
    finally:
        for archive in archives:
            archive.close()
    return None


def run_unmount(args: argparse.Namespace) -> None:
    from ..fs.fuse import unmount

    unmount(args.mountpoint)
    summary(f"{args.mountpoint}: unmounted")
