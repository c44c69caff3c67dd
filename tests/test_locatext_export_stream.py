"""A strings export written to a file a block at a time (issue 41): the translation file's text
is never held whole, nor joined into a second copy (the largest allowed `.rfglocatext` took
8.7 bytes of peak memory per input byte as JSON, against a goal of 8). The bytes are those
`dump_translation` makes at once."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_rfg_locatext import handmade

from gamepak.formats.rfg.locatext import LocaText
from gamepak.formats.rfg.locatext.translate import dump_translation
from gamepak.ops.locatext import export_locatext

from conftest import in_process_cli
from streaming_helpers import peak_while


def numbered_strings(count: int) -> bytes:
    return handmade([(number * 7919 + 1, f"string number {number}") for number in range(count)])


@pytest.mark.parametrize("form", ["json", "po", "csv", "rfgm-xml"])
def test_an_export_written_in_blocks_has_the_bytes_made_at_once(tmp_path: Path, form: str) -> None:
    path = tmp_path / "s.rfglocatext"
    path.write_bytes(numbered_strings(9_000))  # past two blocks of 4,096
    out = tmp_path / f"s.{form}"
    result = export_locatext(path, out, translation=form, names=[])
    made = dump_translation(LocaText.parse(path.read_bytes()).entries, form, title="s.rfglocatext")
    assert out.read_bytes() == made
    assert result.data == made  # read back when asked for


def test_a_json_export_to_a_file_never_holds_its_text_whole(tmp_path: Path) -> None:
    # Reading the file costs ~6 times its bytes at its peak; the whole JSON text (1.7 times the
    # file) and its joined copy came on top of what the entries hold: 8.4.
    path = tmp_path / "s.rfglocatext"
    path.write_bytes(numbered_strings(50_000))
    out = tmp_path / "s.json"
    peak = peak_while(lambda: export_locatext(path, out, names=[]))
    assert peak < 7 * path.stat().st_size, peak / path.stat().st_size
    assert out.read_bytes().count(b'"hash"') == 50_000


def test_the_cli_export_to_a_file_writes_the_whole_text(tmp_path: Path) -> None:
    path = tmp_path / "s.rfglocatext"
    path.write_bytes(numbered_strings(5_000))
    code, _, err = in_process_cli("text", "export", str(path), "-o", str(tmp_path / "s.json"), "--names")
    assert code == 0, err
    written = (tmp_path / "s.json").read_bytes()
    assert written == dump_translation(LocaText.parse(path.read_bytes()).entries, "json")
