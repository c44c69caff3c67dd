"""Red Faction Guerrilla localization files (`.rfglocatext` v3): one language's strings by hash.

Little-endian throughout.

| offset   | type          | field                                                            |
|----------|---------------|------------------------------------------------------------------|
| 0        | u32           | signature 0xA84C7F73 (bytes `73 7F 4C A8`)                      |
| 4        | u32           | version, 3                                                       |
| 8        | u32           | string count N                                                   |
| 12       | N x 12 bytes  | entries: u32 hash, u32 offset (from the file's start), u32 length (bytes, with the NUL) |
| 12 + 12N | ...           | the strings: UTF-16LE, each ending with a 2-byte NUL             |

The game's files store the strings after the table, without gaps, in entry order. Nothing else
is stored: no identifiers (a hash is the CRC-32 of the identifier's characters taken as bytes,
ASCII letters lowered: `identifier_hash`), no language code.

An entry keeps its hash and its stored bytes: an unchanged file is written back byte for byte,
whether its identifiers are known or not (RFGM's writer rehashes every identifier, so entries it
could not name get the hash of an empty name). A changed file keeps its strings in the order
they were stored, back to back after the table: one changed string moves only the later offsets.

- `names`: identifiers for hashes (the leaf texts of `.xtbl` tables, a user's list).
- `translate`: `gamepak text export/import` for these files (JSON, CSV, PO, RFGM's XML); the PO
  form written by `po_write` and read by `po`, the rows read in `rows`, applied to a file by
  `apply`.
"""

from __future__ import annotations

import codecs
import struct
import sys
from array import array
from itertools import accumulate, repeat
from operator import attrgetter, itemgetter

from ....errors import CorruptArchiveError, GamepakError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: `typing` costs milliseconds at start-up
    from collections.abc import Callable, Sequence

    from ....core.source import Source

SIGNATURE = 0xA84C7F73
VERSION = 3
HEADER = struct.Struct("<III")  # signature, version, string count
ENTRY = struct.Struct("<III")  # hash, offset, length
NUL = b"\0\0"
EXTENSION = ".rfglocatext"
# Far above any game file (the largest are ~1 MB): refuse to read more into memory.
MAX_FILE = 256 << 20
U32_MAX = 0xFFFFFFFF
# How many times the file's size its strings may add up to when entries share bytes (the
# game's files share none).
MAX_SHARING = 4


def identifier_hash(identifier: str) -> int:
    """The hash the game looks an identifier up by: CRC-32 of each character's low byte (of
    its UTF-16 code unit), a low byte in `A`-`Z` lowered (as RFGM's HashVolitionCRCAlt does:
    U+0641 counts as `a`)."""
    crc32 = _crc32 or _load_crc32()
    if identifier.isascii():
        return crc32(identifier.encode("ascii").lower())
    # bytes.lower() lowers ASCII only, as the game does; [0::2] keeps each code unit's low byte.
    return crc32(identifier.encode("utf-16-le", "surrogatepass")[0::2].lower())


# zlib's `crc32`, imported when an identifier is first hashed: an import of a translation keyed
# by hashes only (an untouched export) never loads zlib (0.6 M instructions).
_crc32: Callable[[bytes], int] | None = None


def _load_crc32() -> Callable[[bytes], int]:
    global _crc32
    from zlib import crc32

    _crc32 = crc32
    return crc32


def hash_key(value: int) -> str:
    """How an entry without an identifier is named in translation files: `#5a3c91f0`."""
    return f"#{value:08x}"


def encode_text(text: str, where: str) -> bytes:
    """A string's stored bytes, with its NUL; `where` names it in errors."""
    if "\0" in text:
        raise GamepakError(f"{where}: holds a NUL character, which would cut the string short")
    try:
        return text.encode("utf-16-le") + NUL
    except UnicodeEncodeError as exc:
        raise GamepakError(
            f"{where}: character U+{ord(text[exc.start]):04X} at position {exc.start} is a lone surrogate, "
            "not storable as UTF-16"
        ) from None


