"""What a scene is once read: nodes (named, placed, holding a mesh and a material), the images
the materials use, and the warnings met on the way. Track and car readers build it; the glTF and
OBJ writers, `model info` and the viewer read it."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...core.sizes import size_text
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


def open_regular(path: str) -> Any:
    """`path` opened for reading in binary, never blocking (`core.files.open_regular_os`): an
    OSError when it cannot be (its strerror saying a FIFO, device, socket or folder when it is
    not a regular file, links followed), which the callers word themselves (a texture that
    cannot be read is a warning)."""
    from ...core.files import open_regular_os  # (loaded already: the scene's models are read through it)

    fd, _ = open_regular_os(path)
    return open(fd, "rb")


def is_regular_file(path: str) -> bool:
    """Whether `path` is a regular file, links followed (`os.path.isfile` says so too, but a
    caller that must tell a FIFO from a missing file asks this after `os.path.exists`)."""
    import stat

    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


@dataclass
class SceneImage:
    """One image as the scene embeds it: a PNG or JPEG file's own bytes, read only when written
    (a track's textures are tens of megabytes, copied file to file by the kernel), or bytes made
    in memory (other formats converted to PNG, a car's paint baked in)."""

    name: str  # the file name the scene gave (`timber.png`, `tire/touring.png`)
    path: str  # where it was read
    mime_type: str
    has_alpha: bool
    size: int  # bytes embedded
    encoded: bytes | None = None  # the bytes to embed when they are not the file's
    # (device, inode) of the file read: the one written must be it, not whatever a link that
    # changed in between now leads to (the viewer reads scenes confined to its folder).
    identity: tuple[int, int] | None = None

    @property
    def data(self) -> bytes:
        """The bytes embedded (the file read again, checked to be the size it had)."""
        if self.encoded is not None:
            return self.encoded
        with self.open_file() as handle:
            data = handle.read(self.size + 1)
        if len(data) != self.size:
            raise SceneError(f"{self.path}: changed while the scene was written ({len(data)} bytes, was {self.size})")
        return data

    def open_file(self) -> Any:
        """The image file read when the scene was, opened for reading; a `SceneError` when it is
        gone, unreadable, or another file or size now."""
        try:
            handle = open_regular(self.path)
        except OSError as exc:
            raise SceneError(f"{self.path}: cannot be read while the scene is written ({exc.strerror})") from exc
        status = os.fstat(handle.fileno())
        if status.st_size != self.size or (self.identity and (status.st_dev, status.st_ino) != self.identity):
            handle.close()
            raise SceneError(f"{self.path}: changed while the scene was written (was {self.size} bytes)")
        return handle


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


@dataclass(slots=True)
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


def png_has_alpha(data: bytes) -> bool | None:
    """Whether a PNG carries alpha: colour type 4 or 6, or a tRNS chunk (read from the chunk
    headers, without decoding the image); None when `data` (the file's start) ends before the
    first IDAT chunk says."""
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
    return None


# Bytes of an image file read to learn its type and alpha (the chunks before a PNG's pixels).
IMAGE_HEAD = 1 << 16


def load_image(name: str, path: str, warnings: list[str]) -> SceneImage | None:
    """The image file at `path` as the scene embeds it: PNG and JPEG as they are (only their
    start read now), anything else Pillow reads (DDS, TGA, BMP) re-encoded as PNG; None with a
    warning when unreadable."""
    try:
        with open_regular(path) as handle:
            status = os.fstat(handle.fileno())
            size = status.st_size
            if size > MAX_TEXTURE_BYTES:
                warnings.append(
                    f"{path}: texture {name!r} is larger than {size_text(MAX_TEXTURE_BYTES)}: drawn without it"
                )
                return None
            data = handle.read(IMAGE_HEAD)
            mime = sniff_image(data)
            has_alpha = png_has_alpha(data) if mime == "image/png" else False
            if mime is None or has_alpha is None:
                data += handle.read(MAX_TEXTURE_BYTES + 1 - len(data))
    except OSError as exc:
        warnings.append(f"{path}: texture {name!r} cannot be read ({exc.strerror}): drawn without it")
        return None
    if len(data) > MAX_TEXTURE_BYTES:
        warnings.append(f"{path}: texture {name!r} is larger than {size_text(MAX_TEXTURE_BYTES)}: drawn without it")
        return None
    if mime is not None:
        if has_alpha is None:
            has_alpha = bool(png_has_alpha(data))
        return SceneImage(
            name=name,
            path=path,
            mime_type=mime,
            has_alpha=has_alpha,
            size=size,
            identity=(status.st_dev, status.st_ino),
        )
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
    encoded = converted.getvalue()
    return SceneImage(
        name=name,
        path=path,
        mime_type="image/png",
        has_alpha=bool(png_has_alpha(encoded)),
        size=len(encoded),
        encoded=encoded,
    )


def repair_meshes(items: list[tuple[Mesh, str]], warnings: list[str], counts: dict[str, int]) -> list[Mesh | None]:
    """Frame 0 of each (mesh, label) as VDrift draws it: non-finite texture coordinates replaced
    by 0 (VDrift draws such models; one warning per model), normals swapped back where VDrift
    swaps them (an old converter stored them as (x, z, y): VDrift turns every normal of a model
    to (x, -z, y) when more than a quarter of its faces have normals nearly at right angles to
    the face). None, with a warning, for a mesh whose positions or normals are not finite. All
    meshes are tested at once: a track has thousands of small ones."""
    import numpy as np

    from ..mesh import Mesh
    from ..runs import all_finite, per_run, run_starts

    results: list[Mesh | None] = [None] * len(items)
    if not items:
        return results
    meshes = [mesh for mesh, _ in items]
    sizes = np.array(
        [(len(m.positions), len(m.normals), len(m.texcoords), len(m.corners)) for m in meshes], np.int64
    ).reshape(-1, 4)
    positions = np.concatenate([m.positions for m in meshes])
    normals = np.concatenate([m.normals for m in meshes])
    texcoords = np.concatenate([m.texcoords for m in meshes])
    finite = all_finite(positions, sizes[:, 0]) & all_finite(normals, sizes[:, 1])
    bad_texcoords = per_run((~np.isfinite(texcoords)).any(axis=1).astype(np.int64), sizes[:, 2], np.add, 0)
    swaps = finite & _vdrift_swaps_normals(meshes, sizes, positions, normals)
    # Every swapped model's normals turned in one step: (x, z, y) as stored -> (x, -z, y).
    turned = np.stack([normals[:, 0], -normals[:, 2], normals[:, 1]], axis=1)
    normal_starts = run_starts(sizes[:, 1]).tolist()
    for number in np.flatnonzero(~finite).tolist():
        warnings.append(f"{items[number][1]}: positions or normals that are NaN or infinite: left out")
        counts["objects_left_out"] = counts.get("objects_left_out", 0) + 1
    bad_list, swap_list = bad_texcoords.tolist(), swaps.tolist()
    for number in np.flatnonzero(finite).tolist():
        mesh, label = items[number]
        replaced, swap = bad_list[number], swap_list[number]
        if not swap and not replaced:
            results[number] = mesh
            continue
        normals_kept, texcoords_kept = mesh.normals, mesh.texcoords
        if replaced:
            texcoords_kept = np.where(np.isfinite(texcoords_kept), texcoords_kept, np.float32(0))
            warnings.append(
                f"{label}: {replaced} of {len(texcoords_kept)} texture coordinates NaN or infinite: set to 0"
            )
            counts["texcoords_replaced"] = counts.get("texcoords_replaced", 0) + replaced
        if swap:
            start = normal_starts[number]
            normals_kept = turned[start : start + len(normals_kept)]
            counts["normal_swaps"] = counts.get("normal_swaps", 0) + 1
        results[number] = Mesh(
            positions=mesh.positions,
            normals=normals_kept,
            texcoords=texcoords_kept,
            corners=mesh.corners,
            name=mesh.name,
            source=mesh.source,
        )
    return results


def repair_mesh(mesh: Mesh, label: str, warnings: list[str], counts: dict[str, int]) -> Mesh | None:
    """`repair_meshes` of one mesh."""
    return repair_meshes([(mesh, label)], warnings, counts)[0]


def _vdrift_swaps_normals(meshes: list[Mesh], sizes: Any, positions: Any, normals: Any) -> Any:
    """Whether VDrift swaps each mesh's normals (see `repair_meshes`), tested on every face of
    every mesh in one pass. `sizes`: each mesh's positions, normals, texcoords and faces;
    `positions`, `normals`: every mesh's, concatenated."""
    import numpy as np

    from ..runs import per_run, run_starts

    faces = np.where(sizes[:, 1] > 0, sizes[:, 3], 0)
    if not faces.any():
        return np.zeros(len(meshes), bool)
    tested = np.flatnonzero(faces).tolist()
    corners = np.concatenate([meshes[number].corners for number in tested])[:, :, :2]
    offsets = np.stack([run_starts(sizes[:, 0]), run_starts(sizes[:, 1])], axis=1)[tested]
    corners = corners + np.repeat(offsets, faces[tested], axis=0)[:, None, :]
    # Non-finite meshes are tested too (their verdicts are not used): no warnings from them.
    # Column by column: tens of thousands of faces, and numpy's row-wise forms cost more.
    with np.errstate(all="ignore"):
        xyz = positions.astype(np.float64).T
        first = xyz[:, corners[:, 0, 0]]
        a = xyz[:, corners[:, 1, 0]] - first
        b = xyz[:, corners[:, 2, 0]] - first
        geometric = (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])
        normal_xyz = normals.astype(np.float64).T
        summed = normal_xyz[:, corners[:, 0, 1]] + normal_xyz[:, corners[:, 1, 1]] + normal_xyz[:, corners[:, 2, 1]]
        geometric_length = np.sqrt(geometric[0] ** 2 + geometric[1] ** 2 + geometric[2] ** 2)
        summed_length = np.sqrt(summed[0] ** 2 + summed[1] ** 2 + summed[2] ** 2)
        dot = geometric[0] * summed[0] + geometric[1] * summed[1] + geometric[2] * summed[2]
        usable = (geometric_length > 1e-12) & (summed_length > 1e-12)
        dots = np.where(usable, np.abs(dot) / (geometric_length * summed_length), 1.0)
    far_off = per_run((dots < 0.5).astype(np.int64), faces[tested], np.add, 0)
    swaps = np.zeros(len(meshes), bool)
    swaps[tested] = far_off > faces[tested] // 4
    return swaps


def inside(path: str, confine: str | None) -> bool:
    """Whether `path`, its links followed, lies in the folder `confine` (a real path; None: no
    limit). The web viewer reads scenes confined to the folder it serves."""
    if confine is None:
        return True
    real = os.path.realpath(path)
    return os.path.commonpath([real, confine]) == confine


def own_file(path: str, folder: str, confine: str | None) -> bool:
    """Whether a scene's own file (list.txt, track.txt, objects.jpk, a .car ...) at `path`,
    links followed, lies in the scene's `folder` (and in `confine`): a link out of it is not
    read as the scene's."""
    return inside(path, confine) and inside(path, os.path.realpath(folder))


def outside_what(path: str, confine: str | None) -> str:
    """What a file `own_file` refused leads outside of, for the message."""
    return "the served folder" if not inside(path, confine) else "its scene's folder (a link)"


class FileFinder:
    """Looks names up in folders in order, as VDrift does (exact name first); a name found only
    ignoring case is returned with a warning, since VDrift on Linux would not find it. A name
    that climbs out of its folder (`..`, an absolute path) is refused, and so is a link that
    leads out of every folder looked in (a downloaded track's `objects/x.png` pointing at a
    private file would otherwise be embedded in the scene); with `confine` no file outside that
    folder is found, whatever the links say."""

    def __init__(self, folders: list[str], warnings: list[str], confine: str | None = None) -> None:
        self.folders = [folder for folder in folders if os.path.isdir(folder) and inside(folder, confine)]
        # Where a file found may really be: the folders themselves, links among them followed.
        self.roots = [os.path.realpath(folder) for folder in self.folders]
        self.warnings = warnings
        self.confine = confine
        self._listings: dict[str, dict[str, str]] = {}

    def find(self, name: str, what: str) -> str | None:
        parts = name.replace("\\", "/").split("/")
        # A NUL cannot be in a file name (os functions raise ValueError on it, not OSError).
        if name.startswith(("/", "\\")) or any(part in ("", "..") for part in parts) or ":" in name or "\0" in name:
            self.warnings.append(f"{what} {name!r} is not a name inside a folder: refused")
            return None
        found = self._find(parts, name, what)
        if found is not None and not inside(found, self.confine):
            self.warnings.append(f"{what} {name!r} leads outside the served folder: refused")
            return None
        if found is not None and not any(inside(found, root) for root in self.roots):
            self.warnings.append(
                f"{what} {name!r} is a link leading outside the folders it is looked up in ({found} is "
                f"{os.path.realpath(found)}): refused (add its folder to the search folders, --search, to allow it)"
            )
            return None
        return found

    def _find(self, parts: list[str], name: str, what: str) -> str | None:
        for folder in self.folders:
            candidate = os.path.join(folder, *parts)
            if os.path.isfile(candidate):
                return candidate
            if os.path.exists(candidate):
                # A FIFO, device or socket: opening it could block forever; never read.
                self.warnings.append(
                    f"{what} {name!r}: {candidate} is not a regular file (a FIFO, device or socket): skipped"
                )
                return None
        for folder in self.folders:
            where = os.path.join(folder, *parts[:-1])
            leaf = parts[-1]
            listing = self._listing(where)
            actual = listing.get(leaf.lower())
            if actual is not None and is_regular_file(os.path.join(where, actual)):
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


# -- rotations: a track's start positions and a car's parts are turned the same way -------------


def quaternion_multiply(
    a: tuple[float, float, float, float], b: tuple[float, float, float, float]
) -> tuple[float, float, float, float]:
    """The Hamilton product a * b of (x, y, z, w) quaternions."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    )


def euler_zyx(x_degrees: float, y_degrees: float, z_degrees: float) -> tuple[float, float, float, float]:
    """VDrift's rotation from Euler angles: q = qz * qy * qx, as (x, y, z, w)."""
    half = [math.radians(value) / 2 for value in (x_degrees, y_degrees, z_degrees)]
    qx = (math.sin(half[0]), 0.0, 0.0, math.cos(half[0]))
    qy = (0.0, math.sin(half[1]), 0.0, math.cos(half[1]))
    qz = (0.0, 0.0, math.sin(half[2]), math.cos(half[2]))
    return quaternion_multiply(quaternion_multiply(qz, qy), qx)


def vdrift_to_gltf_rotation(q: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    """A VDrift (Z up) rotation as glTF's (+Y up): the vector part turned like a vector."""
    x, y, z, w = q
    return (x, z, -y, w)
