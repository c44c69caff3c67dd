"""Glue between RFG meshes and the rest of gamepak (the content registry's `rfg-mesh` row):
sniffing, the catalog's summary row, the viewer's .glb. Kept in one module so the registry
can move it as one piece."""

from __future__ import annotations

from typing import Any

from .layout import CHARACTER_SIGNATURE, STATIC_SIGNATURE


def sniff(head: bytes) -> bool:
    """Whether the first bytes are a mesh CPU file's signature."""
    return len(head) >= 4 and int.from_bytes(head[:4], "little") in (STATIC_SIGNATURE, CHARACTER_SIGNATURE)


def catalog_row(cpu: bytes, gpu: bytes, label: str) -> dict[str, Any] | None:
    """The catalog's `models` figures of one mesh pair: kind, vertices, triangles, LODs,
    materials, bones, texture names; None when the CPU file is no PC mesh (a stand-in)."""
    from .reader import read_mesh

    if not sniff(cpu[:4]):
        return None

    mesh = read_mesh(cpu, gpu, label=label, gpu_label=label)
    summary = mesh.summary()
    return {
        "kind": summary["kind"],
        "vertices": summary["vertices"],
        "triangles": summary["lod0_triangles"],
        "lods": summary["lods"],
        "materials": len(summary["materials"]),
        "bones": summary["bones"],
        "textures": summary["texture_names"],
        "diffuse": next((m.texture_for("Diffuse_Map") for m in mesh.materials if m.texture_for("Diffuse_Map")), None),
    }


def viewer_glb(cpu: bytes, gpu: bytes, name: str, textures: dict[str, bytes] | None = None) -> bytes:
    """The .glb the viewer's 3D view shows (LOD 0, textures given as PNG bytes by name)."""
    from .export import export_gltf
    from .reader import read_mesh

    return export_gltf(read_mesh(cpu, gpu, label=name, gpu_label=name), name, textures=textures)


def catalog_pairs(names: list[str]) -> list[tuple[str, str]]:
    """(CPU member, GPU member) of every mesh pair among a pack's member names."""
    from . import EXTENSIONS, pair_names

    lowered = {name.lower(): name for name in names}
    pairs = []
    for name in names:
        if name.lower().endswith(tuple(EXTENSIONS)):
            gpu = lowered.get(pair_names(name)[1].lower())
            if gpu is not None:
                pairs.append((name, gpu))
    return pairs


# -- the viewer ------------------------------------------------------------------------------------
# A viewer "place" (gamepak.web.site.Place) is used through: name, path, size, open(),
# sibling(name), disk_path, node and _pack_key (the pack file it lies in).


def is_mesh_file(name: str) -> bool:
    """Whether a file name is either half of an RFG mesh pair."""
    from . import is_mesh_name

    return is_mesh_name(name)


def place_pair(place: Any, limit: int) -> tuple[bytes, bytes]:
    """(CPU bytes, GPU bytes) of the mesh pair a viewer place is half of; the other half is
    found beside it (in the same folder or pack)."""
    from ...errors import GamepakError
    from . import pair_names

    halves = []
    for wanted in pair_names(place.name):
        found = place if wanted.lower() == place.name.lower() else place.sibling(wanted)
        if found is None:
            raise GamepakError(f"{place.path}: its partner {wanted} is not beside it")
        if found.size > limit:
            raise GamepakError(f"{found.path}: {found.size} bytes, more than the {limit >> 20} MiB a preview reads")
        with found.open() as stream:
            halves.append(stream.read(limit + 1)[:limit])
    return halves[0], halves[1]


def viewer_counts(place: Any, limit: int) -> dict[str, Any]:
    """What the viewer's model page says: vertices, LOD 0 faces and the box's size."""
    from .reader import read_mesh

    mesh = read_mesh(*place_pair(place, limit), label=place.path, gpu_label=place.path)
    summary = mesh.summary()
    shown: dict[str, Any] = {"vertices": summary["vertices"], "faces": summary["lod0_triangles"]}
    bounds = summary["bounds"]
    if bounds is not None:
        shown["size"] = " \u00d7 ".join(f"{high - low:.3g}" for low, high in zip(bounds["min"], bounds["max"]))
    return shown


def place_glb(place: Any, limit: int) -> bytes:
    """The .glb the viewer draws: LOD 0, textured with the pegs found in the mesh's pack and
    the packs beside it (or, for loose files, the pegs and packs in its folder)."""
    import os

    from .reader import read_mesh
    from .textures import find_textures

    cpu, gpu = place_pair(place, limit)
    mesh = read_mesh(cpu, gpu, label=place.path, gpu_label=place.path)
    pack_key = getattr(place, "_pack_key", None)
    pack = pack_key[0] if place.node is not None and pack_key else None
    beside = place.disk_path or pack or "."
    found = find_textures(mesh.texture_names(), pack=pack, beside=beside) if (pack or place.disk_path) else None
    name = os.path.splitext(place.name)[0]
    return viewer_glb(cpu, gpu, name, found.found if found is not None else None)
