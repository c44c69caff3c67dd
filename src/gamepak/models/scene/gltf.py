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
from typing import Any

from ...core.jsontext import JSON_INDENT
from ..gltf import (
    ARRAY_BUFFER,
    ELEMENT_ARRAY_BUFFER,
    FLOAT,
    TRIANGLES,
    UNSIGNED_INT,
    UNSIGNED_SHORT,
)
from ..vertex_batch import PackedVertices, pack_vertices
from .common import LINEAR, LINEAR_MIPMAP_LINEAR, Scene, SceneImage, SceneMaterial, SceneNode

UNLIT = "KHR_materials_unlit"


class _Geometry:
    """The four shared views of every distinct mesh, built from the packed vertices in a few
    numpy steps; `accessors(number)` gives one mesh's accessor fields."""

    def __init__(self, packed: PackedVertices) -> None:
        import numpy as np

        from ..runs import per_run, run_starts

        self.packed = packed
        vertex_counts, corner_counts = packed.vertex_counts, packed.corner_counts
        # Indices: uint16 per mesh below 65,535 vertices, else uint32; each mesh 4-byte aligned.
        self.wide = vertex_counts >= 65535
        item = np.where(self.wide, 4, 2)
        self.index_starts = run_starts((corner_counts * item + 3) // 4 * 4)
        index_bytes = np.zeros(int(self.index_starts[-1] + (corner_counts[-1] * item[-1] + 3) // 4 * 4), np.uint8)
        corner_wide = np.repeat(self.wide, corner_counts)
        within = np.arange(len(packed.indices)) - np.repeat(packed.corner_starts, corner_counts)
        for wide, dtype, size in ((False, "<u2", 2), (True, "<u4", 4)):
            chosen = corner_wide == wide
            if chosen.any():
                slots = np.repeat(self.index_starts // size, corner_counts)[chosen] + within[chosen]
                index_bytes[: len(index_bytes) // size * size].view(dtype)[slots] = packed.indices[chosen]
        self.views = [index_bytes.tobytes(), packed.positions.tobytes(), b"", b""]
        self.normal_starts: Any = None
        if packed.normals is not None:
            rows = np.repeat(packed.has_normals, vertex_counts)
            self.views[2] = packed.normals[rows].tobytes()
            self.normal_starts = run_starts(vertex_counts * packed.has_normals) * 12
        rows = np.repeat(packed.has_texcoords, vertex_counts)
        self.views[3] = packed.texcoords[rows].tobytes()
        self.texcoord_starts = run_starts(vertex_counts * packed.has_texcoords) * 8
        self.lows = per_run(packed.positions, vertex_counts, np.minimum, 0).tolist()
        self.highs = per_run(packed.positions, vertex_counts, np.maximum, 0).tolist()

    def accessors(self, number: int) -> tuple[dict[str, Any] | None, ...] | None:
        """(indices, POSITION, NORMAL or None, TEXCOORD_0 or None) accessors of mesh `number`,
        with their shared view slot (0-3) as `bufferView`; None for a mesh with no vertices."""
        packed = self.packed
        vertex_count = int(packed.vertex_counts[number])
        if not vertex_count:
            return None
        wide = bool(self.wide[number])
        indices: dict[str, Any] = {
            "bufferView": 0,
            "byteOffset": int(self.index_starts[number]),
            "componentType": UNSIGNED_INT if wide else UNSIGNED_SHORT,
            "count": int(packed.corner_counts[number]),
            "type": "SCALAR",
            # Every vertex of a mesh is used by one of its corners.
            "min": [0],
            "max": [vertex_count - 1],
        }
        positions: dict[str, Any] = {
            "bufferView": 1,
            "byteOffset": int(packed.vertex_starts[number]) * 12,
            "componentType": FLOAT,
            "count": vertex_count,
            "type": "VEC3",
            "min": self.lows[number],
            "max": self.highs[number],
        }
        normals: dict[str, Any] | None = None
        texcoords: dict[str, Any] | None = None
        if self.normal_starts is not None and packed.has_normals[number]:
            normals = {
                "bufferView": 2,
                "byteOffset": int(self.normal_starts[number]),
                "componentType": FLOAT,
                "count": vertex_count,
                "type": "VEC3",
            }
        if packed.has_texcoords[number]:
            texcoords = {
                "bufferView": 3,
                "byteOffset": int(self.texcoord_starts[number]),
                "componentType": FLOAT,
                "count": vertex_count,
                "type": "VEC2",
            }
        return indices, positions, normals, texcoords


def build(
    scene: Scene, *, embed_images: bool = True, image_uris: dict[str, str] | None = None
) -> tuple[dict[str, Any], list[bytes | SceneImage]]:
    """(the glTF JSON document as a dict, the binary buffer in parts, 4-byte aligned) of `scene`. Images are embedded in
    the buffer (`embed_images`), else referenced by the URI `image_uris` gives each image key.

    Plain dicts, not pygltflib's classes: serialising those costs seconds for a 2,000-object
    track (a deep copy of every node), most of an export's time."""
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
    image_blobs: list[tuple[int, SceneImage]] = []

    def image_number(key: str) -> int:
        if key not in image_numbers:
            image = scene.images[key]
            entry: dict[str, Any] = {"name": image.name}
            if embed_images:
                entry["mimeType"] = image.mime_type
                image_blobs.append((len(images), image))
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

    # Accessors per distinct mesh (shared by its materials' glTF meshes), made when first used.
    mesh_accessors: dict[int, dict[str, int] | None] = {}

    def attributes_of(number: int) -> dict[str, int] | None:
        assert geometry is not None
        if number not in mesh_accessors:
            found = geometry.accessors(number)
            if found is None:
                mesh_accessors[number] = None
            else:
                named: dict[str, int] = {}
                for name, accessor in zip(("indices", "POSITION", "NORMAL", "TEXCOORD_0"), found):
                    if accessor is not None:
                        named[name] = len(accessors)
                        accessors.append(accessor)
                mesh_accessors[number] = named
        return mesh_accessors[number]

    def mesh_number(node: SceneNode) -> int | None:
        assert node.mesh is not None
        key = (id(node.mesh), node.material)
        if key in mesh_numbers:
            return mesh_numbers[key]
        attributes = attributes_of(distinct_number[id(node.mesh)])
        if attributes is None:
            mesh_numbers[key] = None
            return None
        attributes = dict(attributes)
        primitive: dict[str, Any] = {"attributes": attributes, "indices": attributes.pop("indices"), "mode": TRIANGLES}
        if node.material is not None:
            primitive["material"] = material_number(node.material)
        mesh_numbers[key] = len(meshes)
        meshes.append({"name": node.mesh.name or node.name, "primitives": [primitive]})
        return mesh_numbers[key]

    distinct = {id(node.mesh): node.mesh for node in scene.root.walk() if node.mesh is not None}
    distinct_number = {key: number for number, key in enumerate(distinct)}
    geometry = _Geometry(pack_vertices(list(distinct.values()))) if distinct else None
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
    blob_parts: list[bytes | SceneImage] = []
    offset = 0
    targets = (ELEMENT_ARRAY_BUFFER, ARRAY_BUFFER, ARRAY_BUFFER, ARRAY_BUFFER)
    strides = (None, 12, 12, 8)
    view_numbers: dict[int, int] = {}
    used_views = {accessor["bufferView"] for accessor in accessors}
    for view, data in enumerate(geometry.views if geometry is not None else []):
        if not data or view not in used_views:
            continue
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
    for image_index, image in image_blobs:
        images[image_index]["bufferView"] = len(views)
        views.append({"buffer": 0, "byteOffset": offset, "byteLength": image.size})
        # An image file is a part of its own, copied when written (`part_bytes` reads it).
        blob_parts += [image.encoded if image.encoded is not None else image, b"\0" * (-image.size % 4)]
        offset += image.size + (-image.size % 4)
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


def glb_parts(scene: Scene) -> list[Part]:
    """The `.glb` file of `scene` (images embedded) as parts to write one after another: bytes,
    or an image whose file is copied as it is (a track's are tens of megabytes)."""
    import struct

    from ..gltf import GLB_MAGIC

    document, blob_parts = build(scene, embed_images=True)
    text_parts, text_size = _json_parts(document)
    # The padding is a part of its own: `text + padding` would copy the text (tens of MB for a
    # list of 100,000 objects) while the original is still held.
    padding = b" " * (-text_size % 4)
    parts: list[Part] = [struct.pack("<I4s", text_size + len(padding), b"JSON"), *text_parts, padding]
    blob_size = sum(part.size if isinstance(part, SceneImage) else len(part) for part in blob_parts)
    if blob_size:
        parts += [struct.pack("<I4s", blob_size, b"BIN\0"), *blob_parts]
    total = sum(map(_part_size, parts))
    return [struct.pack("<4sII", GLB_MAGIC, 2, 12 + total), *parts]


# Nodes written as JSON at once when a document is written in parts (`_json_parts`).
NODE_CHUNK = 4096


class NodesText:
    """Part of a `.glb`'s JSON made when written: the compact JSON of some of its nodes (no
    brackets), `size` bytes (measured once, then dropped)."""

    __slots__ = ("nodes", "size")

    def __init__(self, nodes: list[dict[str, Any]]) -> None:
        self.nodes = nodes
        self.size = 0

    def text(self) -> bytes:
        return compact_json(self.nodes)[1:-1]  # type: ignore[arg-type]


Part = bytes | SceneImage | NodesText


def _part_size(part: Part) -> int:
    if isinstance(part, SceneImage):
        return part.size
    return part.size if isinstance(part, NodesText) else len(part)


def _json_parts(document: dict[str, Any]) -> tuple[list[Part], int]:
    """`compact_json(document)` as parts and their total size: the nodes of a large scene (a
    list of 100,000 objects: 34 MB of JSON, 6 times the list) are made a chunk at a time when
    written, never as one text beside the document. The bytes are the same: where any piece
    would need the standard library's encoder (orjson wrote a null), the whole text is made
    at once as before."""
    nodes = document["nodes"]
    if len(nodes) <= NODE_CHUNK:
        text = compact_json(document)
        return [text], len(text)
    document["nodes"] = []
    try:
        outer = compact_json(document)
    finally:
        document["nodes"] = nodes
    marker = b',"nodes":[]'
    chunks = [NodesText(nodes[start : start + NODE_CHUNK]) for start in range(0, len(nodes), NODE_CHUNK)]
    whole = outer.count(marker) != 1 or b"null" in outer
    for chunk in chunks:
        if whole:
            break
        text = chunk.text()
        chunk.size = len(text)
        whole = b"null" in text
    if whole:
        text = compact_json(document)
        return [text], len(text)
    head, tail = outer.split(marker)
    parts: list[Part] = [head + b',"nodes":[']
    for number, chunk in enumerate(chunks):
        parts += [b","] if number else []
        parts.append(chunk)
    parts += [b"]" + tail]
    return parts, sum(map(_part_size, parts))


def write(scene: Scene, *, binary: bool = True, image_uris: dict[str, str] | None = None) -> bytes:
    """The `.glb` bytes of `scene` (images embedded), or with `binary=False` the `.gltf` JSON
    (buffer embedded as a data URI; images referenced by `image_uris`, image key -> URI)."""
    import json

    if binary:
        return b"".join(part_bytes(part) for part in glb_parts(scene))
    document, blob_parts = build(scene, embed_images=False, image_uris=image_uris)
    if blob_parts:
        blob = b"".join(part_bytes(part) for part in blob_parts)
        document["buffers"][0]["uri"] = "data:application/octet-stream;base64," + base64.b64encode(blob).decode("ascii")
    return (json.dumps(document, indent=JSON_INDENT, allow_nan=False) + "\n").encode("utf-8")


def compact_json(document: dict[str, Any]) -> bytes:
    """`document` as compact JSON text. orjson writes a track's ~2 MB of JSON in a tenth of the
    time of the standard library's encoder; the standard library's is the judge of what orjson
    lets through silently (NaN and infinity become null there, which JSON and glTF lack) and
    the fallback where orjson is not installed."""
    import json

    try:
        import orjson
    except ImportError:
        orjson = None  # type: ignore[assignment]
    if orjson is not None:
        try:
            text = orjson.dumps(document)
        except orjson.JSONEncodeError:
            pass  # the standard library says what it is
        else:
            if b"null" not in text:  # a scene's documents hold no null: anything else is checked below
                return text
    return json.dumps(document, separators=(",", ":"), allow_nan=False).encode("utf-8")


def part_bytes(part: Part) -> bytes:
    """A part of `glb_parts` as bytes (an image file read, nodes' JSON made)."""
    if isinstance(part, NodesText):
        return part.text()
    return part.data if isinstance(part, SceneImage) else part


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
