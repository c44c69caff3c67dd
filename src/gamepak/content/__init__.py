"""The content registry: one row per kind of content (textures, models, scenes, strings, tables,
zones), as `core/registry.py` is for archives. Every surface reads these rows: the `texture`,
`model`, `text` and `table` verbs pick the row that takes a file and call its functions; the
viewer picks the preview of a file from them (loose or packed alike); the catalog fills its
`textures`, `models`, `strings` and `zone_objects` tables (a family may have a table of its
own) and the `archives.kind` of a loose content file from them; the
member types the catalog and the viewer show come from them; the README's table of content
kinds is `readme_table()`. No surface tests a row's name.

This module sits above formats/, models/ and ops/ (it names their modules) and below the
surfaces (cli/, web/, catalog/); it imports none of the modules it names until a row is used
(`Verb.function()` loads it), so `import gamepak.content` costs nothing.

A row (`ContentKind`) says:
- how to recognise the kind: `extensions` (loose files and members), `signatures` (bytes at
  offset 0), `lump_kinds` (WAD lumps, which have no extension), `packs` (the pack formats a
  verb given a pack looks inside), and an optional `claims` verb for what names and bytes
  cannot tell (an RFG pack holding `.rfglocatext` files);
- what it does: `verbs`, a name -> `Verb` map (the classes are in `spec.py`). Each verb of a
  family has one call signature (`FAMILIES[...].verbs` documents it); the kind's own options
  (an RFG peg's `--order`, a Quake image's `--palette`) reach it as one options mapping, of
  which `Verb.options` names the keys its function takes: `ContentKind.call(verb, *arguments, options=..., **common)`;
- what the catalog records (`family.catalog`: its table; `family.archive_kind`: the
  `archives.kind` of a loose file) and the member type labels (`types`: extension -> label);
- what the viewer shows (`family.preview`: the template, filled by the row's `gallery`/`png`,
  `glb`/`counts` or `strings` verbs; a kind with a page of its own names it, `preview`, and
  fills it with its `preview` verb).

Adding a content kind is one module plus one row (RFG meshes, J2ME sprites and RFG zones were):
1. Write the module (a format module under formats/ or models/, e.g. `models/rfg/mesh.py`) with
   one function per verb of its family, in the family's call signature (`FAMILIES[...].verbs`
   spells each one out). For a model: `counts(data, label)` (the viewer's caption),
   `glb(data, label, *, <options>)` (the viewer's 3D view), `info(data, label)` (`model info`),
   `export(data, label, output, *, <options>)` (`model export`, `model export-all`),
   `stats(data, label)` (the catalog's models rows). For a texture: `gallery`, `png`, `rows`,
   and `ls`/`line`/`export`/`import` for `gamepak texture`. For strings: `strings`, `export`,
   `import`. A kind stored as two files (RFG meshes: `.csmesh_pc` + `.gsmesh_pc`, as pegs)
   adds `partner(name) -> the other file's name`: its verbs then get `partner`, a function
   reading that file (the viewer and the catalog read it beside the file or inside the same
   pack; `model` beside MODEL or MEMBER); `partner_extensions` lets the viewer and `model`
   take the second file too (shown through the first; the catalog counts the pair once). A
   kind that finds its files itself (a mesh given by its base name in nested packs) adds
   `open(path, member)`, and the `model` verbs get what it returns. Options of its own reach
   it by keyword, as `Verb.options` lists.
2. Add one `ContentKind(...)` to `KINDS` below: its name, `FAMILIES[...]`, description, `extensions`,
   `signatures` (and `types`: the member type labels the catalog and the viewer show), and its
   verbs as `Verb("module:function", (option keys it takes))`. A kind with no name or
   signature (J2ME sprites inside `.f` packs) lists the pack formats it lives in (`packs`) and
   a cheap `probe(name, head, holder)` verb; `texture` given such a pack finds the row by them.
That is all: `gamepak texture|model|text|table`, `gamepak serve` (loose and packed alike),
`gamepak catalog` (its table's rows and `archives.kind`) and the README's table follow. Then
run `python -m gamepak.content` and paste its table into README.md's "Content kinds", and give
the kind a sample in tests/test_content_registry.py's `SAMPLES`: that test walks every row
through every surface and fails for a row without one. tests/content_kind_example.py is such a
kind (a two-file model), added by one row in `test_a_new_kind_is_one_module_and_one_row`.
A kind of a new family (a command of its own) also adds a `Family` to `FAMILIES` and its cli/ module.
"""

from __future__ import annotations

