"""What a scene is once read: nodes (named, placed, holding a mesh and a material), the images
the materials use, and the warnings met on the way. Track and car readers build it; the glTF and
OBJ writers, `model info` and the viewer read it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...errors import GamepakError

if TYPE_CHECKING:
    from ..mesh import Mesh

# glTF sampler values, the vocabulary the materials speak.
REPEAT = 10497
CLAMP_TO_EDGE = 33071
LINEAR = 9729
LINEAR_MIPMAP_LINEAR = 9987

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# The most pixels of a texture gamepak decodes for a scene (a 4096 x 4096 image; VDrift's are at
# most 2048 on a side): sized from the image's header first, so a small file claiming a huge
# image is not decoded.
MAX_DECODED_PIXELS = 1 << 24
# The largest texture file a scene embeds (a game's are well under 16 MiB).
MAX_TEXTURE_BYTES = 64 << 20
JPEG_SIGNATURE = b"\xff\xd8\xff"


class SceneError(GamepakError):
    """A track or car folder gamepak cannot turn into a scene (no object list, a file that
    cannot be read, a definition it does not support)."""


@dataclass
class SceneImage:
    """One image file as the scene embeds it: PNG or JPEG bytes (other formats are converted)."""

    name: str  # the file name the scene gave (`timber.png`, `tire/touring.png`)
    path: str  # where it was read
    data: bytes
    mime_type: str
    has_alpha: bool


@dataclass(frozen=True)
class SceneMaterial:
    """A material: its image (a key of `Scene.images`, or None), how alpha is drawn and how the
    image is sampled. Equal materials are written once."""

    image: str | None
    alpha_mode: str = "OPAQUE"  # OPAQUE, MASK (cut-off 0.5) or BLEND
    double_sided: bool = False
    unlit: bool = False
    wrap_s: int = REPEAT
    wrap_t: int = REPEAT
    mipmap: bool = True


@dataclass
class SceneNode:
    """A node of the scene tree: its own transform (glTF axes: +Y up), an optional mesh (Z up,
    as every gamepak `Mesh`) with its material, and children."""

    name: str
    mesh: Mesh | None = None
    material: SceneMaterial | None = None
    translation: tuple[float, float, float] | None = None
    rotation: tuple[float, float, float, float] | None = None  # x, y, z, w
    scale: tuple[float, float, float] | None = None
    children: list[SceneNode] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)

    def walk(self) -> list[SceneNode]:
        """This node and every node below it, depth first."""
        found = [self]
        for child in self.children:
            found.extend(child.walk())
        return found


@dataclass
class Scene:
    """A whole track or car."""

    kind: str  # "track" or "car"
    source: str  # the folder read
    root: SceneNode
    images: dict[str, SceneImage] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # Counts a reader gathers on the way (texcoords repaired, normal swaps, objects left out).
    counts: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """What `model info DIR` prints."""
        nodes = [node for node in self.root.walk() if node.mesh is not None]
        meshes = {id(node.mesh): node.mesh for node in nodes}
        return {
            "kind": self.kind,
            "source": self.source,
            "name": self.root.name,
            "objects": len(nodes),
            "models": len(meshes),
            "textures": len(self.images),
            "materials": len({node.material for node in nodes if node.material is not None}),
            "triangles": sum(node.mesh.face_count for node in nodes if node.mesh is not None),
            **self.counts,
            "warnings": list(self.warnings),
        }


def sniff_image(data: bytes) -> str | None:
    """The glTF mime type of image bytes gamepak can embed as they are, else None."""
    if data.startswith(PNG_SIGNATURE):
        return "image/png"
    if data.startswith(JPEG_SIGNATURE):
        return "image/jpeg"
    return None


def png_has_alpha(data: bytes) -> bool:
    """Whether a PNG carries alpha: colour type 4 or 6, or a tRNS chunk (read from the chunk
    headers, without decoding the image)."""
    import struct

    if len(data) < 26:
        return False
    if data[25] in (4, 6):
        return True
    offset = 8
    while offset + 8 <= len(data):
        length, kind = struct.unpack_from(">I4s", data, offset)
        if kind == b"tRNS":
            return True
        if kind in (b"IDAT", b"IEND"):
            return False
        offset += 12 + length
    return False


def load_image(name: str, path: str, warnings: list[str]) -> SceneImage | None:
    """The image file at `path` as the scene embeds it: PNG and JPEG as they are, anything else
    Pillow reads (DDS, TGA, BMP) re-encoded as PNG; None with a warning when unreadable."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_TEXTURE_BYTES + 1)
    except OSError as exc:
        warnings.append(f"{path}: texture {name!r} cannot be read ({exc.strerror}): drawn without it")
        return None
    if len(data) > MAX_TEXTURE_BYTES:
        warnings.append(f"{path}: texture {name!r} is larger than {MAX_TEXTURE_BYTES >> 20} MiB: drawn without it")
        return None
    mime = sniff_image(data)
    if mime is None:
        import io

        try:
            from PIL import Image

            with Image.open(io.BytesIO(data)) as image:
                if image.width * image.height > MAX_DECODED_PIXELS:
                    raise ValueError(f"{image.width}x{image.height} is more pixels than gamepak decodes")
                converted = io.BytesIO()
                image.save(converted, "PNG")
        except Exception as exc:  # Pillow raises many kinds on files it cannot read
            warnings.append(f"{path}: texture {name!r} is not an image gamepak can read ({exc}): drawn without it")
            return None
        data, mime = converted.getvalue(), "image/png"
    has_alpha = mime == "image/png" and png_has_alpha(data)
    return SceneImage(name=name, path=path, data=data, mime_type=mime, has_alpha=has_alpha)


