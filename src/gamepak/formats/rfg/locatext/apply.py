"""A translation's rows applied to a `.rfglocatext`'s entries: what `text import` changes,
every row checked before the first entry is touched."""

from __future__ import annotations

from ....errors import GamepakError
from . import NUL, LocaEntry, LocaText, describe, encode_text, hash_key, identifier_hash, texts_of
from .rows import Row, Rows

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: `typing` costs milliseconds at start-up
    from collections.abc import Sequence


class Applied:
    """What applying a translation changed: the indices of changed strings, the keys added and
    removed."""

    def __init__(self) -> None:
        self.changed: list[int] = []
        self.added: list[str] = []
        self.removed: list[str] = []


def apply_translation(table: LocaText, rows: Rows | Sequence[Row], *, delete: bool = False) -> Applied:
    """Put the rows' strings into `table`: changed strings replaced, new keys added (hash from
    the identifier), entries the rows lack removed only with `delete`. Everything is checked
    first: on an error `table` is unchanged."""
    rows = Rows.of(rows)
    hashes, identifiers, texts = rows.hashes, rows.identifiers, rows.texts
    count = len(hashes)
    named = identifiers.count(None) != count
    if not named and hashes == table.hashes():
        # Every entry by its hash, in the file's order (gamepak's own export without names):
        # row n is entry n (the file's hashes are unique).
        values: list[int] = hashes  # type: ignore[assignment]
        indexes: list[int | None] = list(range(count))
    elif not named and None not in hashes and len(set(hashes)) == count:
        # Every row keyed by its hash, none twice: the checks of `_plan` pass, at the cost of
        # a few passes over lists.
        values = hashes  # type: ignore[assignment]
        indexes = list(map(table.index_of().get, values))
    else:
        values, indexes = _plan(rows, table.index_of(), table.entries)
    applied = Applied()
    updates: dict[int, bytes] = {}
    new_entries: list[LocaEntry] = []
    # Only rows with a text, or new keys, can change anything (an untouched PO has no msgstr).
    if texts.count(None) == count:
        pending: list[int] = []
    else:
        pending = [number for number, text in enumerate(texts) if text is not None]
    if None in indexes:
        pending = sorted({*pending, *(number for number, index in enumerate(indexes) if index is None)})
    if not (pending or named or delete):
        return applied  # nothing to change: the entries are left as read (not even made)
    entries = table.entries
    current = texts_of(entries) if pending else []
    for number in pending:
        text, index = texts[number], indexes[number]
        if index is None:
            if text is None:
                text = rows.fallbacks[number]
                if text is None:
                    continue
            new_entries.append(LocaEntry(values[number], _encode(text, rows, number), identifiers[number]))
            applied.added.append(identifiers[number] or hash_key(values[number]))
        elif text is not None and text != current[index]:
            updates[index] = _encode(text, rows, number)
    # Checked and encoded: only now is the table changed.
    for index, raw in updates.items():
        entries[index].raw = raw
    if named:
        for index, identifier in zip(indexes, identifiers):
            if index is not None and identifier is not None and entries[index].identifier is None:
                entries[index].identifier = identifier
    applied.changed = sorted(updates)
    if delete:
        wanted = set(values)
        kept = [entry for entry in entries if entry.hash in wanted]
        applied.removed = [entry.key for entry in entries if entry.hash not in wanted]
        entries[:] = kept
    entries.extend(new_entries)
    return applied


def _plan(rows: Rows, index_of: dict[int, int], entries: list[LocaEntry]) -> tuple[list[int], list[int | None]]:
    """Each row's hash and the index of its entry (None: a new entry), row by row: the first
    problem is raised (no key, an identifier that does not hash to the hash given, a key twice,
    an identifier whose hash is another named entry's)."""
    first_of: dict[int, int] = {}
    values: list[int] = []
    indexes: list[int | None] = []
    for number, (value, identifier) in enumerate(zip(rows.hashes, rows.identifiers)):
        if value is None:
            if identifier is None:
                raise GamepakError(f"{rows.where(number)}: neither a hash nor an identifier")
            value = identifier_hash(identifier)
        elif identifier is not None and identifier_hash(identifier) != value:
            actual = hash_key(identifier_hash(identifier))
            raise GamepakError(
                f"{rows.where(number)}: identifier {identifier!r} hashes to {actual}, not the {hash_key(value)} given"
            )
        earlier = first_of.setdefault(value, number)
        if earlier != number:
            name = identifier or rows.identifiers[earlier] or hash_key(value)
            raise GamepakError(f"{rows.where(number)}: {name} ({hash_key(value)}) is also at {rows.where(earlier)}")
        index = index_of.get(value)
        if index is not None and identifier is not None:
            known = entries[index].identifier
            if known is not None and known.lower() != identifier.lower():
                raise GamepakError(
                    f"{rows.where(number)}: identifier {identifier!r} hashes to {hash_key(value)}, the hash of "
                    f"{describe(index, value)}, named {known!r}: a collision"
                )
        values.append(value)
        indexes.append(index)
    return values, indexes


def _encode(text: str, rows: Rows, number: int) -> bytes:
    """Row `number`'s text as stored (`encode_text`, its place worked out only for an error)."""
    if "\0" not in text:
        try:
            return text.encode("utf-16-le") + NUL
        except UnicodeEncodeError:
            pass
    return encode_text(text, rows.where(number))