class LocaEntry:
    """One string: its hash, its stored bytes (UTF-16LE with the NUL), its identifier when
    known (None: only the hash is), and where it was stored in the file read (-1: a new entry;
    a rebuild keeps that order)."""

    __slots__ = ("hash", "identifier", "raw", "stored_at")

    def __init__(self, hash: int, raw: bytes, identifier: str | None = None, stored_at: int = -1) -> None:
        self.hash = hash
        self.raw = raw
        self.identifier = identifier
        self.stored_at = stored_at

    def __repr__(self) -> str:
        return f"<LocaEntry {self.key} {self.text!r}>"

    @property
    def text(self) -> str:
        """The string, without its NUL."""
        return self.raw[:-2].decode("utf-16-le")

    @property
    def key(self) -> str:
        """The identifier, or `#hash` when it is unknown."""
        return self.identifier if self.identifier is not None else hash_key(self.hash)


def texts_of(entries: Sequence[LocaEntry]) -> list[str]:
    """The entries' strings: one UTF-16 decode of them all (7,000 decodes take 5x longer),
    split at their NULs; entry by entry when a string holds a NUL of its own."""
    whole = b"".join(entry.raw for entry in entries).decode("utf-16-le")
    texts = whole.split("\0")
    if len(texts) == len(entries) + 1:
        return texts[:-1]
    return [entry.text for entry in entries]


def describe(index: int, hash_value: int) -> str:
    """How problems name an entry."""
    return f"entry {index} ({hash_key(hash_value)})"


class Finding:
    """One problem `scan` found: an "error" (the file cannot be read as it is) or a "warning"
    (bytes no entry holds, strings sharing bytes, a NUL inside a string), and where."""

    __slots__ = ("message", "offset", "severity")

    def __init__(self, message: str, severity: str = "error", offset: int | None = None) -> None:
        self.message = message
        self.severity = severity
        self.offset = offset

    def __repr__(self) -> str:
        return f"<Finding {self.severity}: {self.message}>"


def _entry_words(data: bytes, table_end: int) -> memoryview | None:
    """The entry table as a flat view of u32 (hash, offset, length, hash, ...), over `data`
    itself: a list of tuples took 160 bytes an entry. None on a big-endian machine or where
    the native unsigned int is not 4 bytes (the entry-by-entry reader reads those)."""
    if sys.byteorder != "little" or struct.calcsize("I") != 4:
        return None
    return memoryview(data)[HEADER.size : table_end].cast("I")


def _game_layout(data: bytes, words: memoryview, table_end: int) -> list[LocaEntry] | None:
    """The entries when the file has the game's layout and nothing wrong (`_game_spans`), else
    None (the file goes through the entry-by-entry checks). `words`: the entry table
    (`_entry_words`)."""
    spans = _game_spans(data, words, table_end)
    return None if spans is None else _entries_of(data, spans)


# (hashes, offsets, ends) of a file's entries, in entry order.
Spans = tuple[list[int], list[int], list[int]]


def _game_spans(data: bytes, words: memoryview, table_end: int) -> Spans | None:
    """(hashes, offsets, ends) of the entries when the file has the game's layout and nothing
    wrong, checked in bulk (the strings tile the rest of the file in entry order, one UTF-16
    decode finds one NUL per string, at each end; no hash twice); None sends the file through
    the entry-by-entry checks. `words`: the entry table (`_entry_words`).

    Checked and cut by C loops over whole columns (slices, `accumulate`, one comparison of two
    u32 arrays, one `itemgetter` over the strings' last bytes): a Python step per string was
    most of reading the game's 7,298, and a C iterator chain per string was still 9 M
    instructions for their last code units alone."""
    count = len(words) // 3
    if not count:
        return ([], [], []) if table_end == len(data) else None
    lengths = words[2::3].tolist()
    # Lengths even (UTF-16), told from their low bytes, and none 0 (a string of 0 bytes lacks
    # its NUL, and would pass for the NUL before it).
    if data[HEADER.size + 8 : table_end : ENTRY.size].translate(None, _EVEN_BYTES) or min(lengths) == 0:
        return None
    ends = list(accumulate(lengths, initial=table_end))
    # (the ends grow: the last within the file, every one fits a u32)
    if ends[-1] != len(data) or words[1::3] != array("I", ends[:-1]):
        return None
    del ends[0]
    hashes = words[0::3].tolist()
    if len(set(hashes)) != count:
        return None
    try:
        nuls = codecs.utf_16_le_decode(memoryview(data)[table_end:], "strict", True)[0].count("\0")
    except UnicodeDecodeError:
        return None
    if nuls != count:
        return None
    # Each string's last two bytes are 0: the bytes before each end, picked at the ends of
    # copies shifted by one and by two bytes.
    if any(_bytes_at(b"\0" + data, ends)) or any(_bytes_at(b"\0\0" + data, ends)):
        return None
    return hashes, [table_end, *ends[:-1]], ends


