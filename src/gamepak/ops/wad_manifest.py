"""What `texture export` of a WAD writes beside its pictures (`.gamepak-textures.json`) so that
`texture build` of the folder gives the same WAD back byte for byte, and an edited picture
changes only its own lump.

The manifest follows the schema of `extract --manifest` (`ops.manifest`: format, options, the
members in order with name, file and size, and the `exact` layout the WAD writer replays: lump
positions, types, directory name fields with bytes after the NUL, filler), plus:

    "palette": "base64",                 # WAD2: the palette the pictures were drawn through
    members[i]["texture"] = {            # a lump exported as a picture
        "kind": "miptex",                # qpic, miptex or conchars
        "width": 64, "height": 64,
        "digest": "hex",                 # of the picture's RGBA pixels as exported (SHA-256, 128 bits)
        "name_field": "base64",          # miptex: its own 16-byte name field, when not clean
        "palette": "base64",             # WAD3: the texture's own palette
        "tail": "base64",                # bytes after the image (WAD3 padding, conchars' extra)
        "mips_xor": "base64 of zlib",    # the stored indices XOR those the picture gives (a
                                         # repeated palette colour, mips another tool filtered)
        "data": "base64 of zlib"         # the whole lump, when nothing less rebuilds it
    }

A lump that is no picture (a palette, a sound) is written as it is, as `<name>.lump`. While a
picture's pixels still have their digest, its lump is rebuilt from the fields above; an edited
picture is re-encoded as `texture import` does (exact palette colours keep their entries,
others the nearest ordinary colour, mips rebuilt).
"""

from __future__ import annotations

import functools
import os

from ..errors import GamepakError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Container
    from typing import Any

    import numpy as np

    from ..formats.quake.images import PaletteImage

TEXTURE_MANIFEST_NAME = ".gamepak-textures.json"
IMAGE_KINDS = ("qpic", "miptex", "conchars")
RAW_SUFFIX = ".lump"
# A manifest is text a user may edit: bounded before it is parsed.
MANIFEST_LIMIT = 64 << 20


def is_loose_wad(path: str) -> bool:
    """Whether `path` is a WAD2/WAD3 file (not a pack holding one)."""
    if not os.path.isfile(path):
        return False
    with open(path, "rb") as handle:
        return handle.read(4) in (b"WAD2", b"WAD3")


def pixel_digest(rgba: np.ndarray | bytes, width: int, height: int) -> str:
    """The digest that tells an exported picture unchanged: its size and RGBA pixels."""
    import hashlib

    data = rgba if isinstance(rgba, bytes) else rgba.tobytes()
    # 128 bits of SHA-256: a picture edited by chance into the same digest is not a worry, and
    # a WAD of 50,000 tiny pictures keeps a smaller manifest.
    return hashlib.sha256(f"{width}x{height}:".encode() + data).hexdigest()[:32]


def _pack(data: bytes) -> str:
    import zlib

    from ..core.layout import encode_blob

    return encode_blob(zlib.compress(data, 9))


def _unpack(text: str, limit: int, where: str, field: str) -> bytes:
    import zlib

    from ..core.layout import decode_blob

    decompressor = zlib.decompressobj()
    try:
        data = decompressor.decompress(decode_blob(text), limit + 1)
    except zlib.error as exc:
        raise GamepakError(f"{where}: manifest field {field}: not zlib data ({exc})") from None
    if len(data) > limit or decompressor.unconsumed_tail:
        raise GamepakError(f"{where}: manifest field {field}: more than the {limit} bytes the lump can hold")
    return data


def _regenerate(template: PaletteImage, rgba: np.ndarray, palette: bytes) -> PaletteImage:
    """The image `texture import` makes of `rgba` in place of `template` (exact colours keep
    their entries, others the nearest ordinary one), its mips rebuilt as `texture build` makes
    them (fullbrights in the mips only for a texture that has them): what build does for an
    edited picture, and what export compares with the stored lump to see which fields the
    manifest must keep."""
    from ..formats.quake.colours import mip_allowed, mips_from
    from ..formats.quake.images import PaletteImage, from_rgba
    from ..formats.quake.palette import FULLBRIGHT_START

    indices = from_rgba(rgba, palette, template.transparent, fullbright=False)
    height, width = indices.shape
    mips = [indices.tobytes()]
    if len(template.mips) > 1:
        if width % 8 or height % 8:
            raise GamepakError(
                f"{template.name}: a texture with mips must be a multiple of 8 wide and high, not {width}x{height}"
            )
        # A WAD3 palette has no fullbright range; a Quake texture that glows keeps them in its mips.
        glowing = template.palette is not None or bool(
            ((indices >= FULLBRIGHT_START) & (indices != template.transparent)).any()
        )
        allowed = mip_allowed(template.name, template.transparent, glowing, template.palette is not None)
        mips += mips_from(indices, palette, template.transparent, allowed)
    return PaletteImage(template.name, template.kind, width, height, mips, template.transparent, template.palette)