def repair_meshes(items: list[tuple[Mesh, str]], warnings: list[str], counts: dict[str, int]) -> list[Mesh | None]:
    """Frame 0 of each (mesh, label) as VDrift draws it: non-finite texture coordinates replaced
    by 0 (VDrift draws such models; one warning per model), normals swapped back where VDrift
    swaps them (an old converter stored them as (x, z, y): VDrift turns every normal of a model
    to (x, -z, y) when more than a quarter of its faces have normals nearly at right angles to
    the face). None, with a warning, for a mesh whose positions or normals are not finite. All
    meshes are tested at once: a track has thousands of small ones."""
    import numpy as np

    from ..mesh import Mesh

    kept: list[tuple[int, Mesh]] = []
    results: list[Mesh | None] = [None] * len(items)
    for number, (mesh, label) in enumerate(items):
        if not np.isfinite(mesh.positions).all() or (len(mesh.normals) and not np.isfinite(mesh.normals).all()):
            warnings.append(f"{label}: positions or normals that are NaN or infinite: left out")
            counts["objects_left_out"] = counts.get("objects_left_out", 0) + 1
            continue
        kept.append((number, mesh))
    swapped = _vdrift_swaps_normals([mesh for _, mesh in kept])
    for (number, mesh), swap in zip(kept, swapped):
        label = items[number][1]
        normals, texcoords = mesh.normals, mesh.texcoords
        if len(texcoords):
            bad = ~np.isfinite(texcoords)
            if bad.any():
                texcoords = np.where(bad, np.float32(0), texcoords)
                replaced = int(bad.any(axis=1).sum())
                warnings.append(
                    f"{label}: {replaced} of {len(texcoords)} texture coordinates NaN or infinite: set to 0"
                )
                counts["texcoords_replaced"] = counts.get("texcoords_replaced", 0) + replaced
        if swap:
            normals = np.stack([normals[:, 0], -normals[:, 2], normals[:, 1]], axis=1)
            counts["normal_swaps"] = counts.get("normal_swaps", 0) + 1
        if normals is mesh.normals and texcoords is mesh.texcoords:
            results[number] = mesh
        else:
            results[number] = Mesh(
                positions=mesh.positions,
                normals=normals,
                texcoords=texcoords,
                corners=mesh.corners,
                name=mesh.name,
                source=mesh.source,
            )
    return results


def repair_mesh(mesh: Mesh, label: str, warnings: list[str], counts: dict[str, int]) -> Mesh | None:
    """`repair_meshes` of one mesh."""
    return repair_meshes([(mesh, label)], warnings, counts)[0]


