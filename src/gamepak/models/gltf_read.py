"""Reading glTF 2.0 models (`.glb`, and `.gltf` with its buffer embedded or beside it): any
triangle, strip or fan primitive of the default scene's nodes, node transforms applied.

The JSON is parsed into plain dicts (orjson where installed): pygltflib's dataclasses took most
of a scene import's time for a 2,000-node track. Every index, count, offset and transform is
checked before it is used, and an accessor against its buffer view before anything is
allocated; a node transform of the wrong size, not finite or not invertible is one ModelError
naming the node. Each mesh is decoded once, and each (mesh, world transform) made once, however
many nodes draw it (`NodeMeshes`); a node as gamepak's export stored it can be compared by its
bytes without decoding it (`NodeMeshes.stored`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from .gltf_document import (
    TRIANGLE_FAN,
    TRIANGLE_STRIP,
    TRIANGLES,
    Document,
    accessor_span,
    accessor_values,
    buffers_of,
    is_index,
    load_document,
)
from .mesh import ModelError, normalised, y_up_to_z_up

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np

    from .mesh import Mesh


def _numbers(value: Any, size: int) -> list[float] | None:
    """`value` as `size` finite numbers, else None."""
    import math

    if not isinstance(value, list) or len(value) != size:
        return None
    if not all(type(item) in (int, float) and math.isfinite(item) for item in value):
        return None
    return [float(item) for item in value]


def node_matrix(node: Any, label: str = "", number: int | None = None) -> np.ndarray:
    """A node's local 4x4 transform (glTF stores matrices column-major); a ModelError naming
    the node when a matrix, translation, rotation or scale has the wrong number of values or a
    value that is not a finite number."""
    import numpy as np

    field = node.get if isinstance(node, dict) else lambda key: getattr(node, key, None)

    def bad(what: str, size: int) -> ModelError:
        name = field("name")
        named = f"node {number}" + (f" ({name!r})" if isinstance(name, str) and name else "")
        return ModelError(f"{label or '<glTF>'}: {named}: its {what} is not {size} finite numbers")

    if field("matrix") is not None:
        matrix = _numbers(field("matrix"), 16)
        if matrix is None:
            raise bad("matrix", 16)
        return np.array(matrix, dtype=np.float64).reshape(4, 4).T
    result = np.eye(4)
    scale_values = [1.0, 1.0, 1.0] if field("scale") is None else _numbers(field("scale"), 3)
    rotation_values = [0.0, 0.0, 0.0, 1.0] if field("rotation") is None else _numbers(field("rotation"), 4)
    translation_values = [0.0, 0.0, 0.0] if field("translation") is None else _numbers(field("translation"), 3)
    if scale_values is None:
        raise bad("scale", 3)
    if rotation_values is None:
        raise bad("rotation", 4)
    if translation_values is None:
        raise bad("translation", 3)
    scale = np.diag([*scale_values, 1.0])
    x, y, z, w = rotation_values
    rotation = np.eye(4)
    rotation[:3, :3] = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ]
    translation = np.eye(4)
    translation[:3, 3] = translation_values
    return result @ translation @ rotation @ scale


def _has_transform(node: Any) -> bool:
    return "matrix" in node or "translation" in node or "rotation" in node or "scale" in node


def _triangles(indices: np.ndarray, mode: int) -> np.ndarray:
    import numpy as np

    if mode == TRIANGLES:
        usable = len(indices) - len(indices) % 3
        return indices[:usable].reshape(-1, 3)
    if len(indices) < 3:
        return np.zeros((0, 3), np.int64)
    if mode == TRIANGLE_FAN:
        return np.stack([np.full(len(indices) - 2, indices[0]), indices[1:-1], indices[2:]], axis=1)
    # Strips flip every other triangle so all keep the same winding.
    triangles = np.stack([indices[:-2], indices[1:-1], indices[2:]], axis=1)
    triangles[1::2, [0, 1]] = triangles[1::2, [1, 0]]
    return triangles


class NodeMeshes:
    """The triangle primitives of one glTF node, in world coordinates (node transforms applied,
    glTF's Y up): what `read` merges, and what a scene import reads object by object. `pieces`
    are decoded when first asked for; nodes drawing one mesh with one world transform share one
    `pieces` list (the same object)."""

    # A scene can hold hundreds of thousands of nodes: no per-node __dict__.
    __slots__ = ("_pieces", "_stored", "extras", "images", "mesh", "mesh_name", "name", "number")

    def __init__(
        self,
        number: int,
        name: str,
        extras: Any,
        images: list[str],
        mesh: int,
        mesh_name: str,
        pieces: Callable[[], list[Mesh]],
        stored: Callable[[], tuple[bytes, str, bytes, bytes | None, bytes | None] | None],
    ) -> None:
        self.number = number
        self.name = name
        self.extras = extras
        # The names (else URIs) of the images its materials' base colour textures show.
        self.images = images
        self.mesh = mesh  # the glTF mesh it draws
        self.mesh_name = mesh_name
        self._pieces = pieces
        self._stored = stored

    @property
    def pieces(self) -> list[Mesh]:
        """Its triangle primitives as meshes (world coordinates)."""
        return self._pieces()

    def stored(self) -> tuple[bytes, str, bytes, bytes | None, bytes | None] | None:
        """For a node drawn as it is stored (no transform) from one indexed triangle primitive of
        float positions, normals and texture coordinates packed in their views (as gamepak
        writes them): (index bytes, their numpy type, position bytes, normal bytes or None,
        texcoord bytes or None); else None. Compared with what an export wrote, without
        decoding anything."""
        return self._stored()


def read_nodes(
    data: bytes, *, name: str = "", path: str | None = None, max_nodes: int | None = None
) -> tuple[list[NodeMeshes], list[str]]:
    """Every node of the default scene that draws triangles, with its pieces (see `NodeMeshes`),
    and the issues met (primitives that are not triangles). Each mesh's accessors are read
    once, and each (mesh, world transform) made once, however many nodes draw it. With
    `max_nodes`, a document of more nodes is a ModelError, refused while they are read."""
    import numpy as np

    label = path or name or "<bytes>"
    gltf = load_document(data, label, max_nodes)
    buffers = buffers_of(gltf, label, os.path.dirname(os.path.abspath(path)) if path else None)
    nodes = gltf.items("nodes", label)
    meshes = gltf.items("meshes", label)
    scenes = gltf.items("scenes", label)
    if scenes:
        scene_number = gltf.scene if is_index(gltf.scene, len(scenes)) else 0
        roots = scenes[scene_number].get("nodes") or []
    else:
        child_numbers = {
            child
            for node in nodes
            if isinstance(node.get("children"), list)
            for child in node.get("children")
            if type(child) is int
        }
        roots = [number for number in range(len(nodes)) if number not in child_numbers]
    if not isinstance(roots, list):
        raise ModelError(f"{label}: the scene's nodes are not a list")
    found: list[NodeMeshes] = []
    issues: list[str] = []
    identity = np.eye(4)
    stack = [(root, identity, 0) for root in reversed(roots)]
    reached: set[int] = set()
    local_cache: dict[int, list[tuple[Any, Any, Any, Any, int]]] = {}

    def local(mesh_number: int) -> list[tuple[Any, Any, Any, Any, int]]:
        if mesh_number not in local_cache:
            local_cache[mesh_number] = _mesh_pieces(gltf, buffers, label, meshes[mesh_number], mesh_number)
        return local_cache[mesh_number]

    def stored(mesh_number: int) -> tuple[bytes, str, bytes, bytes | None, bytes | None] | None:
        return _stored_piece(gltf, buffers, label, meshes[mesh_number])

    placed: dict[tuple[int, bytes], tuple[Callable[[], list[Mesh]], Callable[[], Any]]] = {}
    image_names: dict[int, list[str]] = {}
    while stack:
        number, parent, depth = stack.pop()
        if not is_index(number, len(nodes)) or depth > 64:
            raise ModelError(f"{label}: bad node reference {number!r} (or a cycle)")
        # glTF's nodes form trees: a node listed twice would be drawn twice, and a few nodes
        # naming the next one twice over would be drawn 2**64 times.
        if number in reached:
            raise ModelError(f"{label}: node {number} is reached twice (glTF nodes form trees)")
        reached.add(number)
        node = nodes[number]
        world = parent @ node_matrix(node, label, number) if _has_transform(node) else parent
        children = node.get("children") or []
        if not isinstance(children, list):
            raise ModelError(f"{label}: node {number}: its children are not a list")
        stack.extend((child, world, depth + 1) for child in reversed(children))
        if node.get("mesh") is None:
            continue
        if not is_index(node.get("mesh"), len(meshes)):
            raise ModelError(f"{label}: node {number} names a missing mesh")
        mesh_number = node.get("mesh")
        if mesh_number not in image_names:
            _check_modes(meshes[mesh_number], mesh_number, label, issues)
            image_names[mesh_number] = _image_names(gltf, meshes[mesh_number])
        key = (mesh_number, world.tobytes())
        made = placed.get(key)
        if made is None:
            placement = _Placed(local, stored, mesh_number, world, f"{label}: {_node_label(number, node)}")
            # Its bound methods made once: two per node were 128 bytes of each of 300,000 nodes.
            made = placed[key] = (placement.pieces, placement.stored)
        mesh_name = meshes[mesh_number].get("name")
        found.append(
            NodeMeshes(
                number,
                node.get("name") if isinstance(node.get("name"), str) else "",
                node.get("extras"),
                image_names[mesh_number],
                mesh_number,
                mesh_name if isinstance(mesh_name, str) else "",
                *made,
            )
        )
    # The nodes' JSON is not needed past here (their names and extras are the NodeMeshes'),
    # but the pieces' closures keep the document: its nodes go now, before a scene import
    # builds its own lines for each node (a third of its peak for 100,000 nodes).
    nodes.clear()
    return found, issues


def _node_label(number: int, node: Any) -> str:
    name = node.get("name")
    return f"node {number}" + (f" ({name!r})" if isinstance(name, str) and name else "")


def _primitives(mesh: Any, mesh_number: int, label: str) -> list[Any]:
    primitives = mesh.get("primitives")
    if not isinstance(primitives, list) or not all(isinstance(item, dict) for item in primitives):
        raise ModelError(f"{label}: mesh {mesh_number}: its primitives are not a list of objects")
    return primitives


def _is_triangles(primitive: Any) -> bool:
    mode = TRIANGLES if primitive.get("mode") is None else primitive.get("mode")
    return type(mode) is int and mode in (TRIANGLES, TRIANGLE_STRIP, TRIANGLE_FAN)


def _check_modes(mesh: Any, mesh_number: int, label: str, issues: list[str]) -> None:
    for primitive in _primitives(mesh, mesh_number, label):
        if not _is_triangles(primitive):
            issues.append(f"a primitive of mesh {mesh_number} draws points or lines: skipped")


def _stored_piece(
    gltf: Document, buffers: list[bytes | memoryview], label: str, mesh: Any
) -> tuple[bytes, str, bytes, bytes | None, bytes | None] | None:
    """See `NodeMeshes.stored`."""
    primitives = mesh.get("primitives")
    if not isinstance(primitives, list) or len(primitives) != 1 or not isinstance(primitives[0], dict):
        return None
    primitive = primitives[0]
    attributes = primitive.get("attributes")
    if primitive.get("mode", TRIANGLES) != TRIANGLES or not isinstance(attributes, dict):
        return None
    if primitive.get("indices") is None or attributes.get("POSITION") is None:
        return None
    indices = accessor_span(gltf, buffers, primitive.get("indices"), label)
    if indices.dtype.str not in ("<u2", "<u4") or indices.width != 1:
        return None
    found: list[bytes | None] = []
    for name, width in (("POSITION", 3), ("NORMAL", 3), ("TEXCOORD_0", 2)):
        if attributes.get(name) is None:
            found.append(None)
            continue
        span = accessor_span(gltf, buffers, attributes.get(name), label)
        if span.dtype.str != "<f4" or span.width != width or span.normalized or span.packed_bytes is None:
            return None
        found.append(span.packed_bytes)
    index_bytes = indices.packed_bytes
    if index_bytes is None or found[0] is None:
        return None
    return index_bytes, indices.dtype.str, found[0], found[1], found[2]


class _Placed:
    """The pieces of one mesh under one world transform, decoded once when first asked for."""

    def __init__(self, local: Any, stored: Any, mesh_number: int, world: Any, where: str) -> None:
        import numpy as np

        self.local, self.stored_of, self.mesh_number, self.world, self.where = local, stored, mesh_number, world, where
        self.made: list[Mesh] | None = None
        self.identity = np.array_equal(world, np.eye(4))
        if not self.identity:
            _check_invertible(world, where)

    def pieces(self) -> list[Mesh]:
        if self.made is None:
            self.made = _placed(self.local(self.mesh_number), self.world, self.where)
        return self.made

    def stored(self) -> tuple[bytes, str, bytes, bytes | None, bytes | None] | None:
        if not self.identity:
            return None
        return self.stored_of(self.mesh_number)  # type: ignore[no-any-return]


def _mesh_pieces(
    gltf: Document, buffers: list[bytes | memoryview], label: str, mesh: Any, mesh_number: int
) -> list[tuple[Any, Any, Any, Any, int]]:
    """(positions, normals or None, texcoords or None, indices, mode) of each triangle primitive
    of a mesh, in the mesh's own space, checked."""
    import functools

    import numpy as np

    result = []
    for primitive in _primitives(mesh, mesh_number, label):
        if not _is_triangles(primitive):
            continue
        mode = TRIANGLES if primitive.get("mode") is None else primitive.get("mode")
        attributes = primitive.get("attributes")
        if not isinstance(attributes, dict):
            raise ModelError(f"{label}: a primitive of mesh {mesh_number} has no attributes object")
        if attributes.get("POSITION") is None:
            continue
        where = f"{label}: a primitive of mesh {mesh_number}"
        values = functools.partial(_vertex_values, gltf, buffers, label, where)
        positions = values("POSITION", attributes.get("POSITION"), 3, None)
        normals = None
        if attributes.get("NORMAL") is not None:
            normals = values("NORMAL", attributes.get("NORMAL"), 3, len(positions))
        texcoords = None
        if attributes.get("TEXCOORD_0") is not None:
            texcoords = values("TEXCOORD_0", attributes.get("TEXCOORD_0"), 2, len(positions))
        if primitive.get("indices") is not None:
            indices = accessor_values(gltf, buffers, primitive.get("indices"), label).reshape(-1).astype(np.int64)
        else:
            indices = np.arange(len(positions), dtype=np.int64)
        if indices.size and (indices.min() < 0 or indices.max() >= len(positions)):
            raise ModelError(
                f"{label}: a primitive of mesh {mesh_number} has an index past its {len(positions)} vertices"
            )
        result.append((positions, normals, texcoords, indices, mode))
    return result


def _check_invertible(world: Any, where: str) -> None:
    """A ModelError naming the node when its world transform cannot be inverted (normals are
    turned by the inverse)."""
    import numpy as np

    determinant = np.linalg.det(world[:3, :3]) if np.isfinite(world).all() else 0.0
    if not abs(determinant) > 1e-12:
        raise ModelError(
            f"{where}: its transform (with its parents') cannot be inverted (scaled to nothing along an axis, or "
            "not finite), so its normals cannot be turned"
        )


def _placed(pieces: list[tuple[Any, Any, Any, Any, int]], world: Any, where: str) -> list[Mesh]:
    """The pieces of a mesh moved by a node's world transform, as meshes."""
    import numpy as np

    from .mesh import Mesh

    result = []
    moved = not np.array_equal(world, np.eye(4))
    if moved:
        _check_invertible(world, where)
        determinant = np.linalg.det(world[:3, :3])
        inverse = np.linalg.inv(world[:3, :3])
    for positions, normals, texcoords, indices, mode in pieces:
        if moved:
            positions = positions @ world[:3, :3].T + world[:3, 3]
            if normals is not None:
                normals = normalised(normals @ inverse)
        triangles = _triangles(indices, mode)
        if moved and determinant < 0:
            # A mirroring transform turns faces over: glTF then takes the other winding as front.
            triangles = triangles[:, ::-1]
        result.append(Mesh.from_vertices(positions, triangles, normals, texcoords))
    return result


def _vertex_values(
    gltf: Document,
    buffers: list[bytes | memoryview],
    label: str,
    where: str,
    attribute: str,
    index: Any,
    width: int,
    count: int | None,
) -> np.ndarray:
    """The values of a vertex attribute's accessor as float64 rows of `width` (POSITION VEC3,
    NORMAL VEC3, TEXCOORD_0 VEC2, as glTF requires), `count` of them when given (every attribute
    of a primitive has one value per vertex)."""
    import numpy as np

    values = accessor_values(gltf, buffers, index, label)
    if values.shape[1] != width:
        raise ModelError(f"{where}: {attribute} has {values.shape[1]} components, not {width}")
    if count is not None and len(values) != count:
        raise ModelError(f"{where}: {len(values)} {attribute} values for {count} vertices")
    return values.astype(np.float64)


def _image_names(gltf: Document, mesh: Any) -> list[str]:
    from urllib.parse import unquote

    names = []
    materials, textures, images = gltf.materials, gltf.textures, gltf.images
    for primitive in mesh.get("primitives") or []:
        try:
            pbr = materials[primitive.get("material")].get("pbrMetallicRoughness")
            texture = textures[pbr.get("baseColorTexture").get("index")]
            image = images[texture.get("source")]
            label = image.get("name") or image.get("uri")
        except (TypeError, IndexError, AttributeError, KeyError):
            continue
        if isinstance(label, str) and not label.startswith("data:"):
            names.append(unquote(label.rsplit("/", 1)[-1]))
    return names


def read(data: bytes, *, name: str = "", path: str | None = None, z_up: bool = True) -> Mesh:
    """Parse a `.glb` or `.gltf` model into one mesh (all triangle primitives of the scene)."""
    label = path or name or "<bytes>"
    nodes, issues = read_nodes(data, name=name, path=path)
    pieces = [piece for node in nodes for piece in node.pieces]
    merged = merge(pieces, name=name)
    if z_up:
        merged.positions = y_up_to_z_up(merged.positions)
        if len(merged.normals):
            merged.normals = y_up_to_z_up(merged.normals)
    result = merged.compacted()
    result.issues = issues
    result.source = label
    return result


def merge(pieces: list[Mesh], *, name: str = "") -> Mesh:
    """One mesh holding every piece's faces (pieces without normals get flat ones, without
    texture coordinates (0, 0), when other pieces have them)."""
    import numpy as np

    from .mesh import Mesh

    if not pieces:
        return Mesh(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 2)), np.zeros((0, 3, 3)), name=name)
    any_normals = any(len(piece.normals) for piece in pieces)
    any_texcoords = any(len(piece.texcoords) for piece in pieces)
    arrays: dict[str, list[np.ndarray]] = {"positions": [], "normals": [], "texcoords": []}
    corner_parts = []
    offsets = [0, 0, 0]
    for piece in pieces:
        if any_normals:
            piece = piece.with_normals()
        corners = piece.corners.copy()
        texcoords = piece.texcoords
        if any_texcoords and not len(texcoords):
            texcoords = np.zeros((1, 2), np.float32)
            corners[:, :, 2] = 0
        for kind, values in enumerate((piece.positions, piece.normals, texcoords)):
            corners[:, :, kind] += offsets[kind]
            offsets[kind] += len(values)
        arrays["positions"].append(piece.positions)
        arrays["normals"].append(piece.normals)
        arrays["texcoords"].append(texcoords)
        corner_parts.append(corners)
    mesh = Mesh(
        np.concatenate(arrays["positions"]),
        np.concatenate(arrays["normals"]),
        np.concatenate(arrays["texcoords"]),
        np.concatenate(corner_parts),
        name=name,
    )
    if not any_normals:
        mesh.corners[:, :, 1] = 0
    if not any_texcoords:
        mesh.corners[:, :, 2] = 0
    return mesh
