"""Previews of one file by what it holds: images, RFG textures and Quake images as PNG, JOE
models and Quake models and maps as glTF, text, J2ME strings, audio, and a hex view for
everything else.

Which preview a file gets is the table `PREVIEWERS`: (kind, function) pairs tried in order; the
first function to return a `Preview` wins, and a file none takes is shown as hex. A preview of
kind K is drawn by the template `templates/previews/K.html` (given `preview` and the page's
URLs). To add one (say, for tables):

    def table_preview(place, head, kind):        # (Place, first HEAD_BYTES bytes, catalog type)
        if not place.name.endswith(".xtbl"):
            return None                           # not mine: the next previewer is asked
        rows = ...                                # read at most a bounded number of bytes
        return Preview("table", "text/xtbl", data={"rows": rows})

    add_previewer("table", table_preview, before="text")

and write `templates/previews/table.html` (it reads `preview.data.rows`). A previewer raising
GamepakError gives the hex view with the error as a note.

Every preview reads a bounded number of bytes: a member larger than its preview's limit, or an
image with more pixels than `MAX_PIXELS`, is shown as hex with a note, so a bomb-like member
costs no more than its limit whatever its declared size.
"""

from __future__ import annotations

import collections
import io
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import GamepakError

if TYPE_CHECKING:
    from .site import Place

# Bytes read to tell what a file holds.
HEAD_BYTES = 4096
# The largest file shown as an image, model or string list (larger ones: hex and download).
MAX_IMAGE_BYTES = 64 << 20
MAX_MODEL_BYTES = 32 << 20
MAX_STRINGS_BYTES = 4 << 20
# Pixels of the largest image decoded (16384 x 4096, or a 8192 x 8192 texture).
MAX_PIXELS = 1 << 26
# Text shown of a text file, and bytes per page of the hex view.
TEXT_BYTES = 256 << 10
HEX_BYTES = 4096

# Images Pillow decodes; PNG, JPEG and GIF are served as they are (browsers show them).
BROWSER_IMAGES = {"image/png", "image/jpeg", "image/gif"}
DECODED_IMAGES = {"image/bmp", "image/tga", "image/dds", "image/pcx"}
# Audio the browser plays, by its type (the <audio> element fetches /raw/ with this type).
AUDIO_TYPES = {
    "audio/wav": "audio/wav",
    "audio/ogg": "audio/ogg",
    "audio/mpeg": "audio/mpeg",
    "audio/flac": "audio/flac",
}
# Content types /raw/ may send; everything else goes as application/octet-stream.
SAFE_CONTENT_TYPES = BROWSER_IMAGES | set(AUDIO_TYPES.values())


@dataclass
class Preview:
    """What a file's page shows: `kind` names its template (previews/<kind>.html): image,
    textures, model, text, strings, audio, hex, or one a module added (`add_previewer`)."""

    kind: str
    type: str
    notes: list[str] = field(default_factory=list)
    text: str = ""
    strings: list[str] = field(default_factory=list)
    textures: list[dict[str, Any]] = field(default_factory=list)
    hex_rows: list[tuple[str, str, str]] = field(default_factory=list)
    offset: int = 0
    next_offset: int | None = None
    previous_offset: int | None = None
    # What a preview shows beyond the fields above (a model's counts, an added preview's rows).
    data: dict[str, Any] = field(default_factory=dict)


def _head(place: Place) -> bytes:
    with place.open() as stream:
        return stream.read(HEAD_BYTES)


def read_all(place: Place, limit: int) -> bytes:
    """The whole file, refused when it is larger than `limit` (its declared size or what reading
    gives: a member may inflate to more than it declares)."""
    if place.size > limit:
        raise GamepakError(f"{place.path}: {place.size} bytes, more than the {limit >> 20} MiB a preview reads")
    with place.open() as stream:
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise GamepakError(f"{place.path}: more than the {limit >> 20} MiB a preview reads")
    return data


