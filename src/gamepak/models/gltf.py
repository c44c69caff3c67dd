"""glTF 2.0 models: `.glb` (binary) and `.gltf` (JSON with the buffer embedded as a data URI).

What gamepak writes (one buffer, 4-byte aligned views, built with pygltflib):

| buffer view | target               | accessor                          |
|-------------|----------------------|-----------------------------------|
| 0           | ELEMENT_ARRAY_BUFFER | indices, uint16 (uint32 past 65,534 vertices) |
| 1           | ARRAY_BUFFER, stride 12 | POSITION, float VEC3, with min/max |
| 2           | ARRAY_BUFFER, stride 12 | NORMAL, float VEC3, unit length (when the model has normals) |
| 3           | ARRAY_BUFFER, stride 8  | TEXCOORD_0, float VEC2 (when it has texture coordinates) |

Every distinct (position, normal, texcoord) corner becomes one glTF vertex. glTF's +Y is up while
VDrift's JOE models are Z-up, so positions and normals are turned (x, y, z) -> (x, z, -y) on
export and back on import (exact: only swaps and sign changes; `z_up=False` writes and reads
the coordinates as they are). NaN or infinite values are refused: JSON cannot hold the
accessors' bounds, and viewers cannot draw them. Texture coordinates are kept as
they are. Normals are normalised (zero ones take their face's normal) as glTF requires.

Reading accepts any triangle, strip or fan primitive of the default scene's nodes (node
transforms applied), merges them into one mesh and merges equal attribute values.
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import UnsupportedFeatureError
from .mesh import ModelError, normalised, y_up_to_z_up, z_up_to_y_up

if TYPE_CHECKING:
    import numpy as np

    from .mesh import Mesh

ARRAY_BUFFER = 34962
ELEMENT_ARRAY_BUFFER = 34963
FLOAT = 5126
UNSIGNED_SHORT = 5123
UNSIGNED_INT = 5125
TRIANGLES, TRIANGLE_STRIP, TRIANGLE_FAN = 4, 5, 6
COMPONENT_DTYPES = {5120: "i1", 5121: "u1", 5122: "<i2", 5123: "<u2", 5125: "<u4", 5126: "<f4"}
COMPONENT_COUNTS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
GLB_MAGIC = b"glTF"
# An accessor without a buffer view is zeros: at most as many bytes as the model's buffers hold
# (or this, for a tiny model).
MIN_ZEROS_BYTES = 1 << 16


def _pad4(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 4)


def vertex_arrays(
    mesh: Mesh, *, z_up: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Frame 0 of `mesh` as glTF vertices: (indices, positions, normals or None, texcoords or
    None). Every distinct (position, normal, texcoord) corner is one vertex; indices are uint16
    below 65,535 vertices (65535 is uint16's primitive-restart value), else uint32; normals are
    unit length (a zero one takes the normal of a face using the vertex); with `z_up` the
    positions and normals are turned to glTF's +Y up."""
    import numpy as np

    unique, inverse = mesh.unique_vertices()
    vertex_count = len(unique)
    positions = mesh.positions[unique[:, 0]]
    if z_up:
        positions = z_up_to_y_up(positions)
    indices = inverse.astype("<u2" if vertex_count < 65535 else "<u4")
    normals = None
    if len(mesh.normals) and vertex_count:
        first_corner = np.empty(vertex_count, dtype=np.int64)
        first_corner[inverse] = np.arange(len(inverse))
        fallback = mesh.face_normals()[first_corner // 3]
        normals = normalised(mesh.normals[unique[:, 1]], fallback)
        if z_up:
            normals = z_up_to_y_up(normals)
    texcoords = mesh.texcoords[unique[:, 2]] if len(mesh.texcoords) else None
    return indices, positions, normals, texcoords


def build(mesh: Mesh, *, texture: str | None = None, texture_data: bytes | None = None, z_up: bool = True) -> Any:
    """A pygltflib `GLTF2` for frame 0 of `mesh`, with its binary blob set. `texture` names the
    image (a URI relative to the model); with `texture_data` (PNG or JPEG bytes) the image is
    stored in the buffer instead (for .glb)."""
    import pygltflib

    mesh.require_finite("glTF")
    indices, positions, normals, texcoords = vertex_arrays(mesh, z_up=z_up)
    vertex_count = len(positions)
    gltf = pygltflib.GLTF2(asset=pygltflib.Asset(version="2.0", generator="gamepak"))
    node = pygltflib.Node(name=mesh.name or None)
    gltf.scenes = [pygltflib.Scene(nodes=[0])]
    gltf.scene = 0
    gltf.nodes = [node]
    if not vertex_count:
        # glTF accessors cannot be empty: a model without faces is a scene with one empty node.
        return gltf

    chunks: list[bytes] = []
    offset = 0

    def add_view(data: bytes, target: int, stride: int | None) -> int:
        nonlocal offset
        gltf.bufferViews.append(
            pygltflib.BufferView(buffer=0, byteOffset=offset, byteLength=len(data), target=target, byteStride=stride)
        )
        padded = _pad4(data)
        chunks.append(padded)
        offset += len(padded)
        return len(gltf.bufferViews) - 1

    index_type = UNSIGNED_SHORT if indices.dtype.itemsize == 2 else UNSIGNED_INT
    view = add_view(indices.tobytes(), ELEMENT_ARRAY_BUFFER, None)
    gltf.accessors.append(
        pygltflib.Accessor(
            bufferView=view,
            componentType=index_type,
            count=len(indices),
            type="SCALAR",
            min=[int(indices.min())],
            max=[int(indices.max())],
        )
    )
    attributes = pygltflib.Attributes()
    view = add_view(positions.astype("<f4").tobytes(), ARRAY_BUFFER, 12)
    gltf.accessors.append(
        pygltflib.Accessor(
            bufferView=view,
            componentType=FLOAT,
            count=vertex_count,
            type="VEC3",
            min=positions.min(axis=0).tolist(),
            max=positions.max(axis=0).tolist(),
        )
    )
    attributes.POSITION = len(gltf.accessors) - 1
    if normals is not None:
        view = add_view(normals.astype("<f4").tobytes(), ARRAY_BUFFER, 12)
        gltf.accessors.append(pygltflib.Accessor(bufferView=view, componentType=FLOAT, count=vertex_count, type="VEC3"))
        attributes.NORMAL = len(gltf.accessors) - 1
    if texcoords is not None:
        view = add_view(texcoords.astype("<f4").tobytes(), ARRAY_BUFFER, 8)
        gltf.accessors.append(pygltflib.Accessor(bufferView=view, componentType=FLOAT, count=vertex_count, type="VEC2"))
        attributes.TEXCOORD_0 = len(gltf.accessors) - 1

    material = pygltflib.Material(
        name="material",
        pbrMetallicRoughness=pygltflib.PbrMetallicRoughness(metallicFactor=0.0, roughnessFactor=1.0),
        doubleSided=False,
    )
    if texture_data is not None:
        mime = "image/png" if texture_data[:8] == b"\x89PNG\r\n\x1a\n" else "image/jpeg"
        if mime == "image/jpeg" and texture_data[:3] != b"\xff\xd8\xff":
            raise ModelError("an embedded texture must be a PNG or JPEG image")
        image_view = add_view(texture_data, 0, None)
        gltf.bufferViews[image_view].target = None
        gltf.images = [pygltflib.Image(bufferView=image_view, mimeType=mime, name=texture)]
    elif texture:
        from urllib.parse import quote

        gltf.images = [pygltflib.Image(uri=quote(texture.replace(os.sep, "/")))]
    if texture or texture_data is not None:
        gltf.samplers = [pygltflib.Sampler(wrapS=10497, wrapT=10497)]
        gltf.textures = [pygltflib.Texture(source=0, sampler=0)]
        material.pbrMetallicRoughness.baseColorTexture = pygltflib.TextureInfo(index=0)
    gltf.materials = [material]
    gltf.meshes = [
        pygltflib.Mesh(
            name=mesh.name or None,
            primitives=[pygltflib.Primitive(attributes=attributes, indices=0, material=0, mode=TRIANGLES)],
        )
    ]
    node.mesh = 0
    blob = b"".join(chunks)
    gltf.buffers = [pygltflib.Buffer(byteLength=len(blob))]
    gltf.set_binary_blob(blob)
    return gltf


def write(
    mesh: Mesh,
    *,
    binary: bool = True,
    texture: str | None = None,
    texture_data: bytes | None = None,
    z_up: bool = True,
) -> bytes:
    """The `.glb` (binary) or `.gltf` (JSON, embedded buffer) bytes of frame 0 of `mesh`."""
    gltf = build(mesh, texture=texture, texture_data=texture_data, z_up=z_up)
    blob = gltf.binary_blob()
    if binary:
        text = gltf.gltf_to_json(separators=(",", ":"), indent=None).encode("utf-8")
        return _glb(text, blob)
    if blob is not None:
        gltf.buffers[0].uri = "data:application/octet-stream;base64," + base64.b64encode(blob).decode("ascii")
    return (gltf.gltf_to_json(indent=1) + "\n").encode("utf-8")


def _glb(json_chunk: bytes, blob: bytes | None) -> bytes:
    """The GLB container: 12-byte header, a space-padded JSON chunk, an optional BIN chunk."""
    import struct

    json_chunk += b" " * (-len(json_chunk) % 4)
    parts = [struct.pack("<I4s", len(json_chunk), b"JSON"), json_chunk]
    if blob is not None:
        blob = _pad4(blob)
        parts += [struct.pack("<I4s", len(blob), b"BIN\0"), blob]
    body = b"".join(parts)
    return struct.pack("<4sII", GLB_MAGIC, 2, 12 + len(body)) + body


# ----------------------------------------------------------------------------------- reading


def _load(data: bytes, label: str) -> Any:
    import pygltflib

    try:
        if data[:4] == GLB_MAGIC:
            gltf = pygltflib.GLTF2.load_from_bytes(data)
        else:
            gltf = pygltflib.GLTF2.from_json(data.decode("utf-8"))
    except Exception as exc:  # pygltflib raises whatever its parser meets
        raise ModelError(f"{label}: not a readable glTF file: {type(exc).__name__}: {exc}") from None
    if gltf is None or not isinstance(gltf, pygltflib.GLTF2):
        raise ModelError(f"{label}: not a readable glTF file")
    return gltf


def _buffers(gltf: Any, label: str, folder: str | None) -> list[bytes]:
    result = []
    for number, buffer in enumerate(gltf.buffers or []):
        uri = buffer.uri
        if uri is None:
            blob = gltf.binary_blob()
            if blob is None:
                raise ModelError(f"{label}: buffer {number} has no data")
            result.append(bytes(blob))
        elif uri.startswith("data:"):
            _, _, payload = uri.partition(",")
            try:
                result.append(base64.b64decode(payload, validate=False))
            except ValueError as exc:
                raise ModelError(f"{label}: buffer {number}: bad data URI: {exc}") from None
        else:
            if folder is None:
                raise ModelError(f"{label}: buffer {number} is an external file ({uri}); read the model from a path")
            result.append(_external_buffer(folder, uri, f"{label}: buffer {number} ({uri})"))
    return result


def _external_buffer(folder: str, uri: str, where: str) -> bytes:
    """The file a buffer's relative URI names, which must lie in the glTF's folder or below,
    links followed: a model from a stranger must not read (and carry into a pack) other files."""
    from urllib.parse import unquote

    relative = unquote(uri)
    if "\0" in relative:
        raise ModelError(f"{where}: not a file name (it holds a NUL): refused")
    if ":" in relative.split("/", 1)[0] or relative.startswith(("/", "\\")) or os.path.isabs(relative):
        raise ModelError(f"{where}: not a file beside the glTF (a URI scheme or an absolute path): refused")
    base = os.path.realpath(folder)
    target = os.path.realpath(os.path.join(base, relative))
    if os.path.commonpath([base, target]) != base:
        raise ModelError(f"{where}: leads outside the glTF's folder: refused")
    from ..core.files import read_file

    return read_file(target, error=ModelError, label=where)


def _accessor(gltf: Any, buffers: list[bytes], index: Any, label: str) -> np.ndarray:
    """The values of accessor `index` as a (count, components) array, checked against its
    buffer view before anything is allocated."""
    import numpy as np

    if not isinstance(index, int) or not 0 <= index < len(gltf.accessors):
        raise ModelError(f"{label}: accessor {index!r} does not exist")
    accessor = gltf.accessors[index]
    if accessor.sparse is not None:
        raise UnsupportedFeatureError(f"{label}: accessor {index} is sparse (not supported)")
    if accessor.componentType not in COMPONENT_DTYPES or accessor.type not in COMPONENT_COUNTS:
        raise ModelError(f"{label}: accessor {index} has an unknown type {accessor.componentType}/{accessor.type}")
    dtype = np.dtype(COMPONENT_DTYPES[accessor.componentType])
    width = COMPONENT_COUNTS[accessor.type]
    count = accessor.count
    if not isinstance(count, int) or count < 0:
        raise ModelError(f"{label}: accessor {index} has a bad count {count!r}")
    if accessor.bufferView is None:
        # Zeros with no bytes behind them: a count from the file alone would allocate anything.
        if count * width * dtype.itemsize > max(sum(map(len, buffers)), MIN_ZEROS_BYTES):
            raise ModelError(f"{label}: accessor {index} holds {count} values of zeros, more than the model's data")
        return np.zeros((count, width), dtype)
    if not 0 <= accessor.bufferView < len(gltf.bufferViews):
        raise ModelError(f"{label}: accessor {index} names a missing buffer view")
    view = gltf.bufferViews[accessor.bufferView]
    if not isinstance(view.buffer, int) or not 0 <= view.buffer < len(buffers):
        raise ModelError(f"{label}: buffer view {accessor.bufferView} names a missing buffer")
    data = buffers[view.buffer]
    element = dtype.itemsize * width
    stride = view.byteStride or element
    view_start = view.byteOffset or 0
    start = view_start + (accessor.byteOffset or 0)
    end = start + (stride * (count - 1) + element if count else 0)
    if view_start < 0 or start < 0 or stride < element or end > view_start + (view.byteLength or 0) or end > len(data):
        raise ModelError(f"{label}: accessor {index} runs past its buffer view or buffer")
    if start % dtype.itemsize or stride % dtype.itemsize:
        # Unaligned data: copy into place byte-wise.
        raw = np.frombuffer(data, np.uint8, end - start, start) if count else np.zeros(0, np.uint8)
        rows = np.lib.stride_tricks.as_strided(raw, (count, element), (stride, 1)) if count else raw.reshape(0, element)
        values = np.ascontiguousarray(rows).view(dtype).reshape(count, width)
    else:
        values = np.ndarray((count, width), dtype, buffer=data, offset=start, strides=(stride, dtype.itemsize)).copy()
    if accessor.normalized and dtype.kind in "iu":
        limit = float(np.iinfo(dtype).max)
        return np.maximum(values.astype(np.float64) / limit, -1.0)
    return values


def node_matrix(node: Any) -> np.ndarray:
    """A node's local 4x4 transform (glTF stores matrices column-major)."""
    import numpy as np

    if node.matrix:
        return np.array(node.matrix, dtype=np.float64).reshape(4, 4).T
    result = np.eye(4)
    scale = np.diag([*(node.scale or [1.0, 1.0, 1.0]), 1.0])
    x, y, z, w = node.rotation or [0.0, 0.0, 0.0, 1.0]
    rotation = np.eye(4)
    rotation[:3, :3] = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ]
    translation = np.eye(4)
    translation[:3, 3] = node.translation or [0.0, 0.0, 0.0]
    return result @ translation @ rotation @ scale


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


