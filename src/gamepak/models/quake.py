"""Quake models and maps to glTF 2.0: MDL alias models (one pose, or every pose as a morph
target with a STEP animation) and BSP29/BSP2 world geometry (one primitive and material per
texture, the embedded miptex as PNG textures).

Axes: Quake is Z up, +X forward, +Y left; glTF is Y up with +Z the front, so a Quake point
(x, y, z) is written (y, z, x): a rotation, so winding is kept. Quake's front faces are clockwise,
glTF's counter-clockwise: every triangle is written (a, c, b). Units stay Quake units (a
player is 56 tall) unless `scale` says otherwise.

What is written (one buffer; `.glb` keeps images in it, `.gltf` embeds it as a data URI):

- MDL: one primitive, skin 0 as the base colour texture (opaque, nearest filtering); POSITION,
  NORMAL (smooth, from the pose), TEXCOORD_0 ((s + 0.5)/w, (t + 0.5)/h; back-side corners of
  on-seam vertices get s + w/2, splitting the vertex); poses 1.. as morph targets (POSITION
  deltas) with a STEP animation of the weights (0.1 s a pose; group poses at their intervals).
- BSP: one node per brush model (the world first), one primitive and material per texture;
  POSITION, NORMAL (the face plane), TEXCOORD_0 (texinfo s/w, t/h; repeat wrapping); `{`
  textures alpha MASK; sky, liquid and tool textures flagged in the material's `extras`.
"""

from __future__ import annotations

import base64
import json
import struct
from typing import TYPE_CHECKING, Any

from ..core.arrays import sorted_unique
from ..errors import GamepakError

if TYPE_CHECKING:
    import numpy as np

    from ..formats.quake.images import PaletteImage

ARRAY_BUFFER = 34962
ELEMENT_ARRAY_BUFFER = 34963
FLOAT = 5126
UNSIGNED_INT = 5125
UNSIGNED_SHORT = 5123
NEAREST = 9728
REPEAT = 10497
CLAMP = 33071
POSE_SECONDS = 0.1
# The most poses exported as morph targets: the STEP animation's weights are poses x (poses - 1)
# floats, so a file of thousands of tiny poses would ask for gigabytes (Quake's models have a
# few hundred at most); past it, one pose is exported with `frame`.
MAX_MORPH_POSES = 1024


