"""RFG textures as files: every texture of a peg (loose, or each peg inside a pack) exported to
PNG or DDS, a folder laid out that way imported back, textures added and removed.

A loose peg is a CPU file (`.cpeg_pc`/`.cvbm_pc`) with its GPU partner beside it; it is
rewritten GPU file first (see `_save_pair`). Inside a pack, every change goes through one
crash-safe `edit` of the pack, which rebuilds the `.str2_pc` holding the pair and brings its
`.asm_pc` container up to date. `gamepak texture` is a thin layer over these functions.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import GamepakError, InvalidOptionError
from ..formats.rfg.peg.sources import is_cpu_name, iter_pegs, partner_name, same_name

if TYPE_CHECKING:
    from ..formats.rfg.peg import Peg, PegTexture, PixelFormat

IMAGE_KINDS = ("png", "dds")
# What import takes for a texture STEM: STEM.dds first, then images Pillow reads.
IMPORT_SUFFIXES = (".dds", ".png", ".tga", ".bmp", ".tif", ".tiff")


def _stem(name: str) -> str:
    """A texture's name without its `.tga`: the file name export gives it."""
    return name.rsplit(".", 1)[0]


def list_textures(
    source: str | os.PathLike[str], *, peg: str | None = None, order: str = "BGRA"
) -> list[dict[str, object]]:
    """Each texture of `source` (a CPU file, or every peg in a pack; `peg`: only that member
    path) as {peg, name, width, height, format, mips, flags}: what `texture ls --json` prints."""
    return [
        {"peg": peg_path, **texture.summary()}
        for peg_path, found in _pegs(os.fspath(source), order, peg)
        for texture in found.textures
    ]


def _pegs(source: str, order: str, only: str | None) -> Iterator[tuple[str, Peg]]:
    """`iter_pegs`, or with `only` the one peg of that member path (case-insensitive); a
    GamepakError when the pack holds none of that path."""
    if only is None or is_cpu_name(os.path.basename(source)):
        yield from iter_pegs(source, order)
        return
    seen = False
    for peg_path, found in iter_pegs(source, order):
        if same_name(peg_path, only):
            seen = True
            yield peg_path, found
    if not seen:
        raise GamepakError(f"{source}: no peg {only!r} in this pack")


def export_textures(
    source: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    kind: str = "png",
    names: Iterable[str] = (),
    overwrite: bool = False,
    order: str = "BGRA",
    peg: str | None = None,
    progress: Callable[[str], object] | None = None,
) -> Sequence[str]:
    """Write each texture of `source` (a CPU file, or every peg in a pack; `peg`: only that
    member path) under `output` as a PNG (top mip, RGBA) or a DDS (every mip, the stored
    bytes); returns the files written. A pack's textures are laid out by member path
    (`OUT/zone.str2_pc/x.cpeg_pc/name.png`). `names` (with or without `.tga`) picks textures;
    one not found is an error. `progress(path)` is called as each image is made."""
    import io

    from ..core.lazy import Lazy
    from ..core.names import safe_parts
    from .made_files import write_made_files

    if kind not in IMAGE_KINDS:
        raise GamepakError(f"unknown image kind {kind!r} (png or dds)")
    source, output = os.fspath(source), os.fspath(output)
    wanted = {_stem(name) for name in names}
    exported: set[str] = set()
    loose = is_cpu_name(os.path.basename(source))
    written: list[Sequence[str]] = []

    def image(holder: Peg, texture: PegTexture) -> bytes:
        if kind == "dds":
            return holder.to_dds(texture.name)
        buffer = io.BytesIO()
        holder.read_pil(texture.name).save(buffer, "PNG")
        return buffer.getvalue()

    for peg_path, holder in _pegs(source, order, peg):
        # One peg's images are written together, through extraction's safe path: names
        # checked, no folder on the way a link, the set appearing at once or not at all. Each
        # image is made when its file is written (a peg of 65,535 tiny textures never holds
        # every PNG).
        folder = [] if loose else safe_parts(peg_path)
        chosen = [texture for texture in holder.textures if not wanted or _stem(texture.name) in wanted]
        if wanted:
            exported.update(_stem(texture.name) for texture in chosen)

        def file(
            index: int, holder: Peg = holder, chosen: list[PegTexture] = chosen, folder: list[str] = folder
        ) -> tuple[str, Callable[[], bytes]]:
            texture = chosen[index]
            relative = "/".join([*folder, *safe_parts(f"{_stem(texture.name)}.{kind}")])

            def make() -> bytes:
                data = image(holder, texture)
                if progress is not None:
                    progress(relative)
                return data

            return relative, make

        if chosen:
            written.append(write_made_files(output, Lazy(len(chosen), file), overwrite=overwrite))
    missing = wanted - exported
    if missing:
        raise GamepakError(f"{source}: no texture named {', '.join(sorted(missing))}")
    # One peg's paths are made when read; a pack's are listed.
    return written[0] if len(written) == 1 else [path for paths in written for path in paths]


