"""A folder of packs for the web viewer's tests, built here with gamepak's own writers.

root/
  mod.pak            readme.txt, pics/{a.png,b.tga,c.bmp,d.dds}, model.joe, sound.wav,
                     data.bin, big.txt, and a member named like markup (HOSTILE_NAME)
  game.vpp_pc        zone.str2_pc (crate.cpeg_pc + crate.gpeg_pc: one DXT5 and one 8888
                     texture), notes.xtbl
  strings.bin        a J2ME text pack (no signature: found by its structure)
  lang.f             a J2ME table pack: 0 a string blob (LANG_STRINGS), 1 binary
  plain/readme.txt   a plain file in a plain folder
  models/            loose JOE models shaped like real ones: wheel.joe (a disc standing on
                     its edge), glass.joe (a thin shell above the origin), road.joe (a flat
                     strip), all wound clockwise as VDrift's cars are
  big.cpeg_pc/.gpeg_pc  a peg with a 1024x1024 texture (square.tga) and a 256x64 one with
                     mips (wide.tga)
"""

from __future__ import annotations

import io
import os
import wave
from pathlib import Path

import numpy as np
from PIL import Image

from gamepak import create
from gamepak.formats.j2me.string_tables import build_string_blob, build_text_pack, encode_string
from gamepak.formats.rfg.peg import Peg, PixelFormat
from gamepak.models import Mesh, dumps

HOSTILE_NAME = "<img src=x onerror=alert(1)>.txt"
LANG_STRINGS = ["NEW GAME", "CONTINUE", "OPTIONS", "Caf\u00e9"]
STRINGS = ["New game", "Caf\u00e9 cr\u00e8me", "<b>bold</b>"]


