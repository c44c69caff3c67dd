#!/usr/bin/env python3
"""Fuzz the Quake MDL reader (`formats.quake.mdl.read`) and what is built on it: the summary,
the skins decoded to PNG, the glTF export (every pose as a morph target, and one pose alone) and
`model info`'s summary. Any input may only be refused with a gamepak error; an accepted model
gives a glb whose JSON is strict (no NaN) and whose views lie inside its buffer, and its skins
put back as they are give the same bytes.

    python fuzz/fuzz_read_mdl.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

from _fuzzing import expected_errors, fuzz, glb_document


def TestOneInput(data: bytes) -> None:
    from gamepak.formats.quake import images, mdl, sources
    from gamepak.formats.quake.palette import built_in_palette
    from gamepak.models import quake

    palette = built_in_palette()
    model = None
    with expected_errors():
        model = mdl.read(data, "fuzz.mdl")
    if model is None:
        return
    model.summary()
    skins = model.skin_images(data)
    for skin in skins:
        assert len(skin.pixels) == skin.width * skin.height, f"{skin.name}: {len(skin.pixels)} bytes of pixels"
        images.png_of(skin, palette)
    assert sources.replace_images("mdl", data, "fuzz.mdl", dict(enumerate(skins))) == data, "skins put back changed"
    with expected_errors():
        quake.summary("mdl", data, "fuzz.mdl")
    with expected_errors():
        glb_document(quake.mdl_to_gltf(data, "fuzz.mdl", palette=palette))
    with expected_errors():
        glb_document(quake.mdl_to_gltf(data, "fuzz.mdl", palette=palette, frame=len(model.poses) - 1, scale=0.5))


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.quake", "gamepak.models.quake")


if __name__ == "__main__":
    main()
