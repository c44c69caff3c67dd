"""RFG localization files (.rfglocatext v3): the format from the spec's byte layout, names from
.xtbl leaf texts, text export/import in every form, packs (nested), hostile input, the CLI and
the real Arabic file."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import polib
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.errors import CorruptArchiveError, GamepakError
from gamepak.formats.rfg.locatext import (
    LocaEntry,
    LocaText,
    build,
    identifier_hash,
    language_of,
    scan,
)
from gamepak.formats.rfg.locatext.apply import apply_translation
from gamepak.formats.rfg.locatext.names import find_names, leaf_texts
from gamepak.formats.rfg.locatext.rows import Row, Rows
from gamepak.formats.rfg.locatext.translate import dump_translation, load_translation
from gamepak.ops.locatext import export_locatext, import_locatext, locate

from conftest import in_process_cli, pack_members, sample

SIGNATURE = b"\x73\x7f\x4c\xa8"
NAMES = ["UI_MENU_START", "UI_MENU_QUIT", "MIS_TALK_01", "EMPTY_ONE"]
TEXTS = ["Start", "مرحبا بالعالم", 'a,b"c\nd', ""]


def handmade(strings: list[tuple[int, str]], *, gap: bytes = b"") -> bytes:
    """A file laid out by hand from the spec: header, entries, strings in entry order."""
    count = len(strings)
    position = 12 + 12 * count + len(gap)
    table = b""
    blob = gap
    for hash_value, text in strings:
        raw = text.encode("utf-16-le") + b"\0\0"
        table += struct.pack("<III", hash_value, position, len(raw))
        blob += raw
        position += len(raw)
    return SIGNATURE + struct.pack("<II", 3, count) + table + blob


def sample_file(tmp_path: Path, name: str = "locatexts_xx_yy.rfglocatext") -> Path:
    path = tmp_path / name
    path.write_bytes(handmade([(identifier_hash(n), t) for n, t in zip(NAMES, TEXTS)]))
    return path


def names_file(tmp_path: Path, names: list[str] = NAMES) -> Path:
    path = tmp_path / "names.txt"
    path.write_text("\n".join(names) + "\n", encoding="utf-8")
    return path


# -- the format -------------------------------------------------------------------------------


def test_hash_matches_spec_example_and_rules() -> None:
    assert identifier_hash("D01DAN_ZZZ_MIS_SPE_DLC_MIS03_DDAN_CLR_01") == 1473498024
    assert identifier_hash("ABC") == identifier_hash("abc") == zlib.crc32(b"abc")
    # Only ASCII letters are lowered; other characters count by their low byte.
    assert identifier_hash("É") == zlib.crc32(b"\xc9")
    # As RFGM's HashVolitionCRCAlt: a low byte in A-Z is lowered, whatever the high byte.
    assert identifier_hash("\u0641") == zlib.crc32(b"\x61")


def test_handmade_file_reads_and_round_trips(tmp_path: Path) -> None:
    data = sample_file(tmp_path).read_bytes()
    table = LocaText.parse(data)
    assert [entry.text for entry in table.entries] == TEXTS
    assert [entry.hash for entry in table.entries] == [identifier_hash(name) for name in NAMES]
    assert table.to_bytes() == data
    assert build(LocaText.parse(data).entries) == data  # the writer lays strings out as the game does


def test_one_changed_string_moves_only_later_offsets(tmp_path: Path) -> None:
    data = sample_file(tmp_path).read_bytes()
    table = LocaText.parse(data)
    table.entries[1].raw = "Hi".encode("utf-16-le") + b"\0\0"
    new = table.to_bytes()
    old_entries = list(struct.iter_unpack("<III", data[12:60]))
    new_entries = list(struct.iter_unpack("<III", new[12:60]))
    assert new[:12] == data[:12]
    assert new_entries[0] == old_entries[0]
    assert new_entries[1][:2] == old_entries[1][:2] and new_entries[1][2] == 6
    delta = 6 - old_entries[1][2]
    for old, changed in zip(old_entries[2:], new_entries[2:]):
        assert changed == (old[0], old[1] + delta, old[2])
    assert new[60 + 0 : old_entries[1][1]] == data[60 : old_entries[1][1]]
    assert new[new_entries[2][1] :] == data[old_entries[2][1] :]


def test_empty_file_and_language() -> None:
    assert build([]) == SIGNATURE + struct.pack("<II", 3, 0)
    assert LocaText.parse(build([])).entries == []
    assert language_of("data/locatexts_ar_eg.rfglocatext") == "ar_eg"
    assert language_of("other.rfglocatext") is None


def test_registry_info_and_verify(tmp_path: Path) -> None:
    path = sample_file(tmp_path)
    with gamepak.open(path) as archive:
        assert archive.format_name == "rfglocatext"
        assert archive.header_fields()["string_count"] == 4
        assert archive.header_fields()["empty_strings"] == 1
        assert archive.header_fields()["language"] == "xx_yy"
        assert archive.verify() == []
    code, _, _ = in_process_cli("verify", str(path))
    assert code == 0


def _entry_field(data: bytes, index: int, field: int, value: int) -> bytes:
    changed = bytearray(data)
    struct.pack_into("<I", changed, 12 + 12 * index + 4 * field, value)
    return bytes(changed)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda d: d[:8], "too short"),
        (lambda d: b"\0\0\0\0" + d[4:], "signature"),
        (lambda d: d[:4] + struct.pack("<I", 4) + d[8:], "version 4"),
        (lambda d: d[:8] + struct.pack("<I", 10_000_000) + d[12:], "string count 10000000"),
        (lambda d: _entry_field(d, 1, 1, 20), "entry 1 (#"),
        (lambda d: _entry_field(d, 2, 1, 100_000), "runs past the end"),
        (lambda d: _entry_field(d, 0, 2, 3), "odd"),
        (lambda d: _entry_field(d, 0, 2, 2), "NUL"),
        (lambda d: _entry_field(d, 3, 0, identifier_hash(NAMES[0])), "also entry 0's"),
    ],
)
def test_malformed_files_are_refused_naming_the_entry(tmp_path: Path, damage: object, message: str) -> None:
    data = damage(sample_file(tmp_path).read_bytes())  # type: ignore[operator]
    with pytest.raises(CorruptArchiveError, match=message.replace("(", r"\(")):
        LocaText.parse(data)
    bad = tmp_path / "bad.rfglocatext"
    bad.write_bytes(data)
    code, _, err = in_process_cli("text", "export", str(bad), "-o", str(tmp_path / "out.json"), "--names")
    assert code != 0 and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out.json").exists()


def test_verify_lists_every_entry_problem_and_warnings(tmp_path: Path) -> None:
    data = sample_file(tmp_path).read_bytes()
    data = _entry_field(_entry_field(data, 0, 2, 3), 2, 1, 100_000)
    entries, problems = scan(data)
    assert entries == []
    errors = [problem.message for problem in problems if problem.severity == "error"]
    assert len(errors) == 2 and errors[0].startswith("entry 0") and errors[1].startswith("entry 2")
    bad = tmp_path / "bad.rfglocatext"
    bad.write_bytes(data)
    code, _, _ = in_process_cli("verify", str(bad))
    assert code != 0
    gapped = handmade([(1, "a"), (2, "b")], gap=b"\0\0")
    _, problems = scan(gapped)
    assert [problem.severity for problem in problems] == ["warning"]


def test_invalid_utf16_and_inner_nul(tmp_path: Path) -> None:
    lone = SIGNATURE + struct.pack("<II", 3, 1) + struct.pack("<III", 1, 24, 4) + b"\x00\xd8\0\0"
    with pytest.raises(CorruptArchiveError, match="not UTF-16"):
        LocaText.parse(lone)
    inner = handmade([(1, "a\0b")])
    entries, problems = scan(inner)
    assert entries and problems[0].severity == "warning" and "NUL" in problems[0].message


def test_entries_sharing_one_long_string_over_and_over_are_refused_before_copying_it() -> None:
    # Found by reading: overlapping strings are only a warning, and each entry copied its
    # string, so 4,000 entries naming one 40 KB string (an 88 KB file) took 160 MB, 390 MB
    # once decoded (grows with the square of the file's size). Sharing is allowed up to four
    # times the file's size, checked before anything is copied.
    count, length = 4000, 40_000
    table_end = 12 + 12 * count
    data = (
        SIGNATURE
        + struct.pack("<II", 3, count)
        + b"".join(struct.pack("<III", number, table_end, length) for number in range(count))
        + "a".encode("utf-16-le") * (length // 2 - 1)
        + b"\0\0"
    )
    entries, problems = scan(data)
    assert entries == [] and problems[0].severity == "error" and problems[0].offset == 12
    assert f"{count * length} bytes" in problems[0].message
    with pytest.raises(CorruptArchiveError, match="more than four times"):
        LocaText.parse(data)
    # A few entries sharing strings stay a warning.
    shared = SIGNATURE + struct.pack("<II", 3, 2) + struct.pack("<III", 1, 36, 4) * 1 + struct.pack("<III", 2, 36, 4)
    entries, problems = scan(shared + b"a\0\0\0")
    assert len(entries) == 2 and [problem.severity for problem in problems] == ["warning"]


# -- names ------------------------------------------------------------------------------------


def test_leaf_texts_and_names_from_tables_and_lists(tmp_path: Path) -> None:
    xml = (
        b"<root>\n <Row><Name>UI_MENU_START</Name><Kids>\n <a>MIS_TALK_01</a></Kids>\n"
        b"<e></e><q>A &amp; B</q></Row></root>"
    )
    assert list(leaf_texts(xml)) == [b"UI_MENU_START", b"MIS_TALK_01", b"A &amp; B"]
    pack = tmp_path / "table.vpp_pc"
    inner = tmp_path / "inner.str2_pc"
    with gamepak.create(inner) as writer:
        writer.add("deep.xtbl", b"<r><n>EMPTY_ONE</n></r>")
    with gamepak.create(pack) as writer:
        writer.add("ui.xtbl", xml)
        writer.add("inner.str2_pc", inner.read_bytes())
    wanted = {identifier_hash(name) for name in NAMES} | {identifier_hash("A & B")}
    found = find_names([str(pack)], wanted=wanted)
    assert sorted(found.identifiers.values()) == ["A & B", "EMPTY_ONE", "MIS_TALK_01", "UI_MENU_START"]
    assert found.tables == 2
    listed = find_names([str(names_file(tmp_path, ["ui_menu_quit"]))], wanted=wanted)
    assert list(listed.identifiers.values()) == ["ui_menu_quit"]


def test_default_names_are_the_packs_beside_the_file(tmp_path: Path) -> None:
    path = sample_file(tmp_path)
    with gamepak.create(tmp_path / "misc.vpp_pc") as writer:
        writer.add("x.xtbl", b"<r><n>UI_MENU_START</n><n>UI_MENU_QUIT</n></r>")
    result = export_locatext(path)
    rows = json.loads(result.data)
    assert [row["identifier"] for row in rows] == ["UI_MENU_START", "UI_MENU_QUIT", None, None]
    assert result.named == 2
    assert export_locatext(path, names=[]).named == 0


# -- translations -----------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["json", "csv", "po", "rfgm-xml"])
def test_unchanged_round_trip_is_byte_exact_in_every_form(tmp_path: Path, form: str) -> None:
    path = sample_file(tmp_path)
    names = [str(names_file(tmp_path, NAMES[:2]))]  # two named, two by hash
    out = tmp_path / f"t.{form}"
    export_locatext(path, out, translation=form, names=names)
    result = import_locatext(path, out, tmp_path / "new.rfglocatext", translation_kind=form, names=names)
    assert (tmp_path / "new.rfglocatext").read_bytes() == path.read_bytes()
    assert result.applied.changed == [] and result.applied.added == []


def test_forms_carry_identifier_or_hash(tmp_path: Path) -> None:
    path = sample_file(tmp_path)
    names = [str(names_file(tmp_path, NAMES[:2]))]
    rows = json.loads(export_locatext(path, names=names).data)
    assert rows[0] == {"hash": f"{identifier_hash(NAMES[0]):08x}", "identifier": NAMES[0], "text": "Start"}
    assert rows[2]["identifier"] is None
    po = polib.pofile(export_locatext(path, translation="po", names=names).data.decode())
    assert [entry.msgctxt for entry in po] == [
        NAMES[0],
        NAMES[1],
        f"#{identifier_hash(NAMES[2]):08x}",
        f"#{identifier_hash(NAMES[3]):08x}",
    ]
    xml = export_locatext(path, translation="rfgm-xml", names=names).data.decode()
    assert f"<Hash>{identifier_hash(NAMES[2])}</Hash>" in xml and "<Identifier />" in xml


def test_source_language_is_the_po_msgid(tmp_path: Path) -> None:
    path = sample_file(tmp_path)
    english = tmp_path / "locatexts_us_en.rfglocatext"
    english.write_bytes(handmade([(identifier_hash(NAMES[1]), "Hello world")]))
    po_bytes = export_locatext(path, translation="po", names=[], source=english).data
    po = polib.pofile(po_bytes.decode())
    assert po[1].msgid == "Hello world" and po[1].msgstr == TEXTS[1]
    assert po[0].msgid == "Start" and "not in the reference file" in po[0].comment
    po[1].msgstr = "أهلا"
    translated = tmp_path / "t.po"
    translated.write_text(str(po), encoding="utf-8")
    import_locatext(path, translated, tmp_path / "new.rfglocatext", names=[])
    assert [entry.text for entry in LocaText.parse((tmp_path / "new.rfglocatext").read_bytes()).entries] == [
        TEXTS[0],
        "أهلا",
        *TEXTS[2:],
    ]
    rows = json.loads(export_locatext(path, names=[], source=english).data)
    assert rows[1]["source"] == "Hello world" and rows[0]["source"] is None


def test_import_changes_adds_and_deletes(tmp_path: Path) -> None:
    path = sample_file(tmp_path)
    table = LocaText.parse(path.read_bytes())
    rows = [Row(None, "UI_MENU_START", "Go", "r1"), Row(None, "NEW_ONE", "new", "r2")]
    applied = apply_translation(table, rows)
    assert applied.changed == [0] and applied.added == ["NEW_ONE"]
    assert [entry.text for entry in table.entries] == ["Go", *TEXTS[1:], "new"]
    assert table.entries[-1].hash == identifier_hash("NEW_ONE")
    rebuilt = LocaText.parse(table.to_bytes())
    assert [entry.text for entry in rebuilt.entries] == ["Go", *TEXTS[1:], "new"]
    applied = apply_translation(rebuilt, rows, delete=True)
    assert len(rebuilt) == 2 and len(applied.removed) == 3


def test_unnamed_entries_are_imported_by_hash_never_rehashed(tmp_path: Path) -> None:
    path = sample_file(tmp_path)
    out = tmp_path / "t.json"
    export_locatext(path, out, names=[])
    rows = json.loads(out.read_text(encoding="utf-8"))
    rows[2]["text"] = "changed"
    out.write_text(json.dumps(rows), encoding="utf-8")
    import_locatext(path, out, tmp_path / "new.rfglocatext", names=[])
    entries = LocaText.parse((tmp_path / "new.rfglocatext").read_bytes()).entries
    assert [entry.hash for entry in entries] == [identifier_hash(name) for name in NAMES]
    assert entries[2].text == "changed"


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        ('[{"hash": "1", "text": "a"}, {"hash": "00000001", "text": "b"}]', "t.json", "is also at"),
        ("hash,identifier,text\r\n,UI_MENU_START,a\r\n,ui_menu_start,b\r\n", "t.csv", "row 3"),
        ('[{"hash": "zz", "text": "a"}]', "t.json", "not 8 hexadecimal"),
        ('[{"hash": "00000001", "identifier": "UI_MENU_START", "text": "a"}]', "t.json", "hashes to"),
        ("index,text\r\n0,a\r\n", "t.csv", "header"),
        ('msgctxt "A"\nmsgid "x"\nmsgstr "y"\n\nmsgctxt "A"\nmsgid "z"\nmsgstr "w"\n', "t.po", "is also at"),
        ("<root><Entry><Hash>x</Hash></Entry></root>", "t.xml", "not a decimal"),
        ("<root><Entry>", "t.xml", "not well-formed"),
    ],
)
def test_bad_translations_are_refused_and_nothing_written(
    tmp_path: Path, content: str, name: str, message: str
) -> None:
    path = sample_file(tmp_path)
    translation = tmp_path / name
    translation.write_text(content, encoding="utf-8")
    output = tmp_path / "new.rfglocatext"
    with pytest.raises(GamepakError, match=message):
        import_locatext(path, translation, output, names=[])
    assert not output.exists()
    code, _, err = in_process_cli("text", "import", str(path), str(translation), "-o", str(output), "--names")
    assert code != 0 and len(err.strip().splitlines()) == 1 and not output.exists()


def test_wrong_encoding_is_named(tmp_path: Path) -> None:
    translation = tmp_path / "t.csv"
    translation.write_bytes("hash,identifier,text\r\n,UI_MENU_START,café\r\n".encode("latin-1"))
    with pytest.raises(GamepakError, match="not UTF-8"):
        load_translation(translation.read_bytes(), "csv", str(translation))
    translation.write_bytes("[]".encode("utf-16"))
    with pytest.raises(GamepakError, match="UTF-16"):
        load_translation(translation.read_bytes(), "json", str(translation))


def test_identifier_colliding_with_a_named_entry_is_refused(tmp_path: Path) -> None:
    first, second = _collision()
    path = tmp_path / "c.rfglocatext"
    path.write_bytes(handmade([(identifier_hash(first), "one")]))
    table = LocaText.parse(path.read_bytes())
    table.name({identifier_hash(first): first})
    with pytest.raises(GamepakError, match="collision"):
        apply_translation(table, [Row(None, second, "two", "row 2")])
    assert table.entries[0].text == "one"


def _collision() -> tuple[str, str]:
    """Two identifiers with one hash: a well-known CRC-32 collision."""
    first, second = "PLUMLESS", "buckeroo"
    assert identifier_hash(first) == identifier_hash(second)
    return first, second


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig"])
def test_rfgm_xml_with_a_dtd_is_refused_before_its_entities_expand(encoding: str) -> None:
    # Found by reading: RFGM's XML was read by ElementTree as it was, so a few lines of nested
    # entities grew into a string of megabytes (expat only limits past 8 MiB).
    entities = (
        '<!ENTITY a "'
        + "x" * 1000
        + '">'
        + "".join(f'<!ENTITY {name} "{("&" + previous + ";") * 10}">' for previous, name in zip("abc", "bcd"))
    )
    document = f"<!DOCTYPE root [{entities}]><root><Entry><Hash>1</Hash><String>&d;</String></Entry></root>"
    with pytest.raises(GamepakError, match="DTD"):
        load_translation(document.encode(encoding), "rfgm-xml", "evil.xml")


def test_rfgm_xml_carriage_returns_and_detection_by_content(tmp_path: Path) -> None:
    path = tmp_path / "r.rfglocatext"
    path.write_bytes(handmade([(1, "line\r\nnext <&>"), (2, "")]))
    xml = export_locatext(path, tmp_path / "t.xml", names=[]).data
    assert b"&#xD;" in xml
    renamed = tmp_path / "t.json"  # the content says XML, whatever the name
    renamed.write_bytes(xml)
    import_locatext(path, renamed, tmp_path / "new.rfglocatext", names=[])
    assert (tmp_path / "new.rfglocatext").read_bytes() == path.read_bytes()


def test_rfgm_style_export_with_bom_and_empty_identifiers_gives_the_bytes_back(tmp_path: Path) -> None:
    path = sample_file(tmp_path)
    # As RFGM's XmlWriter writes it: a UTF-8 mark, <Identifier /> for unnamed entries.
    entries = LocaText.parse(path.read_bytes()).entries
    body = "".join(
        f"<Entry><Identifier>{NAMES[i] if i < 2 else ''}</Identifier><Hash>{entry.hash}</Hash>"
        f"<String>{entry.text.replace('&', '&amp;').replace('<', '&lt;')}</String></Entry>"
        for i, entry in enumerate(entries)
    )
    xml = tmp_path / "rfgm.xml"
    xml.write_bytes(b"\xef\xbb\xbf<root>" + body.encode() + b"</root>")
    import_locatext(path, xml, tmp_path / "new.rfglocatext", names=[])
    assert (tmp_path / "new.rfglocatext").read_bytes() == path.read_bytes()


# -- packs ------------------------------------------------------------------------------------


def nested_pack(tmp_path: Path, data: bytes) -> Path:
    inner = tmp_path / "inner.str2_pc"
    with gamepak.create(inner, overwrite=True) as writer:
        writer.add("locatexts_xx_yy.rfglocatext", data)
        writer.add("other.txt", b"hello")
    outer = tmp_path / "misc.vpp_pc"
    with gamepak.create(outer, overwrite=True) as writer:
        writer.add("first.xtbl", b"<r><n>UI_MENU_START</n></r>")
        writer.add("inner.str2_pc", inner.read_bytes())
    inner.unlink()
    return outer


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_member_of_a_nested_pack_round_trip_and_change(tmp_path: Path) -> None:
    data = sample_file(tmp_path).read_bytes()
    pack = nested_pack(tmp_path, data)
    member = "inner.str2_pc/locatexts_xx_yy.rfglocatext"
    assert locate(pack).member == member  # found without naming it
    out = tmp_path / "t.json"
    result = export_locatext(pack, out, member, names=[str(pack)])
    assert result.named == 1
    rows = json.loads(out.read_text(encoding="utf-8"))
    rows[0]["text"] = "Go"
    out.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    new_pack = tmp_path / "new" / "misc.vpp_pc"
    new_pack.parent.mkdir()
    import_locatext(pack, out, new_pack, member, names=[])
    assert [e.text for e in locate(new_pack, member).table.entries] == ["Go", *TEXTS[1:]]
    assert pack_members(new_pack)["first.xtbl"] == pack_members(pack)["first.xtbl"]
    with pytest.raises(GamepakError, match="already exists"):
        import_locatext(pack, out, new_pack, member, names=[])
    # The pack itself as the output: edited in place (crash-safe edit), with --overwrite.
    import_locatext(pack, out, pack, member, names=[], overwrite=True)
    assert locate(pack).table.entries[0].text == "Go"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_cli_export_import_in_a_pack(tmp_path: Path) -> None:
    pack = nested_pack(tmp_path, sample_file(tmp_path).read_bytes())
    out = tmp_path / "t.po"
    code, _, err = in_process_cli("text", "export", str(pack), "-o", str(out), "--names", str(pack))
    assert code == 0 and "1 of 4 strings named" in err
    po = polib.pofile(str(out))
    po[0].msgstr = "Go"
    po.save(str(out))
    new = tmp_path / "new.vpp_pc"
    code, _, err = in_process_cli("text", "import", str(pack), str(out), "-o", str(new))
    assert code == 0 and "1 string changed" in err
    code, _, err = in_process_cli("text", "export", str(pack), "--names", str(pack), "--kind", "blob", "--source")
    assert code != 0


def test_rfg_options_are_refused_for_j2me(tmp_path: Path) -> None:
    blob = tmp_path / "strings.bin"
    blob.write_bytes(b"Hello\0World\0")
    code, _, err = in_process_cli("text", "export", str(blob), "--source", str(blob))
    assert code != 0 and "rfglocatext" in err


# -- property ---------------------------------------------------------------------------------

TEXT = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\0"), max_size=20)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    strings=st.dictionaries(st.integers(0, 0xFFFFFFFF), TEXT, max_size=12),
    form=st.sampled_from(["json", "csv", "po", "rfgm-xml"]),
    edits=st.dictionaries(st.integers(0, 11), TEXT, max_size=3),
)
def test_property_round_trip_through_every_form(
    tmp_path: Path, strings: dict[int, str], form: str, edits: dict[int, str]
) -> None:
    entries = [LocaEntry(hash_value, text.encode("utf-16-le") + b"\0\0") for hash_value, text in strings.items()]
    data = build(entries)
    table = LocaText.parse(data)
    if form == "rfgm-xml" and any(
        (ch < " " and ch not in "\t\n\r") or ch in "\ufffe\uffff" for t in strings.values() for ch in t
    ):
        with pytest.raises(GamepakError, match="cannot be written in XML"):
            dump_translation(table.entries, form)
        return
    exported = dump_translation(table.entries, form)
    rows = load_translation(exported, form)
    apply_translation(table, rows)
    assert table.to_bytes() == data
    if form == "po":
        return  # PO keeps a string when msgstr is empty: edits are tested through JSON
    changed = [(i, text) for i, text in edits.items() if i < len(entries)]
    wanted = [entry.text for entry in LocaText.parse(data).entries]
    for index, text in changed:
        wanted[index] = text
    rows2 = [Row(entry.hash, None, wanted[i], f"row {i}") for i, entry in enumerate(LocaText.parse(data).entries)]
    edited = LocaText.parse(data)
    apply_translation(edited, rows2)
    assert [entry.text for entry in LocaText.parse(edited.to_bytes()).entries] == wanted
    assert [entry.hash for entry in LocaText.parse(edited.to_bytes()).entries] == list(strings)


# -- the real files ---------------------------------------------------------------------------


def test_real_arabic_file_named_from_table_vpp_and_round_trips(tmp_path: Path) -> None:
    arabic = sample("rfg/locatexts_ar_eg.rfglocatext")
    table_pack = sample("vpp/table.vpp_pc")
    data = arabic.read_bytes()
    table = LocaText.parse(data)
    assert len(table) == 7298
    assert table.to_bytes() is data
    names = find_names([str(table_pack)], wanted={entry.hash for entry in table.entries})
    assert table.name(names.identifiers) >= 3900
    assert table.entries[0].identifier == "D01DAN_ZZZ_MIS_SPE_DLC_MIS03_DDAN_CLR_01"
    for form in ("json", "csv", "po", "rfgm-xml"):
        out = tmp_path / f"ar.{form}"
        export_locatext(arabic, out, translation=form, names=[str(table_pack)])
        new = tmp_path / f"ar-{form}.rfglocatext"
        import_locatext(arabic, out, new, translation_kind=form, names=[])
        assert new.read_bytes() == data, form


def test_real_arabic_file_one_string_change(tmp_path: Path) -> None:
    arabic = sample("rfg/locatexts_ar_eg.rfglocatext")
    data = arabic.read_bytes()
    out = tmp_path / "ar.json"
    export_locatext(arabic, out, names=[])
    rows = json.loads(out.read_text(encoding="utf-8"))
    rows[100]["text"] = "تجربة"
    out.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    new_path = tmp_path / "new.rfglocatext"
    import_locatext(arabic, out, new_path, names=[])
    new = new_path.read_bytes()
    old_entries = list(struct.iter_unpack("<III", data[12 : 12 + 12 * 7298]))
    new_entries = list(struct.iter_unpack("<III", new[12 : 12 + 12 * 7298]))
    delta = len(new) - len(data)
    # The change itself is written (a writer that ignored it would pass every check below).
    old_text, new_text = (LocaText.parse(raw).entries[100].text for raw in (data, new))
    assert old_text != "تجربة" and new_text == "تجربة"
    assert delta == 2 * (len("تجربة") - len(old_text))  # UTF-16: two bytes a character here
    assert new_entries[:100] == old_entries[:100]
    assert new_entries[101:] == [(h, o + delta, n) for h, o, n in old_entries[101:]]
    start = old_entries[100][1]
    assert new[12 + 12 * 7298 : start] == data[12 + 12 * 7298 : start]
    assert new[start + old_entries[100][2] + delta :] == data[start + old_entries[100][2] :]


# -- PO reading -------------------------------------------------------------------------------


def _rows(rows: Rows | list[Row]) -> list[tuple[object, ...]]:
    return [(row.hash, row.identifier, row.text, row.fallback, row.where) for row in rows]


def test_po_fast_reader_agrees_with_the_general_one(tmp_path: Path) -> None:
    from gamepak.formats.rfg.locatext.po import _po_entries, _simple_po_rows, rows_from_po

    path = tmp_path / "p.rfglocatext"
    path.write_bytes(handmade([(1, 'tab\there "q" back\\slash\r\nnew'), (2, ""), (3, "x")]))
    table = LocaText.parse(path.read_bytes())
    table.entries[0].identifier = "NAMED"
    text = dump_translation(table.entries, "po", sources={1: "source"}).decode()
    fast = _simple_po_rows(text, "t.po")
    assert fast is not None
    general = rows_from_po(text + '\n#, fuzzy\nmsgctxt "#00000009"\nmsgid "n"\nmsgstr "m"\n', "t.po")
    assert _rows(general)[:3] == _rows(fast)
    assert general[3].text is None  # fuzzy: not taken
    assert [entry.line for entry in _po_entries(text, "t.po")][1:] == [int(row.where.rsplit(" ", 1)[1]) for row in fast]
    assert fast[0].text == 'tab\there "q" back\\slash\r\nnew' and fast[0].identifier == "NAMED"
    # polib reads what gamepak writes
    po = polib.pofile(text)
    assert [entry.msgstr for entry in po] == [entry.text for entry in table.entries]


def test_po_column_reader_agrees_with_the_entry_by_entry_one() -> None:
    from gamepak.formats.rfg.locatext.po import _simple_po_columns, _simple_po_rows_in_order

    entries = [LocaEntry(number, f"s{number}\\\n\t".encode("utf-16-le") + b"\0\0") for number in range(1, 6)]
    entries[2].identifier = "NAMED_TWO"
    exported = dump_translation(entries, "po").decode()
    translated = exported.replace('msgstr ""\n\n#. hash', 'msgstr "x\\"y"\n\n#. hash')
    for text in (exported, translated, exported.replace('"#00000001"', '"#0000001"')):
        columns = _simple_po_columns(text, "t.po")
        in_order = _simple_po_rows_in_order(text, "t.po")
        assert in_order is not None
        if columns is not None:
            assert _rows(list(columns)) == _rows(in_order)
    assert _simple_po_columns(exported, "t.po") is not None and _simple_po_columns(translated, "t.po") is not None
    assert _simple_po_columns(translated, "t.po").texts[1] == 'x"y'  # type: ignore[union-attr]
    # anything irregular goes entry by entry, which names the first problem and its line
    for broken, message in (
        (exported.replace('msgid "s1', 'msgid "\\qs1'), "line 5: unknown escape"),
        (exported.replace('"#00000002"', '""'), "line 9: no msgctxt"),
        (exported.replace('"#00000002"', '"#0000000g"'), "line 9: hash"),
    ):
        assert _simple_po_columns(broken, "t.po") is None
        with pytest.raises(GamepakError, match=message):
            load_translation(broken.encode(), "po", "t.po")


def test_po_written_by_other_tools(tmp_path: Path) -> None:
    text = (
        '# header comment\nmsgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
        '#. a comment\n#: file.c:1\nmsgctxt "UI_MENU_START"\nmsgid ""\n"Sta"\n"rt"\nmsgstr ""\n"Go\\n"\n"on"\n\n'
        '#~ msgctxt "OLD"\n#~ msgid "old"\n#~ msgstr "gone"\n\n'
        'msgctxt "#0000000a"\nmsgid "keep"\nmsgstr ""\n'
    ).replace("\n", "\r\n")
    rows = load_translation(text.encode(), "po", "t.po")
    assert [(row.hash, row.identifier, row.text, row.fallback) for row in rows] == [
        (None, "UI_MENU_START", "Go\non", "Start"),
        (10, None, None, "keep"),
    ]
    with pytest.raises(GamepakError, match="plural forms"):
        load_translation(b'msgctxt "A"\nmsgid "a"\nmsgid_plural "as"\nmsgstr[0] "b"\n', "po", "t.po")
    with pytest.raises(GamepakError, match=r"unknown escape \\q"):
        load_translation(b'msgctxt "A"\nmsgid "a"\nmsgstr "\\q"\n', "po", "t.po")
    with pytest.raises(GamepakError, match="line 2: expected a quoted string"):
        load_translation(b'msgctxt "A"\nmsgid a\nmsgstr "b"\n', "po", "t.po")


# -- catalog ----------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_catalog_strings_table(tmp_path: Path) -> None:
    pytest.importorskip("dask")
    pq = pytest.importorskip("pyarrow.parquet")
    from gamepak.catalog import build_catalog

    root = tmp_path / "in"
    root.mkdir()
    data = sample_file(root, "locatexts_de_de.rfglocatext").read_bytes()
    nested_pack(root, data)
    table = b"Hello\0World\0"
    index = struct.pack("<3h", 2, 0, 6)
    (root / "strings.bin").write_bytes(struct.pack("<H", len(table)) + table + struct.pack("<H", len(index)) + index)
    (root / "broken.rfglocatext").write_bytes(_entry_field(data, 0, 2, 3))
    build_catalog([str(root)], str(tmp_path / "out"), scheduler="synchronous")
    rows = pq.read_table(tmp_path / "out" / "strings").to_pylist()
    loose = [row for row in rows if row["archive_path"].endswith("locatexts_de_de.rfglocatext")]
    assert [row["string"] for row in loose] == TEXTS
    assert {row["language"] for row in loose} == {"de_de"} and loose[0]["member"] is None
    assert loose[1]["hash"] == identifier_hash(NAMES[1]) and loose[1]["index"] == 1
    inner = [row for row in rows if row["member"] == "locatexts_xx_yy.rfglocatext"]
    assert [row["string"] for row in inner] == TEXTS
    assert inner[0]["nested_path"].endswith("misc.vpp_pc/inner.str2_pc") and inner[0]["language"] == "xx_yy"
    j2me = [row["string"] for row in rows if row["archive_path"].endswith("strings.bin")]
    assert j2me == ["Hello", "World"]
    assert not [row for row in rows if "broken" in row["archive_path"]]
    errors = pq.read_table(tmp_path / "out" / "archives").to_pylist()
    broken = next(row for row in errors if row["path"].endswith("broken.rfglocatext"))
    assert broken["status"] == "errors" and "odd" in broken["problems"][0]["message"]


def test_readme_translation_query(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    duckdb = pytest.importorskip("duckdb")
    pytest.importorskip("dask")
    pytest.importorskip("pandas")
    from gamepak.catalog import build_catalog

    root = tmp_path / "in"
    root.mkdir()
    english = [(identifier_hash(name), text) for name, text in zip(NAMES, ["Start", "Quit", "Talk", "More"])]
    (root / "locatexts_us_en.rfglocatext").write_bytes(handmade(english))
    german = [english[0], (english[1][0], "Beenden"), english[2]]  # one unchanged, one missing
    (root / "locatexts_de_de.rfglocatext").write_bytes(handmade(german))
    monkeypatch.chdir(tmp_path)
    build_catalog([str(root)], "catalog", scheduler="synchronous")
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Translating", 1)[1].split("\n## ", 1)[0]
    block = next(b.split("```", 1)[0] for b in section.split("```python\n")[1:] if "strings/*.parquet" in b)
    scope: dict[str, object] = {"duckdb": duckdb}
    exec(block, scope)
    assert list(scope["result"]["english"]) == ["Start", "Talk", "More"]  # type: ignore[index]


# -- viewer -----------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_viewer_strings_page(tmp_path: Path) -> None:
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from gamepak.web.app import create_app

    root = tmp_path / "root"
    root.mkdir()
    data = sample_file(root, "locatexts_ar_eg.rfglocatext").read_bytes()
    nested_pack(root, data)
    client = TestClient(create_app(str(root)), base_url="http://127.0.0.1")
    listing = client.get("/browse/locatexts_ar_eg.rfglocatext")
    assert 'href="/strings/locatexts_ar_eg.rfglocatext"' in listing.text
    page = client.get("/strings/locatexts_ar_eg.rfglocatext")
    assert page.status_code == 200 and page.text.count('<td dir="auto">') == 4
    # Named as `text export` names them: misc.vpp_pc beside it holds a table naming the first.
    assert "مرحبا بالعالم" in page.text and f"#{identifier_hash(NAMES[1]):08x}" in page.text
    assert NAMES[0] in page.text and f"#{identifier_hash(NAMES[0]):08x}" not in page.text
    filtered = client.get("/strings/locatexts_ar_eg.rfglocatext", params={"q": "مرحبا"})
    assert filtered.text.count('<td dir="auto">') == 1 and "1 matching" in filtered.text
    by_identifier = client.get("/strings/locatexts_ar_eg.rfglocatext", params={"q": "menu_start"})
    assert by_identifier.text.count('<td dir="auto">') == 1 and "1 matching" in by_identifier.text
    member = "misc.vpp_pc/inner.str2_pc/locatexts_xx_yy.rfglocatext"
    assert f'href="/strings/{member}"' in client.get(f"/browse/{member}").text
    assert client.get(f"/strings/{member}").text.count('<td dir="auto">') == 4
    refused = client.get("/strings/misc.vpp_pc/inner.str2_pc/other.txt")
    assert refused.status_code >= 400 and "neither an RFG localization file" in refused.text


def test_cli_delete_and_stdout(tmp_path: Path) -> None:
    path = sample_file(tmp_path)
    code, out, err = in_process_cli("text", "export", str(path), "--names")
    assert code == 0 and json.loads(out)[1]["text"] == TEXTS[1] and "0 of 4 strings named" in err
    kept = tmp_path / "kept.json"
    kept.write_text(json.dumps(json.loads(out)[:2]), encoding="utf-8")
    new = tmp_path / "new.rfglocatext"
    code, _, err = in_process_cli("text", "import", str(path), str(kept), "-o", str(new), "--names", "--delete")
    assert code == 0 and "2 removed" in err
    assert [entry.text for entry in LocaText.parse(new.read_bytes()).entries] == TEXTS[:2]
    code, _, err = in_process_cli("text", "import", str(path), str(kept), "-o", str(new), "--names")
    assert code != 0 and "already exists" in err


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_pack_output_appears_whole_or_not_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pack = nested_pack(tmp_path, sample_file(tmp_path).read_bytes())
    out = tmp_path / "t.json"
    export_locatext(pack, out, names=[])
    rows = json.loads(out.read_text(encoding="utf-8"))
    rows[0]["text"] = "Go"
    out.write_text(json.dumps(rows), encoding="utf-8")
    target = tmp_path / "new" / "misc.vpp_pc"
    target.parent.mkdir()
    from gamepak.ops.edit import Editor

    def broken_commit(self: Editor) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Editor, "commit", broken_commit)
    with pytest.raises(OSError):
        import_locatext(pack, out, target, names=[])
    assert list(target.parent.iterdir()) == []  # no output, no temporary left behind
    before = pack.read_bytes()
    with pytest.raises(OSError):
        import_locatext(pack, out, pack, names=[], overwrite=True)
    assert pack.read_bytes() == before
