"""What the viewer's strings page (`/strings/PATH`, `Viewer.strings`) shows: every string of
an RFG localization file or a J2ME text pack, one row each (index, identifier or hash, string),
filterable with `?q=`.

Each string cell is `dir="auto"`: the browser sets Arabic and Hebrew right to left from the
string's first letter (the files mark no direction). Identifiers are not looked up here (that
reads the game's tables: `gamepak text export --names`); RFG strings show their hash.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import GamepakError

if TYPE_CHECKING:
    from .site import Place

# The largest file read for the page, and rows shown per page.
MAX_STRINGS_BYTES = 16 << 20
PAGE_ROWS = 1000


def has_strings_page(name: str, preview_kind: str) -> bool:
    """Whether a file's page links to its strings page: a localization file by its name, a J2ME
    text pack once its preview found strings."""
    from ..formats.rfg.locatext import EXTENSION

    return name.lower().endswith(EXTENSION) or preview_kind == "strings"


def read_strings(place: Place) -> tuple[str, list[tuple[int, str, str]]]:
    """(what the file is, [(index, key, string)]) for an `.rfglocatext` or a J2ME text pack."""
    from ..formats.rfg.locatext import LocaText, is_locatext, language_of, texts_of
    from .previews import read_all

    data = read_all(place, MAX_STRINGS_BYTES)
    if is_locatext(data):
        table = LocaText.parse(data, place.path)
        language = language_of(place.name)
        what = f"RFG localization strings{f' ({language})' if language else ''}"
        keys = [entry.key for entry in table.entries]
        return what, list(zip(range(len(keys)), keys, texts_of(table.entries)))
    from ..formats.j2me.string_tables import StringTable, looks_like_text_pack

    if not looks_like_text_pack(data):
        raise GamepakError(f"{place.path}: neither an RFG localization file nor a J2ME text pack")
    texts = StringTable.parse(data, "pack", place.path).texts
    return "J2ME text pack", [(index, str(index), text) for index, text in enumerate(texts)]


def matching(rows: list[tuple[int, str, str]], query: str) -> list[tuple[int, str, str]]:
    """The rows whose key or string holds `query` (case-insensitive); all for an empty one."""
    if not query:
        return rows
    wanted = query.casefold()
    return [row for row in rows if wanted in row[1].casefold() or wanted in row[2].casefold()]