def _template(texture: dict[str, Any], name: str, mips: int, own: bytes | None) -> PaletteImage:
    from ..formats.quake.images import PaletteImage, miptex_transparent

    kind = texture["kind"]
    transparent = {"qpic": 255, "conchars": 0}.get(kind, miptex_transparent(name))
    return PaletteImage(name, kind, texture["width"], texture["height"], [b""] * mips, transparent, own)


def _miptex_parts(data: bytes, image: PaletteImage) -> tuple[bytes, bytes]:
    """A miptex's 16-byte name field and the bytes after its last mip (and WAD3 palette)."""
    end = 40 + sum(len(mip) for mip in image.mips)
    if image.palette is not None:
        end += 2 + 768
    return data[:16], data[end:]


def _encode_lump(image: PaletteImage, texture: dict[str, Any], own: bytes | None) -> bytes:
    """The bytes of an image lump, with the manifest's name field and tail."""
    from ..core.layout import decode_blob
    from ..formats.quake import sources

    image.palette = own
    if image.kind == "miptex":
        image.header = decode_blob(texture["name_field"]) if "name_field" in texture else b""
        data = sources.encode(image)
        if own is not None:
            data = data[: 40 + sum(len(mip) for mip in image.mips) + 2 + 768]  # the tail replaces the padding
        return data + (decode_blob(texture["tail"]) if "tail" in texture else b"")
    if image.kind == "conchars":
        image.extras["tail"] = decode_blob(texture["tail"]) if "tail" in texture else b""
    return sources.encode(image)


def manifest_files(path: str, palette: bytes, exported: Container[str]) -> list[tuple[str, bytes | list[bytes]]]:
    """The manifest (and the raw files of lumps that are no picture) for the export of the loose
    WAD at `path`, whose pictures were drawn through `palette`; `exported` the pictures written."""
    import json

    from ..core.layout import encode_blob
    from ..formats.quake import sources
    from ..formats.quake.wad import Reader
    from .manifest import MANIFEST_VERSION

    files: list[tuple[str, bytes | list[bytes]]] = []
    compact = {"separators": (",", ":"), "ensure_ascii": True}
    with Reader(path) as reader:
        layout = reader.layout()
        wad3 = bool(getattr(reader, "wad3", False))
        version = "WAD3" if wad3 else "WAD2"
        document: dict[str, Any] = {
            "gamepak_manifest": MANIFEST_VERSION,
            "format": "wad",
            "source": os.path.basename(path),
            "size": os.path.getsize(path),
            "options": layout.get("options", {"version": version}),
            "exact": layout.get("exact", {}),
        }
        if version == "WAD2":
            document["palette"] = encode_blob(palette)
        head = json.dumps(document, **compact)  # type: ignore[arg-type]
        del document, layout
        # The text made in pieces of 1,024 members, each member's JSON made as soon as it is
        # known, and written piece by piece: a WAD of 50,000 tiny pictures held a list of
        # 50,000 short byte strings, then their join (one growing buffer is copied, so held
        # twice, each time it grows).
        pieces = [(head[:-1] + ',"members":[').encode("ascii")]
        del head
        batch: list[str] = []
        separator = ""  # the comma before each member but the first
        for entry in reader.iter_lumps():
            data = reader.read(entry)
            picture = entry.name + ".png"
            member: dict[str, Any] = {"name": entry.name, "size": entry.size}
            if entry.kind in IMAGE_KINDS and picture in exported:
                (image,) = sources.read_images(entry.kind, data, entry.name, f"{path}:{entry.name}", wad3=wad3)
                member["path"] = picture
                member["texture"] = _texture_fields(image, data, palette)
            else:
                member["path"] = entry.name + RAW_SUFFIX
                files.append((member["path"], data))
            batch.append(separator + json.dumps(member, **compact))  # type: ignore[arg-type]
            separator = ","
            if len(batch) == 1024:
                pieces.append("".join(batch).encode("ascii"))
                batch.clear()
    batch.append("]}")
    pieces.append("".join(batch).encode("ascii"))
    files.append((TEXTURE_MANIFEST_NAME, pieces))
    return files


