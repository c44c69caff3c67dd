"""A sprite as files a person edits, and back (`gameloft-sprites.md` §7): indexed PNGs of the
modules, RGBA PNGs of the frames, animated PNGs of the anims, a contact sheet, and
`sprite.json`, which holds everything needed to rebuild the sprite's bytes.

Folder of one sprite:

    sprite.json          the structure (below)
    modules/NNN.png      module NNN, indexed (PLTE + tRNS of the palette `module_palette`)
    frames/NNN.png       frame NNN composed (RGBA, cropped; `origin` in the JSON); none when empty
    anims/NNN.png        anim NNN as an animated PNG (each AFrame time x 50 ms)
    sheet.png            every module side by side (each one's rectangle in the JSON)

`sprite.json`: `version`, `flags`, `pixel_format` / `encoding` (`{"name", "code"}`),
`module_palette`, `palettes` (each `{"raw": [...], "rgba": ["#rrggbbaa", ...]}`: the stored
values, transparent entries' colour bits included, and what they look like), `modules` (`w`, `h`,
`file`, `size`: the stored data bytes), `fmodules` (`[module, x, y, flags]` in stored order),
`frames` (`count`, `first`, `rect` as stored, `file`, `origin`), `aframes` (`[frame, time, x,
y, flags]`, 255 kept), `anims` (`count`, `first`, `file`).

Import reads the JSON and every module PNG back: an indexed PNG whose palette is the exported
one gives its indices; any other image is mapped through its colours to the palette (a colour
not in it is refused, naming the pixel, unless `nearest`). A module whose pixels did not change
keeps its stored bytes. A palette is taken from `raw`, or from `rgba` where only that was
edited (converted to the pixel format).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from typing import Any

from ....errors import GamepakError
from . import codec
from .compose import TICK_MS, check_drawing, compose_anim, compose_frame, contact_sheet
from .model import AFrame, Anim, FModule, Frame, Sprite

TYPE_CHECKING = False
if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

JSON_NAME = "sprite.json"
JSON_FORMAT = "gamepak-bsprite"
JSON_VERSION = 1
# An AFrame of time 0 holds for good: its APNG frame is shown this long (the longest APNG delay).
HOLD_MS = 65535


def _module_file(index: int) -> str:
    return f"modules/{index:03d}.png"


def _png(image: Any, **options: Any) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG", **options)
    return out.getvalue()


def _rgba_image(rgba: NDArray[np.uint8]) -> Any:
    from PIL import Image

    return Image.frombytes("RGBA", (rgba.shape[1], rgba.shape[0]), rgba.tobytes())


def rgba_png(rgba: NDArray[np.uint8]) -> bytes:
    """An RGBA PNG of an (h x w x 4) array."""
    return _png(_rgba_image(rgba))


def indexed_png(indices: NDArray[np.uint8], palette: NDArray[np.uint8]) -> bytes:
    """An indexed PNG: PLTE from `palette`'s RGB, tRNS from its alpha (so indices survive edits)."""
    from PIL import Image

    image = Image.frombytes("P", (indices.shape[1], indices.shape[0]), indices.tobytes())
    image.putpalette(palette[:, :3].reshape(-1).tolist())
    alpha = bytes(palette[:, 3].tolist())
    return _png(image, transparency=alpha) if alpha.count(255) != len(alpha) else _png(image)


def animated_png(cells: list[NDArray[np.uint8]], times: list[int]) -> bytes:
    """An APNG of `cells` (time x 50 ms each); it stops at an AFrame of time 0, which holds."""
    shown, durations = [], []
    for cell, time in zip(cells, times):
        shown.append(_rgba_image(cell))
        durations.append(time * TICK_MS if time else HOLD_MS)
        if not time:
            break
    out = io.BytesIO()
    loop = 1 if times and not times[len(shown) - 1] else 0
    if len(shown) == 1:
        shown[0].save(out, format="PNG")
    else:
        # Each frame replaces the last (no disposal, source blend): Pillow merges a frame equal to
        # the one it is drawn over, and over a cleared canvas a blink (frame 255) would vanish.
        shown[0].save(
            out,
            format="PNG",
            save_all=True,
            append_images=shown[1:],
            duration=durations,
            loop=loop,
            disposal=0,
            blend=0,
        )
    return out.getvalue()


def _hex(rgba: NDArray[np.uint8]) -> list[str]:
    return ["#" + bytes(row.tolist()).hex() for row in rgba]


