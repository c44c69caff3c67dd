#!/usr/bin/env python3
"""Fuzz the RFG peg writer by round trip: a texture pair that parses is written back byte for
byte by `Peg.to_bytes`; only the parser may refuse an input, with a gamepak error.

An input is a CPU file followed by its GPU file, split where the CPU header says it ends.

    python fuzz/fuzz_rebuild_peg.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

from _fuzzing import expected_errors, fuzz, split_peg_pair


def TestOneInput(data: bytes) -> None:
    from gamepak.formats.rfg.peg import Peg

    cpu, gpu = split_peg_pair(data)
    peg = None
    with expected_errors():
        peg = Peg.parse(cpu, gpu, name="fuzz.cpeg_pc")
    if peg is not None:
        assert peg.to_bytes() == (cpu, gpu), "a peg pair does not write back byte for byte"


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.rfg.peg")


if __name__ == "__main__":
    main()
