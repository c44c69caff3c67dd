"""Fuzzing the Quake readers: WADs (WAD2 and WAD3), qpics, miptex, the console font, Quake II
WALs, sprites, MDL models and BSP maps built from the spec's layouts, mutated, may only raise
GamepakError, from every entry point (images, glTF)."""

from __future__ import annotations

import contextlib
import io
import os
import struct

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from quake_bytes import MdlGeometry, bsp_bytes, mdl_bytes, miptex_bytes, qpic_bytes, spr_bytes, wad_bytes, wal_bytes

import gamepak
from gamepak.errors import GamepakError
from gamepak.formats.quake import bsp, mdl, sources
from gamepak.formats.quake.images import png_of
from gamepak.formats.quake.palette import built_in_palette
from gamepak.models import quake

EXAMPLES = int(os.environ.get("GAMEPAK_FUZZ_EXAMPLES", "60"))
SEAM: MdlGeometry = {
    "st": [(0x20, 1, 0), (0, 2, 1), (0, 3, 2), (0, 1, 3)],
    "triangles": [(1, 0, 1, 2), (0, 0, 2, 3)],
    "poses": [[(0, 0, 0), (10, 0, 0), (0, 10, 0), (0, 0, 10)], [(1, 0, 0), (11, 0, 0), (1, 10, 0), (1, 0, 10)]],
}
FILES = {
    "wad": wad_bytes([(b"BOX", 0x42, qpic_bytes(2, 2, b"\1\2\3\4")), (b"wall", 0x44, miptex_bytes(b"wall", 8, 8))]),
    "wad3": wad_bytes(
        [(b"hl", 0x43, miptex_bytes(b"hl", 8, 8) + struct.pack("<H", 256) + bytes(range(256)) * 3)], magic=b"WAD3"
    ),
    "qpic": qpic_bytes(3, 2, bytes(6)),
    "conchars": bytes(range(256)) * 64,
    "wal": wal_bytes(16, 8),
    "miptex": miptex_bytes(b"wall", 16, 8),
    "spr": spr_bytes([(2, 2, b"\1\2\3\4")], group=[(0.1, 2, 1, b"\5\6")]),
    "mdl": mdl_bytes(**SEAM, group_from=1, skin_group=True),
    "bsp": bsp_bytes(),
}


def _mutate(data: bytes, edits: list[tuple[int, int]], cut: int) -> bytes:
    buffer = bytearray(data)
    for position, value in edits:
        buffer[position % len(buffer)] = value
    return bytes(buffer[: max(0, len(buffer) - cut)])


def _finite_json(data: bytes) -> None:
    """A glTF's JSON must parse strictly (NaN is not JSON)."""
    import json

    length = struct.unpack_from("<I", data, 12)[0]
    json.loads(data[20 : 20 + length], parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))


def _read_everything(kind: str, data: bytes) -> None:
    palette = built_in_palette()
    if kind in ("wad", "wad3"):
        with gamepak.open(io.BytesIO(data), "wad") as wad:
            for entry in wad.infolist():
                lump = wad.read(entry)
                kind_of_lump = getattr(entry, "kind", "raw")
                if kind_of_lump in ("qpic", "miptex", "conchars"):
                    with contextlib.suppress(GamepakError):  # a picture lump may be damaged alone
                        for image in sources.read_images(kind_of_lump, lump, entry.name, "x", wad3=wad.wad3):  # type: ignore[attr-defined]
                            png_of(image, palette)
            wad.check()
        return
    if kind in ("qpic", "miptex", "conchars", "wal", "spr"):
        for image in sources.read_images(kind, data, "x", "x"):
            if image.mips:
                png_of(image, palette)
        return
    if kind == "mdl":
        mdl.read(data, "x").skin_images(data)
        _finite_json(quake.mdl_to_gltf(data, "x", palette=palette))
        return
    bsp.MapFile(data, "x").summary()
    _finite_json(quake.bsp_to_gltf(data, "x", palette=palette))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(sorted(FILES)),
    edits=st.lists(st.tuples(st.integers(0, 1 << 16), st.sampled_from([0, 1, 0x7F, 0x80, 0xFF])), max_size=6),
    cut=st.integers(0, 64),
)
def test_mutated_quake_files_raise_only_gamepak_errors(kind: str, edits: list[tuple[int, int]], cut: int) -> None:
    data = _mutate(FILES[kind], edits, cut)
    with contextlib.suppress(GamepakError):
        _read_everything(kind, data)


def test_the_unmutated_files_read() -> None:
    for kind, data in FILES.items():
        _read_everything(kind, data)