def content_type(place: Place) -> str:
    """The type /raw/ sends: an image or audio type a browser shows, else application/octet-stream."""
    kind = file_type(place, _head(place))
    return kind if kind in SAFE_CONTENT_TYPES else "application/octet-stream"


def file_type(place: Place, head: bytes) -> str:
    """The "family/kind" of a file from its name and first bytes (the catalog's rule)."""
    from ..catalog.kinds import member_type

    return member_type(place.name, head)


def _holder_format(place: Place) -> str | None:
    return place.node.archive.format_name if place.node is not None and place.node.archive is not None else None


def _is_peg(place: Place, head: bytes) -> bool:
    from ..formats.rfg.peg.sources import is_cpu_name

    return is_cpu_name(place.name) and head[:4] == b"GEKV"


def preview(place: Place, offset: int = 0) -> Preview:
    """The preview of a file place (`offset`: where the hex view starts; past 0, always hex)."""
    head = _head(place)
    kind = file_type(place, head)
    note: str | None = None
    if offset == 0:
        try:
            chosen = _typed_preview(place, head, kind)
        except GamepakError as exc:
            chosen, note = None, f"no preview: {exc}"
        if chosen is not None:
            return chosen
    shown = hex_view(place, kind, offset)
    if note:
        shown.notes.append(note)
    return shown


def _typed_preview(place: Place, head: bytes, kind: str) -> Preview | None:
    for _, previewer in PREVIEWERS:
        shown = previewer(place, head, kind)
        if shown is not None:
            return shown
    return None


def _peg_preview(place: Place, head: bytes, kind: str) -> Preview | None:
    if not _is_peg(place, head):
        return None
    return Preview("textures", "texture/peg", textures=peg_textures(place))


def _image_preview(place: Place, head: bytes, kind: str) -> Preview | None:
    if kind not in BROWSER_IMAGES and kind not in DECODED_IMAGES:
        return None
    shown = Preview("image", kind)
    size = image_size(place)
    if size is not None:
        shown.data["width"], shown.data["height"] = size
    return shown


def _model_preview(place: Place, head: bytes, kind: str) -> Preview | None:
    if kind not in ("model/joe", "model/glb"):
        return None
    summary = _model(place).summary()
    shown = Preview("model", kind, data={"vertices": summary["positions"], "faces": summary["faces"]})
    bounds = summary["bounds"]
    if bounds is not None:
        extents = (f"{high - low:.3g}" for low, high in zip(bounds["min"], bounds["max"]))
        shown.data["size"] = " \u00d7 ".join(extents)
    return shown


def _audio_preview(place: Place, head: bytes, kind: str) -> Preview | None:
    return Preview("audio", kind) if kind in AUDIO_TYPES else None


def _strings_preview(place: Place, head: bytes, kind: str) -> Preview | None:
    # J2ME strings have no signature: looked for inside J2ME packs, in files nothing else
    # recognised, and in "text" holding NUL bytes (a string blob named .txt by `extract`).
    holder = _holder_format(place)
    if not ((holder or "").startswith("j2me") or kind == "binary" or b"\0" in head):
        return None
    if place.size > MAX_STRINGS_BYTES:
        return None
    strings = j2me_strings(place, any_shape=True)
    return None if strings is None else Preview("strings", "text/j2me-strings", strings=strings)


def _text_preview(place: Place, head: bytes, kind: str) -> Preview | None:
    if kind.split("/", 1)[0] != "text":
        return None
    with place.open() as stream:
        data = stream.read(TEXT_BYTES + 1)
    shown = Preview("text", kind, text=_decode_text(data[:TEXT_BYTES]))
    if len(data) > TEXT_BYTES:
        shown.notes.append(f"the first {TEXT_BYTES >> 10} KiB of {place.size} bytes")
    return shown


