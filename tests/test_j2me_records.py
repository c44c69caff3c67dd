"""Diamond Rush's tips (`tipst.f`: a count byte, int16 offsets, records of text runs and
icons) export and import; `lang_IGA.f` (a language blob with many unused, empty strings) is
found without --kind. Fixtures are built by hand from the layout in formats/j2me/records.py
(read from the game's own `tipst.f`); the real file, when present under the samples folder
(gameloft/), is read as an extra layer."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.errors import GamepakError
from gamepak.formats.j2me.records import RecordTable, find_records, split_record
from gamepak.formats.j2me.text import StringTable, export_strings, import_strings, read_strings

from conftest import in_process_cli, sample

# An item: ("text", x, y, text, key codes) or ("icon", x, y, frame).
Item = tuple


def text_item(x: int, y: int, text: bytes, keys: bytes = b"") -> bytes:
    """A text run as the game stores it: 0x00, int16 x, int16 y, uint16 length, text, key count, keys."""
    return struct.pack("<BhhH", 0, x, y, len(text)) + text + bytes([len(keys)]) + keys


def icon_item(x: int, y: int, frame: int) -> bytes:
    """An icon: 0x01, int16 x, int16 y, a frame byte of the tips sprite."""
    return struct.pack("<BhhB", 1, x, y, frame)


def record(*items: bytes) -> bytes:
    return bytes([len(items)]) + b"".join(items)


# Records shaped like the game's: text runs with an icon between them, a run whose '@' is a key
# (one key code after the text), a run with a line break, an empty run, and a page of icons only.
RECORDS = [
    record(text_item(50, 80, b"Press"), icon_item(105, 95, 7), text_item(50, 100, b"to move left or right.")),
    record(text_item(13, 25, b"Press @ to go back.", b"\x01"), icon_item(78, 115, 0)),
    record(text_item(0, 23, b"Diamonds give points:\ncollect them all!"), text_item(0, 92, b"")),
    record(icon_item(-3, 4, 2)),
    record(text_item(13, 40, b"It\x92s a trap!")),
]
TEXTS = [
    "Press",
    "to move left or right.",
    "Press @ to go back.",
    "Diamonds give points:\ncollect them all!",
    "",
    "It's a trap!",
]


def tips_bytes(records: list[bytes], from_start: bool = False, end_offset: bool = True) -> bytes:
    """A record table by hand: count byte, int16 offsets (LE), records. The default is the real
    file's: offsets from the first record, then the end offset."""
    header_size = 1 + 2 * (len(records) + end_offset)
    base = header_size if from_start else 0
    offsets, position = [], base
    for body in records:
        offsets.append(position)
        position += len(body)
    if end_offset:
        offsets.append(position)
    return bytes([len(records)]) + struct.pack(f"<{len(offsets)}h", *offsets) + b"".join(records)


@pytest.mark.parametrize("from_start", [False, True])
@pytest.mark.parametrize("end_offset", [False, True])
def test_tips_records_by_hand(from_start: bool, end_offset: bool) -> None:
    data = tips_bytes(RECORDS, from_start, end_offset)
    table = StringTable.parse(data)
    assert table.kind == "records"
    assert table.texts == TEXTS
    assert table.rebuild(table.texts) == data  # unchanged: the same bytes
    layout, records = find_records(data) or (None, [])
    assert layout == RecordTable(from_start, end_offset)
    assert [r.to_bytes() for r in records] == RECORDS
    # A longer translation rewrites that run's length and moves every later offset; the icons,
    # positions and key codes stay as they were.
    changed = table.rebuild(["Appuyez sur", *table.texts[1:]])
    assert changed == tips_bytes(
        [
            record(
                text_item(50, 80, b"Appuyez sur"), icon_item(105, 95, 7), text_item(50, 100, b"to move left or right.")
            ),
            *RECORDS[1:],
        ],
        from_start,
        end_offset,
    )


