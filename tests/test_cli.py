"""The command line: output, JSON, exit codes, no tracebacks."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gamepak

from conftest import in_process_cli, run_cli


@pytest.fixture
def pak(tmp_path: Path) -> Path:
    path = tmp_path / "mod.pak"
    with gamepak.create(path) as writer:
        writer.add("maps/e1m1.bsp", b"IBSP" + bytes(100))
        writer.add("sound/a.wav", b"RIFF")
        writer.add("progs.dat", b"\x06\x00")
    return path


def test_ls_plain_long_and_json(pak: Path) -> None:
    code, out, _ = in_process_cli("ls", str(pak))
    assert code == 0 and out.splitlines() == ["maps/e1m1.bsp", "sound/a.wav", "progs.dat"]
    code, out, _ = in_process_cli("ls", "-l", str(pak))
    assert code == 0 and "104" in out.splitlines()[1]
    code, out, _ = in_process_cli("ls", "--json", str(pak))
    rows = json.loads(out)
    assert [row["name"] for row in rows] == ["maps/e1m1.bsp", "sound/a.wav", "progs.dat"]
    assert rows[0]["size"] == 104 and rows[0]["offset"] == 12 and rows[0]["stored_size"] == 104


def test_info_json(pak: Path) -> None:
    code, out, _ = in_process_cli("info", "--json", str(pak))
    info = json.loads(out)
    assert code == 0 and info["format"] == "pak" and info["members"] == 3
    assert info["header"]["directory_offset"] == 12 + 104 + 4 + 2


def test_extract_globs_and_cat(pak: Path, tmp_path: Path) -> None:
    code, _, err = in_process_cli("extract", str(pak), "maps/*", "*.dat", "-o", str(tmp_path / "o"))
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "o").rglob("*") if p.is_file()) == ["e1m1.bsp", "progs.dat"]
    result = run_cli("cat", str(pak), "sound/a.wav")
    assert result.returncode == 0 and result.stdout == b"RIFF"


def test_create_from_folder_is_sorted_and_deterministic(tmp_path: Path) -> None:
    folder = tmp_path / "src"
    (folder / "b").mkdir(parents=True)
    (folder / "b" / "z.txt").write_text("z")
    (folder / "a.txt").write_text("a")
    (folder / "c.txt").write_text("c")
    assert in_process_cli("create", str(tmp_path / "one.pak"), str(folder))[0] == 0
    assert in_process_cli("create", str(tmp_path / "two.pak"), str(folder))[0] == 0
    assert (tmp_path / "one.pak").read_bytes() == (tmp_path / "two.pak").read_bytes()
    assert gamepak.open(tmp_path / "one.pak").namelist() == ["a.txt", "b/z.txt", "c.txt"]
    code, _, err = in_process_cli("create", str(tmp_path / "one.pak"), str(folder))
    assert code == 1 and "already exists" in err
    code, _, _ = in_process_cli(
        "create", "--format", "jpk", str(tmp_path / "three.bin"), str(folder), "-O", "name_field_size=40"
    )
    assert code == 0 and gamepak.open(tmp_path / "three.bin").header_fields()["name_field_size"] == 40


def test_exit_codes_and_one_line_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pak"
    bad.write_bytes(b"PACK\xff\xff\xff\x7f\x40\x00\x00\x00")
    result = run_cli("ls", str(bad))
    assert result.returncode == 1
    assert result.stderr.decode().count("\n") == 1 and b"Traceback" not in result.stderr
    assert str(bad).encode() in result.stderr and b"offset" in result.stderr
    assert run_cli("ls", str(tmp_path / "missing.pak")).returncode == 1
    assert run_cli("frobnicate").returncode == 2
    assert run_cli("ls").returncode == 2
    assert run_cli("create", str(tmp_path / "x.pak")).returncode == 2
    unknown = tmp_path / "notes.txt"
    unknown.write_text("plain text here")
    result = run_cli("ls", str(unknown))
    assert result.returncode == 1 and b"--format" in result.stderr


def test_verify_reports_problems(tmp_path: Path, pak: Path) -> None:
    assert in_process_cli("verify", str(pak))[0] == 0
    data = bytearray(pak.read_bytes())
    data[-4:] = (10_000).to_bytes(4, "little")
    broken = tmp_path / "broken.pak"
    broken.write_bytes(bytes(data))
    code, _, err = in_process_cli("verify", str(broken))
    assert code == 1 and "progs.dat" in err


def test_detect_and_forced_format(pak: Path) -> None:
    joepack = pak.parent / "models.jpk"
    with gamepak.create(joepack) as writer:
        writer.add("testlist.txt", b"This is\na test.\n")
    code, out, _ = in_process_cli("detect", "--json", str(pak), str(joepack))
    results = json.loads(out)
    assert code == 0 and [r["formats"][0]["format"] for r in results] == ["pak", "jpk"]
    code, _, err = in_process_cli("--format", "jpk", "ls", str(pak))
    assert code == 1 and "JoePack" in err


def test_help_is_complete() -> None:
    code, out, _ = in_process_cli("--help")
    assert code == 0
    for command in ["ls", "info", "extract", "cat", "create", "detect", "verify", "formats"]:
        assert command in out
        sub_code, sub_out, _ = in_process_cli(command, "--help")
        assert sub_code == 0 and f"usage: gamepak {command}" in sub_out


@pytest.mark.parametrize(
    "spelling", [["--help"], ["-h"], ["--he"], ["-qh"], ["--format", "pak", "--hel"], ["-q", "--help", "ls"]]
)
def test_help_lists_every_command_however_it_is_asked_for(spelling: list[str]) -> None:
    """A run without -h/--help builds no help line for the commands it does not run
    (`build_parser(listed=False)`); every way of asking for help still lists them all."""
    from gamepak.cli import COMMANDS

    code, out, _ = in_process_cli(*spelling)
    assert code == 0
    listed = [line.split()[0] for line in out.splitlines() if line.startswith("    ") and line[4] != " "]
    # (With a command word after the help, that command's module declares its commands last.)
    assert sorted(listed) == sorted(name for names in COMMANDS.values() for name in names)


def test_a_run_without_help_makes_no_help_lines_but_knows_every_command() -> None:
    from gamepak.cli import COMMANDS, build_parser

    commands = _commands(build_parser("ls", listed=False))
    assert [action.dest for action in commands._choices_actions] == ["ls"]
    assert sorted(commands.choices) == sorted(name for names in COMMANDS.values() for name in names)
    code, _, err = in_process_cli("lst", "a.pak")
    assert code == 2 and "invalid choice: 'lst'" in err and "'catalog-diff'" in err


def test_version_is_fast_path() -> None:
    result = run_cli("--version")
    assert result.returncode == 0 and result.stdout.startswith(b"gamepak ")


def test_format_option_after_the_command(pak: Path) -> None:
    code, _, err = in_process_cli("ls", "--format", "jpk", str(pak))
    assert code == 1 and "JoePack" in err
    assert in_process_cli("ls", "--format", "pak", str(pak))[0] == 0


def test_make_run_demo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gamepak.demo import main

    assert main([str(tmp_path / "demo")]) == 0
    assert "demo finished" in capsys.readouterr().out
    assert (tmp_path / "demo" / "crate.png").stat().st_size > 0


def _commands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    """The parser's one action of subcommands (argparse keeps it among its private `_actions`)."""
    (found,) = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    return found


