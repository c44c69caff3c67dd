#!/usr/bin/env python3
"""Fuzz the WAD writer by round trip: a WAD the reader accepts is written again with its layout
options and with its byte-exact layout, and each result must read back with the same lumps in
the same order with the same bytes.

    python fuzz/fuzz_rebuild_wad.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

from _fuzzing import fuzz, rebuild_archive


def TestOneInput(data: bytes) -> None:
    rebuild_archive(data, "wad")


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.quake.wad")


if __name__ == "__main__":
    main()