def import_textures(
    target: str | os.PathLike[str],
    folder: str | os.PathLike[str],
    *,
    order: str = "BGRA",
    dry_run: bool = False,
    peg: str | None = None,
    progress: Callable[[str], object] | None = None,
    resize: bool = False,
    asm: str | os.PathLike[str] | None = None,
) -> list[str]:
    """Import a folder laid out as `export_textures` wrote it (or as RFGM.Archiver writes it)
    into `target` (a CPU file or a pack); returns the changed textures (their names; `peg
    path/name` in a pack). Only images that differ from what is stored change anything: an
    unchanged image is never re-encoded, a DDS of the entry's format is copied as is (the
    entry's mip chain taken from it: padding or further mips after it are left, missing mips
    made from the smallest given), any other image (PNG, TGA, BMP, TIFF, a DDS of another
    format) is encoded into the entry's format with its mips made again. Images are sized from
    their headers first (`check_image_size`; `resize` allows larger ones). Image files that
    match no texture are named in a warning. `dry_run` checks and reports, writing nothing;
    `peg` imports into that member path only; `progress(name)` is called as each texture is
    checked; `asm` is a separate `.asm_pc` kept up to date with a changed `.str2_pc`."""
    target, folder = os.fspath(target), os.fspath(folder)
    if not os.path.isdir(folder):
        raise GamepakError(f"{folder}: not a folder (export writes one to import from)")
    if not dry_run:  # a dry run is read-only, as `ls` is: the next import that may write clears
        _remove_dead_temporaries(target)
    used: set[str] = set()
    known: list[str] = []  # every texture name seen, for the nearest name of an unmatched image
    if is_cpu_name(target):
        loose = _open_loose(target, order)
        known += [texture.name for texture in loose.textures]
        # The images beside each other in FOLDER, or in a folder named after the peg inside it
        # (gamepak's `xray_effect.cpeg_pc/` or RFGM's `xray_effect__index_1__pegAlign_16_.cpeg_pc/`).
        folders = [folder, *_matching_folders(folder, [os.path.basename(target)])]
        changed = _import_folder(loose, folders, used, progress, resize)
        if changed and not dry_run:
            _save_pair(target, loose)
    else:
        # Each peg's folder is FOLDER/<member path>; all changes go through one edit of the pack.
        replacements: dict[str, bytes] = {}
        changed = []
        for peg_path, holder in _pegs(target, order, peg):
            known += [texture.name for texture in holder.textures]
            peg_folders = _matching_folders(folder, peg_path.split("/"))
            names = _import_folder(holder, peg_folders, used, progress, resize)
            if names:
                replacements[peg_path], replacements[holder.gpu_name or partner_name(peg_path)] = holder.to_bytes()
                changed += [f"{peg_path}/{name}" for name in names]
            if peg is not None and peg_folders:  # the other pegs' folders were not meant
                folder = peg_folders[0]
        if replacements:
            with _edit(target, asm, dry_run) as pack:
                for member, data in replacements.items():
                    pack.replace(member, data)
    _warn_unused(target, folder, used, known, peg)
    return changed