class GltfBuilder:
    """A minimal glTF document: accessors into one binary buffer, images, materials, meshes."""

    def __init__(self) -> None:
        self.document: dict[str, Any] = {
            "asset": {"version": "2.0", "generator": "gamepak"},
            "scene": 0,
            "scenes": [{"nodes": []}],
            "nodes": [],
            "meshes": [],
            "accessors": [],
            "bufferViews": [],
            "buffers": [],
        }
        self.chunks: list[bytes] = []
        self.offset = 0

    def view(self, data: bytes, target: int | None = None, stride: int | None = None) -> int:
        view: dict[str, Any] = {"buffer": 0, "byteOffset": self.offset, "byteLength": len(data)}
        if target is not None:
            view["target"] = target
        if stride is not None:
            view["byteStride"] = stride
        self.document["bufferViews"].append(view)
        padded = data + b"\0" * (-len(data) % 4)
        self.chunks.append(padded)
        self.offset += len(padded)
        return len(self.document["bufferViews"]) - 1

    def accessor(self, array: np.ndarray, kind: str, *, target: int | None = ARRAY_BUFFER, bounds: bool = False) -> int:
        import numpy as np

        if array.dtype == np.float32:
            component = FLOAT
        elif array.dtype == np.uint16:
            component = UNSIGNED_SHORT
        else:
            array = array.astype(np.uint32)
            component = UNSIGNED_INT
        stride = array.shape[1] * 4 if array.ndim == 2 and target == ARRAY_BUFFER and array.shape[1] > 1 else None
        accessor: dict[str, Any] = {
            "bufferView": self.view(np.ascontiguousarray(array).tobytes(), target, stride),
            "componentType": component,
            "count": int(array.shape[0]),
            "type": kind,
        }
        if bounds:
            flat = array.reshape(array.shape[0], -1)
            if component == FLOAT:
                accessor["min"] = [float(v) for v in flat.min(axis=0)]
                accessor["max"] = [float(v) for v in flat.max(axis=0)]
            else:
                accessor["min"] = [int(v) for v in flat.min(axis=0)]
                accessor["max"] = [int(v) for v in flat.max(axis=0)]
        self.document["accessors"].append(accessor)
        return len(self.document["accessors"]) - 1

    def texture(self, png: bytes, name: str, *, repeat: bool) -> int:
        document = self.document
        image = {"bufferView": self.view(png), "mimeType": "image/png", "name": name}
        document.setdefault("images", []).append(image)
        samplers = document.setdefault("samplers", [])
        wrap = REPEAT if repeat else CLAMP
        sampler = {"magFilter": NEAREST, "minFilter": NEAREST, "wrapS": wrap, "wrapT": wrap}
        if sampler not in samplers:
            samplers.append(sampler)
        document.setdefault("textures", []).append(
            {"source": len(document["images"]) - 1, "sampler": samplers.index(sampler)}
        )
        return len(document["textures"]) - 1

    def material(
        self, name: str, texture: int | None, *, mask: bool = False, extras: dict[str, Any] | None = None
    ) -> int:
        material: dict[str, Any] = {
            "name": name,
            "pbrMetallicRoughness": {"metallicFactor": 0.0, "roughnessFactor": 1.0},
        }
        if texture is not None:
            material["pbrMetallicRoughness"]["baseColorTexture"] = {"index": texture}
        if mask:
            material["alphaMode"] = "MASK"
            material["alphaCutoff"] = 0.5
        if extras:
            material["extras"] = extras
        self.document.setdefault("materials", []).append(material)
        return len(self.document["materials"]) - 1

    def mesh_node(self, name: str, primitives: list[dict[str, Any]], weights: list[float] | None = None) -> int:
        mesh: dict[str, Any] = {"name": name, "primitives": primitives}
        if weights is not None:
            mesh["weights"] = weights
        self.document["meshes"].append(mesh)
        self.document["nodes"].append({"name": name, "mesh": len(self.document["meshes"]) - 1})
        node = len(self.document["nodes"]) - 1
        self.document["scenes"][0]["nodes"].append(node)
        return node

    def finish(self, binary: bool) -> bytes:
        blob = b"".join(self.chunks)
        document = self.document
        if not document["meshes"]:
            # glTF accessors cannot be empty: an empty model is a scene with one empty node.
            for key in ("meshes", "accessors", "bufferViews", "buffers"):
                document.pop(key)
            document["nodes"] = [{"name": "empty"}]
            document["scenes"][0]["nodes"] = [0]
            blob = b""
        else:
            document["buffers"] = [{"byteLength": len(blob)}]
            if not binary:
                document["buffers"][0]["uri"] = (
                    "data:application/octet-stream;base64," + base64.b64encode(blob).decode()
                )
        text = json.dumps(document, separators=(",", ":")).encode("utf-8")
        if not binary:
            return text + b"\n"
        text += b" " * (-len(text) % 4)
        parts = [struct.pack("<I4s", len(text), b"JSON"), text]
        if blob:
            parts += [struct.pack("<I4s", len(blob), b"BIN\0"), blob]
        body = b"".join(parts)
        return struct.pack("<4sII", b"glTF", 2, 12 + len(body)) + body


def _turn(points: np.ndarray) -> np.ndarray:
    """Quake (x, y, z) -> glTF (y, z, x)."""
    return points[:, [1, 2, 0]]


def _image_png(image: PaletteImage, palette: bytes) -> bytes:
    from ..formats.quake.images import png_of

    return png_of(image, palette)


# -- MDL ---------------------------------------------------------------------------------------