# A previewer: (place, its first HEAD_BYTES bytes, its catalog type) -> a Preview, or None when
# the file is not its kind.
Previewer = Callable[["Place", bytes, str], "Preview | None"]
PREVIEWERS: list[tuple[str, Previewer]] = [
    ("textures", _peg_preview),
    ("textures", lambda place, head, kind: _quake_images_preview(place)),
    ("image", _image_preview),
    ("model", _model_preview),
    ("model", lambda place, head, kind: _quake_model_preview(place, kind)),
    ("audio", _audio_preview),
    ("strings", _strings_preview),
    ("text", _text_preview),
]


def add_previewer(kind: str, previewer: Previewer, *, before: str | None = None) -> None:
    """Add a preview of `kind` (drawn by templates/previews/<kind>.html), asked before the one
    named `before` (default: after all, just before the hex view)."""
    names = [name for name, _ in PREVIEWERS]
    position = names.index(before) if before in names else len(PREVIEWERS)
    PREVIEWERS.insert(position, (kind, previewer))


def _decode_text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start >= len(data) - 3:  # a character cut by the limit
            return data[: exc.start].decode("utf-8")
        return data.decode("cp1252", errors="replace")


def hex_view(place: Place, kind: str, offset: int) -> Preview:
    """HEX_BYTES of the file from `offset`, as rows of offset, hex bytes and text."""
    size = place.size
    offset = max(0, min(offset - offset % 16, max(size - 1, 0) - max(size - 1, 0) % 16))
    with place.open() as stream:
        stream.seek(offset)
        data = stream.read(HEX_BYTES)
    rows = []
    for start in range(0, len(data), 16):
        chunk = data[start : start + 16]
        hex_text = " ".join(f"{byte:02x}" for byte in chunk)
        text = "".join(chr(byte) if 0x20 <= byte < 0x7F else "." for byte in chunk)
        rows.append((f"{offset + start:08x}", hex_text, text))
    shown = Preview("hex", kind, hex_rows=rows, offset=offset)
    if offset + len(data) < size:
        shown.next_offset = offset + len(data)
    if offset > 0:
        shown.previous_offset = max(0, offset - HEX_BYTES)
    return shown


def j2me_strings(place: Place, *, any_shape: bool = False) -> list[str] | None:
    """The strings of a J2ME text pack (a file or a member), one per index as `text export`
    gives them, or None when it is not one. `any_shape`: also strings behind an offset table
    and string blobs (NUL-terminated strings that read as text)."""
    from ..formats.j2me.string_tables import StringTable, TextShapeError, looks_like_text_pack

    if place.size > MAX_STRINGS_BYTES:
        return None
    data = read_all(place, MAX_STRINGS_BYTES)
    if not any_shape and not looks_like_text_pack(data):
        return None
    try:
        table = StringTable.parse(data, "auto", place.path)
    except TextShapeError:
        return None
    if table.kind == "blob" and (len(table) < 2 or b"\0" not in data):
        return None  # one string with no separator: plain text, not a string table
    return table.texts


# -- images ----------------------------------------------------------------------------------------
def _png(image: Any) -> bytes:
    if image.mode not in ("RGB", "RGBA", "L", "LA"):
        image = image.convert("RGBA")
    out = io.BytesIO()
    # Level 1: a preview is looked at once; encoding time matters more than bytes on loopback.
    image.save(out, "PNG", compress_level=1)
    return out.getvalue()


# Bytes of an image read to find its size (a JPEG's size may follow its EXIF data).
IMAGE_HEAD_BYTES = 256 << 10


def image_size(place: Place) -> tuple[int, int] | None:
    """An image file's (width, height) from its first bytes, or None when Pillow cannot tell."""
    from PIL import Image

    with place.open() as stream:
        head = stream.read(IMAGE_HEAD_BYTES)
    try:
        with Image.open(io.BytesIO(head)) as image:
            return image.size
    except (OSError, ValueError, Image.DecompressionBombError, SyntaxError):
        return None