def test_the_command_table_matches_what_the_modules_declare() -> None:
    """cli.COMMANDS says which module declares each command (a run imports only that one)."""
    from gamepak.cli import COMMANDS, build_parser

    parser = build_parser("*")
    declared = list(_commands(parser).choices)
    assert declared == [name for names in COMMANDS.values() for name in names]
    summaries = {action.dest: action.help for action in _commands(parser)._choices_actions}
    assert summaries == {name: summary for names in COMMANDS.values() for name, summary in names.items()}
    # `gamepak --help` lists every command, importing none of their modules.
    assert [a.dest for a in _commands(build_parser(None))._choices_actions] == declared
    for module, names in COMMANDS.items():
        for name in names:
            only = build_parser(name)
            built = _commands(only)._name_parser_map
            assert isinstance(built[name], argparse.ArgumentParser), (module, name)


def test_help_wraps_to_the_terminal_without_textwrap() -> None:
    # argparse wraps help through textwrap, whose regular expressions cost more than the rest of
    # `--help` (issue 17): gamepak's formatter wraps at spaces itself, within $COLUMNS.
    probe = (
        "import sys; from gamepak.cli import main; code = main(['extract', '--help']); "
        "print('textwrap imported' if 'textwrap' in sys.modules else 'no textwrap')"
    )
    env = {**os.environ, "COLUMNS": "60"}
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    lines = result.stdout.splitlines()
    assert lines[-1] == "no textwrap"
    options = lines[lines.index("options:") + 1 : -1]
    assert options and all(len(line) <= 58 for line in options), [line for line in options if len(line) > 58]
    # Each option's help is whole: its words in order, spread over the lines that follow it.
    # The help column is where `--help`'s help starts (argparse's layout differs between versions).
    column = next(line.index("show this help") for line in options if "show this help" in line)
    words = " ".join(line[column:].strip() for line in options if line.startswith(" " * column)).split()
    assert "so that 'gamepak create' rebuilds the archive byte for byte" in " ".join(words)


def test_the_console_script_exits_through_run(tmp_path: Path) -> None:
    """`gamepak` (and `python -m gamepak`) end through `cli.run`, which freezes the run's objects
    out of the last garbage collection (issue 17: a seventh of a short command's time) and
    otherwise exits as usual: output flushed, atexit handlers run, the exit code kept."""
    import tomllib

    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"]["gamepak"] == "gamepak.cli:run"
    pak = tmp_path / "a.pak"
    with gamepak.create(pak) as writer:
        writer.add("maps/e1m1.bsp", b"x")
    probe = (
        "import atexit, sys; atexit.register(lambda: print('atexit ran', file=sys.stderr)); "
        "from gamepak.cli import run; sys.argv[1:] = sys.argv[2:]; run()"
    )
    listed = subprocess.run([sys.executable, "-c", probe, "-", "ls", str(pak)], capture_output=True, text=True)
    assert (listed.returncode, listed.stdout, listed.stderr) == (0, "maps/e1m1.bsp\n", "atexit ran\n")
    missing = subprocess.run(
        [sys.executable, "-m", "gamepak", "ls", str(tmp_path / "none.pak")], capture_output=True, text=True
    )
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1 and "none.pak" in missing.stderr