def picture(width: int = 64, height: int = 48) -> np.ndarray:
    """An RGBA gradient with a hard edge (every preview must keep both)."""
    y, x = np.mgrid[0:height, 0:width]
    rgba = np.zeros((height, width, 4), dtype=np.uint8)
    rgba[..., 0] = (x * 255 // max(width - 1, 1)).astype(np.uint8)
    rgba[..., 1] = (y * 255 // max(height - 1, 1)).astype(np.uint8)
    rgba[..., 2] = np.where(x < width // 2, 40, 220)
    rgba[..., 3] = 255
    return rgba


def image_bytes(format: str, rgba: np.ndarray) -> bytes:
    out = io.BytesIO()
    image = Image.fromarray(rgba, "RGBA")
    if format in ("BMP",):
        image = image.convert("RGB")
    image.save(out, format)
    return out.getvalue()


def cube_joe() -> bytes:
    from gamepak.demo import crate_mesh

    return dumps(crate_mesh(), "joe")


def wav_bytes() -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as sound:
        sound.setnchannels(1)
        sound.setsampwidth(2)
        sound.setframerate(8000)
        sound.writeframes(bytes(800))
    return out.getvalue()


def peg_pair() -> tuple[bytes, bytes, dict[str, np.ndarray]]:
    """A peg with a DXT5 and an 8888 texture, and the pixels its decoder gives for each."""
    peg = Peg.new("crate.cpeg_pc")
    peg.add_texture("crate", picture(64, 32), PixelFormat.DXT5)
    peg.add_texture("flat", picture(16, 16), PixelFormat.A8R8G8B8)
    cpu, gpu = peg.to_bytes()
    parsed = Peg.parse(cpu, gpu)
    return cpu, gpu, {t.name: parsed.read_image(t.name) for t in parsed.textures}


def _clockwise(faces: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    return [(a, c, b) for a, b, c in faces]


def wheel_mesh(segments: int = 32) -> Mesh:
    """A wheel disc like VDrift's oem_wheel: 1.075 across, 0.07 thick along X, faces wound the
    other way round (a viewer culling back faces shows slivers of it)."""
    positions = [(-0.035, 0.0, 0.0), (0.035, 0.0, 0.0)]
    for side in (-0.035, 0.035):
        for step in range(segments):
            angle = 2 * np.pi * step / segments
            positions.append((side, 0.5375 * np.cos(angle), 0.5375 * np.sin(angle)))
    faces = []
    for step in range(segments):
        following = (step + 1) % segments
        left, right = 2 + step, 2 + segments + step
        left_next, right_next = 2 + following, 2 + segments + following
        faces += [
            (0, left_next, left),
            (1, right, right_next),
            (left, left_next, right_next),
            (left, right_next, right),
        ]
    return Mesh.from_vertices(positions, _clockwise(faces))


def glass_mesh() -> Mesh:
    """A car's glass: a thin open shell, 1.5 x 2.6 x 0.43, above the origin, wound clockwise."""
    bottom = [(-0.75, -1.3, 0.6), (0.75, -1.3, 0.6), (0.75, 1.3, 0.6), (-0.75, 1.3, 0.6)]
    top = [(-0.55, -0.8, 1.03), (0.55, -0.8, 1.03), (0.55, 0.7, 1.03), (-0.55, 0.7, 1.03)]
    faces = [(4, 5, 6), (4, 6, 7)]
    for side in range(4):
        following = (side + 1) % 4
        faces += [(side, following, 4 + following), (side, 4 + following, 4 + side)]
    return Mesh.from_vertices(bottom + top, _clockwise(faces))


def road_mesh(length: float = 8.0, width: float = 2.0, cells: int = 8) -> Mesh:
    """A flat road strip on the ground, `length` along X, faces up."""
    positions = [
        (length * i / cells - length / 2, width * j - width / 2, 0.0) for j in (0, 1) for i in range(cells + 1)
    ]
    faces = []
    for i in range(cells):
        a, b, c, d = i, i + 1, cells + 2 + i, cells + 1 + i
        faces += [(a, b, c), (a, c, d)]
    return Mesh.from_vertices(positions, faces)


def big_peg() -> tuple[bytes, bytes]:
    """A peg with a 1024x1024 texture (one mip) and a 256x64 one with all its mips."""
    peg = Peg.new("big.cpeg_pc")
    peg.add_texture("square", picture(1024, 1024), PixelFormat.A8R8G8B8, mips=1)
    peg.add_texture("wide", picture(256, 64), PixelFormat.A8R8G8B8)
    return peg.to_bytes()


def build_root(root: Path) -> dict[str, np.ndarray]:
    """Fill `root` as the module docstring says; returns each peg texture's decoded pixels."""
    root.mkdir(parents=True, exist_ok=True)
    rgba = picture()
    with create(root / "mod.pak") as pak:
        pak.add("readme.txt", b"A mod for the viewer's tests.\n")
        pak.add("pics/a.png", image_bytes("PNG", rgba))
        pak.add("pics/b.tga", image_bytes("TGA", rgba))
        pak.add("pics/c.bmp", image_bytes("BMP", rgba))
        pak.add("pics/d.dds", image_bytes("DDS", rgba))
        pak.add("model.joe", cube_joe())
        pak.add("sound.wav", wav_bytes())
        pak.add("data.bin", bytes(range(256)) * 40)
        pak.add("big.txt", b"line of text\n" * 40000)
        pak.add(HOSTILE_NAME, b"<script>alert(1)</script>\n")
    cpu, gpu, pixels = peg_pair()
    zone = root / "zone.str2_pc"
    with create(zone, flags=3) as str2:
        str2.add("crate.cpeg_pc", cpu)
        str2.add("crate.gpeg_pc", gpu)
    with create(root / "game.vpp_pc") as vpp:
        vpp.add("zone.str2_pc", zone)
        vpp.add("notes.xtbl", b"<root><Table><name>crate</name></Table></root>\n")
    os.remove(zone)
    (root / "strings.bin").write_bytes(build_text_pack([encode_string(t, i) for i, t in enumerate(STRINGS)]))
    (root / "plain").mkdir()
    (root / "plain" / "readme.txt").write_text("plain file\n")
    with create(root / "lang.f", "j2me-table") as lang:
        lang.add("0", build_string_blob([text.encode("latin-1") for text in LANG_STRINGS]))
        lang.add("1", bytes(range(40)))
    (root / "models").mkdir()
    for name, mesh in (("wheel", wheel_mesh()), ("glass", glass_mesh()), ("road", road_mesh())):
        (root / "models" / f"{name}.joe").write_bytes(dumps(mesh, "joe"))
    cpu, gpu = big_peg()
    (root / "big.cpeg_pc").write_bytes(cpu)
    (root / "big.gpeg_pc").write_bytes(gpu)
    return pixels
