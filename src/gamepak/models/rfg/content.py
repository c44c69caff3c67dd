"""The content registry's `rfg-mesh` row: what the viewer and the catalog ask of an RFG mesh,
in the model family's call signatures (`gamepak.content.FAMILIES["model"]`). A mesh is two files
(the CPU file, `.csmesh_pc`/`.ccmesh_pc`, and its GPU partner); each verb gets the CPU file's
bytes and `partner`, a function reading the GPU file (found beside it, or in the same pack, by
the caller). The `model` command's verbs, which find the pair themselves (either file names it,
a member by its base name in nested packs), are in `gamepak.ops.meshes`."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .layout import CHARACTER_SIGNATURE, STATIC_SIGNATURE


def sniff(head: bytes) -> bool:
    """Whether the first bytes are a mesh CPU file's signature."""
    return len(head) >= 4 and int.from_bytes(head[:4], "little") in (STATIC_SIGNATURE, CHARACTER_SIGNATURE)


def partner(name: str) -> str:
    """The other file of the pair `name` is one file of (either way, in `name`'s case)."""
    from . import pair_names

    cpu, gpu = pair_names(name)
    return gpu if cpu == name else cpu


def pairs_among(names: list[str]) -> list[tuple[str, str]]:
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


def _read(data: bytes, partner: Callable[[], bytes], label: str) -> Any:
    from .reader import read_mesh

    return read_mesh(data, partner(), label=label, gpu_label=label)


def stats(data: bytes, label: str, *, partner: Callable[[], bytes]) -> dict[str, Any] | None:
    """The catalog's `models` figures of one mesh pair: its kind as the format, vertices, LOD 0
    triangles, the diffuse texture, and the mesh's own columns (LODs, materials, bones, texture
    names); None when the CPU file is no PC mesh (a stand-in)."""
    if not sniff(data[:4]):
        return None
    mesh = _read(data, partner, label)
    summary = mesh.summary()
    return {
        "format": summary["kind"],
        "vertices": summary["vertices"],
        "triangles": summary["lod0_triangles"],
        "frames": 1,
        "texture": next((m.texture_for("Diffuse_Map") for m in mesh.materials if m.texture_for("Diffuse_Map")), None),
        "lods": summary["lods"],
        "materials": len(summary["materials"]),
        "bones": summary["bones"],
        "textures": "; ".join(summary["texture_names"]),
    }


def counts(data: bytes, label: str, *, partner: Callable[[], bytes]) -> dict[str, Any]:
    """What the viewer's model page says: vertices, LOD 0 faces and the box's size."""
    summary = _read(data, partner, label).summary()
    shown: dict[str, Any] = {"vertices": summary["vertices"], "faces": summary["lod0_triangles"]}
    bounds = summary["bounds"]
    if bounds is not None:
        shown["size"] = " \u00d7 ".join(f"{high - low:.3g}" for low, high in zip(bounds["min"], bounds["max"]))
    return shown


def glb(
    data: bytes,
    label: str,
    *,
    partner: Callable[[], bytes],
    pack: str | None = None,
    beside: str | None = None,
) -> bytes:
    """The .glb the viewer draws: LOD 0, textured with the pegs found in the mesh's `pack` and
    the packs beside it (or, for a loose mesh, the pegs and packs `beside` it); untextured when
    it lies in neither."""
    from .export import export_gltf
    from .textures import find_textures

    mesh = _read(data, partner, label)
    found = find_textures(mesh.texture_names(), pack=pack, beside=beside) if beside else None
    name = os.path.splitext(os.path.basename(label))[0]
    return export_gltf(mesh, name, textures=found.found if found else None)


def text(details: dict[str, Any]) -> str:
    """`model info`'s text of a mesh: its materials and their texture slots, warnings, bounds."""
    lines = []
    for key, value in details.items():
        if key == "materials":
            lines.append(f"materials: {len(value)}")
            for number, material in enumerate(value):
                slots = ", ".join(f"{slot}={name}" for slot, name in material["textures"].items())
                lines.append(f"  {number}: {material['shader']} (flags {material['flags']}): {slots or 'no textures'}")
        elif key == "warnings":
            lines.append(f"warnings: {len(value) or 'none'}")
            lines.extend(f"  - {warning}" for warning in value)
        elif key == "bounds" and value:
            lines.append("bounds: min " + _vector(value["min"]) + ", max " + _vector(value["max"]) + " (file axes)")
        elif isinstance(value, list):
            lines.append(f"{key}: {', '.join(map(str, value)) or '-'}")
        else:
            lines.append(f"{key}: {value}")
    return "\n".join(lines) + "\n"


def _vector(values: list[float]) -> str:
    return "(" + ", ".join(f"{value:.6g}" for value in values) + ")"
