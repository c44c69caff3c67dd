#!/usr/bin/env python3
"""Fuzz extraction and the byte-exact rebuild (`extract --manifest`, then `create DIR`) over every
archive format: the format is detected (sniffers included); whatever extracts must land inside
the destination folder only, and the folder with its manifest must rebuild the input byte for
byte, as README's "Byte-exact rebuilds" promises (zip and tar: the same members). A pack that
checks clean must rebuild so, unless the writer states a limit (compressed bytes no zlib setting
reproduces, a name no writer stores); one with errors or warnings (`check()`) may be refused with
a gamepak error, or rebuilt repaired (or in the game's conventions) with the same members.

    python fuzz/fuzz_manifest_all.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

import io
import os
import shutil

from _fuzzing import (
    assert_same_members,
    expected_errors,
    fuzz,
    pack_suffix,
    quiet,
    read_members,
    scratch_folder,
    updated_on_purpose,
)

# Formats whose rebuild gives the same members, not the same bytes (README's format table).
NOT_BYTE_EXACT = ("zip", "tar")


def _files_under(folder: str) -> set[str]:
    return {os.path.join(root, name) for root, _, names in os.walk(folder) for name in names}


def TestOneInput(data: bytes) -> None:
    import gamepak
    from gamepak.errors import FormatLimitError, GamepakError, UnsafePathError, UnsupportedFeatureError
    from gamepak.ops.inputs import plan_create
    from gamepak.ops.manifest import MANIFEST_NAME

    destination = os.path.join(scratch_folder(), "extracted")
    shutil.rmtree(destination, ignore_errors=True)
    format_name = None
    with expected_errors():
        with gamepak.open(io.BytesIO(data), name="fuzz") as archive:
            written = archive.extractall(destination, manifest=True)
            sound = not archive.check()  # no error, and no warning (e.g. another tool's RFG stream)
            format_name = archive.format_name
    if format_name is None:
        assert not os.path.lexists(destination), "a refused extraction left files behind"
        return
    inside = os.path.join(os.path.realpath(destination), "")
    assert all(os.path.realpath(path).startswith(inside) for path in written), "a member landed outside"
    reported = {*written, os.path.join(destination, MANIFEST_NAME)}
    assert _files_under(destination) == reported, "extraction wrote other files than it reported"

    out = os.path.join(scratch_folder(), f"rebuilt{pack_suffix(data, format_name)}")
    try:
        plan = plan_create(out, [destination], format=format_name)
        with (
            quiet(),
            gamepak.create(
                out, plan.format_name, overwrite=True, allow_duplicates=plan.allow_duplicates, **plan.options
            ) as writer,
        ):
            for name, path in plan.members:
                writer.add(name, path)
    except (UnsupportedFeatureError, UnsafePathError, FormatLimitError):
        # Stated limits: compressed bytes no zlib setting reproduces (another tool's), names
        # the readers accept but no writer stores ('dir/', backslashes), counts past a field.
        return
    except GamepakError:
        if sound:
            raise  # a pack that verifies must rebuild
        return  # refusing to rebuild a damaged pack is allowed; writing other bytes is not
    updated = updated_on_purpose(writer)
    if format_name in NOT_BYTE_EXACT or not sound or updated:
        # A damaged pack comes back repaired (e.g. RFG name hashes recomputed), with its members.
        with gamepak.open(out, format_name) as rebuilt, gamepak.open(io.BytesIO(data), format_name) as original:
            assert_same_members(read_members(original), read_members(rebuilt), updated, "extract --manifest + create")
    else:
        with open(out, "rb") as handle:
            assert handle.read() == data, "extract --manifest + create does not give the input back byte for byte"


def main() -> None:
    fuzz(
        TestOneInput,
        "gamepak.core",
        "gamepak.formats",
        "gamepak.ops.extract",
        "gamepak.ops.safe_tree",
        "gamepak.ops.inputs",
    )


if __name__ == "__main__":
    main()
