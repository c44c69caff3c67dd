"""J2ME strings for translators: text packs and string blobs, JSON/CSV/PO export and import,
the 0x92 apostrophe, byte-identical unchanged round trips, hostile input and the CLI."""

from __future__ import annotations

import csv
import io
import json
import os
import struct
from pathlib import Path

import polib
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.errors import GamepakError
from gamepak.formats.j2me.string_tables import StringTable, decode_string, encode_string
from gamepak.formats.j2me.text import (
    dump_translation,
    export_strings,
    import_strings,
    load_translation,
    read_strings,
)

from conftest import in_process_cli

# Latin-1 letters, the game's 0x92 apostrophe, a plain 0x27 apostrophe, an empty string, and
# text that needs CSV/PO quoting.
RAW = [b"Caf\xe9", b"Stra\xdfe", b"\xfcber", b"It\x92s", b"don't", b"", b'a,b"c\nd']
TEXTS = ["Café", "Straße", "über", "It's", "don't", "", 'a,b"c\nd']


def text_pack(raw_strings: list[bytes], sentinel: bool = False, starts: list[int] | None = None) -> bytes:
    """A text pack by hand: sized file 0 = NUL-terminated strings, sized file 1 = int16 count
    and int16 start indices."""
    table = b"".join(raw + b"\0" for raw in raw_strings)
    if starts is None:
        starts = []
        position = 0
        for raw in raw_strings:
            starts.append(position)
            position += len(raw) + 1
        if sentinel:
            starts.append(position)
    index_table = struct.pack(f"<h{len(starts)}h", len(starts), *starts)
    return struct.pack("<H", len(table)) + table + struct.pack("<H", len(index_table)) + index_table


def language_pack(tmp_path: Path, strings: list[bytes]) -> Path:
    """A Diamond Rush style language file: a j2me-table pack whose member 0 is a string blob."""
    path = tmp_path / "lang.bin"
    with gamepak.create(path, "j2me-table", overwrite=True) as writer:
        writer.add("0", b"".join(raw + b"\0" for raw in strings))
        writer.add("1", b"\x89PNG\r\n\x1a\nnot really")
    return path


def test_apostrophe_and_latin1() -> None:
    assert decode_string(b"l\x92\xe9t\xe9") == "l'été"
    assert decode_string(b"don't") == "don't"  # 0x27 reads as an apostrophe too
    assert encode_string("l'été", 0) == b"l\x92\xe9t\xe9"
    assert encode_string("l\u2019été", 0) == b"l\x92\xe9t\xe9"
    with pytest.raises(GamepakError, match="string 7: character '€'"):
        encode_string("5 €", 7)
    with pytest.raises(GamepakError, match="string 3 holds a NUL"):
        encode_string("a\0b", 3)


@pytest.mark.parametrize("sentinel", [False, True])
def test_text_pack_by_hand(tmp_path: Path, sentinel: bool) -> None:
    path = tmp_path / "strings.bin"
    path.write_bytes(text_pack(RAW, sentinel))
    table = read_strings(path)
    assert table.kind == "pack" and table.sentinel is sentinel
    assert table.texts == TEXTS
    # It is a j2me-sized pack of two files, as the spec says.
    with gamepak.open(path, "j2me-sized") as pack:
        assert len(pack) == 2


def test_shared_and_unordered_indices_are_read() -> None:
    table = b"hello\0world\0"
    data = text_pack([], starts=[6, 0, 8])  # 'world', 'hello', 'rld' (a suffix)
    data = struct.pack("<H", len(table)) + table + data[2:]
    assert StringTable.parse(data).texts == ["world", "hello", "rld"]
    # Unchanged: the original comes back even though a rebuild would lay it out differently.
    assert StringTable.parse(data).rebuild(["world", "hello", "rld"]) == data