def _texture_fields(image: PaletteImage, data: bytes, palette: bytes) -> dict[str, Any]:
    """The manifest's fields for one picture lump: enough to give `data` back from the picture."""
    from ..core.layout import encode_blob
    from ..formats.quake.images import rgba_bytes, to_rgba

    fields: dict[str, Any] = {"kind": image.kind, "width": image.width, "height": image.height}
    fields["digest"] = pixel_digest(rgba_bytes(image, palette), image.width, image.height)
    if image.kind == "miptex":
        name_field, after = _miptex_parts(data, image)
        if name_field != image.name.encode("latin-1")[:15].ljust(16, b"\0"):
            fields["name_field"] = encode_blob(name_field)
        if after:
            fields["tail"] = encode_blob(after)
    elif image.kind == "conchars":
        tail = image.extras.get("tail", b"")
        if isinstance(tail, bytes) and tail:
            fields["tail"] = encode_blob(tail)
    if image.palette is not None:
        fields["palette"] = encode_blob(image.palette)
    template = _template(fields, image.name, len(image.mips), image.palette)
    if len(image.mips) == 1:
        # No mips to rebuild (a qpic, the console font): what `_regenerate` gives is each index
        # replaced by the first entry of its colour, one `bytes.translate` (a WAD of 50,000
        # tiny pictures takes seconds, not a numpy round per picture).
        regenerated = _with_mips(
            template, [image.pixels.translate(_first_entries(image.palette or palette, image.transparent))]
        )
    else:
        regenerated = _regenerate(template, to_rgba(image, palette), image.palette or palette)
    if _encode_lump(regenerated, fields, image.palette) == data:
        return fields
    made, kept = b"".join(regenerated.mips), b"".join(image.mips)
    if len(made) == len(kept):
        # Mostly zeros (a repeated palette colour, a filtered mip): a few bytes once compressed.
        fields["mips_xor"] = _pack(_xor(made, kept))
        if _encode_lump(_with_mips(template, image.mips), fields, image.palette) == data:
            return fields
        del fields["mips_xor"]
    fields["data"] = _pack(data)
    return fields


@functools.lru_cache(maxsize=8)
def _first_entries(palette: bytes, transparent: int | None) -> bytes:
    """A `bytes.translate` table giving each index the first entry of its colour (the
    transparent index kept, and never chosen for another): what `from_rgba` makes of a picture
    drawn through `palette`."""
    first: dict[bytes, int] = {}
    for index in range(256):
        if index != transparent:
            first.setdefault(palette[3 * index : 3 * index + 3], index)
    return bytes(index if index == transparent else first[palette[3 * index : 3 * index + 3]] for index in range(256))


def _xor(first: bytes, second: bytes) -> bytes:
    """Byte-wise XOR of two strings of one length."""
    return (int.from_bytes(first, "little") ^ int.from_bytes(second, "little")).to_bytes(len(first), "little")


def _with_mips(template: PaletteImage, mips: list[bytes]) -> PaletteImage:
    from dataclasses import replace

    return replace(template, mips=list(mips), extras=dict(template.extras))


def read_texture_manifest(folder: str) -> dict[str, Any] | None:
    """The texture manifest of an exported folder, checked (`ops.manifest`'s schema and the
    texture fields), or None when it has none."""
    import json

    from ..core.files import read_file
    from .manifest import validate_manifest

    path = os.path.join(folder, TEXTURE_MANIFEST_NAME)
    if not os.path.exists(path):
        return None
    try:
        document = json.loads(read_file(path, limit=MANIFEST_LIMIT, what="the texture manifest"))
    except (ValueError, RecursionError) as exc:
        raise GamepakError(f"{path}: not a texture manifest (JSON: {exc})") from None
    validate_manifest(document, path)
    if document.get("format") != "wad" or document.get("options", {}).get("version", "WAD2") not in ("WAD2", "WAD3"):
        raise GamepakError(f"{path}: manifest field format: a texture manifest describes a WAD2 or WAD3")
    for index, member in enumerate(document["members"]):
        texture = member.get("texture")
        if texture is None:
            continue
        field = f"members[{index}].texture"
        if not isinstance(texture, dict) or texture.get("kind") not in IMAGE_KINDS:
            raise GamepakError(f"{path}: manifest field {field}.kind: one of {', '.join(IMAGE_KINDS)}")
        for side in ("width", "height"):
            value = texture.get(side)
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 1 << 14:
                raise GamepakError(f"{path}: manifest field {field}.{side}: a size from 1 to 16384")
        for key in ("digest", "name_field", "palette", "tail", "mips_xor", "data"):
            if key in texture and not isinstance(texture[key], str):
                raise GamepakError(f"{path}: manifest field {field}.{key}: must be text")
    return dict(document)


