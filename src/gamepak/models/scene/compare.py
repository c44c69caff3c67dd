"""Whether a model that came back from a glTF scene draws what the track's model drew: compared
as VDrift draws it, corner by corner, with the values the scene export wrote for it (normals of
zero length replaced by their face's, non-finite texture coordinates set to 0, VDrift's normal
swap applied, every value turned to glTF's +Y up), so a scene exported and imported back untouched
is unchanged for every model gamepak reads.

Tolerances: positions within float noise (0.1 mm, or a millionth of the coordinate: a float's
precision 2 km out), normals within 0.005 per component (a quarter of a degree, what Blender's
export leaves), texture coordinates within 1e-4. A tool that re-exports may renumber faces and
start them at another corner, and drop faces of no area (they draw nothing): those compare by
a canonical order of the faces that have an area.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from ..mesh import Mesh

POSITION_NOISE = 1e-4
POSITION_RELATIVE = 1e-6
NORMAL_NOISE = 0.005
TEXCOORD_NOISE = 1e-4


@dataclass
class Corners:
    """What a model draws, per face corner (glTF axes): positions (C, 3), unit normals (C, 3)
    or None, texture coordinates (C, 2) or None; C = 3 x faces."""

    positions: np.ndarray
    normals: np.ndarray | None
    texcoords: np.ndarray | None


class Exported:
    """What the scene export writes for each mesh (already repaired as the track reader repairs
    them), worked out for all meshes in one pass: its stored bytes (to compare with a node's
    without decoding it) and its corners."""

    def __init__(self, meshes: list[Mesh]) -> None:
        from ..vertex_batch import pack_vertices

        self.packed = pack_vertices(meshes) if meshes else None
        self._corners: Any = None

    def stored(self, number: int) -> tuple[bytes, str, bytes, bytes | None, bytes | None]:
        """(index bytes, their numpy type, position, normal and texcoord bytes) as the export
        stores mesh `number` (see `gltf.NodeMeshes.stored`)."""
        assert self.packed is not None
        indices, positions, normals, texcoords = self.packed.mesh(number)
        return (
            indices.tobytes(),
            indices.dtype.str,
            positions.tobytes(),
            None if normals is None else normals.tobytes(),
            None if texcoords is None else texcoords.tobytes(),
        )

    def corners(self, number: int) -> Corners:
        """The corners mesh `number` draws (glTF axes)."""
        import numpy as np

        packed = self.packed
        assert packed is not None
        if self._corners is None:
            global_index = packed.indices + np.repeat(packed.vertex_starts, packed.corner_counts)
            self._corners = (
                packed.positions[global_index],
                packed.normals[global_index] if packed.normals is not None else None,
                packed.texcoords[global_index],
            )
        positions, normals, texcoords = self._corners
        low = int(packed.corner_starts[number])
        high = low + int(packed.corner_counts[number])
        return Corners(
            positions[low:high],
            normals[low:high] if normals is not None and packed.has_normals[number] else None,
            texcoords[low:high] if packed.has_texcoords[number] else None,
        )


def imported_corners(pieces: list[Mesh]) -> Corners:
    """The corners a node's pieces (glTF axes, as `gltf.read_nodes` gives them) draw."""
    import numpy as np

    from ..mesh import normalised

    positions, normals, texcoords = [], [], []
    any_normals = any(len(piece.normals) for piece in pieces)
    any_texcoords = any(len(piece.texcoords) for piece in pieces)
    for piece in pieces:
        if any_normals and not len(piece.normals):
            piece = piece.with_normals()
        corner_positions, corner_normals, corner_texcoords = piece.corner_values()
        positions.append(corner_positions.reshape(-1, 3))
        if any_normals:
            assert corner_normals is not None
            normals.append(corner_normals.reshape(-1, 3))
        if any_texcoords:
            texcoords.append(
                np.zeros((len(corner_positions) * 3, 2))
                if corner_texcoords is None
                else corner_texcoords.reshape(-1, 2)
            )
    return Corners(
        np.concatenate(positions).astype(np.float32) if positions else np.zeros((0, 3), np.float32),
        normalised(np.concatenate(normals)) if any_normals else None,
        np.concatenate(texcoords).astype(np.float32) if any_texcoords else None,
    )


def same_drawing(first: Mesh, second: Mesh) -> bool:
    """Whether two meshes draw the same faces (see the module's docstring), in any order."""
    return unchanged([(imported_corners([first]), imported_corners([second]))])[0]


