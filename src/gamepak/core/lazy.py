"""A read-only list whose items are made when read: for readers of files holding a million tiny
things (sprite frames, model skins, exported file names), where one Python object per thing
would cost many times the file."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Container, Iterator, Sequence
from itertools import accumulate, islice
from typing import TypeVar, overload

Item = TypeVar("Item")


class Lazy(Sequence[Item]):
    """A read-only list of `length` items, each made by `make(index)` when asked for and not
    kept: a file's many tiny images listed without holding an object per image."""

    __slots__ = ("_length", "_make")

    def __init__(self, length: int, make: Callable[[int], Item]) -> None:
        self._length = length
        self._make = make

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Item: ...

    @overload
    def __getitem__(self, index: slice) -> list[Item]: ...

    def __getitem__(self, index: int | slice) -> Item | list[Item]:
        if isinstance(index, slice):
            return [self._make(number) for number in range(*index.indices(self._length))]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("index out of range")
        return self._make(index)

    def __iter__(self) -> Iterator[Item]:
        return map(self._make, range(self._length))

    def __eq__(self, other: object) -> bool:
        """Equal to a list, tuple or other sequence holding the same items, as a list is."""
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes, bytearray)):
            return len(self) == len(other) and all(mine == theirs for mine, theirs in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # unhashable, as a list is

    def __repr__(self) -> str:
        return f"<{self._length} items made when read>"


class NamedLazy(Lazy[Item]):
    """A `Lazy` of named things (a model's skins as images) whose names are read without making
    the things: `names[index]` is `self[index].name`, made from the index alone (an export
    names a million skin files before it makes any skin's pixels)."""

    __slots__ = ("names",)

    def __init__(self, length: int, make: Callable[[int], Item], names: Sequence[str]) -> None:
        super().__init__(length, make)
        self.names = names


class PackedStrings(Sequence[str]):
    """A list of many strings kept as one UTF-8 blob and the offset where each ends: about a
    byte a character and 4 an item, where a list of str objects costs 57 bytes an item and up
    (a million exported file names). Items are decoded when read; any str goes in and comes
    back equal (lone surrogates, as file names decoded with `surrogateescape` hold, included)."""

    __slots__ = ("_blob", "_ends")

    def __init__(self) -> None:
        self._blob = bytearray()
        self._ends = array("I")  # widened to 64 bits once the blob passes 4 GiB

    def append(self, text: str) -> None:
        """Add `text` at the end."""
        blob = self._blob
        blob += text.encode("utf-8", "surrogatepass")
        if len(blob) > 0xFFFFFFFF and self._ends.typecode == "I":
            self._ends = array("q", self._ends)
        self._ends.append(len(blob))

    def extend(self, texts: list[str]) -> None:
        """Add each of `texts` at the end: joined and encoded at once (each one encoded alone
        only to find where it ends, and only when some are not ASCII)."""
        blob = self._blob
        end = len(blob)
        joined = "".join(texts)
        blob += joined.encode("utf-8", "surrogatepass")
        if len(blob) > 0xFFFFFFFF and self._ends.typecode == "I":
            self._ends = array("q", self._ends)
        if joined.isascii():
            sizes: Iterator[int] = map(len, texts)
        else:
            sizes = (len(text.encode("utf-8", "surrogatepass")) for text in texts)
        # `initial` starts the sums at the last end, and is no end itself.
        self._ends.extend(islice(accumulate(sizes, initial=end), 1, None))

    def __len__(self) -> int:
        return len(self._ends)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[number] for number in range(*index.indices(len(self)))]
        ends = self._ends
        if index < 0:
            index += len(ends)
        if not 0 <= index < len(ends):
            raise IndexError("index out of range")
        start = ends[index - 1] if index else 0
        return self._blob[start : ends[index]].decode("utf-8", "surrogatepass")

    def __iter__(self) -> Iterator[str]:
        blob = self._blob
        start = 0
        for end in self._ends:
            yield blob[start:end].decode("utf-8", "surrogatepass")
            start = end

    def lookup(self) -> PackedIndex:
        """A look-up of these strings for `in` (8 bytes a string, where a set of them costs
        ~150); strings added afterwards are not in it."""
        return PackedIndex(self)

    def __repr__(self) -> str:
        return f"<{len(self)} strings packed in {len(self._blob)} bytes>"


class PackedIndex(Container[str]):
    """`in` over a `PackedStrings`: 32 bits of each string's hash and its position, sorted in
    one array of 64-bit items; a string found by its hash is compared itself, so two strings
    sharing those bits are still told apart."""

    __slots__ = ("_keys", "_strings")

    def __init__(self, strings: PackedStrings) -> None:
        if len(strings) > 0xFFFFFFFF:
            raise ValueError("more than 2**32 strings")
        self._strings = strings
        self._keys = array("Q", sorted(((hash(text) & 0xFFFFFFFF) << 32) | index for index, text in enumerate(strings)))

    def __contains__(self, text: object) -> bool:
        if not isinstance(text, str):
            return False
        from bisect import bisect_left

        keys = self._keys
        hashed = hash(text) & 0xFFFFFFFF
        position = bisect_left(keys, hashed << 32)
        while position < len(keys) and keys[position] >> 32 == hashed:
            if self._strings[keys[position] & 0xFFFFFFFF] == text:
                return True
            position += 1
        return False
