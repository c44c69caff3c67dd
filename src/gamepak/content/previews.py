"""The registry's own verbs: what the viewer and the catalog ask of a content file, in the one
call signature of each verb (`gamepak.content.FAMILIES`), for the kinds whose format modules
do not offer it themselves. Each takes the file's bytes (already read, bounded by the caller)
and a label naming the file in messages; none reads anything else but what it is handed
(a peg's GPU partner comes as a function that reads it).

    textures: gallery(data, name, label) -> [{name, width, height, format, mips}]
              png(data, name, label, texture, mip) -> PNG bytes
              rows(data, name, label) -> catalog textures rows (pegs, Quake images, sprites)
    models:   counts(data, label) -> {vertices, faces, size}; glb(data, label) -> binary glTF
    strings:  strings(data, label) -> (what, [(index, key, string)]) or None
"""

from __future__ import annotations

import collections
import io
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import GamepakError, MemberNotFoundError

# Pixels of the largest texture decoded for a preview (16384 x 4096, or 8192 x 8192).
MAX_PIXELS = 1 << 26


def png_bytes(image: Any) -> bytes:
    """A Pillow image as PNG, encoded fast (a preview is looked at once)."""
    if image.mode not in ("RGB", "RGBA", "L", "LA"):
        image = image.convert("RGBA")
    out = io.BytesIO()
    image.save(out, "PNG", compress_level=1)
    return out.getvalue()


# -- RFG pegs ----------------------------------------------------------------------------------
def peg_line(row: dict[str, Any]) -> str:
    """One line of `texture ls` for a peg texture."""
    return (
        f"{row['width']:>5}x{row['height']:<5} {row['format']:<5} {row['mips']:>2} mips "
        f"flags 0x{row['flags']:04x}  {row['peg']}/{row['name']}"
    )


def peg_rows(data: bytes, name: str, label: str) -> list[dict[str, Any]]:
    """The catalog's textures rows of a peg CPU file (the GPU file is not needed); none for a
    file without the PC peg's `GEKV` signature."""
    from ..formats.rfg.peg.reader import read_entries

    if data[:4] != b"GEKV":
        return []  # not a PC peg: skipped, as `iter_pegs` skips it
    _, textures = read_entries(data, label)
    return [
        {
            "peg": name,
            "name": texture.name,
            "width": texture.width,
            "height": texture.height,
            "format": texture.format.label,
            "mips": texture.mips,
            "flags": texture.flags,
        }
        for texture in textures
    ]


def peg_gallery(data: bytes, name: str, label: str, *, partner: Any = None) -> list[dict[str, Any]]:
    """The textures of a peg CPU file: name, size, pixel format, mip count."""
    from ..formats.rfg.peg.reader import read_entries

    if data[:4] != b"GEKV":
        return []
    _, textures = read_entries(data, label)
    return [
        {"name": t.name, "width": t.width, "height": t.height, "format": t.format.name, "mips": t.mips}
        for t in textures
    ]


# Parsed pegs kept for the next texture of the same page, by the caller's key (the files'
# identities): a pair is parsed once, not once per texture.
PEG_CACHE_BYTES = 160 << 20
PEG_CACHE_COUNT = 8
_pegs: collections.OrderedDict[object, tuple[Any, int]] = collections.OrderedDict()
_pegs_lock = threading.Lock()


def _fresh_locks() -> None:
    """In a forked preview worker (`web.isolate`): the peg cache's lock anew, as a thread of the
    server may have held one when it forked (the worker's copy would never be released)."""
    global _pegs_lock
    _pegs_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fresh_locks)