@dataclass
class NodeMeshes:
    """The triangle primitives of one glTF node, in world coordinates (node transforms applied,
    glTF's Y up): what `read` merges, and what a scene import reads object by object."""

    number: int
    name: str
    extras: Any
    pieces: list[Mesh]
    # The names (else URIs) of the images its materials' base colour textures show.
    images: list[str]


def read_nodes(data: bytes, *, name: str = "", path: str | None = None) -> tuple[list[NodeMeshes], list[str]]:
    """Every node of the default scene that draws triangles, with its pieces (see `NodeMeshes`),
    and the issues met (primitives that are not triangles)."""
    import functools

    import numpy as np

    from .mesh import Mesh

    label = path or name or "<bytes>"
    gltf = _load(data, label)
    buffers = _buffers(gltf, label, os.path.dirname(os.path.abspath(path)) if path else None)
    nodes = gltf.nodes or []
    if gltf.scenes:
        scene_number = gltf.scene if isinstance(gltf.scene, int) and 0 <= gltf.scene < len(gltf.scenes) else 0
        roots = list(gltf.scenes[scene_number].nodes or [])
    else:
        children = {child for node in nodes for child in (node.children or [])}
        roots = [number for number in range(len(nodes)) if number not in children]
    found: list[NodeMeshes] = []
    issues: list[str] = []
    stack = [(root, np.eye(4), 0) for root in roots]
    reached: set[int] = set()
    while stack:
        number, parent, depth = stack.pop()
        if not isinstance(number, int) or not 0 <= number < len(nodes) or depth > 64:
            raise ModelError(f"{label}: bad node reference {number!r} (or a cycle)")
        # glTF's nodes form trees: a node listed twice would be drawn twice, and a few nodes
        # naming the next one twice over would be drawn 2**64 times.
        if number in reached:
            raise ModelError(f"{label}: node {number} is reached twice (glTF nodes form trees)")
        reached.add(number)
        node = nodes[number]
        world = parent @ node_matrix(node)
        stack.extend((child, world, depth + 1) for child in (node.children or []))
        if node.mesh is None:
            continue
        if not isinstance(node.mesh, int) or not 0 <= node.mesh < len(gltf.meshes):
            raise ModelError(f"{label}: node {number} names a missing mesh")
        pieces: list[Mesh] = []
        for primitive in gltf.meshes[node.mesh].primitives:
            mode = TRIANGLES if primitive.mode is None else primitive.mode
            if mode not in (TRIANGLES, TRIANGLE_STRIP, TRIANGLE_FAN):
                issues.append(f"a primitive of mesh {node.mesh} draws points or lines: skipped")
                continue
            attributes = primitive.attributes
            if attributes.POSITION is None:
                continue
            where = f"{label}: a primitive of mesh {node.mesh}"
            values = functools.partial(_vertex_values, gltf, buffers, label, where)
            positions = values("POSITION", attributes.POSITION, 3, None)
            normals = None
            if attributes.NORMAL is not None:
                normals = values("NORMAL", attributes.NORMAL, 3, len(positions))
            texcoords = None
            if attributes.TEXCOORD_0 is not None:
                texcoords = values("TEXCOORD_0", attributes.TEXCOORD_0, 2, len(positions))
            if primitive.indices is not None:
                indices = _accessor(gltf, buffers, primitive.indices, label).reshape(-1).astype(np.int64)
            else:
                indices = np.arange(len(positions), dtype=np.int64)
            if indices.size and (indices.min() < 0 or indices.max() >= len(positions)):
                raise ModelError(
                    f"{label}: a primitive of mesh {node.mesh} has an index past its {len(positions)} vertices"
                )
            if not np.allclose(world, np.eye(4)):
                positions = positions @ world[:3, :3].T + world[:3, 3]
                if normals is not None:
                    normals = normals @ np.linalg.inv(world[:3, :3])
                    normals = normalised(normals)
            triangles = _triangles(indices, mode)
            if np.linalg.det(world[:3, :3]) < 0:
                # A mirroring transform turns faces over: glTF then takes the other winding as front.
                triangles = triangles[:, ::-1]
            piece = Mesh.from_vertices(positions, triangles, normals, texcoords)
            pieces.append(piece)
        if pieces:
            found.append(NodeMeshes(number, node.name or "", node.extras, pieces, _image_names(gltf, node.mesh)))
    return found, issues


