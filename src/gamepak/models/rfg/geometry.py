"""An RFG mesh's geometry: render blocks as triangle lists, vertex attributes decoded, and
vertex values encoded back into the GPU file's bytes.

Strips (spec section 7): each render block is its own strip. For k = 0 .. count-3, counted from
the block's first index, the triangle is (i[k], i[k+1], i[k+2]), its first two corners swapped
when k is odd; triangles with two equal indices (the degenerates that join strips) are dropped.
A restart index (0xFFFF / 0xFFFFFFFF) cuts the strip and starts the parity again. The triangles
keep the file's winding: (b-a)x(c-a) points along the stored normals, in the file's
left-handed coordinates (`to_gltf_space` mirrors them into glTF's right-handed ones).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .layout import TOPOLOGY_LIST, UV_SCALE

if TYPE_CHECKING:
    import numpy as np

# The reader's RfgMesh and RenderBlock, which it passes here: named as Any, as the reader imports
# this module (the import graph has no circle, type-only imports included).
RfgMesh = Any
RenderBlock = Any


def strip_triangles(indices: np.ndarray, restart: int | None = None) -> np.ndarray:
    """The triangles (T, 3) of one triangle strip, degenerates dropped, winding kept."""
    import numpy as np

    indices = np.asarray(indices, dtype=np.int64)
    if restart is not None and indices.size and (indices == restart).any():
        cuts = np.flatnonzero(indices == restart)
        pieces = np.split(indices, cuts)
        parts = [strip_triangles(piece[1:] if number else piece) for number, piece in enumerate(pieces)]
        return np.concatenate(parts) if parts else np.zeros((0, 3), np.int64)
    if indices.size < 3:
        return np.zeros((0, 3), np.int64)
    triangles = np.stack([indices[:-2], indices[1:-1], indices[2:]], axis=1)
    triangles[1::2, [0, 1]] = triangles[1::2, [1, 0]]
    keep = (
        (triangles[:, 0] != triangles[:, 1])
        & (triangles[:, 1] != triangles[:, 2])
        & (triangles[:, 0] != triangles[:, 2])
    )
    return triangles[keep]


def list_triangles(indices: np.ndarray) -> np.ndarray:
    """The triangles of a triangle list (indices three by three; a short tail is ignored)."""
    import numpy as np

    indices = np.asarray(indices, dtype=np.int64)
    usable = indices.size - indices.size % 3
    return indices[:usable].reshape(-1, 3)


def block_triangles(mesh: RfgMesh, block: RenderBlock) -> np.ndarray:
    """The triangles (absolute vertex numbers) one render block draws, in file winding."""
    drawn = mesh.indices[block.first_index : block.first_index + block.index_count]
    if mesh.config.topology == TOPOLOGY_LIST:
        return list_triangles(drawn)
    return strip_triangles(drawn, 0xFFFF if mesh.config.index_size == 2 else 0xFFFFFFFF)


def lod_triangle_count(mesh: RfgMesh, lod: int = 0) -> int:
    """How many triangles LOD `lod` draws."""
    if not mesh.submeshes:
        return 0
    return sum(
        len(block_triangles(mesh, block))
        for number in mesh.lod_submeshes(lod)
        for block in mesh.submeshes[number].blocks
    )


# ------------------------------------------------------------------------------ attributes


def positions(mesh: RfgMesh) -> np.ndarray:
    """(V, 3) float32 positions, file coordinates."""
    import numpy as np

    return np.ascontiguousarray(mesh.vertices["position"], dtype=np.float32)


def unpack_unit(values: np.ndarray) -> np.ndarray:
    """u8 components to -1..1 (b/255*2-1)."""
    import numpy as np

    return (values.astype(np.float32) / np.float32(255.0)) * np.float32(2.0) - np.float32(1.0)


def pack_unit(values: np.ndarray) -> np.ndarray:
    """-1..1 components to u8 (the nearest byte of `unpack_unit`)."""
    import numpy as np

    return np.clip(np.rint((np.asarray(values, dtype=np.float64) + 1.0) * 127.5), 0, 255).astype(np.uint8)


def normals(mesh: RfgMesh) -> np.ndarray:
    """(V, 3) float32 normals as stored (length 0.99..1.01), file coordinates."""
    return unpack_unit(mesh.vertices["normal"][:, :3])


def tangents(mesh: RfgMesh) -> np.ndarray | None:
    """(V, 4) tangents (xyz as normals, w = +1 for a w byte >= 128, else -1), None without."""
    import numpy as np

    if "tangent" not in (mesh.vertices.dtype.names or ()):
        return None
    raw = mesh.vertices["tangent"]
    sign = np.where(raw[:, 3] >= 128, np.float32(1.0), np.float32(-1.0))
    return np.concatenate([unpack_unit(raw[:, :3]), sign[:, None]], axis=1)


def uv_set(mesh: RfgMesh, number: int) -> np.ndarray:
    """(V, 2) float32 UV set `number` (int16 / 1024)."""
    import numpy as np

    return mesh.vertices[f"uv{number}"].astype(np.float32) / np.float32(UV_SCALE)


def skin(mesh: RfgMesh) -> tuple[np.ndarray, np.ndarray] | None:
    """(joints (V, 4) u8, weights (V, 4) u8 summing to 255) for "Ca" formats, else None."""
    if not mesh.vertex_format.ca:
        return None
    return mesh.vertices["joints"].copy(), mesh.vertices["weights"].copy()


# File coordinates are left-handed (Direct3D), glTF's right-handed; both +Y up. Negating X turns
# one into the other and keeps up, front and the viewer's right; the triangles' winding is then
# swapped so that (b-a)x(c-a) still points along the normals. Its own inverse.
def to_gltf_space(vectors: np.ndarray) -> np.ndarray:
    """Positions or normals, file <-> glTF coordinates (X negated)."""
    import numpy as np

    result = np.array(vectors, dtype=np.float32, copy=True)
    result[:, 0] = -result[:, 0]
    return result


def to_gltf_winding(triangles: np.ndarray) -> np.ndarray:
    """Triangles, file <-> glTF winding ((a, b, c) <-> (a, c, b))."""
    return triangles[:, [0, 2, 1]]
