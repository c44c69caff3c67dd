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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import UnsupportedFeatureError
from .mesh import ModelError, normalised, y_up_to_z_up, z_up_to_y_up

if TYPE_CHECKING:
    from collections.abc import Callable

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


@dataclass
class _Document:
    """A glTF document: its JSON (plain dicts: pygltflib's dataclasses took most of a scene
    import's time to build for a 2,000-node track) and the GLB's BIN chunk, if any."""

    json: dict[str, Any]
    blob: bytes | memoryview | None
    checked: dict[str, list[Any]] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        return self.json.get(name)

    def items(self, name: str, label: str) -> list[Any]:
        """The top-level array `name` (empty when absent); a ModelError when it is not an array
        of objects. Checked once."""
        found = self.checked.get(name)
        if found is not None:
            return found
        values = self.json.get(name)
        if values is None:
            values = []
        if not isinstance(values, list) or not all(isinstance(value, dict) for value in values):
            raise ModelError(f"{label}: {name} is not a list of objects")
        self.checked[name] = values
        return values


def _load(data: bytes, label: str) -> _Document:
    import struct

    blob = None
    if data[:4] == GLB_MAGIC:
        if len(data) < 20:
            raise ModelError(f"{label}: not a readable glTF file: a GLB header cut short")
        _, _, total = struct.unpack_from("<4sII", data, 0)
        end = min(total, len(data))
        json_length, kind = struct.unpack_from("<I4s", data, 12)
        if kind != b"JSON" or 20 + json_length > end:
            raise ModelError(f"{label}: not a readable glTF file: offset 12: no JSON chunk of {json_length} bytes")
        text = data[20 : 20 + json_length]
        position = 20 + json_length + (-json_length % 4)
        if position + 8 <= end:
            blob_length, kind = struct.unpack_from("<I4s", data, position)
            if kind == b"BIN\0":
                if position + 8 + blob_length > end:
                    raise ModelError(f"{label}: not a readable glTF file: offset {position}: BIN chunk cut short")
                # A view, not a copy: a track's scene holds tens of megabytes of images.
                blob = memoryview(data)[position + 8 : position + 8 + blob_length]
    else:
        text = data
    try:
        document = _parse_json(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise ModelError(f"{label}: not a readable glTF file: {reason}") from None
    if not isinstance(document, dict):
        raise ModelError(f"{label}: not a readable glTF file: not a JSON object")
    return _Document(document, blob)


def _parse_json(text: bytes) -> Any:
    """JSON text (UTF-8, a BOM allowed): by orjson where installed (several times the standard
    library's speed on a track's megabytes of JSON; it refuses nesting past 1,024 levels), else
    the standard library (RecursionError past its own depth)."""
    import json

    if text.startswith(b"\xef\xbb\xbf"):
        text = text[3:]
    try:
        import orjson
    except ImportError:
        return json.loads(text.decode("utf-8"))
    return orjson.loads(text)


def _is_index(value: Any, count: int) -> bool:
    """Whether `value` is an index into a list of `count` (an int; JSON's true is not one)."""
    return type(value) is int and 0 <= value < count


def _whole(value: Any, default: int = 0) -> int | None:
    """A non-negative integer field (None when it is something else)."""
    if value is None:
        return default
    return value if type(value) is int and value >= 0 else None


def _buffers(gltf: _Document, label: str, folder: str | None) -> list[bytes | memoryview]:
    result = []
    for number, buffer in enumerate(gltf.items("buffers", label)):
        uri = buffer.get("uri")
        if uri is None:
            if gltf.blob is None:
                raise ModelError(f"{label}: buffer {number} has no data")
            result.append(gltf.blob)
        elif not isinstance(uri, str):
            raise ModelError(f"{label}: buffer {number}: its uri is not text")
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
    import stat
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
    try:
        # Not blocking on a FIFO or a device: only a regular file is read.
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise ModelError(f"{where}: {exc.strerror}") from None
    with open(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ModelError(f"{where}: not a regular file: refused")
        try:
            return handle.read()
        except OSError as exc:
            raise ModelError(f"{where}: {exc.strerror}") from None


@dataclass
class _Span:
    """Where an accessor's values lie: `data[start:]`, `count` rows of `width` values of `dtype`
    every `stride` bytes (`data` None: zeros, no buffer view)."""

    data: bytes | None
    dtype: Any
    width: int
    count: int
    start: int = 0
    stride: int = 0
    normalized: bool = False

    @property
    def packed_bytes(self) -> bytes | None:
        """The values as stored, when they lie one after another (else None)."""
        if self.data is None or self.stride != self.dtype.itemsize * self.width:
            return None
        return self.data[self.start : self.start + self.stride * self.count]


def _accessor(gltf: _Document, buffers: list[bytes | memoryview], index: Any, label: str) -> np.ndarray:
    """The values of accessor `index` as a (count, components) array, checked against its
    buffer view before anything is allocated."""
    import numpy as np

    span = _accessor_span(gltf, buffers, index, label)
    dtype, width, count, start, stride, data = span.dtype, span.width, span.count, span.start, span.stride, span.data
    if data is None:
        return np.zeros((count, width), dtype)
    element = dtype.itemsize * width
    end = start + (stride * (count - 1) + element if count else 0)
    if start % dtype.itemsize or stride % dtype.itemsize:
        # Unaligned data: copy into place byte-wise.
        raw = np.frombuffer(data, np.uint8, end - start, start) if count else np.zeros(0, np.uint8)
        rows = np.lib.stride_tricks.as_strided(raw, (count, element), (stride, 1)) if count else raw.reshape(0, element)
        values = np.ascontiguousarray(rows).view(dtype).reshape(count, width)
    elif stride == element:
        values = np.frombuffer(data, dtype, count * width, start).reshape(count, width).copy()
    else:
        values = np.ndarray((count, width), dtype, buffer=data, offset=start, strides=(stride, dtype.itemsize)).copy()
    if span.normalized and dtype.kind in "iu":
        limit = float(np.iinfo(dtype).max)
        return np.maximum(values.astype(np.float64) / limit, -1.0)
    return values


def _accessor_span(gltf: _Document, buffers: list[bytes | memoryview], index: Any, label: str) -> _Span:
    """Where accessor `index`'s values lie, every field checked against its buffer view and
    buffer (nothing allocated)."""
    import numpy as np

    accessors = gltf.items("accessors", label)
    if not _is_index(index, len(accessors)):
        raise ModelError(f"{label}: accessor {index!r} does not exist")
    accessor = accessors[index]
    if accessor.get("sparse") is not None:
        raise UnsupportedFeatureError(f"{label}: accessor {index} is sparse (not supported)")
    component, kind = accessor.get("componentType"), accessor.get("type")
    if not isinstance(kind, str) or type(component) is not int:
        raise ModelError(f"{label}: accessor {index} has an unknown type {component!r}/{kind!r}")
    if component not in COMPONENT_DTYPES or kind not in COMPONENT_COUNTS:
        raise ModelError(f"{label}: accessor {index} has an unknown type {component}/{kind}")
    dtype = np.dtype(COMPONENT_DTYPES[component])
    width = COMPONENT_COUNTS[kind]
    count = accessor.get("count")
    if type(count) is not int or count < 0:
        raise ModelError(f"{label}: accessor {index} has a bad count {count!r}")
    if accessor.get("bufferView") is None:
        # Zeros with no bytes behind them: a count from the file alone would allocate anything.
        if count * width * dtype.itemsize > max(sum(map(len, buffers)), MIN_ZEROS_BYTES):
            raise ModelError(f"{label}: accessor {index} holds {count} values of zeros, more than the model's data")
        return _Span(None, dtype, width, count)
    views = gltf.items("bufferViews", label)
    if not _is_index(accessor.get("bufferView"), len(views)):
        raise ModelError(f"{label}: accessor {index} names a missing buffer view")
    view = views[accessor.get("bufferView")]
    if not _is_index(view.get("buffer"), len(buffers)):
        raise ModelError(f"{label}: buffer view {accessor.get('bufferView')} names a missing buffer")
    data = buffers[view.get("buffer")]
    element = dtype.itemsize * width
    stride, view_start = _whole(view.get("byteStride")), _whole(view.get("byteOffset"))
    offset, view_length = _whole(accessor.get("byteOffset")), _whole(view.get("byteLength"))
    if stride is None or view_start is None or offset is None or view_length is None:
        raise ModelError(
            f"{label}: accessor {index} or its buffer view has an offset, length or stride that is not a count"
        )
    stride = stride or element
    start = view_start + offset
    end = start + (stride * (count - 1) + element if count else 0)
    if stride < element or end > view_start + view_length or end > len(data):
        raise ModelError(f"{label}: accessor {index} runs past its buffer view or buffer")
    return _Span(data, dtype, width, count, start, stride, accessor.get("normalized") is True)


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


def read_nodes(data: bytes, *, name: str = "", path: str | None = None) -> tuple[list[NodeMeshes], list[str]]:
    """Every node of the default scene that draws triangles, with its pieces (see `NodeMeshes`),
    and the issues met (primitives that are not triangles). Each mesh's accessors are read
    once, and each (mesh, world transform) made once, however many nodes draw it."""
    import numpy as np

    label = path or name or "<bytes>"
    gltf = _load(data, label)
    buffers = _buffers(gltf, label, os.path.dirname(os.path.abspath(path)) if path else None)
    nodes = gltf.items("nodes", label)
    meshes = gltf.items("meshes", label)
    scenes = gltf.items("scenes", label)
    if scenes:
        scene_number = gltf.scene if _is_index(gltf.scene, len(scenes)) else 0
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

    placed: dict[tuple[int, bytes], _Placed] = {}
    image_names: dict[int, list[str]] = {}
    while stack:
        number, parent, depth = stack.pop()
        if not _is_index(number, len(nodes)) or depth > 64:
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
        if not _is_index(node.get("mesh"), len(meshes)):
            raise ModelError(f"{label}: node {number} names a missing mesh")
        mesh_number = node.get("mesh")
        if mesh_number not in image_names:
            _check_modes(meshes[mesh_number], mesh_number, label, issues)
            image_names[mesh_number] = _image_names(gltf, meshes[mesh_number])
        key = (mesh_number, world.tobytes())
        made = placed.get(key)
        if made is None:
            made = placed[key] = _Placed(local, stored, mesh_number, world, f"{label}: {_node_label(number, node)}")
        mesh_name = meshes[mesh_number].get("name")
        found.append(
            NodeMeshes(
                number,
                node.get("name") if isinstance(node.get("name"), str) else "",
                node.get("extras"),
                image_names[mesh_number],
                mesh_number,
                mesh_name if isinstance(mesh_name, str) else "",
                made.pieces,
                made.stored,
            )
        )
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
    gltf: _Document, buffers: list[bytes | memoryview], label: str, mesh: Any
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
    indices = _accessor_span(gltf, buffers, primitive.get("indices"), label)
    if indices.dtype.str not in ("<u2", "<u4") or indices.width != 1:
        return None
    found: list[bytes | None] = []
    for name, width in (("POSITION", 3), ("NORMAL", 3), ("TEXCOORD_0", 2)):
        if attributes.get(name) is None:
            found.append(None)
            continue
        span = _accessor_span(gltf, buffers, attributes.get(name), label)
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
    gltf: _Document, buffers: list[bytes | memoryview], label: str, mesh: Any, mesh_number: int
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
            indices = _accessor(gltf, buffers, primitive.get("indices"), label).reshape(-1).astype(np.int64)
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
    gltf: _Document,
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

    values = _accessor(gltf, buffers, index, label)
    if values.shape[1] != width:
        raise ModelError(f"{where}: {attribute} has {values.shape[1]} components, not {width}")
    if count is not None and len(values) != count:
        raise ModelError(f"{where}: {len(values)} {attribute} values for {count} vertices")
    return values.astype(np.float64)


def _image_names(gltf: _Document, mesh: Any) -> list[str]:
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
