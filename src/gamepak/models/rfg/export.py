"""An RFG mesh as glTF 2.0 (.glb/.gltf), OBJ, or the neutral `Mesh` (spec section 9).

| glTF                | from                                                                |
|---------------------|---------------------------------------------------------------------|
| node + mesh         | one per submesh of the LOD: `<name>` (one submesh) or               |
|                     | `<name>.submesh<i>`; other LODs (`all_lods`) `<name>.LOD<n>`         |
| primitive           | one per render block, mode 4 (strips converted), its material       |
| POSITION, NORMAL    | the node's vertices (compacted), X negated, normals renormalised    |
| TEXCOORD_n          | the UV sets not all zero over the mesh, float (int16 / 1024)        |
| JOINTS_0, WEIGHTS_0 | "Ca" formats: u8 and u8 normalised; a skin of one joint per bone    |
| material            | baseColorTexture = Diffuse_Map, normalTexture = Normal_Map,         |
|                     | KHR_materials_specular specularColorTexture = Specular_Map,         |
|                     | roughness from Specular_Power, baseColorFactor = Diffuse_Color      |

Coordinates: the file's are left-handed, +Y up; glTF's right-handed, +Y up. X is negated and
two corners of every triangle swapped, so (b-a)x(c-a) still points along the normals and the
model is not mirrored. Textures are PNG bytes given by name (`textures`, keys lower-cased);
the ones not given are listed in the scene's `extras.unresolved_textures`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...core.arrays import sorted_unique
from ..mesh import ModelError
from .geometry import block_triangles, normals, positions, skin, to_gltf_space, to_gltf_winding, uv_set

if TYPE_CHECKING:
    import numpy as np

    from ..mesh import Mesh
    from .reader import RfgMesh
    from .rig import Rig

from .textures import PLACEHOLDER_TEXTURES

ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER = 34962, 34963
UNSIGNED_BYTE, UNSIGNED_SHORT, UNSIGNED_INT, FLOAT = 5121, 5123, 5125, 5126
REPEAT = 10497


@dataclass
class NodePlan:
    """One glTF node: a submesh of one LOD, its vertices (original numbers, sorted) and its
    primitives (material, triangles as numbers into `vertex_ids`, glTF winding)."""

    name: str
    lod: int
    submesh: int
    vertex_ids: np.ndarray
    primitives: list[tuple[int, np.ndarray]] = field(default_factory=list)


def plan(mesh: RfgMesh, name: str, *, lod: int = 0, all_lods: bool = False) -> list[NodePlan]:
    """The nodes an export writes: LOD `lod` (every LOD with `all_lods`), one per submesh."""
    import numpy as np

    lods = range(max(mesh.lod_count, 1)) if all_lods else [lod]
    nodes = []
    for level in lods:
        numbers = mesh.lod_submeshes(level)
        for number in numbers:
            pieces = [(block.material, block_triangles(mesh, block)) for block in mesh.submeshes[number].blocks]
            used = [triangles.reshape(-1) for _, triangles in pieces]
            vertex_ids = sorted_unique(np.concatenate(used)) if used else np.zeros(0, np.int64)
            if level == lod or not all_lods:
                label = name if len(numbers) == 1 else f"{name}.submesh{number}"
            else:
                label = f"{name}.LOD{level}" + (f".submesh{number}" if len(numbers) > 1 else "")
            node = NodePlan(label, level, number, vertex_ids)
            for material, triangles in pieces:
                if len(triangles):
                    local = np.searchsorted(vertex_ids, triangles)
                    node.primitives.append((material, to_gltf_winding(local)))
            nodes.append(node)
    return nodes


def exported_uv_sets(mesh: RfgMesh) -> list[int]:
    """The UV sets written as TEXCOORD_0.. (those not all zero), in order."""
    return [number for number in range(mesh.uv_sets) if mesh.vertices[f"uv{number}"].any()]


def gltf_vertex_values(mesh: RfgMesh) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Every vertex as the glTF holds it: (positions, unit normals, exported UV sets)."""
    import numpy as np

    from ..mesh import normalised

    stored = to_gltf_space(normals(mesh))
    unit = normalised(stored, np.tile(np.array([0.0, 1.0, 0.0], dtype=np.float32), (len(stored), 1)))
    return to_gltf_space(positions(mesh)), unit, [uv_set(mesh, number) for number in exported_uv_sets(mesh)]


