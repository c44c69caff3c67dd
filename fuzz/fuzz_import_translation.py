#!/usr/bin/env python3
"""Fuzz the translation readers of `gamepak text import` (JSON, CSV, PO, RFGM's XML): an input
is read as every form and applied to a small `.rfglocatext`. Bad files may only be refused with
a gamepak error, and a refused import leaves the file as it was; an accepted one gives a file
that reads back with the strings the import asked for.

    python fuzz/fuzz_import_translation.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

from _fuzzing import expected_errors, fuzz

FORMS = ("json", "csv", "po", "rfgm-xml")
# The file every input is applied to: (identifier, text).
STRINGS = (("MENU_START", "Start"), ("MENU_QUIT", "Quit"), ("EMPTY", ""), ("LINES", 'two\nlines, "quoted"'))


def base_file() -> bytes:
    from gamepak.formats.rfg.locatext import LocaEntry, build, encode_text, identifier_hash

    return build([LocaEntry(identifier_hash(name), encode_text(text, name), name) for name, text in STRINGS])


def TestOneInput(data: bytes) -> None:
    from gamepak.errors import GamepakError
    from gamepak.formats.rfg.locatext import LocaText
    from gamepak.formats.rfg.locatext.apply import apply_translation
    from gamepak.formats.rfg.locatext.translate import load_translation

    original = base_file()
    for form in FORMS:
        rows = None
        with expected_errors():
            rows = load_translation(data, form, f"fuzz.{form}")
        if rows is None:
            continue
        for delete in (False, True):
            table = LocaText.parse(original, "base.rfglocatext")
            try:
                apply_translation(table, rows, delete=delete)
            except GamepakError:
                assert table.to_bytes() == original, f"{form}: a refused import changed the file"
                continue
            written = None
            with expected_errors():  # more strings than the u32 offsets reach
                written = table.to_bytes()
            if written is None:
                continue
            again = LocaText.parse(written, "imported.rfglocatext")
            assert [entry.text for entry in again.entries] == [entry.text for entry in table.entries], (
                f"{form}: the imported file reads back other strings"
            )


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.rfg.locatext", "gamepak.formats.translation_files")


if __name__ == "__main__":
    main()
