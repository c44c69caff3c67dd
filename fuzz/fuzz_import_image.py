#!/usr/bin/env python3
"""Fuzz image imports into an RFG peg (`gamepak texture import`): an image file from a stranger
(PNG, TGA, BMP, DDS: whatever Pillow or gamepak's DDS reader takes) is sized from its header,
decoded and encoded into a texture of a small peg. Bad images may only be refused with a gamepak
error, before anything is decoded past the size limits; an accepted one gives a peg that reads
back with the texture's size.

An input is the image file's bytes; it is tried under a `.dds` name (gamepak's DDS reader) and
under a `.png` name (Pillow, which tells the format by the bytes).

    python fuzz/fuzz_import_image.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

import os

from _fuzzing import expected_errors, fuzz, scratch_folder


def _peg() -> object:
    import numpy as np

    from gamepak.formats.rfg.peg import Peg, PixelFormat

    peg = Peg.new("fuzz.cpeg_pc")
    pixels = np.zeros((8, 8, 4), dtype=np.uint8)
    peg.add_texture("dxt", pixels, PixelFormat.DXT1)
    peg.add_texture("rgba", pixels, PixelFormat.A8R8G8B8, mips=1)
    return peg


def TestOneInput(data: bytes) -> None:
    from gamepak.formats.rfg.peg import Peg
    from gamepak.ops.textures import _image_change

    folder = scratch_folder()
    for name in ("image.dds", "image.png"):
        path = os.path.join(folder, name)
        with open(path, "wb") as handle:
            handle.write(data)
        for texture_name in ("dxt", "rgba"):
            peg = _peg()
            texture = peg.texture(texture_name)  # type: ignore[attr-defined]
            with expected_errors():
                change = _image_change(peg, texture, path)  # type: ignore[arg-type]
                if change is not None:
                    change()
                    cpu, gpu = peg.to_bytes()  # type: ignore[attr-defined]
                    again = Peg.parse(cpu, gpu, name="fuzz.cpeg_pc").texture(texture_name)
                    assert again.width * again.height > 0, f"{texture_name}: imported to {again.width}x{again.height}"


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.rfg.peg", "gamepak.ops.textures")


if __name__ == "__main__":
    main()
