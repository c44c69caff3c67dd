#!/usr/bin/env python3
"""Fuzz the zip reader: any input may only be refused with a gamepak error, and whatever opens must
read the same bytes by every path (`_fuzzing.exercise_archive`).

    python fuzz/fuzz_read_zip.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

from _fuzzing import exercise_archive, fuzz


def TestOneInput(data: bytes) -> None:
    exercise_archive(data, "zip")


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.zip")


if __name__ == "__main__":
    main()
