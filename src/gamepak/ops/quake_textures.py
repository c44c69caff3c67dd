"""Quake's palette images as PNG files: every image of a WAD, LMP, BSP, SPR, MDL or WAL (loose,
or each such file inside a PAK, ZIP/PK3 or WAD, nested packs included) listed, exported to RGBA
PNG and imported back into the 8-bit form.

Layout of an export (the import reads the same layout back):

| source                          | image file                                      |
|---------------------------------|-------------------------------------------------|
| a loose one-image file          | `OUT/menuplyr.png`                              |
| a loose WAD                     | `OUT/CONCHARS.png`, `OUT/wall1.png` (per lump)  |
| a loose BSP, SPR or MDL         | `OUT/<texture, frame or skin name>.png`         |
| a member of a pack              | `OUT/gfx/menuplyr.png`, `OUT/gfx.wad/CONCHARS.png`, `OUT/maps/e1m1.bsp/{fence.png` |

Import re-encodes only images whose pixels differ from what is stored (an unchanged export
gives the file back byte for byte), with mips rebuilt, then writes each changed file once: a
loose file atomically, a member through one crash-safe `gamepak.edit` of the pack.

The palette: `palette=` (a file) first, then `gfx/palette.lmp` (Quake II: `pics/colormap.pcx`)
in the same pack or beside the file (`palette.lmp`, `gfx/palette.lmp`, `../gfx/palette.lmp`), then the built-in one
(LibreQuake's, identical to Quake's). WAD3 images use their own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import GamepakError
from ..formats.quake import sources
from ..formats.quake.images import PaletteImage, png_from_rgba, rgba_of_indices

PICTURE_SUFFIXES = (".png", ".tga")


@dataclass
class Unit:
    """One file holding images: where it is, its kind, its bytes and its images."""

    path: str  # member path in the pack; the file's name for a loose file
    member: bool
    kind: str
    data: bytes
    images: Sequence[PaletteImage]  # a sprite's frames, a model's skins: made when read
    palette: bytes
    image_paths: Sequence[str] = field(default_factory=list)
    palette_source: str = ""  # where `palette` was found (a file, a member, or built in)

    def path_of(self, index: int, image: PaletteImage) -> str:
        """`image_paths[index]`, from image `index` already made: a model's skins and a
        sprite's frames are made when read, and their lazy paths would make each again for its
        name."""
        if self.kind in sources.SINGLE_KINDS:
            return self.image_paths[index]
        return _image_path(self.path, self.member, image)


def _file_name(name: str) -> str:
    """An image name as a file name (no folders, no NUL)."""
    cleaned = name.replace("/", "_").replace("\\", "_").replace("\0", "_")
    return cleaned if cleaned.strip(".") else f"_{cleaned}"


def _image_paths(unit_path: str, member: bool, kind: str, found: Sequence[PaletteImage]) -> Sequence[str]:
    if kind in sources.SINGLE_KINDS:
        stem, extension = os.path.splitext(unit_path)
        if extension.lower() in sources.EXTENSION_KINDS:
            base = stem
        else:
            base = unit_path  # a WAD lump (`CONCHARS`, `IBAR.BAK`)
        if not member:
            base = os.path.basename(base)
        return [base + ".png"]
    if isinstance(found, list):
        return [_image_path(unit_path, member, image) for image in found]
    from ..core.lazy import Lazy, NamedLazy

    # Made when read, as the images are (a model of a million 1x1 skins), from the names alone
    # where the images have them apart (skins, frames): an export names each file, then makes
    # its image once.
    if isinstance(found, NamedLazy):
        names = found.names
        return Lazy(len(found), lambda index: _path_of_name(unit_path, member, names[index]))
    return Lazy(len(found), lambda index: _image_path(unit_path, member, found[index]))


def _image_path(unit_path: str, member: bool, image: PaletteImage) -> str:
    """Where an image of a file holding several is exported (`Unit.image_paths`)."""
    return _path_of_name(unit_path, member, image.name)


def _path_of_name(unit_path: str, member: bool, name: str) -> str:
    """`_image_path` of an image called `name`."""
    return (unit_path + "/" if member else "") + _file_name(name) + ".png"


class _Palettes:
    """The palettes of one source, each found when first needed (a pack without Quake II images
    never looks for Quake II's): Quake's for every kind but `wal`, Quake II's for `wal`. Each
    comes with where it was found, which the commands print."""

    def __init__(self, source: str, override: str | None, archive: Any | None, required: bool = True) -> None:
        self.source, self.override, self.archive = source, override, archive
        # A listing needs no colours: a palette that cannot be found is said, not refused.
        self.required = required
        self._found: dict[bool, tuple[bytes, str]] = {}

    def for_kind(self, kind: str) -> tuple[bytes, str]:
        quake2 = kind == "wal"
        if quake2 not in self._found:
            try:
                self._found[quake2] = self._quake2() if quake2 else self._quake()
            except GamepakError:
                if self.required:
                    raise
                self._found[quake2] = (b"", "none found (Quake II's pics/colormap.pcx, or --palette, to export)")
        return self._found[quake2]

    def _member(self, names: tuple[str, ...]) -> tuple[bytes, str] | None:
        """The palette of the first member of the pack called one of `names` (case ignored)."""
        from ..formats.quake.palette import palette_from_bytes

        if self.archive is None:
            return None
        # Only the members called one of `names` kept (the last of each, as a dict of every
        # member made them), a WAD's lumps made one at a time: no entry held per member.
        archive = self.archive
        entries = archive.iter_lumps() if hasattr(archive, "iter_lumps") else archive.infolist()
        by_name = {}
        for entry in entries:
            lowered = entry.name.lower()
            if lowered in names:
                by_name[lowered] = entry
        for name in names:
            entry = by_name.get(name)
            if entry is not None:
                label = f"{self.source}:{entry.name}"
                return palette_from_bytes(self.archive.read(entry), label), label
        return None

    def _quake(self) -> tuple[bytes, str]:
        from ..formats.quake.palette import built_in_palette, palette_file_beside, read_palette_file

        if self.override:
            return read_palette_file(self.override), f"{self.override} (--palette)"
        # Quake's palette lump; a Quake II pack keeps its palette at the end of pics/colormap.pcx.
        found = self._member(("gfx/palette.lmp", "palette.lmp", "pics/colormap.pcx"))
        if found is not None:
            return found
        beside = palette_file_beside(self.source)
        if beside is not None:
            return read_palette_file(beside), beside
        return built_in_palette(), "Quake's palette (built in: LibreQuake's)"

    def _quake2(self) -> tuple[bytes, str]:
        from ..formats.quake.palette import quake2_palette_for

        if not self.override:
            found = self._member(("pics/colormap.pcx",))
            if found is not None:
                return found
        return quake2_palette_for(self.source, self.override)


def iter_units(source: str | os.PathLike[str], *, palette: str | None = None, colours: bool = True) -> Iterator[Unit]:
    """Each file holding palette images in `source`, in order (a pack's nested packs where
    they stand), with the palette its images are drawn through (Quake II's for `.wal`);
    without `colours` (a listing), a palette that cannot be found is said, not refused."""
    path = os.fspath(source)
    kind = sources.kind_of_extension(path)
    if kind is not None:
        from ..core.files import read_file

        data = read_file(path)
        name = os.path.splitext(os.path.basename(path))[0]
        found = sources.read_images(kind, data, name, path)
        base = os.path.basename(path)
        drawn, where = _Palettes(path, palette, None, colours).for_kind(kind)
        yield Unit(base, False, kind, data, found, drawn, _image_paths(base, False, kind, found), where)
        return
    from ..core.opening import open as open_archive

    with open_archive(path) as pack:
        yield from _units_in(pack, "", path, _Palettes(path, palette, pack, colours))


# Members opened as packs to look inside (by name: sniffing every member costs more than the rest).
PACK_SUFFIXES = (".wad", ".pak", ".pk3", ".kpf", ".zip")


def _units_in(pack: Any, prefix: str, path: str, palettes: _Palettes) -> Iterator[Unit]:
    """The units of one pack, and of the packs (WADs, PAKs, PK3s) inside it where they stand."""
    from ..formats.quake.wad import Reader as WadReader
    from ..formats.quake.wad import WadEntry

    in_wad = isinstance(pack, WadReader)
    # A WAD's lumps made one at a time (its entries are not kept: ~270 bytes a lump).
    for entry in pack.iter_lumps() if in_wad else pack.infolist():
        member_path = prefix + entry.name
        if in_wad:
            assert isinstance(entry, WadEntry)
            kind = entry.kind if entry.kind in ("qpic", "miptex", "conchars") else None
        else:
            if entry.name.lower().endswith(PACK_SUFFIXES):
                with pack.open_archive(entry) as inner:
                    yield from _units_in(inner, member_path + "/", path, palettes)
                continue
            kind = sources.kind_of_extension(entry.name)
        if kind is None:
            continue
        data = pack.read(entry)
        if kind == "qpic" and not in_wad:
            kind = sources.kind_of_file(entry.name, data)
            if kind is None:
                continue
        label = f"{path}:{member_path}"
        name = entry.name if in_wad else os.path.splitext(os.path.basename(entry.name))[0]
        found = sources.read_images(kind, data, name, label, wad3=in_wad and pack.wad3)
        colours, where = palettes.for_kind(kind)
        yield Unit(member_path, True, kind, data, found, colours, _image_paths(member_path, True, kind, found), where)


def list_textures(source: str | os.PathLike[str], *, palette: str | None = None) -> Iterator[dict[str, object]]:
    """Each image of `source` as {file, name, image, kind, width, height, mips, transparent,
    palette} (`image`: its path in an export, without `.png`; `palette`: where the colours
    come from): what `texture ls --json` prints for Quake files. The rows come as they are
    read (a model of a million skins is listed without holding a row per skin)."""
    return (
        {
            "file": unit.path,
            "image": relative[: -len(".png")],
            "name": image.name,
            "kind": image.kind,
            "width": image.width,
            "height": image.height,
            "mips": len(image.mips),
            "transparent": image.transparent,
            "palette": "own (WAD3)" if image.palette is not None else unit.palette_source,
        }
        for unit in iter_units(source, palette=palette, colours=False)
        for index, image in enumerate(unit.images)
        for relative in (unit.path_of(index, image),)
    )


def ls_line(row: dict[str, object]) -> str:
    """One line of `texture ls` for a row of `list_textures`."""
    clear = "-" if row["transparent"] is None else str(row["transparent"])
    return (
        f"{row['width']:>5}x{row['height']:<5} {row['kind']:<8} {row['mips']} mip{'s' if row['mips'] != 1 else ' '} "
        f"clear {clear:>3}  {row['image']}"
    )


def export_textures(
    source: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    names: Iterable[str] = (),
    overwrite: bool = False,
    palette: str | None = None,
    progress: Callable[[str], object] | None = None,
    palettes: list[str] | None = None,
) -> Sequence[str]:
    """Write every image of `source` (only those called `names`, if given) under `output` as an
    RGBA PNG; returns the files written. `palettes` gets where each palette used was found."""
    from array import array
    from bisect import bisect_right

    from ..core.lazy import Lazy
    from ..formats.quake.images import png_of
    from .made_files import write_made_files

    wanted = {name.lower() for name in names}
    # What to write, in order: runs of pictures of files holding a few (a WAD's lumps, a BSP's
    # textures), kept as their pixels until each PNG is made as its file is written
    # (`_Pictures`), or a whole sprite's or model's unit, whose images are made then too (a
    # million 1x1 skins never held as images or PNGs). `starts`: each run's first file number.
    runs: list[_Pictures | Unit | tuple[str, bytes | list[bytes]]] = []
    starts = array("q", [0])
    wad_palette = b""
    seen: set[str] = set()
    for unit in iter_units(source, palette=palette):
        if not wanted and isinstance(unit.images, Lazy):
            if unit.images:  # sprite frames and model skins: none without pixels
                _note_palette(palettes, unit, None)  # never their own palette: none made to ask
                runs.append(unit)
                starts.append(starts[-1] + len(unit.images))
            continue
        for index, image in enumerate(unit.images):
            if wanted and image.name.lower() not in wanted:
                continue
            if not image.mips:
                continue  # a BSP texture kept as its header only (qbsp -notex)
            if wanted:  # a set of every name only to say which was not found
                seen.add(image.name.lower())
            wad_palette = unit.palette
            _note_palette(palettes, unit, image)
            if not runs or not isinstance(runs[-1], _Pictures):
                runs.append(_Pictures())
                starts.append(starts[-1])
            pictures_run = runs[-1]
            assert isinstance(pictures_run, _Pictures)
            pictures_run.add(unit.image_paths[index], image, unit.palette)
            starts[-1] += 1
    missing = wanted - seen
    if missing:
        raise GamepakError(f"{os.fspath(source)}: no image called {', '.join(sorted(missing))}")

    def file(number: int) -> tuple[str, bytes | list[bytes] | Callable[[], bytes]]:
        run = bisect_right(starts, number) - 1
        found = runs[run]
        if isinstance(found, tuple):
            return found
        if isinstance(found, _Pictures):
            return found.file(number - starts[run], progress)
        unit, index = found, number - starts[run]
        relative = unit.image_paths[index]

        def png() -> bytes:
            if progress is not None:
                progress(relative)
            return png_of(unit.images[index], unit.palette)

        return relative, png

    pictures = starts[-1]
    manifest: list[tuple[str, bytes | list[bytes]]] = []
    if not wanted and pictures:
        from .wad_manifest import is_loose_wad, manifest_files

        if is_loose_wad(os.fspath(source)):
            # What `texture build` needs to give this WAD back byte for byte (issue 47).
            manifest = manifest_files(os.fspath(source), wad_palette, _exported(runs))
    for run in manifest:
        runs.append(run)
        starts.append(starts[-1] + 1)
    written = write_made_files(output, Lazy(starts[-1], file), overwrite=overwrite)
    return written[:pictures] if manifest else written


def _exported(runs: Sequence[object]) -> Container[str]:
    """The paths of the pictures of `runs`, for `in` (a set of their str took ~150 bytes a
    picture; `PackedStrings.lookup` 8)."""
    from ..core.lazy import PackedStrings

    blocks = [run.paths for run in runs if isinstance(run, _Pictures)]
    if len(blocks) == 1:
        return blocks[0].lookup()
    paths = PackedStrings()
    for block in blocks:
        for path in block:
            paths.append(path)
    return paths.lookup()


class _Pictures:
    """Pictures to export, each kept as what its PNG is made from until its file is written:
    its pixels (the mip-0 bytes the reader made, not copied), size, transparent index and
    palette as array items, its path packed. A WAD of 100,000 1x1 pictures held a PNG, a
    tuple and a path per picture (~250 bytes) from its reading to the end of the export."""

    def __init__(self) -> None:
        from array import array

        from ..core.lazy import PackedStrings

        self.paths = PackedStrings()
        self.pixels: list[bytes] = []
        self.sides = array("I")  # width, height
        self.transparent = array("h")  # -1: none
        self.palette_numbers = array("I")
        self.palettes: list[bytes] = []
        self._palette_number: dict[bytes, int] = {}

    def add(self, relative: str, image: PaletteImage, palette: bytes) -> None:
        """Keep `image` (drawn through its own palette, else `palette`) to write at `relative`."""
        colours = image.palette or palette
        number = self._palette_number.get(colours)
        if number is None:
            number = self._palette_number[colours] = len(self.palettes)
            self.palettes.append(colours)
        self.paths.append(relative)
        self.pixels.append(image.pixels)
        self.sides.extend((image.width, image.height))
        self.transparent.append(-1 if image.transparent is None else image.transparent)
        self.palette_numbers.append(number)

    def file(self, index: int, progress: Callable[[str], object] | None) -> tuple[str, Callable[[], bytes]]:
        """(path, a function making the PNG) of picture `index`."""
        relative = self.paths[index]

        def png() -> bytes:
            if progress is not None:
                progress(relative)
            transparent = self.transparent[index]
            colours = self.palettes[self.palette_numbers[index]]
            rgba = rgba_of_indices(self.pixels[index], colours, None if transparent < 0 else transparent)
            return png_from_rgba(self.sides[2 * index], self.sides[2 * index + 1], rgba)

        return relative, png


def _note_palette(palettes: list[str] | None, unit: Unit, image: PaletteImage | None) -> None:
    """Add where `unit`'s palette was found to `palettes` (once), unless the image has its own
    (None: an image that never has, a sprite's frame or a model's skin)."""
    has_own = image is not None and image.palette is not None
    if palettes is not None and not has_own and unit.palette_source not in palettes:
        palettes.append(unit.palette_source)


def _picture_for(folder: str, relative: str) -> str | None:
    stem = os.path.join(folder, *relative[: -len(".png")].split("/"))
    for suffix in PICTURE_SUFFIXES:
        if os.path.isfile(stem + suffix):
            return stem + suffix
    return None


def reencode(image: PaletteImage, rgba: object, palette: bytes) -> PaletteImage:
    """A new image of the same kind from RGBA pixels: nearest palette colours (fullbrights
    only where the picture has them exactly), the asset's transparent index for clear pixels,
    mips rebuilt."""
    import numpy as np

    from ..formats.quake.images import build_mips, from_rgba

    pixels = np.asarray(rgba)
    own = image.palette or palette
    indices = from_rgba(pixels, own, image.transparent, fullbright=False)
    height, width = indices.shape
    mips = [indices.tobytes()]
    if len(image.mips) > 1:
        if width % 8 or height % 8:
            raise GamepakError(
                f"{image.name}: a texture with mips must be a multiple of 8 wide and high, not {width}x{height}"
            )
        mips += build_mips(indices, own, image.transparent)
    return PaletteImage(
        image.name, image.kind, width, height, mips, image.transparent, image.palette, image.header, dict(image.extras)
    )


def read_sized(path: str, image: PaletteImage, resize: bool) -> Any:
    """The picture at `path` as RGBA pixels, sized from its header before it is decoded: up to
    `core.pictures.AREA_FACTOR` times the area of `image` (the one it replaces) as it is; a
    larger one is refused, or with `resize` scaled to `image`'s size once decoded (never one
    past `core.pictures.MAX_SIDE`/`MAX_PIXELS`)."""
    from ..core.pictures import AREA_FACTOR, check_size, read_rgba

    limit = AREA_FACTOR * image.width * image.height
    allowed = f"{AREA_FACTOR}x the area of {image.name} ({image.width}x{image.height})"

    def check(width: int, height: int) -> None:
        check_size(width, height, path, area_limit=limit, allowed=allowed, resize=resize)

    def fit(width: int, height: int) -> tuple[int, int] | None:
        return (image.width, image.height) if width * height > limit else None

    return read_rgba(path, check, fit=fit)


def import_textures(
    target: str | os.PathLike[str],
    folder: str | os.PathLike[str],
    *,
    dry_run: bool = False,
    palette: str | None = None,
    progress: Callable[[str], object] | None = None,
    resize: bool = False,
    palettes: list[str] | None = None,
) -> list[str]:
    """Import a folder laid out as `export_textures` writes it into `target`: images whose
    pixels differ from what is stored are re-encoded; returns the changed images' paths. Each
    picture is sized from its header first (`read_sized`): more than 4x the area of the image
    it replaces is refused, or with `resize` scaled to that image's size. `palettes` gets where
    each palette used was found."""
    import numpy as np

    from ..core.atomic import remove_stale_temporaries
    from ..formats.quake.images import to_rgba

    path = os.fspath(target)
    root = os.fspath(folder)
    # What a killed import left beside the target goes first, as a pack edit does on opening;
    # a dry run is read-only (the edit verbs' dry runs clear nothing either).
    if not dry_run:
        remove_stale_temporaries(os.path.dirname(os.path.abspath(path)), force=True)
    changed_names: list[str] = []
    replacements: list[tuple[Unit, bytes]] = []
    for unit in iter_units(path, palette=palette):
        changed: dict[int, PaletteImage] = {}
        for index, image in enumerate(unit.images):
            relative = unit.path_of(index, image)
            picture = _picture_for(root, relative)
            if picture is None:
                continue
            if not image.mips:
                continue
            if progress is not None:
                progress(relative)
            _note_palette(palettes, unit, image)
            rgba = read_sized(picture, image, resize)
            if rgba.shape[:2] == (image.height, image.width) and np.array_equal(rgba, to_rgba(image, unit.palette)):
                continue
            new = reencode(image, rgba, unit.palette)
            if (new.width, new.height, new.pixels) == (image.width, image.height, image.pixels):
                continue  # off-palette colours that map back to the stored indices
            changed[index] = new
            changed_names.append(relative[: -len(".png")])
        if changed:
            label = f"{path}:{unit.path}" if unit.member else path
            replacements.append((unit, sources.replace_images(unit.kind, unit.data, label, changed)))
    if not replacements:
        return changed_names
    if not replacements[0][0].member:
        if not dry_run:
            from ..core.atomic import write_bytes

            write_bytes(path, replacements[0][1], overwrite=True)
        return changed_names
    from .content_files import pack_edit

    with pack_edit(path, dry_run=dry_run) as pack:
        for unit, data in replacements:
            pack.replace(unit.path, data)
    return changed_names
