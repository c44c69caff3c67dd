"""The three engines' tables of `limits` (see its docstring for the rules): vanilla Quake,
QuakeSpasm and GoldSrc, built on first use, and `_most_permissive()`, the derivation of the
default table `limits.ANY` (written out there; a test holds the two equal). A `verify` that names
no engine loads none of this (issue 48, start-up).
"""

from __future__ import annotations

from .rules import ANY, HL_MODEL, QS_MODEL, WQ_MODEL, Engine, Rule


def _known() -> tuple[Engine, Engine, Engine]:
    """The three engines' tables, built on first use (see `__getattr__`): the default `verify`
    checks against `ANY` alone, written out below."""
    known = globals().get("KNOWN")
    if known is not None:
        return known  # type: ignore[no-any-return]
    # Draw_Init (WinQuake/draw.c), SCR_Init (WinQuake/screen.c) and Sbar_Init (WinQuake/sbar.c) look
    # these up with W_GetLumpName; the mission packs' extra lumps (hipnotic, rogue) are left out.
    weapons = ("shotgun", "sshotgun", "nailgun", "snailgun", "rlaunch", "srlaunch", "lightng")
    sbar_lumps = (
        [f"num_{digit}" for digit in range(10)]
        + [f"anum_{digit}" for digit in range(10)]
        + ["num_minus", "anum_minus", "num_colon", "num_slash"]
        + [
            f"{prefix}_{weapon}"
            for prefix in ("inv", "inv2", "inva1", "inva2", "inva3", "inva4", "inva5")
            for weapon in weapons
        ]
        + ["sb_shells", "sb_nails", "sb_rocket", "sb_cells", "sb_armor1", "sb_armor2", "sb_armor3"]
        + ["sb_key1", "sb_key2", "sb_invis", "sb_invuln", "sb_suit", "sb_quad"]
        + ["sb_sigil1", "sb_sigil2", "sb_sigil3", "sb_sigil4"]
        + [f"face{number}" for number in range(1, 6)]
        + [f"face_p{number}" for number in range(1, 6)]
        + ["face_invis", "face_invul2", "face_inv2", "face_quad", "sbar", "ibar", "scorebar"]
    )
    draw_lumps = ("conchars", "disc", "backtile")
    screen_lumps = ("ram", "net", "turtle")

    wq_missing = "W_GetLumpinfo (WinQuake/wad.c) calls Sys_Error for a missing lump"
    qs_missing = "QuakeSpasm's W_GetLumpinfo (Quake/wad.c) prints and returns NULL; Draw_PicFromWad draws a blank"

    quake = Engine(
        "quake",
        "vanilla software Quake (id's WinQuake/QuakeWorld source)",
        {
            # MAX_LBM_HEIGHT is 200 in id's software renderer header QW/client/d_iface.h (the
            # released WinQuake/d_iface.h and GLQuake's glquake.h say 480); model.c's
            # Mod_LoadAliasModel calls Sys_Error past it.
            "mdl.skin_height": Rule(200, "error", f"MAX_LBM_HEIGHT in QW/client/d_iface.h; Sys_Error in {WQ_MODEL}"),
            "mdl.skin_width_multiple": Rule(4, "error", f"Sys_Error in {WQ_MODEL} Mod_LoadAliasModel"),
            "mdl.vertices": Rule(2000, "error", f"MAXALIASVERTS in WinQuake/r_local.h; Sys_Error in {WQ_MODEL}"),
            "mdl.triangles": None,  # Mod_LoadAliasModel checks only that there is one
            "mdl.skins": None,  # skin descriptors are allocated per model
            "mdl.poses": None,  # frames are allocated per model
            "pak.members": Rule(2048, "error", "MAX_FILES_IN_PACK; Sys_Error in WinQuake/common.c COM_LoadPackFile"),
            # dpackfile_t name[56] is strcpy'd: a name without its NUL runs into the offset field.
            "pak.name_bytes": Rule(55, "error", "dpackfile_t name[56] in WinQuake/common.c"),
            # miptex_t name[16] is memcpy'd into texture_t name[16]: a 16-byte name keeps no NUL.
            "miptex.name_bytes": Rule(15, "warning", f"miptex_t name[16] in WinQuake/bspfile.h, copied in {WQ_MODEL}"),
            "miptex.size_multiple": Rule(16, "error", f"Sys_Error 'not 16 aligned' in {WQ_MODEL} Mod_LoadTextures"),
            # Mod_DecompressVis decompresses into a static MAX_MAP_LEAFS/8-byte buffer.
            "bsp.visleafs": Rule(8192, "error", f"MAX_MAP_LEAFS in WinQuake/bspfile.h, static buffer in {WQ_MODEL}"),
            # Every brush model takes a mod_known slot (Mod_FindName); Sys_Error when none is left.
            "bsp.models": Rule(256, "error", f"MAX_MOD_KNOWN in {WQ_MODEL} Mod_FindName"),
            # Node and clipnode children are signed shorts (negative = contents or leaf).
            "bsp29.nodes": Rule(32767, "error", "dnode_t short children in WinQuake/bspfile.h"),
            "bsp29.clipnodes": Rule(32767, "error", "dclipnode_t short children in WinQuake/bspfile.h"),
            # Leafs' first marksurface and the marksurfaces' face numbers are read as signed shorts.
            "bsp29.marksurfaces": Rule(32767, "error", f"LittleShort(firstmarksurface) in {WQ_MODEL} Mod_LoadLeafs"),
            "bsp29.faces": Rule(32767, "error", f"short marksurfaces in {WQ_MODEL} Mod_LoadMarksurfaces"),
        },
        frozenset({"BSP29"}),
        gfx_wad2=Rule(0, "error", "Sys_Error 'doesn't have WAD2 id' in WinQuake/wad.c W_LoadWadFile"),
        # One rule shared by every lump (rules are values): a hundred Rule objects per engine were
        # a tenth of `verify`'s start-up.
        gfx_lumps=dict.fromkeys((*draw_lumps, *screen_lumps, *sbar_lumps), Rule(0, "error", wq_missing)),
    )

    quakespasm = Engine(
        "quakespasm",
        "QuakeSpasm (sezero/quakespasm)",
        {
            # Con_DWarning: printed with `developer` on, and the model loads.
            "mdl.skin_height": Rule(480, "warning", f"MAX_LBM_HEIGHT in Quake/glquake.h; Con_DWarning in {QS_MODEL}"),
            "mdl.skin_width_multiple": None,
            "mdl.vertices": Rule(2000, "error", f"MAXALIASVERTS in Quake/gl_model.h; Sys_Error in {QS_MODEL}"),
            "mdl.triangles": Rule(4096, "error", f"MAXALIASTRIS in Quake/gl_model.h; Sys_Error in {QS_MODEL}"),
            "mdl.skins": Rule(32, "error", f"MAX_SKINS in Quake/gl_model.h; Sys_Error in {QS_MODEL} Mod_LoadAllSkins"),
            "mdl.poses": Rule(256, "error", f"MAXALIASFRAMES in Quake/gl_model.h; Sys_Error 'posenum' in {QS_MODEL}"),
            "pak.members": Rule(2048, "error", "MAX_FILES_IN_PACK; Sys_Error in Quake/common.c COM_LoadPackFile"),
            "pak.name_bytes": Rule(55, "error", "dpackfile_t name[56] in Quake/common.c"),
            "miptex.name_bytes": Rule(
                15, "warning", f"miptex_t name[16], copied into texture_t name[16] in {QS_MODEL}"
            ),
            "miptex.size_multiple": Rule(16, "warning", f"Con_Warning 'not 16 aligned' in {QS_MODEL} Mod_LoadTextures"),
            "bsp.visleafs": Rule(8192, "warning", f"Con_DWarning in {QS_MODEL} Mod_LoadSubmodels"),
            # BSP29 only (BSP2 lifts them): the leaf count stops the map, the rest are warnings.
            "bsp29.leafs": Rule(32767, "error", f"Host_Error in {QS_MODEL} Mod_ProcessLeafs_S"),
            "bsp29.nodes": Rule(32767, "warning", f"Con_DWarning in {QS_MODEL} Mod_LoadNodes_S"),
            "bsp29.clipnodes": Rule(32767, "warning", f"Con_DWarning in {QS_MODEL} Mod_LoadClipnodes"),
            "bsp29.marksurfaces": Rule(32767, "warning", f"Con_DWarning in {QS_MODEL} Mod_LoadMarksurfaces"),
            "bsp29.faces": Rule(32767, "warning", f"Con_DWarning in {QS_MODEL} Mod_LoadFaces"),
        },
        frozenset({"BSP29", "BSP2", "2PSB"}),
        gfx_wad2=Rule(0, "error", "Sys_Error 'doesn't have WAD2 id' in Quake/wad.c W_LoadWadFile"),
        gfx_lumps={
            # Draw_LoadPics (gl_draw.c), SCR_LoadPics (gl_screen.c), Sbar_LoadPics (sbar.c)
            **dict.fromkeys((*draw_lumps, *screen_lumps, *sbar_lumps), Rule(0, "warning", qs_missing)),
            "conchars": Rule(0, "error", "Sys_Error in Quake/gl_draw.c Draw_LoadPics"),
        },
    )

    goldsrc = Engine(
        "goldsrc",
        "GoldSrc (Half-Life), as ReHLDS reimplements its loader",
        {
            "mdl.skin_height": Rule(
                480, "error", f"MAX_LBM_HEIGHT in rehlds/public/rehlds/model.h; Sys_Error in {HL_MODEL}"
            ),
            "mdl.skin_width_multiple": Rule(4, "error", f"Sys_Error in {HL_MODEL} Mod_LoadAliasModel"),
            "mdl.vertices": Rule(
                2000, "error", f"MAX_ALIAS_MODEL_VERTS in rehlds/public/rehlds/model.h; Sys_Error in {HL_MODEL}"
            ),
            "mdl.triangles": None,
            "mdl.skins": None,
            "mdl.poses": None,
            "miptex.name_bytes": Rule(
                15, "warning", f"miptex_t name[16], copied into texture_t name[16] in {HL_MODEL}"
            ),
            "miptex.size_multiple": Rule(16, "error", f"Sys_Error 'not 16 aligned' in {HL_MODEL} Mod_LoadTextures"),
            "bsp.models": Rule(
                1024, "error", f"MAX_KNOWN_MODELS in rehlds/public/rehlds/model.h; Sys_Error in {HL_MODEL}"
            ),
            "bsp29.nodes": Rule(32767, "error", f"LittleShort(children) in {HL_MODEL} Mod_LoadNodes"),
            "bsp29.clipnodes": Rule(32767, "error", f"LittleShort(children) in {HL_MODEL} Mod_LoadClipnodes"),
            "bsp29.marksurfaces": Rule(32767, "error", f"LittleShort(firstmarksurface) in {HL_MODEL} Mod_LoadLeafs"),
            "bsp29.faces": Rule(32767, "error", f"short marksurfaces in {HL_MODEL} Mod_LoadMarksurfaces"),
        },
        # Mod_LoadBrushModel takes version 29 (Q1BSP_VERSION) and 30 (HLBSP_VERSION).
        frozenset({"BSP29", "BSP30"}),
    )
    known = (quake, quakespasm, goldsrc)
    globals().update(
        QUAKE=quake, QUAKESPASM=quakespasm, GOLDSRC=goldsrc, KNOWN=known, ENGINES={e.name: e for e in (*known, ANY)}
    )
    return known


