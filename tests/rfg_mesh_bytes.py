"""RFG mesh pairs (CPU + GPU file) built by hand from the spec's byte layout
(../shared/specs/rfg-meshes.md), independent of the reader under test: header (4- or 8-byte
fields), mesh config, submeshes, render blocks, end hash, material map and offset list,
materials, texture names, LOD ids, tags / bones, spheres, cylinders; the GPU file's hash,
indices, padding, vertices and end hash."""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

STATIC, CHARACTER = 0xC0FFEE11, 0xFAC351A9


def crc(name: str) -> int:
    """Volition's CRC: reflected CRC-32 from 0, no final inversion, lower-cased."""
    value = 0
    for byte in name.lower().encode():
        value ^= byte
        for _ in range(8):
            value = (value >> 1) ^ (0xEDB88320 if value & 1 else 0)
    return value


assert crc("rfg-standard") == 0x45403103 == (~zlib.crc32(b"rfg-standard", 0xFFFFFFFF) & 0xFFFFFFFF)


def pad16(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 16)


@dataclass
class Vertex:
    position: tuple[float, float, float]
    normal: tuple[int, int, int, int] = (127, 255, 127, 127)
    tangent: tuple[int, int, int, int] = (255, 127, 127, 255)
    weights: tuple[int, int, int, int] = (255, 0, 0, 0)
    joints: tuple[int, int, int, int] = (0, 0, 0, 0)
    uvs: list[tuple[int, int]] = field(default_factory=list)


# code -> (nmap, ca, fixed uv count or None)
FORMATS: dict[int, tuple[bool, bool, int | None]] = {
    0: (False, False, None),
    1: (False, True, None),
    2: (True, False, None),
    3: (True, True, None),
}
FORMATS[30] = (False, False, 0)
for _k in range(1, 5):
    for _step, (_nmap, _ca) in enumerate(((False, False), (False, True), (True, False), (True, True))):
        FORMATS[31 + 4 * (_k - 1) + _step] = (_nmap, _ca, _k)


def vertex_bytes(vertex: Vertex, fmt: int, uv_sets: int) -> bytes:
    nmap, ca, _ = FORMATS[fmt]
    out = struct.pack("<3f", *vertex.position) + bytes(vertex.normal)
    if nmap:
        out += bytes(vertex.tangent)
    if ca:
        out += bytes(vertex.weights) + bytes(vertex.joints)
    uvs = list(vertex.uvs) + [(0, 0)] * (uv_sets - len(vertex.uvs))
    for u, v in uvs[:uv_sets]:
        out += struct.pack("<hh", u, v)
    return out


@dataclass
class MaterialSpec:
    shader: str = "rfg-standard"
    name_crc: int = 0x1C41EAA4
    flags: int = 0
    textures: list[tuple[str, str]] = field(default_factory=lambda: [("Thing_d.tga", "Diffuse_Map")])
    constants: list[tuple[str, tuple[float, float, float, float]]] = field(
        default_factory=lambda: [("Specular_Power", (100.0, 0, 0, 0)), ("Diffuse_Color", (1.0, 1.0, 1.0, 1.0))]
    )
    slots: int | None = None  # constant slots (default: the constant count)


@dataclass
class MeshSpec:
    vertices: list[Vertex]
    # per submesh: list of (material, index list) blocks
    submeshes: list[list[tuple[int, list[int]]]]
    kind: str = "static"
    remaster: bool = False
    vertex_format: int = 2
    uv_sets: int = 1
    index_size: int = 2
    topology: int = 0
    materials: list[MaterialSpec] = field(default_factory=lambda: [MaterialSpec()])
    lod_ids: list[int] | None = None
    bones: list[int] = field(default_factory=list)
    spheres: list[tuple[int, int, tuple[float, float, float], float]] = field(default_factory=list)
    cylinders: list[tuple[int, int, tuple[float, float, float], tuple[float, float, float], float, float]] = field(
        default_factory=list
    )
    hash: int = 0x6E5B343B
    boxes: list[tuple[tuple[float, ...], tuple[float, ...]]] | None = None


