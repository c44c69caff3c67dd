"""The model and scene families of the content registry (`gamepak model`, the catalog's
`models` table, the viewer's 3D view) and their rows: JOE, RFG meshes, Quake MDL and BSP,
VDrift scenes. `gamepak.content` puts the rows in their order."""

from __future__ import annotations

from ..spec import ContentKind, Family, Verb

MODEL = Family(
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
)

# A folder: no archives row of its own (its models are models rows naming the scene).
SCENE = Family("scene", "model", "models", None, "model", {}, ("info", "export", "import --into"))

_PREVIEWS = "gamepak.content.previews"
_MESHES = "gamepak.models.rfg.content"
_MESH_OPS = "gamepak.ops.meshes"

JOE = ContentKind(
    "joe",
    MODEL,
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
)

# A mesh is two files: the CPU one names it (catalog rows, README), either is taken by the
# `model` verbs and the viewer (`partner_extensions`).
RFG_MESH = ContentKind(
    "rfg-mesh",
    MODEL,
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
)

MDL = ContentKind(
    "mdl",
    MODEL,
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
)

BSP = ContentKind(
    "bsp",
    MODEL,
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
)

SCENE_FOLDER = ContentKind(
    "scene",
    SCENE,
    "VDrift track or car folders: a scene of JOE models, textured, placed",
    extensions=(".car",),
    claims=Verb(f"{_PREVIEWS}:scene_claims"),
)
