"""What a member holds, guessed from its first bytes and its name: the catalog's `member_type`.

The content wins over the name (game files are often misnamed); the name decides only when the
bytes say nothing recognisable. Packs inside packs are named by the catalog itself
(`archive:<format>`), from the registry's sniffers.
"""

from __future__ import annotations

# (signature at offset 0, type). Longer signatures first where one is a prefix of another.
SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"DDS ", "image/dds"),
    (b"OggS", "audio/ogg"),
    (b"MThd", "audio/midi"),
    (b"#!AMR", "audio/amr"),
    (b"ID3", "audio/mpeg"),
    (b"fLaC", "audio/flac"),
    (b"IDPO", "model/quake-mdl"),
    (b"IDP2", "model/md2"),
    (b"IDSP", "image/quake-sprite"),
    (b"IDS2", "image/quake2-sprite"),
    (b"IBSP", "map/quake2-bsp"),
    (b"WAD2", "archive/wad2"),
    (b"WAD3", "archive/wad3"),
    (b"PK\x03\x04", "archive/zip"),
    (b"\x1f\x8b", "archive/gzip"),
    (b"glTF", "model/glb"),
    (b"ply\n", "model/ply"),
    (b"<?xml", "text/xml"),
    (b"\xef\xbb\xbf<?xml", "text/xml"),
)

# Name extension -> type, for content without a signature.
EXTENSIONS: dict[str, str] = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".tga": "image/tga",
    ".dds": "image/dds",
    ".pcx": "image/pcx",
    ".bmp": "image/bmp",
    ".lmp": "image/quake-lump",
    ".wav": "audio/wav",
    ".ogg": "audio/ogg",
    ".mid": "audio/midi",
    ".amr": "audio/amr",
    ".mp3": "audio/mpeg",
    ".bsp": "map/quake-bsp",
    ".mdl": "model/quake-mdl",
    ".md2": "model/md2",
    ".spr": "image/quake-sprite",
    ".joe": "model/joe",
    ".glb": "model/glb",
    ".gltf": "model/gltf",
    ".obj": "model/obj",
    ".txt": "text/plain",
    ".cfg": "text/config",
    ".rc": "text/config",
    ".xtbl": "text/xml",
    ".xml": "text/xml",
    ".json": "text/json",
    ".lua": "text/lua",
    ".qc": "text/quakec",
    ".dat": "binary",
}


def _looks_like_text(head: bytes) -> bool:
    if not head:
        return False
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut at the end of the probe is still text.
        if exc.start < len(head) - 3:
            return False
        text = head[: exc.start].decode("utf-8")
    return all(ch.isprintable() or ch in "\t\r\n\f" for ch in text)


def member_type(name: str, head: bytes) -> str:
    """A short "family/kind" label for a member from its name and its first bytes."""
    for signature, kind in SIGNATURES:
        if head.startswith(signature):
            return kind
    if head.startswith(b"RIFF") and head[8:12] == b"WAVE":
        return "audio/wav"
    if head[:4] == b"\x1d\x00\x00\x00":
        return "map/quake-bsp"
    dot = name.rfind(".")
    extension = name[dot:].lower() if dot > name.rfind("/") else ""
    if extension in EXTENSIONS:
        return EXTENSIONS[extension]
    if not head:
        return "empty"
    if _looks_like_text(head):
        return "text/plain"
    return "binary"