def add_texture(
    target: str | os.PathLike[str],
    image: Any,
    name: str,
    pixel_format: PixelFormat | str = "DXT5",
    *,
    peg: str | None = None,
    order: str = "BGRA",
    resize: bool = False,
    asm: str | os.PathLike[str] | None = None,
) -> PegTexture:
    """Add a texture to a peg file, or to the peg `peg` (member path) of a pack: `image` is a
    path Pillow reads (sized from its header first: `check_image_size`, `resize`), a Pillow
    image or an RGBA array; `pixel_format` a `PixelFormat` or a label (`DXT5`, `8888`, ...).
    `name` must be one export can write back out (`Peg.add_texture`). The name block and, in a
    pack, the `.asm_pc` are updated (`asm`: a separate one). Returns the new texture."""
    from ..formats.rfg.peg.layout import PixelFormat, format_by_label

    if not isinstance(pixel_format, PixelFormat):
        try:
            pixel_format = format_by_label(pixel_format)
        except ValueError as exc:
            known = ", ".join(fmt.label for fmt in PixelFormat)
            raise InvalidOptionError(f"--format: {exc}; known: {known}", option="format") from None
    where = ""
    if isinstance(image, (str, os.PathLike)):
        where = os.fspath(image)
        image = read_rgba(where, resize=resize)
    added: list[PegTexture] = []

    def add(peg_file: Peg) -> None:
        try:
            added.append(peg_file.add_texture(name, image, pixel_format))
        except GamepakError as exc:
            raise GamepakError(f"{where}: {exc}" if where else str(exc)) from None

    change_peg(target, add, peg=peg, order=order, asm=asm)
    return added[0]


def remove_textures(
    target: str | os.PathLike[str],
    names: Iterable[str],
    *,
    peg: str | None = None,
    asm: str | os.PathLike[str] | None = None,
) -> list[str]:
    """Remove textures from a peg file, or from the peg `peg` (member path) of a pack; later
    textures move down. Returns the names removed, as stored."""
    names = list(names)
    removed: list[str] = []

    def remove(peg_file: Peg) -> None:
        for name in names:
            removed.append(peg_file.texture(name).name)
            peg_file.remove_texture(name)

    change_peg(target, remove, peg=peg, asm=asm)
    return removed


def change_peg(
    target: str | os.PathLike[str],
    change: Callable[[Peg], object],
    *,
    peg: str | None = None,
    order: str = "BGRA",
    asm: str | os.PathLike[str] | None = None,
) -> None:
    """Apply `change(peg)` to a peg file, or to the peg `peg` of the pack `target` (its only one
    when not named), and write the result back (`asm`: a separate `.asm_pc` kept current)."""
    target = os.fspath(target)
    if is_cpu_name(target):
        loose = _open_loose(target, order)
        change(loose)
        _save_pair(target, loose)
        return
    pegs = [(path, found) for path, found in iter_pegs(target, order) if peg is None or same_name(path, peg)]
    if not pegs:
        raise GamepakError(f"{target}: no peg {peg!r} in this pack" if peg else f"{target}: holds no peg")
    if len(pegs) > 1:
        listed = ", ".join(path for path, _ in pegs[:5])
        raise GamepakError(f"{target}: holds {len(pegs)} pegs ({listed}...); name one with --peg")
    peg_path, found = pegs[0]
    change(found)
    cpu, gpu = found.to_bytes()
    with _edit(target, asm) as pack:
        pack.replace(peg_path, cpu)
        pack.replace(found.gpu_name or partner_name(peg_path), gpu)


def _edit(target: str, asm: str | os.PathLike[str] | None, dry_run: bool = False) -> Any:
    """The crash-safe edit of a pack that texture changes go through; `asm`, a separate
    `.asm_pc` file, is brought up to date with the changed `.str2_pc` members too. With
    `dry_run` the edit is only planned (`content_files.pack_edit`)."""
    from .content_files import pack_edit

    if asm is None:
        return pack_edit(target, dry_run=dry_run)
    asm = os.fspath(asm)
    if not os.path.isfile(asm):
        raise GamepakError(f"{asm}: no such file (--asm)")
    return pack_edit(target, options={"asm": asm}, dry_run=dry_run)


