"""A VDrift car folder read as a scene: `<NAME>.car` (VDrift's ini dialect, ini.py) places the
body, glass, driver, steering wheel and the four wheels; a wheel is the car's unit-sized wheel
disc JOE plus a rim, tyre and brake disc generated from the tyre size and brake radius.

    [body]             mesh, texture (diffuse[, misc1[, misc2]])      drawn at the car's origin
    [glass] [driver].. every other section with mesh + texture       on the body (on the root
                       (position, rotation in degrees, scale, color,  when it has `link`)
                       draw = transparent | emissive)
    [steering]         mesh, texture, position, rotation              on the body
    [wheel.fl] ..      mesh (the disc), texture, position[, scale, rotation]
    [wheel.fl.tire]    size = width mm, aspect %, rim inches; texture
    [wheel.fl.brake]   radius m; texture (the disc is drawn only with one)

Car frame: x right, y forward, z up, metres; glTF gets (x, z, -y) as every gamepak export.
Names resolve in the car folder, then the data folder's `carparts/` and `trackparts/`.

Car meshes are drawn without culling in VDrift, so their stored winding is arbitrary (the MCS
body is all clockwise): each face is turned to agree with its vertex normals and every car
material is double-sided. A body texture's alpha is a paint mask, not transparency: opaque
parts whose texture has alpha below 255 get the colour baked in (`paint` on the body, the
section's `color` or white elsewhere). The rim, tyre and brake are gamepak's own look-alikes
built from the sizes (VDrift's generator is GPL; equality is not the goal).
"""

from __future__ import annotations

import io
import math
import os
from typing import TYPE_CHECKING

from . import ini
from .common import (
    FileFinder,
    Scene,
    SceneError,
    SceneImage,
    SceneMaterial,
    SceneNode,
    euler_zyx,
    load_image,
    outside_what,
    own_file,
    repair_mesh,
    shared_folders,
    vdrift_to_gltf_rotation,
)

if TYPE_CHECKING:
    from ..mesh import Mesh

# VDrift's default paint (settings: hue 0.5, saturation 1, value 0.5).
DEFAULT_PAINT = (0.0, 0.5, 0.5)
SEGMENTS = 32
WHEELS_BY_OLD_LAYOUT = "wheel-0"
# Sections drawn apart from the generic drawables (or not at all: lights show only when braking).
SPECIAL_SECTIONS = ("body", "steering", "light-brake", "light-reverse", "wheel")


def find_car_file(folder: str) -> str | None:
    """The `.car` definition in `folder` (`<folder name>.car` first), or None."""
    try:
        names = sorted(name for name in os.listdir(folder) if name.lower().endswith(".car"))
    except OSError:
        return None
    if not names:
        return None
    preferred = os.path.basename(os.path.normpath(folder)) + ".car"
    return os.path.join(folder, preferred if preferred in names else names[0])


def _gltf_vector(values: list[float]) -> tuple[float, float, float]:
    x, y, z = values
    return (x, z, -y)