@pytest.mark.parametrize("extension", ["json", "csv", "po"])
def test_export_import_each_format(tmp_path: Path, extension: str) -> None:
    source = tmp_path / "strings.bin"
    original = text_pack(RAW, sentinel=True)
    source.write_bytes(original)
    exported = tmp_path / f"strings.{extension}"
    export_strings(source, exported)

    # Unchanged: byte-identical, the 0x27 apostrophe of "don't" included.
    import_strings(source, exported, tmp_path / "same.bin")
    assert (tmp_path / "same.bin").read_bytes() == original

    translated = ["Kaffee", "Grüße", "l'été", "C'est", "don't", "", 'x,"y"\nz']
    if extension == "json":
        rows = json.loads(exported.read_text("utf-8"))
        assert rows[0] == {"index": 0, "text": "Café"}
        exported.write_text(json.dumps([{"index": i, "text": t} for i, t in enumerate(translated)]), "utf-8")
    elif extension == "csv":
        data = exported.read_bytes()
        assert data.startswith(b"\xef\xbb\xbfindex,text\r\n")
        rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
        assert rows[1:] == [[str(i), t] for i, t in enumerate(TEXTS)]
        buffer = io.StringIO(newline="")
        csv.writer(buffer).writerows([["index", "text"], *[[i, t] for i, t in enumerate(translated)]])
        exported.write_text(buffer.getvalue(), "utf-8", newline="")  # no BOM: accepted too
    else:
        po = polib.pofile(str(exported))
        assert [(e.msgctxt, e.msgid, e.msgstr) for e in po] == [(str(i), t, "") for i, t in enumerate(TEXTS)]
        for entry, text in zip(po, translated):
            entry.msgstr = text if text != TEXTS[int(entry.msgctxt)] else ""
        po.save(str(exported))

    import_strings(source, exported, tmp_path / "new.bin")
    rebuilt = (tmp_path / "new.bin").read_bytes()
    table = StringTable.parse(rebuilt)
    assert table.texts == translated
    assert table.sentinel
    assert b"l\x92\xe9t\xe9\0" in rebuilt and b"Gr\xfc\xdfe\0" in rebuilt
    assert b"don't\0" in rebuilt  # unchanged string keeps its original byte
    assert rebuilt == text_pack(
        [encode_string(t, i) if t != "don't" else b"don't" for i, t in enumerate(translated)], sentinel=True
    )


def test_po_fuzzy_and_empty_msgstr_fall_back_to_msgid(tmp_path: Path) -> None:
    po = polib.POFile()
    po.append(polib.POEntry(msgctxt="0", msgid="Yes", msgstr="Oui"))
    po.append(polib.POEntry(msgctxt="1", msgid="No", msgstr=""))
    po.append(polib.POEntry(msgctxt="2", msgid="Maybe", msgstr="Peut-être", flags=["fuzzy"]))
    assert load_translation(str(po).encode(), 3, "po") == ["Oui", "No", "Maybe"]


def test_language_blob_member(tmp_path: Path) -> None:
    strings = [f"Line {index} caf\xe9 it\x92s".encode("latin-1") for index in range(115)]
    path = language_pack(tmp_path, strings)
    code, out, err = in_process_cli("text", "export", str(path), "0")
    assert code == 0 and "read as j2me-table" in err
    rows = json.loads(out)
    assert len(rows) == 115 and rows[3] == {"index": 3, "text": "Line 3 café it's"}
    # Import: the member is rebuilt, the pack keeps its layout and its other member.
    rows[3]["text"] = "Ligne 3 thé l'été"
    (tmp_path / "fr.json").write_text(json.dumps(rows, ensure_ascii=False), "utf-8")
    code, _, err = in_process_cli(
        "text", "import", str(path), "0", str(tmp_path / "fr.json"), "-o", str(tmp_path / "fr.bin")
    )
    assert code == 0, err
    assert "1 string changed" in err
    with gamepak.open(tmp_path / "fr.bin", "j2me-table") as pack:
        assert pack.read("1") == b"\x89PNG\r\n\x1a\nnot really"
        assert pack.read("0").split(b"\0")[3] == b"Ligne 3 th\xe9 l\x92\xe9t\xe9"
    # The extracted name works as a member name too, and an unchanged import is identical.
    (tmp_path / "same.json").write_text(out, "utf-8")
    code, _, err = in_process_cli(
        "text", "import", str(path), "0.txt", str(tmp_path / "same.json"), "-o", str(tmp_path / "same.bin")
    )
    assert code == 0, err
    assert (tmp_path / "same.bin").read_bytes() == path.read_bytes()


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"index": 0, "text": "a"}], "index 1 is missing"),
        (
            [{"index": 0, "text": "a"}, {"index": 1, "text": "b"}, {"index": 2, "text": "c"}],
            "index 2 is not in the original",
        ),
        ([{"index": 0, "text": "a"}, {"index": 0, "text": "b"}], "index 0 appears more than once"),
        ([{"index": 0, "text": "a"}, {"index": 1, "text": "Ωmega"}], "string 1: character 'Ω'"),
        ([{"index": "0", "text": "a"}], "integer index"),
    ],
)
def test_bad_translations_write_nothing(tmp_path: Path, rows: list[dict[str, object]], message: str) -> None:
    source = tmp_path / "s.bin"
    source.write_bytes(text_pack([b"x", b"y"]))
    translation = tmp_path / "t.json"
    translation.write_text(json.dumps(rows, ensure_ascii=False), "utf-8")
    with pytest.raises(GamepakError, match=message):
        import_strings(source, translation, tmp_path / "out.bin")
    assert not (tmp_path / "out.bin").exists()
    assert sorted(os.listdir(tmp_path)) == ["s.bin", "t.json"]  # no temporary left behind


