"""RFG textures as files: every texture of a peg (loose, or each peg inside a pack) exported to
PNG or DDS, a folder laid out that way imported back, textures added and removed.

A loose peg is a CPU file (`.cpeg_pc`/`.cvbm_pc`) with its GPU partner beside it; it is
rewritten GPU file first (see `_save_pair`). Inside a pack, every change goes through one
crash-safe `edit` of the pack, which rebuilds the `.str2_pc` holding the pair and brings its
`.asm_pc` container up to date. `gamepak texture` is a thin layer over these functions.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..errors import GamepakError
from ..formats.rfg.peg.sources import is_cpu_name, iter_pegs, partner_name

if TYPE_CHECKING:
    from ..formats.rfg.peg import Peg, PixelFormat

IMAGE_KINDS = ("png", "dds")


def _stem(name: str) -> str:
    """A texture's name without its `.tga`: the file name export gives it."""
    return name.rsplit(".", 1)[0]


def export_textures(
    source: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    kind: str = "png",
    names: Iterable[str] = (),
    overwrite: bool = False,
    order: str = "BGRA",
) -> list[str]:
    """Write each texture of `source` (a CPU file, or every peg in a pack) under `output` as a
    PNG (top mip, RGBA) or a DDS (every mip, the stored bytes); returns the files written.
    A pack's textures are laid out by member path (`OUT/zone.str2_pc/x.cpeg_pc/name.png`).
    `names` (with or without `.tga`) picks textures; one not found is an error."""
    import io

    from ..core.names import safe_parts
    from .extract import write_files

    if kind not in IMAGE_KINDS:
        raise GamepakError(f"unknown image kind {kind!r} (png or dds)")
    source, output = os.fspath(source), os.fspath(output)
    wanted = {_stem(name) for name in names}
    found: set[str] = set()
    loose = is_cpu_name(os.path.basename(source))
    written: list[str] = []
    for peg_path, peg in iter_pegs(source, order):
        # One peg's images are written together, through extraction's safe path: names
        # checked, no folder on the way a link, the set appearing at once or not at all.
        folder = [] if loose else safe_parts(peg_path)
        images: list[tuple[str, bytes]] = []
        for texture in peg.textures:
            stem = _stem(texture.name)
            if wanted and stem not in wanted:
                continue
            found.add(stem)
            if kind == "dds":
                data = peg.to_dds(texture.name)
            else:
                buffer = io.BytesIO()
                peg.read_pil(texture.name).save(buffer, "PNG")
                data = buffer.getvalue()
            images.append(("/".join([*folder, *safe_parts(f"{stem}.{kind}")]), data))
        if images:
            written += write_files(output, images, overwrite=overwrite)
    missing = wanted - found
    if missing:
        raise GamepakError(f"{source}: no texture named {', '.join(sorted(missing))}")
    return written


def import_textures(
    target: str | os.PathLike[str], folder: str | os.PathLike[str], *, order: str = "BGRA"
) -> list[str]:
    """Import a folder laid out as `export_textures` wrote it into `target` (a CPU file or a
    pack); returns the changed textures (their names; `peg path/name` in a pack). Only images
    that differ from what is stored change anything: an unchanged PNG is never re-encoded, a
    DDS of the entry's format is copied as is."""
    target, folder = os.fspath(target), os.fspath(folder)
    if is_cpu_name(target):
        peg = _open_loose(target, order)
        changed = _import_folder(peg, folder)
        if changed:
            _save_pair(target, peg)
        return changed
    # Each peg's folder is FOLDER/<member path>; all changes go through one edit of the pack.
    replacements: dict[str, bytes] = {}
    changed = []
    for peg_path, peg in iter_pegs(target, order):
        names = _import_folder(peg, os.path.join(folder, *peg_path.split("/")))
        if names:
            replacements[peg_path], replacements[partner_name(peg_path)] = peg.to_bytes()
            changed += [f"{peg_path}/{name}" for name in names]
    if replacements:
        from .edit import edit

        with edit(target) as pack:
            for member, data in replacements.items():
                pack.replace(member, data)
    return changed


def add_texture(
    target: str | os.PathLike[str],
    image: Any,
    name: str,
    pixel_format: PixelFormat | str = "DXT5",
    *,
    peg: str | None = None,
    order: str = "BGRA",
) -> None:
    """Add a texture to a peg file, or to the peg `peg` (member path) of a pack: `image` is a
    path Pillow reads, a Pillow image or an RGBA array; `pixel_format` a `PixelFormat` or a
    label (`DXT5`, `8888`, ...). The name block and, in a pack, the `.asm_pc` are updated."""
    from ..formats.rfg.peg.layout import PixelFormat, format_by_label

    if not isinstance(pixel_format, PixelFormat):
        try:
            pixel_format = format_by_label(pixel_format)
        except ValueError as exc:
            raise GamepakError(str(exc)) from None
    where = ""
    if isinstance(image, (str, os.PathLike)):
        from PIL import Image

        where = os.fspath(image)
        try:
            with Image.open(where) as opened:
                image = opened.convert("RGBA")
        except OSError as exc:
            raise GamepakError(f"{where}: not an image Pillow reads ({exc})") from None

    def add(peg_file: Peg) -> None:
        try:
            peg_file.add_texture(name, image, pixel_format)
        except GamepakError as exc:
            raise GamepakError(f"{where}: {exc}" if where else str(exc)) from None

    change_peg(target, add, peg=peg, order=order)


def remove_textures(target: str | os.PathLike[str], names: Iterable[str], *, peg: str | None = None) -> None:
    """Remove textures from a peg file, or from the peg `peg` (member path) of a pack; later
    textures move down."""
    names = list(names)

    def remove(peg_file: Peg) -> None:
        for name in names:
            peg_file.remove_texture(name)

    change_peg(target, remove, peg=peg)


def change_peg(
    target: str | os.PathLike[str], change: Callable[[Peg], object], *, peg: str | None = None, order: str = "BGRA"
) -> None:
    """Apply `change(peg)` to a peg file, or to the peg `peg` of the pack `target` (its only one
    when not named), and write the result back."""
    target = os.fspath(target)
    if is_cpu_name(target):
        loose = _open_loose(target, order)
        change(loose)
        _save_pair(target, loose)
        return
    pegs = [(path, found) for path, found in iter_pegs(target, order) if peg is None or path.lower() == peg.lower()]
    if not pegs:
        raise GamepakError(f"{target}: no peg {peg!r} in this pack" if peg else f"{target}: holds no peg")
    if len(pegs) > 1:
        listed = ", ".join(path for path, _ in pegs[:5])
        raise GamepakError(f"{target}: holds {len(pegs)} pegs ({listed}...); name one with --peg")
    peg_path, found = pegs[0]
    change(found)
    cpu, gpu = found.to_bytes()
    from .edit import edit

    with edit(target) as pack:
        pack.replace(peg_path, cpu)
        pack.replace(partner_name(peg_path), gpu)


def _open_loose(target: str, order: str) -> Peg:
    from ..formats.rfg.peg import Peg

    return Peg.open(target, order)


def _save_pair(target: str, peg: Peg) -> None:
    from ..core.atomic import write_bytes

    cpu, gpu = peg.to_bytes()
    # GPU first: a crash between the two leaves a GPU file the old CPU file still rejects
    # loudly (size field) rather than a silent mix.
    write_bytes(partner_name(target), gpu, overwrite=True)
    write_bytes(target, cpu, overwrite=True)


def _import_folder(peg: Peg, folder: str) -> list[str]:
    """Apply a folder laid out as export wrote it to one peg; the names of changed textures."""
    import numpy as np
    from PIL import Image

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
