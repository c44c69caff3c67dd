"""Commands that move members between packs and folders: `extract` and `create`."""

from __future__ import annotations

import argparse
import os

from .common import (
    PROGRESS_MEMBERS,
    add_command,
    add_format_option,
    add_json_option,
    add_writer_options,
    count,
    note,
    open_input,
    output_folder,
    parse_options,
    progress_bar,
    select_members,
    summary,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    extract = add_command(
        commands,
        "extract",
        run_extract,
        "Extract members (all, names, globs or OUTER/INNER paths) safely into a folder.",
        "Extract ARCHIVE's members (all, or those named by MEMBERS: names, globs or OUTER/INNER\n"
        "paths into nested archives) safely into a folder.\n\n"
        "Names that would land outside the folder (.., absolute paths, drive letters, symlinks) are\n"
        "refused before anything is written; existing files are kept unless --overwrite is given.\n"
        "A copy of a duplicated name that the game would not load is written as NAME.dupN.",
    )
    extract.add_argument("archive", metavar="ARCHIVE")
    extract.add_argument("members", nargs="*", metavar="MEMBERS")
    extract.add_argument(
        "-o", "--output", default=".", help="folder to extract into, created if missing (default: %(default)s)"
    )
    extract.add_argument("--overwrite", action="store_true", help="replace files that already exist")
    extract.add_argument(
        "--manifest",
        action="store_true",
        help="also write .gamepak-manifest.json so that 'gamepak create' rebuilds the archive byte for byte",
    )
    extract.add_argument(
        "--windows-names",
        action="store_true",
        default=None,
        help="refuse names Windows cannot hold (CON, 'a:b', trailing dots...) and names that differ only "
        "in case (on by itself on Windows and macOS)",
    )
    add_format_option(extract)
    add_json_option(extract, "what was written where: {file, output, members, size, written: [{name, path, size}]}")

    create = add_command(
        commands,
        "create",
        run_create,
        "Create a pack from files and folders (or rebuild one from an extracted folder).",
        "Create OUT from INPUTS: files (stored under their own names, or SRC=NAME) and folders\n"
        "(their files stored with names relative to the folder, in sorted order; FOLDER=PREFIX\n"
        "stores them under PREFIX/).\n\n"
        "A folder extracted with --manifest is rebuilt exactly: member order and layout come from\n"
        "the manifest, and an unchanged folder gives back the original archive byte for byte. Files\n"
        "added to it are appended and members whose file is gone are left out (both are listed);\n"
        "'gamepak update ARCHIVE FOLDER' edits the original pack instead. The format comes from\n"
        "--format or OUT's extension; a manifest of another format gives member order and names only.\n\n"
        "Symlinks: a file link inside the folder is packed, one leaving it is refused, symlinked\n"
        "folders are skipped (--follow packs both). OUT itself and gamepak's temporary files are\n"
        "never packed. A model format (joe) is refused: use 'gamepak model import'.",
    )
    create.add_argument("out", metavar="OUT")
    create.add_argument("inputs", nargs="+", metavar="INPUTS")
    add_format_option(create, "nothing: the format to write (default: from OUT's extension, else the manifest's)")
    add_writer_options(create)
    create.add_argument("--name", dest="member_name", metavar="NAME", help="store a single file INPUT under NAME")
    create.add_argument(
        "--follow", action="store_true", help="follow symlinked folders, and symlinks that leave an INPUT folder"
    )
    create.add_argument(
        "--allow-duplicates", action="store_true", help="keep two members of one name (formats that can hold them)"
    )
    create.add_argument(
        "--asm",
        dest="asm_table",
        metavar="FILE",
        help="RFG: a separate .asm_pc file whose entries for the .str2_pc containers written are brought "
        "up to date too (a .asm_pc among the members always is); same as -O asm=FILE",
    )
    create.add_argument("--overwrite", action="store_true", help="replace OUT if it exists")


def run_extract(args: argparse.Namespace) -> None:
    from ..core.collector import collector_paused

    # No collection walks the 20,000 entries and copy jobs of a big pack while they are made
    # (two young collections, 4-8% of the work before the first file is written); the pause
    # ends once they are gone, so the collection it defers finds little to walk.
    with collector_paused():
        _extract(args)


def _extract(args: argparse.Namespace) -> None:
    if args.manifest and args.members:
        from ..errors import UsageError  # here: made on first use

        raise UsageError("--manifest describes the whole archive: give no MEMBERS with it")
    rows: list[dict[str, Any]] = []
    with open_input(args.archive, args.format_name) as opened:
        from ..ops.extract import distinct_entries, extract_tree, written_paths

        extracted = 0
        # Every member: None, so that a pack whose directory gives columns is extracted from
        # them without an entry per member (ops.extract).
        groups = select_members(opened, args.members) if args.members else [(opened, None, "")]
        done: set[tuple[str, int]] = set()  # (folder prefix, member index) already extracted
        for holder, entries, prefix in groups:
            if entries is not None:
                # A member that two patterns name is extracted once (`extract P a a`, `'*.txt' a.txt`).
                entries = [entry for entry in distinct_entries(entries) if (prefix, entry.index) not in done]
                if not entries:
                    continue
                done.update((prefix, entry.index) for entry in entries)
            destination = os.path.join(args.output, prefix) if prefix else args.output
            with progress_bar(*_workload(holder, entries), "extracting") as advance:
                # `extractall` without its list of paths, made only for --json (20,000 of them
                # for a big pack, to be counted).
                root, written = extract_tree(
                    holder,
                    entries,
                    destination,
                    overwrite=args.overwrite,
                    manifest=args.manifest and holder is opened,
                    progress=advance,
                    windows_names=args.windows_names,
                )
            extracted += len(written)
            if args.as_json:
                # Each entry is written once, in order: one path per distinct entry.
                every = holder.infolist() if entries is None else entries
                for entry, path in zip(every, written_paths(root, written), strict=True):
                    rows.append({"name": prefix + entry.name, "path": path, "size": entry.size})
    if args.as_json:
        from .json_output import print_json

        print_json(
            {
                "file": args.archive,
                "output": args.output,
                "members": len(rows),
                "size": sum(row["size"] for row in rows),
                "written": rows,
            }
        )
    summary(f"extracted {count(extracted, 'member')} to {args.output}")
    if not extracted and opened.contents_hint:
        note(f"{args.archive} holds no members: {opened.contents_hint}")
    from . import common

    common.QUICK_EXIT = True  # every pack and file it opened is closed


def _workload(holder: Any, entries: list[Any] | None) -> tuple[int, int]:
    """(members, bytes) of an extraction, for its progress bar; the bytes are summed only where
    the count alone does not already call for the bar."""
    if entries is not None:
        return len(entries), sum(entry.size for entry in entries)
    count = len(holder)
    return count, 0 if count >= PROGRESS_MEMBERS else sum(entry.size for entry in holder.infolist())


def run_create(args: argparse.Namespace) -> None:
    from stat import S_ISREG

    from ..core.registry import get_format
    from ..errors import GamepakError, cannot_read, irregular_kind
    from ..ops.inputs import plan_create, split_input

    out, inputs = args.out, args.inputs
    for item in inputs:
        split_input(item)  # a missing input (exit 1) or an empty NAME after '=' (exit 2), before any work
    if args.member_name is not None and (
        len(inputs) != 1 or os.path.isdir(inputs[0]) or not os.path.lexists(inputs[0])
    ):
        from ..errors import UsageError

        raise UsageError("--name names a single file INPUT; for several, write each as SRC=NAME")
    if args.asm_table is not None and not os.path.isfile(args.asm_table):
        raise GamepakError(f"{args.asm_table}: no such file (--asm)")
    plan = plan_create(
        out,
        inputs,
        format=args.format_name,
        options=parse_options(args.options),
        follow=args.follow,
        name=args.member_name,
    )
    sizes = []
    for _, path in plan.members:
        try:
            info = os.stat(path)
        except OSError as exc:  # an INPUT that is a dangling link: it exists, but cannot be read
            raise cannot_read(path, exc) from exc
        # A FIFO, device or socket given as an INPUT (a folder's are skipped): refused in the
        # one line of any unreadable input, not listed among the members the format refuses.
        if not S_ISREG(info.st_mode):
            raise cannot_read(path, irregular_kind(info.st_mode))
        sizes.append(info.st_size)
    for line in plan.notes:
        note(line)
    output_folder(out)
    if args.asm_table is not None:
        plan.options["asm"] = args.asm_table
    # `gamepak.create` without its checks of the format, which the plan made (and without
    # `core.opening`, whose module is a fortieth of a small create's time).
    writer = get_format(plan.format_name).writer_class()(
        out,
        overwrite=args.overwrite,
        allow_duplicates=args.allow_duplicates or plan.allow_duplicates,
        **plan.options,
    )
    refused = []
    for name, path in plan.members:
        try:
            writer.add(name, path)
        except GamepakError as exc:
            refused.append(str(exc))
    if refused:
        writer.abort()
        more = f"\n  ... and {len(refused) - 20} more" if len(refused) > 20 else ""
        raise GamepakError(
            f"{out}: {count(len(refused), 'member')} cannot go into a {writer.format_name} "
            "pack; nothing was written:\n  " + "\n  ".join(refused[:20]) + more
        )
    with writer, progress_bar(len(sizes), sum(sizes), "writing") as advance:
        writer.progress = advance
    summary(f"wrote {out} ({count(len(plan.members), 'member')}, {writer.format_name})")
