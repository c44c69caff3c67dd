"""Polygons to triangles for the readers of polygon formats (OBJ, PLY).

A triangle fan from the first corner is right only for convex polygons: for a concave one some
of its triangles cover area outside the polygon and face the other way. Convex polygons (the
usual quads) keep the fan; the others are projected onto their own plane (Newell's normal) and
cut by ear clipping (mapbox-earcut), every triangle turned to the polygon's winding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

# A corner turning the other way by less than this (relative to the polygon's size) still
# counts as convex: flat corners and float noise do not need ear clipping.
CONVEX_TOLERANCE = 1e-9


def fan(corner_count: int) -> np.ndarray:
    """(n-2, 3) corner numbers of the fan from corner 0."""
    import numpy as np

    second = np.arange(1, corner_count - 1)
    return np.stack([np.zeros_like(second), second, second + 1], axis=1)


def _newell_normals(points: np.ndarray) -> np.ndarray:
    """(P, 3) normals of P polygons of n corners each ((P, n, 3) points), not normalised: they
    point to the side from which the corners run counter-clockwise."""
    import numpy as np

    following = np.roll(points, -1, axis=1)
    return np.stack(
        [
            ((points[..., 1] - following[..., 1]) * (points[..., 2] + following[..., 2])).sum(axis=1),
            ((points[..., 2] - following[..., 2]) * (points[..., 0] + following[..., 0])).sum(axis=1),
            ((points[..., 0] - following[..., 0]) * (points[..., 1] + following[..., 1])).sum(axis=1),
        ],
        axis=1,
    )


def _convex(points: np.ndarray, normals: np.ndarray) -> np.ndarray:
    """(P,) True for the polygons whose every corner turns the way the normal says."""
    import numpy as np

    incoming = points - np.roll(points, 1, axis=1)
    outgoing = np.roll(points, -1, axis=1) - points
    turns = np.einsum("pnk,pk->pn", np.cross(incoming, outgoing), normals)
    scale = np.abs(turns).max(axis=1, initial=0.0)
    result: np.ndarray = (turns >= -CONVEX_TOLERANCE * scale[:, None]).all(axis=1)
    return result


def ear_clip(points: np.ndarray, normal: np.ndarray) -> np.ndarray | None:
    """(k, 3) corner numbers of triangles covering one polygon ((n, 3) points, `normal` its
    Newell normal), in the polygon's winding; None when it has no area to cut."""
    import mapbox_earcut
    import numpy as np

    length = float(np.linalg.norm(normal))
    if not np.isfinite(length) or length == 0.0:
        return None
    axis_n = normal / length
    # Any direction across the normal, then a right-handed (u, v, n) basis: the polygon's
    # winding around n is counter-clockwise in (u, v).
    helper = np.array([1.0, 0.0, 0.0]) if abs(axis_n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    axis_u = np.cross(helper, axis_n)
    axis_u /= np.linalg.norm(axis_u)
    axis_v = np.cross(axis_n, axis_u)
    flat = np.stack([points @ axis_u, points @ axis_v], axis=1)
    indices = mapbox_earcut.triangulate_float64(flat, np.array([len(points)], dtype=np.uint32))
    if not len(indices):
        return None
    triangles = np.asarray(indices, dtype=np.int64).reshape(-1, 3)
    a, b, c = (flat[triangles[:, column]] for column in range(3))
    area = (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0])
    clockwise = area < 0
    triangles[clockwise] = triangles[clockwise][:, [0, 2, 1]]
    return triangles


def triangulate(positions: np.ndarray, polygons: Sequence[Sequence[int]]) -> list[np.ndarray]:
    """For each polygon (position indices, 3 or more), the (k, 3) corner numbers of its
    triangles: the fan when it is convex (or flat to nothing), else ear clipping."""
    import numpy as np

    result: list[np.ndarray] = [np.zeros((0, 3), np.int64)] * len(polygons)
    by_size: dict[int, list[int]] = {}
    for number, polygon in enumerate(polygons):
        by_size.setdefault(len(polygon), []).append(number)
    for size, numbers in by_size.items():
        if size == 3:
            triangle = fan(3)
            for number in numbers:
                result[number] = triangle
            continue
        corners = np.array([polygons[number] for number in numbers], dtype=np.int64)
        points = positions[corners].astype(np.float64)
        normals = _newell_normals(points)
        convex = _convex(points, normals)
        fan_triangles = fan(size)
        for row, number in enumerate(numbers):
            triangles = None if convex[row] else ear_clip(points[row], normals[row])
            result[number] = fan_triangles if triangles is None else triangles
    return result
