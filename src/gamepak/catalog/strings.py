"""The catalog's `strings` table: every string of the collection's localization files (RFG
`.rfglocatext`, loose or members of packs) and J2ME text packs, one row per string, so that a
translator can ask DuckDB what is left to translate across languages.

Columns: the file (`archive_path`, `nested_path`), the member holding the strings (null: the
file itself), the language its name carries (`locatexts_ar_eg.rfglocatext` -> `ar_eg`), the
hash (RFG) or null, the identifier (null: the catalog does not look names up), the string's
index in its file and the string. RFG identifiers come from `gamepak text export --names`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import GamepakError
from ..formats.rfg.locatext import EXTENSION, LocaText, language_of, texts_of

if TYPE_CHECKING:
    from ..core.archive import Archive, Entry

COLUMNS = ("member", "language", "hash", "identifier", "index", "string")


def strings_bytes() -> int:
    """The largest strings file the catalog reads (`core.content_limits`: the game's largest
    are about 1 MB)."""
    from ..core.content_limits import current

    return current().strings_byte_budget()


def _too_large(size: int, largest: int) -> str:
    return f"{size} bytes is too large for a localization file (at most {largest} are read)"


def localization_positions(entries: list[Entry]) -> list[int]:
    """Positions in `entries` of the `.rfglocatext` members."""
    return [position for position, entry in enumerate(entries) if entry.name.lower().endswith(EXTENSION)]


def _empty() -> dict[str, list[Any]]:
    return {key: [] for key in COLUMNS}


def _add_locatext(columns: dict[str, list[Any]], table: LocaText, member: str | None, language: str | None) -> None:
    count = len(table.entries)
    columns["member"] += [member] * count
    columns["language"] += [language] * count
    columns["hash"] += [entry.hash for entry in table.entries]
    columns["identifier"] += [entry.identifier for entry in table.entries]
    columns["index"] += list(range(count))
    columns["string"] += texts_of(table.entries)


def member_string_columns(
    archive: Archive,
    entries: list[Entry],
    positions: list[int],
    error: Callable[[BaseException | str, str], None],
) -> tuple[int, dict[str, list[Any]]]:
    """(row count, columns) of the strings of the localization files at `positions` of
    `entries`; one that cannot be read or parsed is reported through `error(problem, member)`."""
    columns = _empty()
    wanted = []
    largest = strings_bytes()
    for position in positions:
        entry = entries[position]
        if entry.size > largest:
            error(_too_large(entry.size, largest), entry.name)
        else:
            wanted.append(entry)
    try:
        for entry, chunks in archive.iter_data(wanted):
            try:
                table = LocaText.parse(b"".join(chunks), entry.name)
            except GamepakError as exc:
                error(exc, entry.name)
                continue
            _add_locatext(columns, table, entry.name, language_of(entry.name))
    except (OSError, GamepakError) as exc:
        error(exc, "")
    return len(columns["index"]), columns


def file_string_columns(archive: Archive) -> tuple[int, dict[str, list[Any]]]:
    """(row count, columns) of the strings of an open file that is itself a localization file
    (format `rfglocatext`) or a J2ME text pack (a `j2me-sized` pack of a string table and an
    index table); (0, {}) for any other file. A localization file past `strings_bytes` is a
    GamepakError naming it."""
    if archive.format_name == "rfglocatext":
        if archive.size > (largest := strings_bytes()):
            raise GamepakError(f"{archive.filename}: {_too_large(archive.size, largest)}")
        columns = _empty()
        entries = getattr(archive, "entries", [])
        _add_locatext(columns, LocaText(list(entries)), None, language_of(archive.filename))
        return len(entries), columns
    if archive.format_name == "j2me-sized" and archive.size <= strings_bytes():
        from ..formats.j2me.string_tables import StringTable, looks_like_text_pack

        data = archive._source.read_exact(archive.size, 0, "text pack")
        if not looks_like_text_pack(data):
            return 0, {}
        texts = StringTable.parse(data, "pack", archive.filename).texts
        count = len(texts)
        return count, {
            "member": [None] * count,
            "language": [None] * count,
            "hash": [None] * count,
            "identifier": [None] * count,
            "index": list(range(count)),
            "string": texts,
        }
    return 0, {}


def probed_string_columns(
    archive: Archive, entries: list[Entry], error: Callable[[BaseException | str, str], None]
) -> tuple[int, dict[str, list[Any]]]:
    """(row count, columns) of the strings of the members of a pack in which a strings kind
    with no name or signature lives (J2ME strings in J2ME packs: the content registry's
    `packs`), each member asked through the kind's `strings` verb. A J2ME text pack as a whole
    is `file_string_columns`'s, not counted twice here."""
    from ..content import kinds

    probing = [kind for kind in kinds("strings") if kind.has("probe") and archive.format_name in kind.packs]
    columns = _empty()
    if not probing or _is_text_pack(archive):
        return 0, columns
    largest = strings_bytes()
    wanted = [entry for entry in entries if 0 < entry.size <= largest]
    try:
        for entry, chunks in archive.iter_data(wanted):
            data = b"".join(chunks)
            for kind in probing:
                try:
                    found = kind.call("strings", data, f"{archive.filename}/{entry.name}")
                except GamepakError as exc:
                    error(exc, entry.name)
                    break
                if found is not None:
                    count = len(found[1])
                    columns["member"] += [entry.name] * count
                    columns["language"] += [None] * count
                    columns["hash"] += [None] * count
                    columns["identifier"] += [None] * count
                    columns["index"] += [index for index, _, _ in found[1]]
                    columns["string"] += [text for _, _, text in found[1]]
                    break
    except (OSError, GamepakError) as exc:
        error(exc, "")
    return len(columns["index"]), columns


def _is_text_pack(archive: Archive) -> bool:
    """Whether the whole pack is a J2ME text pack (its strings are the file's own rows)."""
    if archive.format_name != "j2me-sized" or archive.size > strings_bytes():
        return False
    from ..formats.j2me.string_tables import looks_like_text_pack

    return bool(looks_like_text_pack(archive._source.read_exact(archive.size, 0, "text pack")))
