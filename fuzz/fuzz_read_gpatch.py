#!/usr/bin/env python3
"""Fuzz gamepak's patch files (`gamepak.patch`): a patch is read (`Patch.open`, `info`), checked
against a small PAK and, when it applies, applied and taken back. Bad patches may only be refused
with a gamepak error, a refused apply must leave the pack as it was, and a revert must give the
pack back byte for byte.

The seeds (`seeds.gpatch_seeds`) are patches made against `BASE_MEMBERS`, so mutations reach the
apply and revert paths, not only the manifest's checks.

    python fuzz/fuzz_read_gpatch.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

import os
import shutil

from _fuzzing import expected_errors, fuzz, quiet, scratch_folder

# The pack every input is applied to (the seeds' base).
BASE_MEMBERS = [
    ("maps/e1m1.bsp", b"IBSP" + bytes(range(200))),
    ("readme.txt", b"hello world\n" * 20),
    ("sound/b.wav", b"RIFF\x02\x00\x00\x00"),
]


def base_pack(path: str) -> None:
    import gamepak

    with gamepak.create(path, "pak", overwrite=True) as writer:
        for name, data in BASE_MEMBERS:
            writer.add(name, data)


def TestOneInput(data: bytes) -> None:
    import gamepak
    from gamepak.errors import GamepakError

    folder = os.path.join(scratch_folder(), "gpatch")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    patch = os.path.join(folder, "fuzz.gpatch")
    with open(patch, "wb") as handle:
        handle.write(data)
    target = os.path.join(folder, "base.pak")
    base_pack(target)
    with open(target, "rb") as handle:
        original = handle.read()
    plan = None
    with expected_errors():
        with gamepak.patch.Patch.open(patch) as opened:
            opened.info()
        plan = gamepak.patch.check(target, [patch])
    if plan is None or not plan.ok or not plan.to_apply:
        return
    try:
        with quiet():
            gamepak.patch.apply(target, [patch])
    except GamepakError:
        with open(target, "rb") as handle:
            assert handle.read() == original, "a refused apply changed the pack"
        return
    gamepak.patch.revert(target)  # must not fail: what apply did, revert takes back
    with open(target, "rb") as handle:
        assert handle.read() == original, "revert did not give the pack back byte for byte"
    assert not os.path.exists(target + ".gamepak-undo"), "revert left its record behind"


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.quake_pak", "gamepak.ops.patch")


if __name__ == "__main__":
    main()