def test_tips_file_and_tips_member_export_and_import(tmp_path: Path) -> None:
    tips = tmp_path / "tipst.bin"
    tips.write_bytes(tips_bytes(RECORDS))
    code, out, err = in_process_cli("text", "export", str(tips))
    assert code == 0, err
    rows = json.loads(out)
    assert [row["text"] for row in rows] == TEXTS
    rows[5]["text"] = "C'est un piège !"
    rows[2]["text"] = "Appuyez sur @ pour revenir."
    (tmp_path / "fr.json").write_text(json.dumps(rows), "utf-8")
    code, _, err = in_process_cli("text", "import", str(tips), str(tmp_path / "fr.json"), "-o", str(tmp_path / "fr.f"))
    assert code == 0, err
    assert read_strings(tmp_path / "fr.f").texts[5] == "C'est un piège !"
    assert (tmp_path / "fr.f").read_bytes() == tips_bytes(
        [
            RECORDS[0],
            record(text_item(13, 25, b"Appuyez sur @ pour revenir.", b"\x01"), icon_item(78, 115, 0)),
            *RECORDS[2:4],
            record(text_item(13, 40, b"C\x92est un pi\xe8ge !")),
        ]
    )
    # The same records as the one member of a .f table (the game loads every .f as a table).
    packed = tmp_path / "tips.f"
    with gamepak.create(packed, "j2me-table") as writer:
        writer.add("0", tips_bytes(RECORDS))
    exported = export_strings(packed, tmp_path / "tips.po", format="j2me-table")
    assert exported.member == "0" and exported.table.kind == "records"
    done = import_strings(packed, tmp_path / "tips.po", tmp_path / "same.f", format="j2me-table")
    assert done.changed == 0 and (tmp_path / "same.f").read_bytes() == packed.read_bytes()
    assert in_process_cli("text", "export", str(tips), "--kind", "records")[0] == 0


def test_a_code_typed_into_a_tip_is_refused() -> None:
    table = StringTable.parse(tips_bytes(RECORDS))
    with pytest.raises(GamepakError, match=r"string 0: control character 0x01 would be read as a layout code"):
        table.rebuild(["Push\x01", *table.texts[1:]])


def test_a_key_placeholder_added_or_dropped_is_refused() -> None:
    """Each '@' has its key code after the run: a translation that changes their number would
    draw a key the game has no code for (or shift the codes)."""
    table = StringTable.parse(tips_bytes(RECORDS))
    texts = table.texts
    with pytest.raises(GamepakError, match=r"string 2: 0 '@' where the original has 1"):
        table.rebuild([*texts[:2], "Go back.", *texts[3:]])
    with pytest.raises(GamepakError, match=r"string 0: 1 '@' where the original has 0"):
        table.rebuild(["Press @", *texts[1:]])


@pytest.mark.parametrize(
    "data",
    [
        tips_bytes([record(text_item(0, 0, b"Hello"))])[:-1],  # the key count cut off
        tips_bytes([record(text_item(0, 0, b"Hello"))]) + b"\0",  # a byte past the end offset
        tips_bytes([record(text_item(0, 0, b"Hel\x05lo"))]),  # a code inside a run
        tips_bytes([record(text_item(0, 0, b"Hi", b"\x01\x02"))])[:-1],  # key codes cut off
        tips_bytes([record(icon_item(0, 0, 1))]),  # no text at all
        tips_bytes([b"\x01\x02" + bytes(6)]),  # an item type the game does not know
        tips_bytes([record(text_item(0, 0, b"Hi")), record(text_item(0, 0, b"Yo"))])[:3]
        + b"\x20\x00"
        + tips_bytes([record(text_item(0, 0, b"Hi")), record(text_item(0, 0, b"Yo"))])[5:],  # offset past the data
        b"\x00",
        b"",
    ],
)
def test_what_is_not_a_record_table(data: bytes) -> None:
    assert find_records(data) is None
    with pytest.raises(GamepakError):
        StringTable.parse(data, "records")


def test_split_record_keeps_the_items_around_the_runs() -> None:
    data = record(text_item(1, 2, b" Hi there "), icon_item(3, 4, 5), text_item(6, 7, b"@", b"\x09"))
    found = split_record(data)
    assert found is not None
    assert found.texts == (b" Hi there ", b"@")
    assert found.codes == (
        b"\x03" + struct.pack("<Bhh", 0, 1, 2),
        b"\x00" + icon_item(3, 4, 5) + struct.pack("<Bhh", 0, 6, 7),
        b"\x01\x09",
    )
    assert found.to_bytes() == data