import os

from .spec import ContentKind, Family, Verb

__all__ = ["FAMILIES", "KINDS", "ContentKind", "Family", "Verb", "for_path", "get", "kinds", "of_member"]

FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        Family(
            "texture",
            "texture",
            "textures",
            "texture",
            "textures",
            {
                "ls": "ls(source, options=) -> [row]; line(row) -> str: `texture ls`",
                "export": "export(source, output, names=, overwrite=, progress=, options=) -> [path]",
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
        ),
        Family(
            "model",
            "model",
            "models",
            "model",
            "model",
            {
                "counts": "counts(data, label, options=) -> {vertices, faces, size} (the viewer)",
                "info": "info(data, label) -> {format, ...} (`model info`)",
                "stats": "stats(data, label, options=) -> (vertices, triangles, frames), or a dict of models columns"
                " (format, vertices, triangles, frames, texture, its own), or None (the catalog's models rows)",
                "glb": "glb(data, label, options=) -> binary glTF (the viewer, `model export-all`)",
                "export": "export(data, label, output, options=) -> None or ([written], [warnings]) (`model export`;"
                " without it: the mesh formats)",
                "gallery": "gallery(data, name, label, options=): the textures a model holds (a map's), as a texture's",
                "png": "png(data, name, label, texture, mip, options=): one of them as PNG, as a texture's",
                # A kind whose files are found by more than MODEL [MEMBER] themselves (a mesh pair:
                # either file names it, a member by its base name in nested packs):
                "open": "open(path, member) -> (data, label, options): what the `model` verbs get",
                "text": "text(info) -> str: `model info`'s text (without it: a `key: value` line each)",
                "mesh": "mesh(data, label, options=) -> a neutral Mesh (`model render`)",
                "export_pack": "export_pack(path, output, options=) -> ([written], [warnings]): `model export PACK`",
                "import": "import(model, pack, member, options=) -> report (.warnings, .summary()): --into PACK",
            },
            ("info", "export", "export-all"),
        ),
        # A folder: no archives row of its own (its models are models rows naming the scene).
        Family("scene", "model", "models", None, "model", {}, ("info", "export", "import --into")),
        Family(
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
        ),
        # A zone has its own command (`gamepak zone`: ls, export, import, check, by
        # `gamepak.ops.zones`), its own catalog table (`zone_objects`: one row per object) and
        # its own page in the viewer (a map).
        Family(
            "zone",
            "zone",
            "zone_objects",
            "zone",
            "zone",
            {
                "rows": "rows(data, name, label) -> [{zone, index, class, class_hash, handle, name, x, y, z}]"
                " (the catalog's zone_objects rows)",
                "preview": "preview(data, label) -> what the viewer's zone page draws, or None (not a zone)",
            },
            ("ls", "export", "import", "check"),
        ),
        # A table is read by `table` and the viewer's table page; the catalog lists its file as
        # a member, with no rows of its own.
        Family(
            "table",
            "table",
            None,
            None,
            "table",
            {
                "ls": "ls(source) -> [row]",
                "export": "export(source, output, options=) -> ([written], {member: why skipped})",
                "import": "import(target, folder, options=) -> [change] (options: dry_run, strict, delete, warnings)",
                "check": "check(source, options=) -> (findings, failures, references not checked) (options: base)",
            },
            ("ls", "export", "import", "check"),
        ),
    )
}


_TEXTURES = "gamepak.ops.textures"
_QUAKE_TEXTURES = "gamepak.ops.quake_textures"
_PREVIEWS = "gamepak.content.previews"
_MESHES = "gamepak.models.rfg.content"
_SPRITE = b"\xdf\x03\x01\x01\x01\x01"
_MESH_OPS = "gamepak.ops.meshes"

