"""The worst inputs of each texture reader for memory: small files whose counts ask for the
most objects or copies (many tiny images, one image referred to many times). Shared by
tests/test_texture_memory.py and benchmarks/bench_texture_memory.py.

Each builder takes the size to aim for in bytes and returns the file's bytes.
"""

from __future__ import annotations

import struct

from quake_bytes import bsp_bytes, miptex_bytes, qpic_bytes, wad_bytes


def bsp_repeated_offsets(size: int, side: int = 256) -> bytes:
    """A BSP whose textures lump names one side x side miptex (87 KB for 256) from every one of
    its (size / 4) slots: a reader copying the record per slot needs slots x 87 KB."""
    miptex = miptex_bytes(b"wall", side, side)
    count = max(1, (size - len(miptex)) // 4)
    start = 4 + 4 * count
    lump = struct.pack(f"<i{count}i", count, *([start] * count)) + miptex
    return _bsp_with_textures(lump)


def bsp_many_tiny_textures(size: int) -> bytes:
    """A BSP of (size / 48) distinct 8x8 miptex (each 40 + 85 bytes)."""
    record = miptex_bytes(b"t", 8, 8)
    count = max(1, size // (len(record) + 4))
    start = 4 + 4 * count
    offsets = [start + index * len(record) for index in range(count)]
    records = b"".join(miptex_bytes(f"t{index}".encode(), 8, 8) for index in range(count))
    return _bsp_with_textures(struct.pack(f"<i{count}i", count, *offsets) + records)


def _bsp_with_textures(lump: bytes) -> bytes:
    """The test BSP with its textures lump (2) replaced by `lump`, put at the end."""
    base = bsp_bytes()
    fields = list(struct.unpack_from("<i30i", base))
    end = len(base)
    fields[1 + 2 * 2], fields[2 + 2 * 2] = end, len(lump)
    return struct.pack("<i30i", *fields) + base[124:] + lump


def wad_many_tiny_pictures(size: int) -> bytes:
    """A WAD of (size / 41) 1x1 qpics (9 bytes each and a 32-byte directory record)."""
    count = max(1, size // 41)
    return wad_bytes([(f"P{index}".encode(), 0x42, qpic_bytes(1, 1, b"\1")) for index in range(count)])


def spr_many_tiny_frames(size: int) -> bytes:
    """A sprite of (size / 21) single 1x1 frames."""
    count = max(1, size // 21)
    header = struct.pack("<4siifiiifi", b"IDSP", 1, 0, 1.0, 1, 1, count, 0.0, 0)
    frame = struct.pack("<iiiii", 0, 0, 0, 1, 1) + b"\1"
    return header + frame * count


def mdl_many_tiny_skins(size: int) -> bytes:
    """An MDL with one skin group of (size / 5) 1x1 skins (an interval and a pixel each)."""
    count = max(1, size // 5)
    header = struct.pack("<4si3f3ff3fiiiiiiiif", b"IDPO", 6, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 3, 1, 1, 0, 0, 1.0)
    skins = struct.pack("<ii", 1, count) + struct.pack(f"<{count}f", *([0.1] * count)) + b"\1" * count
    st = struct.pack("<iii", 0, 0, 0) * 3
    triangle = struct.pack("<iiii", 1, 0, 1, 2)
    frame = struct.pack("<i", 0) + bytes(8) + b"f".ljust(16, b"\0") + bytes(4 * 3)
    return header + skins + st + triangle + frame


def lmp_one_large_picture(size: int) -> bytes:
    """One qpic as large as the file (a square of `size` pixels)."""
    side = max(1, int(size**0.5))
    return qpic_bytes(side, side, bytes(range(256)) * (side * side // 256) + b"\1" * (side * side % 256))


def mip_one_large_texture(size: int) -> bytes:
    """One loose miptex with its four mips, about `size` bytes."""
    side = max(16, int((size * 64 / 85) ** 0.5) // 16 * 16)
    return miptex_bytes(b"big", side, side)


BUILDERS = {
    "bsp, one miptex from every slot": (bsp_repeated_offsets, "m.bsp"),
    "bsp, many tiny miptex": (bsp_many_tiny_textures, "t.bsp"),
    "wad, many 1x1 qpics": (wad_many_tiny_pictures, "p.wad"),
    "spr, many 1x1 frames": (spr_many_tiny_frames, "s.spr"),
    "mdl, many 1x1 skins": (mdl_many_tiny_skins, "k.mdl"),
    "lmp, one large picture": (lmp_one_large_picture, "big.lmp"),
    "mip, one large texture": (mip_one_large_texture, "big.mip"),
}


def peg_many_tiny_textures(size: int) -> tuple[bytes, bytes]:
    """A peg pair of (size / 66) 4x4 DXT1 textures, as many as the u16 entry count allows: a
    48-byte entry, a short name and a 16-byte frame each."""
    from gamepak.formats.rfg.peg.layout import ENTRY, HEADER

    count = max(1, min(0xFFFF, size // 66))
    names = b"".join(b"t%d\0" % index for index in range(count))
    entries = b"".join(
        ENTRY.pack(16 * index, 4, 4, 400, 4, 0, 0, 1, 0, 0, 4, 1, 1, 8, bytes(16)) for index in range(count)
    )
    gpu = (bytes(range(8)) + bytes(8)) * count
    cpu_size = HEADER.size + len(entries) + len(names)
    cpu = HEADER.pack(b"GEKV", 10, 0, cpu_size, len(gpu), count, 0, count, 16) + entries + names
    return cpu, gpu


def peg_overlapping_frames(entries: int, frame: int) -> tuple[bytes, bytes]:
    """A peg pair whose `entries` entries all name the same `frame`-byte GPU data (offset 0):
    a reader slicing each entry's frame before checking the layout copies the GPU file once
    per entry."""
    from gamepak.formats.rfg.peg.layout import ENTRY, HEADER

    side = 1
    while 4 * (side * 2) ** 2 <= frame:
        side *= 2
    chain = 4 * side * side  # one 8888 level
    names = b"".join(b"t%d\0" % index for index in range(entries))
    records = b"".join(
        ENTRY.pack(0, side, side, 407, side, 0, 0, 1, 0, 0, side, 1, 1, frame, bytes(16)) for _ in range(entries)
    )
    assert chain <= frame
    gpu = bytes(frame)
    cpu_size = HEADER.size + len(records) + len(names)
    cpu = HEADER.pack(b"GEKV", 10, 0, cpu_size, len(gpu), entries, 0, entries, 16) + records + names
    return cpu, gpu
