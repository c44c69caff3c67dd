"""Edited geometry back into an RFG mesh: positions, normals and UVs of a glTF (as `export`
wrote it, then edited, e.g. in Blender) written into the GPU file, the index buffer kept.

Matching: each node of the export (by name; Blender's `.001` suffixes allowed) holds the
triangles of its submesh in the export's order. Triangle k of the glTF is triangle k of the
submesh; its corners are matched to the original's in whichever rotation fits best (a tool
may start a triangle at another corner), so every corner names its original vertex. A
different triangle count is refused; so is a vertex given different positions by its
triangles (split, or triangles reordered): the topology must stay the same.

Only what changed is encoded: a vertex keeps its bytes unless its position, normal or a UV set
differs from what the export wrote (beyond float noise and, for normals, a quantisation step),
and then
only the changed attribute's bytes change. An unchanged model gives the GPU file back byte for
byte. A moved vertex outside its submesh's stored box makes the box recomputed (CPU file).
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...core.arrays import sorted_unique
from ..mesh import ModelError
from .export import exported_uv_sets, gltf_vertex_values, plan
from .geometry import to_gltf_space
from .layout import UV_SCALE
from .reader import gpu_layout

if TYPE_CHECKING:
    import numpy as np

    from .reader import RfgMesh

_BLENDER_SUFFIX = re.compile(r"\.\d{3}$")
POSITION_TOLERANCE = 1e-6
# A bit more than one step of the stored bytes (2/255): Blender keeps custom normals in its own
# compressed form and gives them back up to half a step off (0.004 measured on the battery).
NORMAL_TOLERANCE = 0.01
UV_TOLERANCE = 0.5 / UV_SCALE


@dataclass
class WriteBack:
    """The files after the write-back, and what changed."""

    cpu: bytes
    gpu: bytes
    changed_vertices: list[int] = field(default_factory=list)
    boxes_changed: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass
class _Node:
    name: str
    corners: dict[str, np.ndarray]  # attribute -> (T, 3, k) corner values, in glTF space


def _read_nodes(data: bytes, label: str, folder: str | None = None) -> list[_Node]:
    """Every node of the default scene that draws triangles: its corner values per attribute
    (node transforms applied), primitives concatenated in order."""
    import numpy as np

    from ..gltf_document import accessor_values, buffers_of, is_index, load_document
    from ..gltf_read import _check_invertible, _triangles, node_matrix

    gltf = load_document(data, label)
    buffers = buffers_of(gltf, label, folder)  # external buffers only from the glTF's own folder
    nodes = gltf.items("nodes", label)
    meshes = gltf.items("meshes", label)
    scenes = gltf.items("scenes", label)
    scene_index = gltf.scene if is_index(gltf.scene, len(scenes)) else 0
    scene = scenes[scene_index] if scenes else None
    roots = list(scene.get("nodes") or []) if scene is not None else list(range(len(nodes)))
    found: list[_Node] = []
    stack = [(root, np.eye(4), 0) for root in reversed(roots)]
    seen: set[int] = set()
    while stack:
        number, parent, depth = stack.pop()
        if not is_index(number, len(nodes)) or number in seen or depth > 64:
            raise ModelError(f"{label}: bad node reference {number!r} (or a cycle)")
        seen.add(number)
        node = nodes[number]
        name = node.get("name") if isinstance(node.get("name"), str) else ""
        world = parent @ node_matrix(node, label, number)
        children = node.get("children") or []
        if not isinstance(children, list):
            raise ModelError(f"{label}: node {number}: children is not a list")
        stack.extend((child, world, depth + 1) for child in reversed(children))
        mesh_index = node.get("mesh")
        if mesh_index is None:
            continue
        if not is_index(mesh_index, len(meshes)):
            raise ModelError(f"{label}: node {number} names a missing mesh")
        parts: dict[str, list[np.ndarray]] = {}
        primitives = meshes[mesh_index].get("primitives") or []
        if not isinstance(primitives, list):
            raise ModelError(f"{label}: mesh {mesh_index}: primitives is not a list")
        for primitive in primitives:
            if not isinstance(primitive, dict):
                raise ModelError(f"{label}: mesh {mesh_index}: a primitive is not an object")
            mode = primitive.get("mode", 4)
            attributes = primitive.get("attributes") or {}
            if mode not in (4, 5, 6) or not isinstance(attributes, dict) or attributes.get("POSITION") is None:
                continue
            values = {"POSITION": accessor_values(gltf, buffers, attributes["POSITION"], label).astype(np.float64)}
            for attribute in ("NORMAL", *(f"TEXCOORD_{n}" for n in range(8))):
                index = attributes.get(attribute)
                if index is not None:
                    values[attribute] = accessor_values(gltf, buffers, index, label).astype(np.float64)
            count = len(values["POSITION"])
            for attribute, array in values.items():
                if len(array) != count:
                    raise ModelError(f"{label}: node {name!r}: {len(array)} {attribute} values for {count} vertices")
            if primitive.get("indices") is not None:
                indices = accessor_values(gltf, buffers, primitive["indices"], label).reshape(-1).astype(np.int64)
            else:
                indices = np.arange(count, dtype=np.int64)
            if indices.size and (indices.min() < 0 or indices.max() >= count):
                raise ModelError(f"{label}: node {name!r}: an index past its {count} vertices")
            triangles = _triangles(indices, mode)
            if not np.allclose(world, np.eye(4)):
                _check_invertible(world, f"{label}: node {number} ({name!r})")
                values["POSITION"] = values["POSITION"] @ world[:3, :3].T + world[:3, 3]
                if "NORMAL" in values:
                    values["NORMAL"] = values["NORMAL"] @ np.linalg.inv(world[:3, :3])
                if np.linalg.det(world[:3, :3]) < 0:
                    triangles = triangles[:, ::-1]
            for attribute, array in values.items():
                parts.setdefault(attribute, []).append(array[triangles])
        if parts:
            corners = {attribute: np.concatenate(arrays) for attribute, arrays in parts.items()}
            if len({len(array) for array in corners.values()}) == 1:
                found.append(_Node(name, corners))
            else:
                raise ModelError(f"{label}: node {name!r}: its primitives do not all have the same attributes")
    return found


def _by_name(nodes: list[_Node]) -> dict[str, _Node]:
    """The node each name finds (`write_back`'s matching): the first node of that exact name,
    else the first whose name is that with a Blender suffix (`.001`). One table for all the
    submeshes: looking through every node per submesh is quadratic in a stranger's count."""
    exact: dict[str, _Node] = {}
    suffixed: dict[str, _Node] = {}
    for node in nodes:
        exact.setdefault(node.name, node)
        suffixed.setdefault(_BLENDER_SUFFIX.sub("", node.name), node)
    return {**suffixed, **exact}  # an exact name wins over a suffixed one


def write_back(
    mesh: RfgMesh, name: str, data: bytes, gpu: bytes, cpu: bytes, *, label: str = "", folder: str | None = None
) -> WriteBack:
    """The mesh's files with the vertices of the glTF `data` written in (see the module);
    `folder`: where a `.gltf`'s buffer files lie (never outside it)."""
    import numpy as np

    label = label or "<glTF>"
    nodes = _read_nodes(data, label, folder)
    expected_positions, expected_normals, expected_uvs = gltf_vertex_values(mesh)
    uv_numbers = exported_uv_sets(mesh)
    new_positions = expected_positions.astype(np.float64).copy()
    new_normals = expected_normals.astype(np.float64).copy()
    new_uvs = [uvs.astype(np.float64).copy() for uvs in expected_uvs]
    result = WriteBack(cpu, gpu)
    planned = plan(mesh, name, lod=0, all_lods=True)
    if not any(node_plan.primitives for node_plan in planned):
        # Nothing drawn, so nothing exported to edit (no submesh, or blocks without a whole
        # triangle): the unchanged export comes back unchanged; a node holding triangles for
        # it is a changed topology.
        for drawn in nodes:
            if len(drawn.corners["POSITION"]):
                raise ModelError(
                    f"{label}: node {drawn.name!r} has {len(drawn.corners['POSITION'])} triangles, the mesh "
                    "draws none: a changed triangle count cannot be written back"
                )
        result.warnings.append(f"{mesh.label}: the mesh draws no triangle: no vertex to write back")
        return result
    matched_any = False
    named = _by_name(nodes)
    for node_plan in planned:
        node = named.get(node_plan.name)
        if node is None:
            if node_plan.lod == 0:
                result.warnings.append(f"{label}: no node {node_plan.name!r}: its vertices are kept as they are")
            continue
        matched_any = True
        triangles = (
            np.concatenate([node_plan.vertex_ids[t] for _, t in node_plan.primitives])
            if node_plan.primitives
            else np.zeros((0, 3), np.int64)
        )
        found = node.corners["POSITION"]
        if len(found) != len(triangles):
            raise ModelError(
                f"{label}: node {node.name!r} has {len(found)} triangles, the mesh {len(triangles)}: "
                "a changed triangle count cannot be written back"
            )
        if not len(triangles):
            continue
        shifts = _rotations(found, expected_positions[triangles], node.corners, expected_uvs, triangles)
        order = (shifts[:, None] + np.arange(3)) % 3
        corners = {
            attribute: np.take_along_axis(values, order[:, :, None], axis=1)
            for attribute, values in node.corners.items()
        }
        flat_ids = triangles.reshape(-1)
        where = f"{label}: node {node.name!r}"
        _scatter(
            new_positions,
            expected_positions,
            flat_ids,
            corners["POSITION"].reshape(-1, 3),
            POSITION_TOLERANCE,
            where,
            "position",
            check_split=True,
        )
        if "NORMAL" in corners:
            _scatter(
                new_normals,
                expected_normals,
                flat_ids,
                corners["NORMAL"].reshape(-1, 3),
                NORMAL_TOLERANCE,
                where,
                "normal",
            )
        for position, _ in enumerate(uv_numbers):
            key = f"TEXCOORD_{position}"
            if key in corners:
                _scatter(
                    new_uvs[position],
                    expected_uvs[position],
                    flat_ids,
                    corners[key].reshape(-1, 2),
                    UV_TOLERANCE,
                    where,
                    "UV",
                )
    if not matched_any:
        names = ", ".join(repr(node.name) for node in nodes[:4]) or "none"
        raise ModelError(
            f"{label}: none of its nodes ({names}) is named as the export named the mesh's "
            f"({planned[0].name!r}...): nothing to write back"
        )
    changed_position = (
        np.abs(new_positions - expected_positions) > POSITION_TOLERANCE * np.maximum(1.0, np.abs(expected_positions))
    ).any(axis=1)
    from ..mesh import normalised

    unit_normals = normalised(new_normals, expected_normals).astype(np.float64)
    changed_normal = (np.abs(unit_normals - expected_normals) > NORMAL_TOLERANCE).any(axis=1)
    changed_uvs = {
        number: (np.abs(new_uvs[position] - expected_uvs[position]) > UV_TOLERANCE).any(axis=1)
        for position, number in enumerate(uv_numbers)
    }
    vertices = _encoded(
        mesh,
        to_gltf_space(new_positions.astype(np.float64)),
        changed_position,
        to_gltf_space(unit_normals),
        changed_normal,
        {number: new_uvs[position] for position, number in enumerate(uv_numbers)},
        changed_uvs,
        label,
    )
    _, vertex_at, size = gpu_layout(mesh.config)
    result.gpu = gpu[:vertex_at] + vertices + gpu[size - 4 :]
    any_changed = changed_position | changed_normal
    for mask in changed_uvs.values():
        any_changed |= mask
    result.changed_vertices = np.flatnonzero(any_changed).tolist()
    if changed_position.any():
        new_file_positions = np.frombuffer(vertices, dtype=mesh.vertices.dtype)["position"]
        result.cpu, result.boxes_changed = patch_boxes(mesh, cpu, new_file_positions)
    return result


def _rotations(
    found: np.ndarray,
    reference: np.ndarray,
    corners: dict[str, np.ndarray],
    expected_uvs: list[np.ndarray],
    triangles: np.ndarray,
) -> np.ndarray:
    """Per triangle, how far its corners are turned against the original's (0, 1 or 2): the
    turn under which the most corners keep their original position (UVs counting half, for
    triangles whose corners share a position); a tie prefers no turn (what gamepak and Blender
    write), then the nearest positions. So a vertex moved any distance keeps its corner."""
    import numpy as np

    reference = reference.astype(np.float64)
    limit = POSITION_TOLERANCE * np.maximum(1.0, np.abs(reference).max(axis=2))
    scores = []
    costs = []
    for shift in range(3):
        turned = np.roll(found, -shift, axis=1)
        score = 2 * (np.abs(turned - reference).max(axis=2) <= limit).sum(axis=1)
        if expected_uvs and "TEXCOORD_0" in corners:
            uvs = np.roll(corners["TEXCOORD_0"], -shift, axis=1)
            score = score + (np.abs(uvs - expected_uvs[0][triangles]).max(axis=2) <= UV_TOLERANCE).sum(axis=1)
        scores.append(score)
        costs.append(((turned - reference) ** 2).sum(axis=(1, 2)))
    cost_rank = np.argsort(np.argsort(np.stack(costs), axis=0), axis=0)  # 0 nearest .. 2 farthest
    weight = np.stack(scores) * 10 + np.array([5, 0, 0])[:, None] - cost_rank
    return np.argmax(weight, axis=0)


def _scatter(
    target: np.ndarray,
    expected: np.ndarray,
    ids: np.ndarray,
    values: np.ndarray,
    tolerance: float,
    where: str,
    what: str,
    *,
    check_split: bool = False,
) -> None:
    """Per-corner values into per-vertex rows of `target`, where they differ from `expected`
    (an unchanged corner of another node, e.g. a LOD sharing the vertex, never undoes an
    edit). With `check_split`, the corners of one vertex must agree."""
    import numpy as np

    if not np.isfinite(values).all():
        corner = int(np.flatnonzero(~np.isfinite(values).all(axis=1))[0])
        raise ModelError(f"{where}: vertex {int(ids[corner])}: {what} is NaN or infinite")
    scale = np.maximum(1.0, np.abs(expected[ids]).max(axis=1)) if what == "position" else 1.0
    if check_split:
        # Sized by the node's own vertices, not the mesh's: a file of many small submeshes
        # would otherwise allocate the whole vertex array once per node.
        _, inverse = np.unique(ids, return_inverse=True)
        last = np.zeros((int(inverse.max()) + 1 if inverse.size else 0, values.shape[1]), dtype=values.dtype)
        last[inverse] = values  # the last corner of each vertex
        spread = np.abs(values - last[inverse]).max(axis=1)
        if (spread > tolerance * scale).any():
            vertex = int(ids[np.flatnonzero(spread > tolerance * scale)[0]])
            raise ModelError(
                f"{where}: vertex {vertex} takes different {what}s from its triangles (split, or the "
                "triangles reordered): a changed vertex count cannot be written back"
            )
    edited = np.abs(values - expected[ids]).max(axis=1) > tolerance * scale
    target[ids[edited]] = values[edited]


def _encoded(
    mesh: RfgMesh,
    positions: np.ndarray,
    position_mask: np.ndarray,
    normals: np.ndarray,
    normal_mask: np.ndarray,
    uvs: dict[int, np.ndarray],
    uv_masks: dict[int, np.ndarray],
    label: str,
) -> bytes:
    """The vertex buffer with only the flagged attributes of the flagged vertices re-encoded."""
    import numpy as np

    from .geometry import pack_unit

    vertices = mesh.vertices.copy()
    rows = np.flatnonzero(position_mask)
    if rows.size:
        chosen = positions[rows]
        too_big = (np.abs(chosen) > np.finfo(np.float32).max).any(axis=1)
        if too_big.any():
            raise ModelError(f"{label}: vertex {int(rows[np.flatnonzero(too_big)[0]])}: position past float32's range")
        vertices["position"][rows] = chosen.astype(np.float32)
    rows = np.flatnonzero(normal_mask)
    if rows.size:
        vertices["normal"][rows, :3] = pack_unit(normals[rows])
    for number, values in uvs.items():
        rows = np.flatnonzero(uv_masks[number])
        if not rows.size:
            continue
        scaled = np.rint(values[rows] * UV_SCALE)
        bad = (scaled < -32768).any(axis=1) | (scaled > 32767).any(axis=1)
        if bad.any():
            vertex = int(rows[np.flatnonzero(bad)[0]])
            shown = ", ".join(f"{value:g}" for value in values[vertex])
            raise ModelError(
                f"{label}: vertex {vertex}: UV set {number} ({shown}) is outside what the vertex format holds "
                "(int16 / 1024: -32 to 31.999)"
            )
        vertices[f"uv{number}"][rows] = scaled.astype(np.int16)
    return vertices.tobytes()


def patch_boxes(mesh: RfgMesh, cpu: bytes, new_positions: np.ndarray) -> tuple[bytes, list[int]]:
    """The CPU file with each submesh's box grown to hold its vertices at `new_positions`
    (file coordinates) when they leave it; (bytes, the submeshes whose box changed)."""
    import numpy as np

    from .geometry import block_triangles

    changed = bytearray(cpu)
    numbers = []
    for number, submesh in enumerate(mesh.submeshes):
        used = [block_triangles(mesh, block).reshape(-1) for block in submesh.blocks]
        ids = sorted_unique(np.concatenate(used)) if used else np.zeros(0, np.int64)
        if not ids.size:
            continue
        low = new_positions[ids].min(axis=0)
        high = new_positions[ids].max(axis=0)
        if (low >= np.array(submesh.box_min)).all() and (high <= np.array(submesh.box_max)).all():
            continue
        low = np.minimum(low, submesh.box_min).astype(np.float32)
        high = np.maximum(high, submesh.box_max).astype(np.float32)
        struct.pack_into("<3f3f", changed, submesh.offset + 16, *low.tolist(), *high.tolist())
        numbers.append(number)
    return bytes(changed), numbers
