"""What the Quake-family engines refuse, or warn about, when they load a file: one table per engine.

`verify --engine NAME` checks PAK, WAD, BSP, MDL and SPR files (loose, or members of a PAK)
against one table. Every rule says the limit, whether the engine stops (an error: its loader
calls Sys_Error or Host_Error, or a fixed-size array or index type cannot hold the value) or
prints a line and goes on (a warning), and the engine source file the limit was read from.

| rule                  | compared                                                   |
|-----------------------|------------------------------------------------------------|
| mdl.skin_height       | MDL header skin height <= limit                            |
| mdl.skin_width_multiple | MDL skin width is a multiple of limit                    |
| mdl.vertices          | MDL vertex count <= limit                                  |
| mdl.triangles         | MDL triangle count <= limit                                |
| mdl.skins             | MDL skin count (header) <= limit                           |
| mdl.poses             | MDL poses (single frames + group members) <= limit         |
| pak.members           | PAK member count <= limit                                  |
| pak.name_bytes        | PAK member name length in bytes <= limit                   |
| miptex.name_bytes     | miptex (BSP texture, WAD lump) name length in bytes <= limit |
| miptex.size_multiple  | miptex width and height are multiples of limit             |
| bsp.visleafs          | the world model's visleafs <= limit                        |
| bsp.models            | BSP models (world + brush entities) <= limit               |
| bsp29.<lump>          | BSP29 record count of faces/nodes/clipnodes/leafs/marksurfaces <= limit |

A rule set to None is one the engine's loader does not have (its source was read: it accepts
any value); a rule missing from a table is one whose source could not be read (not known).
The default table, `any`, is the most permissive known engine: it keeps only the rules that
every engine which has the rule enforces as an error, at the largest limit among them, so
nothing some engine loads is reported.
"""

from __future__ import annotations

import os
import struct

from ...core.archive import Archive, Entry, Problem, encode_name
from ...errors import CorruptArchiveError

# The map, model, sprite and image readers (bsp, mdl, spr, images) are imported by the checks
# that read such a file, and the tables below are plain classes rather than dataclasses: every
# `verify` of a PAK, WAD or BSP loads this module, and those imports (dataclasses brings inspect
# and ast) took longer than Python's own start-up for a pack holding no map or model.

# A member is read whole to check it (maps and models are read by the engine whole too); one
# larger than this is reported, not read.
MAX_MEMBER = 1 << 30


class Rule:
    """One limit of one engine: the value, what the engine does past it, where it was read."""

    __slots__ = ("limit", "severity", "source")

    def __init__(self, limit: int, severity: str, source: str) -> None:
        self.limit = limit
        self.severity = severity  # "error": the engine stops (or cannot hold the value); "warning": it goes on
        self.source = source

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Rule):
            return NotImplemented
        return (self.limit, self.severity, self.source) == (other.limit, other.severity, other.source)

    def __hash__(self) -> int:
        return hash((self.limit, self.severity, self.source))

    def __repr__(self) -> str:
        return f"Rule(limit={self.limit!r}, severity={self.severity!r}, source={self.source!r})"


class Engine:
    """An engine's limits as data.

    `bsp_versions`: the BSP variants the engine's loader accepts ("BSP29", "BSP30", "BSP2",
    "2PSB"); None: not known. `gfx_wad2`: whether gfx.wad must be WAD2 (None: not known);
    `gfx_lumps`: the lumps the engine looks up in it at start-up, each with what happens when
    one is missing."""

    __slots__ = ("bsp_versions", "gfx_lumps", "gfx_wad2", "name", "rules", "title")

    def __init__(
        self,
        name: str,
        title: str,
        rules: dict[str, Rule | None],
        bsp_versions: frozenset[str] | None,
        gfx_wad2: Rule | None = None,
        gfx_lumps: dict[str, Rule] | None = None,
    ) -> None:
        self.name = name
        self.title = title
        self.rules = rules
        self.bsp_versions = bsp_versions
        self.gfx_wad2 = gfx_wad2
        self.gfx_lumps = {} if gfx_lumps is None else gfx_lumps

    def __repr__(self) -> str:
        return f"Engine({self.name!r})"


# Sources (id-Software/Quake, sezero/quakespasm, rehlds/rehlds):
WQ_MODEL = "WinQuake/model.c"
QS_MODEL = "QuakeSpasm Quake/gl_model.c"
HL_MODEL = "ReHLDS rehlds/engine/model.cpp"