def build(spec: MeshSpec) -> tuple[bytes, bytes]:
    """(CPU bytes, GPU bytes) of a mesh pair as the spec lays them out."""
    nmap, ca, fixed = FORMATS[spec.vertex_format]
    uv_sets = fixed if fixed is not None else spec.uv_sets
    stride = 12 + 4 + 4 * nmap + 8 * ca + 4 * uv_sets
    indices = [index for submesh in spec.submeshes for _, block in submesh for index in block]
    index_format = "<H" if spec.index_size == 2 else "<I"
    index_bytes = b"".join(struct.pack(index_format, index) for index in indices)
    vertex_at = 16 + len(index_bytes) + (-(16 + len(index_bytes)) % 16)
    gpu = struct.pack("<I12x", spec.hash) + pad16(index_bytes)
    assert len(gpu) == vertex_at
    gpu += b"".join(vertex_bytes(vertex, spec.vertex_format, uv_sets) for vertex in spec.vertices)
    gpu += struct.pack("<I", spec.hash)

    character = spec.kind == "character"
    width = 8 if spec.remaster else 4
    field_count = 12 if character else 11
    header_end = 8 + width * field_count
    config_at = header_end + (-header_end % 16)

    # Config: fixed part, submeshes, blocks, end hash.
    submesh_records = b""
    block_records = b""
    first = 0
    for number, submesh in enumerate(spec.submeshes):
        used = [index for _, block in submesh for index in block] or [0]
        if spec.boxes is not None:
            low, high = spec.boxes[number]
        else:
            points = [spec.vertices[index].position for index in used if index < len(spec.vertices)] or [(0, 0, 0)]
            low = tuple(min(point[axis] for point in points) for axis in range(3))
            high = tuple(max(point[axis] for point in points) for axis in range(3))
        submesh_records += struct.pack("<I3f3f3fI", len(submesh), 0, 0, 0, *low, *high, 0x0A511C60)
        for material_index, block in submesh:
            block_records += struct.pack(
                "<HHIIII", material_index, 0, first, len(block), min(block or [0]), max(block or [0])
            )
            first += len(block)
    block_count = sum(len(submesh) for submesh in spec.submeshes)
    config_size = 0x30 + len(submesh_records) + len(block_records) + 4
    config = struct.pack(
        "<IIIIIIIBBBBIIIBBH",
        4,
        spec.hash,
        config_size,
        len(gpu),
        len(spec.submeshes),
        0x30,
        len(spec.vertices),
        stride,
        spec.vertex_format,
        uv_sets,
        0,
        vertex_at,
        len(indices),
        16,
        spec.index_size,
        spec.topology,
        block_count,
    )
    config += submesh_records + block_records + struct.pack("<I", spec.hash)

    body = bytearray(b"\0" * config_at) + config
    body += b"\0" * (-len(body) % 16)
    material_map_at = len(body)
    body += struct.pack("<IIII", 0x0A511C90, len(spec.materials), 0x0A511CA0, 0)
    list_at = len(body)
    body += b"\0" * (8 * len(spec.materials))
    body += b"\0" * (-len(body) % 16)

    # Texture names: each distinct name once, NUL + padding to 4 after the NUL... (any packing).
    names: dict[str, int] = {}
    names_blob = b""
    for material in spec.materials:
        for name, _ in material.textures:
            if name not in names:
                names[name] = len(names_blob)
                names_blob += name.encode() + b"\0\0\0"
    names_blob = pad16(names_blob)

    material_offsets = []
    for material in spec.materials:
        at = len(body)
        material_offsets.append(at)
        slots = material.slots if material.slots is not None else len(material.constants)
        record = b"".join(
            struct.pack("<III", names[name], crc(slot), number) for number, (name, slot) in enumerate(material.textures)
        )
        constants = b"".join(struct.pack("<I", crc(name)) for name, _ in material.constants)
        head_size = 32 + len(record)
        tail = constants + b"\0" * (-(head_size + len(constants)) % 16)
        values = b"".join(struct.pack("<4f", *value) for _, value in material.constants)
        values += b"\0" * (16 * slots - len(values))
        size = head_size + len(tail) + len(values)
        head = struct.pack(
            "<IIIIHBB12s",
            size,
            crc(material.shader),
            material.name_crc,
            material.flags,
            len(material.textures),
            len(material.constants),
            slots,
            b"\x60\x1c\x51\x0a" * 3,
        )
        body += head + record + tail + values
    for number, at in enumerate(material_offsets):
        struct.pack_into("<I", body, list_at + 8 * number, at)
    names_at = len(body)
    body += names_blob
    lod_ids = spec.lod_ids if spec.lod_ids is not None else [0]
    lod_at = len(body)
    body += b"".join(struct.pack("<i", value) for value in lod_ids)
    tail_at = len(body)
    if character:
        body += b"".join(struct.pack("<I", bone) for bone in spec.bones)
        spheres_at = len(body)
        body += b"".join(struct.pack("<Ii3ff", a, b, *c, d) for a, b, c, d in spec.spheres)
        cylinders_at = len(body)
        body += b"".join(struct.pack("<Ii3f3fff", a, b, *c, *d, e, f) for a, b, c, d, e, f in spec.cylinders)
        counts = struct.unpack("<I", struct.pack("<hh", len(spec.spheres), len(spec.cylinders)))[0]
        fields = [
            config_at,
            material_map_at,
            list_at,
            len(spec.materials),
            names_at,
            len(lod_ids),
            lod_at,
            len(spec.bones),
            tail_at,
            counts,
            spheres_at,
            cylinders_at,
        ]
    else:
        body += struct.pack("<I", 0)  # tag count
        fields = [config_at, material_map_at, list_at, len(spec.materials), names_at, len(lod_ids), lod_at]
        fields += [tail_at, 0, 0xFFFFFFFF, 0]
    signature = CHARACTER if character else STATIC
    version = (4 if spec.remaster else 3) if character else (5 if spec.remaster else 4)
    header = struct.pack("<II", signature, version)
    for value in fields:
        header += struct.pack("<Q" if spec.remaster else "<I", value)
    body[: len(header)] = header
    return bytes(body), gpu