def mdl_to_gltf(
    data: bytes,
    label: str,
    *,
    palette: bytes,
    frame: int | None = None,
    binary: bool = True,
    scale: float = 1.0,
    name: str = "model",
) -> bytes:
    """The glTF of an MDL: pose `frame`, or (None) pose 0 with every other pose as a morph
    target and a STEP animation through them."""
    import numpy as np

    from ..formats.quake import mdl

    model = mdl.read(data, label)
    if frame is not None and not 0 <= frame < len(model.poses):
        raise GamepakError(
            f"{label}: no frame {frame} (the model has {len(model.poses)} poses: 0..{len(model.poses) - 1})"
        )
    if frame is None and len(model.poses) > MAX_MORPH_POSES:
        raise GamepakError(
            f"{label}: {len(model.poses)} poses are more than the {MAX_MORPH_POSES} exported as morph targets; "
            "export one pose with --frame N"
        )
    st = model.st_vertices(data)
    triangles = model.triangles(data)
    width, height = model.skin_width, model.skin_height
    corners = triangles[:, [1, 3, 2]]  # clockwise -> counter-clockwise
    front = np.repeat(triangles[:, :1], 3, axis=1)
    back_on_seam = (front == 0) & (st[corners, 0] != 0)
    keys = corners + back_on_seam * model.vertex_count
    used, inverse = np.unique(keys.ravel(), return_inverse=True)
    source_vertex = used % model.vertex_count
    seam_shift = (used >= model.vertex_count) * (width / 2)
    texcoords = np.stack(
        [(st[source_vertex, 1] + seam_shift + 0.5) / width, (st[source_vertex, 2] + 0.5) / height], axis=1
    ).astype(np.float32)
    indices = inverse.astype(np.uint32)
    scale_vector = np.asarray(model.scale, dtype=np.float32)
    translate = np.asarray(model.translate, dtype=np.float32)

    def pose_positions(pose: int) -> np.ndarray:
        packed = model.pose_vertices(data, pose)[:, :3].astype(np.float64)
        with np.errstate(over="ignore"):  # refused just below, with the pose named
            positions = (_turn(packed * scale_vector + translate) * scale).astype(np.float32)[source_vertex]
        # A finite scale times a vertex can still pass float32's largest (3.4e38).
        return _finite(positions, f"{label}: offset 8: scale x a vertex of pose {pose}")

    def smooth_normals(positions: np.ndarray) -> np.ndarray:
        # In float64: the cross product of two float32 edges can pass float32's largest.
        a, b, c = (positions[indices.reshape(-1, 3)[:, k]].astype(np.float64) for k in range(3))
        face = np.cross(b - a, c - a)
        # Sum per model vertex (seam copies share it), then normalise; a lone zero gets +Y.
        sums = np.zeros((model.vertex_count, 3), dtype=np.float64)
        for k in range(3):
            np.add.at(sums, source_vertex[indices.reshape(-1, 3)[:, k]], face)
        normals = sums[source_vertex]
        length = np.linalg.norm(normals, axis=1, keepdims=True)
        normals = np.where(length > 0, normals / np.where(length > 0, length, 1), [0.0, 1.0, 0.0])
        return normals.astype(np.float32)

    first = 0 if frame is None else frame
    if not np.isfinite([*model.scale, *model.translate]).all():
        raise GamepakError(f"{label}: offset 8: scale or translate is NaN or infinite")
    base = pose_positions(first)
    builder = GltfBuilder()
    attributes = {
        "POSITION": builder.accessor(base, "VEC3", bounds=True),
        "NORMAL": builder.accessor(smooth_normals(base), "VEC3"),
        "TEXCOORD_0": builder.accessor(texcoords, "VEC2"),
    }
    index_accessor = builder.accessor(indices, "SCALAR", target=ELEMENT_ARRAY_BUFFER, bounds=True)
    skins = model.skin_images(data)
    texture = builder.texture(_image_png(skins[0], palette), skins[0].name, repeat=False) if skins else None
    material = builder.material(name, texture)
    primitive: dict[str, Any] = {"attributes": attributes, "indices": index_accessor, "material": material, "mode": 4}
    weights = None
    poses = model.poses
    extras: dict[str, Any] = {
        "quake_mdl": {
            "frames": [
                {"name": pose.name, "group": pose.group, "interval": _finite_or_none(pose.interval)} for pose in poses
            ],
            "flags": model.flags,
        }
    }
    if frame is None and len(poses) > 1:
        targets = []
        for pose in range(1, len(poses)):
            with np.errstate(over="ignore"):
                moved = (pose_positions(pose).astype(np.float64) - base).astype(np.float32)
            delta = _finite(moved, f"{label}: pose {pose} moved from pose {first}")
            targets.append({"POSITION": builder.accessor(delta, "VEC3", bounds=True)})
        primitive["targets"] = targets
        weights = [0.0] * len(targets)
    node = builder.mesh_node(name, [primitive], weights)
    builder.document["meshes"][0]["extras"] = extras
    if weights is not None:
        times = _pose_times(poses)
        keyframes = np.zeros((len(poses), len(poses) - 1), dtype=np.float32)
        for pose in range(1, len(poses)):
            keyframes[pose, pose - 1] = 1.0
        with np.errstate(over="ignore"):
            seconds = np.asarray(times, dtype=np.float32)
        _finite(seconds, f"{label}: the frame groups' intervals, added up,")
        time_accessor = builder.accessor(seconds.reshape(-1, 1), "SCALAR", target=None, bounds=True)
        weight_accessor = builder.accessor(keyframes.reshape(-1, 1), "SCALAR", target=None)
        builder.document["animations"] = [
            {
                "name": "frames",
                "samplers": [{"input": time_accessor, "output": weight_accessor, "interpolation": "STEP"}],
                "channels": [{"sampler": 0, "target": {"node": node, "path": "weights"}}],
            }
        ]
    return builder.finish(binary)


