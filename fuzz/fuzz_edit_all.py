#!/usr/bin/env python3
"""Fuzz editing (`gamepak.edit`: in place where the format can, else a rebuild) over every
archive format: a pack that reads has its first member replaced, its second removed (when it has
three or more) and a member added; reopened, it must hold exactly the expected members. A refused
edit must leave the file as it was, byte for byte.

Packs with names that repeat (ignoring case) are skipped: which copy an edit changes is a
separate question from whether it changes it right.

    python fuzz/fuzz_edit_all.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

import io
import os

from _fuzzing import assert_same_members, expected_errors, fuzz, pack_suffix, quiet, read_members, scratch_folder

REPLACED = b"replaced by fuzz_edit_all"
ADDED = b"added by fuzz_edit_all"


def TestOneInput(data: bytes) -> None:
    import gamepak
    from gamepak.errors import GamepakError

    members = None
    with expected_errors():
        with gamepak.open(io.BytesIO(data), name="fuzz") as archive:
            format_name = archive.format_name
            positional = archive.positional_names
            members = read_members(archive)
    if not members:
        return
    names = [name for name, _ in members]
    if len({name.lower() for name in names}) != len(names):
        return

    expected = [(names[0], REPLACED), *members[1:]]
    if len(expected) >= 3:
        del expected[1]
    if positional:  # J2ME members are numbered: the ones after a removed member move down
        expected = [(str(index), content) for index, (_, content) in enumerate(expected)]
    added_name = str(len(expected)) if positional else "fuzz-added.bin"
    expected.append((added_name, ADDED))

    path = os.path.join(scratch_folder(), f"edited{pack_suffix(data, format_name)}")
    with open(path, "wb") as handle:
        handle.write(data)
    try:
        with quiet(), gamepak.edit(path, format_name) as pack:
            pack.replace(names[0], REPLACED)
            if len(members) >= 3:
                pack.remove(names[1])
            pack.add(added_name, ADDED)
    except GamepakError:
        with open(path, "rb") as handle:
            assert handle.read() == data, "a refused edit changed the pack"
        return
    with gamepak.open(path, format_name) as edited:
        # An RFG rebuild brings .asm_pc tables up to date with the .str2_pc members, on purpose.
        tables = {name for name, _ in expected if name.lower().endswith(".asm_pc")}
        assert_same_members(expected, read_members(edited), tables, "edited")


def main() -> None:
    # The commit (`edit_commit`) is imported lazily by `ops.edit`: named so that it is instrumented too.
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats", "gamepak.ops.edit", "gamepak.ops.edit_commit")


if __name__ == "__main__":
    main()
