"""Previews of one file by what it holds: images and RFG textures as PNG, JOE models as glTF,
text, J2ME strings, audio, and a hex view for everything else.

Every preview reads a bounded number of bytes: a member larger than its preview's limit, or an
image with more pixels than `MAX_PIXELS`, is shown as hex with a note, so a bomb-like member
costs no more than its limit whatever its declared size.
"""

from __future__ import annotations

import collections
import io
import os
import threading
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
    """What a file's page shows: `kind` is image, textures, model, text, strings, audio or hex."""

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


def _head(place: Place) -> bytes:
    with place.open() as stream:
        return stream.read(HEAD_BYTES)


def _read_all(place: Place, limit: int) -> bytes:
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
    family = kind.split("/", 1)[0]
    if _is_peg(place, head):
        return Preview("textures", "texture/peg", textures=peg_textures(place))
    if kind in BROWSER_IMAGES or kind in DECODED_IMAGES:
        return Preview("image", kind)
    if kind in ("model/joe", "model/glb"):
        return Preview("model", kind)
    if kind in AUDIO_TYPES:
        return Preview("audio", kind)
    holder = _holder_format(place)
    # J2ME text packs have no signature: tried inside J2ME packs, and on unrecognised files.
    if ((holder or "").startswith("j2me") or kind == "binary") and place.size <= MAX_STRINGS_BYTES:
        strings = j2me_strings(place)
        if strings is not None:
            return Preview("strings", "text/j2me-strings", strings=strings)
    if family == "text":
        with place.open() as stream:
            data = stream.read(TEXT_BYTES + 1)
        shown = Preview("text", kind, text=_decode_text(data[:TEXT_BYTES]))
        if len(data) > TEXT_BYTES:
            shown.notes.append(f"the first {TEXT_BYTES >> 10} KiB of {place.size} bytes")
        return shown
    return None


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
    """The strings of a J2ME text pack (a file or a member), or None when it is not one."""
    from ..formats.j2me.text import decode_string, looks_like_text_pack, parse_text_pack

    if place.size > MAX_STRINGS_BYTES:
        return None
    data = _read_all(place, MAX_STRINGS_BYTES)
    if not looks_like_text_pack(data):
        return None
    raw_strings, _ = parse_text_pack(data, place.path)
    return [decode_string(raw) for raw in raw_strings]


# -- images ----------------------------------------------------------------------------------------
def _png(image: Any) -> bytes:
    if image.mode not in ("RGB", "RGBA", "L", "LA"):
        image = image.convert("RGBA")
    out = io.BytesIO()
    # Level 1: a preview is looked at once; encoding time matters more than bytes on loopback.
    image.save(out, "PNG", compress_level=1)
    return out.getvalue()


def image_bytes(place: Place) -> tuple[bytes, str]:
    """(bytes, content type) of an image file for an <img>: PNG/JPEG/GIF as stored, others
    decoded with Pillow and sent as PNG."""
    data = _read_all(place, MAX_IMAGE_BYTES)
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
    cpu_data = _read_all(place, MAX_IMAGE_BYTES)
    gpu_data = _read_all(gpu, MAX_IMAGE_BYTES * 4)
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


def texture_png(place: Place, name: str) -> bytes:
    """One texture of a peg (its top mip) as PNG, from the texture decoder."""
    peg = _peg(place)
    texture = peg.texture(name)
    if texture.width * texture.height > MAX_PIXELS:
        raise GamepakError(
            f"{place.path}: {name}: {texture.width}x{texture.height} pixels, more than a preview decodes"
        )
    return _png(peg.read_pil(name))


# -- models ----------------------------------------------------------------------------------------
def model_glb(place: Place) -> bytes:
    """A model file as binary glTF for the viewer (JOE converted; GLB as stored)."""
    from ..models import dumps, loads

    data = _read_all(place, MAX_MODEL_BYTES)
    if data[:4] == b"glTF":
        return data
    mesh = loads(data, "joe", name=os.path.splitext(place.name)[0], path=place.path)
    return dumps(mesh, "glb")
