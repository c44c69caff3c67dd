#!/usr/bin/env python3
"""Fuzz the Quake WAD2/WAD3 reader (`wad`): names, every lump by each read path, the check
(which reads every picture lump's header), the header fields and the byte-exact layout, then
every qpic, miptex and console-font lump decoded as `gamepak texture` does. Any input may only
be refused with a gamepak error.

    python fuzz/fuzz_read_wad.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

from _fuzzing import exercise_archive, expected_errors, fuzz, open_archive

PICTURE_KINDS = ("qpic", "miptex", "conchars")


def TestOneInput(data: bytes) -> None:
    from gamepak.formats.quake import images, sources
    from gamepak.formats.quake.palette import built_in_palette

    members = exercise_archive(data, "wad")
    if members is None:
        return
    palette = built_in_palette()
    with open_archive(data, "wad") as wad:
        kinds = [getattr(entry, "kind", "raw") for entry in wad.infolist()]
        wad3 = bool(getattr(wad, "wad3", False))
    for (name, lump), kind in zip(members, kinds, strict=True):
        if kind not in PICTURE_KINDS:
            continue
        with expected_errors():
            for image in sources.read_images(kind, lump, name, f"fuzz.wad/{name}", wad3=wad3):
                if image.mips:
                    images.png_of(image, palette)


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.quake")


if __name__ == "__main__":
    main()
