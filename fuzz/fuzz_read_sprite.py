#!/usr/bin/env python3
"""Fuzz the Gameloft J2ME sprite reader (`formats.j2me.sprite`, BSPRITE v3) and every path a
stranger's sprite takes after it. An input is a sprite's bytes (a pack member, or a lone
sprite file); the reader may only refuse it with a gamepak error. What it accepts must:

- write back to the same bytes (`Sprite.to_bytes`);
- decode every module to w x h palette indices below the palette's length, within the reader's
  pixel budget (`MAX_SPRITE_PIXELS`), and encode back to pixels that decode the same; give
  every palette as RGBA;
- draw every frame (a frame drawn flipped left-right is its picture mirrored), every anim and
  the module sheet, or refuse with a gamepak error (the drawing budget);
- export to its folder (indexed module PNGs, frames, APNG anims, sheet, `sprite.json`) with
  each palette, and import from that folder unchanged to the same bytes; as `gamepak sprite
  export` / `import` do it on a lone sprite file too (the import then changes nothing);
- give the viewer's preview and the catalog's row.

    python fuzz/fuzz_read_sprite.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from _fuzzing import expected_errors, fuzz, quiet, scratch_folder

# Exported through the ops layer (files written, a lone sprite file imported back) only when
# the sprite is this small: the folder's files cost most of an execution.
MAX_OPS_BYTES = 4096


def check_pixels(sprite: Any) -> None:
    """Every module decodes to its size's indices, below the palette's length, and encodes back
    to data that decodes to the same; every palette converts to RGBA."""
    import numpy as np

    from gamepak.formats.j2me.sprite import codec
    from gamepak.formats.j2me.sprite.model import MAX_SPRITE_PIXELS

    assert sum(width * height for width, height in sprite.modules) <= MAX_SPRITE_PIXELS, "past the pixel budget"
    for index, (width, height) in enumerate(sprite.modules):
        indices = sprite.module_indices(index)
        assert indices.shape == (height, width), f"module {index} decoded to {indices.shape}"
        assert int(indices.max(initial=0)) < max(sprite.colours, 1), f"module {index}: an index past the palette"
        again = codec.encode(sprite.encoding, indices, sprite.colours)
        assert np.array_equal(codec.decode(sprite.encoding, again, width, height, sprite.colours), indices), (
            f"module {index}: re-encoded, other pixels"
        )
    for number in range(len(sprite.palettes)):
        assert sprite.palette_rgba(number).shape == (sprite.colours, 4), f"palette {number}: not RGBA rows"


def check_drawing(sprite: Any) -> None:
    """Every frame, anim and the sheet drawn (or refused by the drawing budget); a frame drawn
    flipped left-right is its picture mirrored."""
    from gamepak.formats.j2me.sprite import compose
    from gamepak.formats.j2me.sprite.compose import compose_anim, compose_frame, contact_sheet
    from gamepak.formats.j2me.sprite.model import FLIP_X

    cost = None
    with expected_errors():
        cost = compose.check_drawing(sprite)
    if cost is None:
        return
    with expected_errors():
        contact_sheet(sprite, len(sprite.palettes) - 1)
        for index in range(len(sprite.frames)):
            picture = compose_frame(sprite, index)
            mirrored = compose_frame(sprite, index, flags=FLIP_X)
            if picture is None:
                assert mirrored is None, f"frame {index}: draws only when flipped"
                continue
            assert mirrored is not None and (mirrored.rgba == picture.rgba[:, ::-1]).all(), (
                f"frame {index}: flipped left-right, not its picture mirrored"
            )
            assert mirrored.origin == (picture.rgba.shape[1] - picture.origin[0], picture.origin[1])
        for index in range(len(sprite.anims)):
            animation = compose_anim(sprite, index)
            assert len(animation.cells) == len(sprite.anims[index].used) == len(animation.times)


def check_folder(sprite: Any, data: bytes) -> None:
    """Exported with each palette and imported back unchanged: the same bytes."""
    from gamepak.formats.j2me.sprite.files import JSON_NAME, export_files, import_files

    for palette in sorted({0, len(sprite.palettes) - 1}):
        files = None
        with expected_errors():
            files = export_files(sprite, palette)
        if files is None:
            return
        assert JSON_NAME in files
        with quiet():
            again = import_files(sprite, files.__getitem__, where="fuzz")
        assert again.to_bytes() == data, f"exported with palette {palette} and imported unchanged: other bytes"


def check_commands(data: bytes) -> None:
    """`sprite ls`, `export` and `import` of a lone sprite file, as the commands run them: the
    import of an unchanged export changes nothing."""
    from gamepak.ops.sprites import export_sprites, import_sprites, list_sprites

    folder = os.path.join(scratch_folder(), "commands")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    path = os.path.join(folder, "fuzz.f")
    with open(path, "wb") as handle:
        handle.write(data)
    try:
        assert len(list_sprites(path)) == 1
        written = None
        with expected_errors():
            written = export_sprites(path, os.path.join(folder, "out"))
        if written is None:
            return
        result = import_sprites(path, os.path.join(folder, "out"))
        assert (result.changed, result.unchanged) == ([], 1), f"an unchanged export imported as {result}"
        with open(path, "rb") as handle:
            assert handle.read() == data, "the import rewrote the sprite"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def TestOneInput(data: bytes) -> None:
    from gamepak.formats.j2me.sprite import read_sprite
    from gamepak.formats.j2me.sprite.summary import preview_images, sniff_sprite, summary_row

    sprite = None
    with expected_errors():
        sprite = read_sprite(data, "fuzz.f", "0")
    if sprite is None:
        return
    assert sniff_sprite(data[:6]), "read, but not taken for a sprite"
    assert sprite.to_bytes() == data, "read and written: other bytes"
    summary_row(sprite, len(data))
    if not sprite.modules:
        return
    check_pixels(sprite)
    check_drawing(sprite)
    check_folder(sprite, data)
    with expected_errors():
        preview_images(data, "fuzz.f", max_palettes=2)
    if len(data) <= MAX_OPS_BYTES:
        check_commands(data)


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.j2me.sprite", "gamepak.ops.sprites")


if __name__ == "__main__":
    main()
