#!/usr/bin/env python3
"""Fuzz the tar writer by round trip (`_fuzzing.rebuild_archive`): an input the reader
accepts is written again, with the pack's layout options and with its byte-exact layout, and
must read back as the same members. Reader and writer may refuse only with a gamepak error.

    python fuzz/fuzz_rebuild_tar.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

from _fuzzing import fuzz, rebuild_archive


def TestOneInput(data: bytes) -> None:
    rebuild_archive(data, "tar")


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.tar")


if __name__ == "__main__":
    main()