KINDS: tuple[ContentKind, ...] = (
    ContentKind(
        "peg",
        FAMILIES["texture"],
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
    ),
    ContentKind(
        "joe",
        FAMILIES["model"],
        "VDrift JOE models (and binary glTF; `model` converts OBJ, glTF and PLY too)",
        extensions=(".joe", ".glb"),
        signatures=(b"glTF",),
        packs=("jpk",),
        types={".joe": "model/joe", ".glb": "model/glb", b"glTF": "model/glb"},
        verbs={
            "counts": Verb(f"{_PREVIEWS}:mesh_counts"),
            "stats": Verb(f"{_PREVIEWS}:joe_stats"),
            "glb": Verb(f"{_PREVIEWS}:mesh_glb"),
        },
    ),
    # A mesh is two files: the CPU one names it (catalog rows, README), either is taken by the
    # `model` verbs and the viewer (`partner_extensions`).
    ContentKind(
        "rfg-mesh",
        FAMILIES["model"],
        "Red Faction Guerrilla meshes: static and character, LODs, materials and their pegs, bones",
        extensions=(".csmesh_pc", ".ccmesh_pc"),
        partner_extensions=(".gsmesh_pc", ".gcmesh_pc"),
        packs=("vpp",),
        types=dict.fromkeys((".csmesh_pc", ".ccmesh_pc", ".gsmesh_pc", ".gcmesh_pc"), "model/rfg-mesh"),
        verbs={
            "partner": Verb(f"{_MESHES}:partner"),
            "counts": Verb(f"{_MESHES}:counts", ("partner",)),
            "stats": Verb(f"{_MESHES}:stats", ("partner",)),
            "glb": Verb(f"{_MESHES}:glb", ("partner", "pack", "beside")),
            "open": Verb(f"{_MESH_OPS}:open_pair"),
            "info": Verb(f"{_MESH_OPS}:info", ("pair",)),
            "text": Verb(f"{_MESHES}:text"),
            "mesh": Verb(f"{_MESH_OPS}:neutral", ("pair",)),
            "export": Verb(
                f"{_MESH_OPS}:export",
                ("pair", "format_name", "lod", "lods", "search", "overwrite", "no_textures", "rig"),
            ),
            "export_pack": Verb(f"{_MESH_OPS}:export_every", ("format_name", "search", "overwrite")),
            "import": Verb(f"{_MESH_OPS}:import_model", ("asm", "dry_run")),
        },
    ),
    ContentKind(
        "mdl",
        FAMILIES["model"],
        "Quake alias models (IDPO v6): every pose, skins as textures",
        extensions=(".mdl",),
        signatures=(b"IDPO",),
        types={".mdl": "model/quake-mdl"},
        verbs={
            "counts": Verb(f"{_PREVIEWS}:quake_counts", leading=("mdl",)),
            "stats": Verb(f"{_PREVIEWS}:quake_stats", leading=("mdl",)),
            "info": Verb("gamepak.models.quake:summary", leading=("mdl",)),
            "glb": Verb(f"{_PREVIEWS}:quake_glb", ("palette_near",), leading=("mdl",)),
            "export": Verb(
                "gamepak.models.quake:export_file", ("frame", "palette", "scale", "overwrite"), leading=("mdl",)
            ),
        },
    ),
    ContentKind(
        "bsp",
        FAMILIES["model"],
        "Quake maps (BSP29, BSP2): the world's faces, textured, and their textures in a gallery",
        extensions=(".bsp",),
        signatures=(b"\x1d\x00\x00\x00", b"BSP2", b"2PSB"),
        types={".bsp": "map/quake-bsp"},
        verbs={
            "counts": Verb(f"{_PREVIEWS}:quake_counts", leading=("bsp",)),
            "stats": Verb(f"{_PREVIEWS}:quake_stats", leading=("bsp",)),
            "info": Verb("gamepak.models.quake:summary", leading=("bsp",)),
            "glb": Verb(f"{_PREVIEWS}:quake_glb", ("palette_near",), leading=("bsp",)),
            "export": Verb(
                "gamepak.models.quake:export_file", ("frame", "palette", "scale", "overwrite"), leading=("bsp",)
            ),
            # A map also holds textures: the gallery under its 3D view (its catalog textures rows
            # are the `quake-image` row's).
            "gallery": Verb(f"{_PREVIEWS}:quake_gallery", ("lump",)),
            "png": Verb(f"{_PREVIEWS}:quake_png", ("lump", "palette")),
        },
    ),
    ContentKind(
        "quake-image",
        FAMILIES["texture"],
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
    ),
    # Gameloft J2ME sprites have no name of their own: members of J2ME packs, told by their first
    # bytes (version 0x03DF, flags 0x01010101: `formats.j2me.sprite.model.SIGNATURE`), so every
    # member of such a pack up to `max_bytes` is looked at; `gamepak sprite` is their own
    # command, the texture verbs give their modules, the viewer has a page of its own for them.
    ContentKind(
        "sprite",
        FAMILIES["texture"],
        "Gameloft J2ME sprites (BSPRITE): modules, frames and animations, in J2ME packs",
        signatures=(_SPRITE,),
        packs=("j2me-table", "j2me-offsets", "j2me-end-offsets", "j2me-sized", "j2me-ids"),
        types={_SPRITE: "image/bsprite"},
        verbs={
            "ls": Verb("gamepak.ops.sprites:list_textures", ("palette",)),
            "line": Verb("gamepak.ops.sprites:ls_line"),
            "export": Verb("gamepak.ops.sprites:export_textures"),
            "import": Verb("gamepak.ops.sprites:import_textures"),
            "rows": Verb(f"{_PREVIEWS}:sprite_rows"),
            "preview": Verb("gamepak.formats.j2me.sprite.summary:preview_images"),
        },
        preview="sprite",
        max_bytes=1 << 20,  # formats.j2me.sprite.summary.MAX_SPRITE_BYTES
    ),
    ContentKind(
        "scene",
        FAMILIES["scene"],
        "VDrift track or car folders: a scene of JOE models, textured, placed",
        extensions=(".car",),
        claims=Verb(f"{_PREVIEWS}:scene_claims"),
    ),
    ContentKind(
        "rfglocatext",
        FAMILIES["strings"],
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
            "strings": Verb(f"{_PREVIEWS}:locatext_strings", ("names",)),
        },
    ),
    ContentKind(
        "j2me-strings",
        FAMILIES["strings"],
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
    ),
    ContentKind(
        "rfg-zone",
        FAMILIES["zone"],
        "Red Faction Guerrilla zones and layers: objects with a class, a position and properties",
        extensions=(".rfgzone_pc", ".layer_pc"),
        packs=("vpp",),
        types={".rfgzone_pc": "map/rfg-zone", ".layer_pc": "map/rfg-zone"},
        verbs={
            "rows": Verb("gamepak.content.zones:rows"),
            "preview": Verb("gamepak.content.zones:preview"),
        },
    ),
    ContentKind(
        "xtbl",
        FAMILIES["table"],
        "Red Faction Guerrilla tables (.xtbl): rows and columns typed by their own description",
        extensions=(".xtbl",),
        packs=("vpp",),
        types={".xtbl": "text/xml"},
        verbs={
            "ls": Verb("gamepak.ops.tables:list_tables"),
            "export": Verb("gamepak.ops.tables:export_tables", ("kind", "members", "overwrite")),
            "import": Verb("gamepak.ops.tables:import_tables", ("dry_run", "strict", "delete", "warnings")),
            "check": Verb("gamepak.ops.tables:check_tables", ("base",)),
        },
        fallback=True,
    ),
)


