"""`gamepak texture`: RFG peg textures and Quake palette images listed, exported to PNG (pegs: DDS too) and
imported back."""

from __future__ import annotations

import argparse

from .common import (
    add_command,
    add_group,
    add_json_option,
    count,
    counting_bar,
    require_input,
    summary,
    write_lines,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

DESCRIPTION = """\
Red Faction Guerrilla textures (peg v10: .cpeg_pc + .gpeg_pc, .cvbm_pc + .gvbm_pc).

SOURCE is a CPU file (its GPU partner is found beside it by stem) or a pack: then every peg
inside it, nested packs included, with its member path.

The modder's loop:
  gamepak texture export xray_effect.cpeg_pc -o textures      # every texture as PNG
  (edit textures/heat_map_enemy.png)
  gamepak texture import xray_effect.cpeg_pc textures         # only changed images re-encoded

8888 textures are read as B, G, R, A in memory (D3D's A8R8G8B8); --order RGBA reads RFGM's way.

Quake's 8-bit images too: SOURCE a .wad, .lmp, .bsp (its textures), .spr (frames), .mdl
(skins), Quake II .wal, or a PAK/PK3 holding them (nested WADs included). Export writes RGBA
PNGs (index 255 clear in qpics, sprites and `{` textures, 0 in conchars); import maps PNG/TGA
pixels to the nearest palette colour (fullbrights only where the image has them exactly),
rebuilds the mips and leaves unchanged images byte for byte. The palette: --palette FILE,
else gfx/palette.lmp in the pack or beside the file, else the built-in (LibreQuake's = Quake's).
  gamepak texture export pak0.pak -o textures && gamepak texture import pak0.pak textures
"""


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    group = add_command(
        commands,
        "texture",
        None,
        "Textures (RFG pegs, Quake images): list, export, import, build, add, rm",
        description=DESCRIPTION,
    )
    sub = add_group(group, "texture_command")

    ls = add_command(sub, "ls", run_ls, "List the textures of a peg or of every peg in a pack.")
    ls.add_argument("source", metavar="SOURCE", help="a .cpeg_pc/.cvbm_pc file or a pack")
    add_json_option(ls, "a list of {peg, name, width, height, format, mips, flags}")
    _peg_option(ls, "only that peg")
    _order(ls)
    _palette_option(ls)

    export = add_command(
        sub, "export", run_export, "Write each texture as a PNG (top mip, RGBA) or a DDS (every mip, the stored data)."
    )
    export.add_argument("source", metavar="SOURCE", help="a .cpeg_pc/.cvbm_pc file or a pack")
    export.add_argument("names", metavar="NAME", nargs="*", help="only these textures")
    export.add_argument("-o", "--output", required=True, metavar="DIR", help="folder to write to")
    export.add_argument("--as", dest="kind", choices=("png", "dds"), default="png", help="image kind (default png)")
    export.add_argument("--overwrite", action="store_true", help="replace existing files")
    _peg_option(export, "only that peg")
    _order(export)
    _palette_option(export)

    imp = add_command(
        sub,
        "import",
        run_import,
        "Import a folder laid out as export wrote it into a peg or a pack: only images that differ from what "
        "is stored are changed. For texture NAME.tga it takes NAME.dds (the data copied as is when it is "
        "in the texture's format: the entry's mips taken, padding or further mips after them left, missing "
        "ones made from the smallest given) or NAME.png/.tga/.bmp/.tif (encoded into the texture's format, "
        "mips made again), and the names RFGM.Archiver writes ('00000 NAME.tga PcDxt1 4.dds'); a new size "
        "updates the entry, the .str2_pc and its .asm_pc. An image may be at most 4x the texture's area "
        "unless --resize is given.",
    )
    imp.add_argument("target", metavar="TARGET", help="a .cpeg_pc/.cvbm_pc file or a pack")
    imp.add_argument("folder", metavar="DIR", help="the folder export wrote")
    imp.add_argument("--dry-run", action="store_true", help="check every image and say what would change")
    _peg_option(imp, "only into that peg (its folder under DIR)")
    _order(imp)
    _resize(
        imp, "more than 4x the texture's area (a peg takes its size; a Quake image is scaled to the size it replaces)"
    )
    _asm_option(imp)
    _palette_option(imp)

    build = add_command(
        sub,
        "build",
        run_build,
        "Make a Quake texture WAD (WAD2) from a folder of PNG/TGA/BMP pictures: one miptex per file, named "
        "after it (at most 15 characters; star_/plus_/minu_ stand for * + -), sides multiples of 16 (sky 256x128), "
        "nearest palette colours in CIELAB (fullbrights only for names ending _fbr or where a --fullbright mask "
        "is white), {name pictures clear under the alpha threshold, +0name animations without gaps, four mips; "
        "prints each texture's mean CIEDE2000 error (estimated from 1 drawn pixel in 16 past 4,096 of them; "
        "--exact-error measures every one). A folder from 'texture export' of a WAD rebuilds it byte "
        "for byte.",
    )
    build.add_argument("folder", metavar="DIR", help="the folder of pictures")
    build.add_argument("-o", "--output", required=True, metavar="FILE", help="the WAD to write")
    build.add_argument("--overwrite", action="store_true", help="replace an existing FILE")
    build.add_argument(
        "--wad3", action="store_true", help="a Half-Life WAD3: each texture with its own palette (quantised)"
    )
    _palette_option(build)
    build.add_argument(
        "--case", choices=("keep", "upper"), default="keep", help="lump names as the files spell them, or upper case"
    )
    build.add_argument("--dither", action="store_true", help="Floyd-Steinberg dithering instead of nearest colours")
    build.add_argument(
        "--fullbright",
        metavar="MASKS",
        help="a folder of masks named as the pictures: white pixels may take fullbright colours (224-255)",
    )
    build.add_argument(
        "--resize", action="store_true", help="scale pictures to sides of multiples of 16 (skies to 256x128)"
    )
    build.add_argument(
        "--alpha-threshold",
        type=int,
        default=128,
        metavar="N",
        help="{name and sky pictures: pixels of alpha under N are clear (default 128)",
    )
    build.add_argument(
        "--exact-error",
        action="store_true",
        help="measure each texture's mean CIEDE2000 on every drawn pixel (default: past 4,096 drawn pixels, "
        "estimated from those of every 4th row and column; the WAD is the same either way)",
    )

    add = add_command(sub, "add", run_add, "Add a new texture to a peg (a file, or one inside a pack).")
    add.add_argument("target", metavar="TARGET", help="a .cpeg_pc/.cvbm_pc file, or a pack holding pegs")
    add.add_argument("image", metavar="IMAGE", help="a PNG (or any image Pillow reads)")
    add.add_argument("--name", required=True, help="the texture's name (.tga added if missing)")
    add.add_argument(
        "--format",
        dest="pixel_format",
        default="DXT5",
        help="pixel format: DXT1, DXT3, DXT5, 8888, 888, 565, 1555, 4444, A8",
    )
    _peg_option(add)
    _order(add)
    _resize(add, "larger than 4096x4096")
    _asm_option(add)

    rm = add_command(sub, "rm", run_rm, "Remove textures from a peg (a file, or one inside a pack).")
    rm.add_argument("target", metavar="TARGET", help="a .cpeg_pc/.cvbm_pc file, or a pack holding pegs")
    rm.add_argument("names", metavar="NAME", nargs="+", help="textures to remove")
    _peg_option(rm)
    _asm_option(rm)


def _resize(parser: argparse.ArgumentParser, default: str) -> None:
    parser.add_argument(
        "--resize",
        action="store_true",
        help=f"take an image {default} (up to 16384 on a side, 67 million pixels; images are sized from "
        "their header before they are decoded)",
    )


def _asm_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--asm",
        metavar="FILE",
        help="when TARGET is a pack: a separate .asm_pc file whose entries for the changed .str2_pc are "
        "updated too (a .asm_pc inside TARGET always is), as the edit commands' --asm",
    )


