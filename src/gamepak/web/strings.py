"""What the viewer's strings page (`/strings/PATH`, `Viewer.strings`) shows: every string of
an RFG localization file or a J2ME text pack, one row each (index, identifier or hash, string),
filterable with `?q=`.

Each string cell is `dir="auto"`: the browser sets Arabic and Hebrew right to left from the
string's first letter (the files mark no direction). RFG strings are named as `text export`
names them: from the game's tables (`table.vpp_pc`, `misc.vpp_pc`) beside the file (or beside
the pack holding it) and in the served folder; a string no table names shows its hash. Which
kinds have strings, and how they are read, is the content registry's (`gamepak.content`).

The tables' names are read once per server, not once per page: the page's preview worker is
forked from the server (`Pages.isolated`), so what the server holds it inherits without a copy.
The first page's worker reads the tables (under the worker's memory cap, as any parse of a
stranger's file) and sends back every name they give; the server keeps them (`NameCache`, at
most `NAMES_MEMORY`), and each later worker of a page beside the same tables looks names up in
its inherited copy instead of reading `table.vpp_pc` again.
"""

from __future__ import annotations

import collections
import os
import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, NamedTuple

from ..errors import GamepakError

if TYPE_CHECKING:
    from .site import Place

# Rows shown per page. The largest file read for the page is every strings reader's
# (`core.content_limits`'s `strings_bytes`): the page parses in a memory-capped worker.
PAGE_ROWS = 1000
# What the server keeps of the tables' names, in all (a set that does not fit is not kept: its
# pages read the tables in their workers, as before). The game's tables give ~45,000 names a MB
# of `table.vpp_pc`, ~7 MB of them; each name is counted at its text's length plus NAME_OVERHEAD
# (a dict slot, an int and a str object).
NAMES_MEMORY = 64 << 20
NAME_OVERHEAD = 120

SourceKey = tuple[tuple[str, int | None, int | None], ...]


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


class TableNames(Mapping[int, str]):
    """Every identifier the tables of `sources` give, by hash: the ones the server kept
    (`known`), else read on the first lookup, in the process that looks (`read_here`)."""

    def __init__(self, sources: list[str], key: SourceKey, known: dict[int, str] | None) -> None:
        self.sources = sources
        self.key = key
        # No tables beside the file: nothing to read, nothing named.
        self.found: dict[int, str] | None = known if known is not None else None if sources else {}
        self.read_here = False

    def _table(self) -> dict[int, str]:
        if self.found is None:
            from ..formats.rfg.locatext.names import find_names

            self.found = find_names(self.sources).identifiers
            self.read_here = True
        return self.found

    def __getitem__(self, value: int) -> str:
        return self._table()[value]

    def get(self, value: int, default: str | None = None) -> str | None:  # type: ignore[override]
        return self._table().get(value, default)

    def __iter__(self) -> Iterator[int]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())


def names_size(found: Mapping[int, str]) -> int:
    """What a set of names is counted at against NAMES_MEMORY."""
    return sum(NAME_OVERHEAD + len(text) for text in found.values())


class NameCache:
    """The tables' names the server keeps, by the identity (path, size, modification time) of
    the tables they were read from; the last used kept first, at most NAMES_MEMORY in all."""

    def __init__(self, memory: int = NAMES_MEMORY) -> None:
        self.memory = memory
        self._sets: collections.OrderedDict[SourceKey, tuple[dict[int, str], int]] = collections.OrderedDict()
        self._lock = threading.Lock()  # pages ask from the server's threads

    def names_for(self, place: Place, root: str | None) -> TableNames:
        """The names of the tables beside `place` (`name_sources`): the kept ones, or to be read."""
        sources = name_sources(place, root)
        key = _identity(sources)
        with self._lock:
            kept = self._sets.get(key)
            if kept is not None:
                self._sets.move_to_end(key)
        return TableNames(sources, key, kept[0] if kept is not None else None)

    def keep(self, key: SourceKey, found: dict[int, str]) -> None:
        """Keep the names read from the tables `key` names, dropping the least recently used
        sets past NAMES_MEMORY (a set larger than it all is not kept)."""
        size = names_size(found)
        if size > self.memory:
            return
        with self._lock:
            self._sets[key] = (found, size)
            self._sets.move_to_end(key)
            while sum(size for _, size in self._sets.values()) > self.memory:
                self._sets.popitem(last=False)


def _identity(sources: list[str]) -> SourceKey:
    identities: list[tuple[str, int | None, int | None]] = []
    for source in sources:
        try:
            info = os.stat(source)
            identities.append((source, info.st_size, info.st_mtime_ns))
        except OSError:
            identities.append((source, None, None))
    return tuple(identities)


class StringsPage(NamedTuple):
    """What the page's worker sends the server: one page of rows, never the whole file's."""

    what: str
    rows: list[tuple[int, str, str]]  # the rows shown: at most PAGE_ROWS, from `offset` of the matches
    total: int  # the file's strings
    matched: int  # those matching the query (all: no query)
    names: dict[int, str] | None  # the tables' names this worker read, for the server to keep


def page_strings(place: Place, names: TableNames, query: str = "", offset: int = 0) -> StringsPage:
    """In the page's worker: the page of `read_strings` (with the names of `names`) matching
    `query` from `offset`, and the names this worker read when the server may keep them
    (NAMES_MEMORY), else None. Filtered and cut here so that the server holds one page of a
    file of any size (the largest read is `core.content_limits`'s `strings_bytes`)."""
    what, rows = read_strings(place, names=names)
    found = matching(rows, query)
    read = names.found if names.read_here and names.found is not None else None
    kept = read if read is not None and names_size(read) <= NAMES_MEMORY else None
    return StringsPage(what, found[offset : offset + PAGE_ROWS], len(rows), len(found), kept)


def read_strings(
    place: Place, root: str | None = None, *, names: TableNames | None = None
) -> tuple[str, list[tuple[int, str, str]]]:
    """(what the file is, [(index, key, string)]) of a file holding strings (the content
    registry's strings kinds: an `.rfglocatext`, J2ME strings), RFG strings named from `names`,
    else from the tables found by `name_sources`."""
    from ..content import of_member
    from ..core.content_limits import current
    from .previews import _head, _holder_format, read_all

    head = _head(place)
    rows = of_member(place.name, head, holder=_holder_format(place), family="strings")
    if rows:
        data = read_all(place, current().strings_byte_budget())
        options: dict[str, object] = (
            {"identifiers": names} if names is not None else {"names": name_sources(place, root)}
        )
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
