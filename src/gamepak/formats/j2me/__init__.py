"""Gameloft J2ME games: asset packs in four layouts without a signature (their bytes parsed and
detected in `structure`, read and written in `packs`, their nameless members named in `members`),
and the string tables inside them (`text`), exported for translators and imported back
(`translations`).

The registry reads the layouts' readers, writers and sniffers from here; the text functions
(`export_strings`, `import_strings`, `read_strings`, ...) load their module on first use.
"""

from __future__ import annotations

from typing import Any

from .members import content_extension, member_index
from .packs import (
    EndOffsetsReader,
    EndOffsetsWriter,
    OffsetsReader,
    OffsetsWriter,
    SizedReader,
    SizedWriter,
    TableReader,
    TableWriter,
)
from .structure import sniff_end_offsets, sniff_offsets, sniff_sized, sniff_table

# Names of `text` offered here; `text` imports csv/json/polib helpers only when used.
TEXT_NAMES = (
    "StringTable",
    "TextExport",
    "TextImport",
    "TextMember",
    "TextShapeError",
    "build_text_pack",
    "decode_string",
    "encode_string",
    "export_strings",
    "import_strings",
    "locate_strings",
    "read_strings",
    "text_members",
)

TRANSLATION_NAMES = ("dump_translation", "load_translation", "translation_format")

__all__ = [
    "EndOffsetsReader",
    "EndOffsetsWriter",
    "OffsetsReader",
    "OffsetsWriter",
    "SizedReader",
    "SizedWriter",
    "TableReader",
    "TableWriter",
    "content_extension",
    "member_index",
    "sniff_end_offsets",
    "sniff_offsets",
    "sniff_sized",
    "sniff_table",
    *TEXT_NAMES,
    *TRANSLATION_NAMES,
]


def __getattr__(name: str) -> Any:
    if name in TEXT_NAMES or name in TRANSLATION_NAMES:
        from . import text

        return getattr(text, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