class _Buffer:
    """One glTF buffer being filled: views 4-aligned, accessors made from numpy arrays."""

    def __init__(self, gltf: Any) -> None:
        self.gltf = gltf
        self.chunks: list[bytes] = []
        self.size = 0

    def view(self, data: bytes, target: int | None = None, stride: int | None = None) -> int:
        import pygltflib

        self.gltf.bufferViews.append(
            pygltflib.BufferView(buffer=0, byteOffset=self.size, byteLength=len(data), target=target, byteStride=stride)
        )
        padded = data + b"\0" * (-len(data) % 4)
        self.chunks.append(padded)
        self.size += len(padded)
        return len(self.gltf.bufferViews) - 1

    def accessor(
        self,
        values: np.ndarray,
        component: int,
        kind: str,
        *,
        target: int | None = ARRAY_BUFFER,
        bounds: bool = False,
        normalized: bool | None = None,
    ) -> int:
        import pygltflib

        stride = values.itemsize * (values.shape[1] if values.ndim > 1 else 1)
        view = self.view(
            values.tobytes(), target, stride if target == ARRAY_BUFFER and stride % 4 == 0 and stride > 4 else None
        )
        accessor = pygltflib.Accessor(
            bufferView=view, componentType=component, count=len(values), type=kind, normalized=normalized
        )
        if bounds:
            flat = values.reshape(len(values), -1)
            accessor.min = flat.min(axis=0).tolist()
            accessor.max = flat.max(axis=0).tolist()
        self.gltf.accessors.append(accessor)
        return len(self.gltf.accessors) - 1

    def blob(self) -> bytes:
        return b"".join(self.chunks)


def build_gltf(
    mesh: RfgMesh,
    name: str,
    *,
    lod: int = 0,
    all_lods: bool = False,
    textures: dict[str, bytes] | None = None,
    rig: Rig | None = None,
) -> Any:
    """A pygltflib `GLTF2` of the mesh (see the module's table), binary blob set."""
    import numpy as np
    import pygltflib

    textures = {key.lower(): value for key, value in (textures or {}).items()}
    gltf = pygltflib.GLTF2(asset=pygltflib.Asset(version="2.0", generator="gamepak"))
    buffer = _Buffer(gltf)
    all_positions, all_normals, all_uvs = gltf_vertex_values(mesh)
    if not np.isfinite(all_positions).all():
        bad = int(np.flatnonzero(~np.isfinite(all_positions).all(axis=1))[0])
        raise ModelError(f"{mesh.gpu_label}: vertex {bad}: position is NaN or infinite, which glTF cannot hold")
    materials, unresolved = _materials(gltf, buffer, mesh, textures)
    skinned = skin(mesh)
    scene_nodes: list[int] = []
    skin_index = None
    if skinned is not None:
        skin_index = _skeleton(gltf, buffer, mesh, rig, scene_nodes)
    for node_plan in plan(mesh, name, lod=lod, all_lods=all_lods):
        ids = node_plan.vertex_ids
        if not node_plan.primitives:
            gltf.nodes.append(pygltflib.Node(name=node_plan.name))
            scene_nodes.append(len(gltf.nodes) - 1)
            continue
        attributes = pygltflib.Attributes()
        attributes.POSITION = buffer.accessor(all_positions[ids], FLOAT, "VEC3", bounds=True)
        attributes.NORMAL = buffer.accessor(all_normals[ids], FLOAT, "VEC3")
        for number, values in enumerate(all_uvs):
            setattr(attributes, f"TEXCOORD_{number}", buffer.accessor(values[ids], FLOAT, "VEC2"))
        if skinned is not None:
            joints, weights = skinned
            attributes.JOINTS_0 = buffer.accessor(np.ascontiguousarray(joints[ids]), UNSIGNED_BYTE, "VEC4")
            attributes.WEIGHTS_0 = buffer.accessor(
                np.ascontiguousarray(weights[ids]), UNSIGNED_BYTE, "VEC4", normalized=True
            )
        primitives = []
        index_type = np.uint16 if len(ids) < 65535 else np.uint32
        for material, triangles in node_plan.primitives:
            indices = triangles.reshape(-1).astype(index_type)
            accessor = buffer.accessor(
                indices,
                UNSIGNED_SHORT if index_type is np.uint16 else UNSIGNED_INT,
                "SCALAR",
                target=ELEMENT_ARRAY_BUFFER,
            )
            primitives.append(
                pygltflib.Primitive(attributes=attributes, indices=accessor, material=materials.get(material), mode=4)
            )
        gltf.meshes.append(pygltflib.Mesh(name=node_plan.name, primitives=primitives))
        gltf.nodes.append(pygltflib.Node(name=node_plan.name, mesh=len(gltf.meshes) - 1, skin=skin_index))
        scene_nodes.append(len(gltf.nodes) - 1)
    gltf.scenes = [
        pygltflib.Scene(
            name=name,
            nodes=scene_nodes,
            extras={
                "rfg": {
                    "kind": mesh.kind,
                    "version": mesh.version,
                    "vertex_format": mesh.vertex_format.name,
                    "hash": f"0x{mesh.config.hash:08X}",
                    "lod": lod,
                    "uv_sets": exported_uv_sets(mesh),
                    "texture_slots": [
                        {texture.slot: texture.name for texture in material.textures} for material in mesh.materials
                    ],
                    "unresolved_textures": unresolved,
                }
            },
        )
    ]
    gltf.scene = 0
    blob = buffer.blob()
    if blob:
        gltf.buffers = [pygltflib.Buffer(byteLength=len(blob))]
        gltf.set_binary_blob(blob)
    return gltf