# Draw_Init (WinQuake/draw.c), SCR_Init (WinQuake/screen.c) and Sbar_Init (WinQuake/sbar.c) look
# these up with W_GetLumpName; the mission packs' extra lumps (hipnotic, rogue) are left out.
_WEAPONS = ("shotgun", "sshotgun", "nailgun", "snailgun", "rlaunch", "srlaunch", "lightng")
_SBAR_LUMPS = (
    [f"num_{digit}" for digit in range(10)]
    + [f"anum_{digit}" for digit in range(10)]
    + ["num_minus", "anum_minus", "num_colon", "num_slash"]
    + [
        f"{prefix}_{weapon}"
        for prefix in ("inv", "inv2", "inva1", "inva2", "inva3", "inva4", "inva5")
        for weapon in _WEAPONS
    ]
    + ["sb_shells", "sb_nails", "sb_rocket", "sb_cells", "sb_armor1", "sb_armor2", "sb_armor3"]
    + ["sb_key1", "sb_key2", "sb_invis", "sb_invuln", "sb_suit", "sb_quad"]
    + ["sb_sigil1", "sb_sigil2", "sb_sigil3", "sb_sigil4"]
    + [f"face{number}" for number in range(1, 6)]
    + [f"face_p{number}" for number in range(1, 6)]
    + ["face_invis", "face_invul2", "face_inv2", "face_quad", "sbar", "ibar", "scorebar"]
)
_DRAW_LUMPS = ("conchars", "disc", "backtile")
_SCREEN_LUMPS = ("ram", "net", "turtle")

_WQ_MISSING = "W_GetLumpinfo (WinQuake/wad.c) calls Sys_Error for a missing lump"
_QS_MISSING = "QuakeSpasm's W_GetLumpinfo (Quake/wad.c) prints and returns NULL; Draw_PicFromWad draws a blank"

QUAKE = Engine(
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
    gfx_lumps=dict.fromkeys((*_DRAW_LUMPS, *_SCREEN_LUMPS, *_SBAR_LUMPS), Rule(0, "error", _WQ_MISSING)),
)

QUAKESPASM = Engine(
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
        "miptex.name_bytes": Rule(15, "warning", f"miptex_t name[16], copied into texture_t name[16] in {QS_MODEL}"),
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
        **dict.fromkeys((*_DRAW_LUMPS, *_SCREEN_LUMPS, *_SBAR_LUMPS), Rule(0, "warning", _QS_MISSING)),
        "conchars": Rule(0, "error", "Sys_Error in Quake/gl_draw.c Draw_LoadPics"),
    },
)

GOLDSRC = Engine(
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
        "miptex.name_bytes": Rule(15, "warning", f"miptex_t name[16], copied into texture_t name[16] in {HL_MODEL}"),
        "miptex.size_multiple": Rule(16, "error", f"Sys_Error 'not 16 aligned' in {HL_MODEL} Mod_LoadTextures"),
        "bsp.models": Rule(1024, "error", f"MAX_KNOWN_MODELS in rehlds/public/rehlds/model.h; Sys_Error in {HL_MODEL}"),
        "bsp29.nodes": Rule(32767, "error", f"LittleShort(children) in {HL_MODEL} Mod_LoadNodes"),
        "bsp29.clipnodes": Rule(32767, "error", f"LittleShort(children) in {HL_MODEL} Mod_LoadClipnodes"),
        "bsp29.marksurfaces": Rule(32767, "error", f"LittleShort(firstmarksurface) in {HL_MODEL} Mod_LoadLeafs"),
        "bsp29.faces": Rule(32767, "error", f"short marksurfaces in {HL_MODEL} Mod_LoadMarksurfaces"),
    },
    # Mod_LoadBrushModel takes version 29 (Q1BSP_VERSION) and 30 (HLBSP_VERSION).
    frozenset({"BSP29", "BSP30"}),
)

KNOWN = (QUAKE, QUAKESPASM, GOLDSRC)


