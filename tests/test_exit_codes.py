"""One exit-code table for every command (gamepak.errors.EXIT_CODES): a missing input is 1
everywhere, an output whose format cannot be told is 2 everywhere, a difference is 3."""

from __future__ import annotations

from pathlib import Path

import pytest

import gamepak
from gamepak.cli import COMMANDS
from gamepak.errors import EXIT_BAD_INPUT, EXIT_DIFFERENT, EXIT_OK, EXIT_USAGE

from conftest import in_process_cli

# Each command's arguments with MISSING where an input file goes (OUT: an output path).
MISSING_INPUT = {
    "ls": ["MISSING"],
    "info": ["MISSING"],
    "cat": ["MISSING", "a.txt"],
    "verify": ["MISSING"],
    "extract": ["MISSING", "-o", "OUT"],
    "create": ["OUT.pak", "MISSING"],
    "add": ["PACK", "MISSING"],
    "rm": ["MISSING", "a.txt"],
    "mv": ["MISSING", "a.txt", "b.txt"],
    "update": ["PACK", "MISSING"],
    "compact": ["MISSING"],
    "convert": ["MISSING", "OUT.zip"],
    "diff": ["PACK", "MISSING"],
    "detect": ["MISSING"],
    "model": ["export", "MISSING.joe", "-o", "OUT.glb"],
    "text": ["export", "MISSING", "-o", "OUT.po"],
    "texture": ["ls", "MISSING.cpeg_pc"],
    "table": ["ls", "MISSING.vpp_pc"],
    "zone": ["ls", "MISSING.vpp_pc"],
    "sprite": ["ls", "MISSING.f"],
    "patch": ["info", "MISSING.gpatch"],
    "mount": ["MISSING", "MOUNTPOINT"],
    "unmount": ["MISSING"],
    "catalog": ["MISSING", "-o", "OUT.catalog"],
    "catalog-diff": ["MISSING", "MISSING2"],
    "serve": ["MISSING"],
}
# Commands with no input file to miss.
NO_INPUT = {"formats"}


def _arguments(template: list[str], tmp_path: Path) -> list[str]:
    pack = tmp_path / "pack.pak"
    if not pack.exists():
        with gamepak.create(pack) as writer:
            writer.add("a.txt", b"a")
    (tmp_path / "mnt").mkdir(exist_ok=True)
    names = {"PACK": str(pack), "MOUNTPOINT": str(tmp_path / "mnt")}
    result = []
    for argument in template:
        for placeholder in ("MISSING2", "MISSING", "OUT"):
            if argument.startswith(placeholder):
                argument = str(tmp_path / "nowhere" / (placeholder.lower() + argument[len(placeholder) :]))
                break
        result.append(names.get(argument, argument))
    return result


def test_every_command_is_in_the_table() -> None:
    commands = {name for names in COMMANDS.values() for name in names}
    assert commands == set(MISSING_INPUT) | NO_INPUT


@pytest.mark.parametrize("command", sorted(MISSING_INPUT))
def test_a_missing_input_exits_1_with_one_line(command: str, tmp_path: Path) -> None:
    code, _, err = in_process_cli(command, *_arguments(MISSING_INPUT[command], tmp_path))
    assert code == EXIT_BAD_INPUT, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "nowhere" in lines[0] and "Traceback" not in err, err


@pytest.mark.parametrize(
    "arguments",
    [
        ["create", "OUT.unknown", "FOLDER"],
        ["convert", "PACK", "OUT.unknown"],
        ["model", "export", "MODEL", "-o", "OUT.unknown"],
    ],
)
def test_an_output_format_that_cannot_be_told_exits_2(arguments: list[str], tmp_path: Path) -> None:
    from gamepak.models import Mesh, save

    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "a.txt").write_bytes(b"a")
    save(Mesh.from_vertices([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [(0, 1, 2)]), tmp_path / "m.joe")
    names = {"FOLDER": str(tmp_path / "folder"), "MODEL": str(tmp_path / "m.joe")}
    resolved = [names.get(a, a) for a in _arguments(arguments, tmp_path)]
    resolved = [a.replace(str(tmp_path / "nowhere" / "out"), str(tmp_path / "out")) for a in resolved]
    code, _, err = in_process_cli(*resolved)
    assert code == EXIT_USAGE, err
    assert "cannot tell the format" in err and "--format" in err


def test_diff_answers_equal_different_and_error_apart(tmp_path: Path) -> None:
    a, b = tmp_path / "a.pak", tmp_path / "b.pak"
    for path, data in ((a, b"1"), (b, b"2")):
        with gamepak.create(path) as writer:
            writer.add("x", data)
    assert in_process_cli("diff", str(a), str(a))[0] == EXIT_OK
    assert in_process_cli("diff", str(a), str(b))[0] == EXIT_DIFFERENT
    assert in_process_cli("diff", str(a), str(tmp_path / "missing.pak"))[0] == EXIT_BAD_INPUT


def test_the_table_is_in_the_help_and_the_readme() -> None:
    from gamepak.errors import EXIT_CODES

    _, out, _ = in_process_cli("--help")
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    for code, meaning in EXIT_CODES:
        assert f"{code}" in out and meaning.split(":")[0].split(",")[0] in out
        assert f"| {code} |" in readme, code
