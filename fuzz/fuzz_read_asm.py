#!/usr/bin/env python3
"""Fuzz the RFG `.asm_pc` container-table reader: the table parser (`AsmFile.parse`) and the
gamepak format over it (info fields and check) may only refuse an input with a gamepak error.

    python fuzz/fuzz_read_asm.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

from _fuzzing import expected_errors, fuzz, open_archive


def TestOneInput(data: bytes) -> None:
    from gamepak.formats.rfg.asm import AsmFile

    with expected_errors():
        table = AsmFile.parse(data, "fuzz.asm_pc")
        for container in table.containers:
            container.to_dict()
    with expected_errors():
        with open_archive(data, "asm") as archive:
            archive.header_fields()
            archive.check()


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.rfg.asm")


if __name__ == "__main__":
    main()
