"""Member names as archive directories store them: decoded from bytes (losslessly, whatever
the bytes), encoded back, read lazily from fixed-size records, and the names a writer refuses;
the path components a stored name stands for on disk (`safe_parts`, extraction's rule) and
whether it matches a glob (`member_matches`). `core.archive` re-exports these for the format
modules; `core.names` holds the rules of new names and of Windows paths."""

from __future__ import annotations

import os
import struct
import sys
from itertools import repeat

from ..errors import GamepakError, UnsafePathError

# `typing` and `collections.abc` cost milliseconds at import; annotations are strings here.
# `array` too: a shared library whose start also imports collections.abc (0.8 M instructions
# of every command that reads a pack); the directories of PAKs and JoePacks are read as a
# memoryview instead, and `uint32_array` imports it when called.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from array import array
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from typing import Any

    from .entry import Entry


# The longest file name (in bytes) that Linux, macOS and Windows file systems accept.
NAME_MAX = 255


def member_matches(name: str, pattern: str) -> bool:
    """Whether a member name matches a glob (`extract`'s and `rm`'s patterns); a leading './'
    (common in PAKs) is optional on either side, so 'maps/*' matches './maps/e1m1.bsp'."""
    bare_name, bare_pattern = name.removeprefix("./"), pattern.removeprefix("./")
    if not ("*" in pattern or "?" in pattern or "[" in pattern):
        # A plain name matches only itself (fnmatch's answer), without compiling a regular
        # expression for it (a third of a million instructions per name given).
        return name == pattern or bare_name == bare_pattern
    import fnmatch  # imports `re`: only when patterns are given

    if fnmatch.fnmatchcase(name, pattern):
        return True
    return (bare_name, bare_pattern) != (name, pattern) and fnmatch.fnmatchcase(bare_name, bare_pattern)


def safe_parts(name: str) -> list[str]:
    """The path components a member name stands for, or `UnsafePathError`."""
    if not name:
        raise UnsafePathError(name, "empty name")
    if "\0" in name:
        raise UnsafePathError(name, "NUL byte in name")
    if name[0] in "/\\":
        raise UnsafePathError(name, "absolute path")
    if name[1:2] == ":" and name[0].isascii() and name[0].isalpha():
        raise UnsafePathError(name, "drive letter")
    parts = [part for part in name.replace("\\", "/").split("/") if part not in ("", ".")]
    if ".." in parts:
        raise UnsafePathError(name, "'..' would leave the destination")
    if not parts:
        raise UnsafePathError(name, "name has no file part")
    for part in parts:
        if part.isascii() and len(part) <= NAME_MAX:  # most names: one byte per character
            continue
        try:
            length = len(os.fsencode(part))
        except UnicodeError:
            raise UnsafePathError(name, "the name cannot be encoded for this file system") from None
        if length > NAME_MAX:
            raise UnsafePathError(
                name, f"the path part {part[:24]!r}... is {length} bytes; file systems allow {NAME_MAX}"
            )
    return parts


def check_new_name(
    name: object,
    taken: Iterable[str] = (),
    *,
    flat: bool = False,
    ignore_case: bool = False,
    max_bytes: int = NAME_MAX,
) -> str:
    """The rule every writer of names applies (`add`, `texture add --name`, patch members), so
    nothing is stored that extraction would refuse to take out again: a non-empty string
    without NUL or backslash, that `safe_parts` (extraction's rule) takes: not absolute, no
    drive letter, no '..' part, a file part; no trailing '/'; each part at most `max_bytes`
    bytes on disk (NAME_MAX, the file systems' limit; less where export adds a suffix); no '/'
    at all where names are `flat`; not one of `taken`, nor (`ignore_case`, where the game
    ignores case) the same as one ignoring case. Returns `name`; UnsafePathError says why."""
    if not isinstance(name, str):
        raise UnsafePathError(repr(name), "a name must be text")
    if not name:
        raise UnsafePathError(name, "empty name")
    if "\0" in name:
        raise UnsafePathError(name, "NUL byte in name")
    if "\\" in name:
        raise UnsafePathError(name, "backslash in name (use '/' between folders)")
    parts = safe_parts(name)  # absolute paths, drive letters, '..', names too long to encode
    if flat and "/" in name:
        raise UnsafePathError(name, "a '/' in a name that holds no folders")
    if name.endswith("/"):
        raise UnsafePathError(name, "a trailing '/' names a folder, not a file")
    for part in parts:
        length = len(part) if part.isascii() else len(os.fsencode(part))
        if length > max_bytes:
            raise UnsafePathError(name, f"the path part {part[:24]!r}... is {length} bytes; at most {max_bytes}")
    for other in taken:
        if other == name:
            raise UnsafePathError(name, "the name is taken")
        if ignore_case and other.lower() == name.lower():
            raise UnsafePathError(name, f"differs only in case from {other!r}, and the game ignores case")
    return name


