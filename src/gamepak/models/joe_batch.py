"""Many small JOE models read at once (a VDrift track holds ~1,700 of a few dozen faces each).

`joe.read` costs ~100 µs a model, nearly all of it numpy's per-call overhead on tiny arrays. Here
the checks every model needs (indices within their arrays, finite values) run once over all the
models' bytes, and each mesh is a set of views into arrays gathered for all of them. Only models
of the common shape take this path: one frame whose arrays end exactly at the end of the data.
Any other model, and any model a batched check finds fault with, is read by `joe.read` itself,
so errors, warnings and issues are word for word the same as reading the models one by one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import GamepakError
from .joe import FACE_SIZE, FRAME_HEADER, HEADER, MAX_FACES, VERSION, read
from .runs import all_finite, per_run, run_starts

if TYPE_CHECKING:
    from .mesh import Mesh

# Where a model's frame header starts: after the file header and the faces.
_FIRST_FACE = HEADER.size


def read_many(datas: list[bytes], labels: list[str], names: list[str]) -> list[Mesh | GamepakError]:
    """`joe.read(data, path=label, name=name)` of each model: its mesh, or the `GamepakError`
    that reading it raised (warnings are emitted as `joe.read` emits them)."""
    shapes = [_single_frame_shape(data) for data in datas]
    fast = [number for number, shape in enumerate(shapes) if shape is not None]
    results: list[Mesh | GamepakError | None] = [None] * len(datas)
    if fast:
        checked = _read_checked([datas[n] for n in fast], [shapes[n] for n in fast], names, labels, fast)  # type: ignore[misc]
        for number, mesh in zip(fast, checked):
            results[number] = mesh
    # The rest one by one, in order: their warnings come as reading one by one gives them.
    for number, found in enumerate(results):
        if found is None:
            results[number] = _read_one(datas[number], labels[number], names[number])
    return results  # type: ignore[return-value]


def _read_one(data: bytes, label: str, name: str) -> Mesh | GamepakError:
    try:
        return read(data, path=label, name=name)
    except GamepakError as exc:
        return exc


def _single_frame_shape(data: bytes) -> tuple[int, int, int, int] | None:
    """(faces, vertices, texcoords, normals) of a valid-looking one-frame model that ends
    exactly where its data does; None for anything else (left to `joe.read`)."""
    size = len(data)
    if size < HEADER.size + FRAME_HEADER.size:
        return None
    _, version, face_count, frame_count = HEADER.unpack_from(data, 0)
    if version != VERSION or frame_count != 1 or not 0 <= face_count <= MAX_FACES:
        return None
    header_at = _FIRST_FACE + face_count * FACE_SIZE
    if header_at + FRAME_HEADER.size > size:
        return None
    vertex_count, texcoord_count, normal_count = FRAME_HEADER.unpack_from(data, header_at)
    if min(vertex_count, texcoord_count, normal_count) < 0:
        return None
    if header_at + FRAME_HEADER.size + 12 * vertex_count + 12 * normal_count + 8 * texcoord_count != size:
        return None
    return face_count, vertex_count, texcoord_count, normal_count


def _gather(buffer: Any, dtype: str, starts: Any, counts: Any) -> Any:
    """The items of `dtype` at byte offsets `starts` (counts of items each), concatenated: one
    gather per alignment of the start, since a model may begin at any byte."""
    import numpy as np

    item = np.dtype(dtype).itemsize
    total = int(counts.sum())
    out = np.empty(total, dtype)
    if not total:
        return out
    out_starts = run_starts(counts)
    for alignment in range(item):
        chosen = (starts % item == alignment) & (counts > 0)
        if not chosen.any():
            continue
        view = np.frombuffer(buffer, dtype, (len(buffer) - alignment) // item, alignment)
        chosen_counts = counts[chosen]
        # Item positions in the view, and where they go in `out`, for every chosen model at once.
        within = np.arange(int(chosen_counts.sum())) - np.repeat(run_starts(chosen_counts), chosen_counts)
        source = np.repeat((starts[chosen] - alignment) // item, chosen_counts) + within
        target = np.repeat(out_starts[chosen], chosen_counts) + within
        out[target] = view[source]
    return out


def _read_checked(
    datas: list[bytes], shapes: list[tuple[int, int, int, int]], names: list[str], labels: list[str], numbers: list[int]
) -> list[Mesh | None]:
    """Meshes of one-frame models whose indices and values pass; None for the ones that do not."""
    import numpy as np

    from .mesh import Mesh

    buffer = b"".join(datas)  # gathered from: the meshes get copies of their own
    table = np.array(shapes, np.int64).reshape(-1, 4)
    faces, vertices, texcoords, normals = table.T
    sizes = np.fromiter((len(data) for data in datas), np.int64, len(datas))
    starts = run_starts(sizes)
    faces_at = starts + _FIRST_FACE
    positions_at = faces_at + faces * FACE_SIZE + FRAME_HEADER.size
    normals_at = positions_at + 12 * vertices
    texcoords_at = normals_at + 12 * normals

    # Faces: 3 vertex, 3 normal, 3 texcoord indices on disk; corner-major in a mesh.
    corners = np.ascontiguousarray(
        _gather(buffer, "<u2", faces_at, faces * 9).reshape(-1, 3, 3).transpose(0, 2, 1), dtype=np.int64
    )
    largest = per_run(corners.reshape(-1, 3), faces * 3, np.maximum, 0)  # (models, kinds)
    counts = np.stack([vertices, normals, texcoords], axis=1)
    bad_index = ((largest >= counts) & ((counts > 0) | (np.arange(3) == 0))).any(axis=1) & (faces > 0)

    positions = _gather(buffer, "<f4", positions_at, vertices * 3).reshape(-1, 3)
    normal_values = _gather(buffer, "<f4", normals_at, normals * 3).reshape(-1, 3)
    texcoord_values = _gather(buffer, "<f4", texcoords_at, texcoords * 2).reshape(-1, 2)
    finite = (
        all_finite(positions, vertices) & all_finite(normal_values, normals) & all_finite(texcoord_values, texcoords)
    )
    ok = (~bad_index & finite).tolist()

    def bounds(counts: Any) -> list[int]:
        ends = np.cumsum(counts)
        return [0, *ends.tolist()]

    face_bounds, vertex_bounds = bounds(faces), bounds(vertices)
    normal_bounds, texcoord_bounds = bounds(normals), bounds(texcoords)
    # Offsets within each model's own file, for messages naming a byte.
    local = np.stack([positions_at, normals_at, texcoords_at], axis=1) - starts[:, None]
    meshes: list[Mesh | None] = []
    for index, (good, offsets) in enumerate(zip(ok, local.tolist())):
        if not good:
            meshes.append(None)
            continue
        data = datas[index]
        meshes.append(
            Mesh(
                positions[vertex_bounds[index] : vertex_bounds[index + 1]],
                normal_values[normal_bounds[index] : normal_bounds[index + 1]],
                texcoord_values[texcoord_bounds[index] : texcoord_bounds[index + 1]],
                corners[face_bounds[index] : face_bounds[index + 1]],
                tuple(offsets),
                magic=bytes(data[:4]),
                name=names[numbers[index]],
                source=labels[numbers[index]],
            )
        )
    return meshes
