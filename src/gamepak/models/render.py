"""A headless preview of a model: a numpy z-buffer rasteriser with flat Lambert shading.

The model is seen from a three-quarter view (camera up and to the front-right, Z up as in
VDrift) with an orthographic projection; its bounding sphere is fitted into the image with a
margin, so the whole model is always in frame. Both sides of every face are drawn (VDrift walls
and floors are single planes), each lit by its geometric normal turned towards the camera. The
image is drawn at twice the size and scaled down, which smooths the edges.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .mesh import ModelError

if TYPE_CHECKING:
    import numpy as np

    from .mesh import Mesh

BACKGROUND = (34, 38, 46)
BASE_COLOUR = (196, 206, 222)
AMBIENT = 0.32
SUPERSAMPLE = 2


def _camera(azimuth: float, elevation: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(right, up, towards-camera) unit vectors of a camera looking at the origin."""
    import numpy as np

    a, e = math.radians(azimuth), math.radians(elevation)
    towards = np.array([math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)])
    right = np.cross([0.0, 0.0, 1.0], towards)
    right /= np.linalg.norm(right)
    up = np.cross(towards, right)
    return right, up, towards


def render(
    mesh: Mesh,
    size: int = 512,
    *,
    azimuth: float = -55.0,
    elevation: float = 28.0,
    margin: float = 0.08,
    z_up: bool = True,
) -> Any:
    """A `PIL.Image` (RGB, size x size) of frame 0 of `mesh`, shaded and framed."""
    import numpy as np
    from PIL import Image

    if not 16 <= size <= 8192:
        raise ModelError(f"image size {size} is outside 16..8192")
    corners = mesh.positions[mesh.corners[:, :, 0]].astype(np.float64) if mesh.face_count else np.zeros((0, 3, 3))
    if not z_up:
        corners = corners[:, :, [0, 2, 1]] * np.array([1.0, -1.0, 1.0])
    corners = corners[np.isfinite(corners).all(axis=(1, 2))]
    if not len(corners):
        raise ModelError(f"{mesh.name or 'the model'}: no faces with finite coordinates to draw")
    points = corners.reshape(-1, 3)
    low, high = points.min(axis=0), points.max(axis=0)
    centre = (low + high) / 2
    radius = float(np.linalg.norm(points - centre, axis=1).max()) or 1.0

    scale_up = size * SUPERSAMPLE
    pixels_per_unit = (scale_up / 2) * (1 - 2 * margin) / radius
    right, up, towards = _camera(azimuth, elevation)
    relative = corners - centre
    screen_x = scale_up / 2 + (relative @ right) * pixels_per_unit
    screen_y = scale_up / 2 - (relative @ up) * pixels_per_unit
    depth = relative @ towards  # larger is nearer the camera

    # Flat shading: the face's normal, turned to face the camera, against a light from the
    # upper left of the viewer.
    normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    lengths = np.linalg.norm(normals, axis=1)
    keep = lengths > 0
    normals[keep] /= lengths[keep, None]
    normals *= np.where((normals @ towards) < 0, -1.0, 1.0)[:, None]
    light = towards * 0.75 + up * 0.55 - right * 0.35
    light /= np.linalg.norm(light)
    intensity = AMBIENT + (1 - AMBIENT) * np.clip(normals @ light, 0.0, 1.0)
    colours = (np.outer(intensity, BASE_COLOUR)).clip(0, 255).astype(np.uint8)

    image = np.empty((scale_up, scale_up, 3), np.uint8)
    image[:] = BACKGROUND
    zbuffer = np.full((scale_up, scale_up), -np.inf)
    _rasterise(screen_x, screen_y, depth, colours, keep, image, zbuffer)
    picture = Image.fromarray(image, "RGB")
    if SUPERSAMPLE != 1:
        picture = picture.resize((size, size), Image.Resampling.BOX)
    return picture


def _rasterise(
    xs: np.ndarray,
    ys: np.ndarray,
    zs: np.ndarray,
    colours: np.ndarray,
    keep: np.ndarray,
    image: np.ndarray,
    zbuffer: np.ndarray,
) -> None:
    """Fill each triangle's pixels (centres inside, edge functions) nearer than the z-buffer.
    One numpy pass per triangle over its bounding box."""
    import numpy as np

    height, width = zbuffer.shape
    left = np.clip(np.floor(xs.min(axis=1)).astype(np.int64), 0, width - 1)
    right = np.clip(np.ceil(xs.max(axis=1)).astype(np.int64), 0, width - 1)
    top = np.clip(np.floor(ys.min(axis=1)).astype(np.int64), 0, height - 1)
    bottom = np.clip(np.ceil(ys.max(axis=1)).astype(np.int64), 0, height - 1)
    area = (xs[:, 1] - xs[:, 0]) * (ys[:, 2] - ys[:, 0]) - (xs[:, 2] - xs[:, 0]) * (ys[:, 1] - ys[:, 0])
    for face in np.flatnonzero(keep & (np.abs(area) > 1e-12)):
        x0, x1, y0, y1 = left[face], right[face] + 1, top[face], bottom[face] + 1
        px = np.arange(x0, x1) + 0.5
        py = (np.arange(y0, y1) + 0.5)[:, None]
        ax, bx, cx = xs[face]
        ay, by, cy = ys[face]
        # Barycentric weights from signed edge functions, normalised by the signed area so
        # both windings work.
        w0 = ((bx - px) * (cy - py) - (cx - px) * (by - py)) / area[face]
        w1 = ((cx - px) * (ay - py) - (ax - px) * (cy - py)) / area[face]
        w2 = 1.0 - w0 - w1
        inside = (w0 >= 0) & (w1 >= 0) & (w2 >= 0)
        if not inside.any():
            continue
        z = w0 * zs[face, 0] + w1 * zs[face, 1] + w2 * zs[face, 2]
        window = zbuffer[y0:y1, x0:x1]
        nearer = inside & (z > window)
        window[nearer] = z[nearer]
        image[y0:y1, x0:x1][nearer] = colours[face]


def render_png(mesh: Mesh, size: int = 512) -> bytes:
    """The preview as PNG bytes."""
    import io

    buffer = io.BytesIO()
    render(mesh, size).save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()