def refuse_name(name: object, format_name: str, flat: bool) -> None:
    """Refuse a name any writer refuses (not a string, empty, NUL, '..' parts, absolute,
    backslash; '/' where the format's names are `flat`): the part of
    `ArchiveWriter.check_name` every format shares, here so an editor can check a name
    without making a writer."""
    if not isinstance(name, str):
        raise GamepakError(f"member name {name!r} is not a string")
    if not name or "\0" in name:
        from ..errors import FormatLimitError  # rarely raised: made on first use

        raise FormatLimitError(f"member name {name!r} is empty or holds a NUL byte")
    reason = unsafe_name_reason(name)
    if reason is not None:
        raise UnsafePathError(name, reason)
    if flat and "/" in name:
        from ..errors import FormatLimitError  # rarely raised: made on first use

        raise FormatLimitError(f"member name {name!r}: {format_name} names hold no folders ('/')")


def unsafe_name_reason(name: str) -> str | None:
    """Why a writer refuses to store `name` (it would leave the folder it is extracted to, or
    means different paths on different systems), or None when the name is fine."""
    if "\\" in name:
        return "backslash in name (use '/' between folders)"
    if name.startswith("/") or (len(name) > 1 and name[1] == ":" and name[0].isascii() and name[0].isalpha()):
        return "absolute path"
    parts = name.split("/")
    if ".." in parts:
        return "'..' would leave the folder it is extracted to"
    # Every part empty or ".": counted, not walked by a generator (a third of this check's cost,
    # paid by every name a writer queues).
    if parts.count("") + parts.count(".") == len(parts):
        return "the name has no file part"
    if name.endswith("/"):
        return "a trailing '/' names a folder, not a file"
    return None


def decode_name(raw: bytes) -> str:
    """A member name from its stored bytes: UTF-8, with undecodable bytes kept losslessly."""
    return raw.decode("utf-8", "surrogateescape")


def encode_name(name: str) -> bytes:
    """The stored bytes of a member name; the exact inverse of `decode_name`."""
    return name.encode("utf-8", "surrogateescape")


def decode_name_fields(raw: bytes, record_size: int, name_start: int, name_size: int) -> list[str]:
    """The names of fixed-size directory records (each name ends at its first NUL or fills its
    field), decoded as `decode_name` does.

    The fastest pure-Python way measured: `struct.iter_unpack` cuts the name fields, and the
    plain `decode()` (strict UTF-8, no error handler to look up) is tried first; only a
    directory with a name that is not valid UTF-8 is decoded again name by name."""
    if not record_size:
        return []
    fields = struct.Struct(f"<{name_start}x{name_size}s{record_size - name_start - name_size}x")
    view = memoryview(raw)[: len(raw) // record_size * record_size]
    try:
        return [field.partition(b"\0")[0].decode() for (field,) in fields.iter_unpack(view)]
    except UnicodeDecodeError:
        return [decode_name(field.partition(b"\0")[0]) for (field,) in fields.iter_unpack(view)]


class NameList:
    """A read-only, list-like sequence of member names that decodes a name only when it is
    asked for: `len()` and indexing cost nothing up front, and iterating, comparing or `in`
    decode the whole directory once. `list(names)` gives a plain list."""

    __slots__ = ("_count", "_decode_all", "_decode_one", "_decoded")

    def __init__(self, count: int, decode_one: Callable[[int], str], decode_all: Callable[[], list[str]]) -> None:
        self._count = count
        self._decode_one = decode_one
        self._decode_all = decode_all
        self._decoded: list[str] | None = None

    def _list(self) -> list[str]:
        if self._decoded is None:
            self._decoded = self._decode_all()
        return self._decoded

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: Any) -> Any:
        if self._decoded is not None or isinstance(index, slice):
            return self._list()[index]
        position = index + self._count if index < 0 else index
        if not 0 <= position < self._count:
            raise IndexError("name index out of range")
        return self._decode_one(position)

    def __iter__(self) -> Iterator[str]:
        return iter(self._list())

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._list())

    def __contains__(self, name: object) -> bool:
        return name in self._list()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, NameList):
            return self._list() == other._list()
        if isinstance(other, (list, tuple)):
            return self._list() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Iterable[str]) -> list[str]:
        return [*self._list(), *other]

    def __radd__(self, other: Iterable[str]) -> list[str]:
        return [*other, *self._list()]

    def index(self, name: str, *bounds: int) -> int:
        """The position of the first `name` (ValueError if absent), as `list.index`."""
        return self._list().index(name, *bounds)

    def count(self, name: str) -> int:
        """How many members are called `name`."""
        return self._list().count(name)

    def __repr__(self) -> str:
        return repr(self._list())


