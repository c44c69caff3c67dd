"""Stanford PLY models: gamepak writes binary little-endian, and reads binary (either byte
order) and ASCII.

What gamepak writes:

| part   | content                                                                    |
|--------|----------------------------------------------------------------------------|
| header | `ply`, `format binary_little_endian 1.0`; `element vertex U`: float x y z     |
|        | [float nx ny nz] [double s t]; `element face F`: `property list uchar int vertex_indices` |
| vertex | U records: float32 positions and normals, float64 texture coordinates       |
| face   | F records: uint8 3, int32 a, b, c                                           |

Every distinct (position, normal, texcoord) corner becomes one PLY vertex. Texture coordinates
are flipped: PLY's t = 0 is the image's bottom row (Blender and most tools), JOE's v = 0 its top
row (as glTF's), so t holds 1 - v, and reading flips it back. They are doubles, so that 1 - v is
stored exactly and a round trip gives the same float32 back. PLY files are Z up by default, as
JOE models and Blender's PLY importer and exporter are (`gamepak.models` turns them for
`up="y"`). NaN or infinite values are refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .mesh import ModelError

if TYPE_CHECKING:
    from .mesh import Mesh

PLY_TYPES = {
    "char": "i1",
    "int8": "i1",
    "uchar": "u1",
    "uint8": "u1",
    "short": "i2",
    "int16": "i2",
    "ushort": "u2",
    "uint16": "u2",
    "int": "i4",
    "int32": "i4",
    "uint": "u4",
    "uint32": "u4",
    "float": "f4",
    "float32": "f4",
    "double": "f8",
    "float64": "f8",
}
TEXCOORD_NAMES = (("s", "t"), ("u", "v"), ("texture_u", "texture_v"), ("texture_s", "texture_t"))


def write(mesh: Mesh) -> bytes:
    """Binary little-endian PLY of frame 0 of `mesh`."""
    import numpy as np

    mesh.require_finite("PLY")
    unique, inverse = mesh.unique_vertices()
    fields = [("x", "<f4"), ("y", "<f4"), ("z", "<f4")]
    has_normals, has_texcoords = bool(len(mesh.normals)), bool(len(mesh.texcoords))
    if has_normals:
        fields += [("nx", "<f4"), ("ny", "<f4"), ("nz", "<f4")]
    if has_texcoords:
        fields += [("s", "<f8"), ("t", "<f8")]
    vertices = np.zeros(len(unique), dtype=fields)
    positions = mesh.positions[unique[:, 0]]
    vertices["x"], vertices["y"], vertices["z"] = positions.T
    if has_normals:
        normals = mesh.normals[unique[:, 1]]
        vertices["nx"], vertices["ny"], vertices["nz"] = normals.T
    if has_texcoords:
        texcoords = mesh.texcoords[unique[:, 2]].astype(np.float64)
        vertices["s"], vertices["t"] = texcoords[:, 0], 1.0 - texcoords[:, 1]
    faces = np.zeros(mesh.face_count, dtype=[("count", "u1"), ("indices", "<i4", (3,))])
    faces["count"] = 3
    faces["indices"] = inverse.reshape(-1, 3)
    header = ["ply", "format binary_little_endian 1.0", "comment written by gamepak"]
    if mesh.name:
        header.append(f"comment name {mesh.name}")
    header.append(f"element vertex {len(vertices)}")
    header += [f"property {'double' if kind == '<f8' else 'float'} {field}" for field, kind in fields]
    header += [f"element face {len(faces)}", "property list uchar int vertex_indices", "end_header"]
    return ("\n".join(header) + "\n").encode("ascii") + vertices.tobytes() + faces.tobytes()


def _parse_header(data: bytes, label: str) -> tuple[str, list[dict[str, Any]], int]:
    end = data.find(b"end_header")
    if not data.startswith(b"ply") or end < 0:
        raise ModelError(f"{label}: not a PLY file (no 'ply' ... 'end_header')")
    line_end = data.find(b"\n", end)
    body_start = len(data) if line_end < 0 else line_end + 1
    encoding = ""
    elements: list[dict[str, Any]] = []
    for raw_line in data[:end].decode("ascii", "replace").splitlines()[1:]:
        words = raw_line.split()
        if not words or words[0] in ("comment", "obj_info"):
            continue
        if words[0] == "format" and len(words) >= 2:
            encoding = words[1]
        elif words[0] == "element" and len(words) == 3 and words[2].isdigit():
            elements.append({"name": words[1], "count": int(words[2]), "properties": []})
        elif words[0] == "property" and elements:
            if words[-1] in {prop[0] for prop in elements[-1]["properties"]}:
                raise ModelError(f"{label}: PLY element {elements[-1]['name']!r} declares property {words[-1]!r} twice")
            if len(words) == 5 and words[1] == "list" and words[2] in PLY_TYPES and words[3] in PLY_TYPES:
                elements[-1]["properties"].append((words[4], PLY_TYPES[words[2]], PLY_TYPES[words[3]]))
            elif len(words) == 3 and words[1] in PLY_TYPES:
                elements[-1]["properties"].append((words[2], PLY_TYPES[words[1]], None))
            else:
                raise ModelError(f"{label}: PLY header line {raw_line!r} is not understood")
        else:
            raise ModelError(f"{label}: PLY header line {raw_line!r} is not understood")
    if encoding not in ("ascii", "binary_little_endian", "binary_big_endian"):
        raise ModelError(f"{label}: unknown PLY format {encoding!r}")
    return encoding, elements, body_start


def read(data: bytes, *, name: str = "", path: str | None = None) -> Mesh:
    """Parse a PLY model (vertex x/y/z, optional normals and s/t, faces as index lists; polygons
    are cut into triangles in their own winding)."""
    import numpy as np

    from .mesh import Mesh

    label = path or name or "<bytes>"
    encoding, elements, position = _parse_header(data, label)
    tables: dict[str, dict[str, Any]] = {}
    if encoding == "ascii":
        tokens = data[position:].split()
        cursor = 0
        for element in elements:
            table, cursor = _ascii_element(element, tokens, cursor, label)
            tables[element["name"]] = table
    else:
        order = "<" if encoding == "binary_little_endian" else ">"
        for element in elements:
            table, position = _binary_element(element, data, position, order, label)
            tables[element["name"]] = table
    vertex = tables.get("vertex")
    if vertex is None or not all(axis in vertex for axis in "xyz"):
        raise ModelError(f"{label}: the PLY file has no vertex x, y, z")
    positions = np.stack([vertex[axis] for axis in "xyz"], axis=1)
    normals = (
        np.stack([vertex[axis] for axis in ("nx", "ny", "nz")], axis=1)
        if all(axis in vertex for axis in ("nx", "ny", "nz"))
        else None
    )
    texcoords = None
    for u_name, v_name in TEXCOORD_NAMES:
        if u_name in vertex and v_name in vertex:
            # PLY's t = 0 is the image's bottom row, JOE's v = 0 its top row.
            texcoords = np.stack([vertex[u_name], 1.0 - vertex[v_name].astype(np.float64)], axis=1)
            break
    face = tables.get("face", {})
    index_name = "vertex_indices" if "vertex_indices" in face else "vertex_index"
    polygons = face.get(index_name)
    declared = {prop[0]: prop for element in elements if element["name"] == "face" for prop in element["properties"]}
    if polygons is not None and declared[index_name][2] is None:
        raise ModelError(f"{label}: the faces' {index_name} is one number per face, not a list property")
    triangles = _triangles(polygons, positions, label) if polygons is not None else np.zeros((0, 3), np.int64)
    if triangles.size and (triangles.min() < 0 or triangles.max() >= len(positions)):
        raise ModelError(f"{label}: a face index is past the {len(positions)} vertices")
    mesh = Mesh.from_vertices(positions, triangles, normals, texcoords, name=name, source=label)
    return mesh.compacted()


def _triangles(polygons: Any, positions: Any, label: str) -> Any:
    """(F, 3) triangles from either an (F, 3) array or a list of index arrays (polygons cut in
    their own winding, see `triangulate`)."""
    import numpy as np

    from .triangulate import triangulate

    if isinstance(polygons, np.ndarray) and polygons.ndim == 2:
        if polygons.shape[1] == 3:
            return polygons.astype(np.int64)
        polygons = list(polygons)
    polygons = [np.asarray(polygon, dtype=np.int64) for polygon in polygons if len(polygon) >= 3]
    for number, polygon in enumerate(polygons):
        if polygon.min() < 0 or polygon.max() >= len(positions):
            raise ModelError(f"{label}: face {number} has an index past the {len(positions)} vertices")
    cuts = triangulate(np.asarray(positions, dtype=np.float64), [polygon.tolist() for polygon in polygons])
    triangles = [polygon[cut] for polygon, cut in zip(polygons, cuts)]
    return np.concatenate(triangles).reshape(-1, 3) if triangles else np.zeros((0, 3), np.int64)


def _binary_element(
    element: dict[str, Any], data: bytes, position: int, order: str, label: str
) -> tuple[dict[str, Any], int]:
    import numpy as np

    count = element["count"]
    properties = element["properties"]
    lists = [prop for prop in properties if prop[2] is not None]
    if not lists:
        dtype = np.dtype([(prop[0], order + prop[1]) for prop in properties])
        if position + dtype.itemsize * count > len(data):
            raise ModelError(f"{label}: PLY element {element['name']!r} runs past the end of the file")
        records = np.frombuffer(data, dtype, count, position)
        return {name: records[name] for name, _, _ in properties}, position + dtype.itemsize * count
    if len(properties) == 1 and count:
        # The common face layout: one list per record. Try the all-triangles fast path first.
        name, count_type, item_type = properties[0]
        dtype = np.dtype([("count", order + count_type), ("items", order + item_type, (3,))])
        if position + dtype.itemsize * count <= len(data):
            records = np.frombuffer(data, dtype, count, position)
            if (records["count"] == 3).all():
                return {name: records["items"].astype(np.int64)}, position + dtype.itemsize * count
    # General case: walk the records (polygons of any size, several properties).
    columns: dict[str, list[Any]] = {prop[0]: [] for prop in properties}
    for _ in range(count):
        for name, first_type, item_type in properties:
            if item_type is None:
                scalar = np.dtype(order + first_type)
                if position + scalar.itemsize > len(data):
                    raise ModelError(f"{label}: PLY element {element['name']!r} runs past the end of the file")
                columns[name].append(np.frombuffer(data, scalar, 1, position)[0])
                position += scalar.itemsize
            else:
                length_type, items = np.dtype(order + first_type), np.dtype(order + item_type)
                if position + length_type.itemsize > len(data):
                    raise ModelError(f"{label}: PLY element {element['name']!r} runs past the end of the file")
                length = int(np.frombuffer(data, length_type, 1, position)[0])
                position += length_type.itemsize
                if length < 0 or position + length * items.itemsize > len(data):
                    raise ModelError(f"{label}: PLY element {element['name']!r} runs past the end of the file")
                columns[name].append(np.frombuffer(data, items, length, position).astype(np.int64))
                position += length * items.itemsize
    return {
        name: (np.array(values) if not values or np.ndim(values[0]) == 0 else values)
        for name, values in columns.items()
    }, position


def _ascii_element(element: dict[str, Any], tokens: list[bytes], cursor: int, label: str) -> tuple[dict[str, Any], int]:
    import numpy as np

    if not element["properties"]:
        return {}, cursor  # records of nothing take no tokens: its count (any number) is not walked
    columns: dict[str, list[Any]] = {prop[0]: [] for prop in element["properties"]}
    try:
        for _ in range(element["count"]):
            for name, _first_type, item_type in element["properties"]:
                if item_type is None:
                    columns[name].append(float(tokens[cursor]))
                    cursor += 1
                else:
                    length = int(tokens[cursor])
                    items = tokens[cursor + 1 : cursor + 1 + length]
                    columns[name].append(np.array([int(token) for token in items], dtype=np.int64))
                    if len(columns[name][-1]) != length:
                        raise IndexError
                    cursor += 1 + length
    except (IndexError, ValueError, OverflowError):  # OverflowError: an index past 64 bits
        raise ModelError(f"{label}: PLY element {element['name']!r} is truncated or malformed") from None
    return {
        name: (np.array(values) if not values or np.ndim(values[0]) == 0 else values)
        for name, values in columns.items()
    }, cursor
