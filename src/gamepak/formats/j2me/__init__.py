"""Gameloft J2ME games: asset packs in five layouts without a signature (their bytes parsed and
detected in `structure`, read and written in `packs`, their nameless members named in `members`),
and the strings inside them (in the shapes `string_tables` reads and rebuilds), exported for
translators and imported back (`text`, through the translation files of `translations`).

The registry reads the layouts' readers, writers and sniffers from here; the text functions
(`export_strings`, `import_strings`, `read_strings`, ...) load their module on first use.
"""

from __future__ import annotations

from .structure import sniff_end_offsets, sniff_ids, sniff_offsets, sniff_sized, sniff_table

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .members import content_extension, member_index
    from .packs import (
        EndOffsetsReader,
        EndOffsetsWriter,
        IdsReader,
        IdsWriter,
        OffsetsReader,
        OffsetsWriter,
        SizedReader,
        SizedWriter,
        TableReader,
        TableWriter,
    )

# The layouts' readers and writers, loaded with `packs` when a J2ME pack is opened or written:
# detection asks the sniffers above about every file without a signature (`gamepak detect`),
# and `packs` brings the writing side (`core.writer`) with it.
PACK_NAMES = (
    "EndOffsetsReader",
    "EndOffsetsWriter",
    "IdsReader",
    "IdsWriter",
    "OffsetsReader",
    "OffsetsWriter",
    "SizedReader",
    "SizedWriter",
    "TableReader",
    "TableWriter",
)

# `members`' helpers, loaded on first use: detection imports this package for the sniffers alone.
MEMBER_NAMES = ("content_extension", "member_index")

# Names of `string_tables` and `text` offered here, each module loaded on first use (`text` brings
# the csv/json/polib helpers of `translations`).
TABLE_NAMES = ("StringTable", "TextShapeError", "build_text_pack", "decode_string", "encode_string")

TEXT_NAMES = (
    "TextExport",
    "TextImport",
    "TextMember",
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
    "IdsReader",
    "IdsWriter",
    "OffsetsReader",
    "OffsetsWriter",
    "SizedReader",
    "SizedWriter",
    "TableReader",
    "TableWriter",
    "content_extension",
    "member_index",
    "sniff_end_offsets",
    "sniff_ids",
    "sniff_offsets",
    "sniff_sized",
    "sniff_table",
    *TABLE_NAMES,
    *TEXT_NAMES,
    *TRANSLATION_NAMES,
]


def __getattr__(name: str) -> object:
    if name in PACK_NAMES:
        from . import packs

        return getattr(packs, name)
    if name in MEMBER_NAMES:
        from . import members

        return getattr(members, name)
    if name in TABLE_NAMES:
        from . import string_tables

        return getattr(string_tables, name)
    if name in TEXT_NAMES or name in TRANSLATION_NAMES:
        from . import text

        return getattr(text, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
