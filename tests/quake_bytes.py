"""Quake files built by hand from the byte layouts in the spec (quake-assets.md), for the tests."""

from __future__ import annotations

import struct
from typing import TypedDict


class MdlGeometry(TypedDict):
    """`mdl_bytes`' geometry arguments, kept together by tests that build one model many ways."""

    st: list[tuple[int, int, int]]
    triangles: list[tuple[int, int, int, int]]
    poses: list[list[tuple[int, int, int]]]


def wad_bytes(lumps: list[tuple[bytes, int, bytes]], magic: bytes = b"WAD2") -> bytes:
    """A WAD as qpakman lays it out: header, lump data from 12, the directory last."""
    body = b""
    records = b""
    for name, lump_type, data in lumps:
        records += struct.pack("<iiiBBH16s", 12 + len(body), len(data), len(data), lump_type, 0, 0, name)
        body += data
    return magic + struct.pack("<ii", len(lumps), 12 + len(body)) + body + records


def qpic_bytes(width: int, height: int, pixels: bytes) -> bytes:
    return struct.pack("<ii", width, height) + pixels


def miptex_bytes(name: bytes, width: int, height: int, mips: list[bytes] | None = None) -> bytes:
    """A miptex record: 40-byte header, then four mips (made from a pattern when not given)."""
    if mips is None:
        mips = [bytes((x * 7 + level) % 224 for x in range((width >> level) * (height >> level))) for level in range(4)]
    offsets = []
    position = 40
    for mip in mips:
        offsets.append(position)
        position += len(mip)
    return struct.pack("<16sII4I", name.ljust(16, b"\0"), width, height, *offsets) + b"".join(mips)


def wal_bytes(width: int, height: int, flags: int = 0x10) -> bytes:
    mips = [bytes((x * 3) % 256 for x in range((width >> level) * (height >> level))) for level in range(4)]
    offsets = []
    position = 100
    for mip in mips:
        offsets.append(position)
        position += len(mip)
    header = struct.pack("<32sII4I32siii", b"watertest", width, height, *offsets, b"", flags, 1, 50)
    return header + b"".join(mips)