def image_bytes(place: Place) -> tuple[bytes, str]:
    """(bytes, content type) of an image file for an <img>: PNG/JPEG/GIF as stored, others
    decoded with Pillow and sent as PNG."""
    data = read_all(place, MAX_IMAGE_BYTES)
    kind = file_type(place, data[:HEAD_BYTES])
    if kind in BROWSER_IMAGES:
        return data, kind
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
            if width * height > MAX_PIXELS:
                raise GamepakError(f"{place.path}: {width}x{height} pixels, more than a preview decodes")
            image.load()
            return _png(image), "image/png"
    except (OSError, ValueError, Image.DecompressionBombError, SyntaxError) as exc:
        raise GamepakError(f"{place.path}: not an image Pillow can read: {exc}") from None


# Parsed pegs kept for the next /texture/ request of the same page, by the files' identities
# (path, size, modification time): a peg pair is read once, not once per texture.
PEG_CACHE_BYTES = 160 << 20
PEG_CACHE_COUNT = 8
_pegs: collections.OrderedDict[tuple[object, ...], tuple[Any, int]] = collections.OrderedDict()
_pegs_lock = threading.Lock()


def _peg(place: Place) -> Any:
    from ..formats.rfg.peg import Peg
    from ..formats.rfg.peg.sources import is_cpu_name, partner_name

    if not is_cpu_name(place.name):
        raise GamepakError(f"{place.path}: not a peg's CPU file (.cpeg_pc, .cvbm_pc)")
    gpu = place.sibling(partner_name(place.name))
    if gpu is None:
        raise GamepakError(f"{place.path}: its GPU partner {partner_name(place.name)} is not beside it")
    key = (place.identity, gpu.identity)
    with _pegs_lock:
        if key in _pegs:
            _pegs.move_to_end(key)
            return _pegs[key][0]
    cpu_data = read_all(place, MAX_IMAGE_BYTES)
    gpu_data = read_all(gpu, MAX_IMAGE_BYTES * 4)
    peg = Peg.parse(cpu_data, gpu_data, name=place.path)
    cost = len(cpu_data) + len(gpu_data)
    if cost <= PEG_CACHE_BYTES:
        with _pegs_lock:
            _pegs[key] = (peg, cost)
            while len(_pegs) > PEG_CACHE_COUNT or sum(size for _, size in _pegs.values()) > PEG_CACHE_BYTES:
                _pegs.popitem(last=False)
    return peg


def peg_textures(place: Place) -> list[dict[str, Any]]:
    """The textures of a peg CPU file: name, size, pixel format and mip count."""
    return [
        {
            "name": texture.name,
            "width": texture.width,
            "height": texture.height,
            "format": texture.format.name,
            "mips": texture.mips,
        }
        for texture in _peg(place).textures
    ]


def texture_png(place: Place, name: str, mip: int = 0) -> bytes:
    """One mip level of a texture of a peg (0: the top one) as PNG, from the texture decoder;
    of a Quake image file, through its palette."""
    if _quake_image_kind(place, maps=True) is not None:
        return _quake_png(place, name, mip)
    from PIL import Image

    from ..formats.rfg.peg.layout import level_dims, level_size
    from ..formats.rfg.peg.pixels import decode

    peg = _peg(place)
    texture = peg.texture(name)
    if texture.width * texture.height > MAX_PIXELS:
        raise GamepakError(
            f"{place.path}: {name}: {texture.width}x{texture.height} pixels, more than a preview decodes"
        )
    if mip == 0:
        return _png(peg.read_pil(name))
    levels = level_dims(texture.width, texture.height, texture.mips)
    if not 0 <= mip < len(levels):
        raise GamepakError(f"{place.path}: {name}: no mip {mip} (it has {len(levels)}: 0 to {len(levels) - 1})")
    start = sum(level_size(texture.format, width, height) for width, height in levels[:mip])
    width, height = levels[mip]
    chain = peg.mip_data(name)
    pixels = decode(
        texture.format, chain[start : start + level_size(texture.format, width, height)], width, height, peg.order
    )
    return _png(Image.fromarray(pixels, "RGBA"))