class _CarReader:
    def __init__(
        self,
        folder: str,
        car_file: str,
        search: list[str] | None,
        paint: tuple[float, float, float] | None,
        confine: str | None = None,
    ) -> None:
        self.folder = folder
        self.confine = confine
        self.definition = ini.read(car_file)
        self.warnings: list[str] = []
        self.counts: dict[str, int] = {}
        self.files = FileFinder([folder, *shared_folders(folder, search)], self.warnings, confine)
        self.paint = paint or DEFAULT_PAINT
        self.images: dict[str, SceneImage] = {}
        self.meshes: dict[str, Mesh | None] = {}

    # ---------------------------------------------------------------------------- lookups

    def mesh(self, name: str, where: str) -> Mesh | None:
        if name not in self.meshes:
            self.meshes[name] = self._read_mesh(name, where)
        return self.meshes[name]

    def _read_mesh(self, name: str, where: str) -> Mesh | None:
        import warnings as python_warnings

        from ...errors import GamepakError
        from .. import load

        path = self.files.find(name, f"{where}: mesh")
        if path is None:
            self.warnings.append(
                f"{where}: mesh {name!r} not found in the car folder, carparts/ or trackparts/: left out"
            )
            self.counts["objects_left_out"] = self.counts.get("objects_left_out", 0) + 1
            return None
        try:
            with python_warnings.catch_warnings():
                python_warnings.simplefilter("ignore")
                mesh = load(path, "joe")
        except GamepakError as exc:
            self.warnings.append(f"{exc}: left out")
            return None
        repaired = repair_mesh(mesh, f"{where}: {name}", self.warnings, self.counts)
        return None if repaired is None else _outward_winding(repaired)

    def image(self, name: str, where: str, colour: tuple[float, float, float] | None) -> str | None:
        """The image key of texture `name`; with `colour`, alpha below 255 is a paint mask baked
        over that colour (an opaque PNG)."""
        path = self.files.find(name, f"{where}: texture")
        if path is None:
            self.warnings.append(f"{where}: texture {name!r} not found: drawn without it")
            return None
        key = os.path.normcase(os.path.abspath(path)) + (f"#paint{colour}" if colour else "")
        if key not in self.images:
            image = load_image(name, path, self.warnings)
            if image is None:
                return None
            if colour is not None and image.has_alpha:
                image = _bake_paint(image, colour, self.warnings)
            self.images[key] = image
        return key

    # ---------------------------------------------------------------------------- the car

    def drawable(self, section: str, *, on_body: bool) -> SceneNode | None:
        definition = self.definition
        mesh_name = definition.get(section, "mesh")
        textures = [name.strip() for name in (definition.get(section, "texture") or "").split(",") if name.strip()]
        if not mesh_name or not textures:
            return None
        where = definition.where(section, "mesh")
        mesh = self.mesh(mesh_name, where)
        if mesh is None:
            return None
        transparent = (definition.get(section, "draw") or "").strip().lower() == "transparent"
        placed = definition.get(section, "position") is not None or definition.get(section, "rotation") is not None
        colour = None
        if not transparent:
            # Parts sitting on the body node take the car's paint; placed parts their own colour.
            own = definition.floats(section, "color")
            if own is not None and len(own) not in (3, 4):
                raise SceneError(
                    f"{definition.where(section, 'color')}: [{section}] color = {definition.get(section, 'color')!r} "
                    f"holds {len(own)} numbers, not 3 (RGB) or 4 (RGBA)"
                )
            colour = self.paint if (on_body and not placed) else (tuple(own[:3]) if own else (1.0, 1.0, 1.0))
        image = self.image(textures[0], where, colour)  # type: ignore[arg-type]
        node = SceneNode(
            section,
            mesh=mesh,
            material=SceneMaterial(image=image, alpha_mode="BLEND" if transparent else "OPAQUE", double_sided=True),
            extras={"vdrift": {"section": section, "mesh": mesh_name, "texture": textures}},
        )
        self._place(node, section)
        return node

    def _place(self, node: SceneNode, section: str) -> None:
        position = self.definition.floats(section, "position", 3)
        if position is not None:
            node.translation = _gltf_vector(position)
        rotation = self.definition.floats(section, "rotation", 3)
        if rotation is not None:
            node.rotation = vdrift_to_gltf_rotation(euler_zyx(*rotation))
        scale = self.definition.floats(section, "scale", 3)
        if scale is not None:
            # A scale is not a direction: its axes swap without a sign change.
            node.scale = (scale[0], scale[2], scale[1])

    def wheel(self, name: str) -> tuple[SceneNode, float] | None:
        """The node of wheel `name` (fl, fr, ...) and the height of its tyre's lowest point."""
        from ..gltf_read import merge

        section = f"wheel.{name}"
        definition = self.definition
        position = definition.floats(section, "position", 3)
        if position is None:
            self.warnings.append(f"{definition.path}: [{section}] has no position: wheel left out")
            return None
        width, rim_radius, tread_radius = self._tyre_size(section)
        node = SceneNode(f"wheel {name}", translation=_gltf_vector(position))
        rotation = definition.floats(section, "rotation", 3)
        if rotation is not None:
            node.rotation = vdrift_to_gltf_rotation(euler_zyx(*rotation))
        textures = [t.strip() for t in (definition.get(section, "texture") or "").split(",") if t.strip()]
        rim_image = self.image(textures[0], definition.where(section, "texture"), (1.0, 1.0, 1.0)) if textures else None
        pieces = [_rim(rim_radius, width)]
        disc_name = definition.get(section, "mesh")
        if disc_name:
            disc = self.mesh(disc_name, definition.where(section, "mesh"))
            if disc is not None:
                pieces.insert(0, _scaled(disc, (-0.375, 0.0, 0.0), (width, 2 * rim_radius, 2 * rim_radius)))
        rim_mesh = self._shared(f"rim {width} {rim_radius} {disc_name}", lambda: merge(pieces, name="rim"))
        rim = SceneNode(
            f"wheel {name} rim",
            mesh=rim_mesh,
            material=SceneMaterial(image=rim_image, double_sided=True),
        )
        scale = definition.floats(section, "scale", 3)
        if scale is not None:
            rim.scale = (scale[0], scale[2], scale[1])
        node.children.append(rim)
        tire_texture = definition.get(f"{section}.tire", "texture")
        if tire_texture:
            tire_image = self.image(
                tire_texture.split(",")[0].strip(), definition.where(f"{section}.tire", "texture"), (1.0, 1.0, 1.0)
            )
            tire_mesh = self._shared(
                f"tire {width} {rim_radius} {tread_radius}", lambda: _tyre(rim_radius, tread_radius, width)
            )
            node.children.append(
                SceneNode(
                    f"wheel {name} tire", mesh=tire_mesh, material=SceneMaterial(image=tire_image, double_sided=True)
                )
            )
        brake_texture = definition.get(f"{section}.brake", "texture")
        brake_radius = definition.floats(f"{section}.brake", "radius", 1)
        if brake_texture and brake_radius:
            brake_image = self.image(
                brake_texture.split(",")[0].strip(), definition.where(f"{section}.brake", "texture"), (1.0, 1.0, 1.0)
            )
            radius = brake_radius[0]
            _drawable_size(abs(radius), definition, f"{section}.brake", "radius")
            brake_mesh = self._shared(f"brake {radius}", lambda: _brake(radius))
            node.children.append(
                SceneNode(
                    f"wheel {name} brake", mesh=brake_mesh, material=SceneMaterial(image=brake_image, double_sided=True)
                )
            )
        return node, position[2] - tread_radius

    def _shared(self, key: str, make):  # type: ignore[no-untyped-def]
        # The four rims (tyres, brakes) are one mesh when their sizes match: mirrors live on nodes.
        if key not in self.meshes:
            self.meshes[key] = make()
        return self.meshes[key]

    def _tyre_size(self, section: str) -> tuple[float, float, float]:
        """(section width, rim radius, tread radius) in metres from `size = width mm, aspect %,
        rim inches` (VDrift: aspect <= 0 means 82 %, above 200 the outer diameter in mm)."""
        size = self.definition.floats(f"{section}.tire", "size", 3)
        if size is None:
            self.warnings.append(f"{self.definition.path}: [{section}.tire] has no size: 185/65 R15 assumed")
            size = [185.0, 65.0, 15.0]
        width_mm, aspect, rim_inches = size
        width = width_mm / 1000
        rim_radius = rim_inches * 0.0254 / 2
        if aspect <= 0:
            aspect = 82.0
        tread_radius = aspect / 2000 if aspect > 200 else rim_radius + width * aspect / 100
        _drawable_size(max(abs(width), abs(rim_radius), abs(tread_radius)), self.definition, f"{section}.tire", "size")
        return width, rim_radius, tread_radius

    def read(self) -> Scene:
        definition = self.definition
        root = SceneNode(
            about_name(self.folder, self.confine), extras={"vdrift": {"car": os.path.basename(definition.path)}}
        )
        body = self.drawable("body", on_body=True)
        if body is None:
            self.warnings.append(f"{definition.path}: no [body] with mesh and texture: the car has no body")
            body = SceneNode("body")
        root.children.append(body)
        sections = sorted(name for name in definition.sections if name and "." not in name)
        for section in sections:
            if section in SPECIAL_SECTIONS or section.startswith(WHEELS_BY_OLD_LAYOUT[:-1]):
                continue
            linked = definition.get(section, "link") is not None
            node = self.drawable(section, on_body=not linked)
            if node is not None:
                (root.children if linked else body.children).append(node)
        steering = self.drawable("steering", on_body=False)
        if steering is not None:
            steering.name = "steering"
            body.children.append(steering)
        wheels = definition.children("wheel")
        ground = None
        if not wheels:
            old = any(name.startswith(WHEELS_BY_OLD_LAYOUT[:-1]) for name in definition.sections)
            layout = "the older [wheel-N] layout (VDrift 2009-2010)" if old else "no [wheel.*] sections"
            self.warnings.append(f"{definition.path}: {layout}: gamepak places [wheel.fl]-style wheels only; no wheels")
        for name in wheels:
            built = self.wheel(name)
            if built is not None:
                root.children.append(built[0])
                ground = built[1] if ground is None else min(ground, built[1])
        root.extras["vdrift"]["paint"] = list(self.paint)
        if ground is not None:
            root.extras["vdrift"]["ground_height"] = round(ground, 6)
        return Scene(
            kind="car", source=self.folder, root=root, images=self.images, warnings=self.warnings, counts=self.counts
        )