_BUILT = ("QUAKE", "QUAKESPASM", "GOLDSRC", "KNOWN", "ENGINES")

TYPE_CHECKING = False
if TYPE_CHECKING:  # what `__getattr__` builds, declared with its types for type checkers
    QUAKE: Engine
    QUAKESPASM: Engine
    GOLDSRC: Engine
    KNOWN: tuple[Engine, Engine, Engine]
    ENGINES: dict[str, Engine]


def __getattr__(name: str) -> object:
    """`QUAKE`, `QUAKESPASM`, `GOLDSRC`, `KNOWN` and `ENGINES`, built when first asked for."""
    if name in _BUILT:
        _known()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _most_permissive() -> Engine:
    """The rules every engine that has them enforces as errors, at the largest limit; the BSP
    variants any engine loads; the gfx.wad lumps every engine that says stops without."""
    quake, quakespasm, _ = engines = _known()
    rules: dict[str, Rule | None] = {}
    # PAK files are Quake II's too, whose engine takes 4096 members (the PAK reader itself
    # reports past that): the member count is left to it.
    for key in sorted({key for engine in engines for key in engine.rules} - {"pak.members"}):
        known = [engine.rules[key] for engine in engines if key in engine.rules]
        if any(rule is None or rule.severity != "error" for rule in known):
            continue  # some engine loads it
        chosen = max((rule for rule in known if rule is not None), key=lambda rule: rule.limit)
        rules[key] = chosen
    versions = frozenset().union(*(engine.bsp_versions or frozenset() for engine in engines))
    # An engine with a gfx.wad list that lacks a lump does not look it up; one without a list is not known.
    # (One set per engine rather than a look-up per lump and engine.)
    listed = [engine.gfx_lumps for engine in engines if engine.gfx_lumps]
    stopping = set.intersection(*({name for name, rule in said.items() if rule.severity == "error"} for said in listed))
    lumps = {name: listed[-1][name] for name in quake.gfx_lumps if name in stopping}
    return Engine("any", "the most permissive known engine", rules, versions, quakespasm.gfx_wad2, lumps)
