"""`gamepak sprite`: Gameloft J2ME sprites (BSPRITE, Diamond Rush) listed, exported to PNG and JSON,
and imported back into their pack."""

from __future__ import annotations

import argparse

from .common import add_command, add_format_option, add_group, add_json_option, note, write_text

DESCRIPTION = """\
Gameloft J2ME sprites (BSPRITE v3: Diamond Rush's .f packs and demoSpr.bin): modules (small
indexed images), frames (modules placed and flipped), animations (timed frames), palettes.

PACK is a J2ME pack (its members that are sprites) or one sprite file.

The loop:
  gamepak sprite ls gen1.f
  gamepak sprite export gen1.f -o sprites       # sprites/5/modules/000.png, frames/, anims/, sprite.json
  (edit sprites/5/modules/003.png, or palettes / timings / offsets in sprites/5/sprite.json)
  gamepak sprite import gen1.f sprites          # only the sprites that changed are rewritten

Module PNGs are indexed (the palette's PLTE and tRNS): keep them indexed, or save RGBA using only
the palette's colours (--nearest maps other colours to the nearest one). An unchanged export
imports back to the identical file.
"""


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    group = add_command(
        commands,
        "sprite",
        None,
        "Gameloft J2ME sprites (BSPRITE): list, export to PNG + JSON, import",
        description=DESCRIPTION,
    )
    sub = add_group(group, "sprite_command")

    ls = add_command(sub, "ls", run_ls, "List the sprites of a pack: modules, frames, anims, palettes, encoding.")
    ls.add_argument("pack", metavar="PACK", help="a J2ME pack or a sprite file")
    ls.add_argument("members", metavar="MEMBER", nargs="*", help="only these members")
    add_json_option(ls, "a list of {name, size, modules, frames, anims, palettes, colours, encoding, ...}")
    add_format_option(ls, "PACK")

    export = add_command(
        sub,
        "export",
        run_export,
        "Write each sprite as a folder: an indexed PNG per module, an RGBA PNG per frame, an animated PNG "
        "per anim, a contact sheet and sprite.json (what import reads back).",
    )
    export.add_argument("pack", metavar="PACK", help="a J2ME pack or a sprite file")
    # MEMBERs go right after PACK (`export PACK MEMBER... -o DIR`), as `texture export`'s names.
    export.add_argument("members", metavar="MEMBER", nargs="*", help="only these members (right after PACK)")
    export.add_argument("-o", "--output", required=True, metavar="DIR", help="folder to write to")
    export.add_argument(
        "--palette", type=int, default=0, metavar="N", help="the palette the PNGs are drawn with (default 0)"
    )
    export.add_argument("--overwrite", action="store_true", help="replace existing files")
    add_format_option(export, "PACK")

    imp = add_command(
        sub,
        "import",
        run_import,
        "Import a folder laid out as export wrote it: every sprite whose folder is there is rebuilt from its "
        "sprite.json and module PNGs; the pack is edited once, crash-safely, for those that changed.",
    )
    imp.add_argument("pack", metavar="PACK", help="the J2ME pack (or sprite file) exported")
    imp.add_argument("folder", metavar="DIR", help="the folder export wrote")
    imp.add_argument(
        "--nearest",
        action="store_true",
        help="map a colour that is not in the palette to the nearest palette colour (default: refuse it)",
    )
    imp.add_argument("--dry-run", action="store_true", help="check everything and say what would change")
    add_format_option(imp, "PACK")


def run_ls(args: argparse.Namespace) -> int | None:
    from ..ops.sprites import list_sprites, sprite_line

    rows = list_sprites(args.pack, args.members or None, format=args.format_name)
    if args.as_json:
        from .json_output import print_json

        print_json(rows)
    elif rows:
        write_text("".join(sprite_line(row) + "\n" for row in rows))
    elif not args.quiet:
        note(f"{args.pack}: no sprites")
    return None


def run_export(args: argparse.Namespace) -> int | None:
    from ..ops.sprites import export_sprites

    written = export_sprites(
        args.pack,
        args.output,
        args.members or None,
        palette=args.palette,
        format=args.format_name,
        overwrite=args.overwrite,
    )
    if not args.quiet:
        note(f"exported {len(written)} file(s) to {args.output}")
    return None


def run_import(args: argparse.Namespace) -> int | None:
    from ..ops.sprites import import_sprites

    done = import_sprites(args.pack, args.folder, nearest=args.nearest, dry_run=args.dry_run, format=args.format_name)
    for name in done.unknown:
        note(f"warning: {args.folder}/{name} names no sprite of {args.pack}: left out")
    if not args.quiet:
        verb = "would change" if args.dry_run else "changed"
        listed = f": {', '.join(done.changed)}" if done.changed else ""
        note(f"{len(done.changed)} sprite(s) {verb}{listed}; {done.unchanged} unchanged")
    return None