def unchanged(pairs: list[tuple[Corners, Corners]]) -> list[bool]:
    """For each (exported, imported) pair, whether the import draws what the export did (see
    the module's docstring). Pairs in the same order are compared all at once."""
    import numpy as np

    from ..runs import per_run

    result = [False] * len(pairs)
    ordered = [
        number
        for number, (a, b) in enumerate(pairs)
        if len(a.positions) == len(b.positions)
        and (a.normals is None) == (b.normals is None)
        and (a.texcoords is None) == (b.texcoords is None)
    ]
    if ordered:
        counts = np.array([len(pairs[number][0].positions) for number in ordered], np.int64)
        close = _close_rows(
            np.concatenate([pairs[number][0].positions for number in ordered]),
            np.concatenate([pairs[number][1].positions for number in ordered]),
            POSITION_NOISE,
            POSITION_RELATIVE,
        )
        for name, noise, width in (("normals", NORMAL_NOISE, 3), ("texcoords", TEXCOORD_NOISE, 2)):
            present = [number for number in ordered if getattr(pairs[number][0], name) is not None]
            if not present:
                continue
            rows = np.ones(len(close), bool)
            before = np.concatenate([getattr(pairs[number][0], name) for number in present])
            after = np.concatenate([getattr(pairs[number][1], name) for number in present])
            mask = np.repeat(np.isin(ordered, present), counts)
            rows[mask] = _close_rows(before.reshape(-1, width), after.reshape(-1, width), noise, 0.0)
            close &= rows
        same = per_run(close, counts, np.logical_and, True)
        for number, verdict in zip(ordered, same.tolist()):
            result[number] = verdict
    for number, (a, b) in enumerate(pairs):
        if not result[number]:
            result[number] = _same_in_any_order(a, b)
    return result


def _close_rows(a: Any, b: Any, noise: float, relative: float) -> Any:
    import numpy as np

    with np.errstate(invalid="ignore"):
        tolerance = noise + relative * np.abs(a.astype(np.float64))
        return (np.abs(a.astype(np.float64) - b.astype(np.float64)) <= tolerance).all(axis=1)


def _faces_with_area(corners: Corners) -> Any:
    """(F, 3, 8) per face corner: position, unit normal (zeros without), texcoord (zeros
    without), for the faces that have an area."""
    import numpy as np

    positions = corners.positions.astype(np.float64).reshape(-1, 3, 3)
    faces = len(positions)
    normals = (
        np.zeros((faces, 3, 3)) if corners.normals is None else corners.normals.astype(np.float64).reshape(-1, 3, 3)
    )
    texcoords = (
        np.zeros((faces, 3, 2)) if corners.texcoords is None else corners.texcoords.astype(np.float64).reshape(-1, 3, 2)
    )
    cross = np.cross(positions[:, 1] - positions[:, 0], positions[:, 2] - positions[:, 0])
    area = np.linalg.norm(cross, axis=1)
    return np.concatenate([positions, normals, texcoords], axis=2)[area > 1e-12]


def _canonical(table: Any) -> Any:
    """The faces of a corner table in an order that does not depend on the file's: each face
    starts at its smallest corner (winding kept), faces sorted (on values rounded to 0.1 mm)."""
    import numpy as np

    keys = np.round(table[:, :, [0, 1, 2, 6, 7]], 4)
    rows = np.arange(len(keys))
    first = np.zeros(len(table), dtype=np.int64)
    for corner in (1, 2):
        # Lexicographic comparison of corner `corner` with the smallest so far.
        current = keys[rows, first]
        candidate = keys[:, corner]
        differs = candidate != current
        index = np.argmax(differs, axis=1)
        smaller = differs.any(axis=1) & (candidate[rows, index] < current[rows, index])
        first = np.where(smaller, corner, first)
    order = (first[:, None] + np.arange(3)) % 3
    rotated = np.take_along_axis(table, order[:, :, None], axis=1)
    rotated_keys = np.round(rotated[:, :, [0, 1, 2, 6, 7]], 4).reshape(len(table), -1)
    return rotated[np.lexsort(rotated_keys.T[::-1])]


def _same_in_any_order(a: Corners, b: Corners) -> bool:
    if (a.normals is None) != (b.normals is None) or (a.texcoords is None) != (b.texcoords is None):
        return False
    first, second = _faces_with_area(a), _faces_with_area(b)
    if first.shape != second.shape:
        return False
    if not len(first):
        return True
    first, second = _canonical(first).reshape(-1, 8), _canonical(second).reshape(-1, 8)
    return bool(
        _close_rows(first[:, :3], second[:, :3], POSITION_NOISE, POSITION_RELATIVE).all()
        and _close_rows(first[:, 3:6], second[:, 3:6], NORMAL_NOISE, 0.0).all()
        and _close_rows(first[:, 6:], second[:, 6:], TEXCOORD_NOISE, 0.0).all()
    )