def export_files(
    sprite: Sprite,
    module_palette: int = 0,
    frame_palette: int | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, bytes]:
    """Every file of a sprite's folder (name -> bytes), `sprite.json` included. Modules are
    written with palette `module_palette`, frames, anims and the sheet with `frame_palette`
    (the same by default). `extra` adds keys to the JSON (e.g. a record's id), which import
    does not read. A sprite whose pictures cost more than `compose.MAX_DRAWN_PIXELS` to draw
    is refused (FormatLimitError) before any is drawn."""
    if sprite.pixel_format is None or sprite.encoding is None:
        raise GamepakError("a sprite without modules has no images to export")
    if not 0 <= module_palette < len(sprite.palettes):
        raise GamepakError(
            f"palette {module_palette}: the sprite has {len(sprite.palettes)} (0..{len(sprite.palettes) - 1})"
        )
    drawn = module_palette if frame_palette is None else frame_palette
    check_drawing(sprite)  # before anything is drawn: a few KiB can name hours of drawing
    files: dict[str, bytes] = {}
    rgba = sprite.palette_rgba(module_palette)
    modules = []
    for index, (width, height) in enumerate(sprite.modules):
        entry: dict[str, Any] = {"w": width, "h": height, "size": len(sprite.module_data[index])}
        if width and height:
            entry["file"] = _module_file(index)
            files[entry["file"]] = indexed_png(sprite.module_indices(index), rgba)
        modules.append(entry)
    sheet, rects = contact_sheet(sprite, drawn)
    files["sheet.png"] = rgba_png(sheet)
    for entry, rect in zip(modules, rects):
        entry["sheet"] = list(rect)
    frames = []
    for index, frame in enumerate(sprite.frames):
        item: dict[str, Any] = {"count": frame.count, "first": frame.first, "rect": list(frame.rect)}
        picture = compose_frame(sprite, index, drawn)
        if picture is None:
            item["empty"] = True
        else:
            item["file"] = f"frames/{index:03d}.png"
            item["origin"] = list(picture.origin)
            files[item["file"]] = rgba_png(picture.rgba)
        frames.append(item)
    anims = []
    for index, anim in enumerate(sprite.anims):
        item = {"count": anim.count, "first": anim.first}
        animation = compose_anim(sprite, index, drawn)
        if animation.cells:
            item["file"] = f"anims/{index:03d}.png"
            item["origin"] = list(animation.origin)
            files[item["file"]] = animated_png(animation.cells, animation.times)
        anims.append(item)
    document = {
        "format": JSON_FORMAT,
        "format_version": JSON_VERSION,
        "version": sprite.version,
        "flags": sprite.flags,
        "pixel_format": {"name": sprite.pixel_format_name, "code": sprite.pixel_format},
        "encoding": {"name": sprite.encoding_name, "code": sprite.encoding},
        "module_palette": module_palette,
        "tick_ms": TICK_MS,
        "palettes": [
            {"raw": list(palette), "rgba": _hex(sprite.palette_rgba(number))}
            for number, palette in enumerate(sprite.palettes)
        ],
        "modules": modules,
        "fmodules": [[fm.module, fm.x, fm.y, fm.flags] for fm in sprite.fmodules],
        "frames": frames,
        "aframes": [[af.frame, af.time, af.x, af.y, af.flags] for af in sprite.aframes],
        "anims": anims,
        **(extra or {}),
    }
    files[JSON_NAME] = (_dump(document) + "\n").encode("utf-8")
    return files


# A row of the JSON shorter than this stays on one line (an FModule, an AFrame, a frame).
ROW_WIDTH = 120


def _dump(value: Any, depth: int = 0) -> str:
    """JSON for a person to edit: one line per FModule, AFrame, frame, module or palette row
    (json.dumps with an indent gives each number a line of its own)."""
    one_line = json.dumps(value, ensure_ascii=False)
    if not isinstance(value, (dict, list)):
        return one_line
    items = value.values() if isinstance(value, dict) else value
    # The document and lists of objects open up; any other row short enough keeps its line.
    if depth > 0 and not any(isinstance(item, dict) for item in items) and len(one_line) <= ROW_WIDTH:
        return one_line
    pad = " " * (depth + 1)
    if isinstance(value, dict):
        rows = [f"{pad}{json.dumps(key)}: {_dump(item, depth + 1)}" for key, item in value.items()]
        return "{\n" + ",\n".join(rows) + "\n" + " " * depth + "}"
    if not any(isinstance(item, (dict, list)) for item in value):
        # A long list of numbers or colours: several to a line.
        step = 8 if any(isinstance(item, str) for item in value) else 16
        chunks = [", ".join(json.dumps(item) for item in value[at : at + step]) for at in range(0, len(value), step)]
        return "[\n" + ",\n".join(pad + chunk for chunk in chunks) + "\n" + " " * depth + "]"
    rows = [pad + _dump(item, depth + 1) for item in value]
    return "[\n" + ",\n".join(rows) + "\n" + " " * depth + "]"


