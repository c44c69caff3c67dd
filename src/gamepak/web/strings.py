"""What the viewer's strings page (`/strings/PATH`, `Viewer.strings`) shows: every string of
an RFG localization file or a J2ME text pack, one row each (index, identifier or hash, string),
filterable with `?q=`.

Each string cell is `dir="auto"`: the browser sets Arabic and Hebrew right to left from the
string's first letter (the files mark no direction). RFG strings are named as `text export`
names them: from the game's tables (`table.vpp_pc`, `misc.vpp_pc`) beside the file (or beside
the pack holding it) and in the served folder; a string no table names shows its hash. Which
kinds have strings, and how they are read, is the content registry's (`gamepak.content`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..errors import GamepakError

if TYPE_CHECKING:
    from .site import Place

# The largest file read for the page, and rows shown per page.
MAX_STRINGS_BYTES = 16 << 20
PAGE_ROWS = 1000


def has_strings_page(name: str, preview_kind: str) -> bool:
    """Whether a file's page links to its strings page: its preview found strings."""
    return preview_kind == "strings"


def name_sources(place: Place, root: str | None) -> list[str]:
    """The packs whose tables name RFG strings: the game's tables beside the file (or beside
    the pack holding it), then in the served folder `root`."""
    from ..formats.rfg.locatext.names import default_sources
    from .previews import _disk_path

    found: list[str] = []
    for beside in (_disk_path(place), os.path.join(root, "-") if root else None):
        for source in default_sources(beside) if beside else []:
            if source not in found:
                found.append(source)
    return found


def read_strings(place: Place, root: str | None = None) -> tuple[str, list[tuple[int, str, str]]]:
    """(what the file is, [(index, key, string)]) of a file holding strings (the content
    registry's strings kinds: an `.rfglocatext`, J2ME strings), RFG strings named from the
    tables found by `name_sources`."""
    from ..content import of_member
    from .previews import _head, _holder_format, read_all

    head = _head(place)
    rows = of_member(place.name, head, holder=_holder_format(place), family="strings")
    if rows:
        data = read_all(place, MAX_STRINGS_BYTES)
        options = {"names": name_sources(place, root)}
        for row in rows:
            found = row.call("strings", data, place.path, options=options)
            if found is not None:
                return found  # type: ignore[no-any-return]
    raise GamepakError(f"{place.path}: neither an RFG localization file nor J2ME strings")


def matching(rows: list[tuple[int, str, str]], query: str) -> list[tuple[int, str, str]]:
    """The rows whose key or string holds `query` (case-insensitive); all for an empty one."""
    if not query:
        return rows
    wanted = query.casefold()
    return [row for row in rows if wanted in row[1].casefold() or wanted in row[2].casefold()]
