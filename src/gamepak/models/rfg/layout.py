"""Byte layout of Red Faction Guerrilla meshes (spec: ../shared/specs/rfg-meshes.md).

CPU file (`.csmesh_pc` static, `.ccmesh_pc` character), little-endian, offsets absolute:

| field (2009 / remaster offset)                | static            | character              |
|-----------------------------------------------|-------------------|------------------------|
| 0x00 u32 signature                            | 0xC0FFEE11        | 0xFAC351A9             |
| 0x04 u32 version                              | 4 / 5             | 3 / 4                  |
| field k at 0x08 + k*W (W = 4 in 2009, 8 in    | 11 fields         | 12 fields              |
| the remaster: value in the low 4 bytes)       |                   |                        |
|   0 mesh config offset, 1 material map offset, 2 material offset list offset,               |
|   3 material count, 4 texture names offset, 5 LOD count, 6 LOD submesh-id list offset,      |
|   7 tag list offset  / bone count (i32)                                                     |
|   8 tag count        / bone list offset                                                     |
|   9 runtime pointer  / sphere count (i16) + cylinder count (i16)                            |
|  10 cm_index         / spheres offset                                                       |
|  11 -                / cylinders offset                                                     |

Mesh config (CONFIG, 48 bytes) at its offset, then the submeshes (SUBMESH, 44 bytes each) at
config + submesh offset, then the render blocks (BLOCK, 20 bytes each, as many as the
submeshes' counts add up to), then a u32 hash equal to the config's verification hash.

Material (MATERIAL, 32 bytes) then TEXTURE_DESC (12 bytes) x textures, u32 constant name CRCs
(padded to 16 from the material's start), float4 x constant slots (padded to 16); `size` covers
it all. Material offset list entries are MATERIAL_ENTRY_SIZE bytes (u32 offset, 4 bytes).

GPU file: u32 hash, 12 zero bytes, indices at 16 (u16 or u32), zeros to a multiple of 16, the
vertices (stride from the config), u32 hash.

Vertex components in this order, each present or not: position float32x3, normal u8x4,
tangent u8x4 ("Nmap"), blend weights u8x4 and blend indices u8x4 ("Ca"), UV sets int16x2 each
(value / 1024).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

STATIC_SIGNATURE = 0xC0FFEE11
CHARACTER_SIGNATURE = 0xFAC351A9

# kind -> (signature, 2009 version, remaster version, header field count)
KINDS = {
    "static": (STATIC_SIGNATURE, 4, 5, 11),
    "character": (CHARACTER_SIGNATURE, 3, 4, 12),
}
# CPU extension -> (kind, GPU extension)
EXTENSIONS = {
    ".csmesh_pc": ("static", ".gsmesh_pc"),
    ".ccmesh_pc": ("character", ".gcmesh_pc"),
}
GPU_TO_CPU = {gpu: cpu for cpu, (_, gpu) in EXTENSIONS.items()}

# Header field numbers (see the table above).
CONFIG_OFFSET, MATERIAL_MAP, MATERIAL_LIST, MATERIAL_COUNT, TEXTURE_NAMES, LOD_COUNT, LOD_LIST = range(7)
FIELD_7, FIELD_8, FIELD_9, FIELD_10, FIELD_11 = 7, 8, 9, 10, 11

# version, hash, size, GPU size, submesh count, submesh offset, vertex count, stride, format,
# UV count, second stride, vertex buffer offset, index count, index buffer offset, index size,
# topology, render block count
CONFIG = struct.Struct("<IIIIIIIBBBBIIIBBH")
# render block count, offset xyz, box min xyz, box max xyz, runtime pointer
SUBMESH = struct.Struct("<I3f3f3fI")
# material index, padding, first index, index count, lowest vertex, highest vertex
BLOCK = struct.Struct("<HHIIII")
# size, shader CRC, name CRC, flags, texture count, constant count, constant slots, 3 pointers
MATERIAL = struct.Struct("<IIIIHBB12s")
# name offset, slot CRC, slot index
TEXTURE_DESC = struct.Struct("<III")
MATERIAL_ENTRY_SIZE = 8  # UNCERTAIN for 2009 files (one material per sample): sources read 8
# body-part id, parent, position xyz, radius
SPHERE = struct.Struct("<Ii3ff")
# body-part id, parent, axis xyz, position xyz, radius, height
CYLINDER = struct.Struct("<Ii3f3fff")
TAG_SIZE = 52
GPU_HEADER = 16
TOPOLOGY_STRIP, TOPOLOGY_LIST = 0, 1
UV_SCALE = 1024.0


def volition_crc(text: str) -> int:
    """Volition's name CRC: the lower-cased ASCII name through the reflected CRC-32 from an
    initial value of 0, without the final inversion (zlib's crc32 starts and ends inverted)."""
    return ~zlib.crc32(text.lower().encode("ascii", "replace"), 0xFFFFFFFF) & 0xFFFFFFFF


# The names whose CRCs the files hold: texture slots, material constants, shaders. The slot CRC,
# not the texture's file name, says what a texture is for.
SLOT_NAMES = ("Diffuse_Map", "Normal_Map", "Specular_Map", "Decal_Map_1", "Decal_Map_2", "Decal_Map_3")
CONSTANT_NAMES = ("Specular_Power", "Specular_Color", "Diffuse_Color", "Self_Illumination", "Specular_Alpha")
SHADER_NAMES = ("rfg-standard",)
KNOWN_NAMES = {volition_crc(name): name for name in (*SLOT_NAMES, *CONSTANT_NAMES, *SHADER_NAMES)}


def crc_name(crc: int) -> str:
    """The name a CRC stands for, or its hex form."""
    return KNOWN_NAMES.get(crc, f"0x{crc:08X}")


@dataclass(frozen=True)
class VertexFormat:
    """One vertex format: its code, name, UV set count (None: from the config), and whether it
    holds tangents (Nmap) and blend weights/indices (Ca)."""

    code: int
    name: str
    uv_sets: int | None
    nmap: bool
    ca: bool

    def stride(self, uv_sets: int) -> int:
        """The size of one vertex with `uv_sets` UV sets."""
        return 12 + 4 + 4 * self.nmap + 8 * self.ca + 4 * uv_sets


def _formats() -> dict[int, VertexFormat]:
    table = {
        0: VertexFormat(0, "Pixlit", None, False, False),
        1: VertexFormat(1, "PixlitCa", None, False, True),
        2: VertexFormat(2, "PixlitNmap", None, True, False),
        3: VertexFormat(3, "PixlitNmapCa", None, True, True),
        30: VertexFormat(30, "Pixlit0Uv", 0, False, False),
    }
    # 31..46: Pixlit<k>Uv, <k>UvCa, <k>UvNmap, <k>UvNmapCa for k = 1..4.
    for uv_sets in range(1, 5):
        for step, (nmap, ca) in enumerate(((False, False), (False, True), (True, False), (True, True))):
            code = 31 + 4 * (uv_sets - 1) + step
            name = f"Pixlit{uv_sets}Uv" + ("Nmap" if nmap else "") + ("Ca" if ca else "")
            table[code] = VertexFormat(code, name, uv_sets, nmap, ca)
    return table


VERTEX_FORMATS = _formats()


def align(value: int, alignment: int = 16) -> int:
    """`value` rounded up to a multiple of `alignment`."""
    return -(-value // alignment) * alignment
