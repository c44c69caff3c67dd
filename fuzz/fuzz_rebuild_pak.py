#!/usr/bin/env python3
"""Fuzz the Quake PAK writer by round trip (`_fuzzing.rebuild_archive`): an input the reader
accepts is written again, with the pack's layout options and with its byte-exact layout, and
must read back as the same members. Reader and writer may refuse only with a gamepak error.

    python fuzz/fuzz_rebuild_pak.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

from _fuzzing import fuzz, rebuild_archive


def TestOneInput(data: bytes) -> None:
    rebuild_archive(data, "pak")


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.quake_pak")


if __name__ == "__main__":
    main()
