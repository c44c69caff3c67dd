"""One registry per content kind, as `registry.py` is for archives: which module handles a
texture source or a model, found by file extension or by the format of the pack holding it.
The `texture` and `model` verbs (and the viewer and catalog) dispatch through these tables; a
new kind is one module plus one row.

    texture sources: peg (RFG), quake (WAD lumps, LMP, BSP textures, SPR, MDL skins, WAL),
                     sprite (Gameloft J2ME sprites in J2ME packs, `ops.sprites`)
    models:          joe (and OBJ/glTF/PLY, `gamepak.models`), mdl and bsp (`models.quake`),
                     scene (VDrift tracks and cars, `models.scene`)
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType


class ContentSpec:
    """One kind of content: its name, what it is, the module that handles it, the file
    extensions that name it, and the pack formats whose members it looks inside."""

    __slots__ = ("description", "extensions", "module", "name", "packs")

    def __init__(
        self, name: str, description: str, module: str, extensions: tuple[str, ...], packs: tuple[str, ...] = ()
    ) -> None:
        self.name = name
        self.description = description
        self.module = module
        self.extensions = extensions
        self.packs = packs

    def __repr__(self) -> str:
        return f"<ContentSpec {self.name}>"

    def load(self) -> ModuleType:
        from .registry import load_module

        return load_module(self.module)


TEXTURE_SOURCES: tuple[ContentSpec, ...] = (
    ContentSpec(
        "peg",
        "Red Faction Guerrilla textures (peg v10)",
        "gamepak.ops.textures",
        (".cpeg_pc", ".cvbm_pc"),
        ("vpp",),
    ),
    ContentSpec(
        "quake",
        "Quake palette images: WAD lumps, LMP pictures, BSP textures, SPR frames, MDL skins, Quake II WAL",
        "gamepak.ops.quake_textures",
        (".wad", ".lmp", ".bsp", ".spr", ".mdl", ".wal", ".mip", ".pak", ".pk3", ".kpf"),
        ("pak", "wad", "zip"),
    ),
    ContentSpec(
        "sprite",
        "Gameloft J2ME sprites (BSPRITE): modules, frames, animations",
        "gamepak.ops.sprites",
        (),
        ("j2me-table", "j2me-offsets", "j2me-end-offsets", "j2me-sized", "j2me-ids"),
    ),
)

MODELS: tuple[ContentSpec, ...] = (
    ContentSpec(
        "joe", "VDrift JOE models (and OBJ, glTF, PLY)", "gamepak.models", (".joe", ".obj", ".glb", ".gltf", ".ply")
    ),
    ContentSpec("mdl", "Quake alias model (IDPO v6)", "gamepak.models.quake", (".mdl",)),
    ContentSpec("bsp", "Quake map (BSP29, BSP2)", "gamepak.models.quake", (".bsp",)),
    # A folder, not a file: `model` tries it first for a folder (cli.model._scene).
    ContentSpec("scene", "VDrift track or car folder (a scene of JOE models)", "gamepak.models.scene", (".car",)),
)


def _by_extension(table: tuple[ContentSpec, ...], name: str) -> ContentSpec | None:
    lowered = name.lower()
    for spec in table:
        if lowered.endswith(spec.extensions):
            return spec
    return None


def texture_source_for(path: str | os.PathLike[str]) -> ContentSpec:
    """The texture source kind of a file or pack: by extension, else by the pack's format
    (the first row, RFG pegs, when nothing else claims it)."""
    name = os.fspath(path)
    spec = _by_extension(TEXTURE_SOURCES, name)
    if spec is not None:
        return spec
    if os.path.isfile(name):
        from .opening import detect

        try:
            found = detect(name)
        except Exception:  # an unreadable file is reported by the handler itself
            found = []
        for detection in found:
            for candidate in TEXTURE_SOURCES:
                if detection.format in candidate.packs:
                    return candidate
    return TEXTURE_SOURCES[0]


def model_kind_for(name: str, head: bytes = b"") -> ContentSpec | None:
    """The model kind a file name (or the first bytes) shows, None when not a model."""
    spec = _by_extension(MODELS, name)
    if spec is not None:
        return spec
    if head[:4] == b"IDPO":
        return MODELS[1]
    if head[:4] in (b"\x1d\x00\x00\x00", b"BSP2", b"2PSB"):
        return MODELS[2]
    return None