def _peg(data: bytes, label: str, partner: Callable[[], bytes] | None, key: object) -> Any:
    from ..formats.rfg.peg import Peg

    if partner is None:
        raise GamepakError(f"{label}: its GPU partner is not beside it")
    with _pegs_lock:
        if key is not None and key in _pegs:
            _pegs.move_to_end(key)
            return _pegs[key][0]
    gpu = partner()
    peg = Peg.parse(data, gpu, name=label)
    cost = len(data) + len(gpu)
    if key is not None and cost <= PEG_CACHE_BYTES:
        with _pegs_lock:
            _pegs[key] = (peg, cost)
            while len(_pegs) > PEG_CACHE_COUNT or sum(size for _, size in _pegs.values()) > PEG_CACHE_BYTES:
                _pegs.popitem(last=False)
    return peg


def peg_png(
    data: bytes,
    name: str,
    label: str,
    texture: str,
    mip: int = 0,
    *,
    partner: Callable[[], bytes] | None = None,
    key: object = None,
) -> bytes:
    """One mip level (0: the top one) of a peg's texture as PNG; `partner` reads the GPU file."""
    from PIL import Image

    from ..formats.rfg.peg.layout import level_dims, level_size
    from ..formats.rfg.peg.pixels import decode

    peg = _peg(data, label, partner, key)
    found = peg.texture(texture)
    if found.width * found.height > MAX_PIXELS:
        raise GamepakError(f"{label}: {texture}: {found.width}x{found.height} pixels, more than a preview decodes")
    if mip == 0:
        return png_bytes(peg.read_pil(texture))
    levels = level_dims(found.width, found.height, found.mips)
    if not 0 <= mip < len(levels):
        raise GamepakError(f"{label}: {texture}: no mip {mip} (it has {len(levels)}: 0 to {len(levels) - 1})")
    start = sum(level_size(found.format, width, height) for width, height in levels[:mip])
    width, height = levels[mip]
    chain = peg.mip_data(texture)
    pixels = decode(
        found.format, chain[start : start + level_size(found.format, width, height)], width, height, peg.order
    )
    return png_bytes(Image.fromarray(pixels, "RGBA"))


# -- Gameloft J2ME sprites --------------------------------------------------------------------------
# The sprite's own columns of the catalog's textures rows (null in the rows of other textures).
SPRITE_COLUMNS = ("modules", "frames", "anims", "palettes", "encoding")


def sprite_rows(data: bytes, name: str, label: str) -> list[dict[str, Any]]:
    """The catalog's textures row of a sprite: `peg` the file, `name` "sprite", `format`
    "bsprite", width and height its largest module's, `flags` the sprite's flags, and the
    sprite's own columns (`label`: the pack holding it, or the file itself)."""
    from ..formats.j2me.sprite import read_sprite
    from ..formats.j2me.sprite.summary import summary_row

    sprite = read_sprite(data, label, None if label.endswith(name) else name)
    row = summary_row(sprite, len(data))
    return [
        {
            "peg": name,
            "name": "sprite",
            "width": row["width"],
            "height": row["height"],
            "format": "bsprite",
            "mips": 0,
            "flags": sprite.flags,
            **{key: row[key] for key in SPRITE_COLUMNS},
        }
    ]


# -- Quake palette images ------------------------------------------------------------------------
def _quake_images(data: bytes, name: str, label: str, lump: str | None) -> list[Any]:
    """The palette images of a Quake file or WAD lump, [] when it holds none (a palette
    `.lmp`, a file without its kind's signature)."""
    from ..formats.quake.sources import has_signature, kind_of_file, read_images

    if lump is not None:
        kind: str | None = lump if lump in ("qpic", "miptex", "conchars") else None
        image_name = name
    else:
        kind = kind_of_file(name, data)
        image_name = os.path.splitext(os.path.basename(name))[0]
    if kind is None or not has_signature(kind, data):
        return []
    # A WAD lump's record tells a WAD3 texture by the palette after its mips (read_miptex keeps
    # none for a WAD2 record, which ends with its last mip).
    wad3 = lump == "miptex"
    return [image for image in read_images(kind, data, image_name, label, wad3=wad3) if image.mips]


