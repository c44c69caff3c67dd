"""Renderer vertices of many meshes at once: what `gltf.vertex_arrays` gives one mesh, for a
track's thousands of small meshes in one pass of numpy instead of some forty small calls per mesh.

The result keeps every mesh's vertices in one array, mesh after mesh, so a writer can store them
as one block and address each mesh by offset (`PackedVertices`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .mesh import normalised, triangle_normals, z_up_to_y_up

if TYPE_CHECKING:
    import numpy as np

    from .mesh import Mesh


@dataclass
class PackedVertices:
    """Every mesh's vertices laid end to end. Mesh m's vertices are rows
    `vertex_starts[m]:vertex_starts[m] + vertex_counts[m]` of `positions` (and of `normals` /
    `texcoords`, whose rows mean something only where `has_normals[m]` / `has_texcoords[m]`);
    its corners are `indices[corner_starts[m]:corner_starts[m] + corner_counts[m]]`, numbered
    within the mesh."""

    positions: np.ndarray  # (V, 3) float32
    normals: np.ndarray | None  # (V, 3) float32, unit length; None when no mesh has normals
    texcoords: np.ndarray  # (V, 2) float32
    indices: np.ndarray  # (C,) int64, per mesh from 0
    vertex_starts: np.ndarray
    vertex_counts: np.ndarray
    corner_starts: np.ndarray
    corner_counts: np.ndarray
    has_normals: np.ndarray  # (M,) bool
    has_texcoords: np.ndarray  # (M,) bool

    def mesh(self, number: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
        """`gltf.vertex_arrays` of mesh `number`: (indices, positions, normals, texcoords)."""
        low = int(self.vertex_starts[number])
        high = low + int(self.vertex_counts[number])
        first = int(self.corner_starts[number])
        local = self.indices[first : first + int(self.corner_counts[number])]
        return (
            local.astype("<u2" if high - low < 65535 else "<u4"),
            self.positions[low:high],
            self.normals[low:high] if self.normals is not None and self.has_normals[number] and high > low else None,
            self.texcoords[low:high] if self.has_texcoords[number] else None,
        )


def pack_vertices(meshes: list[Mesh], *, z_up: bool = True) -> PackedVertices:
    """Frame 0 of every mesh as glTF vertices (the values `gltf.vertex_arrays` gives each),
    packed."""
    import numpy as np

    from .runs import run_starts

    counts = np.array(
        [(len(m.positions), len(m.normals), len(m.texcoords), len(m.corners)) for m in meshes], np.int64
    ).reshape(-1, 4)
    totals = np.maximum(counts.sum(axis=0), 1)
    if int(totals[0]) * int(totals[1]) * int(totals[2]) >= 1 << 62:
        # The combined index key would not fit 63 bits: one mesh at a time.
        return _pack_each(meshes, z_up)
    starts = np.stack([run_starts(counts[:, column]) for column in range(4)], axis=1).reshape(-1, 4)
    positions = np.concatenate([m.positions for m in meshes] + [np.zeros((0, 3), np.float32)]).astype(
        np.float32, copy=False
    )
    normals = np.concatenate([m.normals for m in meshes] + [np.zeros((1, 3), np.float32)])
    texcoords = np.concatenate([m.texcoords for m in meshes] + [np.zeros((1, 2), np.float32)])
    corners = np.concatenate([m.corners for m in meshes] + [np.zeros((0, 3, 3), np.int64)]).reshape(-1, 3)
    corner_counts = counts[:, 3] * 3
    has_normals, has_texcoords = counts[:, 1] > 0, counts[:, 2] > 0
    # Each corner's indices into the concatenated arrays (0 where its mesh lacks the attribute).
    p = corners[:, 0] + np.repeat(starts[:, 0], corner_counts)
    n = corners[:, 1] + np.repeat(starts[:, 1], corner_counts)
    t = corners[:, 2] + np.repeat(starts[:, 2], corner_counts)
    if not has_normals.all():
        n = np.where(np.repeat(has_normals, corner_counts), n, 0)
    if not has_texcoords.all():
        t = np.where(np.repeat(has_texcoords, corner_counts), t, 0)
    span_n, span_t = int(totals[1]), int(totals[2])
    unique_keys, inverse = np.unique((p * span_n + n) * span_t + t, return_inverse=True)
    inverse = inverse.reshape(-1)
    unique_p, unique_n, unique_t = (
        unique_keys // (span_n * span_t),
        unique_keys // span_t % span_n,
        unique_keys % span_t,
    )
    # Position indices are disjoint per mesh, so the sorted vertices come mesh by mesh.
    vertex_starts = np.searchsorted(unique_p, starts[:, 0])
    vertex_counts = np.append(vertex_starts[1:], len(unique_keys)) - vertex_starts
    all_positions = positions[unique_p]
    all_normals = None
    if has_normals.any():
        all_normals = _unit_normals(normals[unique_n], inverse, positions[p])
        if z_up:
            all_normals = z_up_to_y_up(all_normals)
    if z_up:
        all_positions = z_up_to_y_up(all_positions)
    return PackedVertices(
        positions=np.ascontiguousarray(all_positions, np.float32),
        normals=None if all_normals is None else np.ascontiguousarray(all_normals, np.float32),
        texcoords=np.ascontiguousarray(texcoords[unique_t], np.float32),
        indices=inverse - np.repeat(vertex_starts, corner_counts),
        vertex_starts=vertex_starts,
        vertex_counts=vertex_counts,
        corner_starts=starts[:, 3] * 3,
        corner_counts=corner_counts,
        has_normals=has_normals,
        has_texcoords=has_texcoords,
    )


def _unit_normals(normals: Any, inverse: Any, corner_positions: Any) -> Any:
    """`normals` (one per vertex) at unit length; a zero or non-finite one takes the geometric
    normal of a face using its vertex (`inverse`: each corner's vertex), the one
    `gltf.vertex_arrays` picks. Face normals are worked out only for the vertices needing one."""
    import numpy as np

    values = normals.astype(np.float64)
    length = np.sqrt((values * values).sum(axis=1))
    good = np.isfinite(length) & (length > 1e-12)
    if good.all():
        return (values / length[:, None]).astype(np.float32)
    bad = np.flatnonzero(~good)
    first_corner = np.empty(len(normals), dtype=np.int64)
    first_corner[inverse] = np.arange(len(inverse))  # as vertex_arrays picks it
    fallback = np.zeros((len(normals), 3))
    fallback[bad] = triangle_normals(corner_positions.reshape(-1, 3, 3)[first_corner[bad] // 3])
    return normalised(normals, fallback)


def _pack_each(meshes: list[Mesh], z_up: bool) -> PackedVertices:
    import numpy as np

    from .gltf import vertex_arrays
    from .runs import run_starts

    each = [vertex_arrays(mesh, z_up=z_up) for mesh in meshes]
    vertex_counts = np.array([len(positions) for _, positions, _, _ in each], np.int64)
    corner_counts = np.array([len(indices) for indices, _, _, _ in each], np.int64)

    def rows(arrays: list[Any], width: int) -> Any:
        return np.concatenate(
            [array if array is not None else np.zeros((count, width), np.float32) for array, count in arrays]
            + [np.zeros((0, width), np.float32)]
        )

    has_normals = np.array([normals is not None for _, _, normals, _ in each], bool)
    return PackedVertices(
        positions=rows([(positions, len(positions)) for _, positions, _, _ in each], 3),
        normals=rows([(normals, len(positions)) for _, positions, normals, _ in each], 3)
        if has_normals.any()
        else None,
        texcoords=rows([(texcoords, len(positions)) for _, positions, _, texcoords in each], 2),
        indices=np.concatenate([indices.astype(np.int64) for indices, _, _, _ in each] + [np.zeros(0, np.int64)]),
        vertex_starts=run_starts(vertex_counts),
        vertex_counts=vertex_counts,
        corner_starts=run_starts(corner_counts),
        corner_counts=corner_counts,
        has_normals=has_normals,
        has_texcoords=np.array([texcoords is not None for _, _, _, texcoords in each], bool),
    )


def vertex_arrays_many(
    meshes: list[Mesh], *, z_up: bool = True
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]]:
    """`gltf.vertex_arrays` of each mesh (the same values), computed for all at once."""
    if not meshes:
        return []
    packed = pack_vertices(meshes, z_up=z_up)
    return [packed.mesh(number) for number in range(len(meshes))]
