"""The texture family of the content registry (`gamepak texture`, the catalog's `textures`
table, the viewer's galleries) and its rows: RFG pegs, Quake palette images, Gameloft sprites.
`gamepak.content` puts the rows in their order."""

from __future__ import annotations

from ..spec import ContentKind, Family, Verb

TEXTURE = Family(
    "texture",
    "texture",
    "textures",
    "texture",
    "textures",
    {
        "ls": "ls(source, options=) -> [row]; line(row) -> str: `texture ls`",
        "export": "export(source, output, names=, overwrite=, progress=, options=) -> [path]",
        "exported": "exported([path]) -> what `texture export` says it wrote (without it: 'N textures')",
        "import": "import(target, folder, dry_run=, progress=, options=) -> [name changed]",
        "add": "add(target, image, name, pixel_format, options=) -> the texture added (pegs only)",
        "rm": "rm(target, names, options=) -> [name removed] (pegs only)",
        "gallery": "gallery(data, name, label, options=) -> [{name, width, height, format, mips}]",
        "png": "png(data, name, label, texture, mip, options=) -> PNG bytes (options: partner, palette)",
        "rows": "rows(data, name, label, options=) -> [{peg, name, width, height, format, mips, flags}]"
        " (and the kind's own textures columns)",
        "preview": "preview(data, label) -> the data of the kind's own viewer template (`ContentKind.preview`)",
    },
    ("ls", "export", "import"),
)

_TEXTURES = "gamepak.ops.textures"
_QUAKE_TEXTURES = "gamepak.ops.quake_textures"
_PREVIEWS = "gamepak.content.previews"
_SPRITE = b"\xdf\x03\x01\x01\x01\x01"

PEG = ContentKind(
    "peg",
    TEXTURE,
    "Red Faction Guerrilla texture sets (peg v10: a CPU file and its GPU partner)",
    extensions=(".cpeg_pc", ".cvbm_pc"),
    signatures=(b"GEKV",),
    packs=("vpp",),
    types={".cpeg_pc": "texture/peg", ".cvbm_pc": "texture/peg"},
    verbs={
        "ls": Verb(f"{_TEXTURES}:list_textures", ("peg", "order")),
        "line": Verb(f"{_PREVIEWS}:peg_line"),
        "export": Verb(f"{_TEXTURES}:export_textures", ("order", "peg", "kind")),
        "import": Verb(f"{_TEXTURES}:import_textures", ("order", "peg", "resize", "asm")),
        "add": Verb(f"{_TEXTURES}:add_texture", ("peg", "order", "resize", "asm")),
        "rm": Verb(f"{_TEXTURES}:remove_textures", ("peg", "asm")),
        # The GPU file beside the CPU one (names compared ignoring case, as the game does).
        "partner": Verb("gamepak.formats.rfg.peg.sources:partner_name"),
        "gallery": Verb(f"{_PREVIEWS}:peg_gallery", ("partner",)),
        "png": Verb(f"{_PREVIEWS}:peg_png", ("partner", "key")),
        "rows": Verb(f"{_PREVIEWS}:peg_rows"),
    },
    # A pack nothing else claims is looked into for pegs (`texture ls pack.vpp_pc`).
    fallback=True,
)

QUAKE_IMAGE = ContentKind(
    "quake-image",
    TEXTURE,
    "Quake palette images: LMP pictures, WAD lumps, BSP textures, SPR frames, MDL skins, Quake II WAL",
    extensions=(".lmp", ".wal", ".spr", ".mip", ".bsp", ".mdl"),
    signatures=(b"IDSP",),
    lump_kinds=("qpic", "miptex", "conchars"),
    packs=("pak", "wad", "zip"),
    types={
        ".lmp": "image/quake-lump",
        ".wal": "image/quake2-wal",
        ".spr": "image/quake-sprite",
        ".mip": "image/quake-miptex",
        b"IDSP": "image/quake-sprite",
    },
    verbs={
        "ls": Verb(f"{_QUAKE_TEXTURES}:list_textures", ("palette",)),
        "line": Verb(f"{_QUAKE_TEXTURES}:ls_line"),
        "export": Verb(f"{_QUAKE_TEXTURES}:export_textures", ("palette", "palettes")),
        "import": Verb(f"{_QUAKE_TEXTURES}:import_textures", ("palette", "palettes", "resize")),
        "gallery": Verb(f"{_PREVIEWS}:quake_gallery", ("lump",)),
        "png": Verb(f"{_PREVIEWS}:quake_png", ("lump", "palette")),
        "rows": Verb(f"{_PREVIEWS}:quake_rows", ("lump",)),
    },
)

# Gameloft J2ME sprites have no name of their own: members of J2ME packs, told by their first
# bytes (version 0x03DF, flags 0x01010101: `formats.j2me.sprite.model.SIGNATURE`), so every
# member of such a pack up to `max_bytes` is looked at; `gamepak sprite` is their own
# command, the texture verbs give their modules, the viewer has a page of its own for them.
SPRITE = ContentKind(
    "sprite",
    TEXTURE,
    "Gameloft J2ME sprites (BSPRITE): modules, frames and animations, in J2ME packs",
    signatures=(_SPRITE,),
    packs=("j2me-table", "j2me-offsets", "j2me-end-offsets", "j2me-sized", "j2me-ids"),
    types={_SPRITE: "image/bsprite"},
    verbs={
        "ls": Verb("gamepak.ops.sprites:list_textures"),
        "line": Verb("gamepak.ops.sprites:ls_line"),
        "export": Verb("gamepak.ops.sprites:export_textures"),
        # What `texture export` says it wrote: sprites and their modules, frames, animations.
        "exported": Verb("gamepak.ops.sprites:exported"),
        "import": Verb("gamepak.ops.sprites:import_textures"),
        "rows": Verb(f"{_PREVIEWS}:sprite_rows"),
        "preview": Verb("gamepak.formats.j2me.sprite.summary:preview_images"),
    },
    preview="sprite",
    max_bytes=1 << 20,  # formats.j2me.sprite.summary.MAX_SPRITE_BYTES
)
