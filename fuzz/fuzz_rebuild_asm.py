#!/usr/bin/env python3
"""Fuzz the RFG `.asm_pc` writer by round trip: a table that parses is written back byte for
byte by `AsmFile.to_bytes` (it keeps trailing bytes); only the parser may refuse an input, with a
gamepak error.

    python fuzz/fuzz_rebuild_asm.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

from _fuzzing import expected_errors, fuzz


def TestOneInput(data: bytes) -> None:
    from gamepak.formats.rfg.asm import AsmFile

    table = None
    with expected_errors():
        table = AsmFile.parse(data, "fuzz.asm_pc")
    if table is not None:
        assert table.to_bytes() == data, "an .asm_pc does not write back byte for byte"


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.rfg.asm")


if __name__ == "__main__":
    main()