def _peg_option(parser: argparse.ArgumentParser, what: str | None = None) -> None:
    parser.add_argument(
        "--peg",
        metavar="MEMBER",
        help=f"when the pack holds several pegs: {what}, by member path (zone.str2_pc/crate.cpeg_pc)"
        if what
        else "when TARGET is a pack: the peg's member path (zone.str2_pc/crate.cpeg_pc), needed if it holds several; "
        "the .str2_pc holding it and its .asm_pc container are rewritten",
    )


def _palette_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--palette",
        metavar="FILE",
        help="Quake images: a 768-byte palette.lmp (or a PCX) to use instead of the one found beside them",
    )


def _kind(path: str) -> Any:
    """The texture kind (content registry row) that takes `path`: RFG pegs, Quake images, ..."""
    from ..content import for_path

    return for_path("texture", path)


# The options only some texture kinds take (options key -> flag, default): given to a kind whose
# verb does not take them (its row's `Verb.options`), they are refused, not ignored.
KIND_OPTIONS: dict[str, tuple[str, object]] = {
    "peg": ("--peg", None),
    "order": ("--order", "BGRA"),
    "kind": ("--as", "png"),
    "resize": ("--resize", False),
    "asm": ("--asm", None),
    "palette": ("--palette", None),
}


def _taking(args: argparse.Namespace, kind: Any, verb: str) -> Any:
    """`kind`, once every kind option given in `args` is one its `verb` takes."""
    from .kind_options import refuse_untaken

    refuse_untaken(args, kind, verb, KIND_OPTIONS)
    return kind


def _order(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--order",
        choices=("BGRA", "RGBA"),
        default=KIND_OPTIONS["order"][1],
        type=str.upper,
        help="memory order of 8888 textures (default BGRA)",
    )


