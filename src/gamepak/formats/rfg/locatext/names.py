"""Identifiers for `.rfglocatext` hashes, recovered by hashing candidate names.

The files store only hashes. The game's `.xtbl` tables name the strings they show in their leaf
elements (`<Name>D01DAN_..._CLR_01</Name>`), so the leaf texts of the tables in `table.vpp_pc`
(and `misc.vpp_pc`) name most entries; a user's text file (one name a line) adds more.

Leaf texts are taken with one regular expression over the tables' bytes (text right after a
start tag and right before an end tag): 4x faster than an XML parser on the 22 MB of tables in
`table.vpp_pc`, and it keeps going past a table that is not well-formed (the game's
`credits.xtbl` is not). Extra candidates cost nothing: a name is used only when its hash is
one the file holds.
"""

from __future__ import annotations

import os
import re
import zlib

from ....errors import GamepakError
from . import identifier_hash

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from collections.abc import Iterable, Iterator

# A leaf's text: after a start tag's `>` and before an end tag; texts starting with white space
# are layout between elements (skipping them makes the scan 2x faster).
LEAF_TEXT = re.compile(rb">([^<\s][^<]*)</")
PACK_EXTENSIONS = (".vpp_pc", ".str2_pc")
TABLE_EXTENSION = ".xtbl"
# The packs beside a localization file that hold the game's tables.
DEFAULT_PACKS = ("table.vpp_pc", "misc.vpp_pc")
# A source with this extension is a user's list of names, one a line.
NAME_LIST_EXTENSION = ".txt"


class Names:
    """Identifiers found for hashes, where candidates came from, how many tables and candidates
    were read, and the collisions met: (hash, the name kept (the first found), the other)."""

    def __init__(self) -> None:
        self.identifiers: dict[int, str] = {}
        self.sources: list[str] = []
        self.tables = 0
        self.candidates = 0
        self.collisions: list[tuple[int, str, str]] = []


def leaf_texts(xml: bytes) -> dict[bytes, None]:
    """The texts of an XML document's leaf elements, raw, in the order they first appear."""
    return dict.fromkeys(LEAF_TEXT.findall(xml))


def _decode(raw: bytes) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    if "&" in text:
        from html import unescape

        text = unescape(text)
    return text


def add_candidates(names: Names, texts: Iterable[bytes | str], wanted: set[int] | None) -> None:
    """Hash each candidate; keep the ones `wanted` holds (all with None), first found first."""
    found = names.identifiers
    crc32 = zlib.crc32
    for candidate in texts:
        names.candidates += 1
        if isinstance(candidate, bytes):
            raw = candidate.rstrip()
            if raw.isascii() and b"&" not in raw:
                # The game's hash lowers ASCII only, as bytes.lower() does.
                value = crc32(raw.lower())
                if wanted is not None and value not in wanted:
                    continue
                text = raw.decode("ascii")
            else:
                text = _decode(raw)
                value = identifier_hash(text)
        else:
            text = candidate
            value = identifier_hash(text)
        if wanted is not None and value not in wanted:
            continue
        kept = found.get(value)
        if kept is None:
            found[value] = text
        elif kept.lower() != text.lower():
            names.collisions.append((value, kept, text))


def table_documents(source: str) -> Iterator[tuple[str, bytes]]:
    """(label, bytes) of each `.xtbl` table a source holds: a table file, a pack (and the
    packs inside it), or a folder of either (not its subfolders)."""
    if os.path.isdir(source):
        for name in sorted(os.listdir(source)):
            path = os.path.join(source, name)
            if name.lower().endswith((TABLE_EXTENSION, *PACK_EXTENSIONS)) and os.path.isfile(path):
                yield from table_documents(path)
        return
    if source.lower().endswith(TABLE_EXTENSION):
        from ....core.files import read_file

        yield source, read_file(source)
        return
    if not os.path.exists(source):
        raise GamepakError(f"{source}: no such file or folder (--names takes packs, .xtbl tables or folders)")
    from ....core.opening import open as open_archive

    with open_archive(source) as archive:
        yield from _pack_tables(archive, source)


def _pack_tables(archive: object, label: str) -> Iterator[tuple[str, bytes]]:
    from ....core.archive import Archive

    assert isinstance(archive, Archive)
    entries = archive.infolist()
    tables = [entry for entry in entries if entry.name.lower().endswith(TABLE_EXTENSION)]
    for entry, chunks in archive.iter_data(tables):
        yield f"{label}/{entry.name}", b"".join(chunks)
    for entry in entries:
        if entry.name.lower().endswith(PACK_EXTENSIONS):
            try:
                inner = archive.open_archive(entry)
            except GamepakError:
                continue  # not a pack after all: nothing to name from
            with inner:
                yield from _pack_tables(inner, f"{label}/{entry.name}")


def default_sources(file: str) -> list[str]:
    """The packs holding the game's tables beside `file` (`table.vpp_pc`, `misc.vpp_pc`)."""
    folder = os.path.dirname(os.path.abspath(file))
    try:
        present = {name.lower(): name for name in os.listdir(folder)}
    except OSError:
        return []
    return [os.path.join(folder, present[name]) for name in DEFAULT_PACKS if name in present]


def read_name_list(path: str) -> list[str]:
    """The names in a text file: UTF-8, one a line; blank lines are skipped."""
    from ....core.files import read_file

    data = read_file(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise GamepakError(f"{path}: byte {exc.start}: not UTF-8") from None
    return [line.strip() for line in text.splitlines() if line.strip()]


def find_names(sources: Iterable[str], name_lists: Iterable[str] = (), wanted: set[int] | None = None) -> Names:
    """Identifiers for the `wanted` hashes (all candidates with None): a user's name lists
    first (and the `.txt` files among `sources`), then the leaf texts of the tables in `sources`."""
    names = Names()
    sources = list(sources)
    lists = [*name_lists, *(source for source in sources if source.lower().endswith(NAME_LIST_EXTENSION))]
    for path in lists:
        names.sources.append(path)
        add_candidates(names, read_name_list(path), wanted)
    for source in sources:
        if source.lower().endswith(NAME_LIST_EXTENSION):
            continue
        names.sources.append(source)
        for _label, document in table_documents(source):
            names.tables += 1
            add_candidates(names, leaf_texts(document), wanted)
    return names
