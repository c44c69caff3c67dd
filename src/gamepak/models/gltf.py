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
from typing import TYPE_CHECKING, Any

from ..core.jsontext import JSON_INDENT
from .mesh import ModelError, normalised, z_up_to_y_up

if TYPE_CHECKING:
    import numpy as np

    from .mesh import Mesh

ARRAY_BUFFER = 34962
ELEMENT_ARRAY_BUFFER = 34963
FLOAT = 5126
UNSIGNED_SHORT = 5123
UNSIGNED_INT = 5125
# The format's numbers live with the document reader, below both this writer and the reader;
# named here too, as callers have always found them here.
from .gltf_document import (  # noqa: E402, F401
    COMPONENT_COUNTS,
    COMPONENT_DTYPES,
    GLB_MAGIC,
    MIN_ZEROS_BYTES,
    TRIANGLE_FAN,
    TRIANGLE_STRIP,
    TRIANGLES,
)


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
    return document_bytes(build(mesh, texture=texture, texture_data=texture_data, z_up=z_up), binary=binary)


def document_bytes(gltf: Any, *, binary: bool = True) -> bytes:
    """A pygltflib `GLTF2` (its binary blob set) as `.glb` bytes, or as `.gltf` JSON with the
    buffer embedded as a data URI."""
    blob = gltf.binary_blob()
    if binary:
        text = gltf.gltf_to_json(separators=(",", ":"), indent=None).encode("utf-8")
        return _glb(text, blob)
    if blob is not None:
        gltf.buffers[0].uri = "data:application/octet-stream;base64," + base64.b64encode(blob).decode("ascii")
    return (gltf.gltf_to_json(indent=JSON_INDENT) + "\n").encode("utf-8")


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


# Reading lives in gltf_read.py; these names are found there when first used.
_READING = ("NodeMeshes", "merge", "node_matrix", "read", "read_nodes")


def __getattr__(name: str) -> Any:
    if name in _READING:
        from . import gltf_read

        return getattr(gltf_read, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
