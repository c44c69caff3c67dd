"""Red Faction Guerrilla meshes: static (`.csmesh_pc` + `.gsmesh_pc`) and character
(`.ccmesh_pc` + `.gcmesh_pc`), the 2009 versions (4, 3) and the remaster's (5, 4).

    from gamepak.models.rfg import read_mesh, export_gltf, find_textures, write_back
    mesh = read_mesh(cpu_bytes, gpu_bytes, label="pack.str2_pc/x.csmesh_pc")
    mesh.summary()                                    # kind, version, counts, LODs, materials
    found = find_textures(mesh.texture_names(), pack="items.vpp_pc")
    glb = export_gltf(mesh, "x", textures=found.found)   # .glb bytes (see `export`)
    back = write_back(mesh, "x", edited_glb, gpu_bytes, cpu_bytes)   # .gpu/.cpu: the files after

The byte layout is in `layout`, the reader in `reader` (what it reads into: `records`), strips
and vertex codecs in `geometry`, glTF/OBJ export in `export`, writing edited vertices back in
`writeback`. Spec: ../shared/specs/rfg-meshes.md. numpy and pygltflib are imported inside the functions.
"""

from __future__ import annotations

from .export import export_gltf, neutral_mesh
from .layout import EXTENSIONS, GPU_TO_CPU, volition_crc
from .reader import MeshFormatError, RfgMesh, kind_of, read_mesh
from .rig import Rig, read_rig
from .textures import find_textures
from .writeback import write_back

__all__ = [
    "EXTENSIONS",
    "GPU_TO_CPU",
    "MeshFormatError",
    "RfgMesh",
    "Rig",
    "export_gltf",
    "find_textures",
    "is_mesh_name",
    "kind_of",
    "neutral_mesh",
    "pair_names",
    "read_mesh",
    "read_rig",
    "volition_crc",
    "write_back",
]


def is_mesh_name(name: str) -> bool:
    """Whether a file name is either half of a mesh pair."""
    lowered = name.lower()
    return lowered.endswith(tuple(EXTENSIONS)) or lowered.endswith(tuple(GPU_TO_CPU))


def pair_names(name: str) -> tuple[str, str]:
    """(CPU name, GPU name) of the pair `name` (either half) belongs to, in its case."""
    lowered = name.lower()
    for cpu, (_, gpu) in EXTENSIONS.items():
        if lowered.endswith(cpu):
            return name, name[: -len(cpu)] + gpu
        if lowered.endswith(gpu):
            return name[: -len(gpu)] + cpu, name
    raise ValueError(f"{name!r} is not an RFG mesh file name")
