"""`texture build`: a Quake WAD2 (or Half-Life WAD3) of miptex from a folder of pictures.

Each PNG, TGA or BMP of the folder becomes one miptex named after its file. The engines' rules
hold before anything is written (each refusal one line naming the file):

- names: at most 15 ASCII characters; `--case upper` upper-cases them; qpakman's file names
  `star_x`, `plus_0x`, `minu_x` stand for `*x`, `+0x`, `-x`; two files naming one lump (case
  ignored) are refused.
- sides: multiples of 16 (`--resize` scales to the nearest ones); `sky` names 256x128.
- fullbrights: Quake's indices 224-255 glow in the dark, so they are used only where a texture
  asks: a name ending `_fbr` (qpakman's convention; the suffix is dropped) or a mask picture of
  the same name in `--fullbright DIR` (white: may glow).
- `{name`: pixels under the alpha threshold take index 255 (WAD3: the last entry, blue).
- `sky`: pixels under the threshold in the left half (the front layer) take index 0, which the
  engine draws clear; no opaque pixel takes 0.
- `+0name`: the frames of an animation are numbered without a gap (`+0`...`+9`, `+a`...`+j`).

Colours map to the palette by CIELAB distance (a colour the palette holds keeps its entry;
others take the entry nearest to their 4x4x4 colour cell, `formats.quake.colours.cell_nearest`),
or with `dither` by Floyd-Steinberg (Pillow's); a WAD3 texture gets its own palette, quantised
by Pillow. Each texture's summary gives the mean CIEDE2000 difference between its picture's
colours and the palette colours they became (`formats.quake.colours`): measured on every drawn
pixel of a picture of at most 4,096 of them (or with `exact_error`), else estimated on the drawn
pixels of every 4th row and column (`formats.quake.colours.error_sample`). The WAD's bytes are
the same either way.

A folder written by `texture export` of a WAD carries a manifest (`ops.wad_manifest`): then the
WAD is rebuilt byte for byte, an edited picture changing only its own lump, and a picture added
to the folder since becomes a new lump after the others.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import GamepakError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import numpy as np

    from ..formats.quake.ciede2000 import ErrorBatch

BUILD_SUFFIXES = (".png", ".tga", ".bmp")
# A miptex name field is 16 bytes, NUL-terminated: 15 characters at most.
MIPTEX_NAME_MAX = 15
# Every mip level of a miptex must come out whole: 16 is what the compilers ask for.
MIPTEX_SIDE_MULTIPLE = 16
SKY_SIZE = (256, 128)
# qpakman's (and LibreQuake's texture sources') spellings of characters file systems dislike.
FILE_PREFIXES = (("star_", "*"), ("plus_", "+"), ("minu_", "-"))
FULLBRIGHT_SUFFIX = "_fbr"
DEFAULT_ALPHA_THRESHOLD = 128
ANIMATION_FRAMES = "0123456789"
ANIMATION_ALTERNATES = "abcdefghij"
CASES = ("keep", "upper")


@dataclass
class BuiltTexture:
    """One texture `build_wad` wrote: its lump name, the file it came from, its size, the mean
    CIEDE2000 error of its colour mapping, the share of its pixels that are fullbright or
    clear, and how many pixels the error was estimated from (`sampled`; 0: every drawn pixel,
    the exact mean)."""

    name: str
    file: str
    width: int
    height: int
    error: float
    fullbright: float
    clear: float
    note: str = ""  # rebuilt from an export: "as exported" or "re-encoded"
    sampled: int = 0


@dataclass
class _Source:
    file: str
    path: str
    name: str
    fullbright: bool  # the name asks for fullbrights everywhere (`_fbr`)


def lump_name(stem: str, case: str = "keep") -> tuple[str, bool]:
    """The lump a picture named `stem` (no extension) becomes, and whether it asks for
    fullbrights everywhere (a `_fbr` ending, dropped)."""
    name = stem
    fullbright = name.lower().endswith(FULLBRIGHT_SUFFIX) and len(name) > len(FULLBRIGHT_SUFFIX)
    if fullbright:
        name = name[: -len(FULLBRIGHT_SUFFIX)]
    for prefix, character in FILE_PREFIXES:
        if name.lower().startswith(prefix) and len(name) > len(prefix):
            name = character + name[len(prefix) :]
            break
    return (name.upper() if case == "upper" else name), fullbright


def pictures_in(root: str) -> list[str]:
    """The file names of the pictures (PNG, TGA, BMP) in the folder `root`, sorted."""
    return sorted(
        name
        for name in os.listdir(root)
        if name.lower().endswith(BUILD_SUFFIXES) and os.path.isfile(os.path.join(root, name))
    )


def _sources(root: str, case: str, files: list[str], taken: dict[str, str] | None = None) -> list[_Source]:
    """The pictures `files` of `root` with their lump names, every name checked before any is
    decoded; `taken`: lump names already in the WAD (case-folded) and the files they came from."""
    if case not in CASES:
        raise GamepakError(f"case {case!r}: one of {', '.join(CASES)}")
    taken = dict(taken or {})
    before = dict(taken)
    found = []
    for file_name in files:
        path = os.path.join(root, file_name)
        name, fullbright = lump_name(os.path.splitext(file_name)[0], case)
        if not name.isascii() or not name or len(name) > MIPTEX_NAME_MAX or "\0" in name:
            raise GamepakError(
                f"{path}: {name!r} cannot name a miptex (1 to {MIPTEX_NAME_MAX} ASCII characters); rename the file"
            )
        if name.lower() in taken:
            raise GamepakError(f"{path}: names the same lump as {taken[name.lower()]} (WAD names ignore case)")
        taken[name.lower()] = file_name
        found.append(_Source(file_name, path, name, fullbright))
    named = [(name, os.path.join(root, file)) for name, file in before.items()]
    check_animations(root, named + [(source.name, source.path) for source in found])
    return found


def check_animations(root: str, named: list[tuple[str, str]]) -> None:
    """Refuse an animated texture sequence with a gap (`+0lava`, `+2lava` without `+1lava`), a
    frame past the tenth, or a `+` name the engine cannot read ("Bad animating texture")."""
    sequences: dict[tuple[str, bool], dict[int, str]] = {}
    for name, path in named:
        if not name.startswith("+"):
            continue
        frame = name[1:2].lower()
        if len(name) < 3 or frame not in ANIMATION_FRAMES + ANIMATION_ALTERNATES:
            raise GamepakError(f"{path}: {name!r}: an animated texture is + then a frame 0-9 (or a-j) then a name")
        alternate = frame in ANIMATION_ALTERNATES
        position = (ANIMATION_ALTERNATES if alternate else ANIMATION_FRAMES).index(frame)
        sequences.setdefault((name[2:].lower(), alternate), {})[position] = path
    for (base, alternate), frames in sequences.items():
        letters = ANIMATION_ALTERNATES if alternate else ANIMATION_FRAMES
        for position in range(max(frames)):
            if position not in frames:
                after = frames[min(number for number in frames if number > position)]
                raise GamepakError(
                    f"{after}: the animation +{letters[0]}{base} has no frame +{letters[position]}{base} "
                    f"(in {root}): the engine stops on a gap"
                )


def _target_size(name: str, width: int, height: int) -> tuple[int, int]:
    """The size a picture must have: 256x128 for a sky, else its own rounded to multiples of 16."""
    if name.lower().startswith("sky"):
        return SKY_SIZE
    return tuple(  # type: ignore[return-value]
        max(MIPTEX_SIDE_MULTIPLE, round(side / MIPTEX_SIDE_MULTIPLE) * MIPTEX_SIDE_MULTIPLE) for side in (width, height)
    )


def read_picture(path: str, name: str, resize: bool) -> Any:
    """The picture at `path` as RGBA pixels (possibly a read-only array), its size checked from
    the header before decoding: within gamepak's limits, and (unless `resize` scales it) sides
    of multiples of 16, a sky 256x128."""
    from ..core.pictures import check_size, read_rgba

    def check(width: int, height: int) -> None:
        check_size(width, height, path, area_limit=None, allowed="", resize=resize)
        if resize:
            return
        if name.lower().startswith("sky") and (width, height) != SKY_SIZE:
            raise GamepakError(f"{path}: {width}x{height}: a sky texture is 256x128 (--resize scales it)")
        if width % MIPTEX_SIDE_MULTIPLE or height % MIPTEX_SIDE_MULTIPLE:
            raise GamepakError(
                f"{path}: {width}x{height}: a texture's sides must be multiples of {MIPTEX_SIDE_MULTIPLE} "
                "(--resize scales it)"
            )

    def fit(width: int, height: int) -> tuple[int, int] | None:
        return _target_size(name, width, height) if resize else None

    return read_rgba(path, check, fit=fit, readonly=True)


def _mask(folder: str | None, source: _Source, shape: tuple[int, int]) -> np.ndarray | None:
    """Where the texture may glow: its mask picture in `folder` (same stem, any picture type),
    white (or any light, opaque pixel) meaning yes; None when it has no mask."""
    if folder is None:
        return None
    from ..core.pictures import check_size, read_rgba

    stem = os.path.splitext(source.file)[0]
    for suffix in BUILD_SUFFIXES:
        path = os.path.join(folder, stem + suffix)
        if not os.path.isfile(path):
            continue

        def check(width: int, height: int, path: str = path) -> None:
            check_size(width, height, path, area_limit=None, allowed="", resize=False)

        def fit(width: int, height: int) -> tuple[int, int] | None:
            return (shape[1], shape[0]) if (height, width) != shape else None

        rgba = read_rgba(path, check, fit=fit)
        light = rgba[..., :3].astype("uint16").sum(axis=2) >= 3 * 128
        return light & (rgba[..., 3] >= 128)  # type: ignore[no-any-return]
    return None


@functools.lru_cache(maxsize=4)
def _allowed_sets(transparent: int | None, sky: bool) -> tuple[np.ndarray, np.ndarray]:
    """The entries a WAD2 texture's pixels may take without and with fullbrights: never its
    transparent index, nor a sky's 0 (the engine draws it clear in the front half)."""
    import numpy as np

    from ..formats.quake.palette import FULLBRIGHT_START

    ordinary = np.ones(256, dtype=bool)
    ordinary[FULLBRIGHT_START:] = False
    everything = np.ones(256, dtype=bool)
    if transparent is not None:
        ordinary[transparent] = everything[transparent] = False
    if sky:
        ordinary[0] = everything[0] = False
    ordinary.flags.writeable = everything.flags.writeable = False
    return ordinary, everything


