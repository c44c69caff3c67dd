"""Translation files for J2ME strings: JSON, CSV and PO (gettext), each keeping a string's index.

- JSON: a UTF-8 array of `{"index": N, "text": "..."}`.
- CSV: UTF-8 **with a byte-order mark** (so spreadsheet programs detect UTF-8), header
  `index,text`, fields quoted as needed. Reading accepts a file with or without the mark,
  separated by commas, semicolons or tabs; the header row tells which.
- PO (via polib): `msgctxt` is the index, `msgid` the original text, `msgstr` the translation.
"""

from __future__ import annotations

import csv
import io
import json
import os
import warnings
from collections.abc import Sequence

from ...core.jsontext import JSON_INDENT
from ...errors import GamepakError
from ..translation_files import CSV_DELIMITERS, choose_format


def translation_format(path: str | os.PathLike[str] | None, explicit: str | None = None) -> str:
    """The translation file format: `explicit`, else from the file's extension, else JSON."""
    return choose_format(path, explicit, {"json": "json", "csv": "csv", "po": "po", "pot": "po"})


def dump_translation(texts: Sequence[str], format: str = "json", *, source: str = "") -> bytes:
    """A translation file holding `texts` by index."""
    if format == "json":
        rows = [{"index": index, "text": text} for index, text in enumerate(texts)]
        return (json.dumps(rows, ensure_ascii=False, indent=JSON_INDENT) + "\n").encode("utf-8")
    if format == "csv":
        buffer = io.StringIO(newline="")
        writer = csv.writer(buffer, lineterminator="\r\n")
        writer.writerow(["index", "text"])
        writer.writerows([index, text] for index, text in enumerate(texts))
        return buffer.getvalue().encode("utf-8-sig")
    if format == "po":
        import polib

        po = polib.POFile(wrapwidth=0)
        po.metadata = {
            "Project-Id-Version": source or "gamepak text export",
            "MIME-Version": "1.0",
            "Content-Type": "text/plain; charset=UTF-8",
            "Content-Transfer-Encoding": "8bit",
        }
        for index, text in enumerate(texts):
            po.append(polib.POEntry(msgctxt=str(index), msgid=text, msgstr=""))
        return str(po).encode("utf-8")
    raise GamepakError(f"unknown translation format {format!r}")


# A translation row: index, text to import (None: keep the original), where it was read.
Row = tuple[int, str | None, str]


def _rows_from_json(text: str, where: str) -> list[Row]:
    from ...core.json_input import load_json

    document = load_json(text, where)
    if not isinstance(document, list):
        raise GamepakError(f'{where}: expected a JSON array of {{"index": N, "text": "..."}} objects')
    rows: list[Row] = []
    for position, item in enumerate(document):
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("index"), int)
            or isinstance(item.get("index"), bool)
            or not isinstance(item.get("text"), str)
        ):
            raise GamepakError(f"{where}: item {position} is not an object with an integer index and a string text")
        rows.append((item["index"], item["text"], f"item {position}"))
    return rows


def _csv_delimiter(text: str, where: str) -> str:
    """The delimiter the header row `index<d>text` uses."""
    header = text.split("\n", 1)[0].rstrip("\r")
    for delimiter in CSV_DELIMITERS:
        cells = [cell.strip().strip('"').lower() for cell in header.split(delimiter)]
        if cells == ["index", "text"]:
            return delimiter
    raise GamepakError(
        f"{where}: the first row must be the header index,text (commas, semicolons or tabs between "
        f"the two), not {header[:60]!r}"
    )


def _rows_from_csv(text: str, where: str) -> list[Row]:
    delimiter = _csv_delimiter(text, where)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        records = list(reader)
    except csv.Error as exc:
        raise GamepakError(f"{where}: malformed CSV: {exc}") from None
    rows: list[Row] = []
    for line, record in enumerate(records[1:], start=2):
        if not record:
            continue
        if len(record) != 2:
            raise GamepakError(
                f"{where}: row {line} has {len(record)} fields, expected 2 (index{delimiter}text); "
                "quote texts that hold the separator"
            )
        try:
            index = int(record[0])
        except ValueError:
            raise GamepakError(f"{where}: row {line}: index {record[0]!r} is not a number") from None
        rows.append((index, record[1], f"row {line}"))
    return rows


