"""A translation file's rows as read, whatever its form: `Row` (one string, keyed by hash
and/or identifier) and `Rows` (many, held as columns), and how a key's hash is read."""

from __future__ import annotations

from ....errors import GamepakError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: `typing` costs milliseconds at start-up
    from collections.abc import Callable, Iterator, Sequence


class Row:
    """One translated string: its hash and/or identifier, its text (None: keep the file's),
    where it was read, and the text to use for a new entry when `text` is None."""

    __slots__ = ("fallback", "hash", "identifier", "text", "where")

    def __init__(
        self, hash: int | None, identifier: str | None, text: str | None, where: str, fallback: str | None = None
    ) -> None:
        self.hash = hash
        self.identifier = identifier
        self.text = text
        self.where = where
        self.fallback = fallback


class Rows:
    """A translation's rows as columns: a few lists cost a fraction of an object per row (one
    `Row` for each of the game's 7,298 strings took a fifth of a PO import). Row `number` is
    named by `hashes[number]` and/or `identifiers[number]`; `texts[number]` is its text (None:
    keep the file's), `fallbacks[number]` the text of a new entry whose text is None, and
    `where(number)` says where it was read (worked out when a message needs it). Indexing
    gives a `Row`."""

    __slots__ = ("fallbacks", "hashes", "identifiers", "texts", "where")

    def __init__(
        self,
        hashes: list[int | None],
        identifiers: list[str | None],
        texts: list[str | None],
        fallbacks: Sequence[str | None],
        where: Callable[[int], str],
    ) -> None:
        self.hashes = hashes
        self.identifiers = identifiers
        self.texts = texts
        self.fallbacks = fallbacks
        self.where = where

    @classmethod
    def of(cls, rows: Rows | Sequence[Row]) -> Rows:
        """`rows` as columns."""
        if isinstance(rows, Rows):
            return rows
        return cls(
            [row.hash for row in rows],
            [row.identifier for row in rows],
            [row.text for row in rows],
            [row.fallback for row in rows],
            [row.where for row in rows].__getitem__,
        )

    def __len__(self) -> int:
        return len(self.hashes)

    def __getitem__(self, number: int) -> Row:
        if not -len(self.hashes) <= number < len(self.hashes):
            raise IndexError(number)
        number %= len(self.hashes)
        return Row(
            self.hashes[number],
            self.identifiers[number],
            self.texts[number],
            self.where(number),
            self.fallbacks[number],
        )

    def __iter__(self) -> Iterator[Row]:
        return (self[number] for number in range(len(self.hashes)))


def parse_hash(value: object, where: str) -> int | None:
    if type(value) is str and len(value) == 9 and value[0] == "#" and value[1:].isalnum() and value.isascii():
        try:
            return int(value[1:], 16)  # gamepak's own `#5a3c91f0` (quick path: 7,000 a file)
        except ValueError:
            pass
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 0xFFFFFFFF:
        return value
    if isinstance(value, str):
        digits = value.strip().removeprefix("#")
        # int() also takes signs, underscores and spaces: only plain hexadecimal digits pass.
        if 1 <= len(digits) <= 8 and digits.isalnum() and digits.isascii():
            try:
                return int(digits, 16)
            except ValueError:
                pass
    raise GamepakError(f"{where}: hash {value!r} is not 8 hexadecimal digits")
