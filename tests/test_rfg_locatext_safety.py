"""RFG strings from strangers: RFGM XML as its users write it (a new line's hash left 0 or
empty), XML that is no localization, hashes that are not ASCII digits, encodings gamepak does
not read, JSON nested past the one limit (issues 40, 41)."""

from __future__ import annotations

import json
import struct
import tracemalloc
from pathlib import Path

import pytest
from test_rfg_locatext import SIGNATURE, sample_file

from gamepak.errors import CorruptArchiveError, GamepakError
from gamepak.formats.rfg.locatext import LocaText, identifier_hash
from gamepak.formats.rfg.locatext.translate import load_translation
from gamepak.ops.locatext import import_locatext

from conftest import in_process_cli


def _entry(identifier: str, hash_text: str, text: str) -> str:
    return f"<Entry><Identifier>{identifier}</Identifier>{hash_text}<String>{text}</String></Entry>"


@pytest.mark.parametrize("hash_text", ["<Hash>0</Hash>", "<Hash></Hash>", "<Hash />", "", "<Hash> 0 </Hash>"])
def test_a_new_rfgm_entry_with_a_zero_or_empty_hash_gets_its_identifiers_hash(tmp_path: Path, hash_text: str) -> None:
    original = sample_file(tmp_path)
    xml = tmp_path / "new.xml"
    xml.write_text("<root>" + _entry("MY_NEW_LINE", hash_text, "Hello") + "</root>", "utf-8")
    out = tmp_path / "out.rfglocatext"
    result = import_locatext(original, xml, out)
    assert result.applied.added == ["MY_NEW_LINE"]
    table = LocaText.parse(out.read_bytes())
    added = table.entries[-1]
    assert added.hash == identifier_hash("MY_NEW_LINE") and added.text == "Hello"


def test_a_nonzero_hash_that_disagrees_with_its_identifier_stays_refused(tmp_path: Path) -> None:
    xml = tmp_path / "new.xml"
    xml.write_text("<root>" + _entry("MY_NEW_LINE", "<Hash>12345</Hash>", "Hello") + "</root>", "utf-8")
    out = tmp_path / "out.rfglocatext"
    with pytest.raises(GamepakError, match="hashes to #.*not the #00003039 given"):
        import_locatext(sample_file(tmp_path), xml, out)
    assert not out.exists()


@pytest.mark.parametrize(
    "document",
    [
        b"<root><Table><Weapon><Name>x</Name></Weapon></Table></root>",
        b"<Mod><Changes/></Mod>",
        b"<root>text only</root>",
    ],
)
def test_xml_with_no_localization_entry_is_refused_in_one_line(tmp_path: Path, document: bytes) -> None:
    xml = tmp_path / "weapons.xml"
    xml.write_bytes(document)
    out = tmp_path / "out.rfglocatext"
    code, _, err = in_process_cli("text", "import", str(sample_file(tmp_path)), str(xml), "-o", str(out))
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "holds no <Entry>: not a localization" in err and "<root><Entry><Identifier/>" in err
    assert not out.exists()


def test_an_empty_root_is_the_export_of_a_file_without_strings() -> None:
    assert len(load_translation(b"<root>\n</root>", "rfgm-xml", "x.xml")) == 0


@pytest.mark.parametrize(
    "hash_text",
    ["\u00b2", "\u0663", "1" * 5000, "4294967296", "-1", "+5", "1_0", "12345678901", "0x10"],
)
def test_rfgm_hashes_are_ascii_digits_within_a_u32(hash_text: str) -> None:
    document = ("<root>" + _entry("X", f"<Hash>{hash_text}</Hash>", "t") + "</root>").encode()
    with pytest.raises(GamepakError, match="Entry 0: Hash .* is not a decimal u32") as caught:
        load_translation(document, "rfgm-xml", "t.xml")
    assert len(str(caught.value)) < 200


