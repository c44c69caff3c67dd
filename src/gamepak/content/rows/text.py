"""The strings family of the content registry (`gamepak text`, the catalog's `strings` table,
the viewer's strings page) and its rows: RFG localization files, Gameloft J2ME strings.
`gamepak.content` puts the rows in their order."""

from __future__ import annotations

from ..spec import ContentKind, Family, Verb

STRINGS = Family(
    "strings",
    "text",
    "strings",
    "strings",
    "strings",
    {
        "export": "export(file, output, member, options=) -> StringsDone (`text export`)",
        "import": "import(file, translation, output, member, options=) -> StringsDone (`text import`)",
        "strings": "strings(data, label, options=) -> (what, [(index, key, string)]) (viewer)",
    },
    ("export", "import"),
)

_PREVIEWS = "gamepak.content.previews"

RFGLOCATEXT = ContentKind(
    "rfglocatext",
    STRINGS,
    "Red Faction Guerrilla localization strings (.rfglocatext, UTF-16 by hash)",
    extensions=(".rfglocatext",),
    signatures=(b"\x73\x7f\x4c\xa8",),
    packs=("vpp",),
    types={".rfglocatext": "text/rfglocatext"},
    claims=Verb("gamepak.ops.locatext:is_locatext_target"),
    verbs={
        "export": Verb(
            "gamepak.content.strings:locatext_export", ("format", "translation", "names", "source", "overwrite")
        ),
        "import": Verb(
            "gamepak.content.strings:locatext_import",
            ("format", "translation_kind", "names", "delete", "overwrite", "dry_run"),
        ),
        "strings": Verb(f"{_PREVIEWS}:locatext_strings", ("names", "identifiers")),
    },
)

J2ME_STRINGS = ContentKind(
    "j2me-strings",
    STRINGS,
    "Gameloft J2ME strings: text packs, offset tables, string blobs (ISO-8859-1)",
    packs=("j2me-table", "j2me-offsets", "j2me-end-offsets", "j2me-sized"),
    types={},
    verbs={
        "export": Verb(
            "gamepak.content.strings:j2me_export", ("format", "format_name", "kind", "translation", "overwrite")
        ),
        "import": Verb(
            "gamepak.content.strings:j2me_import",
            ("format", "format_name", "kind", "translation_kind", "overwrite"),
        ),
        "strings": Verb(f"{_PREVIEWS}:j2me_strings"),
        # No name or signature tells these: a cheap look at the first bytes decides
        # whether reading the strings is worth trying.
        "probe": Verb(f"{_PREVIEWS}:j2me_probe"),
    },
    # No signature: what `text` reads when nothing else claims the file.
    fallback=True,
)
