#!/usr/bin/env python3
"""Fuzz the RFG table reader (`formats.rfg.xtbl`): `table ls`'s summary, the table (schema,
rows as cells, columns, key), its check against its schema, and its CSV and JSON exports. Any
input may only be refused with a gamepak error. What it accepts is written back byte for byte,
its unchanged exports imported back change nothing, and one edited cell reads back as set.

    python fuzz/fuzz_read_xtbl.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

from _fuzzing import expected_errors, fuzz

MEMBER = "fuzz.xtbl"
EDIT = "fuzz & <edit>"


def TestOneInput(data: bytes) -> None:
    from gamepak.formats.rfg.xtbl import Table, summarize
    from gamepak.formats.rfg.xtbl.check import ReferenceIndex, check_table
    from gamepak.formats.rfg.xtbl.sheet import apply_rows, read_csv, read_json, to_csv, to_json

    with expected_errors():
        summarize(data, MEMBER)
    table = None
    with expected_errors():
        table = Table(data, MEMBER)
        table.schema.to_dict()
        [row.key for row in table.rows]  # cells, columns and key: rows nested too deep are refused here
    if table is None or table._rows is None:
        return
    check_table(table, ReferenceIndex({MEMBER: table}))
    assert table.write() == data, "an unchanged table is not written back byte for byte"
    for form, export in (("csv", to_csv), ("json", to_json)):
        fresh = Table(data, MEMBER)
        exported = export(fresh)
        rows = read_csv(exported, f"fuzz.{form}") if form == "csv" else read_json(exported, f"fuzz.{form}", fresh)
        changes = apply_rows(fresh, rows, f"fuzz.{form}")
        assert changes == [], f"its unchanged {form} export changed the table: {changes[:3]}"
        assert fresh.write() == data, f"its unchanged {form} export changed the bytes"
    columns = [column for column in table.columns if not table.is_json(column)]
    if not table.rows or not columns:
        return
    edited = Table(data, MEMBER)
    edited.set(0, columns[0], EDIT)
    written = None
    with expected_errors():  # a cell whose element holds elements cannot take text
        written = edited.write()
    if written is not None:
        assert Table(written, MEMBER).rows[0][columns[0]] == EDIT, "an edited cell reads back otherwise"


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.rfg.xtbl")


if __name__ == "__main__":
    main()