def uint32_array(raw: bytes) -> array[int]:
    """`raw` read as little-endian unsigned 32-bit integers (its length a multiple of 4): one
    field of every fixed-size record is then a strided slice, `fields[k::stride]`, made at C
    speed instead of unpacking each record."""
    from array import array

    fields = array("I" if array("I").itemsize == 4 else "L", raw)
    if sys.byteorder == "big":
        fields.byteswap()
    return fields


def _uint32_view(raw: bytes) -> memoryview | array[int]:
    """`raw` (its length a multiple of 4) as little-endian unsigned 32-bit integers, as
    `uint32_array` reads it, but without a copy and without importing `array` where the machine's
    own order is little-endian (a view of `raw`: for a result used at once, not one kept)."""
    if sys.byteorder == "little":
        view = memoryview(raw).cast("I")
        if view.itemsize == 4:
            return view
    return uint32_array(raw)


class FixedRecordNames:
    """For readers whose directory is fixed-size records, each with a name field (PAK, JoePack):
    the raw directory is kept as one bytes object, the count comes from its length, and names
    are decoded only when asked for (`namelist()` is a `NameList`)."""

    _directory: bytes
    _record_size: int
    _name_start: int
    _name_size: int
    _count: int
    _decoded: list[str] | None

    def _plain_entries(self, offset_at: int, size_at: int) -> list[Entry] | None:
        """The entries of members stored as they are, whose offset and size are little-endian
        uint32 at these byte positions of each record, made without unpacking the records
        (strided slices of the directory as an array: 20,000 entries a fifth faster); None
        when the records or the positions are not 4-byte aligned."""
        from .entry import Entry

        columns = self._position_columns(offset_at, size_at)
        if columns is None:
            return None
        names, offsets, sizes = columns
        return list(map(Entry, names, sizes, offsets, repeat(None), range(self._count)))

    def _position_columns(self, offset_at: int, size_at: int) -> tuple[list[str], Sequence[int], Sequence[int]] | None:
        """(names, offsets, sizes) of every record, the offset and size being little-endian uint32
        at these byte positions of each record: strided views of the directory, no step per
        record; None when the records or the positions are not 4-byte aligned."""
        stride, unaligned = divmod(self._record_size, 4)
        if unaligned or offset_at % 4 or size_at % 4:
            return None
        fields = _uint32_view(self._directory[: self._count * self._record_size])
        return self._names, fields[offset_at // 4 :: stride], fields[size_at // 4 :: stride]

    def _keep_directory(self, raw: bytes, record_size: int, name_start: int, name_size: int) -> None:
        self._directory = raw
        self._record_size = record_size
        self._name_start = name_start
        self._name_size = name_size
        self._count = len(raw) // record_size if record_size else 0
        self._decoded = None

    # `Archive` keeps names in `_names`; here they are made on first use.
    @property
    def _names(self) -> list[str]:
        names = self._decoded
        if names is None:
            names = self._decoded = decode_name_fields(
                self._directory, self._record_size, self._name_start, self._name_size
            )
        return names

    @_names.setter
    def _names(self, value: list[str]) -> None:
        if value:  # the base class's initial empty list is not an answer
            self._decoded = value

    def _name_at(self, index: int) -> str:
        start = index * self._record_size + self._name_start
        return decode_name(self._directory[start : start + self._name_size].partition(b"\0")[0])

    def namelist(self) -> NameList:
        """Member names in archive order (duplicates included), decoded as they are used."""
        return NameList(self._count, self._name_at, lambda: self._names)

    def __len__(self) -> int:
        return self._count
