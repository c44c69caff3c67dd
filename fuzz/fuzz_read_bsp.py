#!/usr/bin/env python3
"""Fuzz the Quake BSP reader (`formats.quake.bsp.MapFile`) and what is built on it: the lump
table, the embedded textures (decoded to PNG), the checked geometry, the glTF export of every
brush model, `model info`'s summary, and the map opened as a table for `info`/`verify`. Any
input may only be refused with a gamepak error; an accepted map gives a glb whose JSON is
strict and whose views lie inside its buffer, and its textures put back as they are give the
same bytes.

    python fuzz/fuzz_read_bsp.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

import io

from _fuzzing import expected_errors, fuzz, glb_document


def TestOneInput(data: bytes) -> None:
    import gamepak
    from gamepak.formats.quake import images, sources
    from gamepak.formats.quake.bsp import MapFile
    from gamepak.formats.quake.palette import built_in_palette
    from gamepak.models import quake

    palette = built_in_palette()
    with expected_errors(), gamepak.open(io.BytesIO(data), "bsp", name="fuzz.bsp") as archive:
        archive.header_fields()
        archive.check()
    map_file = None
    with expected_errors():
        map_file = MapFile(data, "fuzz.bsp")
        map_file.summary()
    if map_file is None:
        return
    map_file.entities_text()
    found = None
    with expected_errors():
        found = sources.read_images("bsp", data, "fuzz", "fuzz.bsp")
    if found is not None:
        for image in found:
            images.png_of(image, palette)
        written = sources.replace_images("bsp", data, "fuzz.bsp", dict(enumerate(found)))
        assert written == data, "textures put back as they were changed the map"
    with expected_errors():
        map_file.geometry()
        quake.summary("bsp", data, "fuzz.bsp")
        glb_document(quake.bsp_to_gltf(data, "fuzz.bsp", palette=palette))


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.quake", "gamepak.models.quake")


if __name__ == "__main__":
    main()
