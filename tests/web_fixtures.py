"""A folder of packs for the web viewer's tests, built here with gamepak's own writers.

root/
  mod.pak            readme.txt, pics/{a.png,b.tga,c.bmp,d.dds}, model.joe, sound.wav,
                     data.bin, big.txt, and a member named like markup (HOSTILE_NAME)
  game.vpp_pc        zone.str2_pc (crate.cpeg_pc + crate.gpeg_pc: one DXT5 and one 8888
                     texture), notes.xtbl
  strings.bin        a J2ME text pack (no signature: found by its structure)
  plain/readme.txt   a plain file in a plain folder
"""

from __future__ import annotations

import io
import os
import wave
from pathlib import Path

import numpy as np
from PIL import Image

from gamepak import create
from gamepak.formats.j2me.text import build_text_pack, encode_string
from gamepak.formats.rfg.peg import Peg, PixelFormat
from gamepak.models import dumps

HOSTILE_NAME = "<img src=x onerror=alert(1)>.txt"
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
    return pixels
