#!/usr/bin/env python3
"""Fuzz the four Gameloft J2ME layout writers by round trip (`_fuzzing.rebuild_archive`): for
each layout whose reader accepts the input, its writer writes the members again, with the pack's
layout options and with its byte-exact layout, and the result must read back as the same members.

    python fuzz/fuzz_rebuild_j2me.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

from _fuzzing import J2ME_LAYOUTS, fuzz, rebuild_archive


def TestOneInput(data: bytes) -> None:
    for layout in J2ME_LAYOUTS:
        rebuild_archive(data, layout)


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.j2me")


if __name__ == "__main__":
    main()