# -- models ----------------------------------------------------------------------------------------
def _model(place: Place, data: bytes | None = None) -> Any:
    from ..models import loads

    if data is None:
        data = read_all(place, MAX_MODEL_BYTES)
    model_format = "glb" if data[:4] == b"glTF" else "joe"
    return loads(data, model_format, name=os.path.splitext(place.name)[0], path=place.path)


def model_glb(place: Place) -> bytes:
    """A model file as binary glTF for the viewer (JOE converted; GLB as stored)."""
    from ..models import dumps

    data = read_all(place, MAX_MODEL_BYTES)
    if data[:4] == b"glTF":
        return data
    quake = _quake_model_kind(place)
    if quake is not None:
        from ..models.quake import export_bytes

        return export_bytes(quake, data, place.path, _disk_path(place))
    return dumps(_model(place, data), "glb")


# -- scenes (VDrift tracks and cars) ----------------------------------------------------------------
# Scenes kept built: a track's scene is both the page's counts and the viewer's glTF.
SCENES_KEPT = 4
_scenes: collections.OrderedDict[tuple[Any, ...], tuple[dict[str, Any], bytes]] = collections.OrderedDict()
_scenes_lock = threading.Lock()


def _fresh_locks() -> None:
    """In a forked preview worker (`isolate`): the caches' locks anew, as a thread of the server
    may have held one when it forked (the worker's copy would never be released)."""
    global _pegs_lock, _scenes_lock
    _pegs_lock, _scenes_lock = threading.Lock(), threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fresh_locks)


def _scene_signature(folder: str) -> tuple[Any, ...]:
    """What a scene is read from, by size and modification time: a change to any of them makes
    it another scene."""
    from ..models.scene.car import find_car_file
    from ..models.scene.track import find_track_folder

    track = find_track_folder(folder)
    if track is not None:
        names = [os.path.join(track, "objects", name) for name in ("list.txt", "objects.jpk")]
        names.append(os.path.join(track, "objects"))
    else:
        names = [find_car_file(folder) or folder, folder]
    signature: list[Any] = [folder]
    for name in names:
        try:
            info = os.stat(name)
            signature.append((name, info.st_size, info.st_mtime_ns))
        except OSError:
            signature.append((name, None))
    return tuple(signature)


def is_scene(folder: str) -> bool:
    """Whether a folder on disk is a VDrift track or car the viewer shows as a scene."""
    from ..models import scene

    return scene.is_scene(folder)


def scene(folder: str, root: str) -> tuple[dict[str, Any], bytes]:
    """(the counts and warnings `model info` gives, the scene as binary glTF) of the track or car
    in `folder`, reading nothing outside `root` (links followed); the last few are kept."""
    built = kept_scene(folder)
    if built is None:
        built = build_scene(folder, root)
        keep_scene(folder, built)
    return built


def kept_scene(folder: str) -> tuple[dict[str, Any], bytes] | None:
    """The scene of `folder` as last built, if its files have not changed since (`keep_scene`)."""
    key = _scene_signature(folder)
    with _scenes_lock:
        if key in _scenes:
            _scenes.move_to_end(key)
            return _scenes[key]
    return None


def keep_scene(folder: str, built: tuple[dict[str, Any], bytes]) -> None:
    """Keep a built scene for the next page (the last few are kept)."""
    key = _scene_signature(folder)
    with _scenes_lock:
        _scenes[key] = built
        while len(_scenes) > SCENES_KEPT:
            _scenes.popitem(last=False)


def build_scene(folder: str, root: str) -> tuple[dict[str, Any], bytes]:
    """`scene` without its cache: what a preview worker (`isolate`) builds."""
    from ..models import scene as scenes
    from ..models.scene import gltf

    found = scenes.load(folder, confine=root)
    summary = found.summary()
    summary["warnings"] = [warning.replace(root.rstrip(os.sep) + os.sep, "") for warning in summary["warnings"]]
    summary.pop("source", None)
    return summary, b"".join(gltf.part_bytes(part) for part in gltf.glb_parts(found))


