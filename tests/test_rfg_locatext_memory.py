"""RFG strings within a small multiple of their file (issue 41): the PO export made a block of
entries at a time, the entry table read into arrays, an unchanged file told by comparing its
entries with the file's own table rather than with a copy of it."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_rfg_locatext import handmade

from gamepak.errors import GamepakError
from gamepak.formats.rfg.locatext import LocaEntry, LocaText, build, encode_text, scan
from gamepak.formats.rfg.locatext import po_write as po_module
from gamepak.ops.locatext import export_locatext

from streaming_helpers import peak_while

SIGNATURE = 0xA84C7F73


def numbered_strings(count: int) -> bytes:
    """An .rfglocatext of `count` short strings, as the memory benchmark's largest one."""
    return handmade([(number * 7919 + 1, f"string number {number}") for number in range(count)])


MEMORY_GOAL = 8  # peak Python allocations per byte of the file, its own bytes included


def test_po_export_of_many_strings_stays_within_a_small_multiple_of_the_file(tmp_path: Path) -> None:
    # 50,000 strings (the ratio does not depend on the count; the budget lets 200,000 through):
    # 19 times the file's bytes when every entry's texts and lines were held at once.
    path = tmp_path / "locatexts_xx_yy.rfglocatext"
    path.write_bytes(numbered_strings(50_000))
    out = tmp_path / "strings.po"
    peak = peak_while(lambda: export_locatext(path, out, names=[]))
    assert peak < MEMORY_GOAL * path.stat().st_size
    assert out.read_bytes().count(b"\nmsgctxt ") == 50_000


@pytest.mark.parametrize("sources", [False, True])
def test_po_made_in_blocks_is_the_po_made_at_once(monkeypatch: pytest.MonkeyPatch, sources: bool) -> None:
    table = LocaText.parse(handmade([(n + 1, t) for n, t in enumerate(["a", 'b"\\', "c\nd", "", "\0x", "é"])]))
    table.entries[2].identifier = "named\tone"
    reference = {entry.hash: entry.text.upper() for entry in table.entries[:3]} if sources else None
    at_once = po_module.dump_po(table.entries, reference, "t")
    monkeypatch.setattr(po_module, "_PO_BLOCK", 2)
    assert po_module.dump_po(table.entries, reference, "t") == at_once
    assert at_once.count(b"msgctxt") == 6


def test_the_entry_table_is_read_the_same_in_bulk_and_entry_by_entry() -> None:
    data = numbered_strings(500)
    entries, problems = scan(data)
    assert not problems and len(entries) == 500
    position = 12 + 12 * 500
    for number, entry in enumerate(entries):
        hash_value, offset, length = struct.unpack_from("<III", data, 12 + 12 * number)
        assert (entry.hash, entry.stored_at, entry.raw) == (hash_value, offset, data[offset : offset + length])
        assert offset == position
        position += length


_EDITS = st.lists(
    st.tuples(st.sampled_from(["text", "same text", "hash", "remove", "add", "swap"]), st.integers(0, 5)), max_size=3
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(max_size=4).filter(lambda t: "\0" not in t), min_size=1, max_size=6, unique=True), _EDITS)
def test_a_file_is_written_back_as_it_was_exactly_when_no_entry_changed(texts: list[str], edits: list) -> None:
    data = handmade([(number + 1, text) for number, text in enumerate(texts)])
    table = LocaText.parse(data)
    before = [(entry.hash, entry.raw, entry.stored_at) for entry in table.entries]
    for what, position in edits:
        entries = table.entries
        index = position % len(entries) if entries else 0
        if what == "text" and entries:
            entries[index].raw = encode_text(entries[index].text + "!", "t")
        elif what == "same text" and entries:
            entries[index].raw = bytes(entries[index].raw)  # equal bytes, another object
        elif what == "hash" and entries:
            entries[index].hash += 1000
        elif what == "remove" and entries:
            del entries[index]
        elif what == "add":
            entries.append(LocaEntry(5000 + len(entries), encode_text("new", "t")))
        elif what == "swap" and len(entries) > 1:
            entries[0], entries[-1] = entries[-1], entries[0]
    after = [(entry.hash, entry.raw, entry.stored_at) for entry in table.entries]
    if after == before:
        assert table.to_bytes() is data
        return
    try:
        expected = build(table.entries)
    except GamepakError:  # (an edit gave two entries one hash)
        with pytest.raises(GamepakError):
            table.to_bytes()
        return
    assert table.to_bytes() == expected != data
