"""RFG textures as files: every texture of a peg (loose, or each peg inside a pack) exported to
PNG or DDS, a folder laid out that way imported back, textures added and removed.

A loose peg is a CPU file (`.cpeg_pc`/`.cvbm_pc`) with its GPU partner beside it; it is
rewritten GPU file first (see `_save_pair`). Inside a pack, every change goes through one
crash-safe `edit` of the pack, which rebuilds the `.str2_pc` holding the pair and brings its
`.asm_pc` container up to date. `gamepak texture` is a thin layer over these functions.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ..errors import GamepakError
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
) -> list[str]:
    """Write each texture of `source` (a CPU file, or every peg in a pack; `peg`: only that
    member path) under `output` as a PNG (top mip, RGBA) or a DDS (every mip, the stored
    bytes); returns the files written. A pack's textures are laid out by member path
    (`OUT/zone.str2_pc/x.cpeg_pc/name.png`). `names` (with or without `.tga`) picks textures;
    one not found is an error. `progress(path)` is called as each image is made."""
    import io

    from ..core.names import safe_parts
    from .safe_tree import write_files

    if kind not in IMAGE_KINDS:
        raise GamepakError(f"unknown image kind {kind!r} (png or dds)")
    source, output = os.fspath(source), os.fspath(output)
    wanted = {_stem(name) for name in names}
    exported: set[str] = set()
    loose = is_cpu_name(os.path.basename(source))
    written: list[str] = []
    for peg_path, holder in _pegs(source, order, peg):
        # One peg's images are written together, through extraction's safe path: names
        # checked, no folder on the way a link, the set appearing at once or not at all.
        folder = [] if loose else safe_parts(peg_path)
        images: list[tuple[str, bytes]] = []
        for texture in holder.textures:
            stem = _stem(texture.name)
            if wanted and stem not in wanted:
                continue
            exported.add(stem)
            if kind == "dds":
                data = holder.to_dds(texture.name)
            else:
                buffer = io.BytesIO()
                holder.read_pil(texture.name).save(buffer, "PNG")
                data = buffer.getvalue()
            images.append(("/".join([*folder, *safe_parts(f"{stem}.{kind}")]), data))
            if progress is not None:
                progress(images[-1][0])
        if images:
            written += write_files(output, images, overwrite=overwrite)
    missing = wanted - exported
    if missing:
        raise GamepakError(f"{source}: no texture named {', '.join(sorted(missing))}")
    return written


def import_textures(
    target: str | os.PathLike[str],
    folder: str | os.PathLike[str],
    *,
    order: str = "BGRA",
    dry_run: bool = False,
    peg: str | None = None,
    progress: Callable[[str], object] | None = None,
) -> list[str]:
    """Import a folder laid out as `export_textures` wrote it into `target` (a CPU file or a
    pack); returns the changed textures (their names; `peg path/name` in a pack). Only images
    that differ from what is stored change anything: an unchanged image is never re-encoded, a
    DDS of the entry's format is copied as is, any other image (PNG, TGA, BMP, TIFF, a DDS of
    another format) is encoded into the entry's format with its mips made again. Image files
    that match no texture are named in a warning. `dry_run` checks and reports, writing nothing;
    `peg` imports into that member path only; `progress(name)` is called as each texture is
    checked."""
    target, folder = os.fspath(target), os.fspath(folder)
    if not os.path.isdir(folder):
        raise GamepakError(f"{folder}: not a folder (export writes one to import from)")
    used: set[str] = set()
    if is_cpu_name(target):
        loose = _open_loose(target, order)
        changed = _import_folder(loose, folder, used, progress)
        if changed and not dry_run:
            _save_pair(target, loose)
    else:
        # Each peg's folder is FOLDER/<member path>; all changes go through one edit of the pack.
        replacements: dict[str, bytes] = {}
        changed = []
        for peg_path, holder in _pegs(target, order, peg):
            peg_folder = os.path.join(folder, *peg_path.split("/"))
            names = _import_folder(holder, peg_folder, used, progress)
            if names:
                replacements[peg_path], replacements[holder.gpu_name or partner_name(peg_path)] = holder.to_bytes()
                changed += [f"{peg_path}/{name}" for name in names]
        if replacements and not dry_run:
            from .edit import edit

            with edit(target) as pack:
                for member, data in replacements.items():
                    pack.replace(member, data)
        if peg is not None:  # the other pegs' folders were not meant
            folder = peg_folder
    _warn_unused(folder, used)
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
        where = os.fspath(image)
        image = read_rgba(where)

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
    pegs = [(path, found) for path, found in iter_pegs(target, order) if peg is None or same_name(path, peg)]
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
        pack.replace(found.gpu_name or partner_name(peg_path), gpu)


def _open_loose(target: str, order: str) -> Peg:
    from ..formats.rfg.peg import Peg

    return Peg.open(target, order)


def _save_pair(target: str, peg: Peg) -> None:
    from ..core.atomic import write_bytes

    cpu, gpu = peg.to_bytes()
    # GPU first: a crash between the two leaves a GPU file the old CPU file still rejects
    # loudly (size field) rather than a silent mix.
    write_bytes(peg.gpu_name or partner_name(target), gpu, overwrite=True)
    write_bytes(target, cpu, overwrite=True)


def _import_folder(peg: Peg, folder: str, used: set[str], progress: Callable[[str], object] | None = None) -> list[str]:
    """Apply a folder laid out as export wrote it to one peg; the names of changed textures.
    `used` gathers the image files that belong to a texture."""
    try:
        present = set(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []  # no folder for this peg: nothing of it was exported or edited
    changed = []
    for texture in list(peg.textures):
        if progress is not None:
            progress(texture.name)
        stem = _stem(texture.name)
        images = [os.path.join(folder, stem + suffix) for suffix in IMPORT_SUFFIXES if stem + suffix in present]
        images = [path for path in images if os.path.isfile(path)]
        used.update(images)
        changes = [(path, change) for path in images if (change := _image_change(peg, texture, path)) is not None]
        if len(changes) > 1:
            listed = " and ".join(os.path.basename(path) for path, _ in changes)
            raise GamepakError(f"{folder}: {listed} both differ from {texture.name}: keep the one to import")
        if changes:
            path, change = changes[0]
            try:
                change()
            except GamepakError as exc:
                raise GamepakError(f"{path}: {exc}") from None
            changed.append(texture.name)
    return changed


def _image_change(peg: Peg, texture: PegTexture, path: str) -> Callable[[], None] | None:
    """What importing the image at `path` would do to `texture`, or None when it holds what is
    stored already."""
    import numpy as np

    from ..formats.rfg.peg.dds import read_dds

    name = texture.name
    if path.lower().endswith(".dds"):
        with open(path, "rb") as handle:
            dds = read_dds(handle.read(), path, peg.order)
        if dds.format == texture.format:  # the stored bytes themselves: copied, never re-encoded
            if (dds.width, dds.height, dds.mips) == (texture.width, texture.height, texture.mips) and (
                dds.data == peg.mip_data(name)
            ):
                return None
            return lambda: peg.replace_data(name, dds.data, dds.width, dds.height, dds.mips)
    pixels = read_rgba(path)
    stored = peg.read_image(name)
    if pixels.shape == stored.shape and np.array_equal(pixels, stored):
        return None  # unchanged: never re-encoded
    return lambda: peg.replace_image(name, pixels)


def read_rgba(path: str) -> Any:
    """An image file Pillow reads, as an RGBA array; a GamepakError naming the file when it
    cannot be read."""
    import numpy as np
    from PIL import Image

    try:
        with Image.open(path) as image:
            return np.asarray(image.convert("RGBA"))
    except (OSError, ValueError, SyntaxError, EOFError, Image.DecompressionBombError) as exc:
        raise GamepakError(f"{path}: not an image Pillow reads ({exc})") from None


def _warn_unused(folder: str, used: set[str]) -> None:
    """Name the image files under `folder` that no texture took (a typo in a file name would
    otherwise be a silent no-op)."""
    unused = []
    for parent, _, files in os.walk(folder):
        unused += [
            os.path.relpath(os.path.join(parent, file), folder)
            for file in files
            if file.lower().endswith(IMPORT_SUFFIXES) and os.path.join(parent, file) not in used
        ]
    if unused:
        import warnings

        unused.sort()
        listed = ", ".join(unused[:5]) + (f" and {len(unused) - 5} more" if len(unused) > 5 else "")
        warnings.warn(
            f"{folder}: {len(unused)} image(s) match no texture and were left alone: {listed} "
            "(`gamepak texture add` adds a texture)",
            stacklevel=3,
        )
