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
import struct

from _fuzzing import expected_errors, fuzz, quiet, scratch_folder


def layer(first_x: float = 1.0) -> bytes:
    """An RFG layer (`../shared/specs/rfg-zones.md`) of two objects, each with an `op` property
    (position + orientation) and an `enabled` one: its patches hold object-level changes."""
    objects = []
    for handle, x in ((0x78800001, first_x), (0x78800002, 4.0)):
        records = struct.pack("<HHI", 5, 48, 0xB2600654) + struct.pack("<12f", x, 2, 3, 1, 0, 0, 0, 1, 0, 0, 0, 1)
        records += struct.pack("<HHI", 5, 1, 0xCD9564FA) + b"\x01\x00\x00\x00"
        head = struct.pack(
            "<II6fHHIIIIHH",
            0x9F3641D4,
            handle,
            0,
            0,
            0,
            1,
            1,
            1,
            0xFF00,
            56 + len(records),
            0xFFFFFFFF,
            0xFFFFFFFF,
            0xFFFFFFFF,
            1,
            2,
            len(records),
        )
        objects.append(head + records)
    return struct.pack("<4sIIIII", b"ZONE", 36, len(objects), 0, 0, 4) + b"".join(objects)


# The pack every input is applied to (the seeds' base).
BASE_MEMBERS = [
    ("maps/e1m1.bsp", b"IBSP" + bytes(range(200))),
    ("readme.txt", b"hello world\n" * 20),
    ("sound/b.wav", b"RIFF\x02\x00\x00\x00"),
    ("maps/a.layer_pc", layer()),
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