# -- Quake: images (qpic, miptex, conchars, WAL, sprite frames) and models (MDL, BSP) --------------
QUAKE_MODEL_TYPES = {"model/quake-mdl": "mdl", "map/quake-bsp": "bsp"}


def _disk_path(place: Place) -> str:
    """The file on disk a place is (or whose pack holds it): where a palette is looked for."""
    if place.disk_path is not None:
        return place.disk_path
    return place._pack_key[0] if place._pack_key is not None else place.path


def _quake_image_kind(place: Place, *, maps: bool = False) -> str | None:
    """The Quake image kind of a file place: a WAD lump's kind, else by name. An MDL is a model
    here; a BSP too, unless `maps` (its textures, shown under the map)."""
    from ..formats.quake.sources import kind_of_extension

    lump_kind = getattr(place.entry, "kind", None)
    if lump_kind is not None:
        return lump_kind if lump_kind in ("qpic", "miptex", "conchars") else None
    kind = kind_of_extension(place.name)
    return kind if kind in ("qpic", "wal", "spr", "miptex") or (maps and kind == "bsp") else None


def _quake_images(place: Place, *, maps: bool = False) -> list[Any] | None:
    """The palette images of a Quake image file (with `maps`, of a map too), or None when it is
    not one (a .lmp that is a palette, or a file without the kind's signature)."""
    from ..formats.quake.sources import has_signature, read_images

    kind = _quake_image_kind(place, maps=maps)
    if kind is None:
        return None
    data = read_all(place, MAX_IMAGE_BYTES)
    if not has_signature(kind, data):
        return None
    name = place.name if getattr(place.entry, "kind", None) is not None else os.path.splitext(place.name)[0]
    return [image for image in read_images(kind, data, name, place.path) if image.mips]


def _quake_gallery(found: list[Any]) -> list[dict[str, Any]]:
    return [
        {
            "name": image.name,
            "width": image.width,
            "height": image.height,
            "format": image.kind,
            "mips": len(image.mips),
        }
        for image in found
    ]


def _quake_images_preview(place: Place) -> Preview | None:
    found = _quake_images(place)
    if not found:
        return None
    return Preview("textures", "texture/quake", textures=_quake_gallery(found))


def _quake_png(place: Place, name: str, mip: int) -> bytes:
    from ..formats.quake.images import mip_sizes, png_from_rgba, rgba_bytes
    from ..formats.quake.palette import find_palette

    for image in _quake_images(place, maps=True) or []:
        if image.name == name:
            if not 0 <= mip < len(image.mips):
                raise GamepakError(f"{place.path}: {name}: no mip {mip} (it has {len(image.mips)})")
            width, height = mip_sizes(image.width, image.height)[mip] if mip else (image.width, image.height)
            return png_from_rgba(width, height, rgba_bytes(image, find_palette(_disk_path(place)), mip))
    from ..errors import MemberNotFoundError

    raise MemberNotFoundError(name, place.path)


def _quake_model_kind(place: Place) -> str | None:
    from ..formats.quake.sources import kind_of_extension

    kind = kind_of_extension(place.name)
    return kind if kind in ("mdl", "bsp") else None


def _quake_model_preview(place: Place, kind: str) -> Preview | None:
    quake = QUAKE_MODEL_TYPES.get(kind)
    if quake is None or _quake_model_kind(place) != quake:
        return None
    from ..models.quake import summary

    counts = summary(quake, read_all(place, MAX_MODEL_BYTES), place.path)
    preview = Preview("model", kind, data={"vertices": counts["vertices"], "faces": counts["triangles"]})
    if quake == "bsp":  # a map's own textures, as a gallery under the 3D view
        preview.textures = _quake_gallery(_quake_images(place, maps=True) or [])
    return preview
