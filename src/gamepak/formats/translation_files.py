"""What the translation files of every text format share (`gamepak text`: J2ME text packs, RFG
localization files): how the file's format is chosen and which CSV delimiters a spreadsheet may
have used."""

from __future__ import annotations

import os

from ..errors import GamepakError

# Spreadsheets write CSV with commas, or semicolons where the comma is the decimal mark, or tabs.
CSV_DELIMITERS = (",", ";", "\t")


def choose_format(path: str | os.PathLike[str] | None, explicit: str | None, by_extension: dict[str, str]) -> str:
    """A translation file's format: `explicit` (one of `by_extension`'s values), else the one
    its extension names in `by_extension` (`{"po": "po", "pot": "po", ...}`), else JSON when
    there is no file; GamepakError otherwise."""
    formats = list(dict.fromkeys(by_extension.values()))
    if explicit:
        wanted = explicit.lower().lstrip(".")
        if wanted not in formats:
            raise GamepakError(f"unknown translation format {explicit!r}; use one of {', '.join(formats)}")
        return wanted
    if path is None:
        return "json"
    extension = os.path.splitext(os.fspath(path))[1].lower().lstrip(".")
    if extension in by_extension:
        return by_extension[extension]
    shown = [f".{name}" for name in by_extension if name != "pot"]
    raise GamepakError(
        f"{os.fspath(path)}: cannot tell the translation format from the extension; use "
        f"{', '.join(shown[:-1])} or {shown[-1]}"
    )