# -- import ---------------------------------------------------------------------------------------


class _Doc:
    """Typed reads from `sprite.json`, each refusal naming the file and the field."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, field: str, message: str) -> GamepakError:
        return GamepakError(f"{self.where}: {field}: {message}")

    def number(self, value: Any, field: str, low: int, high: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.fail(field, f"{value!r} is not a whole number in {low}..{high}")
        return value

    def row(self, value: Any, field: str, ranges: list[tuple[int, int]]) -> list[int]:
        if not isinstance(value, list) or len(value) != len(ranges):
            raise self.fail(field, f"{value!r} is not a list of {len(ranges)} numbers")
        return [self.number(item, f"{field}[{i}]", *limits) for i, (item, limits) in enumerate(zip(value, ranges))]

    def items(self, document: dict[str, Any], key: str) -> list[Any]:
        value = document.get(key)
        if not isinstance(value, list):
            raise self.fail(key, "missing, or not a list")
        if len(value) > 0xFFFF:  # every count of the layout is a u16
            raise self.fail(key, f"{len(value)} items, a sprite holds at most 65535")
        return value

    def code(self, document: dict[str, Any], key: str, known: dict[int, str]) -> int:
        value = document.get(key)
        names = {name: code for code, name in known.items()}
        if isinstance(value, dict):
            if value.get("name") in names and value.get("code") in (None, names[value["name"]]):
                return names[value["name"]]
            value = value.get("code")
        if isinstance(value, str) and value in names:
            return names[value]
        if isinstance(value, int) and value in known:
            return value
        raise self.fail(key, f"{value!r} is none of {', '.join(known.values())}")


S8 = (-128, 127)
U8 = (0, 255)
U16 = (0, 0xFFFF)


def rgba_to_raw(pixel_format: int, rgba: tuple[int, int, int, int]) -> int:
    """The palette entry closest to an RGBA colour in `pixel_format`."""
    red, green, blue, alpha = rgba
    if pixel_format == 0x8888:
        return (alpha << 24) | (red << 16) | (green << 8) | blue
    if pixel_format == 0x4444:
        a, r, g, b = (round(value / 17) for value in (alpha, red, green, blue))
        return (a << 12) | (r << 8) | (g << 4) | b
    if pixel_format == 0x5515:
        return (0x8000 if alpha >= 128 else 0) | ((red >> 3) << 10) | ((green >> 3) << 5) | (blue >> 3)
    if pixel_format == 0x6505:
        if alpha < 128:
            return codec.TRANSPARENT_0565
        return ((red >> 3) << 11) | ((green >> 2) << 5) | (blue >> 3)
    raise ValueError(f"unknown pixel format 0x{pixel_format:04x}")


def _palettes(doc: _Doc, document: dict[str, Any], pixel_format: int) -> tuple[list[list[int]], list[list[int]]]:
    """The palettes the JSON gives, and their `raw` lists as written (before edited `rgba`)."""
    entry_max = 0xFFFFFFFF if pixel_format == 0x8888 else 0xFFFF
    palettes = []
    written = []
    for number, item in enumerate(doc.items(document, "palettes")):
        field = f"palettes[{number}]"
        if not isinstance(item, dict) or not isinstance(item.get("raw"), list):
            raise doc.fail(field, "not an object with a 'raw' list")
        raw = [doc.number(value, f"{field}.raw[{i}]", 0, entry_max) for i, value in enumerate(item["raw"])]
        written.append(raw)
        shown = item.get("rgba")
        if isinstance(shown, list) and shown != _hex(codec.palette_rgba(pixel_format, raw)):
            # Only the colours were edited: convert them (a raw list edited too must agree).
            if len(shown) != len(raw):
                raise doc.fail(f"{field}.rgba", f"{len(shown)} colours where 'raw' has {len(raw)}")
            converted = []
            for i, text in enumerate(shown):
                if not isinstance(text, str) or len(text) != 9 or text[0] != "#":
                    raise doc.fail(f"{field}.rgba[{i}]", f"{text!r} is not #rrggbbaa")
                try:
                    colour = bytes.fromhex(text[1:])
                except ValueError:
                    raise doc.fail(f"{field}.rgba[{i}]", f"{text!r} is not #rrggbbaa") from None
                converted.append(rgba_to_raw(pixel_format, (colour[0], colour[1], colour[2], colour[3])))
            raw = converted
        palettes.append(raw)
    if not palettes:
        raise doc.fail("palettes", "a sprite with modules needs at least one palette")
    if len({len(p) for p in palettes}) != 1:
        raise doc.fail("palettes", f"palettes of {sorted({len(p) for p in palettes})} colours: all must be as long")
    if not 0 < len(palettes[0]) < 256:
        raise doc.fail("palettes", f"{len(palettes[0])} colours: a palette holds 1..255 (its count is one byte)")
    return palettes, written


def _image_indices(
    image: Any,
    palette: NDArray[np.uint8],
    exported: NDArray[np.uint8],
    original: NDArray[np.uint8] | None,
    nearest: bool,
    where: str,
) -> NDArray[np.uint8]:
    """A module image's palette indices. An indexed image whose palette is the one it was
    exported with (`exported`) or the new one (`palette`) gives its indices as they are;
    any other image is read through its colours: `original`'s indices where it shows the same
    picture (a palette may hold a colour twice), else each colour's index in `palette`."""
    import numpy as np

    known = [palette, exported]
    if image.mode == "P":
        stored = np.array((image.getpalette() or [])[: 3 * len(palette)], dtype=np.uint8)
        if stored.size == 3 * len(palette) and any(np.array_equal(stored.reshape(-1, 3), p[:, :3]) for p in known):
            indices = np.asarray(image, dtype=np.uint8)
            if int(indices.max(initial=0)) < len(palette):
                return indices
    rgba = np.asarray(image.convert("RGBA"), dtype=np.uint8)
    # Transparent pixels are one colour whatever their RGB (editors often zero them).
    rgba = np.where(rgba[..., 3:] == 0, 0, rgba)
    if original is not None and original.shape == rgba.shape[:2]:
        for colours in known:
            if np.array_equal(np.where(colours[:, 3:] == 0, 0, colours)[original], rgba):
                return original
    target = np.where(palette[:, 3:] == 0, 0, palette)
    matches = np.all(rgba[:, :, None, :] == target[None, None, :, :], axis=-1)
    found = matches.any(axis=-1)
    indices = matches.argmax(axis=-1).astype(np.uint8)
    if not found.all():
        if not nearest:
            y, x = (int(v) for v in np.argwhere(~found)[0])
            colour = "#" + bytes(rgba[y, x].tolist()).hex()
            raise GamepakError(
                f"{where}: pixel ({x}, {y}) is {colour}, which is not in the palette "
                f"({int((~found).sum())} such pixels; --nearest maps each to the nearest palette colour)"
            )
        opaque = np.flatnonzero(target[:, 3] != 0)
        clear = np.flatnonzero(target[:, 3] == 0)
        lost = ~found
        pixels = rgba[lost].astype(np.int32)
        choice = np.empty(len(pixels), dtype=np.uint8)
        see_through = pixels[:, 3] < 128
        if clear.size:
            choice[see_through] = clear[0]
        else:
            see_through[:] = False
        if opaque.size:
            distance = ((pixels[:, None, :3] - target[None, opaque, :3].astype(np.int32)) ** 2).sum(axis=-1)
            choice[~see_through] = opaque[distance[~see_through].argmin(axis=-1)]
        indices[lost] = choice
    return indices