_BY_FAMILY: dict[str, tuple[ContentKind, ...]] = {}


def kinds(family: str | None = None) -> tuple[ContentKind, ...]:
    """The rows, in order (of one family when named)."""
    if family is None:
        return KINDS
    found = _BY_FAMILY.get(family)
    if found is None:  # asked once per member by the catalog: made once
        found = _BY_FAMILY[family] = tuple(kind for kind in KINDS if kind.family.name == family)
    return found


def get(name: str) -> ContentKind:
    """The row called `name`."""
    for kind in KINDS:
        if kind.name == name:
            return kind
    from ..errors import UsageError

    raise UsageError(f"unknown content kind {name!r}; known: {', '.join(kind.name for kind in KINDS)}")


def _read_head(path: str, size: int = 64) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError:
        return b""  # the handler that reads it names the problem


def of_member(
    name: str,
    head: bytes = b"",
    *,
    lump: str | None = None,
    holder: str | None = None,
    family: str | None = None,
    probe: bool = True,
    partners: bool = False,
) -> list[ContentKind]:
    """The kinds a file or member called `name`, whose first bytes are `head`, may be, in the
    registry's order (a WAD lump: by its `lump` kind; `holder`: the format of the pack holding
    it). A kind matches by signature or by name; a kind with neither (J2ME strings) is asked
    through its `probe` verb, inside its packs or when no other kind matched (not at all
    without `probe`: a caller that first asks other tables, as the viewer asks for images).
    With `partners`, the second file of a two-file kind (a mesh's GPU file) is the kind too
    (the viewer shows it through its first file; the catalog counts the pair once)."""
    rows = kinds(family)
    if lump is not None:
        return [kind for kind in rows if lump in kind.lump_kinds]
    lowered = name.lower()  # asked for every member a catalog meets: kept cheap
    found = [
        kind
        for kind in rows
        if (kind.extensions and lowered.endswith(kind.extensions))
        or (head and kind.signed_by(head))
        or (partners and kind.partner_named_by(lowered))
    ]
    for kind in rows if probe else ():
        wanted = "probe" in kind.verbs and kind not in found and (not found or holder in kind.packs)
        if wanted and kind.call("probe", name, head, holder):
            found.append(kind)
    return found