def spr_bytes(frames: list[tuple[int, int, bytes]], group: list[tuple[float, int, int, bytes]] | None = None) -> bytes:
    """A sprite: single frames (w, h, pixels), then optionally one group of (interval, w, h, pixels)."""
    count = len(frames) + (1 if group else 0)
    width = max([w for w, _, _ in frames] + [w for _, w, _, _ in group or []])
    height = max([h for _, h, _ in frames] + [h for _, _, h, _ in group or []])
    out = struct.pack("<4siifiiifi", b"IDSP", 1, 2, 11.3, width, height, count, 0.0, 0)
    for w, h, pixels in frames:
        out += struct.pack("<iiiii", 0, -w // 2, h // 2, w, h) + pixels
    if group:
        out += struct.pack("<ii", 1, len(group)) + struct.pack(f"<{len(group)}f", *[g[0] for g in group])
        for _, w, h, pixels in group:
            out += struct.pack("<iiii", -w // 2, h // 2, w, h) + pixels
    return out


def mdl_bytes(
    *,
    skin_size: tuple[int, int] = (8, 4),
    st: list[tuple[int, int, int]],
    triangles: list[tuple[int, int, int, int]],
    poses: list[list[tuple[int, int, int]]],
    group_from: int | None = None,
    skin_group: bool = False,
    counts: dict[str, int] | None = None,
) -> bytes:
    """An MDL (IDPO v6) with scale 1 and translate 0: one skin (or a group of two), the
    st-vertices, triangles, and poses; poses from `group_from` on form one frame group."""
    width, height = skin_size
    single_count = len(poses) if group_from is None else group_from
    frame_count = single_count + (0 if group_from is None else 1)
    fields = {
        "skins": 1,
        "width": width,
        "height": height,
        "vertices": len(st),
        "triangles": len(triangles),
        "frames": frame_count,
    }
    fields.update(counts or {})
    out = struct.pack(
        "<4si3f3ff3fiiiiiiiif",
        b"IDPO",
        6,
        1.0,
        1.0,
        1.0,
        0.0,
        0.0,
        0.0,
        30.0,
        0.0,
        0.0,
        0.0,
        fields["skins"],
        fields["width"],
        fields["height"],
        fields["vertices"],
        fields["triangles"],
        fields["frames"],
        0,
        8,
        4.0,
    )
    skin = bytes(range(width * height))
    if skin_group:
        out += struct.pack("<ii2f", 1, 2, 0.1, 0.2) + skin + bytes(reversed(skin))
    else:
        out += struct.pack("<i", 0) + skin
    for on_seam, s, t in st:
        out += struct.pack("<iii", on_seam, s, t)
    for front, a, b, c in triangles:
        out += struct.pack("<iiii", front, a, b, c)

    def pose(number: int, vertices: list[tuple[int, int, int]]) -> bytes:
        body = b"".join(struct.pack("<4B", x, y, z, 0) for x, y, z in vertices)
        return struct.pack("<4B4B", 0, 0, 0, 0, 255, 255, 255, 0) + f"pose{number}".encode().ljust(16, b"\0") + body

    for number in range(single_count):
        out += struct.pack("<i", 0) + pose(number, poses[number])
    if group_from is not None:
        members = poses[group_from:]
        intervals = [0.1 * (k + 1) for k in range(len(members))]
        out += struct.pack("<ii", 1, len(members)) + struct.pack("<4B4B", 0, 0, 0, 0, 255, 255, 255, 0)
        out += struct.pack(f"<{len(members)}f", *intervals)
        for k, vertices in enumerate(members):
            out += pose(group_from + k, vertices)
    return out


def bsp_bytes(
    texture_name: bytes = b"wall",
    *,
    texinfo_miptex: int = 0,
    lumps: dict[int, tuple[int, int]] | None = None,
    bsp2: bool = False,
) -> bytes:
    """A BSP29 with one 64x64 square face at z = 0 facing +Z (clockwise seen from above, as the
    compilers write it), one texinfo (s = x, t = y), one 16x16 miptex, one model."""
    entities = b'{\n"classname" "worldspawn"\n}\n\0'
    planes = struct.pack("<4fi", 0.0, 0.0, 1.0, 0.0, 2)
    miptex = miptex_bytes(texture_name, 16, 16)
    textures = struct.pack("<ii", 1, 8) + miptex
    vertexes = b"".join(struct.pack("<3f", x, y, 0.0) for x, y in ((0, 0), (0, 64), (64, 64), (64, 0)))
    texinfo = struct.pack("<4f4fii", 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, texinfo_miptex, 0)
    if bsp2:  # 32-bit faces and edges (ericw-tools' BSP2)
        faces = struct.pack("<iiiiiBBBBi", 0, 0, 0, 4, 0, 255, 255, 255, 255, -1)
        edges = struct.pack("<10I", 0, 0, 0, 1, 1, 2, 2, 3, 0, 3)
    else:
        faces = struct.pack("<HhihhBBBBi", 0, 0, 0, 4, 0, 255, 255, 255, 255, -1)
        edges = struct.pack("<10H", 0, 0, 0, 1, 1, 2, 2, 3, 0, 3)
    surfedges = struct.pack("<4i", 1, 2, 3, -4)
    models = struct.pack("<9f4iiii", 0, 0, 0, 64, 64, 0, 0, 0, 0, 0, -1, -1, -1, 0, 0, 1)
    contents = {
        0: entities,
        1: planes,
        2: textures,
        3: vertexes,
        6: texinfo,
        7: faces,
        12: edges,
        13: surfedges,
        14: models,
    }
    body = b""
    table = []
    for index in range(15):
        data = contents.get(index, b"")
        table.append((124 + len(body), len(data)))
        body += data + b"\0" * (-len(data) % 4)
    for index, fields in (lumps or {}).items():
        table[index] = fields
    version = b"BSP2" if bsp2 else struct.pack("<i", 29)
    return version + b"".join(struct.pack("<ii", *fields) for fields in table) + body
