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
- `translate`: `gamepak text export/import` for these files (JSON, CSV, PO, RFGM's XML).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import Any, ClassVar

from ....core.archive import Archive, Entry, Problem
from ....core.source import Source
from ....core.writer import ArchiveWriter, Output, PendingMember
from ....errors import CorruptArchiveError, FormatLimitError, GamepakError

SIGNATURE = 0xA84C7F73
VERSION = 3
HEADER = struct.Struct("<III")  # signature, version, string count
ENTRY = struct.Struct("<III")  # hash, offset, length
NUL = b"\0\0"
EXTENSION = ".rfglocatext"
# Far above any game file (the largest are ~1 MB): refuse to read more into memory.
MAX_FILE = 256 << 20
U32_MAX = 0xFFFFFFFF


def identifier_hash(identifier: str) -> int:
    """The hash the game looks an identifier up by: CRC-32 of each character's low byte (of
    its UTF-16 code unit), a low byte in `A`-`Z` lowered (as RFGM's HashVolitionCRCAlt does:
    U+0641 counts as `a`)."""
    if identifier.isascii():
        return zlib.crc32(identifier.encode("ascii").lower())
    # bytes.lower() lowers ASCII only, as the game does; [0::2] keeps each code unit's low byte.
    return zlib.crc32(identifier.encode("utf-16-le", "surrogatepass")[0::2].lower())


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


@dataclass(slots=True)
class LocaEntry:
    """One string: its hash, its stored bytes (UTF-16LE with the NUL), and its identifier when
    known (None: only the hash is)."""

    hash: int
    raw: bytes
    identifier: str | None = None
    # Where the string was stored in the file read (-1: a new entry): a rebuild keeps that order.
    stored_at: int = -1

    @property
    def text(self) -> str:
        """The string, without its NUL."""
        return self.raw[:-2].decode("utf-16-le")

    @property
    def key(self) -> str:
        """The identifier, or `#hash` when it is unknown."""
        return self.identifier if self.identifier is not None else hash_key(self.hash)


def describe(index: int, hash_value: int) -> str:
    """How problems name an entry."""
    return f"entry {index} ({hash_key(hash_value)})"


def scan(data: bytes, where: str = EXTENSION) -> tuple[list[LocaEntry], list[Problem]]:
    """The entries of a file and every problem found in it (errors and warnings). Entries are
    returned only when there is no error."""
    problems: list[Problem] = []

    def error(message: str, offset: int | None = None) -> None:
        problems.append(Problem(message, offset=offset))

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
    table_end = HEADER.size + ENTRY.size * count
    if table_end > size:
        error(
            f"string count {count} needs {table_end} bytes of header and entries; the file holds {size}",
            8,
        )
        return [], problems
    entries: list[LocaEntry] = []
    first_of_hash: dict[int, int] = {}
    spans: list[tuple[int, int, int]] = []
    for index, (hash_value, offset, length) in enumerate(struct.iter_unpack("<III", data[HEADER.size : table_end])):
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
                Problem(
                    f"{name}: its string holds a NUL at character {text.index(chr(0))}: the game stops there",
                    severity="warning",
                    offset=offset,
                )
            )
        entries.append(LocaEntry(hash_value, raw, None, offset))
        spans.append((offset, offset + length, index))
    spans.sort()
    position = table_end
    for start, end, index in spans:
        if start < position:
            problems.append(
                Problem(f"entry {index}: its string overlaps another entry's", severity="warning", offset=start)
            )
        elif start > position:
            problems.append(
                Problem(
                    f"{start - position} bytes before entry {index}'s string that no entry holds",
                    severity="warning",
                    offset=position,
                )
            )
        position = max(position, end)
    if not any(problem.severity == "error" for problem in problems) and position < size:
        problems.append(
            Problem(
                f"{size - position} bytes after the last string that no entry holds",
                severity="warning",
                offset=position,
            )
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


class LocaText:
    """The entries of one `.rfglocatext`, editable, written back byte for byte when unchanged."""

    def __init__(self, entries: list[LocaEntry] | None = None, original: bytes | None = None) -> None:
        self.entries: list[LocaEntry] = entries if entries is not None else []
        self.original = original
        self._original_state = self._state() if original is not None else None

    @classmethod
    def parse(cls, data: bytes, where: str = EXTENSION) -> LocaText:
        """The entries of `data`; the first error found is raised (CorruptArchiveError naming
        `where`, the offset and the entry)."""
        entries, problems = scan(data, where)
        for problem in problems:
            if problem.severity == "error":
                raise CorruptArchiveError(problem.message, path=where, offset=problem.offset)
        return cls(entries, data)

    def _state(self) -> list[tuple[int, bytes, int]]:
        return [(entry.hash, entry.raw, entry.stored_at) for entry in self.entries]

    def __len__(self) -> int:
        return len(self.entries)

    def index_of(self) -> dict[int, int]:
        """Each hash's entry index."""
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
        if self.original is not None and self._state() == self._original_state:
            return self.original
        return build(self.entries)


# -- the registry's view: a table with no members ----------------------------------------------
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


class Reader(Archive):
    """An `.rfglocatext` opened for `info` and `verify`: a string table with no members."""

    format_name = "rfglocatext"

    def _load(self) -> None:
        size = self._source.size
        if size > MAX_FILE:
            raise self.corrupt(f"{size} bytes is too large for an .rfglocatext", 0)
        data = self._source.read_exact(size, 0, EXTENSION)
        self.data = data
        self.entries, self.problems = scan(data, self.filename)
        errors = [problem for problem in self.problems if problem.severity == "error"]
        # Only the header's errors stop opening: entry errors are listed by `verify`.
        if errors and (errors[0].offset or 0) < HEADER.size:
            raise self.corrupt(errors[0].message, errors[0].offset)
        self._names = []
        self._entries = []

    def header_fields(self) -> dict[str, Any]:
        _, version, count = HEADER.unpack_from(self.data, 0)
        lengths = [len(entry.raw) for entry in self.entries]
        return {
            "version": version,
            "string_count": count,
            "string_bytes": sum(lengths),
            "empty_strings": lengths.count(2),
            "language": language_of(self.filename),
        }

    def _check(self) -> list[Problem]:
        return list(self.problems)

    def _member_data(self, entries: list[Entry]) -> Any:
        return iter(())


class Writer(ArchiveWriter):
    """Writes an empty `.rfglocatext` (no strings); strings come in with `gamepak text import`."""

    format_name = "rfglocatext"
    option_defaults: ClassVar[dict[str, Any]] = {}

    def _check_name(self, name: str) -> None:
        raise FormatLimitError(
            f"an .rfglocatext holds strings by hash, not members ({name!r}); use `gamepak text import`"
        )

    def _write(self, out: Output, members: list[PendingMember]) -> None:
        out.write(build([]))


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