def quake_gallery(data: bytes, name: str, label: str, *, lump: str | None = None) -> list[dict[str, Any]]:
    """The images of a Quake file (a map's textures, a sprite's frames, a model's skins)."""
    return [
        {
            "name": image.name,
            "width": image.width,
            "height": image.height,
            "format": image.kind,
            "mips": len(image.mips),
        }
        for image in _quake_images(data, name, label, lump)
    ]


def quake_rows(data: bytes, name: str, label: str, *, lump: str | None = None) -> list[dict[str, Any]]:
    """The catalog's textures rows of a Quake file (`peg`: the file holding the image, `flags`:
    its transparent index, -1 when opaque; `transparent`, `fullbright`: the shares of its
    pixels drawn clear and in fullbright colours, `formats.quake.palette.colour_shares`)."""
    from ..formats.quake.palette import colour_shares

    rows = []
    for image in _quake_images(data, name, label, lump):
        clear, fullbright = colour_shares(image.pixels, image.transparent, image.palette is not None)
        rows.append(
            {
                "peg": name,
                "name": image.name,
                "width": image.width,
                "height": image.height,
                "format": image.kind,
                "mips": len(image.mips),
                "flags": -1 if image.transparent is None else image.transparent,
                "transparent": clear,
                "fullbright": fullbright,
            }
        )
    return rows


def quake_png(
    data: bytes,
    name: str,
    label: str,
    texture: str,
    mip: int = 0,
    *,
    lump: str | None = None,
    palette: str | None = None,
) -> bytes:
    """One mip of a Quake image as PNG, through the palette found beside `palette` (a path: the
    file or the pack holding it), else the built-in one."""
    from ..formats.quake.images import mip_sizes, png_from_rgba, rgba_bytes
    from ..formats.quake.palette import built_in_palette, find_palette

    for image in _quake_images(data, name, label, lump):
        if image.name == texture:
            if not 0 <= mip < len(image.mips):
                raise GamepakError(f"{label}: {texture}: no mip {mip} (it has {len(image.mips)})")
            width, height = mip_sizes(image.width, image.height)[mip] if mip else (image.width, image.height)
            colours = find_palette(palette) if palette else built_in_palette()
            return bytes(png_from_rgba(width, height, rgba_bytes(image, colours, mip)))
    raise MemberNotFoundError(texture, label)


# -- models ------------------------------------------------------------------------------------
def _mesh(data: bytes, label: str) -> Any:
    from ..models import format_for_data, loads

    model_format = format_for_data(data) or "joe"
    name = os.path.splitext(os.path.basename(label.rsplit(":", 1)[-1]))[0]
    return loads(data, model_format, name=name, path=label)


def mesh_counts(data: bytes, label: str) -> dict[str, Any]:
    """The viewer's counts of a JOE (or glTF, OBJ, PLY) model: vertices, faces, size."""
    summary = _mesh(data, label).summary()
    counts: dict[str, Any] = {"vertices": summary["positions"], "faces": summary["faces"]}
    bounds = summary["bounds"]
    if bounds is not None:
        counts["size"] = " \u00d7 ".join(f"{high - low:.3g}" for low, high in zip(bounds["min"], bounds["max"]))
    return counts


def mesh_glb(data: bytes, label: str) -> bytes:
    """A model as binary glTF (a GLB as it is)."""
    if data[:4] == b"glTF":
        return data
    from ..models import dumps

    return bytes(dumps(_mesh(data, label), "glb"))


def joe_stats(data: bytes, label: str) -> tuple[int, int, int] | None:
    """The catalog's (vertices, triangles, frames) of a JOE model (None for a glTF: not a game
    model); its NaN values are the model's own, not the catalog's warnings."""
    if data[:4] == b"glTF":
        return None
    import warnings

    from ..models import joe

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mesh = joe.read(data, path=label)
    return len(mesh.positions), mesh.face_count, mesh.frame_count