def _bytes_at(data: bytes, places: list[int]) -> tuple[int, ...]:
    """The bytes of `data` at `places` (at least one), picked in one C loop."""
    picked = itemgetter(*places)(data)
    return picked if len(places) > 1 else (picked,)


_EVEN_BYTES = bytes(range(0, 256, 2))


def _entries_of(data: bytes, spans: Spans) -> list[LocaEntry]:
    """The entries `_game_spans` found, each holding its bytes."""
    hashes, offsets, ends = spans
    raws = map(data.__getitem__, map(slice, offsets, ends))
    return list(map(LocaEntry, hashes, raws, repeat(None), offsets))


def _quick_spans(data: bytes) -> Spans | None:
    """`_game_spans` of a file whose header is good (signature, version, a count within the
    budget and the file); None when anything needs `scan`'s closer look (and its messages)."""
    if len(data) < HEADER.size:
        return None
    signature, version, count = HEADER.unpack_from(data, 0)
    if signature != SIGNATURE or version != VERSION:
        return None
    from ....core.content_limits import current

    budget = current().locatext_entry_budget()
    table_end = HEADER.size + ENTRY.size * count
    if (budget is not None and count > budget) or table_end > len(data):
        return None
    words = _entry_words(data, table_end)
    return _game_spans(data, words, table_end) if words is not None else None


def scan(data: bytes, where: str = EXTENSION) -> tuple[list[LocaEntry], list[Finding]]:
    """The entries of a file and every problem found in it (errors and warnings). Entries are
    returned only when there is no error."""
    problems: list[Finding] = []

    def error(message: str, offset: int | None = None) -> None:
        problems.append(Finding(message, "error", offset))

    size = len(data)
    if size < HEADER.size:
        error(f"{size} bytes: too short for the {HEADER.size}-byte header", 0)
        return [], problems
    signature, version, count = HEADER.unpack_from(data, 0)
    if signature != SIGNATURE:
        error(f"signature 0x{signature:08X} is not an .rfglocatext's (0x{SIGNATURE:08X})", 0)
        return [], problems
    if version != VERSION:
        error(f"version {version}: only version {VERSION} is known", 4)
        return [], problems
    from ....core.content_limits import ALLOW_LARGE_ADVICE, current

    budget = current().locatext_entry_budget()
    if budget is not None and count > budget:
        # Checked before the table is unpacked: 2,000,000 empty strings fit in 24 MB.
        error(f"string count {count}, more than the {budget} read; {ALLOW_LARGE_ADVICE}", 8)
        return [], problems
    table_end = HEADER.size + ENTRY.size * count
    if table_end > size:
        error(
            f"string count {count} needs {table_end} bytes of header and entries; the file holds {size}",
            8,
        )
        return [], problems
    words = _entry_words(data, table_end)
    quick = _game_layout(data, words, table_end) if words is not None else None
    if quick is not None:
        return quick, problems
    del words
    fields = list(struct.iter_unpack("<III", data[HEADER.size : table_end]))
    # Strings may share bytes (a warning), but each entry holds a copy of its own: thousands of
    # entries naming one long string would copy it thousands of times. Checked before copying.
    shared = sum(length for _, offset, length in fields if table_end <= offset and offset + length <= size)
    if shared > MAX_SHARING * size:
        error(
            f"the strings add up to {shared} bytes, more than four times the file's {size}: "
            "entries name the same bytes over and over",
            HEADER.size,
        )
        return [], problems
    entries: list[LocaEntry] = []
    first_of_hash: dict[int, int] = {}
    spans: list[tuple[int, int, int]] = []
    for index, (hash_value, offset, length) in enumerate(fields):
        field_at = HEADER.size + ENTRY.size * index
        name = describe(index, hash_value)
        earlier = first_of_hash.setdefault(hash_value, index)
        if earlier != index:
            error(f"{name}: its hash is also entry {earlier}'s: the game would find only one", field_at)
        if offset < table_end:
            error(
                f"{name}: its string's offset {offset} lies inside the header or entry table (ends at {table_end})",
                field_at,
            )
            continue
        if offset + length > size:
            error(
                f"{name}: its string at offset {offset}, {length} bytes, runs past the end of the file ({size} bytes)",
                field_at,
            )
            continue
        if length % 2:
            error(f"{name}: its string's length {length} is odd: UTF-16 strings take 2 bytes a character", field_at)
            continue
        raw = data[offset : offset + length]
        if length < 2 or raw[-2:] != NUL:
            error(f"{name}: its string at offset {offset} does not end with a 2-byte NUL", offset)
            continue
        try:
            text = raw[:-2].decode("utf-16-le")
        except UnicodeDecodeError as exc:
            error(
                f"{name}: its string at offset {offset} is not UTF-16 (byte {exc.start}: {exc.reason})",
                offset + exc.start,
            )
            continue
        if "\0" in text:
            problems.append(
                Finding(
                    f"{name}: its string holds a NUL at character {text.index(chr(0))}: the game stops there",
                    "warning",
                    offset,
                )
            )
        entries.append(LocaEntry(hash_value, raw, None, offset))
        spans.append((offset, offset + length, index))
    spans.sort()
    position = table_end
    for start, end, index in spans:
        if start < position:
            problems.append(Finding(f"entry {index}: its string overlaps another entry's", "warning", start))
        elif start > position:
            problems.append(
                Finding(
                    f"{start - position} bytes before entry {index}'s string that no entry holds", "warning", position
                )
            )
        position = max(position, end)
    if not any(problem.severity == "error" for problem in problems) and position < size:
        problems.append(
            Finding(f"{size - position} bytes after the last string that no entry holds", "warning", position)
        )
    if any(problem.severity == "error" for problem in problems):
        return [], problems
    return entries, problems