@pytest.mark.parametrize(
    ("data", "message"),
    [
        # The index table points past the 4-byte string table.
        (struct.pack("<H", 4) + b"ab\0\0" + struct.pack("<Hhh", 4, 1, 9), "index 0 \\(9\\) lies outside"),
        (struct.pack("<H", 4) + b"ab\0\0" + struct.pack("<Hhh", 4, 1, -2), "lies outside"),
        # A string without its NUL.
        (struct.pack("<H", 4) + b"abcd" + struct.pack("<Hhh", 4, 1, 0), "string 0 at byte 0 .*no NUL"),
        # The index count is larger than the index table holds.
        (struct.pack("<H", 3) + b"ab\0" + struct.pack("<Hhh", 4, 7, 0), "index count 7"),
    ],
)
def test_hostile_text_packs(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "bad.bin"
    path.write_bytes(data)
    with pytest.raises(GamepakError, match=message):
        read_strings(path, kind="pack")
    code, _, err = in_process_cli("text", "export", str(path), "--kind", "pack", "-o", str(tmp_path / "o.json"))
    assert code == 1 and "Traceback" not in err
    assert not (tmp_path / "o.json").exists()


def test_hostile_blob_names_the_position(tmp_path: Path) -> None:
    path = tmp_path / "blob.bin"
    path.write_bytes(b"one\0two\0thr")
    with pytest.raises(GamepakError, match="string 2 at byte 8 has no NUL"):
        read_strings(path)


def test_hostile_pack_around_the_member(tmp_path: Path) -> None:
    path = tmp_path / "bad.bin"
    path.write_bytes(bytes([9]) + b"\0" * 20)
    code, _, err = in_process_cli("--format", "j2me-table", "text", "export", str(path), "0")
    assert code == 1 and "needs a 73-byte header" in err


def test_text_pack_limits() -> None:
    table = StringTable.parse(text_pack([b"a"]))
    with pytest.raises(GamepakError, match="int16 index|at most 65535"):
        StringTable("pack", [b"x"] * 2, b"").rebuild(["y" * 40000, "z"])
    assert table.rebuild(["b"]) == text_pack([b"b"])


def test_outputs_never_overwrite_without_flag(tmp_path: Path) -> None:
    source = tmp_path / "s.bin"
    source.write_bytes(text_pack(RAW))
    out = tmp_path / "s.json"
    out.write_text("keep")
    code, _, err = in_process_cli("text", "export", str(source), "-o", str(out))
    assert code == 1 and "already exists" in err and out.read_text() == "keep"
    assert in_process_cli("text", "export", str(source), "-o", str(out), "--overwrite")[0] == 0
    assert json.loads(out.read_text("utf-8"))[0]["text"] == "Café"
    target = tmp_path / "t.bin"
    target.write_bytes(b"keep")
    code, _, err = in_process_cli("text", "import", str(source), str(out), "-o", str(target))
    assert code == 1 and target.read_bytes() == b"keep"


def test_cli_usage_and_help(tmp_path: Path) -> None:
    code, out, _ = in_process_cli("text", "import", "--help")
    assert code == 0 and "FILE [MEMBER] TRANSLATION" in out
    code, out, _ = in_process_cli("text", "--help")
    assert code == 0 and "byte-order mark" in out
    code, _, err = in_process_cli("text", "import", "a", "b", "c", "d", "-o", str(tmp_path / "x"))
    assert code == 2
    code, _, err = in_process_cli("text", "export", str(tmp_path / "missing.bin"))
    assert code == 1 and "cannot read" in err


def test_cli_formats_by_extension(tmp_path: Path) -> None:
    source = tmp_path / "s.bin"
    source.write_bytes(text_pack(RAW))
    for extension in ("json", "csv", "po"):
        out = tmp_path / f"s.{extension}"
        assert in_process_cli("text", "export", str(source), "-o", str(out))[0] == 0
        back = tmp_path / f"back-{extension}.bin"
        assert in_process_cli("text", "import", str(source), str(out), "-o", str(back))[0] == 0
        assert back.read_bytes() == source.read_bytes()
    code, _, err = in_process_cli("text", "export", str(source), "-o", str(tmp_path / "s.xml"))
    assert code == 1 and ".json, .csv or .po" in err


latin1_text = st.text(
    alphabet=st.characters(min_codepoint=1, max_codepoint=0xFF, exclude_characters="\x92"), max_size=20
)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    originals=st.lists(st.binary(max_size=12).map(lambda raw: raw.replace(b"\0", b"")), max_size=10),
    fmt=st.sampled_from(["json", "csv", "po"]),
    sentinel=st.booleans(),
    data=st.data(),
)
def test_roundtrip_property(
    tmp_path: Path, originals: list[bytes], fmt: str, sentinel: bool, data: st.DataObject
) -> None:
    table = StringTable.parse(text_pack(originals, sentinel), "pack")
    exported = dump_translation(table.texts, fmt)
    assert load_translation(exported, len(table), fmt) == table.texts
    assert table.rebuild(load_translation(exported, len(table), fmt)) == text_pack(originals, sentinel)
    new_texts = data.draw(st.lists(latin1_text, min_size=len(originals), max_size=len(originals)))
    rebuilt = StringTable.parse(table.rebuild(new_texts), "pack")
    assert rebuilt.texts == new_texts
    blob = StringTable.parse(b"".join(raw + b"\0" for raw in originals), "blob")
    assert StringTable.parse(blob.rebuild(new_texts), "blob").texts == new_texts


