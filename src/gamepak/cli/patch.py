"""`gamepak patch`: make, info, check, apply and revert member-level patches (mods)."""

from __future__ import annotations

import os

from .common import (
    add_command,
    add_group,
    add_json_option,
    count,
    counting_bar,
    note,
    output_folder,
    summary,
    write_text,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

_DESCRIPTION = """\
Mods as small patches: the member-level changes between two packs or two game folders, in one
file that applies to any copy, combines with other patches, detects conflicts and reverts exactly.

  gamepak patch make data/ modded/data/ -o fix.gpatch --name "Fix" --author me
  gamepak patch check data/ fix.gpatch other.gpatch
  gamepak patch apply data/ fix.gpatch other.gpatch
  gamepak patch revert data/ other.gpatch      (take back one patch, keep the others)
  gamepak patch revert data/                   (back to the original bytes)

SyncFaction mods apply the same way: loose-archive folders, and modinfo.xml mods (a folder or
a zip; --choose NAME=OPTION picks a user input's option, else the first is used):
  gamepak patch info mod.zip
  gamepak patch apply game/ mod.zip --choose fov=110
"""


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    group = add_command(commands, "patch", None, "Make, check, apply and revert mod patches", description=_DESCRIPTION)
    sub = add_group(group, "patch_command")

    make = add_command(
        sub,
        "make",
        run_make,
        "Write the member-level changes from BASE to MODDED as a patch file.",
        description="Compare BASE and MODDED (two packs, or two folders: packs matched by relative "
        "path, other files as plain files) member by member, recursing into nested packs, and write "
        "the changes (add, remove, replace as a delta where smaller, rename) to PATCH.",
    )
    make.add_argument("base", metavar="BASE", help="the original pack or folder")
    make.add_argument("modded", metavar="MODDED", help="the modded pack or folder")
    make.add_argument("-o", "--output", required=True, metavar="PATCH", help="the patch file to write")
    make.add_argument("--name", help="the patch's name (default: the file's name)")
    make.add_argument("--author", help="who made it")
    make.add_argument("--description", help="what it does")
    make.add_argument("--patch-version", dest="patch_version", help="the patch's own version")
    make.add_argument("--game", help="the game it is for")
    make.add_argument("--link", action="append", default=[], metavar="URL", help="a web link (repeatable)")
    make.add_argument("--overwrite", action="store_true", help="replace PATCH if it exists")
    make.add_argument(
        "--as",
        dest="kind",
        choices=("gamepak", "pak", "syncfaction", "modinfo"),
        default="gamepak",
        help="what to write: a gamepak patch file (default); pak: a Quake override pakN.pak of the added and "
        "changed files (removals are reported: an override cannot delete); syncfaction: a SyncFaction "
        "loose-archive mod folder (data/<pack>.vpp_pc/ with .delete.json); modinfo: a SyncFaction modinfo.xml "
        "mod folder whose <Edit>s carry only the changed rows and fields of .xtbl tables (so mods merge), "
        "<Replace> for the rest",
    )

    info = add_command(
        sub,
        "info",
        run_info,
        "Show a patch file's metadata and operations, or a modinfo.xml mod's inputs and changes.",
    )
    info.add_argument("patch", metavar="PATCH", help="a patch file, or a modinfo.xml mod (folder or zip)")
    _add_choose_option(info)
    add_json_option(info)

    for name, handler, help_line in (
        ("check", run_check, "Say whether patches apply cleanly to TARGET (writes nothing; exit 1 if not)."),
        ("apply", run_apply, "Apply patches to TARGET in one pass (each pack rewritten once)."),
    ):
        command = add_command(
            sub,
            name,
            handler,
            help_line,
            description=f"{help_line}\n\nEach operation is checked first: the member holds the patch's "
            "base -> applied; it already holds the target -> skipped; anything else -> refused. Two "
            "patches changing one member differently conflict: exit 1, every conflict listed, nothing "
            "written, unless --later-wins (the patch given later on the command line wins).",
        )
        command.add_argument("target", metavar="TARGET", help="a pack, or a game folder")
        command.add_argument(
            "patches",
            metavar="PATCH",
            nargs="+",
            help="patch files, or SyncFaction mods (folders; modinfo.xml folders and zips), in order",
        )
        command.add_argument(
            "--later-wins",
            action="store_true",
            help="on a conflict, the patch given later wins instead of refusing",
        )
        _add_choose_option(command)
        command.add_argument(
            "--allow-large",
            action="store_true",
            help="let a mod's file or member grow past 16 times what it replaces plus 64 MiB, or a new one past "
            "256 MiB (the 4 GiB member limit stays); see README, Safety",
        )
        if name == "apply":
            command.add_argument("--dry-run", action="store_true", help="print the plan, write nothing")
        add_json_option(command, "the plan")

    revert = add_command(
        sub,
        "revert",
        run_revert,
        "Take back patches applied to TARGET: all of them, or only PATCH.",
        description="Take back what `gamepak patch apply` did, from the undo record beside TARGET "
        "(TARGET.gamepak-undo/): every patch, or only PATCH (a patch file or its name), keeping the "
        "others. A file no applied patch changes any more gets its original bytes back (sha256-equal) "
        "when nothing else changed it since; one another program changed is taken back member by "
        "member, with a warning naming it. An apply or revert interrupted by a kill is rolled back "
        "or finished first.",
    )
    revert.add_argument("target", metavar="TARGET", help="the pack or folder patches were applied to")
    revert.add_argument(
        "patch",
        metavar="PATCH",
        nargs="?",
        help="one patch to take back: a patch file, a mod folder or zip, or its name",
    )


def _add_choose_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--choose",
        action="append",
        default=[],
        metavar="NAME=OPTION",
        help="a modinfo.xml mod's user input NAME takes OPTION (repeatable; default: its first option)",
    )