def quad_spec(**changes: object) -> MeshSpec:
    """A small static mesh: a unit quad in the XZ plane facing +Y, as one strip of 4 indices
    plus a strip with a degenerate join (two quads), normals up."""
    vertices = [
        Vertex((0.0, 0.0, 0.0), uvs=[(0, 0)]),
        Vertex((0.0, 0.0, 1.0), uvs=[(0, 1024)]),
        Vertex((1.0, 0.0, 0.0), uvs=[(1024, 0)]),
        Vertex((1.0, 0.0, 1.0), uvs=[(1024, 1024)]),
        Vertex((2.0, 0.0, 0.0), uvs=[(2048, 0)]),
        Vertex((2.0, 0.0, 1.0), uvs=[(2048, 1024)]),
    ]
    # Left-handed, Y up: seen from above (+Y), x right and z forward, clockwise is front.
    # Triangle (0, 1, 2): (1-0)x(2-0) = (0,0,1)x(1,0,0) = (0,1,0): up, along the normal.
    spec = MeshSpec(vertices, [[(0, [0, 1, 2, 3, 3, 2, 2, 3, 4, 5])]], uv_sets=1)
    for key, value in changes.items():
        setattr(spec, key, value)
    return spec


def rig_bytes(bones: list[tuple[str, int, tuple[float, float, float]]], tags: int = 0) -> bytes:
    """A `.rig_pc`: 64-byte header (zero name and offsets), name CRCs, 36-byte bones (name
    offset, inverse translation, translation, parent, id), 60-byte tags, then the names."""
    names = b""
    offsets = []
    for name, _, _ in bones:
        offsets.append(len(names))
        names += name.encode() + b"\0"
    out = struct.pack("<32sIiiiiiii", b"", 0, len(bones), len(bones), 0, tags, 0, 0, 0)
    out += b"".join(struct.pack("<I", crc(name)) for name, _, _ in bones)
    for number, (_, parent, translation) in enumerate(bones):
        out += struct.pack("<i3f3fii", offsets[number], *(-v for v in translation), *translation, parent, number)
    out += b"\0" * (60 * tags)
    return out + names
