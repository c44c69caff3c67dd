"""`gamepak texture`: RFG peg textures listed, exported to PNG/DDS and imported back."""

from __future__ import annotations

from .common import add_command, add_group, add_json_option, note, print_json, write_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

DESCRIPTION = """\
Red Faction Guerrilla textures (peg v10: .cpeg_pc + .gpeg_pc, .cvbm_pc + .gvbm_pc).

SOURCE is a CPU file (its GPU partner is found beside it by stem) or a pack: then every peg
inside it, nested packs included, with its member path.

The modder's loop:
  gamepak texture export xray_effect.cpeg_pc -o textures      # every texture as PNG
  (edit textures/heat_map_enemy.png)
  gamepak texture import xray_effect.cpeg_pc textures         # only changed images re-encoded

8888 textures are read as B, G, R, A in memory (D3D's A8R8G8B8); --order RGBA reads RFGM's way.
"""


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    group = add_command(
        commands, "texture", None, "RFG textures: list, export, import, add, rm", description=DESCRIPTION
    )
    sub = add_group(group, "texture_command")

    ls = add_command(sub, "ls", run_ls, "List the textures of a peg or of every peg in a pack.")
    ls.add_argument("source", metavar="SOURCE", help="a .cpeg_pc/.cvbm_pc file or a pack")
    add_json_option(ls, "a list of {peg, name, width, height, format, mips, flags}")
    _order(ls)

    export = add_command(
        sub, "export", run_export, "Write each texture as a PNG (top mip, RGBA) or a DDS (every mip, the stored data)."
    )
    export.add_argument("source", metavar="SOURCE", help="a .cpeg_pc/.cvbm_pc file or a pack")
    # NAMEs go right after SOURCE (`export SOURCE NAME... -o DIR`): Python 3.11's argparse
    # cannot take positionals on both sides of options.
    export.add_argument("names", metavar="NAME", nargs="*", help="only these textures (right after SOURCE)")
    export.add_argument("-o", "--output", required=True, metavar="DIR", help="folder to write to")
    export.add_argument("--as", dest="kind", choices=("png", "dds"), default="png", help="image kind (default png)")
    export.add_argument("--overwrite", action="store_true", help="replace existing files")
    _order(export)

    imp = add_command(
        sub,
        "import",
        run_import,
        "Import a folder laid out as export wrote it into "
        "a peg: only images that differ from what is stored are changed.",
    )
    imp.add_argument("target", metavar="TARGET", help="a .cpeg_pc/.cvbm_pc file or a pack")
    imp.add_argument("folder", metavar="DIR", help="the folder export wrote")
    _order(imp)

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

    rm = add_command(sub, "rm", run_rm, "Remove textures from a peg (a file, or one inside a pack).")
    rm.add_argument("target", metavar="TARGET", help="a .cpeg_pc/.cvbm_pc file, or a pack holding pegs")
    rm.add_argument("names", metavar="NAME", nargs="+", help="textures to remove")
    _peg_option(rm)


def _peg_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--peg",
        metavar="MEMBER",
        help="when TARGET is a pack: the peg's member path (zone.str2_pc/crate.cpeg_pc), needed if it holds several; "
        "the .str2_pc holding it and its .asm_pc container are rewritten",
    )


def _order(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--order",
        choices=("BGRA", "RGBA"),
        default="BGRA",
        type=str.upper,
        help="memory order of 8888 textures (default BGRA)",
    )


def run_ls(args: argparse.Namespace) -> int | None:
    from ..formats.rfg.peg.sources import iter_pegs

    rows = []
    for peg_path, peg in iter_pegs(args.source, args.order):
        for texture in peg.textures:
            rows.append({"peg": peg_path, **texture.summary()})
    if args.as_json:
        print_json(rows)
        return None
    lines = [
        f"{r['width']:>5}x{r['height']:<5} {r['format']:<5} {r['mips']:>2} mips "
        f"flags 0x{r['flags']:04x}  {r['peg']}/{r['name']}"
        for r in rows
    ]
    write_text("".join(line + "\n" for line in lines))
    return None


