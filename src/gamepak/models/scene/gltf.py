"""A scene as one glTF 2.0 file: the node tree as read, one mesh per (model, material), one
material per distinct `SceneMaterial`, one texture per (image, sampler), one image per file.

With ~2,000 objects a buffer view per accessor would bloat the JSON, so the buffer holds four
views shared by every object and each accessor addresses its object by byte offset:

| view | target               | holds                                          |
|------|----------------------|------------------------------------------------|
| 0    | ELEMENT_ARRAY_BUFFER | every object's indices (uint16, or uint32 past 65,534 vertices), 4-byte aligned |
| 1    | ARRAY_BUFFER         | POSITION, float VEC3 (turned to +Y up)         |
| 2    | ARRAY_BUFFER         | NORMAL, float VEC3, unit length                |
| 3    | ARRAY_BUFFER         | TEXCOORD_0, float VEC2 (kept as stored: VDrift's v = 0 is the image's top, as glTF's) |
| 4..  | (none)               | the embedded images (.glb)                     |

Unlit materials use `KHR_materials_unlit`, listed in `extensionsUsed` only, so viewers without
it still draw the texture.
"""

from __future__ import annotations

import base64
import os
from typing import TYPE_CHECKING, Any

from ..gltf import (
    ARRAY_BUFFER,
    ELEMENT_ARRAY_BUFFER,
    FLOAT,
    TRIANGLES,
    UNSIGNED_INT,
    UNSIGNED_SHORT,
    vertex_arrays_many,
)
from .common import LINEAR, LINEAR_MIPMAP_LINEAR, Scene, SceneMaterial, SceneNode

if TYPE_CHECKING:
    import numpy as np

UNLIT = "KHR_materials_unlit"


class _Buffer:
    """The four shared views, filled object by object."""

    def __init__(self) -> None:
        self.parts: list[list[bytes]] = [[], [], [], []]
        self.sizes = [0, 0, 0, 0]

    def append(self, view: int, data: bytes) -> int:
        offset = self.sizes[view]
        padded = data + b"\0" * (-len(data) % 4)
        self.parts[view].append(padded)
        self.sizes[view] += len(padded)
        return offset