def _most_permissive() -> Engine:
    """The rules every engine that has them enforces as errors, at the largest limit; the BSP
    variants any engine loads; the gfx.wad lumps every engine that says stops without."""
    rules: dict[str, Rule | None] = {}
    # PAK files are Quake II's too, whose engine takes 4096 members (the PAK reader itself
    # reports past that): the member count is left to it.
    for key in sorted({key for engine in KNOWN for key in engine.rules} - {"pak.members"}):
        known = [engine.rules[key] for engine in KNOWN if key in engine.rules]
        if any(rule is None or rule.severity != "error" for rule in known):
            continue  # some engine loads it
        chosen = max((rule for rule in known if rule is not None), key=lambda rule: rule.limit)
        rules[key] = chosen
    versions = frozenset().union(*(engine.bsp_versions or frozenset() for engine in KNOWN))
    # An engine with a gfx.wad list that lacks a lump does not look it up; one without a list is not known.
    # (One set per engine rather than a look-up per lump and engine: this runs in every `verify`.)
    listed = [engine.gfx_lumps for engine in KNOWN if engine.gfx_lumps]
    stopping = set.intersection(*({name for name, rule in said.items() if rule.severity == "error"} for said in listed))
    lumps = {name: listed[-1][name] for name in QUAKE.gfx_lumps if name in stopping}
    return Engine("any", "the most permissive known engine", rules, versions, QUAKESPASM.gfx_wad2, lumps)


ANY = _most_permissive()
ENGINES = {engine.name: engine for engine in (*KNOWN, ANY)}
ENGINE_NAMES = tuple(engine.name for engine in KNOWN)


def engine_named(name: str | None) -> Engine:
    """The table called `name` (None: the most permissive known engine)."""
    return ENGINES["any" if name is None else name]


class _Findings:
    """Problems of one file (and member), worded the same way for every rule."""

    def __init__(self, engine: Engine, member: str | None) -> None:
        self.engine = engine
        self.member = member
        self.problems: list[Problem] = []

    def add(self, message: str, severity: str, offset: int | None = None) -> None:
        where = f"member {self.member!r}: " if self.member is not None else ""
        self.problems.append(Problem(where + message, severity=severity, offset=offset, member=self.member))

    def at_most(self, key: str, what: str, value: int, offset: int | None = None) -> None:
        rule = self.engine.rules.get(key)
        if rule is not None and value > rule.limit:
            self.add(
                f"{what} {value} is over {self.whose()} limit of {rule.limit} ({rule.source})", rule.severity, offset
            )

    def multiple_of(self, key: str, what: str, value: int, offset: int | None = None) -> None:
        rule = self.engine.rules.get(key)
        if rule is not None and value % rule.limit:
            self.add(
                f"{what} {value} is not a multiple of {rule.limit}, as {self.whose()} loader needs ({rule.source})",
                rule.severity,
                offset,
            )

    def whose(self) -> str:
        return "every known engine's" if self.engine is ANY else f"{self.engine.name}'s"


def check_mdl(data: bytes, engine: Engine, label: str, member: str | None = None) -> list[Problem]:
    """An alias model's header counts, and its poses when `engine` limits them, against `engine`.
    Without a pose limit only the 84-byte header is needed (`data` may be just that)."""
    from . import mdl
    from .images import ImageError

    found = _Findings(engine, member)
    if engine.rules.get("mdl.poses") is None:
        if len(data) < mdl.HEADER.size:
            found.add(f"MDL is {len(data)} bytes, shorter than its {mdl.HEADER.size}-byte header", "error", 0)
            return found.problems
        fields = mdl.HEADER.unpack_from(data)
        skins, width, height, vertices, triangles = fields[12:17]
        poses = None
    else:
        try:
            model = mdl.read(data, label)
        except ImageError as exc:
            found.add(f"not a model the engine can load: {exc.reason}", "error", exc.offset)
            return found.problems
        skins = struct.unpack_from("<i", data, 48)[0]
        width, height, vertices, triangles = (
            model.skin_width,
            model.skin_height,
            model.vertex_count,
            model.triangle_count,
        )
        poses = len(model.poses)
    found.at_most("mdl.skin_height", "skin height", height, 56)
    found.multiple_of("mdl.skin_width_multiple", "skin width", width, 52)
    found.at_most("mdl.vertices", "vertex count", vertices, 60)
    found.at_most("mdl.triangles", "triangle count", triangles, 64)
    found.at_most("mdl.skins", "skin count", skins, 48)
    if poses is not None:
        found.at_most("mdl.poses", "pose count (frames and frame group members)", poses)
    return found.problems