def encode_wad2(
    rgba: np.ndarray,
    name: str,
    palette: bytes,
    *,
    fullbright: bool = False,
    mask: np.ndarray | None = None,
    dither: bool = False,
    alpha_threshold: int = DEFAULT_ALPHA_THRESHOLD,
    errors: ErrorBatch | None = None,
    exact_error: bool = False,
) -> tuple[list[bytes], int | None, np.ndarray, float, int]:
    """The four mips of a Quake miptex called `name` from RGBA pixels, its transparent index,
    the mip 0 indices, their mean CIEDE2000 error over the drawn pixels and how many pixels it
    was estimated from (0: all drawn pixels; `exact_error` always measures all). Fullbright entries
    (224-255) only where `fullbright` (everywhere) or `mask` (per pixel) allows; clear pixels
    of `{` names become 255, of a sky's front half 0. With `errors` (a batch for `palette`)
    the error is queued there under its next ticket, measured with other pictures', and NaN
    is returned in its place."""
    import numpy as np

    from ..formats.quake.colours import (
        KEY_MASK,
        cell_nearest_keys,
        dither_colours,
        error_sample,
        mean_error_keys,
        mip_allowed,
        mips_from,
    )
    from ..formats.quake.images import miptex_transparent
    from ..formats.quake.palette import FULLBRIGHT_START

    transparent = miptex_transparent(name)
    sky = name.lower().startswith("sky")
    rgba = np.ascontiguousarray(rgba)
    # Each pixel as one packed key (R | G << 8 | B << 16): the RGBA bytes seen as uint32.
    keys = rgba.view("<u4").reshape(-1) & KEY_MASK
    height, width = rgba.shape[:2]
    clear = rgba[..., 3] < alpha_threshold
    ordinary, everything = _allowed_sets(transparent, sky)
    # Pixels that are drawn (not clear): what the mean error is measured over.
    drawn = ~clear if transparent is not None else None
    if sky:
        drawn = ~clear
        drawn[:, width // 2 :] = True
    allowed = everything if fullbright else ordinary
    if dither:
        indices = dither_colours(rgba, palette, allowed)
    else:
        indices = cell_nearest_keys(keys, palette, allowed).reshape(height, width)
    if mask is not None and mask.any() and not fullbright:
        glowing_indices = (
            dither_colours(rgba, palette, everything)
            if dither
            else cell_nearest_keys(keys, palette, everything).reshape(height, width)
        )
        indices = np.where(mask, glowing_indices, indices)
    measured, chosen, sampled = error_sample(keys, indices, drawn, exact=exact_error)
    if errors is None:
        error = mean_error_keys(measured, chosen, palette)
    else:
        errors.add(measured, chosen.copy())  # copied: the clear pixels' indices change below
        error = math.nan
    if transparent is not None:
        indices[clear] = transparent
    if sky:
        front = np.zeros(clear.shape, dtype=bool)
        front[:, : clear.shape[1] // 2] = True
        indices[clear & front] = 0
    # A texture that glows keeps fullbrights in its mips (as a rebuild from its export does).
    glowing = fullbright and bool(((indices >= FULLBRIGHT_START) & (indices != transparent)).any())
    mips = mips_from(indices, palette, transparent, mip_allowed(name, transparent, glowing, False))
    if mask is not None and mask.any() and not fullbright:
        lit_mips = mips_from(indices, palette, transparent, mip_allowed(name, transparent, True, False))
        shrunk = mask.astype(np.float32)
        combined = []
        for plain, lit in zip(mips, lit_mips, strict=True):
            height, width = shrunk.shape[0] // 2, shrunk.shape[1] // 2
            shrunk = shrunk[: height * 2, : width * 2].reshape(height, 2, width, 2).mean(axis=(1, 3))
            chosen = np.where(
                shrunk >= 0.5,
                np.frombuffer(lit, dtype=np.uint8).reshape(height, width),
                np.frombuffer(plain, dtype=np.uint8).reshape(height, width),
            )
            combined.append(chosen.tobytes())
        mips = combined
    return [indices.tobytes(), *mips], transparent, indices, error, sampled


def encode_wad3(
    rgba: np.ndarray,
    name: str,
    *,
    dither: bool = False,
    alpha_threshold: int = DEFAULT_ALPHA_THRESHOLD,
    exact_error: bool = False,
) -> tuple[list[bytes], bytes, int | None, np.ndarray, float, int]:
    """The four mips, own palette, transparent index, mip 0 indices, mean CIEDE2000 error of a
    Half-Life miptex and how many pixels that was estimated from (as `encode_wad2`)."""
    import numpy as np

    from ..formats.quake.colours import (
        KEY_MASK,
        cell_nearest_keys,
        dither_colours,
        error_sample,
        mean_error_keys,
        mip_allowed,
        mips_from,
    )
    from ..formats.quake.images import miptex_transparent

    transparent = miptex_transparent(name)
    rgba = np.ascontiguousarray(rgba)
    keys = rgba.view("<u4").reshape(-1) & KEY_MASK
    clear = rgba[..., 3] < alpha_threshold
    own = own_palette(rgba, clear if transparent is not None else None)
    allowed = np.ones(256, dtype=bool)
    if transparent is not None:
        allowed[transparent] = False
    if dither:
        indices = dither_colours(rgba, own, allowed)
    else:
        indices = cell_nearest_keys(keys, own, allowed).reshape(clear.shape)
    drawn = ~clear if transparent is not None else None
    measured, chosen, sampled = error_sample(keys, indices, drawn, exact=exact_error)
    error = mean_error_keys(measured, chosen, own)
    if transparent is not None:
        indices[clear] = transparent
    mips = [indices.tobytes(), *mips_from(indices, own, transparent, mip_allowed(name, transparent, False, True))]
    return mips, own, transparent, indices, error, sampled


def own_palette(rgba: np.ndarray, clear: np.ndarray | None) -> bytes:
    """A WAD3 texture's palette: the picture's colours (those not `clear`) quantised by Pillow
    to 256 (255 for a `{` texture, whose last entry is the blue Half-Life draws clear), padded
    to 768 bytes."""
    from PIL import Image

    opaque = rgba[..., :3] if clear is None else rgba[~clear][:, :3].reshape(-1, 1, 3)
    if opaque.size == 0:
        opaque = rgba[..., :3].reshape(-1, 1, 3)
    limit = 256 if clear is None else 255
    with Image.fromarray(opaque.astype("uint8"), "RGB") as picture, picture.quantize(limit) as quantised:
        used = bytes(quantised.getpalette() or b"")[: 3 * limit]
    # Fewer colours than entries: the rest repeat the first (never chosen before it).
    table = used + (used[:3] or b"\0\0\0") * ((3 * limit - len(used)) // 3)
    return table + (b"" if clear is None else b"\0\0\xff")


def _summary(
    name: str,
    file: str,
    rgba: Any,
    indices: Any,
    palette: bytes,
    transparent: int | None,
    error: float | None = None,
    sampled: int = 0,
    *,
    exact_error: bool = False,
) -> BuiltTexture:
    """The figures `texture build` prints for one texture (`error` and `sampled` measured as
    `encode_wad2` does unless given)."""
    import numpy as np

    from ..formats.quake.colours import error_sample, mean_error_keys, pack_rgb
    from ..formats.quake.palette import FULLBRIGHT_START

    height, width = indices.shape
    # Counts, not masks of the whole picture: the transparent entry is one of the fullbrights
    # (255) or none of them (a WAD3's, or 0 of a sky).
    glowing = np.count_nonzero(indices >= FULLBRIGHT_START)
    clear = 0 if transparent is None else np.count_nonzero(indices == transparent)
    if transparent is not None and transparent >= FULLBRIGHT_START:
        glowing -= clear
    if error is None:
        kept = None if transparent is None else indices != transparent
        keys = pack_rgb(rgba[..., :3].reshape(-1, 3))
        measured, chosen, sampled = error_sample(keys, indices, kept, exact=exact_error)
        error = mean_error_keys(measured, chosen, palette)
    return BuiltTexture(name, file, width, height, error, glowing / indices.size, clear / indices.size, sampled=sampled)


def build_wad(
    folder: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    palette: str | None = None,
    overwrite: bool = False,
    progress: Callable[[str], object] | None = None,
    palettes: list[str] | None = None,
    wad3: bool = False,
    case: str = "keep",
    dither: bool = False,
    fullbright: str | os.PathLike[str] | None = None,
    resize: bool = False,
    alpha_threshold: int = DEFAULT_ALPHA_THRESHOLD,
    exact_error: bool = False,
) -> list[BuiltTexture]:
    """Make a WAD2 (`wad3`: a Half-Life WAD3) of miptex at `output` from every PNG, TGA and BMP
    of `folder`, under the rules of this module's table (in name order; a folder exported with
    a manifest in its order, byte for byte where unchanged). The palette is `palette` (a
    768-byte file) or Quake's; `fullbright` a folder of masks. Each texture's mean error is
    estimated from a fixed grid of 1 drawn pixel in 16 when it has more than 4,096 (its
    `sampled` says how many), or measured on every drawn pixel with `exact_error`; the WAD's
    bytes are the same either way. Every refusal is one line naming
    the file, before anything is written; the WAD appears whole or not at all. Returns what
    each texture became."""
    from ..core.opening import create
    from ..formats.quake.images import PaletteImage, write_miptex
    from ..formats.quake.palette import built_in_palette, read_palette_file
    from .wad_manifest import manifest_lumps, read_texture_manifest

    root = os.fspath(folder)
    if not os.path.isdir(root):
        raise GamepakError(f"{root}: not a folder of pictures")
    if not 0 <= alpha_threshold <= 256:
        raise GamepakError(f"alpha threshold {alpha_threshold}: between 0 and 256")
    masks = os.fspath(fullbright) if fullbright is not None else None
    if masks is not None and not os.path.isdir(masks):
        raise GamepakError(f"{masks}: not a folder of fullbright masks")
    if palette:
        colours, where = read_palette_file(palette), f"{palette} (--palette)"
    else:
        colours, where = built_in_palette(), "Quake's palette (built in: LibreQuake's)"
    manifest = read_texture_manifest(root)
    lumps: list[tuple[str, bytes]] = []
    built: list[BuiltTexture] = []
    layout = None
    taken: dict[str, str] = {}
    files = pictures_in(root)
    if manifest is not None:
        # An exported WAD: its lumps as the manifest says, then any picture added since.
        lumps, built, colours, wad3 = manifest_lumps(
            root, manifest, colours, functools.partial(_summary, exact_error=exact_error), progress=progress
        )
        layout = manifest.get("exact") or None
        taken = {member["name"].lower(): member["path"] for member in manifest["members"]}
        listed = {member["path"] for member in manifest["members"]}
        files = [name for name in files if name not in listed]
    elif not files:
        raise GamepakError(f"{root}: no PNG, TGA or BMP to build a WAD from")
    from ..formats.quake.ciede2000 import ErrorBatch

    # WAD2 pictures share one palette: their errors are measured in batches (filled in below).
    batch = None if wad3 else ErrorBatch(colours)
    queued: list[tuple[BuiltTexture, int]] = []
    for source in _sources(root, case, files, taken):
        if progress is not None:
            progress(source.file)
        rgba = read_picture(source.path, source.name, resize)
        if wad3:
            mips, own, transparent, indices, error, sampled = encode_wad3(
                rgba, source.name, dither=dither, alpha_threshold=alpha_threshold, exact_error=exact_error
            )
            drawn: bytes | None = own
        else:
            mask = _mask(masks, source, rgba.shape[:2])
            mips, transparent, indices, error, sampled = encode_wad2(
                rgba,
                source.name,
                colours,
                fullbright=source.fullbright,
                mask=mask,
                dither=dither,
                alpha_threshold=alpha_threshold,
                errors=batch,
                exact_error=exact_error,
            )
            drawn = None
        height, width = indices.shape
        image = PaletteImage(source.name, "miptex", width, height, mips, transparent, drawn)
        lumps.append((source.name, write_miptex(image)))
        added = _summary(source.name, source.file, rgba, indices, drawn or colours, transparent, error, sampled)
        added.note = "added" if manifest is not None else ""
        built.append(added)
        if batch is not None:
            queued.append((added, len(batch.means) - 1))
    for texture, ticket in queued:
        texture.error = batch.mean(ticket)  # type: ignore[union-attr]
    if palettes is not None and not wad3 and manifest is None:
        palettes.append(where)
    version = "WAD3" if wad3 else "WAD2"
    with create(output, "wad", overwrite=overwrite, version=version, layout=layout) as writer:
        for name, data in lumps:
            writer.add(name, data)
    return built