def _vertex_values(
    gltf: Any, buffers: list[bytes], label: str, where: str, attribute: str, index: Any, width: int, count: int | None
) -> np.ndarray:
    """The values of a vertex attribute's accessor as float64 rows of `width` (POSITION VEC3,
    NORMAL VEC3, TEXCOORD_0 VEC2, as glTF requires), `count` of them when given (every attribute
    of a primitive has one value per vertex)."""
    import numpy as np

    values = _accessor(gltf, buffers, index, label)
    if values.shape[1] != width:
        raise ModelError(f"{where}: {attribute} has {values.shape[1]} components, not {width}")
    if count is not None and len(values) != count:
        raise ModelError(f"{where}: {len(values)} {attribute} values for {count} vertices")
    return values.astype(np.float64)


def _image_names(gltf: Any, mesh_number: int) -> list[str]:
    names = []
    for primitive in gltf.meshes[mesh_number].primitives:
        try:
            material = gltf.materials[primitive.material]
            texture = gltf.textures[material.pbrMetallicRoughness.baseColorTexture.index]
            image = gltf.images[texture.source]
        except (TypeError, IndexError, AttributeError):
            continue
        label = image.name or image.uri
        if isinstance(label, str) and not label.startswith("data:"):
            from urllib.parse import unquote

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