def _remove_dead_temporaries(target: str) -> None:
    """Remove what a killed import left beside `target` (`.NAME.gamepak-PID-N.tmp` of a dead
    process), as a pack edit does when it opens the pack: the next import that may write cleans
    up, whether it then writes (a loose pair, a rebuilt pack) or not (an in-place edit, nothing
    changed). A dry run leaves them, as the edit verbs' dry runs do."""
    from ..core.atomic import remove_stale_temporaries

    remove_stale_temporaries(os.path.dirname(os.path.abspath(target)), force=True)


def _open_loose(target: str, order: str) -> Peg:
    from ..formats.rfg.peg import Peg

    return Peg.open(target, order)


def _save_pair(target: str, peg: Peg) -> None:
    from ..core.atomic import write_bytes

    cpu, gpu = peg.to_bytes()
    # GPU first: a crash between the two leaves a GPU file the old CPU file still rejects
    # loudly (size field) rather than a silent mix. A CPU file whose bytes stay (new pixels of
    # the same size) is not written at all: the pair is then switched by one rename.
    write_bytes(peg.gpu_name or partner_name(target), gpu, overwrite=True)
    with open(target, "rb") as handle:
        same = handle.read(len(cpu) + 1) == cpu
    if not same:
        write_bytes(target, cpu, overwrite=True)


def _matching_folders(root: str, parts: list[str]) -> list[str]:
    """The folders under `root` standing for the member path `parts`: each component named as
    gamepak's export names it or as RFGM names it (`xray_effect__index_1__pegAlign_16_.cpeg_pc`),
    case ignored as the game ignores it; none when no folder of that path exists."""
    from ..formats.rfg.peg.rfgm_names import plain_name

    found = [root]
    for part in parts:
        wanted = part.lower()
        found_next = []
        for parent in found:
            try:
                names = sorted(os.listdir(parent))
            except (FileNotFoundError, NotADirectoryError):
                continue
            for name in names:
                if wanted in (name.lower(), (plain_name(name) or "").lower()):
                    path = os.path.join(parent, name)
                    if os.path.isdir(path):
                        found_next.append(path)
        found = found_next
    return found


def _import_folder(
    peg: Peg,
    folders: list[str],
    used: set[str],
    progress: Callable[[str], object] | None = None,
    resize: bool = False,
) -> list[str]:
    """Apply the images of `folders` (laid out as export wrote them) to one peg; the names of
    changed textures. `used` gathers the image files that belong to a texture. Besides export's
    names (`STEM.dds`, `STEM.png`, ...) the names RFGM writes are taken (`rfgm_names`: today's
    `STEM__index_N__..._.dds`, RFGM.Archiver's `00000 NAME.tga PcDxt1 4.dds`)."""
    from ..formats.rfg.peg.rfgm_names import rfgm_textures

    listed: list[tuple[str, set[str], dict[str, list[str]]]] = []
    for folder in folders:
        try:
            present = set(os.listdir(folder))
        except (FileNotFoundError, NotADirectoryError):
            continue  # no folder for this peg: nothing of it was exported or edited
        image_names = [name for name in present if name.lower().endswith(IMPORT_SUFFIXES)]
        listed.append((folder, present, rfgm_textures(image_names)))
    changed = []
    for texture in list(peg.textures):
        if progress is not None:
            progress(texture.name)
        stem = _stem(texture.name)
        images: list[tuple[str, bool]] = []
        for folder, present, rfgm in listed:
            names = [(stem + suffix, False) for suffix in IMPORT_SUFFIXES if stem + suffix in present]
            names += [(name, True) for name in rfgm.get(stem.lower(), [])]
            images += [(path, by_rfgm) for name, by_rfgm in names if os.path.isfile(path := os.path.join(folder, name))]
        used.update(path for path, _ in images)
        changes = [
            (path, change)
            for path, by_rfgm in images
            if (change := _image_change(peg, texture, path, resize, by_rfgm)) is not None
        ]
        if len(changes) > 1:
            listed_names = " and ".join(os.path.relpath(path, folders[0]) for path, _ in changes)
            raise GamepakError(f"{folders[0]}: {listed_names} both differ from {texture.name}: keep the one to import")
        if changes:
            path, change = changes[0]
            try:
                change()
            except GamepakError as exc:
                raise GamepakError(f"{path}: {exc}") from None
            changed.append(texture.name)
    return changed