def check_spr(data: bytes, engine: Engine, label: str, member: str | None = None) -> list[Problem]:
    """A sprite read as the engines read it (no engine limit on sprites was found in their loaders)."""
    from . import spr
    from .images import ImageError

    found = _Findings(engine, member)
    try:
        spr.read(data, label)
    except ImageError as exc:
        found.add(f"not a sprite the engine can load: {exc.reason}", "error", exc.offset)
    return found.problems


def _check_miptex(found: _Findings, head: bytes, where: str, offset: int) -> None:
    """A miptex header's name and size (`head` holds at least its 40 bytes)."""
    from .images import MIPTEX_HEADER

    raw_name, width, height = MIPTEX_HEADER.unpack_from(head)[:3]
    name_bytes = raw_name.partition(b"\0")[0]
    label = f"{where} {name_bytes.decode('latin-1')!r}"
    found.at_most("miptex.name_bytes", f"{label}: name length (bytes)", len(name_bytes), offset)
    found.multiple_of("miptex.size_multiple", f"{label}: width", width, offset + 16)
    found.multiple_of("miptex.size_multiple", f"{label}: height", height, offset + 20)


def bsp_variant(data: bytes) -> str | None:
    """The variant ("BSP29", "BSP30", "BSP2" or "2PSB") from a map's first 4 bytes (None: none of them)."""
    from . import bsp

    head = data[:4]
    if head in bsp.VERSIONS:
        return bsp.VERSIONS[head]
    return "BSP30" if head == struct.pack("<i", 30) else None


def check_bsp(data: bytes, engine: Engine, label: str, member: str | None = None) -> list[Problem]:
    """A map's version, lump record counts and embedded miptex headers against `engine`."""
    from . import bsp
    from .images import MIPTEX_HEADER, ImageError

    found = _Findings(engine, member)
    variant = bsp_variant(data)
    if variant is None:
        return found.problems  # not a Quake-family map (a Quake II or III one in a PAK): no limits here
    if engine.bsp_versions is not None and variant not in engine.bsp_versions:
        accepted = ", ".join(sorted(engine.bsp_versions))
        found.add(
            f"map version {variant} is not one {found.whose()} loader takes ({accepted}; "
            "Sys_Error 'wrong version number' in Mod_LoadBrushModel)",
            "error",
            0,
        )
        return found.problems
    if variant == "BSP30":
        return found.problems  # Half-Life's layout: gamepak reads only the version of it
    try:
        world = bsp.MapFile(data, label)
        offsets = world.texture_offsets()
    except ImageError as exc:
        found.add(f"not a map the engine can load: {exc.reason}", "error", exc.offset)
        return found.problems
    found.at_most("bsp.models", "model count (world and brush entities)", world.count("models"), world.lumps[14].offset)
    if world.count("models"):
        (visleafs,) = struct.unpack_from("<i", data, world.lumps[14].offset + 52)
        found.at_most("bsp.visleafs", "world visleafs", visleafs, world.lumps[14].offset + 52)
    if world.variant == "BSP29":
        for lump in ("faces", "nodes", "clipnodes", "leafs", "marksurfaces"):
            index = bsp.LUMP_NAMES.index(lump)
            found.at_most(f"bsp29.{lump}", f"{lump} count", world.count(lump), 4 + 8 * index)
    base = world.lumps[2].offset
    for number, offset in enumerate(offsets):
        if offset >= 0:
            _check_miptex(
                found, data[base + offset : base + offset + MIPTEX_HEADER.size], f"texture {number}", base + offset
            )
    return found.problems


def check_wad(archive: Archive, engine: Engine, member: str | None = None) -> list[Problem]:
    """A WAD's miptex lumps (names and sizes, as a map compiled from them gets them), and for a
    file called gfx.wad its magic and the lumps the engine looks up at start-up."""
    from .images import MIPTEX_HEADER

    found = _Findings(engine, member)
    name = os.path.basename(member if member is not None else archive.filename).lower()
    magic = getattr(archive, "magic", b"")
    if name == "gfx.wad":
        if engine.gfx_wad2 is not None and magic != b"WAD2":
            found.add(f"gfx.wad is {magic!r}, not WAD2 ({engine.gfx_wad2.source})", engine.gfx_wad2.severity, 0)
        present = {entry.name.lower() for entry in archive.infolist()}
        for lump, rule in engine.gfx_lumps.items():
            if lump not in present:
                found.add(
                    f"gfx.wad has no {lump!r} lump, which the engine looks up at start-up ({rule.source})",
                    rule.severity,
                )
    for entry in archive.infolist():
        if getattr(entry, "kind", None) != "miptex":
            continue
        found.at_most("miptex.name_bytes", f"lump {entry.name!r}: name length (bytes)", len(encode_name(entry.name)))
        if entry.size < MIPTEX_HEADER.size:
            continue  # the WAD's own check reports a short miptex
        with archive.open(entry) as stream:
            head = stream.read(MIPTEX_HEADER.size)
        _check_miptex(found, head, f"lump {entry.name!r} miptex", entry.offset)
    return found.problems