def _choices(args: argparse.Namespace) -> dict[str, str]:
    from ..errors import UsageError

    choices: dict[str, str] = {}
    for text in args.choose:
        name, equals, option = text.partition("=")
        if not equals or not name.strip():
            raise UsageError(f"--choose {text!r}: expected NAME=OPTION")
        choices[name.strip()] = option
    return choices


def run_make(args: argparse.Namespace) -> int | None:
    from ..ops.patch import make

    output_folder(args.output)
    if args.kind != "gamepak":
        from ..ops.patch.export import export

        result = export(args.base, args.modded, args.output, args.kind, overwrite=args.overwrite)
        for sentence in result.not_expressed:
            note(f"warning: {sentence}")
        written = count(len(result.written), "member" if args.kind == "pak" else "file")
        summary(f"{args.output}: {written} ({args.kind})")
        return None

    metadata = {
        "name": args.name,
        "author": args.author,
        "description": args.description,
        "patch_version": args.patch_version,
        "game": args.game,
        "links": args.link,
    }
    operations = make(args.base, args.modded, args.output, overwrite=args.overwrite, **metadata)

    summary(f"{args.output}: {count(len(operations), 'operation')}, {count(os.path.getsize(args.output), 'byte')}")
    return None


def run_info(args: argparse.Namespace) -> int | None:
    from ..ops.patch import Patch
    from ..ops.patch.modinfo import LoadedMod, is_modinfo_mod

    if is_modinfo_mod(args.patch):
        with LoadedMod(args.patch) as mod:
            _print_modinfo(mod.info(_choices(args)), args.as_json)
        return None
    if args.choose:
        from ..errors import UsageError

        raise UsageError(f"{args.patch}: --choose applies to modinfo.xml mods; this is not one")
    from ..ops.patch.install import loose_mod_info

    loose = loose_mod_info(args.patch)
    if loose is not None:
        _print_loose_mod(loose, args.as_json)
        return None
    with Patch.open(args.patch) as patch:
        document = patch.info()
        if args.as_json:
            from .json_output import print_json

            print_json(document)
            return None
        lines = [
            f"{field}: {document[field]}"
            for field in ("name", "author", "description", "patch_version", "game")
            if document[field]
        ]
        lines += [f"link: {link}" for link in document["links"]]
        lines.append(f"format version: {document['version']}")
        lines.append(f"operations: {len(patch.operations)}")
        for operation, shown in zip(patch.operations, document["operations"], strict=True):
            lines.append(f"  {operation.describe()}")
            lines += [f"    {change}" for change in shown.get("zone_changes", ())]
        write_text("\n".join(lines) + "\n")
    return None


def _print_loose_mod(document: dict[str, Any], as_json: bool) -> None:
    if as_json:
        from .json_output import print_json

        print_json(document)
        return
    lines = [
        f"name: {document['name']}",
        "format: SyncFaction loose archives, whole files and .xdelta files",
        f"changes: {len(document['changes'])}",
    ]
    lines += [f"  {_change_line(change)}" for change in document["changes"]]
    lines += [
        f"data mode asked for {file}: {mode} (the pack keeps its own)" for file, mode in document["data_modes"].items()
    ]
    lines += _ignored_lines(document)
    write_text("\n".join(lines) + "\n")


def _change_line(change: dict[str, Any]) -> str:
    where = f"{change['file']}/{change['member']}" if "member" in change else change["file"]
    size = f" ({change['size']} bytes)" if "size" in change else ""
    return f"{change['action']} {where}{size}"


def _ignored_lines(document: dict[str, Any]) -> list[str]:
    ignored = document.get("ignored") or []
    return [f"ignored: {len(ignored)}"] + [f"  {item['file']}: {item['reason']}" for item in ignored] if ignored else []


