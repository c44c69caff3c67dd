"""The strings of Gameloft J2ME games, exported for translators and imported back: moved as it is
to `string_tables` (split next); the names its importers use are re-exported here."""

from __future__ import annotations

from .string_tables import (
    StringTable,
    TextExport,
    TextImport,
    TextMember,
    TextShapeError,
    build_string_blob,
    build_text_pack,
    decode_string,
    dump_translation,
    encode_string,
    export_strings,
    import_strings,
    load_translation,
    locate_strings,
    looks_like_text_pack,
    read_strings,
    text_members,
    translation_format,
)

__all__ = [
    "StringTable",
    "TextExport",
    "TextImport",
    "TextMember",
    "TextShapeError",
    "build_string_blob",
    "build_text_pack",
    "decode_string",
    "dump_translation",
    "encode_string",
    "export_strings",
    "import_strings",
    "load_translation",
    "locate_strings",
    "looks_like_text_pack",
    "read_strings",
    "text_members",
    "translation_format",
]