def for_path(family: str, path: str | os.PathLike[str], member: str | None = None) -> ContentKind:
    """The row of `family` that takes the file (or the pack's `member`) at `path` for a verb:
    a row that claims it (`claims`), else one its name or first bytes show, else one whose
    `packs` holds the format the file is read as (for a missing file: its name says), else the
    family's fallback row (refused, a GamepakError naming the kinds expected, when that row's
    `probe` says the file is not one)."""
    name = os.fspath(path)
    rows = kinds(family)
    for kind in rows:
        if kind.claims is not None and kind.claims(name, member):
            return kind
    target = member if member is not None else name
    for kind in rows:
        if kind.named_by(target):
            return kind
    if member is None and os.path.isfile(name):
        head = _read_head(name)
        for kind in rows:
            if kind.signatures and kind.signed_by(head):
                return kind
        from ..core.opening import detect

        try:
            found = detect(name)
        except Exception:  # an unreadable file is reported by the handler itself
            found = []
        for detection in found:
            for kind in rows:
                if detection.format in kind.packs:
                    return kind
    elif member is None and not os.path.lexists(name):
        # Nothing to read: the pack format its name says (`model export missing.vpp_pc` is
        # refused by the verb of the kind that exports such packs, naming the file).
        from ..core.registry import format_for_path

        spec = format_for_path(name)
        named_format = spec.name if spec is not None else None
        for kind in rows:
            if named_format in kind.packs:
                return kind
    fallback = next((kind for kind in rows if kind.fallback), rows[0])
    # A kind with no name or signature is asked whether the file may be one (a plain text file
    # is no J2ME strings): a file nothing takes is refused, naming what was expected.
    probed = member is None and fallback.has("probe") and os.path.isfile(name)
    if probed and not fallback.call("probe", name, _read_head(name, 1024), None):
        from ..errors import GamepakError

        expected = " nor ".join(kind.description for kind in rows)
        raise GamepakError(f"{name}: not a {family} file gamepak reads: neither {expected}")
    return fallback


def exporter_for(name: str, head: bytes = b"") -> ContentKind | None:
    """The model kind with its own `export` verb (a Quake MDL or BSP) a member called `name`
    (first bytes `head`) is, or None: what `ops.model_export.export_all` converts itself."""
    # A kind that finds its own files (`open`: a mesh pair) is not converted from a member's
    # bytes alone: `model export PACK` (its `export_pack`) writes those.
    return next(
        (
            kind
            for kind in of_member(name, head, family="model", probe=False)
            if kind.has("export") and not kind.has("open")
        ),
        None,
    )


def member_types() -> tuple[dict[bytes, str], dict[str, str]]:
    """(signature -> member type, extension -> member type) of every row: what the catalog's
    `member_type` and the viewer's listings call a content file."""
    signatures: dict[bytes, str] = {}
    extensions: dict[str, str] = {}
    for kind in KINDS:
        for extension, label in kind.types.items():
            if isinstance(extension, str):
                extensions.setdefault(extension, label)
        named = [label for key, label in kind.types.items() if isinstance(key, str)]
        for signature in kind.signatures:
            chosen = kind.types.get(signature) or (named[0] if named else None)
            if chosen is not None:
                signatures.setdefault(signature, chosen)
    return signatures, extensions


def readme_table() -> str:
    """The README's table of content kinds, made from the rows (`python -m gamepak.content`)."""
    lines = [
        "| kind | what | files | commands | catalog | `archives.kind` | viewer |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind in KINDS:
        family = kind.family
        own = ("add", "rm", "import")  # verbs only some kinds of a family have
        # `model export-all` converts members from their bytes: not a kind that finds its own files.
        shared = [command for command in family.commands if not (command == "export-all" and kind.has("open"))]
        verbs = [*shared, *(verb for verb in own if verb in kind.verbs and verb not in family.commands)]
        commands = ", ".join(f"`{family.command} {verb}`" for verb in verbs)
        files = ", ".join(f"`{extension}`" for extension in kind.extensions) or "(by content)"
        if kind.partner_extensions:
            files += " (+ " + ", ".join(f"`{extension}`" for extension in kind.partner_extensions) + ")"
        lines.append(
            f"| `{kind.name}` | {kind.description} | {files} | {commands} | {family.catalog or '-'} | "
            f"{f'`{family.archive_kind}`' if family.archive_kind else '-'} | {kind.preview} |"
        )
    return "\n".join(lines) + "\n"