def _stem(name: str) -> str:
    return name.rsplit(".", 1)[0]


def run_export(args: argparse.Namespace) -> int | None:
    import io
    import os

    from ..core.atomic import write_bytes
    from ..core.names import safe_parts
    from ..errors import GamepakError
    from ..formats.rfg.peg.sources import is_cpu_name, iter_pegs

    wanted = {_stem(n) for n in args.names}
    found: set[str] = set()
    single = is_cpu_name(os.path.basename(args.source))
    count = 0
    for peg_path, peg in iter_pegs(args.source, args.order):
        folder = args.output if single else os.path.join(args.output, *safe_parts(peg_path))
        for texture in peg.textures:
            stem = _stem(texture.name)
            if wanted and stem not in wanted:
                continue
            found.add(stem)
            target = os.path.join(folder, *safe_parts(f"{stem}.{args.kind}"))
            if args.kind == "dds":
                data = peg.to_dds(texture.name)
            else:
                buffer = io.BytesIO()
                peg.read_pil(texture.name).save(buffer, "PNG")
                data = buffer.getvalue()
            os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
            write_bytes(target, data, overwrite=args.overwrite)
            count += 1
    missing = wanted - found
    if missing:
        raise GamepakError(f"{args.source}: no texture named {', '.join(sorted(missing))}")
    note(f"exported {count} texture(s) to {args.output}")
    return None


def _load(target: str, order: str = "BGRA"):  # type: ignore[no-untyped-def]
    from ..errors import GamepakError
    from ..formats.rfg.peg import Peg
    from ..formats.rfg.peg.sources import is_cpu_name

    if not is_cpu_name(target):
        raise GamepakError(
            f"{target}: texture import/add/rm take a .cpeg_pc or .cvbm_pc file "
            "(packs: export works; importing into a pack is not wired yet)"
        )
    return Peg.open(target, order)


def _save(target: str, peg) -> None:  # type: ignore[no-untyped-def]
    from ..core.atomic import write_bytes
    from ..formats.rfg.peg.sources import partner_name

    cpu, gpu = peg.to_bytes()
    # GPU first: a crash between the two leaves a GPU file the old CPU file still rejects
    # loudly (size field) rather than a silent mix.
    write_bytes(partner_name(target), gpu, overwrite=True)
    write_bytes(target, cpu, overwrite=True)


def _import_folder(peg, folder: str) -> list[str]:  # type: ignore[no-untyped-def]
    """Apply a folder laid out as export wrote it to one peg; the names of changed textures."""
    import os

    import numpy as np
    from PIL import Image

    from ..errors import GamepakError
    from ..formats.rfg.peg.dds import dds_data

    changed = []
    for texture in list(peg.textures):
        stem = _stem(texture.name)
        dds_path = os.path.join(folder, stem + ".dds")
        png_path = os.path.join(folder, stem + ".png")
        if os.path.exists(dds_path):
            with open(dds_path, "rb") as handle:
                width, height, mips, fourcc, data = dds_data(handle.read(), dds_path)
            if fourcc and fourcc.decode("ascii", "replace") != texture.format.label:
                raise GamepakError(f"{dds_path}: {fourcc!r} data, the texture is {texture.format.label}")
            if (width, height, mips) == (texture.width, texture.height, texture.mips) and data == peg.mip_data(
                texture.name
            ):
                continue
            try:
                peg.replace_data(texture.name, data, width, height, mips)
            except GamepakError as exc:
                raise GamepakError(f"{dds_path}: {exc}") from None
            changed.append(texture.name)
        elif os.path.exists(png_path):
            try:
                with Image.open(png_path) as image:
                    pixels = np.asarray(image.convert("RGBA"))
            except OSError as exc:
                raise GamepakError(f"{png_path}: not an image Pillow reads ({exc})") from None
            stored = peg.read_image(texture.name)
            if pixels.shape == stored.shape and np.array_equal(pixels, stored):
                continue  # unchanged: never re-encoded
            try:
                peg.replace_image(texture.name, pixels)
            except GamepakError as exc:
                raise GamepakError(f"{png_path}: {exc}") from None
            changed.append(texture.name)
    return changed