def quake_stats(kind: str, data: bytes, label: str) -> tuple[int, int, int]:
    """The catalog's (vertices, triangles, frames) of a Quake model or map."""
    from ..models.quake import summary

    found = summary(kind, data, label)
    return int(found["vertices"]), int(found["triangles"]), int(found.get("frames", 1))


def quake_counts(kind: str, data: bytes, label: str) -> dict[str, Any]:
    """The viewer's counts of a Quake model or map."""
    from ..models.quake import summary

    counts = summary(kind, data, label)
    return {"vertices": counts["vertices"], "faces": counts["triangles"]}


def quake_glb(kind: str, data: bytes, label: str, *, palette_near: str | None = None) -> bytes:
    """A Quake model or map as binary glTF, its palette found beside `palette_near`."""
    from ..models.quake import export_bytes

    return bytes(export_bytes(kind, data, label, palette_near or label))


# -- scenes ------------------------------------------------------------------------------------
def scene_claims(path: str, member: str | None = None) -> bool:
    """Whether `path` is a VDrift track or car folder (a scene, not a file)."""
    if member is not None:
        return False
    from ..models.scene import is_scene

    return is_scene(path)


# -- strings -----------------------------------------------------------------------------------
def locatext_strings(
    data: bytes, label: str, *, names: Sequence[str] = (), identifiers: Mapping[int, str] | None = None
) -> tuple[str, list[tuple[int, str, str]]] | None:
    """(what, [(index, identifier or #hash, string)]) of an `.rfglocatext`, identifiers found
    in the tables of `names` (packs, .xtbl files, name lists), as `text export --names` does;
    or in `identifiers` when the caller has them already (the viewer keeps the tables' names)."""
    from ..formats.rfg.locatext import LocaText, is_locatext, language_of, texts_of

    if not is_locatext(data):
        return None
    table = LocaText.parse(data, label)
    if identifiers is not None:
        table.name({entry.hash: found for entry in table.entries if (found := identifiers.get(entry.hash)) is not None})
    elif names:
        # Read for this call: the viewer keeps the tables' names itself (`web.strings.NameCache`)
        # and hands them over as `identifiers`.
        from ..formats.rfg.locatext.names import find_names

        table.name(find_names(list(names), (), {entry.hash for entry in table.entries}).identifiers)
    language = language_of(os.path.basename(label))
    what = f"RFG localization strings{f' ({language})' if language else ''}"
    keys = [entry.key for entry in table.entries]
    return what, list(zip(range(len(keys)), keys, texts_of(table.entries)))


_TEXT_BYTES = bytes(range(0x20, 0x100)) + b"\t\r\n\f"


def j2me_probe(name: str, head: bytes, holder: str | None) -> bool:
    """Whether J2ME strings are worth looking for: inside a J2ME pack, or a file of no known
    kind that is binary or holds NUL bytes (a string blob `extract` named .txt)."""
    if (holder or "").startswith("j2me") or b"\0" in head:
        return True
    # Binary: a control character other than whitespace in the first bytes.
    return bool(head[:1024].translate(None, _TEXT_BYTES))


def j2me_strings(data: bytes, label: str) -> tuple[str, list[tuple[int, str, str]]] | None:
    """(what, [(index, index, string)]) of J2ME strings of any shape (a text pack, strings behind
    offsets, a string blob), or None when `data` holds none."""
    from ..formats.j2me.string_tables import StringTable, TextShapeError

    try:
        table = StringTable.parse(data, "auto", label)
    except (TextShapeError, GamepakError):
        return None  # nothing names these strings: data that does not read as them is not them
    if table.kind == "blob" and (len(table) < 2 or b"\0" not in data):
        return None  # one string with no separator: plain text, not a string table
    what = "J2ME text pack" if table.kind == "pack" else f"J2ME strings ({table.kind})"
    return what, [(index, str(index), text) for index, text in enumerate(table.texts)]