def build(
    scene: Scene, *, embed_images: bool = True, image_uris: dict[str, str] | None = None
) -> tuple[dict[str, Any], list[bytes]]:
    """(the glTF JSON document as a dict, the binary buffer in parts, 4-byte aligned) of `scene`. Images are embedded in
    the buffer (`embed_images`), else referenced by the URI `image_uris` gives each image key.

    Plain dicts, not pygltflib's classes: serialising those costs seconds for a 2,000-object
    track (a deep copy of every node), most of an export's time."""
    buffer = _Buffer()
    accessors: list[dict[str, Any]] = []
    meshes: list[dict[str, Any]] = []
    mesh_numbers: dict[tuple[int, SceneMaterial | None], int | None] = {}
    materials: dict[SceneMaterial, int] = {}
    material_list: list[dict[str, Any]] = []
    samplers: dict[tuple[int, int, int], int] = {}
    textures: dict[tuple[str, int], int] = {}
    texture_list: list[dict[str, Any]] = []
    images: list[dict[str, Any]] = []
    image_numbers: dict[str, int] = {}
    image_blobs: list[tuple[int, bytes]] = []

    def image_number(key: str) -> int:
        if key not in image_numbers:
            image = scene.images[key]
            entry: dict[str, Any] = {"name": image.name}
            if embed_images:
                entry["mimeType"] = image.mime_type
                image_blobs.append((len(images), image.data))
            else:
                entry["uri"] = (image_uris or {})[key]
            image_numbers[key] = len(images)
            images.append(entry)
        return image_numbers[key]

    def material_number(material: SceneMaterial) -> int:
        if material in materials:
            return materials[material]
        pbr: dict[str, Any] = {"metallicFactor": 0.0, "roughnessFactor": 1.0}
        if material.image is not None:
            sampler_key = (material.wrap_s, material.wrap_t, LINEAR_MIPMAP_LINEAR if material.mipmap else LINEAR)
            samplers.setdefault(sampler_key, len(samplers))
            texture_key = (material.image, samplers[sampler_key])
            if texture_key not in textures:
                textures[texture_key] = len(texture_list)
                texture_list.append({"source": image_number(material.image), "sampler": texture_key[1]})
            pbr["baseColorTexture"] = {"index": textures[texture_key]}
        entry: dict[str, Any] = {
            "name": scene.images[material.image].name if material.image else "untextured",
            "pbrMetallicRoughness": pbr,
            "alphaMode": material.alpha_mode,
            "doubleSided": material.double_sided,
        }
        if material.alpha_mode == "MASK":
            entry["alphaCutoff"] = 0.5
        if material.unlit:
            entry["extensions"] = {UNLIT: {}}
        materials[material] = len(material_list)
        material_list.append(entry)
        return materials[material]

    def mesh_number(node: SceneNode) -> int | None:
        assert node.mesh is not None
        key = (id(node.mesh), node.material)
        if key in mesh_numbers:
            return mesh_numbers[key]
        indices, positions, normals, texcoords = vertices[id(node.mesh)]
        if not len(positions):
            mesh_numbers[key] = None
            return None
        attributes = {"POSITION": _accessor(accessors, buffer, 1, positions, "VEC3", bounds=True)}
        if normals is not None:
            attributes["NORMAL"] = _accessor(accessors, buffer, 2, normals, "VEC3")
        if texcoords is not None:
            attributes["TEXCOORD_0"] = _accessor(accessors, buffer, 3, texcoords, "VEC2")
        primitive: dict[str, Any] = {
            "attributes": attributes,
            "indices": _accessor(accessors, buffer, 0, indices, "SCALAR"),
            "mode": TRIANGLES,
        }
        if node.material is not None:
            primitive["material"] = material_number(node.material)
        mesh_numbers[key] = len(meshes)
        meshes.append({"name": node.mesh.name or node.name, "primitives": [primitive]})
        return mesh_numbers[key]

    distinct = {id(node.mesh): node.mesh for node in scene.root.walk() if node.mesh is not None}
    vertices = dict(zip(distinct, vertex_arrays_many(list(distinct.values()))))
    nodes: list[dict[str, Any]] = []

    def add_node(node: SceneNode) -> int:
        number = len(nodes)
        entry: dict[str, Any] = {"name": node.name}
        nodes.append(entry)
        if node.translation is not None:
            entry["translation"] = list(node.translation)
        if node.rotation is not None:
            entry["rotation"] = list(node.rotation)
        if node.scale is not None:
            entry["scale"] = list(node.scale)
        if node.extras:
            entry["extras"] = node.extras
        if node.mesh is not None:
            found = mesh_number(node)
            if found is not None:
                entry["mesh"] = found
        if node.children:
            entry["children"] = [add_node(child) for child in node.children]
        return number

    root = add_node(scene.root)
    document: dict[str, Any] = {
        "asset": {"version": "2.0", "generator": "gamepak"},
        "scene": 0,
        "scenes": [{"name": scene.root.name, "nodes": [root]}],
        "nodes": nodes,
    }

    # The shared views, then one view per embedded image.
    views: list[dict[str, Any]] = []
    blob_parts: list[bytes] = []
    offset = 0
    targets = (ELEMENT_ARRAY_BUFFER, ARRAY_BUFFER, ARRAY_BUFFER, ARRAY_BUFFER)
    strides = (None, 12, 12, 8)
    view_numbers: dict[int, int] = {}
    for view, parts in enumerate(buffer.parts):
        if not parts:
            continue
        data = b"".join(parts)
        view_numbers[view] = len(views)
        view_entry: dict[str, Any] = {"buffer": 0, "byteOffset": offset, "byteLength": len(data)}
        view_entry["target"] = targets[view]
        if strides[view] is not None:
            view_entry["byteStride"] = strides[view]
        views.append(view_entry)
        blob_parts.append(data)
        offset += len(data)
    for accessor in accessors:
        accessor["bufferView"] = view_numbers[accessor["bufferView"]]
    for image_index, data in image_blobs:
        images[image_index]["bufferView"] = len(views)
        views.append({"buffer": 0, "byteOffset": offset, "byteLength": len(data)})
        blob_parts += [data, b"\0" * (-len(data) % 4)]  # images are not copied: written as they are
        offset += len(data) + (-len(data) % 4)
    for name, values in (
        ("meshes", meshes),
        ("accessors", accessors),
        ("bufferViews", views),
        ("materials", material_list),
        ("textures", texture_list),
        ("images", images),
        (
            "samplers",
            [
                {"magFilter": LINEAR, "minFilter": key[2], "wrapS": key[0], "wrapT": key[1]}
                for key in sorted(samplers, key=samplers.__getitem__)
            ],
        ),
    ):
        if values:
            document[name] = values
    if any(material.unlit for material in materials):
        document["extensionsUsed"] = [UNLIT]
    if offset:
        document["buffers"] = [{"byteLength": offset}]
    return document, blob_parts