# Images are sized from their header before anything is decoded (`core.pictures`). Without
# `resize`, an image may be at most AREA_FACTOR times the texture's area (an import) or
# DEFAULT_ADD_SIDE squared (an add); with it, up to MAX_SIDE on a side and MAX_PIXELS in all
# (an 8192x8192 image takes about 0.6 GiB to decode and encode).
DDS_HEADERS_MAX = 148  # "DDS ", the 124-byte header and the 20-byte DX10 one
DEFAULT_ADD_SIDE = 4096


def check_image_size(width: int, height: int, what: str, *, texture: PegTexture | None, resize: bool) -> None:
    """Refuse an image size before it is decoded (`core.pictures.check_size`): without
    `resize`, more than AREA_FACTOR times `texture`'s area (DEFAULT_ADD_SIDE squared for a new
    texture, `texture` None)."""
    from ..core.pictures import AREA_FACTOR, check_size

    if texture is None:
        limit, allowed = DEFAULT_ADD_SIDE * DEFAULT_ADD_SIDE, f"{DEFAULT_ADD_SIDE}x{DEFAULT_ADD_SIDE}"
    else:
        limit = AREA_FACTOR * texture.width * texture.height
        allowed = f"{AREA_FACTOR}x the area of {texture.name} ({texture.width}x{texture.height})"
    check_size(width, height, what, area_limit=limit, allowed=allowed, resize=resize)


def _image_change(
    peg: Peg, texture: PegTexture, path: str, resize: bool = False, by_rfgm: bool = False
) -> Callable[[], None] | None:
    """What importing the image at `path` would do to `texture`, or None when it holds what is
    stored already. `by_rfgm`: the file has RFGM.Archiver's name, so its 8888 data is the
    entry's stored bytes whatever `--order` says (RFGM writes the frame as it is and labels
    8888 R8G8B8A8; taken at its label, an untouched export would come back with red and blue
    swapped under the BGRA reading), and its PNG of an 8888 texture shows those bytes read as
    R, G, B, A."""
    from dataclasses import replace

    import numpy as np

    from ..formats.rfg.peg.dds import decode_top, fit_chain, read_dds
    from ..formats.rfg.peg.layout import PixelFormat, max_mips

    name = texture.name
    pixels = None
    if path.lower().endswith(".dds"):
        with open(path, "rb") as handle:
            # Sized from the header first: then no more is read than the largest chain of
            # that size takes (4 bytes a pixel, every mip: under twice the top level).
            head = handle.read(DDS_HEADERS_MAX)
            sized = read_dds(head, path, peg.order)
            check_image_size(sized.width, sized.height, path, texture=texture, resize=resize)
            dds = read_dds(head + handle.read(8 * max(4, sized.width) * max(4, sized.height)), path, peg.order)
        if by_rfgm and dds.stored == (PixelFormat.A8R8G8B8, "RGBA"):
            dds = replace(dds, order="RGBA")  # read as stored: `format` is then the entry's 8888
        if dds.format == texture.format:  # the stored bytes themselves: copied, never re-encoded
            same_size = (dds.width, dds.height) == (texture.width, texture.height)
            mips = texture.mips if same_size else min(texture.mips, max_mips(dds.width, dds.height))
            chain, given = fit_chain(dds, texture.format, mips, path)
            if same_size and chain == peg.mip_data(name):
                return None
            if given < mips:
                import warnings

                warnings.warn(
                    f"{path}: {given} of the {mips} mips {name} has; the other {mips - given} made "
                    "from the smallest given",
                    stacklevel=2,
                )
            return lambda: peg.replace_data(name, chain, dds.width, dds.height, mips)
        pixels = decode_top(dds)
    if pixels is None:
        pixels = read_rgba(path, texture=texture, resize=resize)
        if by_rfgm and texture.format == PixelFormat.A8R8G8B8 and peg.order == "BGRA":
            pixels = pixels[..., [2, 1, 0, 3]]  # RFGM's PNG shows 8888 bytes read as R, G, B, A
    stored = peg.read_image(name)
    if pixels.shape == stored.shape and np.array_equal(pixels, stored):
        return None  # unchanged: never re-encoded
    # An edited image imported once already differs from its lossy decode, but encodes to the
    # stored bytes again: compare what would be written with what is stored, not with the image.
    try:
        chain, width, height, mips = peg.encode_image(name, pixels)
    except GamepakError as exc:
        raise GamepakError(f"{path}: {exc}") from None
    if (width, height, mips) == (texture.width, texture.height, texture.mips) and chain == peg.mip_data(name):
        return None
    return lambda: peg.replace_data(name, chain, width, height, mips)


