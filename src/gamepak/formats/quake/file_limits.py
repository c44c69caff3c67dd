"""The checks of `limits` that read a map, model, sprite or WAD (see its docstring for the
rules). Apart from `limits` because a pack holding none of these files needs none of them: a
`verify` of such a pack imports only the dispatch and the tables (issue 48, start-up).
"""

from __future__ import annotations

import os
import struct

from ...core.archive import Archive, Problem, encode_name
from .rules import Findings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .rules import Engine


def check_mdl(data: bytes, engine: Engine, label: str, member: str | None = None) -> list[Problem]:
    """An alias model's header counts, and its poses when `engine` limits them, against `engine`.
    Without a pose limit only the 84-byte header is needed (`data` may be just that)."""
    from . import mdl
    from .images import ImageError

    found = Findings(engine, member)
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

    found = Findings(engine, member)
    try:
        spr.read(data, label)
    except ImageError as exc:
        found.add(f"not a sprite the engine can load: {exc.reason}", "error", exc.offset)
    return found.problems


def _check_miptex(found: Findings, head: bytes, where: str, offset: int) -> None:
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

    found = Findings(engine, member)
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

    found = Findings(engine, member)
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
