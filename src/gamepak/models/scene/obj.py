"""A scene as Wavefront OBJ + MTL: one `o` group per mesh node (node transforms applied, Y up
like gamepak's single-model OBJ), one MTL material per scene material naming its image file
(copied beside the OBJ by `scene.save`). Texture coordinates are flipped to OBJ's bottom-row
origin, as the single-model OBJ export does (see `gamepak.models.obj`). OBJ has no alpha modes, samplers or
unlit shading: `d 0.5` marks blended materials, and the rest is the glTF export's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..mesh import z_up_to_y_up
from ..obj import texcoord_rows, value_rows
from .common import Scene, SceneMaterial, SceneNode

if TYPE_CHECKING:
    import numpy as np


def node_matrix(node: SceneNode) -> np.ndarray:
    """A node's local 4x4 transform (glTF axes)."""
    import numpy as np

    from ..gltf_read import node_matrix as gltf_matrix

    class _Node:
        matrix = None
        translation = list(node.translation) if node.translation else None
        rotation = list(node.rotation) if node.rotation else None
        scale = list(node.scale) if node.scale else None

    return np.asarray(gltf_matrix(_Node()))


def write(scene: Scene, *, material_library: str, image_files: dict[str, str]) -> tuple[bytes, bytes]:
    """(OBJ bytes, MTL bytes) of `scene`; `image_files` names each image's file beside them."""
    import numpy as np

    materials: dict[SceneMaterial | None, str] = {}
    lines = [f"# {scene.root.name} written by gamepak\n", f"mtllib {material_library}\n"]
    offsets = [0, 0, 0]  # positions, normals, texcoords: the order of a corner's indices

    def visit(node: SceneNode, parent: np.ndarray) -> None:
        world = parent @ node_matrix(node)
        if node.mesh is not None and node.mesh.face_count:
            mesh = node.mesh
            positions = z_up_to_y_up(mesh.positions.astype(np.float64))
            positions = positions @ world[:3, :3].T + world[:3, 3]
            normals = mesh.normals.astype(np.float64)
            if len(normals):
                try:
                    turn = np.linalg.inv(world[:3, :3])
                except np.linalg.LinAlgError:  # a scale of 0 flattens the node: the nearest turn
                    turn = np.linalg.pinv(world[:3, :3])
                normals = z_up_to_y_up(normals) @ turn
                lengths = np.linalg.norm(normals, axis=1, keepdims=True)
                normals = np.divide(normals, lengths, out=np.zeros_like(normals), where=lengths > 0)
            corners = mesh.corners.copy()
            if np.linalg.det(world[:3, :3]) < 0:
                corners = corners[:, ::-1]  # a mirror turns the faces over: keep them facing out
            name = materials.setdefault(node.material, f"material{len(materials)}")
            lines.append(f"o {node.name.replace(chr(10), ' ')}\n")
            lines.append(value_rows("v", positions.astype(np.float32)))
            lines.append(texcoord_rows(mesh.texcoords))
            lines.append(value_rows("vn", normals.astype(np.float32)))
            lines.append(f"usemtl {name}\n")
            one_based = corners + 1 + np.array(offsets)
            has_normals, has_texcoords = bool(len(mesh.normals)), bool(len(mesh.texcoords))
            if has_texcoords and has_normals:
                corner = "%d/%d/%d"
                values = one_based[:, :, [0, 2, 1]]
            elif has_normals:
                corner = "%d//%d"
                values = one_based[:, :, [0, 1]]
            elif has_texcoords:
                corner = "%d/%d"
                values = one_based[:, :, [0, 2]]
            else:
                corner = "%d"
                values = one_based[:, :, :1]
            face = "f " + " ".join([corner] * 3) + "\n"
            lines.append((face * len(values)) % tuple(values.ravel().tolist()))
            offsets[0] += len(mesh.positions)
            offsets[1] += len(mesh.normals)
            offsets[2] += len(mesh.texcoords)
        for child in node.children:
            visit(child, world)

    visit(scene.root, np.eye(4))
    library = ["# materials of " + scene.root.name + " written by gamepak\n"]
    for material, name in materials.items():
        library += [f"\nnewmtl {name}\n", "Kd 1 1 1\n", "Ka 0 0 0\n", "Ks 0 0 0\n", "illum 1\n"]
        if material is not None and material.alpha_mode == "BLEND":
            library.append("d 0.5\n")
        if material is not None and material.image is not None:
            library.append(f"map_Kd {image_files[material.image]}\n")
    return "".join(lines).encode("utf-8"), "".join(library).encode("utf-8")
