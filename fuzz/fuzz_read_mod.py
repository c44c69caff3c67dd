#!/usr/bin/env python3
"""Fuzz SyncFaction mods as `gamepak patch` reads them: a mod folder (loose archives, whole
files, `.xdelta` deltas, `.delete.json`, `.options.json`, `.mod.hashes.json`, `modinfo.xml`) or a
mod zip, read by `patch info`, checked against a small game and, when it applies, applied and
reverted. Bad mods may only be refused with a gamepak error; a refused apply leaves every game
file as it was; apply then revert gives every file back byte for byte; no scratch file is left.

An input starting with `PK` is a mod zip; any other is a mod folder in the framing of
`_fuzzing.unframe` (a zip's CRC would refuse most mutations).

The seeds (`seeds.mod_seeds`) are mods made against `game()`.

    python fuzz/fuzz_read_mod.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile

from _fuzzing import expected_errors, fuzz, quiet, scratch_folder, unframe, write_files

# The game every input is applied to (the seeds' base).
MISC_MEMBERS = {"a.xtbl": b"<root><Table><x>1</x></Table></root>", "b.xtbl": b"<root>b</root>"}
EXE = b"MZ" + bytes(range(256)) * 8


def game(folder: str) -> None:
    import gamepak

    os.makedirs(os.path.join(folder, "data"))
    with gamepak.create(os.path.join(folder, "data", "misc.vpp_pc"), overwrite=True) as writer:
        for name, data in MISC_MEMBERS.items():
            writer.add(name, data)
    with open(os.path.join(folder, "rfg.exe"), "wb") as handle:
        handle.write(EXE)


def _digests(folder: str) -> dict[str, str]:
    found = {}
    for root, _, names in os.walk(folder):
        for name in names:
            with open(os.path.join(root, name), "rb") as handle:
                found[os.path.relpath(os.path.join(root, name), folder)] = hashlib.sha256(handle.read()).hexdigest()
    return found


def TestOneInput(data: bytes) -> None:
    import gamepak
    from gamepak.errors import GamepakError
    from gamepak.ops.patch.install import loose_mod_info
    from gamepak.ops.patch.limits import limits
    from gamepak.ops.patch.modinfo import LoadedMod, is_modinfo_mod

    work = os.path.join(scratch_folder(), "mod")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    temporary = os.path.join(work, "tmp")
    os.makedirs(temporary)
    if data.startswith(b"PK"):
        mod = os.path.join(work, "mod.zip")
        with open(mod, "wb") as handle:
            handle.write(data)
    else:
        files = unframe(data)
        mod = os.path.join(work, "mod")
        if files is None or not write_files(mod, files):
            return
    target = os.path.join(work, "game")
    game(target)
    original = _digests(target)
    saved_tempdir = tempfile.tempdir
    tempfile.tempdir = temporary  # what check and apply decode into: must be empty after
    try:
        # Small budgets: a bomb is refused within them, quickly.
        with limits(member=64 << 20, floor=1 << 20, new_file=1 << 20, scratch=16 << 20):
            with expected_errors():
                if is_modinfo_mod(mod):
                    with LoadedMod(mod) as loaded:
                        loaded.info()
                else:
                    loose_mod_info(mod)
            plan = None
            with expected_errors():
                plan = gamepak.patch.check(target, [mod])
            assert not os.listdir(temporary), "check left scratch files"
            assert _digests(target) == original, "check changed the game"
            if plan is None or not plan.ok or not plan.to_apply:
                return
            try:
                with quiet():
                    gamepak.patch.apply(target, [mod])
            except GamepakError:
                assert _digests(target) == original, "a refused apply changed the game"
                return
            assert not os.listdir(temporary), "apply left scratch files"
            gamepak.patch.revert(target)
            assert _digests(target) == original, "revert did not give the game back byte for byte"
    finally:
        tempfile.tempdir = saved_tempdir


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.rfg", "gamepak.formats.vcdiff", "gamepak.ops.patch")


if __name__ == "__main__":
    main()
