"""Which Quake files hold palette images, how to read them out and how to put edited ones back.

| kind       | file / lump                         | images                         | put back            |
|------------|-------------------------------------|--------------------------------|---------------------|
| `qpic`     | `gfx/*.lmp`, WAD lump type 0x42     | the picture                    | any size            |
| `miptex`   | WAD lump type 0x44 (WAD3 0x43)      | mip 0 (mips 1-3 rebuilt)       | any size            |
| `conchars` | WAD lump `CONCHARS`                 | 128x128 font (0 transparent)   | same size           |
| `wal`      | Quake II `.wal`                     | mip 0 (mips rebuilt)           | any size            |
| `bsp`      | `maps/*.bsp` textures lump          | each embedded miptex           | same size, in place |
| `spr`      | `.spr` sprite frames                | each frame                     | same size, in place |
| `mdl`      | `.mdl` skins                        | each skin (group members too)  | same size, in place |

A `.lmp` that is not a qpic (palette, colormap, pop) holds no image here.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Sequence

from ...core.lazy import Lazy
from ...errors import GamepakError
from . import bsp, images, mdl, spr
from .images import PaletteImage

# Kinds whose file is one image; the others hold several.
SINGLE_KINDS = ("qpic", "miptex", "conchars", "wal")
EXTENSION_KINDS = {".lmp": "qpic", ".wal": "wal", ".bsp": "bsp", ".spr": "spr", ".mdl": "mdl", ".mip": "miptex"}
NOT_PICTURES = {"palette.lmp", "colormap.lmp", "pop.lmp"}
HEADS = {b"IDSP": "spr", b"IDPO": "mdl", b"BSP2": "bsp", b"2PSB": "bsp", b"\x1d\x00\x00\x00": "bsp"}


def kind_of_file(name: str, data: bytes) -> str | None:
    """The image kind of a file (or member) called `name` holding `data`, None for none."""
    base = os.path.basename(name).lower()
    extension = os.path.splitext(base)[1]
    kind = EXTENSION_KINDS.get(extension)
    if kind == "qpic":
        return "qpic" if base not in NOT_PICTURES and images.is_qpic(data) else None
    if kind is not None:
        return kind
    return HEADS.get(bytes(data[:4]))


def has_signature(kind: str, data: bytes) -> bool:
    """Whether `data` starts as a file of `kind` does (magic, or a header that fits the size):
    a gate for scanners that meet files by name only, as pegs are gated by their `GEKV`."""
    if kind == "bsp":
        if len(data) < bsp.HEADER.size or data[:4] not in bsp.VERSIONS:
            return False
        fields = bsp.HEADER.unpack_from(data)
        return all(0 <= fields[1 + 2 * i] <= fields[1 + 2 * i] + fields[2 + 2 * i] <= len(data) for i in range(15))
    if kind == "mdl":
        return data[:4] == mdl.MAGIC
    if kind == "spr":
        return data[:4] == spr.MAGIC
    if kind == "qpic":
        return images.is_qpic(data)
    if kind == "wal":
        return len(data) >= images.WAL_HEADER.size
    return True


def kind_of_extension(name: str) -> str | None:
    """The kind a file name suggests (before reading it)."""
    return EXTENSION_KINDS.get(os.path.splitext(name.lower())[1])


def read_images(kind: str, data: bytes, name: str, label: str, *, wad3: bool = False) -> Sequence[PaletteImage]:
    """The images a file of `kind` holds (`name`: the texture name of a one-image file); a
    sprite's frames and a model's skins are made when read (there may be a million)."""
    if kind == "qpic":
        return [images.read_qpic(data, name, label)]
    if kind == "miptex":
        return [images.read_miptex(data, name, label, wad3=wad3)]
    if kind == "conchars":
        return [images.read_conchars(data, name, label)]
    if kind == "wal":
        return [images.read_wal(data, name, label)]
    if kind == "bsp":
        return _unique([texture for _span, texture in bsp.MapFile(data, label).distinct_textures()])
    if kind == "spr":
        return spr.read(data, label).images(data)
    if kind == "mdl":
        return mdl.read(data, label).skin_images(data)
    raise GamepakError(f"{label}: no images in a file of kind {kind!r}")


def _unique(found: list[PaletteImage]) -> list[PaletteImage]:
    """Images with distinct names (a repeated name gets `#2`, `#3`...), in order."""
    seen: dict[str, int] = {}
    for image in found:
        key = image.name.lower()
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            image.extras["number"] = seen[key]
            image.name = f"{image.name}#{seen[key]}"
    return found


def encode(image: PaletteImage) -> bytes:
    """The bytes of a one-image file."""
    if image.kind == "qpic":
        return images.write_qpic(image)
    if image.kind == "miptex":
        return images.write_miptex(image)
    if image.kind == "conchars":
        return images.write_conchars(image)
    if image.kind == "wal":
        return images.write_wal(image)
    raise GamepakError(f"cannot write an image of kind {image.kind!r} alone")


def replace_images(kind: str, data: bytes, label: str, changed: dict[int, PaletteImage]) -> bytes:
    """The file's bytes with the images at the given positions (as `read_images` lists them)
    replaced. One-image kinds are written anew; the others are patched in place, so each new
    image must keep its size."""
    if kind in SINGLE_KINDS:
        return encode(changed[0])
    old = read_images(kind, data, "", label)
    result = bytearray(data)
    if kind == "bsp":
        map_file = bsp.MapFile(data, label)
        lump = map_file.lumps[2]
        spans = [span for span, _texture in map_file.distinct_textures()]
        for index, image in changed.items():
            _same_size(old[index], image, label)
            start, end = spans[index]
            # The mips go where the record's own offsets say (kept, as the size is the same, so
            # each fits where it was read; offsets may share bytes, so no record is laid out anew).
            original = data[lump.offset + start : lump.offset + end]
            offsets = struct.unpack_from("<4I", original, 24)
            if len(image.mips) != len(offsets):
                raise GamepakError(f"{label}: texture {image.name!r} needs {len(offsets)} mips, not {len(image.mips)}")
            for mip, offset in zip(image.mips, offsets, strict=True):
                result[lump.offset + start + offset : lump.offset + start + offset + len(mip)] = mip
        return bytes(result)
    if kind in ("spr", "mdl"):
        # Frames and skins are plain pixel runs at known offsets.
        if kind == "spr":
            frames = spr.read(data, label).frames
            starts: Sequence[int] = Lazy(len(frames), lambda index: frames[index].pixel_offset)
        else:
            skins = mdl.read(data, label).skins
            starts = Lazy(len(skins), lambda index: skins[index].offset)
        for index, image in changed.items():
            _same_size(old[index], image, label)
            result[starts[index] : starts[index] + len(image.pixels)] = image.pixels
        return bytes(result)
    raise GamepakError(f"{label}: cannot put images back into a file of kind {kind!r}")


def _same_size(old: PaletteImage, new: PaletteImage, label: str) -> None:
    if (old.width, old.height) != (new.width, new.height):
        raise GamepakError(
            f"{label}: image {old.name!r} is {old.width}x{old.height}; the new one is {new.width}x{new.height} "
            "(images inside maps, sprites and models keep their size)"
        )
