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
from .rules import (  # noqa: F401 - the shared rules, known to callers under this module
    ANY,
    ENGINE_NAMES,
    HL_MODEL,
    MAX_MEMBER,
    QS_MODEL,
    WQ_MODEL,
    Engine,
    Findings,
    Rule,
)

# The three engines' tables are in `engines` (the default table, `ANY`, in `rules`), the checks
# that read a map, model, sprite or WAD in `file_limits` (each imports its readers, bsp, mdl,
# spr, images, when it runs): a `verify` of a PAK holding none of those files loads neither.
# Both stay reachable from here under their old names.
_FROM_ENGINES = frozenset({"QUAKE", "QUAKESPASM", "GOLDSRC", "KNOWN", "ENGINES"})
_FROM_FILE_LIMITS = frozenset({"check_mdl", "check_spr", "check_bsp", "check_wad", "bsp_variant"})

TYPE_CHECKING = False
if TYPE_CHECKING:  # the names `__getattr__` gives, declared with their types for type checkers
    from .engines import ENGINES, GOLDSRC, KNOWN, QUAKE, QUAKESPASM  # noqa: F401
    from .file_limits import bsp_variant, check_bsp, check_mdl, check_spr, check_wad  # noqa: F401


def __getattr__(name: str) -> object:
    """The tables (`QUAKE`, `ANY`, ...) and the file checks (`check_mdl`, ...), from their modules."""
    if name in _FROM_ENGINES:
        from . import engines

        return getattr(engines, name)
    if name in _FROM_FILE_LIMITS:
        from . import file_limits

        return getattr(file_limits, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def engine_named(name: str | None) -> Engine:
    """The table called `name` (None: the most permissive known engine)."""
    if name is None or name == "any":
        return ANY
    from .engines import _known

    return _known()[ENGINE_NAMES.index(name)]


# Members checked by their extension, each by the `file_limits` function named.
_MEMBER_CHECKS = {".bsp": "check_bsp", ".mdl": "check_mdl", ".spr": "check_spr", ".wad": "check_wad"}


def check_pak(archive: Archive, engine: Engine) -> list[Problem]:
    """A PAK's member count and names, then each map, model, sprite and WAD in it."""
    found = Findings(engine, None)
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
    if extension not in _MEMBER_CHECKS:
        return []
    if entry.size > MAX_MEMBER:
        return [Problem(f"member {entry.name!r}: {entry.size} bytes, too large to check", severity="warning")]
    from . import file_limits

    if extension == ".wad":
        try:
            with archive.open_archive(entry, format="wad") as inner:
                return file_limits.check_wad(inner, engine, entry.name)
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
    check = getattr(file_limits, _MEMBER_CHECKS[extension])
    return check(data, engine, f"{archive.filename}/{entry.name}", entry.name)


def _is_quake_file(data: bytes) -> bool:
    """An IDPO version 6 model or an IDSP version 1 sprite (what the Quake loaders read)."""
    from . import mdl, spr

    return data[:8] in (mdl.MAGIC + struct.pack("<i", 6), spr.MAGIC + struct.pack("<i", 1))


def check_archive(archive: Archive, engine: Engine) -> list[Problem]:
    """An opened PAK, WAD or BSP against `engine` (other formats: nothing)."""
    if archive.format_name == "pak":
        return check_pak(archive, engine)
    if archive.format_name == "wad":
        from .file_limits import check_wad

        return check_wad(archive, engine)
    if archive.format_name == "bsp":
        from .file_limits import check_bsp

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
    from .file_limits import check_mdl, check_spr

    if head[:4] == mdl.MAGIC:
        return check_mdl(data, engine, path), "model"
    return check_spr(data, engine, path), "sprite"
