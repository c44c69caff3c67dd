"""`gamepak mount` and `gamepak unmount`: packs as a read-only FUSE filesystem."""

from __future__ import annotations

import os

import click

from ..errors import GamepakError
from .app import note, open_for, reader_format_option


@click.command("mount")
@click.argument("paths", nargs=-1, required=True, metavar="ARCHIVE... MOUNTPOINT")
@click.option("--background", is_flag=True, help="Return once the mount is up and serve it from a background process.")
@click.option("--no-nested", "no_nested", is_flag=True, help="Show members that are packs as files instead of folders.")
@click.option("--debug", is_flag=True, help="Print every FUSE request (libfuse's debug output); implies foreground.")
@reader_format_option
@click.pass_context
def mount_command(ctx: click.Context, paths: tuple[str, ...], background: bool, no_nested: bool, debug: bool) -> None:
    """Mount ARCHIVE read-only at MOUNTPOINT (an existing folder): its members as files and
    folders, members that are packs as folders (OUTER/INNER/...), sizes and times from the pack.

    Several archives are shown as one folder each, named after the archive. Runs in the
    foreground until Ctrl-C, SIGTERM, `gamepak unmount MOUNTPOINT` or `fusermount3 -u
    MOUNTPOINT`; --background returns once the mount is up. Needs libfuse 3 (the `fuse3`
    package) and /dev/fuse; without them it says what to install and exits with status 2.
    """
    from ..fs.fuse import FuseUnavailableError, load_fuse, mount
    from ..fs.tree import PackTree

    if len(paths) < 2:
        raise click.UsageError("give one or more archives, then the mount point")
    *archive_paths, mountpoint = paths
    if not os.path.isdir(mountpoint):
        raise click.BadParameter(f"{mountpoint}: not an existing folder", param_hint="MOUNTPOINT")
    if os.path.ismount(mountpoint):
        raise GamepakError(f"{mountpoint}: something is already mounted there")
    try:
        load_fuse()
    except FuseUnavailableError as exc:
        note(f"error: {exc}")
        raise SystemExit(2) from None
    archives = []
    try:
        for path in archive_paths:
            archives.append(open_for(ctx, path))
        packs = [
            (os.path.basename(path), archive, os.stat(path).st_mtime) for path, archive in zip(archive_paths, archives)
        ]
        tree = PackTree(packs, nested=not no_nested)
        # Read every pack's folders now, so that listings are fast and problems show before
        # the mount appears.
        tree.prepare()
        for problem in tree.problems:
            note(f"warning: {problem}")
        if not background:
            note(f"{mountpoint}: mounted; Ctrl-C or 'gamepak unmount {mountpoint}' unmounts it")
        mount(tree, mountpoint, foreground=not background or debug, debug=debug)
        tree.close()
    finally:
        for archive in archives:
            archive.close()


@click.command("unmount")
@click.argument("mountpoint", type=click.Path(file_okay=False))
def unmount_command(mountpoint: str) -> None:
    """Unmount a pack mounted with `gamepak mount` (the same as `fusermount3 -u MOUNTPOINT`)."""
    from ..fs.fuse import unmount

    unmount(mountpoint)