def _materials(
    gltf: Any, buffer: _Buffer, mesh: RfgMesh, textures: dict[str, bytes]
) -> tuple[dict[int, int], list[str]]:
    """glTF materials for the mesh's materials ({material number: glTF index}), and the
    texture names that were not given."""
    import pygltflib

    images: dict[str, int] = {}
    unresolved: list[str] = []

    def texture_index(texture_name: str | None) -> int | None:
        if texture_name is None or texture_name.lower() in PLACEHOLDER_TEXTURES:
            return None
        key = texture_name.lower()
        if key not in textures:
            if texture_name not in unresolved:
                unresolved.append(texture_name)
            return None
        if key not in images:
            view = buffer.view(textures[key])
            gltf.images.append(pygltflib.Image(bufferView=view, mimeType="image/png", name=texture_name))
            if not gltf.samplers:
                gltf.samplers.append(pygltflib.Sampler(wrapS=REPEAT, wrapT=REPEAT))
            gltf.textures.append(pygltflib.Texture(source=len(gltf.images) - 1, sampler=0))
            images[key] = len(gltf.textures) - 1
        return images[key]

    result = {}
    uses_specular = False
    for number, material in enumerate(mesh.materials):
        power = material.constants.get("Specular_Power", (50.0, 0, 0, 0))[0]
        if not math.isfinite(power):
            power = 50.0  # a stranger's NaN: JSON cannot hold it
        roughness = min(max((2.0 / (max(power, 0.0) + 2.0)) ** 0.25, 0.0), 1.0)
        pbr = pygltflib.PbrMetallicRoughness(metallicFactor=0.0, roughnessFactor=round(roughness, 6))
        diffuse_colour = material.constants.get("Diffuse_Color")
        if diffuse_colour is not None and all(0.0 <= value <= 1.0 for value in diffuse_colour):
            pbr.baseColorFactor = [float(value) for value in diffuse_colour]
        diffuse = texture_index(material.texture_for("Diffuse_Map"))
        if diffuse is not None:
            pbr.baseColorTexture = pygltflib.TextureInfo(index=diffuse)
        made = pygltflib.Material(
            name=f"{material.shader} {number}" if len(mesh.materials) > 1 else material.shader,
            pbrMetallicRoughness=pbr,
            doubleSided=False,
            extras={
                "rfg_material_crc": f"0x{material.name_crc:08X}",
                "rfg_flags": material.flags,
                "rfg_textures": {texture.slot: texture.name for texture in material.textures},
                "rfg_constants": {
                    key: [value if math.isfinite(value) else None for value in values]
                    for key, values in material.constants.items()
                },
            },
        )
        normal = texture_index(material.texture_for("Normal_Map"))
        if normal is not None:
            made.normalTexture = pygltflib.NormalMaterialTexture(index=normal)
        specular = texture_index(material.texture_for("Specular_Map"))
        if specular is not None:
            made.extensions = {"KHR_materials_specular": {"specularColorTexture": {"index": specular}}}
            uses_specular = True
        for texture in material.textures:
            if texture.slot not in ("Diffuse_Map", "Normal_Map", "Specular_Map"):
                texture_index(texture.name)  # decals: no glTF slot, but say when missing
        gltf.materials.append(made)
        result[number] = len(gltf.materials) - 1
    if uses_specular:
        gltf.extensionsUsed = ["KHR_materials_specular"]
    return result, unresolved