def manifest_lumps(
    folder: str,
    manifest: dict[str, Any],
    palette: bytes,
    summarize: Callable[[str, str, Any, Any, bytes, int | None], Any],
    *,
    progress: Callable[[str], object] | None = None,
) -> tuple[list[tuple[str, bytes]], list[Any], bytes, bool]:
    """The lumps of the WAD `manifest` describes, from the files of `folder` (each picture
    whose pixels are as exported gives its lump back byte for byte; an edited one is
    re-encoded), what each picture became (`summarize(name, file, rgba, indices, palette,
    transparent)`: the builder's own summary, passed in so this module stays below it), the
    palette (the manifest's, else `palette`) and whether the WAD is a WAD3."""
    import numpy as np

    from ..core.files import read_file
    from ..core.layout import decode_blob
    from ..core.pictures import AREA_FACTOR, check_size, read_rgba
    from ..formats.quake.palette import palette_from_bytes

    where = os.path.join(folder, TEXTURE_MANIFEST_NAME)
    if "palette" in manifest:
        if not isinstance(manifest["palette"], str):
            raise GamepakError(f"{where}: manifest field palette: must be base64 text")
        palette = palette_from_bytes(decode_blob(manifest["palette"]), f"{where}: palette")
    lumps: list[tuple[str, bytes]] = []
    built = []
    for index, member in enumerate(manifest["members"]):
        path = os.path.join(folder, *member["path"].split("/"))
        texture = member.get("texture")
        if progress is not None:
            progress(member["path"])
        if texture is None:
            lumps.append((member["name"], read_file(path, what="a lump")))
            continue
        field = f"members[{index}].texture"
        width, height = texture["width"], texture["height"]
        own = decode_blob(texture["palette"]) if "palette" in texture else None
        if own is not None and len(own) != 768:
            raise GamepakError(f"{where}: manifest field {field}.palette: 768 bytes, not {len(own)}")

        def check(new_width: int, new_height: int, path: str = path, width: int = width, height: int = height) -> None:
            check_size(
                new_width,
                new_height,
                path,
                area_limit=AREA_FACTOR * width * height,
                allowed=f"{AREA_FACTOR}x the area of the exported picture ({width}x{height})",
                resize=False,
            )

        rgba = read_rgba(path, check)
        new_height, new_width = rgba.shape[:2]
        mip_count = 4 if texture["kind"] == "miptex" else 1
        template = _template(texture, member["name"], mip_count, own)
        size_limit = 2 * width * height + 4096  # a lump's pixels, mips, palette and filler
        if pixel_digest(rgba, new_width, new_height) == texture.get("digest"):
            if "data" in texture:
                data = _unpack(texture["data"], size_limit + 1024, where, f"{field}.data")
                lumps.append((member["name"], data))
                continue
            image = _regenerate(template, rgba, own or palette)
            if "mips_xor" in texture:
                made = b"".join(image.mips)
                difference = _unpack(texture["mips_xor"], len(made), where, f"{field}.mips_xor")
                if len(difference) != len(made):
                    raise GamepakError(
                        f"{where}: manifest field {field}.mips_xor: {len(difference)} bytes, not {len(made)}"
                    )
                image = _with_mips(template, _split_mips(_xor(made, difference), image, where, field))
            note = "as exported"
        else:
            resized = {**texture, "width": new_width, "height": new_height}
            image = _regenerate(_template(resized, member["name"], mip_count, own), rgba, own or palette)
            note = "re-encoded"
        lumps.append((member["name"], _encode_lump(image, texture, own)))
        indices = np.frombuffer(image.pixels, dtype=np.uint8).reshape(image.height, image.width)
        result = summarize(member["name"], member["path"], rgba, indices, own or palette, image.transparent)
        result.note = note
        built.append(result)
    return lumps, built, palette, manifest.get("options", {}).get("version", "WAD2") == "WAD3"


def _split_mips(joined: bytes, template: PaletteImage, where: str, field: str) -> list[bytes]:
    """Stored indices cut into the image's mips, checked to be exactly their sizes."""
    sizes = [len(mip) for mip in template.mips]
    if sum(sizes) != len(joined):
        raise GamepakError(f"{where}: manifest field {field}.mips: {len(joined)} bytes, not {sum(sizes)}")
    mips, start = [], 0
    for size in sizes:
        mips.append(joined[start : start + size])
        start += size
    return mips
