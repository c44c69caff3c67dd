#!/usr/bin/env python3
"""Fuzz the zip reader: any input may only be refused with a gamepak error, and whatever opens must
read the same bytes by every path (`_fuzzing.exercise_archive`).

    python fuzz/fuzz_read_zip.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

import sys

from _fuzzing import exercise_archive, import_all


def TestOneInput(data: bytes) -> None:
    exercise_archive(data, "zip")


def main() -> None:
    import atheris

    with atheris.instrument_imports(include=["gamepak"]):
        import_all("gamepak.core", "gamepak.formats.zip")
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