# -- traps a new user hit -----------------------------------------------------------------------


def test_pack_without_member_exports_its_text_member_and_names_the_skipped(tmp_path: Path) -> None:
    strings = [f"Line {index}".encode() for index in range(115)]
    path = language_pack(tmp_path, strings)
    code, out, err = in_process_cli("text", "export", str(path))
    assert code == 0, err
    rows = json.loads(out)
    # Before: the pack's header and the PNG member split at NUL bytes, 121 junk strings.
    assert [row["text"] for row in rows] == [raw.decode() for raw in strings]
    assert "the strings are member 0" in err and "skipped 1: PNG data, not text" in err
    found = export_strings(path)
    assert found.member == "0" and found.format == "j2me-table" and found.skipped == [("1", "PNG data, not text")]
    # Import without MEMBER picks the same member back.
    rows[2]["text"] = "Ligne 2"
    (tmp_path / "fr.json").write_text(json.dumps(rows), "utf-8")
    result = import_strings(path, tmp_path / "fr.json", tmp_path / "fr.bin")
    assert result.changed == 1 and result.member == "0"
    with gamepak.open(tmp_path / "fr.bin", "j2me-table") as pack:
        assert pack.read("0").split(b"\0")[2] == b"Ligne 2"
        assert pack.read("1") == b"\x89PNG\r\n\x1a\nnot really"