def _rows_from_po(text: str, where: str, originals: Sequence[str] | None) -> list[Row]:
    # polib splits a string argument with str.splitlines(), which also breaks at U+0085, U+001C..E
    # (characters Latin-1 strings can hold); reading a file splits at line ends only.
    # The scratch folder carries this process's id: one a killed run leaves is removed by the next.
    import shutil

    import polib

    from ...core.atomic import temporary_folder

    folder = temporary_folder("po")
    temporary = os.path.join(folder, "translation.po")
    try:
        with open(temporary, "wb") as handle:
            handle.write(text.encode("utf-8"))
        po = polib.pofile(temporary, encoding="utf-8")
    except (OSError, ValueError) as exc:
        raise GamepakError(f"{where}: malformed PO file: {exc}") from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    rows: list[Row] = []
    for entry in po:
        if entry.obsolete:
            continue
        try:
            index = int(entry.msgctxt or "")
        except ValueError:
            raise GamepakError(
                f"{where}: line {entry.linenum}: msgctxt {entry.msgctxt!r} is not a string index"
            ) from None
        location = f"line {entry.linenum}"
        if originals is not None and 0 <= index < len(originals) and entry.msgid != originals[index]:
            elsewhere = [number for number, original in enumerate(originals) if original == entry.msgid]
            found = f"it is string {elsewhere[0]}" if elsewhere else "it is not in the original"
            warnings.warn(
                f"{where}: {location}: msgid {_short(entry.msgid)} of index {index} is stale ({found}; "
                f"string {index} is {_short(originals[index])}): made from another version?",
                stacklevel=3,
            )
        translated = entry.msgstr and "fuzzy" not in entry.flags
        # Untranslated: the original's string, even where a stale msgid differs from it.
        fallback = None if originals is not None else entry.msgid
        rows.append((index, entry.msgstr if translated else fallback, location))
    return rows


def _short(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def load_translation(
    data: bytes,
    expected: int,
    format: str = "json",
    *,
    where: str = "translation",
    originals: Sequence[str] | None = None,
) -> list[str]:
    """The texts of a translation file, by index; every index 0..expected-1 exactly once.

    With `originals` (the strings being translated), a PO entry left untranslated keeps the
    original string, and a PO entry whose msgid is not the original string at its index is
    reported with a `warnings.warn` naming it."""
    if originals is not None and len(originals) != expected:
        raise ValueError("originals must hold `expected` strings")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise GamepakError(f"{where}: byte {exc.start}: not UTF-8") from None
    if format == "json":
        rows = _rows_from_json(text, where)
    elif format == "csv":
        rows = _rows_from_csv(text, where)
    elif format == "po":
        rows = _rows_from_po(text, where, originals)
    else:
        raise GamepakError(f"unknown translation format {format!r}")
    by_index: dict[int, str | None] = {}
    for index, value, _location in rows:
        if index in by_index:
            raise GamepakError(f"{where}: index {index} appears more than once")
        by_index[index] = value
    extra = sorted(index for index in by_index if not 0 <= index < expected)
    if extra:
        raise GamepakError(
            f"{where}: {_some(extra)} not in the original, which holds {expected} strings (0..{expected - 1})"
        )
    missing = [index for index in range(expected) if index not in by_index]
    if missing:
        raise GamepakError(f"{where}: {_some(missing)} missing; every string 0..{expected - 1} must be present")
    result = []
    for index in range(expected):
        value = by_index[index]
        result.append(value if value is not None else (originals[index] if originals is not None else ""))
    return result


def _some(indices: list[int]) -> str:
    shown = ", ".join(str(index) for index in indices[:10])
    more = f" and {len(indices) - 10} more" if len(indices) > 10 else ""
    one = len(indices) == 1
    return f"{'index' if one else 'indices'} {shown}{more} {'is' if one else 'are'}"
