#!/usr/bin/env python3
"""Fuzz the sheet readers of `gamepak table import` (`read_csv`, `read_json`, `apply_rows`): an
input is read as CSV and as JSON and applied to a small table with a schema naming every kind
of field. Bad sheets may only be refused with a gamepak error; what is accepted is written, and
the written table reads back (only its rewritten rows parsed again, as the import checks it)
as it does parsed whole.

    python fuzz/fuzz_import_sheet.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

from _fuzzing import expected_errors, fuzz
from content_seeds import base_table


def TestOneInput(data: bytes) -> None:
    from gamepak.formats.rfg.xtbl import Table
    from gamepak.formats.rfg.xtbl.sheet import apply_rows, read_csv, read_json

    original = base_table()
    for form in ("csv", "json"):
        table = Table(original, "fuzz.xtbl")
        written = None
        with expected_errors():
            rows = read_csv(data, "fuzz.csv") if form == "csv" else read_json(data, "fuzz.json", table)
            if not apply_rows(table, rows, f"fuzz.{form}"):
                continue
            written = table.write()
        if written is None:
            continue
        whole = None
        with expected_errors():  # an edit the table cannot be read after (the import refuses it)
            whole = Table(written, "fuzz.xtbl")
            whole.cells()
        if whole is None:
            continue
        again = table.reread(written)
        assert (again.cells(), again.key, again.columns) == (whole.cells(), whole.key, whole.columns), (
            f"{form}: the rewritten rows read back otherwise than the whole table"
        )


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.rfg.xtbl")


if __name__ == "__main__":
    main()
