"""`core.lazy.PackedStrings`: many strings as one UTF-8 blob and an end offset each, read back
equal (any str, lone surrogates included) at a byte a character and 4 an item."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamepak.core.lazy import PackedStrings


def packed(strings: list[str]) -> PackedStrings:
    result = PackedStrings()
    for text in strings:
        result.append(text)
    return result


@settings(max_examples=150)
@given(st.lists(st.text(alphabet=st.characters(codec=None), max_size=12), max_size=20))
def test_packed_strings_read_back_as_the_list(strings: list[str]) -> None:
    names = packed(strings)
    assert len(names) == len(strings)
    assert list(names) == strings == [names[index] for index in range(len(strings))]
    assert [names[-index] for index in range(1, len(strings) + 1)] == strings[::-1]
    assert names[1:-1] == strings[1:-1] and names[::2] == strings[::2]
    # a Sequence: `in` and index as a list's
    for text in strings:
        assert text in names and names.index(text) == strings.index(text)


def test_hand_made_strings_and_their_bytes() -> None:
    names = packed(["skin0_0.png", "", "é", "\udcff", "a/b"])
    # 11 + 0 + 2 + 3 (the surrogate as UTF-8 would spell it) + 3 bytes, one end each
    assert names._blob == b"skin0_0.png\xc3\xa9\xed\xb3\xbfa/b"
    assert list(names._ends) == [11, 11, 13, 16, 19]
    assert names[3] == "\udcff" and names[1] == ""
    for index in (5, -6, sys.maxsize):
        with pytest.raises(IndexError):
            names[index]
    assert repr(names) == "<5 strings packed in 19 bytes>"


def test_a_million_names_cost_a_few_bytes_beyond_their_characters() -> None:
    names = packed([f"skin0_{number}.png" for number in range(100_000)])
    characters = sum(len(f"skin0_{number}.png") for number in range(100_000))
    held = sys.getsizeof(names._blob) + sys.getsizeof(names._ends)
    assert held < characters + 5 * len(names), (held, characters)  # a list of str: 8 + 65 each
    assert names[99_999] == "skin0_99999.png"


def test_the_ends_widen_past_4_gib() -> None:
    names = PackedStrings()
    names.append("a")
    names._ends.append(0xFFFFFFFF)  # as if the blob had reached 4 GiB
    names._blob.extend(b"x")  # the next append's end passes 32 bits: no allocation of 4 GiB
    names._blob = _Huge(names._blob)
    names.append("b")
    assert names._ends.typecode == "q" and names._ends[-1] == 0x100000000 + 2


class _Huge(bytearray):
    """A bytearray that says it is 4 GiB longer than it is."""

    def __len__(self) -> int:
        return super().__len__() + 0xFFFFFFFF

    def __iadd__(self, other: object) -> _Huge:  # type: ignore[override]
        self.extend(other)  # type: ignore[arg-type]
        return self


@settings(max_examples=100)
@given(st.lists(st.lists(st.text(alphabet=st.characters(codec=None), max_size=6), max_size=5), max_size=5))
def test_strings_added_in_batches_read_back_as_added_one_by_one(batches: list[list[str]]) -> None:
    """`extend` (joined and encoded at once; ASCII or not) keeps the same blob and ends as
    `append` one at a time."""
    together = PackedStrings()
    for batch in batches:
        together.extend(batch)
    alone = packed([text for batch in batches for text in batch])
    assert list(together) == list(alone) and together._blob == alone._blob
    assert list(together._ends) == list(alone._ends)
