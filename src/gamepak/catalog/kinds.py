"""What a member holds, guessed from its first bytes and its name: the catalog's `member_type`.

The content wins over the name (game files are often misnamed); the name decides only when the
bytes say nothing recognisable. Packs inside packs are named by the catalog itself
(`archive:<format>`), from the registry's sniffers. The content kinds (textures, models, strings,
tables: `gamepak.content`) add their own signatures and extensions to the tables below.
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
    (b"IDP2", "model/md2"),
    (b"IDS2", "image/quake2-sprite"),
    (b"IBSP", "map/quake2-bsp"),
    (b"WAD2", "archive/wad2"),
    (b"WAD3", "archive/wad3"),
    (b"PK\x03\x04", "archive/zip"),
    (b"\x1f\x8b", "archive/gzip"),
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
    ".wav": "audio/wav",
    ".ogg": "audio/ogg",
    ".mid": "audio/midi",
    ".amr": "audio/amr",
    ".mp3": "audio/mpeg",
    ".md2": "model/md2",
    ".gltf": "model/gltf",
    ".obj": "model/obj",
    ".txt": "text/plain",
    ".cfg": "text/config",
    ".rc": "text/config",
    ".xml": "text/xml",
    ".json": "text/json",
    ".lua": "text/lua",
    ".qc": "text/quakec",
    ".dat": "binary",
}


def _add_content_kinds() -> None:
    """The content registry's member types: its signatures before the others of their first
    byte, its extensions where the table has none."""
    from ..content import member_types

    signatures, extensions = member_types()
    global SIGNATURES
    SIGNATURES = tuple(signatures.items()) + SIGNATURES
    for extension, label in extensions.items():
        EXTENSIONS.setdefault(extension, label)


_add_content_kinds()

# Whitespace a text file may hold; every other character must be printable.
_WHITESPACE = str.maketrans("", "", "\t\r\n\f")
# Bytes of the head looked at to tell text from binary.
TEXT_PROBE = 1024


# Bytes of printable ASCII text, and the control characters no text holds: the rule of
# `_text_by_decoding`, tested in C (most members are decided without decoding).
_ASCII_TEXT = bytes(range(0x20, 0x7F)) + b"\t\r\n\f"
_CONTROL = bytes(c for c in range(0x20) if c not in b"\t\r\n\f") + b"\x7f"


def _looks_like_text(head: bytes) -> bool:
    probe = head[:TEXT_PROBE]
    if probe.isascii():
        return not probe.translate(None, _ASCII_TEXT)
    # A control character before the last 3 bytes (which may be a cut character) is never text.
    body = probe[:-3]
    if len(body.translate(None, _CONTROL)) != len(body):
        return False
    return _text_by_decoding(probe)


def _text_by_decoding(probe: bytes) -> bool:
    """Whether `probe` is UTF-8 text of printable characters and whitespace."""
    try:
        text = probe.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut at the end of the probe is still text.
        if exc.start < len(probe) - 3:
            return False
        text = probe[: exc.start].decode("utf-8")
    return text.translate(_WHITESPACE).isprintable()


# Signatures grouped by their first byte: one dict lookup instead of a scan per member.
_BY_FIRST_BYTE: dict[int, list[tuple[bytes, str]]] = {}
for _signature, _kind in SIGNATURES:
    _BY_FIRST_BYTE.setdefault(_signature[0], []).append((_signature, _kind))


def _by_magic(head: bytes) -> str | None:
    if not head:
        return None
    for signature, kind in _BY_FIRST_BYTE.get(head[0], ()):
        if head.startswith(signature):
            return kind
    if head.startswith(b"RIFF") and head[8:12] == b"WAVE":
        return "audio/wav"
    return None


def member_type(name: str, head: bytes) -> str:
    """A short "family/kind" label for a member from its name and its first bytes."""
    dot = name.rfind(".")
    extension = name[dot:].lower() if dot > name.rfind("/") else ""
    named = EXTENSIONS.get(extension)
    magic = _by_magic(head)
    if magic is not None:
        # Same family: the name is more precise (VDrift's .joe models carry MD2's IDP2 magic).
        if named is not None and named.split("/")[0] == magic.split("/")[0]:
            return named
        return magic
    if named is not None:
        return named
    if not head:
        return "empty"
    if _looks_like_text(head):
        return "text/plain"
    return "binary"
