"""What an RFG mesh pair reads into (`reader.read_mesh`): the mesh config, submeshes and their
render blocks, materials and their texture slots, spheres and cylinders, and `RfgMesh` holding
them with the GPU file's buffers (numpy arrays, `vertex_dtype`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..mesh import ModelError
from .layout import TOPOLOGY_STRIP, VertexFormat, crc_name

if TYPE_CHECKING:
    import numpy as np


@dataclass
class Config:
    """The mesh config (48 bytes at the config offset)."""

    offset: int
    version: int
    hash: int
    size: int
    gpu_size: int
    submesh_count: int
    submesh_offset: int
    vertex_count: int
    stride: int
    vertex_format: int
    uv_sets: int
    second_stride: int
    vertex_offset: int
    index_count: int
    index_offset: int
    index_size: int
    topology: int
    block_count: int


@dataclass
class RenderBlock:
    """One draw call: a strip (or list) of `index_count` indices from `first_index`."""

    offset: int
    material: int
    padding: int
    first_index: int
    index_count: int
    lowest: int
    highest: int


@dataclass
class Submesh:
    """A submesh: its render blocks, offset and box (file coordinates)."""

    offset: int
    block_count: int
    position: tuple[float, float, float]
    box_min: tuple[float, float, float]
    box_max: tuple[float, float, float]
    runtime: int
    blocks: list[RenderBlock] = field(default_factory=list)


@dataclass
class TextureSlot:
    """One texture of a material: its file name, the slot CRC (what it is for) and index."""

    name: str
    slot_crc: int
    index: int
    name_offset: int

    @property
    def slot(self) -> str:
        """The slot's name (`Diffuse_Map`, ...) or its CRC in hex."""
        return crc_name(self.slot_crc)


@dataclass
class Material:
    """A material record: shader, name CRC, flags, textures and constants."""

    offset: int
    size: int
    shader_crc: int
    name_crc: int
    flags: int
    textures: list[TextureSlot]
    constants: dict[str, tuple[float, float, float, float]]

    @property
    def shader(self) -> str:
        return crc_name(self.shader_crc)

    def texture_for(self, slot: str) -> str | None:
        """The file name in slot `slot` (e.g. `Diffuse_Map`), None when absent."""
        for texture in self.textures:
            if texture.slot == slot:
                return texture.name
        return None


@dataclass
class Sphere:
    body_part: int
    parent: int
    position: tuple[float, float, float]
    radius: float


@dataclass
class Cylinder:
    body_part: int
    parent: int
    axis: tuple[float, float, float]
    position: tuple[float, float, float]
    radius: float
    height: float


@dataclass
class RfgMesh:
    """A mesh pair as read: everything in the CPU file, and the GPU file's buffers."""

    kind: str
    version: int
    remaster: bool
    header: list[int]
    config: Config
    submeshes: list[Submesh]
    materials: list[Material]
    lod_ids: list[int]
    bones: list[int]
    spheres: list[Sphere]
    cylinders: list[Cylinder]
    tag_count: int
    vertex_format: VertexFormat
    uv_sets: int
    indices: np.ndarray  # (index_count,) int64
    vertices: np.ndarray  # structured (vertex_count,), see `vertex_dtype`
    gpu_hash: int
    label: str = ""
    gpu_label: str = ""
    warnings: list[str] = field(default_factory=list)

    @property
    def blocks(self) -> list[RenderBlock]:
        return [block for submesh in self.submeshes for block in submesh.blocks]

    @property
    def lod_count(self) -> int:
        return len(self.lod_ids)

    def lod_submeshes(self, lod: int = 0) -> list[int]:
        """The submesh numbers of LOD `lod`: every submesh when the mesh has one LOD, else
        submesh `lod_ids[lod]` (one level per submesh, finest first)."""
        if not 0 <= lod < max(self.lod_count, 1):
            raise ModelError(f"{self.label}: no LOD {lod} (the mesh has {self.lod_count})")
        if self.lod_count <= 1:
            return list(range(len(self.submeshes)))
        return [self.lod_ids[lod]]

    def texture_names(self) -> list[str]:
        """Every distinct texture name, in the order the materials name them."""
        seen: dict[str, None] = {}
        for material in self.materials:
            for texture in material.textures:
                seen.setdefault(texture.name, None)
        return list(seen)

    def summary(self) -> dict[str, Any]:
        """What `model info` prints: kind, version, counts, LODs, materials, textures, bones."""
        from .geometry import block_triangles, lod_triangle_count

        config = self.config
        return {
            "kind": f"rfg-{self.kind}-mesh",
            "version": self.version,
            "edition": "remaster" if self.remaster else "2009",
            "vertex_format": f"{self.vertex_format.code} ({self.vertex_format.name})",
            "stride": config.stride,
            "uv_sets": self.uv_sets,
            "vertices": config.vertex_count,
            "indices": config.index_count,
            "index_size": config.index_size,
            "topology": "strip" if config.topology == TOPOLOGY_STRIP else "list",
            "triangles": sum(len(block_triangles(self, block)) for block in self.blocks),
            "lod0_triangles": lod_triangle_count(self, 0),
            "submeshes": len(self.submeshes),
            "render_blocks": len(self.blocks),
            "lods": self.lod_count,
            "lod_submeshes": self.lod_ids,
            "materials": [
                {
                    "shader": material.shader,
                    "name_crc": f"0x{material.name_crc:08X}",
                    "flags": material.flags,
                    "textures": {texture.slot: texture.name for texture in material.textures},
                }
                for material in self.materials
            ],
            "texture_names": self.texture_names(),
            "bones": len(self.bones),
            "spheres": len(self.spheres),
            "cylinders": len(self.cylinders),
            "tags": self.tag_count,
            "bounds": self.bounds(),
            "hash": f"0x{config.hash:08X}",
            "warnings": list(self.warnings),
        }

    def bounds(self) -> dict[str, list[float]] | None:
        """The box of the submeshes (file coordinates), as stored."""
        if not self.submeshes:
            return None
        import math

        boxes = [(submesh.box_min, submesh.box_max) for submesh in self.submeshes]
        if not all(math.isfinite(value) for box in boxes for corner in box for value in corner):
            return None  # a stranger's NaN: not a box to show (nor JSON)
        low = [min(box[0][axis] for box in boxes) for axis in range(3)]
        high = [max(box[1][axis] for box in boxes) for axis in range(3)]
        return {"min": low, "max": high}


def vertex_dtype(vertex_format: VertexFormat, uv_sets: int) -> np.dtype:
    """The numpy record of one vertex of `vertex_format` with `uv_sets` UV sets."""
    import numpy as np

    fields: list[tuple[str, str, tuple[int, ...]]] = [("position", "<f4", (3,)), ("normal", "u1", (4,))]
    if vertex_format.nmap:
        fields.append(("tangent", "u1", (4,)))
    if vertex_format.ca:
        fields += [("weights", "u1", (4,)), ("joints", "u1", (4,))]
    fields += [(f"uv{number}", "<i2", (2,)) for number in range(uv_sets)]
    return np.dtype(fields)