items = st.one_of(
    st.tuples(
        st.integers(-0x8000, 0x7FFF),
        st.integers(-0x8000, 0x7FFF),
        st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20).map(str.encode),
        st.binary(max_size=3),
    ).map(lambda item: text_item(*item)),
    st.tuples(st.integers(-0x8000, 0x7FFF), st.integers(-0x8000, 0x7FFF), st.integers(0, 255)).map(
        lambda item: icon_item(*item)
    ),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(items, max_size=5), min_size=1, max_size=10), st.booleans(), st.booleans())
def test_records_round_trip(pages: list[list[bytes]], from_start: bool, end_offset: bool) -> None:
    records = [record(*page) for page in pages]
    data = tips_bytes(records, from_start, end_offset)
    found = find_records(data)
    if found is None:
        # Only a table whose runs are all empty (or that has none) is not a tips file.
        for body in records:
            split = split_record(body)
            assert split is not None and not any(split.texts)
        return
    table = StringTable.parse(data, "records")
    assert table.rebuild(table.texts) == data
    assert [r.to_bytes() for r in found[1]] == records


def test_lang_iga_is_found_without_a_kind(tmp_path: Path) -> None:
    """A one-member table whose strings are mostly unused (empty), ending in two zero bytes (it
    also reads as a j2me-sized chain): the strings are exported without --kind blob."""
    strings = [b"", b"", b"Get more games", b"", b"", b"", b"Visit www.gameloft.com", b"", b"", b"Free download!", b""]
    path = tmp_path / "lang_IGA.f"
    with gamepak.create(path, "j2me-table") as writer:
        writer.add("0", b"".join(s + b"\0" for s in strings))
    code, out, err = in_process_cli("text", "export", str(path))
    assert code == 0, err
    assert [row["text"] for row in json.loads(out)] == [s.decode() for s in strings]
    # A zero-filled binary table is still refused.
    with pytest.raises(GamepakError, match="NUL-separated pieces are empty"):
        StringTable.parse(b"ab\0\0\0\0\0\0\0\0cd\0")


def test_the_games_tipst_f(tmp_path: Path) -> None:
    """The real file: one j2me-table member of 8 records (offsets from the first record, end
    offset), 13 text runs between icons; an untouched export imports back to the same bytes,
    and a translated run lands in its record with the icons and key codes kept."""
    path = sample("gameloft/tipst.f")
    found = export_strings(path, tmp_path / "tips.json")
    assert found.member == "0" and found.table.kind == "records" and len(found.table) == 13
    texts = found.table.texts
    assert texts[:2] == ["Press", "to move left or right."]
    assert texts[4].startswith("If you are trapped and can't return") and texts[4].count("@") == 1
    done = import_strings(path, tmp_path / "tips.json", tmp_path / "same.f")
    assert done.changed == 0 and (tmp_path / "same.f").read_bytes() == path.read_bytes()
    rows = json.loads((tmp_path / "tips.json").read_text("utf-8"))
    rows[1]["text"] = "pour aller à gauche ou à droite."
    (tmp_path / "fr.json").write_text(json.dumps(rows), "utf-8")
    import_strings(path, tmp_path / "fr.json", tmp_path / "fr.f")
    original, translated = path.read_bytes(), (tmp_path / "fr.f").read_bytes()
    assert read_strings(tmp_path / "fr.f").texts == [texts[0], rows[1]["text"], *texts[2:]]
    grown = len(rows[1]["text"]) - len(texts[1])
    assert len(translated) == len(original) + grown
    # Everything before the run's length field and after its text is the same bytes.
    at = original.index(b"to move left or right.")
    # (the header's sizes and offsets after this record move: compare from the first record on)
    first_record = 9 + 19
    assert translated[first_record : at - 2] == original[first_record : at - 2]
    assert translated[at + len(texts[1]) + grown :] == original[at + len(texts[1]) :]


def test_a_sprite_pack_is_named_as_such() -> None:
    """tips.f holds the tips' pictures (sprites), not their text: the refusal says so."""
    with pytest.raises(GamepakError, match=r"0: a Gameloft sprite \(BSPRITE\), not text: `gamepak sprite` reads it"):
        read_strings(sample("gameloft/tips.f"))