def _accessor(
    accessors: list[dict[str, Any]], buffer: _Buffer, view: int, values: np.ndarray, kind: str, bounds: bool = False
) -> int:
    if kind == "SCALAR":
        component = UNSIGNED_SHORT if values.dtype.itemsize == 2 else UNSIGNED_INT
        data = values.tobytes()
        entry: dict[str, Any] = {"min": [int(values.min())], "max": [int(values.max())]}
    else:
        component = FLOAT
        values = values.astype("<f4")
        data = values.tobytes()
        entry = {"min": values.min(axis=0).tolist(), "max": values.max(axis=0).tolist()} if bounds else {}
    # bufferView holds the shared view's slot (0-3) until the views are numbered.
    entry.update(
        bufferView=view, byteOffset=buffer.append(view, data), componentType=component, count=len(values), type=kind
    )
    accessors.append(entry)
    return len(accessors) - 1


def glb_parts(scene: Scene) -> list[bytes]:
    """The `.glb` file of `scene` (images embedded) as parts to write one after another: the
    images are not copied into one buffer (a track's are tens of megabytes)."""
    import json
    import struct

    from ..gltf import GLB_MAGIC

    document, blob_parts = build(scene, embed_images=True)
    text = json.dumps(document, separators=(",", ":"), allow_nan=False).encode("utf-8")
    text += b" " * (-len(text) % 4)
    parts = [struct.pack("<I4s", len(text), b"JSON"), text]
    blob_size = sum(len(part) for part in blob_parts)
    if blob_size:
        parts += [struct.pack("<I4s", blob_size, b"BIN\0"), *blob_parts]
    total = sum(len(part) for part in parts)
    return [struct.pack("<4sII", GLB_MAGIC, 2, 12 + total), *parts]


def write(scene: Scene, *, binary: bool = True, image_uris: dict[str, str] | None = None) -> bytes:
    """The `.glb` bytes of `scene` (images embedded), or with `binary=False` the `.gltf` JSON
    (buffer embedded as a data URI; images referenced by `image_uris`, image key -> URI)."""
    import json

    if binary:
        return b"".join(glb_parts(scene))
    document, blob_parts = build(scene, embed_images=False, image_uris=image_uris)
    if blob_parts:
        blob = b"".join(blob_parts)
        document["buffers"][0]["uri"] = "data:application/octet-stream;base64," + base64.b64encode(blob).decode("ascii")
    return (json.dumps(document, indent=1, allow_nan=False) + "\n").encode("utf-8")


def image_file_names(scene: Scene) -> dict[str, str]:
    """A file name beside a `.gltf` for each image of `scene` (the name VDrift used, its
    folders flattened, made unique; `.png` added to images re-encoded as PNG)."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for key, image in scene.images.items():
        base = image.name.replace("\\", "/").replace("/", "_") or "texture"
        wanted = (".png",) if image.mime_type == "image/png" else (".jpg", ".jpeg")
        if not base.lower().endswith(wanted):
            base += wanted[0]
        candidate, number = base, 1
        while candidate.lower() in taken:
            number += 1
            stem, extension = os.path.splitext(base)
            candidate = f"{stem}-{number}{extension}"
        taken.add(candidate.lower())
        names[key] = candidate
    return names