def build(entries: list[LocaEntry]) -> bytes:
    """A file holding `entries` in order, their strings back to back after the table in the
    order they were stored (new entries' last)."""
    table_end = HEADER.size + ENTRY.size * len(entries)
    stored = sorted(
        range(len(entries)), key=lambda index: (entries[index].stored_at < 0, entries[index].stored_at, index)
    )
    offsets = [0] * len(entries)
    position = table_end
    for index in stored:
        offsets[index] = position
        position += len(entries[index].raw)
    if position > U32_MAX:
        from ....errors import FormatLimitError  # made on first use: imported where raised

        raise FormatLimitError(f"the strings would end at byte {position}: past the u32 offsets' reach")
    seen: dict[int, int] = {}
    for index, entry in enumerate(entries):
        earlier = seen.setdefault(entry.hash, index)
        if earlier != index:
            raise GamepakError(f"{describe(index, entry.hash)}: its hash is also entry {earlier}'s")
    parts = [HEADER.pack(SIGNATURE, VERSION, len(entries))]
    parts.extend(ENTRY.pack(entry.hash, offsets[index], len(entry.raw)) for index, entry in enumerate(entries))
    parts.extend(entries[index].raw for index in stored)
    return b"".join(parts)


_RAW, _STORED_AT, _HASH = attrgetter("raw"), attrgetter("stored_at"), attrgetter("hash")