def _change_peg(target: str, member: str | None, order: str, change) -> None:  # type: ignore[no-untyped-def]
    """Apply `change(peg)` to a peg file, or to the peg `member` of the pack `target` (its only
    one when not named) through one crash-safe edit, which rebuilds the .str2_pc holding the
    pair and updates the .asm_pc container."""
    from ..errors import GamepakError
    from ..formats.rfg.peg.sources import is_cpu_name, iter_pegs, partner_name

    if is_cpu_name(target):
        peg = _load(target, order)
        change(peg)
        _save(target, peg)
        return
    pegs = [(path, peg) for path, peg in iter_pegs(target, order) if member is None or path.lower() == member.lower()]
    if not pegs:
        raise GamepakError(f"{target}: no peg {member!r} in this pack" if member else f"{target}: holds no peg")
    if len(pegs) > 1:
        listed = ", ".join(path for path, _ in pegs[:5])
        raise GamepakError(f"{target}: holds {len(pegs)} pegs ({listed}...); name one with --peg")
    peg_path, peg = pegs[0]
    change(peg)
    cpu, gpu = peg.to_bytes()
    from ..ops.edit import edit

    with edit(target) as pack:
        pack.replace(peg_path, cpu)
        pack.replace(partner_name(peg_path), gpu)


def run_import(args: argparse.Namespace) -> int | None:
    import os

    from ..formats.rfg.peg.sources import is_cpu_name, iter_pegs, partner_name

    if is_cpu_name(args.target):
        peg = _load(args.target, args.order)
        changed = _import_folder(peg, args.folder)
        if changed:
            _save(args.target, peg)
    else:
        # A pack: every peg's folder is DIR/<member path>; all changes go through one
        # crash-safe edit, which also rebuilds the .str2_pc holding a pair and its .asm_pc.
        from ..ops.edit import edit

        replacements: dict[str, bytes] = {}
        changed = []
        for peg_path, peg in iter_pegs(args.target, args.order):
            names = _import_folder(peg, os.path.join(args.folder, *peg_path.split("/")))
            if names:
                cpu, gpu = peg.to_bytes()
                replacements[peg_path] = cpu
                replacements[partner_name(peg_path)] = gpu
                changed += [f"{peg_path}/{name}" for name in names]
        if replacements:
            with edit(args.target) as pack:
                for member, data in replacements.items():
                    pack.replace(member, data)
    note(f"{len(changed)} texture(s) changed" + (f": {', '.join(changed)}" if changed else ""))
    return None


def run_add(args: argparse.Namespace) -> int | None:
    from PIL import Image

    from ..errors import GamepakError
    from ..formats.rfg.peg.layout import format_by_label

    try:
        pixel_format = format_by_label(args.pixel_format)
    except ValueError as exc:
        raise GamepakError(str(exc)) from None
    try:
        with Image.open(args.image) as image:
            rgba = image.convert("RGBA")
    except OSError as exc:
        raise GamepakError(f"{args.image}: not an image Pillow reads ({exc})") from None

    def add(peg) -> None:  # type: ignore[no-untyped-def]
        try:
            peg.add_texture(args.name, rgba, pixel_format)
        except GamepakError as exc:
            raise GamepakError(f"{args.image}: {exc}") from None

    _change_peg(args.target, args.peg, args.order, add)
    return None


def run_rm(args: argparse.Namespace) -> int | None:
    def remove(peg) -> None:  # type: ignore[no-untyped-def]
        for name in args.names:
            peg.remove_texture(name)

    _change_peg(args.target, args.peg, "BGRA", remove)
    return None
