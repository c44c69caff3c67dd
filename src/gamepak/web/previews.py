"""Previews of one file by what it holds: images, RFG textures and Quake images as PNG, JOE
models, RFG meshes and Quake models and maps as glTF, Gameloft sprites, RFG zones as maps, text,
J2ME strings, audio, and a hex view for everything else.

Which preview a file gets is the table `PREVIEWERS`: (kind, function) pairs tried in order; the
first function to return a `Preview` wins, and a file none takes is shown as hex. Content kinds
(textures, models, strings, sprites, zones: `gamepak.content`) come first, through the
registry: the kinds of the file (by name, signature or WAD lump kind, loose or inside a pack
alike; either file of a two-file kind, shown through its first) are asked in order, each for
its preview (`CONTENT_VIEWS`, by the kind's template: a texture gallery, a 3D view with its
counts, a list of strings, a sprite's pictures, a zone's map), filled by the kind's own verbs
(`gallery`/`png`, `counts`/`glb`, `strings`, `preview`); a new content kind needs nothing here.
A preview of kind K is drawn by the template
`templates/previews/K.html` (given `preview` and the page's URLs). To add one for files that
are no content kind (say, fonts):

    def font_preview(place, head, kind):          # (Place, first HEAD_BYTES bytes, catalog type)
        if not place.name.endswith(".ttf"):
            return None                           # not mine: the next previewer is asked
        glyphs = ...                              # read at most a bounded number of bytes
        return Preview("font", "font/ttf", data={"glyphs": glyphs})

    add_previewer("font", font_preview, before="text")

and write `templates/previews/font.html` (it reads `preview.data.glyphs`). A previewer raising
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
# A strings file's limit is every strings reader's (`core.content_limits`'s `strings_bytes`);
# a preview lists its first PREVIEW_STRINGS (the strings page shows them all, a page at a time),
# so the page the server renders stays small whatever the file's size.
PREVIEW_STRINGS = 1000
# A zone's size limit is the one every zone reader keeps (`core.content_limits`'s `zone_bytes`):
# the preview parses it in a memory-capped worker, so it needs no smaller bound of its own.
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
    from ..core.sizes import size_text

    if place.size > limit:
        raise GamepakError(f"{place.path}: {place.size} bytes, more than the {size_text(limit)} a preview reads")
    with place.open() as stream:
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise GamepakError(f"{place.path}: more than the {size_text(limit)} a preview reads")
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


def _image_preview(place: Place, head: bytes, kind: str) -> Preview | None:
    if kind not in BROWSER_IMAGES and kind not in DECODED_IMAGES:
        return None
    shown = Preview("image", kind)
    size = image_size(place)
    if size is not None:
        shown.data["width"], shown.data["height"] = size
    return shown


def _audio_preview(place: Place, head: bytes, kind: str) -> Preview | None:
    return Preview("audio", kind) if kind in AUDIO_TYPES else None


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
    ("content", lambda place, head, kind: _content_preview(place, head, probe=False)),
    ("image", _image_preview),
    ("audio", _audio_preview),
    # Kinds with no name or signature (J2ME strings), asked once images and audio said no.
    ("strings", lambda place, head, kind: _content_preview(place, head, probe=True)),
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


def j2me_strings(place: Place) -> list[str] | None:
    """The first PREVIEW_STRINGS strings of J2ME strings of any shape (a file or a member), one
    per index as `text export` gives them, or None when it holds none (the content registry's
    J2ME row)."""
    from ..content import of_member

    largest = _strings_bytes()
    if place.size > largest:
        return None
    for row in of_member(place.name, _head(place), holder=_holder_format(place), family="strings"):
        found = row.call("strings", read_all(place, largest), place.path)
        if found is not None:
            return [text for _, _, text in found[1][:PREVIEW_STRINGS]]
    return None


# -- images ----------------------------------------------------------------------------------------
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

    # The registry's PNG encoding of every preview (level 1: a preview is looked at once).
    from ..content.previews import png_bytes

    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
            if width * height > MAX_PIXELS:
                raise GamepakError(f"{place.path}: {width}x{height} pixels, more than a preview decodes")
            image.load()
            return png_bytes(image), "image/png"
    except (OSError, ValueError, Image.DecompressionBombError, SyntaxError) as exc:
        raise GamepakError(f"{place.path}: not an image Pillow can read: {exc}") from None


def texture_png(place: Place, name: str, mip: int = 0) -> bytes:
    """One mip level (0: the top one) of a texture of a content file's gallery, as PNG: the
    first kind of the file (content registry) that draws textures draws it."""
    head = _head(place)
    for row in _kinds(place, head, probe=False):
        if row.has("png"):
            return bytes(
                row.call(
                    "png",
                    read_all(place, MAX_IMAGE_BYTES),
                    place.name,
                    place.path,
                    name,
                    mip,
                    options=_options(place, row),
                )
            )
    raise GamepakError(f"{place.path}: holds no textures")


def model_glb(place: Place) -> bytes:
    """A model file as binary glTF for the viewer: by the first kind of the file (content
    registry) that makes one (a two-file kind's: read through its first file)."""
    head = _head(place)
    for row in _kinds(place, head, probe=False):
        if row.has("glb"):
            own = _first_file(place, row)
            data = read_all(own, MAX_MODEL_BYTES)
            return bytes(row.call("glb", data, own.path, options=_options(own, row, MAX_MODEL_BYTES)))
    raise GamepakError(f"{place.path}: not a model the viewer shows")


# -- scenes (VDrift tracks and cars) ----------------------------------------------------------------
# Scenes kept built: a track's scene is both the page's counts and the viewer's glTF.
SCENES_KEPT = 4
_scenes: collections.OrderedDict[tuple[Any, ...], tuple[dict[str, Any], bytes]] = collections.OrderedDict()
_scenes_lock = threading.Lock()


def _fresh_locks() -> None:
    """In a forked preview worker (`isolate`): the caches' locks anew, as a thread of the server
    may have held one when it forked (the worker's copy would never be released)."""
    global _scenes_lock
    _scenes_lock = threading.Lock()


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


# -- content kinds (the content registry) ----------------------------------------------------------
def _disk_path(place: Place) -> str:
    """The file on disk a place is (or whose pack holds it): where a palette is looked for."""
    if place.disk_path is not None:
        return place.disk_path
    return place._pack_key[0] if place._pack_key is not None else place.path


def _kinds(place: Place, head: bytes, *, probe: bool) -> list[Any]:
    """The content kinds of a file place (a WAD lump by its lump kind)."""
    from ..content import of_member

    found = of_member(
        place.name,
        head,
        lump=getattr(place.entry, "kind", None),
        holder=_holder_format(place),
        probe=probe,
        partners=True,
    )
    return found if not probe else [row for row in found if row.has("probe")]


def _partner(place: Place, row: Any) -> Place:
    """The other file of a two-file kind (a peg's GPU file, a mesh's CPU file), beside `place`
    (in its folder, or in the same pack)."""
    wanted = row.call("partner", place.name)
    partner = place.sibling(wanted)
    if partner is None:
        raise GamepakError(f"{place.path}: its partner {wanted} is not beside it")
    return partner


def _first_file(place: Place, row: Any) -> Place:
    """The file a kind's verbs read: `place`, or its partner when `place` is the second file of
    a two-file kind (a mesh's GPU file is shown through its CPU file)."""
    return _partner(place, row) if row.partner_named_by(place.name) else place


def _options(place: Place, row: Any, limit: int = MAX_IMAGE_BYTES * 4) -> dict[str, Any]:
    """What a row's preview verbs may take: the WAD lump kind, where the palette is looked for,
    the pack a member lies in and what lies beside it (where a mesh's textures are looked for),
    and the partner file a kind reads beside its own (a peg's GPU file, at most `limit` bytes),
    read only when needed."""
    pack_key = place._pack_key
    pack = pack_key[0] if place.node is not None and pack_key else None
    options: dict[str, Any] = {
        "lump": getattr(place.entry, "kind", None),
        "palette": _disk_path(place),
        "palette_near": _disk_path(place),
        "pack": pack,
        "beside": place.disk_path or pack,
    }
    if row.has("partner"):
        partner = _partner(place, row)
        options["partner"] = lambda: read_all(partner, limit)
        options["key"] = (place.identity, partner.identity)
    return options


def _gallery(place: Place, row: Any, data: bytes, options: dict[str, Any]) -> list[dict[str, Any]]:
    return list(row.call("gallery", data, place.name, place.path, options=options)) if row.has("gallery") else []


def _textures_view(place: Place, row: Any, kind: str) -> Preview | None:
    data = read_all(place, MAX_IMAGE_BYTES)
    found = _gallery(place, row, data, _options(place, row))
    return Preview("textures", kind, textures=found) if found else None


def _model_view(place: Place, row: Any, kind: str) -> Preview | None:
    if not row.has("counts"):
        return None
    place = _first_file(place, row)
    data = read_all(place, MAX_MODEL_BYTES)
    options = _options(place, row, MAX_MODEL_BYTES)
    shown = Preview("model", kind, data=dict(row.call("counts", data, place.path, options=options)))
    # A kind that also holds textures (a Quake map) shows them in a gallery under its 3D view.
    shown.textures = _gallery(place, row, data, options)
    return shown


def _strings_bytes() -> int:
    from ..core.content_limits import current

    return current().strings_byte_budget()


def _strings_view(place: Place, row: Any, kind: str) -> Preview | None:
    largest = _strings_bytes()
    if place.size > largest:
        return None
    found = row.call("strings", read_all(place, largest), place.path)
    if found is None:
        return None
    rows = found[1]
    shown = Preview("strings", kind, strings=[text for _, _, text in rows[:PREVIEW_STRINGS]])
    if len(rows) > PREVIEW_STRINGS:
        shown.notes.append(f"{len(rows):,} strings: the first {PREVIEW_STRINGS:,} are shown (all on the strings page)")
    return shown


def _sprite_view(place: Place, row: Any, kind: str) -> Preview | None:
    """The `sprite` template (a Gameloft sprite's module sheet, frames and animations, per
    palette), from the kind's `preview` verb; its PNGs become data: URLs (the page's CSP allows
    them for images). A file larger than the kind's `max_bytes` is not one."""
    import base64

    limit = row.max_bytes or MAX_IMAGE_BYTES
    if place.size > limit:
        return None

    def url(png: bytes) -> str:
        return "data:image/png;base64," + base64.b64encode(png).decode("ascii")

    found = row.call("preview", read_all(place, limit), place.path)
    for palette in found["palettes"]:
        palette["sheet"] = url(palette["sheet"])
        for picture in palette["frames"] + palette["anims"]:
            picture["url"] = url(picture.pop("png"))
    return Preview(row.preview, kind, data=found)


def _zone_view(place: Place, row: Any, kind: str) -> Preview | None:
    """The `zone` template (an RFG zone as a map seen from above, its objects and their
    properties), from the kind's `preview` verb (None: named like a zone, but not one)."""
    from ..core.content_limits import current

    found = row.call("preview", read_all(place, current().zone_bytes), place.path)
    return Preview("zone", kind, data=found) if found is not None else None


# How each preview template of the content registry is filled.
CONTENT_VIEWS: dict[str, Callable[[Place, Any, str], Preview | None]] = {
    "textures": _textures_view,
    "model": _model_view,
    "strings": _strings_view,
    "sprite": _sprite_view,
    "zone": _zone_view,
}


def _content_preview(place: Place, head: bytes, *, probe: bool) -> Preview | None:
    """The preview of the first content kind of the file that gives one (content registry)."""
    kind = file_type(place, head)
    for row in _kinds(place, head, probe=probe):
        view = CONTENT_VIEWS.get(row.preview or "")
        shown = view(place, row, kind) if view is not None else None
        if shown is not None:
            return shown
    return None
