"""Issue 42 item 4: outputs and messages. Every command that writes a file creates its folder
(or refuses in one line naming it); a pack's patch given a folder finds the pack it fits; a
missing input is named as missing; no Python exception name or library wording reaches the
command line; plurals are right; every JSON file is indented like every --json; each note is
printed once."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_rfg_xtbl import weapons

import gamepak
from gamepak.formats.j2me.string_tables import build_text_pack, encode_string

from conftest import in_process_cli
from web_fixtures import cube_joe


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    with gamepak.create(tmp_path / "a.pak") as pak:
        pak.add("a.txt", b"a" * 100)
        pak.add("b.txt", b"b")
    with gamepak.create(tmp_path / "b.pak") as pak:
        pak.add("a.txt", b"A" * 100)
        pak.add("b.txt", b"b")
    (tmp_path / "cube.joe").write_bytes(cube_joe())
    (tmp_path / "strings.bin").write_bytes(build_text_pack([encode_string(t, i) for i, t in enumerate(["a", "b"])]))
    (tmp_path / "weapons.xtbl").write_bytes(weapons())
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --- every output's folder is made ------------------------------------------------------------

WRITERS = [
    ["create", "new/deeper/x.pak", "a.pak"],
    ["convert", "a.pak", "new/deeper/a.zip"],
    ["model", "export", "cube.joe", "-o", "new/deeper/cube.glb"],
    ["model", "export", "cube.joe", "-o", "new/deeper/cube.gltf"],
    ["model", "render", "cube.joe", "-o", "new/deeper/cube.png", "--size", "32"],
    ["text", "export", "strings.bin", "-o", "new/deeper/strings.json"],
    ["patch", "make", "a.pak", "b.pak", "-o", "new/deeper/fix.gpatch"],
    ["extract", "a.pak", "-o", "new/deeper"],
    ["table", "export", "weapons.xtbl", "-o", "new/deeper"],
]


@pytest.mark.parametrize("arguments", WRITERS, ids=lambda words: " ".join(words[:2]))
def test_every_output_gets_its_folder(work: Path, arguments: list[str]) -> None:
    code, _, err = in_process_cli(*arguments)
    assert code == 0, err
    assert (work / "new" / "deeper").is_dir() and any((work / "new" / "deeper").iterdir())


def test_model_import_and_text_import_make_their_folder(work: Path) -> None:
    assert in_process_cli("model", "export", "cube.joe", "-o", "cube.obj")[0] == 0
    code, _, err = in_process_cli("model", "import", "cube.obj", "-o", "new/cube.joe")
    assert code == 0 and (work / "new" / "cube.joe").is_file(), err
    assert in_process_cli("text", "export", "strings.bin", "-o", "s.json")[0] == 0
    code, _, err = in_process_cli("text", "import", "strings.bin", "s.json", "-o", "other/s.bin")
    assert code == 0 and (work / "other" / "s.bin").is_file(), err


def test_a_failed_command_leaves_no_folder_and_a_file_in_the_way_is_named(work: Path) -> None:
    code, _, err = in_process_cli("create", "new/deeper/x.pak", "missing.txt")
    assert code == 1 and "missing.txt" in err and not (work / "new").exists(), err
    (work / "afile").write_bytes(b"")
    code, _, err = in_process_cli("convert", "a.pak", "afile/sub/a.zip")
    assert code == 1 and len(err.splitlines()) == 1 and "afile/sub: cannot create the folder" in err, err


# --- a pack's patch given a folder -----------------------------------------------------------


def test_a_packs_patch_given_the_folder_finds_its_pack(work: Path) -> None:
    assert in_process_cli("patch", "make", "a.pak", "b.pak", "-o", "fix.gpatch")[0] == 0
    game = work / "game"
    game.mkdir()
    (game / "a.pak").write_bytes((work / "a.pak").read_bytes())
    (game / "other.pak").write_bytes((work / "b.pak").read_bytes())  # already modded: does not fit
    code, _, err = in_process_cli("patch", "apply", "game", "fix.gpatch")
    assert code == 0 and "fits game/a.pak" in err, err
    assert gamepak.open(game / "a.pak").read("a.txt") == b"A" * 100
    assert in_process_cli("patch", "revert", "game/a.pak")[0] == 0
    (game / "copy.pak").write_bytes((work / "a.pak").read_bytes())
    code, _, err = in_process_cli("patch", "check", "game", "fix.gpatch")
    assert code == 1 and "game/a.pak" in err and "game/copy.pak" in err and "one pack, not a folder" not in err, err
    empty = work / "empty"
    empty.mkdir()
    code, _, err = in_process_cli("patch", "apply", "empty", "fix.gpatch")
    assert code == 1 and "no pack in this folder" in err, err


# --- a missing input is missing --------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments",
    [
        ["patch", "apply", "nowhere", "fix.gpatch"],
        ["patch", "revert", "nowhere"],
        ["texture", "ls", "gone.cpeg_pc"],
        ["texture", "export", "gone.cpeg_pc", "-o", "out"],
        ["add", "gone.pak", "notes.txt"],
        ["table", "import", "gone.xtbl", "sheets"],
    ],
    ids=lambda words: " ".join(words[:2]),
)
def test_a_missing_input_is_named_as_missing(work: Path, arguments: list[str]) -> None:
    assert in_process_cli("patch", "make", "a.pak", "b.pak", "-o", "fix.gpatch")[0] == 0
    (work / "sheets").mkdir()
    code, _, err = in_process_cli(*arguments)
    missing = next(word for word in arguments if word.startswith(("gone", "nowhere")))
    # `no such pack or folder` (patch), or the line of any input that cannot be read
    # (`cannot read: No such file or directory`: errors.cannot_read).
    assert code == 1 and re.search(rf"{missing}: (cannot read: )?no such", err, re.IGNORECASE), err
    assert len(err.splitlines()) == 1, err
    assert "data/" not in err and "partner" not in err, err


# --- no Python in the messages ---------------------------------------------------------------


def test_no_exception_name_or_library_wording(work: Path) -> None:
    (work / "notes.gltf").write_text("remember the milk\n")
    code, _, err = in_process_cli("model", "import", "notes.gltf", "-o", "x.joe")
    assert code == 1 and "Error" not in err and "not JSON" in err and "line 1, column 1" in err, err
    (work / "odd.dat").write_bytes(bytes(range(7, 100)))
    for arguments in (["ls", "odd.dat"], ["create", "x.weird", "notes.txt"], ["detect", "odd.dat"]):
        code, out, err = in_process_cli(*arguments)
        assert "format=" not in err + out and "pass " not in err, (arguments, err)
    code, _, err = in_process_cli("ls", "odd.dat")
    assert code == 1 and "--format" in err, err


def test_the_library_keeps_its_own_advice(work: Path) -> None:
    (work / "odd.dat").write_bytes(bytes(range(7, 100)))
    with pytest.raises(gamepak.errors.UnknownFormatError, match=r"format=\.\.\."):
        gamepak.open(work / "odd.dat")


# --- plurals ---------------------------------------------------------------------------------


def test_plurals(work: Path) -> None:
    code, _, err = in_process_cli("patch", "make", "a.pak", "b.pak", "-o", "fix.gpatch")
    assert code == 0 and ": 1 operation, " in err, err
    (work / "game.pak").write_bytes((work / "a.pak").read_bytes())
    code, _, err = in_process_cli("patch", "apply", "game.pak", "fix.gpatch")
    assert "1 operation applied" in err, err
    code, out, _ = in_process_cli("rm", "a.pak", "a.txt", "--dry-run")
    assert "1 change planned" in out and "change(s)" not in out, out
    assert in_process_cli("table", "export", "weapons.xtbl", "-o", "sheets")[0] == 0
    sheet = work / "sheets" / "weapons.xtbl.csv"
    sheet.write_text(sheet.read_text(encoding="utf-8-sig").replace("pistol,16,", "pistol,17,"), encoding="utf-8-sig")
    code, _, err = in_process_cli("table", "import", "weapons.xtbl", "sheets", "--dry-run")
    assert code == 0 and "1 change to make" in err and "change changed" not in err, err
    code, _, err = in_process_cli("table", "import", "weapons.xtbl", "sheets")
    assert code == 0 and "1 change made" in err, err


# --- one JSON indent -------------------------------------------------------------------------


def _indent(path: Path) -> int:
    """The indent of the first indented line of a JSON file."""
    for line in path.read_text(encoding="utf-8-sig").splitlines()[1:]:
        stripped = line.lstrip(" ")
        if len(stripped) != len(line):
            return len(line) - len(stripped)
    raise AssertionError(f"{path}: not indented")


def test_every_json_file_is_indented_like_every_json_output(work: Path) -> None:
    written = {
        "text export": (["text", "export", "strings.bin", "-o", "s.json"], "s.json"),
        "table export --as json": (
            ["table", "export", "weapons.xtbl", "-o", "t", "--as", "json"],
            "t/weapons.xtbl.json",
        ),
        "extract --manifest": (["extract", "a.pak", "-o", "x", "--manifest"], "x/.gamepak-manifest.json"),
        "model export .gltf": (["model", "export", "cube.joe", "-o", "cube.gltf"], "cube.gltf"),
    }
    for what, (arguments, output) in written.items():
        code, _, err = in_process_cli(*arguments)
        assert code == 0, (what, err)
        assert _indent(work / output) == 2, what
        json.loads((work / output).read_text(encoding="utf-8-sig"))
    _, out, _ = in_process_cli("info", "--json", "a.pak")
    assert out.splitlines()[1].startswith('  "') and not out.splitlines()[1].startswith("   ")


# --- each note once --------------------------------------------------------------------------


def test_each_note_is_printed_once(capsys: pytest.CaptureFixture[str]) -> None:
    from gamepak.cli.patch import _say_notes

    class TwoPatchesOfOneMod:
        def notes(self) -> list[str]:
            return ["mod/readme.txt: ignored", "mod/readme.txt: ignored", "data/x: kept"]

    _say_notes(TwoPatchesOfOneMod())
    assert capsys.readouterr().err.splitlines() == [
        "gamepak: note: mod/readme.txt: ignored",
        "gamepak: note: data/x: kept",
    ]
