"""The rules and tables of `limits` that its checks share (see its docstring): `Rule`, `Engine`,
the default table `ANY` (written out: `engines._most_permissive()` derives it from the three
engines' tables, and a test holds the two equal) and `Findings`, the problems of one file.
Below `limits`, `engines` and `file_limits`, which all build on it.
"""

from __future__ import annotations

from ...core.archive import Problem


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


# The most permissive known engine, `_most_permissive()` written out (tests/test_quake_limits.py
# holds the two equal): every `verify` of a PAK, WAD or BSP checks against it, and deriving it
# meant building the three engines' tables first, a tenth of the command's start-up.
ANY = Engine(
    "any",
    "the most permissive known engine",
    {
        "bsp.models": Rule(1024, "error", f"MAX_KNOWN_MODELS in rehlds/public/rehlds/model.h; Sys_Error in {HL_MODEL}"),
        "bsp29.leafs": Rule(32767, "error", f"Host_Error in {QS_MODEL} Mod_ProcessLeafs_S"),
        "mdl.vertices": Rule(2000, "error", f"MAXALIASVERTS in WinQuake/r_local.h; Sys_Error in {WQ_MODEL}"),
        "pak.name_bytes": Rule(55, "error", "dpackfile_t name[56] in WinQuake/common.c"),
    },
    frozenset({"BSP29", "BSP30", "BSP2", "2PSB"}),
    gfx_wad2=Rule(0, "error", "Sys_Error 'doesn't have WAD2 id' in Quake/wad.c W_LoadWadFile"),
    gfx_lumps={"conchars": Rule(0, "error", "Sys_Error in Quake/gl_draw.c Draw_LoadPics")},
)
ENGINE_NAMES = ("quake", "quakespasm", "goldsrc")  # the order of KNOWN


# A member is read whole to check it (maps and models are read by the engine whole too); one
# larger than this is reported, not read.
MAX_MEMBER = 1 << 30


class Findings:
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
        return "every known engine's" if self.engine.name == "any" else f"{self.engine.name}'s"