def _vdrift_swaps_normals(meshes: list[Mesh]) -> list[bool]:
    """Whether VDrift swaps each mesh's normals (see `repair_meshes`), tested on every face of
    every mesh in one pass."""
    import numpy as np

    if not meshes:
        return []
    face_counts = np.array([m.face_count if len(m.normals) else 0 for m in meshes], np.int64)
    if not face_counts.any():
        return [False] * len(meshes)
    with_normals = [m for m in meshes if len(m.normals) and m.face_count]
    position_starts = np.cumsum([0] + [len(m.positions) for m in with_normals[:-1]])
    normal_starts = np.cumsum([0] + [len(m.normals) for m in with_normals[:-1]])
    faces = np.array([m.face_count for m in with_normals])
    corners = np.concatenate([m.corners for m in with_normals])
    corners = (
        corners[:, :, :2]
        + np.stack([np.repeat(position_starts, faces), np.repeat(normal_starts, faces)], axis=1)[:, None, :]
    )
    positions = np.concatenate([m.positions for m in with_normals]).astype(np.float64)
    normals = np.concatenate([m.normals for m in with_normals]).astype(np.float64)
    corner_positions = positions[corners[:, :, 0]]
    geometric = np.cross(
        corner_positions[:, 1] - corner_positions[:, 0], corner_positions[:, 2] - corner_positions[:, 0]
    )
    summed = normals[corners[:, :, 1]].sum(axis=1)
    geometric_length = np.linalg.norm(geometric, axis=1)
    summed_length = np.linalg.norm(summed, axis=1)
    usable = (geometric_length > 1e-12) & (summed_length > 1e-12)
    dots = np.ones(len(corners))
    dots[usable] = np.abs((geometric[usable] * summed[usable]).sum(axis=1)) / (
        geometric_length[usable] * summed_length[usable]
    )
    far_off = np.bincount(
        np.repeat(np.arange(len(with_normals)), faces), weights=(dots < 0.5), minlength=len(with_normals)
    )
    verdicts = iter((far_off > faces // 4).tolist())
    return [bool(next(verdicts)) if len(m.normals) and m.face_count else False for m in meshes]


def inside(path: str, confine: str | None) -> bool:
    """Whether `path`, its links followed, lies in the folder `confine` (a real path; None: no
    limit). The web viewer reads scenes confined to the folder it serves."""
    if confine is None:
        return True
    real = os.path.realpath(path)
    return os.path.commonpath([real, confine]) == confine


class FileFinder:
    """Looks names up in folders in order, as VDrift does (exact name first); a name found only
    ignoring case is returned with a warning, since VDrift on Linux would not find it. A name
    that climbs out of its folder (`..`, an absolute path) is refused, and with `confine` no file
    outside that folder is found, whatever the links say."""

    def __init__(self, folders: list[str], warnings: list[str], confine: str | None = None) -> None:
        self.folders = [folder for folder in folders if os.path.isdir(folder) and inside(folder, confine)]
        self.warnings = warnings
        self.confine = confine
        self._listings: dict[str, dict[str, str]] = {}

    def find(self, name: str, what: str) -> str | None:
        parts = name.replace("\\", "/").split("/")
        if name.startswith(("/", "\\")) or any(part in ("", "..") for part in parts) or ":" in name:
            self.warnings.append(f"{what} {name!r} is not a name inside a folder: refused")
            return None
        found = self._find(parts, name, what)
        if found is not None and not inside(found, self.confine):
            self.warnings.append(f"{what} {name!r} leads outside the served folder: refused")
            return None
        return found

    def _find(self, parts: list[str], name: str, what: str) -> str | None:
        for folder in self.folders:
            candidate = os.path.join(folder, *parts)
            if os.path.isfile(candidate):
                return candidate
        for folder in self.folders:
            where = os.path.join(folder, *parts[:-1])
            leaf = parts[-1]
            listing = self._listing(where)
            actual = listing.get(leaf.lower())
            if actual is not None:
                found = os.path.join(where, actual)
                self.warnings.append(
                    f"{what} {name!r} is not in {folder}, but {actual!r} is (names differ in case; VDrift on a "
                    f"case-sensitive system would not find it): used {found}"
                )
                return found
        return None

    def _listing(self, folder: str) -> dict[str, str]:
        if folder not in self._listings:
            try:
                names = sorted(os.listdir(folder))
            except OSError:
                names = []
            self._listings[folder] = {name.lower(): name for name in reversed(names)}
        return self._listings[folder]


def shared_folders(folder: str, extra: list[str] | None) -> list[str]:
    """Where VDrift looks after a track's or car's own folder: the data folder's `carparts/`
    and `trackparts/` (two levels up), plus the folders the caller names."""
    data = os.path.dirname(os.path.dirname(os.path.abspath(folder)))
    beside = os.path.dirname(os.path.abspath(folder))
    found = list(extra or [])
    for candidate in (
        os.path.join(data, "carparts"),
        os.path.join(data, "trackparts"),
        os.path.join(beside, "carparts"),
        os.path.join(beside, "trackparts"),
    ):
        if candidate not in found:
            found.append(candidate)
    return found