def read_car(
    folder: str,
    *,
    search: list[str] | None = None,
    paint: tuple[float, float, float] | None = None,
    confine: str | None = None,
) -> Scene:
    """The scene of the car in `folder` (its `.car` file). `search`: more folders for shared
    parts; `paint`: the body colour (RGB 0-1, default VDrift's (0, 0.5, 0.5)); `confine`: a
    real path no file read may leave."""
    car_file = find_car_file(folder)
    if car_file is None:
        raise SceneError(f"{folder}: not a VDrift car (no .car file)")
    if not own_file(car_file, folder, confine):
        raise SceneError(f"{car_file}: leads outside {outside_what(car_file, confine)}")
    return _CarReader(folder, car_file, search, paint, confine).read()


def about_name(folder: str, confine: str | None) -> str:
    from .track import about_name as about

    return about(folder, confine)


# ------------------------------------------------------------------------------- geometry

# The largest wheel or brake dimension drawn, in metres: far past any vehicle's, and far below
# where the generated vertices would leave float32's range (a glTF cannot hold infinities).
MAX_WHEEL_METRES = 1000.0


def _drawable_size(metres: float, definition: ini.Ini, section: str, key: str) -> None:
    """A SceneError naming the line when a wheel's dimension (`metres`) is past any car's."""
    if not metres <= MAX_WHEEL_METRES:
        raise SceneError(
            f"{definition.where(section, key)}: [{section}] {key} = {definition.get(section, key)!r} makes a "
            f"{metres:g} m wheel part; at most {MAX_WHEEL_METRES:g} m is drawn"
        )