def import_files(original: Sprite, read: Callable[[str], bytes], *, where: str, nearest: bool = False) -> Sprite:
    """The sprite a folder describes: `read(name)` gives a file of the folder (`sprite.json`,
    the module PNGs); `original` is the sprite the folder was exported from (its modules' bytes
    are kept where their pixels did not change). Every refusal names the file and the field."""
    from PIL import Image, UnidentifiedImageError

    json_where = os.path.join(where, JSON_NAME)
    try:
        document = json.loads(read(JSON_NAME).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GamepakError(f"{json_where}: not JSON: {exc}") from None
    doc = _Doc(json_where)
    if not isinstance(document, dict) or document.get("format") != JSON_FORMAT:
        raise doc.fail("format", f"not a gamepak sprite description (format {JSON_FORMAT!r} expected)")
    sprite = Sprite(
        version=doc.number(document.get("version"), "version", *U16),
        flags=doc.number(document.get("flags"), "flags", 0, 0xFFFFFFFF),
    )
    sprite.fmodules = [
        FModule(*doc.row(row, f"fmodules[{i}]", [U8, S8, S8, U8]))
        for i, row in enumerate(doc.items(document, "fmodules"))
    ]
    for i, item in enumerate(doc.items(document, "frames")):
        if not isinstance(item, dict):
            raise doc.fail(f"frames[{i}]", "not an object")
        rect = doc.row(item.get("rect"), f"frames[{i}].rect", [S8, S8, U8, U8])
        sprite.frames.append(
            Frame(
                doc.number(item.get("count"), f"frames[{i}].count", *U16),
                doc.number(item.get("first"), f"frames[{i}].first", *U16),
                (rect[0], rect[1], rect[2], rect[3]),
            )
        )
    sprite.aframes = [
        AFrame(*doc.row(row, f"aframes[{i}]", [U8, U8, S8, S8, U8]))
        for i, row in enumerate(doc.items(document, "aframes"))
    ]
    for i, item in enumerate(doc.items(document, "anims")):
        if not isinstance(item, dict):
            raise doc.fail(f"anims[{i}]", "not an object")
        sprite.anims.append(
            Anim(
                doc.number(item.get("count"), f"anims[{i}].count", *U16),
                doc.number(item.get("first"), f"anims[{i}].first", *U16),
            )
        )
    modules = doc.items(document, "modules")
    if modules:
        sprite.pixel_format = doc.code(document, "pixel_format", codec.PIXEL_FORMATS)
        sprite.encoding = doc.code(document, "encoding", codec.ENCODINGS)
        sprite.palettes, written = _palettes(doc, document, sprite.pixel_format)
        sprite.colours = len(sprite.palettes[0])
        shown = doc.number(document.get("module_palette", 0), "module_palette", 0, len(sprite.palettes) - 1)
        palette = sprite.palette_rgba(shown)
        # The colours the PNGs were written with: the JSON's raw values (its colours may have been
        # edited as RGBA since).
        exported = codec.palette_rgba(sprite.pixel_format, written[shown])
        same_images = (
            original.encoding == sprite.encoding
            and original.colours == sprite.colours
            and original.pixel_format is not None
        )
        for i, item in enumerate(modules):
            field = f"modules[{i}]"
            if not isinstance(item, dict):
                raise doc.fail(field, "not an object")
            width = doc.number(item.get("w"), f"{field}.w", *U8)
            height = doc.number(item.get("h"), f"{field}.h", *U8)
            kept = i < len(original.modules)
            old = original.module_indices(i) if kept and original.pixel_format is not None else None
            name = item.get("file")
            if not width or not height or name is None:
                indices = _empty(height, width)
            else:
                if not isinstance(name, str):
                    raise doc.fail(f"{field}.file", f"{name!r} is not a file name")
                png_where = os.path.join(where, *name.split("/"))
                try:
                    image = Image.open(io.BytesIO(read(name)))
                    # The size is the header's: checked before any pixel is decoded.
                    if image.size != (width, height):
                        raise GamepakError(
                            f"{png_where}: {image.size[0]}x{image.size[1]} pixels, but {JSON_NAME} says module "
                            f"{i} is {width}x{height}: set its w and h there to resize it"
                        )
                    image.load()
                except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
                    raise GamepakError(f"{png_where}: not an image PIL reads: {exc}") from None
                indices = _image_indices(image, palette, exported, old, nearest, png_where)
            sprite.modules.append((width, height))
            if same_images and old is not None and original.modules[i] == (width, height) and _equal(old, indices):
                sprite.module_data.append(original.module_data[i])  # unchanged: its stored bytes
                continue
            try:
                sprite.module_data.append(codec.encode(sprite.encoding, indices, sprite.colours))
            except ValueError as exc:
                raise doc.fail(field, str(exc)) from None
    return sprite


def _empty(height: int, width: int) -> NDArray[np.uint8]:
    import numpy as np

    return np.zeros((height, width), dtype=np.uint8)


def _equal(left: NDArray[np.uint8], right: NDArray[np.uint8]) -> bool:
    import numpy as np

    return bool(np.array_equal(left, right))
