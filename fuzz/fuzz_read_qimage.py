#!/usr/bin/env python3
"""Fuzz the Quake palette image readers (`formats.quake.sources.read_images`): qpic (`.lmp`),
miptex (WAD2, and WAD3 with its own palette), the console font, Quake II's `.wal` and `.spr`
sprites. An input is tried as every kind; each may only refuse it with a gamepak error. What a
reader accepts is decoded (every mip to RGBA, mip 0 to PNG, then re-encoded from those pixels
as `texture import` does, mips rebuilt) and written back: a one-image file re-encoded, a
sprite patched in place with its own frames, must read back with the same pixels (the sprite
with the same bytes).

    python fuzz/fuzz_read_qimage.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

from _fuzzing import expected_errors, fuzz, quiet

# (kind, WAD3 miptex?) of each reader tried.
READERS = (("qpic", False), ("miptex", False), ("miptex", True), ("conchars", False), ("wal", False), ("spr", False))
# Decoding back to indices costs a nearest-colour search per distinct colour: small images only.
MAX_IMPORT_PIXELS = 1 << 14


def TestOneInput(data: bytes) -> None:
    from gamepak.formats.quake import images, sources
    from gamepak.formats.quake.palette import built_in_palette
    from gamepak.ops.quake_textures import reencode

    palette = built_in_palette()
    for kind, wad3 in READERS:
        label = f"fuzz.{kind}"
        found = None
        with expected_errors():
            found = sources.read_images(kind, data, "fuzz", label, wad3=wad3)
        if found is None:
            continue
        for image in found:
            for level, mip in enumerate(image.mips):
                rgba = images.to_rgba(image, palette, level)
                assert rgba.size == 4 * len(mip), f"{kind} {image.name!r}: mip {level} decoded to {rgba.shape}"
            if not image.mips:
                continue
            png = images.png_of(image, palette)
            assert png.startswith(b"\x89PNG"), f"{kind} {image.name!r}: not a PNG"
            if image.width * image.height <= MAX_IMPORT_PIXELS:
                with expected_errors():
                    again = reencode(image, images.to_rgba(image, palette), palette)
                    assert (again.width, again.height, len(again.mips)) == (image.width, image.height, len(image.mips))
        with quiet():
            written = sources.replace_images(kind, data, label, dict(enumerate(found)))
            reread = sources.read_images(kind, written, "fuzz", label, wad3=wad3)
        assert [(i.width, i.height, i.mips) for i in reread] == [(i.width, i.height, i.mips) for i in found], (
            f"{kind}: written back, the images read other pixels"
        )
        if kind == "spr":
            assert written == data, "a sprite patched with its own frames changed"


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.quake", "gamepak.ops.quake_textures")


if __name__ == "__main__":
    main()