def _pose_times(poses: list[Any]) -> list[float]:
    """When each pose starts: 0.1 s a single frame; a group's poses at their (cumulative)
    intervals' steps."""
    times = []
    clock = 0.0
    previous_end = 0.0
    for pose in poses:
        times.append(round(clock, 6))
        interval = _finite_or_none(pose.interval)
        if pose.group is not None and interval is not None and interval > previous_end:
            step = interval - previous_end
            previous_end = interval
        else:
            step = POSE_SECONDS
            previous_end = 0.0
        clock += step
    return times


def _finite(values: np.ndarray, what: str) -> np.ndarray:
    """`values`, or a GamepakError saying `what` is NaN or infinite (JSON and glTF cannot hold it)."""
    import numpy as np

    if not np.isfinite(values).all():
        raise GamepakError(f"{what} is NaN or past float32's range (glTF cannot hold it)")
    return values


def _finite_or_none(value: float | None) -> float | None:
    """An interval as JSON can hold it: None for NaN or an infinity (an engine cannot use them)."""
    import math

    return value if value is not None and math.isfinite(value) else None


# -- BSP ---------------------------------------------------------------------------------------


def _surface(name: str) -> str | None:
    lowered = name.lower()
    if lowered.startswith("sky"):
        return "sky"
    if lowered.startswith("*"):
        return "liquid"
    if lowered.startswith("{"):
        return "fence"
    if lowered in ("trigger", "clip", "skip", "hint", "hintskip"):
        return "tool"
    return None


def bsp_to_gltf(data: bytes, label: str, *, palette: bytes, binary: bool = True, scale: float = 1.0) -> bytes:
    """The glTF of a map's brush models (the world first, then `*1`, `*2`...): faces
    fan-triangulated, one primitive per texture."""
    import numpy as np

    from ..formats.quake.bsp import MapFile

    geometry = MapFile(data, label).geometry()
    faces = geometry.faces
    texinfo = geometry.texinfo
    builder = GltfBuilder()
    textures = geometry.textures
    materials: dict[int, int] = {}

    def material_for(miptex: int) -> int:
        if miptex in materials:
            return materials[miptex]
        image = textures[miptex] if miptex < len(textures) else None
        if image is None:
            materials[miptex] = builder.material(f"missing{miptex}", None)
            return materials[miptex]
        surface = _surface(image.name)
        texture = builder.texture(_image_png(image, palette), image.name, repeat=True) if image.mips else None
        extras = {"quake_surface": surface} if surface else None
        materials[miptex] = builder.material(image.name, texture, mask=image.transparent is not None, extras=extras)
        return materials[miptex]

    face_miptex = texinfo["miptex"][faces["texinfo"].astype(np.int64)].astype(np.int64)
    widths = np.array([t.width if t is not None else 64 for t in textures] or [64], dtype=np.float64)
    heights = np.array([t.height if t is not None else 64 for t in textures] or [64], dtype=np.float64)
    for model_index, model in enumerate(geometry.models):
        first, count = int(model["first"]), int(model["count"])
        if not count:
            continue
        chosen = np.arange(first, first + count)
        primitives = []
        for miptex in sorted_unique(face_miptex[chosen]):
            picked = chosen[face_miptex[chosen] == miptex]
            counts = faces["count"][picked].astype(np.int64)
            starts = faces["first"][picked].astype(np.int64)
            # One glTF vertex per face corner: corner k of face f is surfedge starts[f] + k.
            offsets = np.concatenate([[0], np.cumsum(counts)])
            corner_face = np.repeat(np.arange(len(picked)), counts)
            corner_slot = np.arange(offsets[-1]) - offsets[corner_face] + starts[corner_face]
            points = geometry.vertexes[geometry.corner_vertices[corner_slot]].astype(np.float64)
            info = texinfo[faces["texinfo"][picked].astype(np.int64)][corner_face]
            s = (points * info["s"][:, :3]).sum(axis=1) + info["s"][:, 3]
            t = (points * info["t"][:, :3]).sum(axis=1) + info["t"][:, 3]
            texcoords = np.stack([s / widths[miptex], t / heights[miptex]], axis=1).astype(np.float32)
            plane = geometry.planes[faces["plane"][picked].astype(np.int64)][:, :3].astype(np.float64)
            plane = np.where((faces["side"][picked] != 0)[:, None], -plane, plane)
            normals = _turn(plane[corner_face]).astype(np.float32)
            positions = (_turn(points) * scale).astype(np.float32)
            for what, values in (("vertex", positions), ("texinfo", texcoords), ("plane", normals)):
                if not np.isfinite(values).all():
                    raise GamepakError(
                        f"{label}: a {what} of model {model_index} is NaN or infinite (glTF cannot hold it)"
                    )
            # Fan (0, k+1, k): clockwise Quake faces become counter-clockwise.
            triangle_face = np.repeat(np.arange(len(picked)), counts - 2)
            triangle_k = (
                np.arange(int((counts - 2).sum()))
                - np.repeat(np.concatenate([[0], np.cumsum(counts - 2)])[:-1], counts - 2)
                + 1
            )
            base = offsets[triangle_face]
            indices = np.stack([base, base + triangle_k + 1, base + triangle_k], axis=1).reshape(-1)
            primitives.append(
                {
                    "attributes": {
                        "POSITION": builder.accessor(positions, "VEC3", bounds=True),
                        "NORMAL": builder.accessor(normals, "VEC3"),
                        "TEXCOORD_0": builder.accessor(texcoords, "VEC2"),
                    },
                    "indices": builder.accessor(
                        indices.astype(np.uint32), "SCALAR", target=ELEMENT_ARRAY_BUFFER, bounds=True
                    ),
                    "material": material_for(int(miptex)),
                    "mode": 4,
                }
            )
        builder.mesh_node("world" if model_index == 0 else f"*{model_index}", primitives)
    return builder.finish(binary)


