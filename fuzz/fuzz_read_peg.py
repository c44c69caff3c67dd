#!/usr/bin/env python3
"""Fuzz the RFG peg texture reader (`Peg.parse`): the parser and everything it offers on what it
accepts (each texture's pixels decoded, its mip chain, its DDS) may only refuse an input with a
gamepak error.

An input is a CPU file followed by its GPU file (`_fuzzing.split_peg_pair`): the CPU header states its own
size, so the mutator moves the boundary by changing that field.

    python fuzz/fuzz_read_peg.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

from _fuzzing import expected_errors, fuzz, split_peg_pair


def TestOneInput(data: bytes) -> None:
    from gamepak.formats.rfg.peg import Peg

    cpu, gpu = split_peg_pair(data)
    with expected_errors():
        peg = Peg.parse(cpu, gpu, name="fuzz.cpeg_pc")
        for texture in peg.textures:
            image = peg.read_image(texture.name)
            assert image.shape == (texture.height, texture.width, 4), f"{texture.name}: decoded to {image.shape}"
            peg.mip_data(texture.name)
            peg.to_dds(texture.name)


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.rfg.peg")


if __name__ == "__main__":
    main()
