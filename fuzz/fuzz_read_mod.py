#!/usr/bin/env python3
"""Fuzz SyncFaction mods as `gamepak patch` reads them: a mod folder (loose archives, whole
files, `.xdelta` deltas, `.delete.json`, `.options.json`, `.mod.hashes.json`, `modinfo.xml`) or a
mod zip, read by `patch info`, checked against a small game and, when it applies, applied and
reverted. Bad mods may only be refused with a gamepak error; a refused apply leaves every game
file as it was; apply then revert gives every file back byte for byte; no scratch file is left.

An input starting with `PK` is a mod zip; any other is a mod folder in a small framing that
keeps each file's bytes where mutations reach them (a zip's CRC would refuse most):

    repeated: u8 name length, name (UTF-8, a relative path), u32 LE size, the file's bytes

The seeds (`seeds.mod_seeds`) are mods made against `game()`.

    python fuzz/fuzz_read_mod.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
import tempfile

from _fuzzing import expected_errors, fuzz, quiet, scratch_folder

SIZE = struct.Struct("<I")
MAX_FILES = 64
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


def frame(files: dict[str, bytes]) -> bytes:
    """A mod folder's files in the harness's framing (for the seeds)."""
    out = bytearray()
    for name, data in files.items():
        encoded = name.encode()
        out += bytes([len(encoded)]) + encoded + SIZE.pack(len(data)) + data
    return bytes(out)


def unframe(data: bytes) -> dict[str, bytes] | None:
    files: dict[str, bytes] = {}
    at = 0
    while at < len(data) and len(files) < MAX_FILES:
        length = data[at]
        name_bytes = data[at + 1 : at + 1 + length]
        at += 1 + length
        if at + SIZE.size > len(data):
            break
        (size,) = SIZE.unpack_from(data, at)
        at += SIZE.size
        try:
            name = name_bytes.decode()
        except UnicodeDecodeError:
            return None
        parts = name.replace("\\", "/").split("/")
        if not name or any(part in ("", ".", "..") or "\0" in part for part in parts):
            return None
        files["/".join(parts)] = data[at : at + size]
        at += size
    return files


def _write_mod(folder: str, files: dict[str, bytes]) -> bool:
    os.makedirs(folder)
    for name, data in files.items():
        path = os.path.join(folder, *name.split("/"))
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "xb") as handle:
                handle.write(data)
        except OSError:
            return False  # a name that is a file and a folder, too long for the file system ...
    return True


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
        if files is None or not _write_mod(mod, files):
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
