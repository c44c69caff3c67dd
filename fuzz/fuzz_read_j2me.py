#!/usr/bin/env python3
"""Fuzz the four Gameloft J2ME layout readers: they have no signature, so each input is opened
with every layout (`_fuzzing.J2ME_LAYOUTS`); each may only refuse it with a gamepak error, and
whatever opens must read the same bytes by every path.

    python fuzz/fuzz_read_j2me.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

from _fuzzing import J2ME_LAYOUTS, exercise_archive, fuzz


def TestOneInput(data: bytes) -> None:
    for layout in J2ME_LAYOUTS:
        exercise_archive(data, layout)


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.j2me")


if __name__ == "__main__":
    main()