def _print_modinfo(document: dict[str, Any], as_json: bool) -> None:
    if as_json:
        from .json_output import print_json

        print_json(document)
        return
    lines = [f"{field}: {document[field]}" for field in ("name", "author", "description") if document[field]]
    lines += [f"link: {link}" for link in document["links"]]
    lines.append(f"format: SyncFaction modinfo.xml ({document['modinfo']})")
    lines.append(f"inputs: {len(document['inputs'])}" + ("  (--choose NAME=OPTION)" if document["inputs"] else ""))
    for box in document["inputs"]:
        lines.append(f"  {box['name']}: {box['display_name']}")
        lines += [f"    {'*' if option == box['chosen'] else ' '} {option}" for option in box["options"]]
    lines.append(f"changes: {len(document['changes'])}")
    for change in document["changes"]:
        if change["op"] == "replace":
            what = f"with {change['new_file']}"
        else:
            what = f"({change['list_action']}, {count(change['elements'], 'element')})"
        lines.append(f"  {change['op']} {change['file']}: {change['member']} {what}")
    beside = document.get("syncfaction_changes") or []
    if beside:
        lines.append(f"beside modinfo.xml: {len(beside)}")
        lines += [f"  {_change_line(change)}" for change in beside]
    lines += _ignored_lines(document)
    write_text("\n".join(lines) + "\n")


def _limits(args: argparse.Namespace) -> Any:
    """The decode budgets `--allow-large` asks for (ops/patch/limits.py)."""
    from ..ops.patch.limits import limits

    return limits(allow_large=bool(getattr(args, "allow_large", False)))


def _pack_target(args: argparse.Namespace) -> str:
    """TARGET, or the one pack in the folder TARGET that one-pack patches fit (by the hashes of
    the members they change); several or none: refused, naming them."""

    if not os.path.exists(args.target):
        from ..ops.patch import PatchError

        raise PatchError(f"{args.target}: no such pack or folder")
    if not os.path.isdir(args.target):
        return args.target  # type: ignore[no-any-return]
    from ..ops.patch.fits import packs_fitting

    candidates = packs_fitting(args.target, args.patches)
    if candidates is None:
        return args.target  # type: ignore[no-any-return]
    if len(candidates) == 1:
        note(f"{args.target}: the patch is for one pack; it fits {candidates[0]}, which it is applied to")
        return candidates[0]
    from ..ops.patch import PatchError

    if not candidates:
        raise PatchError(
            f"{args.target}: the patch is for one pack, and no pack in this folder holds the members it changes "
            "as its base had them"
        )
    raise PatchError(
        f"{args.target}: the patch is for one pack, and it fits {len(candidates)} here: "
        f"{', '.join(candidates)}; give the one to patch"
    )


def run_check(args: argparse.Namespace) -> int | None:
    from ..ops.patch import check

    args.target = _pack_target(args)
    with _limits(args):
        plan = check(args.target, args.patches, later_wins=args.later_wins, choices=_choices(args))
    _say_notes(plan)
    if args.as_json:
        from .json_output import print_json

        print_json(plan.to_dict())
    else:
        write_text("".join(line + "\n" for line in plan.lines()))
    return 0 if plan.ok else 1


def run_apply(args: argparse.Namespace) -> int | None:
    from ..ops.patch import apply

    if args.dry_run:
        return run_check(args)  # the same questions, nothing written
    args.target = _pack_target(args)
    with _limits(args), counting_bar("applying", ticking=True):
        plan = apply(args.target, args.patches, later_wins=args.later_wins, choices=_choices(args), warn=_warning)
    _say_notes(plan)
    if args.as_json:
        from .json_output import print_json

        print_json(plan.to_dict())
    else:
        skipped = len(plan.steps) - len(plan.to_apply)
        summary(f"{args.target}: {count(len(plan.to_apply), 'operation')} applied, {skipped} skipped")
    return None


def _warning(line: str) -> None:
    note(f"warning: {line}")


def _say_notes(plan: Any) -> None:
    """What the mods said while being read, one `note:` line each, each said once (two patches
    read from one mod, a modinfo.xml and the loose archives beside it, can say the same)."""
    for line in dict.fromkeys(plan.notes()):
        note(f"note: {line}")


def run_revert(args: argparse.Namespace) -> int | None:
    from ..ops.patch import revert

    if not os.path.exists(args.target):
        from ..ops.patch import PatchError

        raise PatchError(f"{args.target}: no such pack or folder")
    with counting_bar("reverting", ticking=True):
        names = revert(args.target, args.patch, warn=_warning)
    summary(f"{args.target}: took back {', '.join(names) or 'nothing (an interrupted apply was rolled back)'}")
    return None