def run_ls(args: argparse.Namespace) -> int | None:
    require_input(args.source)
    kind = _taking(args, _kind(args.source), "ls")
    # Rows may come as they are read (a model of a million skins): printed as they come.
    rows = kind.call("ls", args.source, options=vars(args))
    if args.as_json:
        from .json_output import print_json_rows

        print_json_rows(rows)
        return None
    palettes: dict[str, None] = {}  # which palettes Quake images were listed through (in order)
    listed = False
    line = kind.bound("line")  # looked up once, not per row (a model of a million skins)

    def lines() -> Iterator[str]:
        nonlocal listed
        for row in rows:
            listed = True
            if row.get("palette"):
                palettes.setdefault(str(row["palette"]))
            yield line(row) + "\n"

    write_lines(lines())
    if not listed:
        summary(f"{args.source}: no textures" + (f" in {args.peg}" if args.peg else ""))
    _say_palettes(list(palettes))
    return None


def _say_palettes(palettes: list[str]) -> None:
    """Say which palette Quake images were drawn through (Quake's, Quake II's, a file's)."""
    for where in palettes:
        summary(f"palette: {where}")


def run_export(args: argparse.Namespace) -> int | None:
    require_input(args.source)
    palettes: list[str] = []
    kind = _taking(args, _kind(args.source), "export")
    with counting_bar("exporting textures") as advance:
        written = kind.call(
            "export",
            args.source,
            args.output,
            names=args.names,
            overwrite=args.overwrite,
            progress=advance,
            options={**vars(args), "palettes": palettes},
        )
    _say_palettes(palettes)
    # What the kind exports (a sprite writes several files), as its row counts it.
    what = kind.call("exported", written) if kind.has("exported") else count(len(written), "texture")
    summary(f"exported {what} to {args.output}")
    return None


def run_import(args: argparse.Namespace) -> int | None:
    require_input(args.target)
    palettes: list[str] = []
    with counting_bar("checking textures") as advance:
        changed = _taking(args, _kind(args.target), "import").call(
            "import",
            args.target,
            args.folder,
            dry_run=args.dry_run,
            progress=advance,
            options={**vars(args), "palettes": palettes},
        )
    _say_palettes(palettes)
    verb = "would change" if args.dry_run else "changed"
    if changed:
        summary(f"{count(len(changed), 'texture')} {verb}: {', '.join(changed)}")
    else:
        # Every image encodes to what is stored (an edit imported once already): nothing was
        # or would be written, the file keeps its bytes and its modification time.
        summary(f"{args.target}: unchanged (every image matches what it stores)")
    return None


def run_build(args: argparse.Namespace) -> int | None:
    from ..core.memory import keep_freed_heap
    from ..ops.wad_build import build_wad

    # Process-wide, so the command sets it, not the library (core.memory says why it pays).
    keep_freed_heap()

    palettes: list[str] = []
    with counting_bar("building textures") as advance:
        built = build_wad(
            args.folder,
            args.output,
            palette=args.palette,
            overwrite=args.overwrite,
            progress=advance,
            palettes=palettes,
            wad3=args.wad3,
            case=args.case,
            dither=args.dither,
            fullbright=args.fullbright,
            resize=args.resize,
            alpha_threshold=args.alpha_threshold,
            exact_error=args.exact_error,
        )
    _say_palettes(palettes)
    for texture in built:
        glow = f"  fullbright {texture.fullbright:.0%}" if texture.fullbright else ""
        clear = f"  clear {texture.clear:.0%}" if texture.clear else ""
        measured = f"sampled, {texture.sampled:,} px" if texture.sampled else "exact"
        summary(
            f"  {texture.name:<15} {texture.width:>4}x{texture.height:<4} "
            f"mean CIEDE2000 {texture.error:.2f} ({measured}){glow}{clear}  ({texture.file}"
            + (f", {texture.note})" if texture.note else ")")
        )
    summary(f"built {args.output}: {count(len(built), 'texture')}")
    return None


def _editable(args: argparse.Namespace, target: str, verb: str) -> Any:
    """The texture kind of `target` when it takes `add` and `rm` (RFG pegs); images of other
    kinds are lumps or pack members: say which command does it."""
    kind = _kind(target)
    if not kind.has(verb):
        from ..errors import UsageError

        raise UsageError(
            f"{target}: `texture {verb}` edits RFG pegs; {kind.description} are WAD lumps or pack members, "
            f"which `gamepak {verb}` {'adds' if verb == 'add' else 'removes'}"
        )
    return _taking(args, kind, verb)


def run_add(args: argparse.Namespace) -> int | None:
    texture = _editable(args, args.target, "add").call(
        "add", args.target, args.image, args.name, args.pixel_format, options=vars(args)
    )
    where = f"{args.target}/{args.peg}" if args.peg else args.target
    summary(
        f"added {texture.name} ({texture.width}x{texture.height} {texture.format.label}, "
        f"{count(texture.mips, 'mip')}) to {where}"
    )
    return None


def run_rm(args: argparse.Namespace) -> int | None:
    require_input(args.target)
    removed = _editable(args, args.target, "rm").call("rm", args.target, args.names, options=vars(args))
    where = f"{args.target}/{args.peg}" if args.peg else args.target
    summary(f"removed {count(len(removed), 'texture')} from {where}: {', '.join(removed)}")
    return None