@pytest.mark.parametrize("encoding", ["UTF-7", "Shift_JIS", "EUC-JP", "klingon"])
def test_rfgm_xml_in_an_encoding_not_read_is_one_line_naming_it(tmp_path: Path, encoding: str) -> None:
    xml = tmp_path / "de.xml"
    xml.write_bytes(f'<?xml version="1.0" encoding="{encoding}"?><root>'.encode() + b"</root>")
    code, _, err = in_process_cli("text", "import", str(sample_file(tmp_path)), str(xml), "-o", str(tmp_path / "o"))
    assert code == 1 and f"de.xml: declares encoding '{encoding}', which gamepak does not read" in err
    assert "internal error" not in err


@pytest.mark.parametrize("form", ["json", "j2me"])
def test_json_nested_100000_deep_is_one_line(tmp_path: Path, form: str) -> None:
    deep = tmp_path / "deep.json"
    deep.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    if form == "json":
        target = sample_file(tmp_path)
    else:
        target = tmp_path / "strings.bin"
        target.write_bytes(b"one\0two\0")
    code, _, err = in_process_cli("text", "import", str(target), str(deep), "-o", str(tmp_path / "o"))
    assert code == 1 and "JSON nested more than 256 deep" in err and "internal error" not in err


def test_every_json_reader_shares_one_limit() -> None:
    from gamepak.core import json_input
    from gamepak.formats.rfg.xtbl import json_cells
    from gamepak.ops.patch import container

    assert json_cells.MAX_DEPTH == json_input.MAX_JSON_DEPTH
    with pytest.raises(container.PatchError, match="nested more than 256"):
        container.load_json(b"{" * 300 + b"}" * 300, "patch.json")
    assert json_input.load_json(b"[" * 256 + b"]" * 256, "x") is not None


# -- budgets -------------------------------------------------------------------------------------------


def empty_entries(count: int) -> bytes:
    """An .rfglocatext of `count` empty strings (12 bytes of entry and 2 of NUL each)."""
    table_end = 12 + 12 * count
    entries = b"".join(struct.pack("<III", number, table_end + 2 * number, 2) for number in range(count))
    return SIGNATURE + struct.pack("<II", 3, count) + entries + b"\0\0" * count


def test_two_million_empty_strings_are_refused_before_the_entries_are_built(tmp_path: Path) -> None:
    path = tmp_path / "locatexts_xx_yy.rfglocatext"
    path.write_bytes(empty_entries(2_000_000))  # 28 MB, as the campaign's
    for form in ("json", "po"):
        results: list[tuple[int, str, str]] = []
        tracemalloc.start()
        try:
            results.append(in_process_cli("text", "export", str(path), "-o", str(tmp_path / f"t.{form}")))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        code, _, err = results[0]
        assert code == 1 and "string count 2000000, more than the 200000 read; --allow-large lifts this" in err
        assert peak < 2 * path.stat().st_size


def test_allow_large_lifts_the_string_budget(tmp_path: Path) -> None:
    from gamepak.core.content_limits import limits

    data = empty_entries(50)
    with limits(locatext_entries=10), pytest.raises(CorruptArchiveError, match="string count 50, more than the 10"):
        LocaText.parse(data)
    with limits(locatext_entries=10, allow_large=True):
        assert len(LocaText.parse(data)) == 50
    (tmp_path / "x.rfglocatext").write_bytes(data)
    with limits(locatext_entries=10):
        code, out, _ = in_process_cli("text", "export", str(tmp_path / "x.rfglocatext"), "--names", "--allow-large")
    assert code == 0 and len(json.loads(out)) == 50


def test_the_json_export_is_what_json_dumps_writes(tmp_path: Path) -> None:
    from gamepak.formats.rfg.locatext.translate import dump_translation

    table = LocaText.parse(sample_file(tmp_path).read_bytes())
    table.entries[0].identifier = "a\nb"
    rows = [{"hash": f"{e.hash:08x}", "identifier": e.identifier, "text": e.text} for e in table.entries]
    assert dump_translation(table.entries, "json") == (json.dumps(rows, ensure_ascii=False, indent=2) + "\n").encode()
    assert dump_translation([], "json") == b"[]\n"
