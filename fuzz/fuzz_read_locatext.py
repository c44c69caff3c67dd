#!/usr/bin/env python3
"""Fuzz the RFG localization reader (`LocaText.parse`, `scan`, and the file opened as a table
for `info`/`verify`): any input may only be refused with a gamepak error. What it accepts is
written back byte for byte, rebuilt from its entries (the same hashes and strings read back),
and exported in every translation form (JSON, CSV, PO, RFGM's XML): importing an unchanged
export changes nothing.

    python fuzz/fuzz_read_locatext.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

import io

from _fuzzing import expected_errors, fuzz

FORMS = ("json", "csv", "po", "rfgm-xml")


def TestOneInput(data: bytes) -> None:
    import gamepak
    from gamepak.formats.rfg.locatext import LocaText, build, texts_of
    from gamepak.formats.rfg.locatext.apply import apply_translation
    from gamepak.formats.rfg.locatext.translate import dump_translation, load_translation

    with expected_errors(), gamepak.open(io.BytesIO(data), "rfglocatext", name="fuzz.rfglocatext") as archive:
        archive.header_fields()
        archive.check()
    table = None
    with expected_errors():
        table = LocaText.parse(data, "fuzz.rfglocatext")
    if table is None:
        return
    assert table.to_bytes() == data, "an unchanged file is not written back byte for byte"
    texts = texts_of(table.entries)
    assert len(texts) == len(table.entries), "texts_of lost strings"
    rebuilt = LocaText.parse(build(table.entries), "rebuilt")
    assert [(e.hash, e.raw) for e in rebuilt.entries] == [(e.hash, e.raw) for e in table.entries], "rebuilt differs"
    for form in FORMS:
        exported = None
        with expected_errors():  # a string XML cannot hold is refused by name
            exported = dump_translation(table.entries, form, title="fuzz")
        if exported is None:
            continue
        again = LocaText.parse(data, "fuzz.rfglocatext")
        with expected_errors():  # a NUL inside a string (only a warning in the file) is refused
            applied = apply_translation(again, load_translation(exported, form, f"fuzz.{form}"))
            assert not applied.changed and not applied.added, f"{form}: an unchanged export changed the file"
            assert again.to_bytes() == data, f"{form}: an unchanged export does not give the file back"


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.rfg.locatext", "gamepak.formats.translation_files")


if __name__ == "__main__":
    main()
