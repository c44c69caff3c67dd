"""Issue 42 item 3 (the command pointers): `info`, `detect`, `verify`, `ls` and the content verbs
on a content file point to the command that takes it, or take it themselves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from quake_bytes import wal_bytes
from test_rfg_locatext import handmade

from conftest import in_process_cli
from web_fixtures import peg_pair


@pytest.fixture
def wal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Quake II .wal that, as real ones can, also fits two J2ME packs' loose structure."""
    from gamepak.core import opening

    path = tmp_path / "wall.wal"
    path.write_bytes(wal_bytes(16, 16))
    real_detect = opening.detect

    def detect(file: object, *, name: str | None = None) -> list[opening.Detection]:
        if str(file) != str(path):
            return real_detect(file, name=name)  # type: ignore[arg-type]
        return [opening.Detection("j2me-table", 0.5, False), opening.Detection("j2me-end-offsets", 0.5, False)]

    monkeypatch.setattr(opening, "detect", detect)
    return path


def test_info_of_a_wal_points_to_the_texture_command(wal: Path) -> None:
    code, _, err = in_process_cli("info", str(wal))
    assert code == 1 and "gamepak texture export" in err and "several formats" not in err, err
    assert len(err.splitlines()) == 1


def test_detect_of_a_wal_points_to_the_texture_command(wal: Path) -> None:
    code, out, _ = in_process_cli("detect", str(wal))
    assert code == 1 and "texture export" in out and "j2me" not in out, out
    code, out, _ = in_process_cli("detect", "--json", str(wal))
    (result,) = json.loads(out)
    assert result["formats"] == [] and "texture export" in result["other_command"], result


def test_verify_of_a_loose_peg_pair_verifies_it(tmp_path: Path) -> None:
    cpu, gpu, _ = peg_pair()
    (tmp_path / "crate.cpeg_pc").write_bytes(cpu)
    (tmp_path / "crate.gpeg_pc").write_bytes(gpu)
    code, out, err = in_process_cli("verify", str(tmp_path / "crate.cpeg_pc"))
    assert code == 0 and "OK (2 textures)" in out and "not a pack" not in err, (out, err)
    (tmp_path / "crate.gpeg_pc").write_bytes(gpu[:10])
    code, out, err = in_process_cli("verify", str(tmp_path / "crate.cpeg_pc"))
    assert code == 1 and "GPU file" in err and "not a pack" not in err, err
    (tmp_path / "crate.gpeg_pc").unlink()
    code, _, err = in_process_cli("verify", str(tmp_path / "crate.cpeg_pc"))
    assert code == 1 and "crate.gpeg_pc" in err, err


def test_table_ls_of_strings_names_the_text_command(tmp_path: Path) -> None:
    locatext = tmp_path / "locatexts_xx_yy.rfglocatext"
    locatext.write_bytes(handmade([(0x5A3C91F0, "Hello")]))
    for verb in ("ls", "check"):
        code, out, err = in_process_cli("table", verb, str(locatext))
        assert code == 1 and out == "" and "holds strings" in err and "gamepak text export" in err, err


def test_text_export_refuses_plain_text_in_one_line(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("remember the milk\nand the bread\n")
    code, out, err = in_process_cli("text", "export", str(notes))
    assert code == 1 and out == "" and "not a strings file" in err and len(err.splitlines()) == 1, err
    code, _, err = in_process_cli("text", "export", str(notes), "-o", str(tmp_path / "notes.json"))
    assert code == 1 and not (tmp_path / "notes.json").exists(), err