def _outward_winding(mesh: Mesh) -> Mesh:
    """`mesh` with each face turned to agree with its vertex normals (counter-clockwise front)."""
    import numpy as np

    if not len(mesh.normals) or not mesh.face_count:
        return mesh
    summed = mesh.normals[mesh.corners[:, :, 1]].astype(np.float64).sum(axis=1)
    backwards = (mesh.face_normals() * summed).sum(axis=1) < 0
    if not backwards.any():
        return mesh
    corners = mesh.corners.copy()
    corners[backwards] = corners[backwards][:, ::-1]
    return mesh._derived(mesh.positions, mesh.normals, mesh.texcoords, corners)


def _scaled(mesh: Mesh, shift: tuple[float, float, float], scale: tuple[float, float, float]) -> Mesh:
    import numpy as np

    positions = (mesh.positions.astype(np.float64) + shift) * scale
    normals = mesh.normals.astype(np.float64) / scale
    lengths = np.linalg.norm(normals, axis=1, keepdims=True)
    normals = np.divide(normals, lengths, out=np.zeros_like(normals), where=lengths > 0)
    return mesh._derived(positions, normals, mesh.texcoords, mesh.corners)


def _lathe(profile: list[tuple[float, float, float]], centre: tuple[float, float], name: str) -> Mesh:
    """A surface of revolution about the x axis: `profile` is (x, radius, v) points; u runs once
    around. Normals are perpendicular to the profile, pointing away from `centre` (x, radius)."""
    import numpy as np

    from ..mesh import Mesh

    points = np.array([(x, r) for x, r, _ in profile], np.float64)
    v = np.array([value for _, _, value in profile], np.float64)
    tangents = np.gradient(points, axis=0)
    flat_normals = np.stack([-tangents[:, 1], tangents[:, 0]], axis=1)
    away = points - centre
    flat_normals[(flat_normals * away).sum(axis=1) < 0] *= -1
    flat_normals /= np.maximum(np.linalg.norm(flat_normals, axis=1, keepdims=True), 1e-12)
    angles = np.linspace(0, 2 * math.pi, SEGMENTS + 1)
    cos, sin = np.cos(angles)[:, None], np.sin(angles)[:, None]
    rings = len(profile)
    positions = np.stack(
        [np.broadcast_to(points[:, 0], (SEGMENTS + 1, rings)), points[:, 1] * cos, points[:, 1] * sin], axis=2
    ).reshape(-1, 3)
    normals = np.stack(
        [
            np.broadcast_to(flat_normals[:, 0], (SEGMENTS + 1, rings)),
            flat_normals[:, 1] * cos,
            flat_normals[:, 1] * sin,
        ],
        axis=2,
    ).reshape(-1, 3)
    texcoords = np.stack(
        [
            np.broadcast_to((angles / (2 * math.pi))[:, None], (SEGMENTS + 1, rings)),
            np.broadcast_to(v, (SEGMENTS + 1, rings)),
        ],
        axis=2,
    ).reshape(-1, 2)
    faces = []
    for segment in range(SEGMENTS):
        for ring in range(rings - 1):
            a = segment * rings + ring
            b = a + rings
            faces += [[a, b, b + 1], [a, b + 1, a + 1]]
    mesh = Mesh.from_vertices(positions, faces, normals, texcoords, name=name)
    return _outward_winding(mesh)