def test_binary_data_is_refused_not_exported_as_junk(tmp_path: Path) -> None:
    path = tmp_path / "gfx.bin"
    with gamepak.create(path, "j2me-table") as writer:
        writer.add("0", b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
        writer.add("1", bytes(range(1, 200)) + b"\0")
    code, out, err = in_process_cli("--format", "j2me-table", "text", "export", str(path))
    assert code == 1 and out == ""
    assert "no member that holds strings" in err and "0: PNG data" in err and "1: binary data" in err
    code, _, err = in_process_cli("--format", "j2me-table", "text", "export", str(path), "1")
    assert code == 1 and "not a string table: binary data" in err and "control characters" in err
    # A pack's own header is not a string blob either.
    with pytest.raises(GamepakError, match="binary data"):
        StringTable.parse(path.read_bytes()[:41] + b"\0")
    # Asked for explicitly, a blob is taken as it is.
    assert len(StringTable.parse(bytes(range(1, 10)) + b"\0", "blob")) == 1


def test_several_text_members_ask_for_one(tmp_path: Path) -> None:
    path = tmp_path / "two.bin"
    with gamepak.create(path, "j2me-table") as writer:
        writer.add("0", b"Yes\0No\0")
        writer.add("1", b"Oui\0Non\0Peut-\xeatre\0")
    with pytest.raises(GamepakError, match=r"2 members .* hold strings: 0 \(2 strings\), 1 \(3 strings\)"):
        read_strings(path, format="j2me-table")
    assert read_strings(path, "1", format="j2me-table").texts == ["Oui", "Non", "Peut-être"]


def offset_indexed(raw_strings: list[bytes], width: int, from_start: bool, sentinel: bool) -> bytes:
    """Strings behind their own offset table, by hand: count, offsets, NUL-terminated strings."""
    code = {2: "h", 4: "i"}[width]
    starts, position = [], 0
    for raw in raw_strings:
        starts.append(position)
        position += len(raw) + 1
    if sentinel:
        starts.append(position)
    header_size = width * (1 + len(starts))
    offsets = [start + (header_size if from_start else 0) for start in starts]
    return struct.pack(f"<{code}{len(offsets)}{code}", len(offsets), *offsets) + b"".join(
        r + b"\0" for r in raw_strings
    )


@pytest.mark.parametrize("width", [2, 4])
@pytest.mark.parametrize("from_start", [False, True])
@pytest.mark.parametrize("sentinel", [False, True])
def test_strings_behind_their_own_offset_table(tmp_path: Path, width: int, from_start: bool, sentinel: bool) -> None:
    raw = [b"Tip: dig down", b"Tip: don\x92t get crushed", b"", b"Press 5"]
    data = offset_indexed(raw, width, from_start, sentinel)
    table = StringTable.parse(data)
    # Before: read as a blob, the offset table came out as junk strings.
    assert table.kind == "indexed" and table.texts == ["Tip: dig down", "Tip: don't get crushed", "", "Press 5"]
    assert table.rebuild(table.texts) == data
    edited = ["Astuce : creuse", "Ne te fais pas écraser", "x", "Appuie sur 5"]
    rebuilt = table.rebuild(edited)
    assert rebuilt == offset_indexed([encode_string(t, i) for i, t in enumerate(edited)], width, from_start, sentinel)
    assert StringTable.parse(rebuilt).texts == edited
    # In a pack, without naming the member.
    path = tmp_path / "tipst.f"
    with gamepak.create(path, "j2me-table") as writer:
        writer.add("0", data)
    translation = tmp_path / "tips.json"
    translation.write_text(json.dumps([{"index": i, "text": t} for i, t in enumerate(edited)]), "utf-8")
    import_strings(path, translation, tmp_path / "out.f", format="j2me-table")
    with gamepak.open(tmp_path / "out.f", "j2me-table") as pack:
        assert pack.read("0") == rebuilt


def test_lengths_that_break_a_layout_are_refused(tmp_path: Path) -> None:
    table = StringTable.parse(offset_indexed([b"a", b"b"], 2, False, False))
    with pytest.raises(GamepakError, match="string 1 would start at byte 40001: its 16-bit offset reaches only 32767"):
        table.rebuild(["x" * 40000, "b"])
    # A blob in a j2me-sized pack: a member holds at most 65,535 bytes; nothing is written.
    path = tmp_path / "sized.bin"
    with gamepak.create(path, "j2me-sized") as writer:
        writer.add("0", b"one\0two\0")
        writer.add("1", b"\x89PNG\r\n\x1a\n")
    translation = tmp_path / "t.json"
    translation.write_text(json.dumps([{"index": 0, "text": "y" * 70000}, {"index": 1, "text": "two"}]), "utf-8")
    with pytest.raises(GamepakError, match="at most 65535"):
        import_strings(path, translation, tmp_path / "out.bin", "0", format="j2me-sized")
    assert not (tmp_path / "out.bin").exists()


def test_stale_po_msgid_is_named(tmp_path: Path) -> None:
    source = tmp_path / "s.bin"
    source.write_bytes(text_pack([b"Yes", b"No", b"Maybe"]))
    po = polib.POFile()
    po.append(polib.POEntry(msgctxt="0", msgid="Yes", msgstr="Oui"))
    po.append(polib.POEntry(msgctxt="1", msgid="Nope", msgstr=""))  # stale and untranslated
    po.append(polib.POEntry(msgctxt="2", msgid="Perhaps", msgstr="Peut-être"))  # stale, translated
    (tmp_path / "fr.po").write_text(str(po), "utf-8")
    with pytest.warns(UserWarning) as caught:
        result = import_strings(source, tmp_path / "fr.po", tmp_path / "fr.bin")
    messages = [str(warning.message) for warning in caught]
    assert len(messages) == 2
    assert "msgid 'Nope' of index 1 is stale (it is not in the original; string 1 is 'No')" in messages[0]
    assert "msgid 'Perhaps' of index 2 is stale" in messages[1]
    # Untranslated keeps the original, not the stale msgid.
    assert read_strings(tmp_path / "fr.bin").texts == ["Oui", "No", "Peut-être"] and result.changed == 2
    code, _, err = in_process_cli("text", "import", str(source), str(tmp_path / "fr.po"), "-o", str(tmp_path / "x"))
    assert code == 0 and "warning:" in err and "'Nope'" in err


@pytest.mark.parametrize("delimiter", [";", "\t", ","])
def test_csv_separator_is_sniffed(tmp_path: Path, delimiter: str) -> None:
    source = tmp_path / "s.bin"
    source.write_bytes(text_pack([b"a;b", b"c"]))
    buffer = io.StringIO(newline="")
    csv.writer(buffer, delimiter=delimiter).writerows([["index", "text"], [0, "x;y,z"], [1, "w"]])
    (tmp_path / "t.csv").write_text(buffer.getvalue(), "utf-8-sig", newline="")
    import_strings(source, tmp_path / "t.csv", tmp_path / "out.bin")
    assert read_strings(tmp_path / "out.bin").texts == ["x;y,z", "w"]


def test_csv_without_a_header_says_why(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("0|x\n1|y\n", "utf-8")
    with pytest.raises(GamepakError, match=r"header index,text \(commas, semicolons or tabs .*'0\|x'"):
        load_translation((tmp_path / "t.csv").read_bytes(), 2, "csv")


def test_an_unknown_table_in_front_of_strings_is_refused() -> None:
    # int16 offsets that do not match the strings' starts: not a table gamepak can rebuild.
    data = struct.pack("<hhh", 2, 1, 9) + b"Hello world, this is a long tip\0Another tip for you\0"
    with pytest.raises(GamepakError, match="starts with control characters .*a table in front of the strings"):
        StringTable.parse(data)


def test_text_pack_inside_a_pack_without_naming_the_member(tmp_path: Path) -> None:
    # A tips file: a j2me-table pack whose member is a text pack with its own index table.
    path = tmp_path / "tipst.f"
    with gamepak.create(path, "j2me-table") as writer:
        writer.add("0", text_pack(RAW, sentinel=True))
    # Before: the whole file read as one blob of junk strings, and importing them broke it.
    found = export_strings(path, tmp_path / "tips.json")
    assert found.member == "0" and found.table.kind == "pack" and found.table.texts == TEXTS
    rows = json.loads((tmp_path / "tips.json").read_text("utf-8"))
    rows[0]["text"] = "Un café bien plus long qu'avant"
    (tmp_path / "tips.json").write_text(json.dumps(rows), "utf-8")
    import_strings(path, tmp_path / "tips.json", tmp_path / "out.f")
    with gamepak.open(tmp_path / "out.f", "j2me-table") as pack:
        table = StringTable.parse(pack.read("0"))
    assert table.kind == "pack" and table.sentinel and table.texts == [rows[0]["text"], *TEXTS[1:]]