_MEMBER_CHECKS = {".bsp": check_bsp, ".mdl": check_mdl, ".spr": check_spr}


def check_pak(archive: Archive, engine: Engine) -> list[Problem]:
    """A PAK's member count and names, then each map, model, sprite and WAD in it."""
    found = _Findings(engine, None)
    found.at_most("pak.members", "member count", len(archive))
    for entry in archive.infolist():
        size = len(encode_name(entry.name))
        rule = engine.rules.get("pak.name_bytes")
        if rule is not None and size > rule.limit:
            found.add(
                f"member {entry.name!r}: name length {size} bytes is over {found.whose()} limit of {rule.limit} "
                f"({rule.source})",
                rule.severity,
            )
    problems = found.problems
    for entry in archive.infolist():
        problems += check_member(archive, entry, engine)
    return problems


def check_member(archive: Archive, entry: Entry, engine: Engine) -> list[Problem]:
    """One PAK member, by its extension: a map, a model, a sprite or a WAD (anything else has no
    engine limit here)."""
    extension = os.path.splitext(entry.name)[1].lower()
    if extension not in _MEMBER_CHECKS and extension != ".wad":
        return []
    if entry.size > MAX_MEMBER:
        return [Problem(f"member {entry.name!r}: {entry.size} bytes, too large to check", severity="warning")]
    if extension == ".wad":
        try:
            with archive.open_archive(entry, format="wad") as inner:
                return check_wad(inner, engine, entry.name)
        except CorruptArchiveError as exc:
            reason = getattr(exc, "reason", str(exc))
            return [Problem(f"member {entry.name!r}: not a WAD the engine can load: {reason}", member=entry.name)]
    if extension == ".mdl" and engine.rules.get("mdl.poses") is None:
        from . import mdl

        with archive.open(entry) as stream:  # the header holds every count this engine limits
            data = stream.read(mdl.HEADER.size)
    else:
        data = archive.read(entry)
    if extension != ".bsp" and not _is_quake_file(data):
        return []  # a Half-Life studio model or sprite, a Quake II one: not these loaders' files
    return _MEMBER_CHECKS[extension](data, engine, f"{archive.filename}/{entry.name}", entry.name)


def _is_quake_file(data: bytes) -> bool:
    """An IDPO version 6 model or an IDSP version 1 sprite (what the Quake loaders read)."""
    from . import mdl, spr

    return data[:8] in (mdl.MAGIC + struct.pack("<i", 6), spr.MAGIC + struct.pack("<i", 1))


def check_archive(archive: Archive, engine: Engine) -> list[Problem]:
    """An opened PAK, WAD or BSP against `engine` (other formats: nothing)."""
    if archive.format_name == "pak":
        return check_pak(archive, engine)
    if archive.format_name == "wad":
        return check_wad(archive, engine)
    if archive.format_name == "bsp":
        return check_bsp(archive.map.data, engine, archive.filename)  # type: ignore[attr-defined]
    return []


def check_loose(path: str, engine: Engine) -> tuple[list[Problem], str] | None:
    """(problems, "model" or "sprite") for a loose MDL or SPR file (by its first bytes), else None."""
    from . import mdl

    with open(path, "rb") as stream:
        head = stream.read(8)
        if not _is_quake_file(head):
            return None
        stream.seek(0, os.SEEK_END)
        size = stream.tell()
        if size > MAX_MEMBER:
            return [Problem(f"{size} bytes, too large to check")], "model"
        stream.seek(0)
        data = stream.read()
    if head[:4] == mdl.MAGIC:
        return check_mdl(data, engine, path), "model"
    return check_spr(data, engine, path), "sprite"