def _tyre(rim_radius: float, tread_radius: float, width: float) -> Mesh:
    inner = 1.08 * rim_radius
    middle = (inner + tread_radius) / 2
    half, tread = width / 2, width * 3 / 8
    bulge = half * 1.04
    profile = [
        (-half, inner, 0.0),
        (-bulge, middle, 1 / 6),
        (-tread, tread_radius, 1 / 3),
        (tread, tread_radius, 2 / 3),
        (bulge, middle, 5 / 6),
        (half, inner, 1.0),
    ]
    return _lathe(profile, (0.0, middle), "tire")


def _rim(rim_radius: float, width: float) -> Mesh:
    barrel = rim_radius - 0.01
    lip = 1.08 * rim_radius
    half = width * 3 / 8
    profile = [(-half, lip, 0.0), (-half, barrel, 0.1), (half, barrel, 0.9), (half, lip, 1.0)]
    return _lathe(profile, (0.0, 0.0), "rim")


def _brake(radius: float) -> Mesh:
    half = 0.0125
    profile = [(-half, 0.001, 0.0), (-half, radius, 0.45), (half, radius, 0.55), (half, 0.001, 1.0)]
    return _lathe(profile, (0.0, radius / 2), "brake")


def _bake_paint(image: SceneImage, colour: tuple[float, float, float], warnings: list[str]) -> SceneImage:
    """rgb' = rgb x a + colour x (1 - a), written as an opaque PNG (unchanged when every alpha
    is 255)."""
    import numpy as np
    from PIL import Image

    from .common import MAX_DECODED_PIXELS

    try:
        with Image.open(io.BytesIO(image.data)) as opened:
            if opened.width * opened.height > MAX_DECODED_PIXELS:
                raise ValueError(f"{opened.width}x{opened.height} is more pixels than gamepak decodes")
            rgba = np.asarray(opened.convert("RGBA"), dtype=np.float32)
    except Exception as exc:  # Pillow raises many kinds (its own bomb check among them)
        warnings.append(f"{image.path}: too large to bake the paint into, or unreadable ({exc}): kept as is")
        return image
    alpha = rgba[:, :, 3:4] / 255
    if (alpha >= 1).all():
        return image
    baked = rgba[:, :, :3] * alpha + np.array(colour, np.float32) * 255 * (1 - alpha)
    out = io.BytesIO()
    Image.fromarray(np.clip(np.rint(baked), 0, 255).astype(np.uint8), "RGB").save(out, "PNG")
    baked_bytes = out.getvalue()
    return SceneImage(
        name=image.name,
        path=image.path,
        mime_type="image/png",
        has_alpha=False,
        size=len(baked_bytes),
        encoded=baked_bytes,
    )