def _skeleton(gltf: Any, buffer: _Buffer, mesh: RfgMesh, rig: Rig | None, scene_nodes: list[int]) -> int:
    """A skin of one joint per entry of the mesh's bone list (what blend indices index), under
    one root node. With the rig: the joints take the names of the rig bones the list names, its
    hierarchy (a parent the list lacks is skipped for its nearest listed ancestor) and its
    bind-pose positions, with inverse bind matrices made from the same positions (so the mesh
    shows in its bind pose whatever they mean). Without: `bone_<id>` at the origin, identity
    inverse bind matrices."""
    import numpy as np
    import pygltflib

    bone_count = max(len(mesh.bones), int(mesh.vertices["joints"].max()) + 1 if len(mesh.vertices) else 1)
    rig_bones = [mesh.bones[number] if number < len(mesh.bones) else number for number in range(bone_count)]
    if rig is not None and any(not 0 <= bone < len(rig.bones) for bone in rig_bones):
        rig = None  # a rig that does not fit the mesh: not this mesh's
    if rig is not None and not np.isfinite(np.array(rig.world_translations(), dtype=np.float64)).all():
        rig = None  # NaN positions: JSON (node translations) cannot hold them
    world = np.zeros((bone_count, 3), dtype=np.float64)
    parents = [-1] * bone_count
    names = [f"bone_{bone}" for bone in rig_bones]
    if rig is not None:
        positions = rig.world_translations()
        joint_of = {bone: number for number, bone in enumerate(rig_bones)}
        for number, bone in enumerate(rig_bones):
            names[number] = rig.bones[bone].name or names[number]
            world[number] = positions[bone]
            world[number, 0] = -world[number, 0]  # file -> glTF axes, as the vertices
            ancestor, seen = rig.bones[bone].parent, set()
            while 0 <= ancestor < len(rig.bones) and ancestor not in joint_of and ancestor not in seen:
                seen.add(ancestor)
                ancestor = rig.bones[ancestor].parent
            parents[number] = joint_of.get(ancestor, -1)
    first = len(gltf.nodes)
    joints = list(range(first, first + bone_count))
    # Each joint's children in one pass: asking every joint for its children is quadratic in a
    # bone count that a stranger's file sets (a few hundred KB can list 100,000 bones).
    children_of: list[list[int]] = [[] for _ in range(bone_count)]
    for child, parent in enumerate(parents):
        if parent >= 0:
            children_of[parent].append(joints[child])
    for number in range(bone_count):
        parent_world = world[parents[number]] if parents[number] >= 0 else np.zeros(3)
        local = (world[number] - parent_world).tolist()
        children = children_of[number]
        gltf.nodes.append(
            pygltflib.Node(name=names[number], translation=local if any(local) else None, children=children or [])
        )
    roots = [joints[number] for number in range(bone_count) if parents[number] < 0]
    gltf.nodes.append(pygltflib.Node(name="skeleton", children=roots))
    root = len(gltf.nodes) - 1
    scene_nodes.append(root)
    matrices = np.tile(np.eye(4, dtype=np.float32), (bone_count, 1, 1))
    matrices[:, 3, :3] = -world  # column-major: the translation is the 4th column
    inverse = buffer.accessor(matrices.reshape(bone_count, 16), FLOAT, "MAT4", target=None)
    gltf.skins.append(pygltflib.Skin(joints=joints, skeleton=root, inverseBindMatrices=inverse))
    return len(gltf.skins) - 1


def export_gltf(
    mesh: RfgMesh,
    name: str,
    *,
    binary: bool = True,
    lod: int = 0,
    all_lods: bool = False,
    textures: dict[str, bytes] | None = None,
    rig: Rig | None = None,
) -> bytes:
    """The .glb (or .gltf with the buffer embedded) bytes of the mesh."""
    from ..gltf import document_bytes

    gltf = build_gltf(mesh, name, lod=lod, all_lods=all_lods, textures=textures, rig=rig)
    return document_bytes(gltf, binary=binary)


def neutral_mesh(mesh: RfgMesh, name: str, *, lod: int = 0) -> Mesh:
    """LOD `lod` as the format-neutral `Mesh` (Z up, as `models` holds meshes; first exported
    UV set), for OBJ/PLY/JOE writers and the renderer."""
    import numpy as np

    from ..mesh import Mesh, y_up_to_z_up

    all_positions, all_normals, all_uvs = gltf_vertex_values(mesh)
    nodes = plan(mesh, name, lod=lod)
    pieces = [node.vertex_ids[triangles] for node in nodes for _, triangles in node.primitives]
    triangles = np.concatenate(pieces) if pieces else np.zeros((0, 3), np.int64)
    used = sorted_unique(triangles)
    local = np.searchsorted(used, triangles)
    return Mesh.from_vertices(
        y_up_to_z_up(all_positions[used]),
        local,
        y_up_to_z_up(all_normals[used]),
        all_uvs[0][used] if all_uvs else None,
        name=name,
        source=mesh.label,
    )
