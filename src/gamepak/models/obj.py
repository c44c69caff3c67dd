"""Wavefront OBJ (text) models, with an optional MTL file naming a texture.

| line                 | meaning                                                   |
|----------------------|-----------------------------------------------------------|
| `v x y z [w]`        | a position (w ignored)                                    |
| `vn x y z`           | a normal                                                  |
| `vt u [v [w]]`       | a texture coordinate (w ignored)                          |
| `f v/t/n v/t/n ...`  | a polygon; `v`, `v/t`, `v//n`, `v/t/n`; 1-based, negative counts back from the last |
| `mtllib`, `usemtl`, `o`, `g`, `s`, `l`, `p` | kept out of the mesh (lines and points are not faces) |

Polygons are cut into triangles in their own winding (a fan when convex, ear clipping when not:
see `triangulate`). Values repeated in the file (the same `v` line twice, as many exporters write
per face) are stored once, so a mesh's index spaces are as small as its distinct values.

These functions read and write coordinates as they are; `gamepak.models` turns them, since OBJ
files are Y up by default (Blender's OBJ exporter and importer: forward -Z, up Y) while meshes
are Z up. Texture coordinates are flipped: OBJ's v = 0 is the image's bottom row (Blender and most
OBJ tools), JOE's is its top row (as glTF's), so `vt u v` holds 1 - v. Values are written with 9
significant digits, and a flipped v as the shortest text of the exact 1 - v, so float32 values
survive a round trip exactly (a v of -0 comes back as 0, and one nearer 0 than 2^-30 within 1e-16);
NaN or infinite values are refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .mesh import ModelError

if TYPE_CHECKING:
    import numpy as np

    from .mesh import Mesh


# Statements of polygon OBJ files (the ones gamepak does not use are skipped).
OBJ_KEYWORDS = frozenset(("v", "vn", "vt", "vp", "f", "l", "p", "o", "g", "s", "mtllib", "usemtl"))


def value_rows(keyword: str, values: np.ndarray) -> str:
    """`keyword v0 v1 ...` lines for every row, formatted in one C-level operation."""
    if not len(values):
        return ""
    width = values.shape[1]
    line = keyword + " %.9g" * width + "\n"
    return (line * len(values)) % tuple(values.ravel().tolist())


def texcoord_rows(texcoords: np.ndarray) -> str:
    """`vt u v` lines for JOE texture coordinates, v flipped to OBJ's bottom-row origin: 1 - v
    is exact in float64 and written as its shortest exact text, so reading flips it back to the
    same float32."""
    import numpy as np

    if not len(texcoords):
        return ""
    values = np.stack([texcoords[:, 0].astype(np.float64), 1.0 - texcoords[:, 1].astype(np.float64)], axis=1)
    return ("vt %.9g %r\n" * len(values)) % tuple(values.ravel().tolist())


def write(mesh: Mesh, *, material_library: str | None = None, material: str = "material") -> bytes:
    """The OBJ text of frame 0 of `mesh`; `material_library` names an MTL file to use."""
    import numpy as np

    mesh.require_finite("OBJ")
    header = [f"# {mesh.name or 'model'} written by gamepak\n"]
    if material_library:
        header.append(f"mtllib {material_library}\n")
    if mesh.name:
        header.append(f"o {mesh.name.replace(chr(10), ' ')}\n")
    body = [value_rows("v", mesh.positions), texcoord_rows(mesh.texcoords), value_rows("vn", mesh.normals)]
    if material_library:
        body.append(f"usemtl {material}\n")
    one_based = mesh.corners + 1
    has_normals, has_texcoords = bool(len(mesh.normals)), bool(len(mesh.texcoords))
    if has_normals and has_texcoords:
        corner, columns = "%d/%d/%d", [0, 2, 1]
    elif has_normals:
        corner, columns = "%d//%d", [0, 1]
    elif has_texcoords:
        corner, columns = "%d/%d", [0, 2]
    else:
        corner, columns = "%d", [0]
    if mesh.face_count:
        values = one_based[:, :, columns].reshape(-1)
        line = "f " + " ".join([corner] * 3) + "\n"
        body.append((line * mesh.face_count) % tuple(values.astype(np.int64).tolist()))
    return ("".join(header) + "".join(body)).encode("utf-8")


def write_material(texture: str | None, material: str = "material") -> bytes:
    """An MTL file with one white material, textured by `texture` when given."""
    lines = [f"newmtl {material}", "Ka 1 1 1", "Kd 1 1 1", "Ks 0 0 0", "d 1", "illum 1"]
    if texture:
        lines.append(f"map_Kd {texture}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def read(data: bytes, *, name: str = "", path: str | None = None) -> Mesh:
    """Parse OBJ text into a mesh (polygons cut into triangles, repeated values merged)."""
    import numpy as np

    from .mesh import Mesh
    from .triangulate import triangulate

    label = path or name or "<bytes>"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    positions: list[list[float]] = []
    normals: list[list[float]] = []
    texcoords: list[list[float]] = []
    polygons: list[list[tuple[int, int, int]]] = []
    foreign_lines = 0
    counts = {"v": positions, "vn": normals, "vt": texcoords}

    def resolve(token: str, kind: str, line_number: int) -> int:
        # Missing -> -1; fixed up after reading.
        if token == "":
            return -1
        try:
            index = int(token)
        except ValueError:
            raise ModelError(f"{label}: line {line_number}: {token!r} is not an index") from None
        size = len(counts[kind])
        if index < 0:
            index += size
        else:
            index -= 1
        if not 0 <= index < size:
            raise ModelError(f"{label}: line {line_number}: {kind} index {token} is past the {size} defined so far")
        return index

    for line_number, raw_line in enumerate(text.splitlines(), 1):
        line = raw_line.split("#", 1)[0].strip()
        if not line:
            continue
        keyword, _, rest = line.partition(" ")
        fields = rest.split()
        if keyword not in OBJ_KEYWORDS:
            foreign_lines += 1
        try:
            if keyword == "v":
                positions.append([float(value) for value in fields[:3]])
                if len(positions[-1]) != 3:
                    raise ValueError
            elif keyword == "vn":
                normals.append([float(value) for value in fields[:3]])
                if len(normals[-1]) != 3:
                    raise ValueError
            elif keyword == "vt":
                values = [float(value) for value in fields[:2]]
                if not values:
                    raise ValueError
                texcoords.append((values + [0.0])[:2])
        except ValueError:
            raise ModelError(f"{label}: line {line_number}: malformed {keyword!r} line") from None
        if keyword != "f":
            continue
        polygon = []
        for token in fields:
            parts = (token.split("/") + ["", ""])[:3]
            polygon.append(
                (
                    resolve(parts[0], "v", line_number),
                    resolve(parts[2], "vn", line_number),
                    resolve(parts[1], "vt", line_number),
                )
            )
            if polygon[-1][0] < 0:
                raise ModelError(f"{label}: line {line_number}: a face corner without a position")
        if len(polygon) < 3:
            raise ModelError(f"{label}: line {line_number}: a face needs at least 3 corners")
        polygons.append(polygon)

    if not positions and not polygons and foreign_lines:
        # Nothing but comments and OBJ statements is an empty model; anything else is not OBJ.
        raise ModelError(f"{label}: no vertices or faces: not an OBJ model")
    position_array = np.array(positions, dtype=np.float32).reshape(-1, 3)
    corners: list[tuple[int, int, int]] = []
    cuts = triangulate(position_array, [[corner[0] for corner in polygon] for polygon in polygons])
    for polygon, triangles in zip(polygons, cuts):
        corners.extend(polygon[number] for number in triangles.ravel().tolist())
    corner_array = np.array(corners, dtype=np.int64).reshape(-1, 3, 3)
    normal_array = np.array(normals, dtype=np.float32).reshape(-1, 3)
    flipped = np.array(texcoords, dtype=np.float64).reshape(-1, 2)
    flipped[:, 1] = 1.0 - flipped[:, 1]  # OBJ's v = 0 is the image's bottom row, JOE's its top
    texcoord_array = flipped.astype(np.float32)
    mesh = Mesh(position_array, normal_array, texcoord_array, corner_array, name=name, source=label)
    return _fill_missing(mesh).merged_duplicates()


def _fill_missing(mesh: Mesh) -> Mesh:
    """Corners written without a normal get their face's flat normal; without a texture
    coordinate, a (0, 0) one. A model with none of either keeps the attribute empty."""
    import numpy as np

    corners = mesh.corners
    normals, texcoords = mesh.normals, mesh.texcoords
    missing_normal = corners[:, :, 1] < 0
    if missing_normal.all():
        corners[:, :, 1] = 0
        normals = normals[:0]
    elif missing_normal.any():
        faces = np.flatnonzero(missing_normal.any(axis=1))
        flat = mesh.face_normals()[faces].astype(np.float32)
        lookup = np.full(mesh.face_count, -1, dtype=np.int64)
        lookup[faces] = len(normals) + np.arange(len(faces))
        rows, columns = np.nonzero(missing_normal)
        corners[rows, columns, 1] = lookup[rows]
        normals = np.concatenate([normals, flat])
    missing_texcoord = corners[:, :, 2] < 0
    if missing_texcoord.all():
        corners[:, :, 2] = 0
        texcoords = texcoords[:0]
    elif missing_texcoord.any():
        corners[:, :, 2][missing_texcoord] = len(texcoords)
        texcoords = np.concatenate([texcoords, np.zeros((1, 2), np.float32)])
    mesh.normals, mesh.texcoords, mesh.corners = normals, texcoords, corners
    return mesh