def summary(kind: str, data: bytes, label: str) -> dict[str, Any]:
    """What `model info` prints for an MDL or a BSP."""
    if kind == "mdl":
        from ..formats.quake import mdl

        return {"format": "mdl", **mdl.read(data, label).summary()}
    from ..formats.quake.bsp import MapFile

    map_file = MapFile(data, label)
    geometry = map_file.geometry()
    triangles = int((geometry.faces["count"].astype("int64") - 2).sum())
    details = map_file.summary()
    return {
        "format": "bsp",
        "version": details["version"],
        "faces": details["faces"],
        "triangles": triangles,
        "vertices": len(geometry.vertexes),
        "models": details["models"],
        "textures": details["textures"],
        "entity_count": details["entity_count"],
    }


def read_file(path: str) -> bytes:
    """A model file's bytes (a GamepakError naming it when it cannot be read)."""
    from ..core.files import read_file as read_whole_file

    return read_whole_file(path)


def export_bytes(
    kind: str,
    data: bytes,
    label: str,
    beside: str,
    *,
    frame: int | None = None,
    palette: str | None = None,
    scale: float = 1.0,
    binary: bool = True,
) -> bytes:
    """The glTF bytes of an MDL (`kind` "mdl") or BSP ("bsp"); the palette is `palette` (a
    file), else one beside the file `beside`, else the built-in one."""
    import os

    from ..formats.quake.palette import find_palette

    colours = find_palette(beside, palette)
    if kind == "mdl":
        name = os.path.splitext(os.path.basename(label.rsplit(":", 1)[-1]))[0] or "model"
        return mdl_to_gltf(data, label, palette=colours, frame=frame, binary=binary, scale=scale, name=name)
    if frame is not None:
        raise GamepakError(f"{label}: --frame is for MDL models; a map has no frames")
    return bsp_to_gltf(data, label, palette=colours, binary=binary, scale=scale)


def export_file(
    kind: str,
    data: bytes,
    label: str,
    output: str,
    *,
    frame: int | None = None,
    palette: str | None = None,
    scale: float = 1.0,
    overwrite: bool = False,
) -> None:
    """Write an MDL (`kind` "mdl") or BSP ("bsp") as `.glb` or `.gltf` (by `output`'s name),
    atomically; the palette is `palette` (a file), else one beside the source, else built in."""
    from ..core.atomic import write_bytes

    lowered = output.lower()
    if not lowered.endswith((".glb", ".gltf")):
        raise GamepakError(f"{output}: Quake models and maps are exported to glTF: name a .glb or .gltf file")
    if not overwrite:
        import os

        from ..errors import OutputExistsError

        if os.path.lexists(output):
            raise OutputExistsError(output)
    result = export_bytes(
        kind,
        data,
        label,
        label.split(":", 1)[0],
        frame=frame,
        palette=palette,
        scale=scale,
        binary=lowered.endswith(".glb"),
    )
    write_bytes(output, result, overwrite=overwrite)
