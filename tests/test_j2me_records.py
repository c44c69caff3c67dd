"""Diamond Rush's tips (`tips.f`, `tipst.f`: a count byte, int16 offsets, records with layout
codes around the text) export and import; `lang_IGA.f` (a language blob with many unused,
empty strings) is found without --kind. Fixtures are built by hand from the layouts in
formats/j2me/records.py and the README's J2ME section; the real files, when present under the
samples folder (j2me/), are read as an extra layer."""

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

from conftest import SAMPLES, in_process_cli

# Records as the tips hold them: layout codes (position, colour) before the text, a NUL and an
# end code after it; one record with a line break inside its text, one with codes only.
RECORDS = [
    (b"\x01\x10", b"Push boulders to open the way.", b"\x00\x1f"),
    (b"\x01\x14\x03", b"Diamonds give points:\ncollect them all!", b"\x00\x1f"),
    (b"\x02", b"", b"\x00"),
    (b"\x01\x08", b"It\x92s a trap!", b"\x00\x1f"),
]


def tips_bytes(records: list[tuple[bytes, bytes, bytes]], from_start: bool = True, end_offset: bool = False) -> bytes:
    """A record table by hand: count byte, int16 offsets (LE), records."""
    bodies = [b"".join(parts) for parts in records]
    header_size = 1 + 2 * (len(bodies) + end_offset)
    base = header_size if from_start else 0
    offsets, position = [], base
    for body in bodies:
        offsets.append(position)
        position += len(body)
    if end_offset:
        offsets.append(position)
    return bytes([len(bodies)]) + struct.pack(f"<{len(offsets)}h", *offsets) + b"".join(bodies)


@pytest.mark.parametrize("from_start", [False, True])
@pytest.mark.parametrize("end_offset", [False, True])
def test_tips_records_by_hand(from_start: bool, end_offset: bool) -> None:
    data = tips_bytes(RECORDS, from_start, end_offset)
    table = StringTable.parse(data)
    assert table.kind == "records"
    assert table.texts == [
        "Push boulders to open the way.",
        "Diamonds give points:\ncollect them all!",
        "",
        "It's a trap!",
    ]
    assert table.rebuild(table.texts) == data  # unchanged: the same bytes
    layout, records = find_records(data) or (None, [])
    assert layout == RecordTable(from_start, end_offset)
    assert [(r.prefix, r.text, r.suffix) for r in records if r.text] == [r for r in RECORDS if r[1]]
    assert [r.to_bytes() for r in records] == [b"".join(parts) for parts in RECORDS]
    # A longer translation moves every later offset; the codes stay as they were.
    changed = table.rebuild(["Poussez les rochers pour ouvrir le chemin.", *table.texts[1:]])
    assert changed == tips_bytes(
        [(b"\x01\x10", b"Poussez les rochers pour ouvrir le chemin.", b"\x00\x1f"), *RECORDS[1:]],
        from_start,
        end_offset,
    )


def test_tips_file_and_tips_member_export_and_import(tmp_path: Path) -> None:
    tips = tmp_path / "tipst.f"
    tips.write_bytes(tips_bytes(RECORDS))
    code, out, err = in_process_cli("text", "export", str(tips))
    assert code == 0, err
    rows = json.loads(out)
    assert rows[0]["text"] == "Push boulders to open the way."
    rows[3]["text"] = "C'est un piège !"
    (tmp_path / "fr.json").write_text(json.dumps(rows), "utf-8")
    code, _, err = in_process_cli("text", "import", str(tips), str(tmp_path / "fr.json"), "-o", str(tmp_path / "fr.f"))
    assert code == 0, err
    assert read_strings(tmp_path / "fr.f").texts[3] == "C'est un piège !"
    assert (tmp_path / "fr.f").read_bytes().endswith(b"\x01\x08C\x92est un pi\xe8ge !\x00\x1f")
    # The same records as the one member of a .f table (the game loads every .f as a table).
    packed = tmp_path / "tips.f"
    with gamepak.create(packed, "j2me-table") as writer:
        writer.add("0", tips_bytes(RECORDS, from_start=False))
    exported = export_strings(packed, tmp_path / "tips.po", format="j2me-table")
    assert exported.member == "0" and exported.table.kind == "records"
    done = import_strings(packed, tmp_path / "tips.po", tmp_path / "same.f", format="j2me-table")
    assert done.changed == 0 and (tmp_path / "same.f").read_bytes() == packed.read_bytes()
    assert in_process_cli("text", "export", str(tips), "--kind", "records")[0] == 0


def test_a_code_typed_into_a_tip_is_refused() -> None:
    table = StringTable.parse(tips_bytes(RECORDS))
    with pytest.raises(GamepakError, match=r"string 0: control character 0x01 would be read as a layout code"):
        table.rebuild(["Push\x01", *table.texts[1:]])


@pytest.mark.parametrize(
    "data",
    [
        b"\x02\x05\x00\x20\x00" + b"\x01Hello\x00",  # second offset past the data
        b"\x02\x05\x00\x04\x00" + b"\x01Hi\x00\x01Yo\x00",  # offsets out of order
        b"\x01\x03\x00" + b"\x01Hel\x05lo\x00",  # a code between the letters
        b"\x01\x03\x00" + b"\x01\x02\x00",  # no text at all
        b"\x00",
        b"",
    ],
)
def test_what_is_not_a_record_table(data: bytes) -> None:
    assert find_records(data) is None
    with pytest.raises(GamepakError):
        StringTable.parse(data, "records")


def test_split_record_keeps_codes_around_the_text() -> None:
    record = split_record(b"\x01\x02 Hi there \x00\x1f")
    assert record is not None
    assert (record.prefix, record.text, record.suffix) == (b"\x01\x02", b" Hi there ", b"\x00\x1f")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.binary(max_size=3).map(lambda b: bytes(x % 0x20 for x in b)),
            st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20).map(str.encode),
            st.binary(max_size=3).map(lambda b: bytes(x % 0x20 for x in b)),
        ),
        min_size=1,
        max_size=12,
    ).filter(lambda records: any(text for _, text, _ in records)),
    st.booleans(),
    st.booleans(),
)
def test_records_round_trip(records: list[tuple[bytes, bytes, bytes]], from_start: bool, end_offset: bool) -> None:
    records = [(prefix, text, suffix) for prefix, text, suffix in records if prefix + text + suffix]
    if not any(text for _, text, _ in records):
        return
    data = tips_bytes(records, from_start, end_offset)
    table = StringTable.parse(data, "records")
    assert table.rebuild(table.texts) == data
    assert table.texts == [text.decode("latin-1") for _, text, _ in records]


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


@pytest.mark.parametrize("name", ["tips.f", "tipst.f", "lang_IGA.f"])
def test_real_diamond_rush_files(name: str) -> None:
    path = SAMPLES / "j2me" / name
    if not path.exists():
        pytest.skip(f"sample j2me/{name} not available (../shared/samples has no Diamond Rush files)")
    found = read_strings(path)
    assert len(found) > 0 and found.rebuild(found.texts) is not None
