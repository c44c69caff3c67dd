"""Glue between RFG meshes and the rest of gamepak (the content registry's `rfg-mesh` row):
sniffing, the catalog's summary row, the viewer's .glb. Kept in one module so the registry
can move it as one piece."""

from __future__ import annotations

from typing import Any

from .layout import CHARACTER_SIGNATURE, STATIC_SIGNATURE


def sniff(head: bytes) -> bool:
    """Whether the first bytes are a mesh CPU file's signature."""
    return len(head) >= 4 and int.from_bytes(head[:4], "little") in (STATIC_SIGNATURE, CHARACTER_SIGNATURE)


def catalog_row(cpu: bytes, gpu: bytes, label: str) -> dict[str, Any]:
    """The catalog's `models` figures of one mesh pair: kind, vertices, triangles, LODs,
    materials, bones, texture names."""
    from .reader import read_mesh

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
    }


def viewer_glb(cpu: bytes, gpu: bytes, name: str, textures: dict[str, bytes] | None = None) -> bytes:
    """The .glb the viewer's 3D view shows (LOD 0, textures given as PNG bytes by name)."""
    from .export import export_gltf
    from .reader import read_mesh

    return export_gltf(read_mesh(cpu, gpu, label=name, gpu_label=name), name, textures=textures)