def read_rgba(path: str, *, texture: PegTexture | None = None, resize: bool = True) -> Any:
    """An image file Pillow reads, as an RGBA array; a GamepakError naming the file when it
    cannot be read or is larger than `check_image_size` allows (sized from its header, before
    its pixels are decoded)."""
    from ..core.pictures import read_rgba as read_sized

    return read_sized(path, lambda width, height: check_image_size(width, height, path, texture=texture, resize=resize))


def _warn_unused(target: str, folder: str, used: set[str], known: list[str], peg: str | None = None) -> None:
    """Name the image files under `folder` that no texture took, each with the nearest texture
    name (a typo in a file name would otherwise be a silent no-op), and the command that adds
    the first without a near name as a new texture. When no image of the folder matched any
    texture, the import did nothing the user meant: a GamepakError (exit 1) instead."""
    import difflib

    from ..formats.rfg.peg.rfgm_names import plain_name

    unused = []
    for parent, _, files in os.walk(folder):
        unused += [
            os.path.relpath(os.path.join(parent, file), folder)
            for file in files
            if file.lower().endswith(IMPORT_SUFFIXES) and os.path.join(parent, file) not in used
        ]
    if not unused:
        return
    unused.sort()
    by_stem = {_stem(name).lower(): name for name in known}

    def stem_of(relative: str) -> str:
        base = os.path.basename(relative)
        plain = _stem(plain_name(base) or base)
        return plain[: -len(".tga")] if plain.lower().endswith(".tga") else plain

    def nearest(relative: str) -> str | None:
        close = difflib.get_close_matches(stem_of(relative).lower(), list(by_stem), n=1)
        return by_stem[close[0]] if close else None

    shown = [
        f"{relative} (nearest texture: {near})" if (near := nearest(relative)) else f"{relative} (no texture near)"
        for relative in unused[:5]
    ]
    listed = ", ".join(shown) + (f" and {len(unused) - 5} more" if len(unused) > 5 else "")
    if not used:
        raise GamepakError(
            f"{folder}: no image matches a texture of {target}, nothing imported: {listed} "
            "(export names each image after its texture; RFGM's names are taken too)"
        )
    import shlex
    import warnings

    advice = ""
    first = next((relative for relative in unused if nearest(relative) is None), None)
    if first is not None:
        words = ["gamepak", "texture", "add", target, os.path.join(folder, first), "--name", stem_of(first)]
        if not is_cpu_name(target):
            # The peg the image's folder stands for (FOLDER/<member path>/image), or --peg's.
            holder = peg if peg is not None else os.path.dirname(first).replace(os.sep, "/")
            if holder:
                words += ["--peg", "/".join(plain_name(part) or part for part in holder.split("/"))]
        advice = f" (`{shlex.join(words)}` adds {first} as a new texture)"
    warnings.warn(
        f"{folder}: {len(unused)} image(s) match no texture and were left alone: {listed}{advice}",
        stacklevel=3,
    )