class LocaText:
    """The entries of one `.rfglocatext`, editable, written back byte for byte when unchanged.

    A file read in the game's layout makes its `LocaEntry` objects when `entries` is first
    asked for: an import that changes nothing (an untouched translation) needs only the hashes
    (`index_of`), and making 7,298 entries was a fifth of it."""

    def __init__(self, entries: list[LocaEntry] | None = None, original: bytes | None = None) -> None:
        self._spans: Spans | None = None  # the entries not made yet (`_read_spans`)
        self.entries = entries if entries is not None else []
        self.original = original
        self._original_state = self._state() if original is not None else None
        self._as_stored = False  # the entries were read from `original`, in its order

    @property
    def entries(self) -> list[LocaEntry]:
        if self._spans is not None:
            assert self.original is not None
            self._entries = _entries_of(self.original, self._spans)
            self._spans = None
        return self._entries

    @entries.setter
    def entries(self, entries: list[LocaEntry]) -> None:
        self._entries = entries
        self._spans = None

    @classmethod
    def _read(cls, entries: list[LocaEntry], data: bytes) -> LocaText:
        """The entries `scan` read from `data`: their state at reading is `data`'s entry table,
        compared with it when written (`to_bytes`) rather than copied (a tuple and two numbers
        per entry: a third of the memory of reading a file)."""
        table = cls()
        table.entries = entries
        table.original = data
        table._as_stored = True
        return table

    @classmethod
    def _read_spans(cls, spans: Spans, data: bytes) -> LocaText:
        """`_read` of a file in the game's layout, its entries made when first asked for."""
        table = cls._read([], data)
        table._spans = spans
        return table

    @classmethod
    def parse(cls, data: bytes, where: str = EXTENSION) -> LocaText:
        """The entries of `data`; the first error found is raised (CorruptArchiveError naming
        `where`, the offset and the entry)."""
        spans = _quick_spans(data)
        if spans is not None:
            return cls._read_spans(spans, data)
        entries, problems = scan(data, where)
        for problem in problems:
            if problem.severity == "error":
                raise CorruptArchiveError(problem.message, path=where, offset=problem.offset)
        return cls._read(entries, data)

    def _state(self) -> list[tuple[int, bytes, int]]:
        return [(entry.hash, entry.raw, entry.stored_at) for entry in self.entries]

    def __len__(self) -> int:
        return len(self._spans[0]) if self._spans is not None else len(self.entries)

    def hashes(self) -> list[int]:
        """Each entry's hash, in order."""
        if self._spans is not None:
            return self._spans[0]
        return [entry.hash for entry in self.entries]

    def index_of(self) -> dict[int, int]:
        """Each hash's entry index."""
        if self._spans is not None:
            return dict(zip(self._spans[0], range(len(self._spans[0]))))
        return {entry.hash: index for index, entry in enumerate(self.entries)}

    def name(self, identifiers: dict[int, str]) -> int:
        """Give the entries whose hash `identifiers` holds their identifier; returns how many
        entries have one now."""
        for entry in self.entries:
            found = identifiers.get(entry.hash)
            if found is not None:
                entry.identifier = found
        return sum(entry.identifier is not None for entry in self.entries)

    def to_bytes(self) -> bytes:
        """The file's bytes: the original when no entry changed, else rebuilt."""
        if self._spans is not None and self.original is not None:
            return self.original  # (no entry was made: none can have changed)
        if self.original is not None and self._unchanged(self.original):
            return self.original
        return build(self.entries)

    def _unchanged(self, original: bytes) -> bool:
        """Whether every entry holds what it held when read (hash, bytes, place), in order:
        the entry table compared as one array, the strings as one run when they tile the
        file in entry order (the game's layout), else one by one."""
        if not self._as_stored:
            return self._state() == self._original_state
        entries = self.entries
        count = HEADER.unpack_from(original, 0)[2]
        if count != len(entries):
            return False
        if not entries:
            return True
        table_end = HEADER.size + ENTRY.size * count
        words = _entry_words(original, table_end)
        if words is None:
            return self._unchanged_one_by_one(original, count)
        raws = list(map(_RAW, entries))
        offsets = words[1::3].tolist()
        if (
            offsets != list(map(_STORED_AT, entries))
            or words[2::3].tolist() != list(map(len, raws))
            or words[0::3].tolist() != list(map(_HASH, entries))
        ):
            return False
        if offsets == list(accumulate(words[2::3], initial=table_end))[:-1]:
            end = offsets[-1] + words[-1]  # (the tables are equal: the raws have these lengths)
            return b"".join(raws) == memoryview(original)[table_end:end]
        return self._unchanged_one_by_one(original, count)

    def _unchanged_one_by_one(self, original: bytes, count: int) -> bool:
        view = memoryview(original)
        table = ENTRY.iter_unpack(view[HEADER.size : HEADER.size + ENTRY.size * count])
        for entry, (hash_value, offset, length) in zip(self.entries, table):
            if entry.hash != hash_value or entry.stored_at != offset or entry.raw != view[offset : offset + length]:
                return False
        return True


def sniff(source: Source) -> float:
    """1.0 for the .rfglocatext signature with version 3."""
    head = source.pread(HEADER.size, 0)
    if len(head) < 8:
        return 0.0
    signature, version = struct.unpack_from("<II", head, 0)
    if signature != SIGNATURE:
        return 0.0
    return 1.0 if version == VERSION else 0.5


def is_locatext(data: bytes) -> bool:
    """Whether `data` starts with the .rfglocatext signature."""
    return len(data) >= 4 and struct.unpack_from("<I", data, 0)[0] == SIGNATURE


# Language codes in the game's file names (`locatexts_ar_eg.rfglocatext` -> `ar_eg`).
def language_of(name: str) -> str | None:
    """The language code a localization file's name carries, or None."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1].lower()
    if not base.endswith(EXTENSION):
        return None
    stem = base[: -len(EXTENSION)]
    prefix, _, code = stem.partition("_")
    if not prefix.startswith("locatext") or not code:
        return None
    return code
