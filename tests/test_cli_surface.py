"""What a new user meets first on the command line (issue 31 items 6-8): usage errors with the
sub-command's own usage, invalid option values listing the valid ones, one exit code and an
install command for every missing optional dependency, "equal" from diff, progress on a terminal."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

import gamepak
from gamepak.errors import EXIT_BAD_INPUT, EXIT_OK, EXIT_USAGE, MissingDependencyError, exit_code_for

from conftest import in_process_cli


def _pack(path: Path, members: dict[str, bytes] | None = None) -> Path:
    with gamepak.create(path, overwrite=True) as writer:
        for name, data in (members or {"a.txt": b"a"}).items():
            writer.add(name, data)
    return path


# --- item 8: usage errors -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "usage"),
    [
        (["ls", "--bogus", "x.pak"], "usage: gamepak ls "),
        (["texture", "ls", "--bogus", "x.cpeg_pc"], "usage: gamepak texture ls "),
        (["model", "info", "m.joe", "--bogus"], "usage: gamepak model info "),
        (["patch", "check", "--bogus", "a", "b"], "usage: gamepak patch check "),
    ],
)
def test_an_unknown_option_prints_the_subcommands_usage(arguments: list[str], usage: str) -> None:
    code, _, err = in_process_cli(*arguments)
    assert code == EXIT_USAGE
    assert usage in err and "unrecognized arguments: --bogus" in err, err
    assert "COMMAND ..." not in err.splitlines()[0], err


def test_an_invalid_texture_format_exits_2_listing_the_formats(tmp_path: Path) -> None:
    code, _, err = in_process_cli(
        "texture", "add", str(tmp_path / "x.cpeg_pc"), str(tmp_path / "a.png"), "--name", "a", "--format", "BOGUS"
    )
    assert code == EXIT_USAGE, err
    assert "BOGUS" in err and all(label in err for label in ("DXT1", "DXT5", "8888", "A8")), err


def test_an_invalid_choice_exits_2_listing_the_choices() -> None:
    code, _, err = in_process_cli("ls", "--format", "bogus", "x")
    assert code == EXIT_USAGE and "pak" in err and "zip" in err, err


# --- item 8: missing optional dependencies --------------------------------------------------


def test_a_missing_dependency_is_exit_1_like_every_refusal() -> None:
    assert exit_code_for(MissingDependencyError("x is missing: pip install x")) == EXIT_BAD_INPUT


def test_catalog_without_dask_names_the_install_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "dask" else real_find_spec(name, *a)
    )
    _pack(tmp_path / "a.pak")
    code, _, err = in_process_cli("catalog", str(tmp_path / "a.pak"), "-o", str(tmp_path / "out.catalog"))
    assert code == EXIT_BAD_INPUT, err
    assert "dask" in err and "pip install 'gamepak[catalog]'" in err and len(err.strip().splitlines()) == 1, err


def _without_fuse(monkeypatch: pytest.MonkeyPatch) -> None:
    from gamepak.fs import fuse

    def missing() -> None:
        raise fuse.FuseUnavailableError(f"libfuse 3 is not installed or too old: {fuse.INSTALL_HINT}")

    monkeypatch.setattr(fuse, "load_fuse", missing)


def test_mount_without_libfuse_names_the_package_and_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _without_fuse(monkeypatch)
    (tmp_path / "mnt").mkdir()
    code, _, err = in_process_cli("mount", str(_pack(tmp_path / "a.pak")), str(tmp_path / "mnt"))
    assert code == EXIT_BAD_INPUT, err
    assert "apt-get install fuse3" in err and len(err.strip().splitlines()) == 1, err


def test_mount_says_a_missing_input_is_missing_even_without_libfuse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _without_fuse(monkeypatch)
    (tmp_path / "mnt").mkdir()
    code, _, err = in_process_cli("mount", str(tmp_path / "nowhere.pak"), str(tmp_path / "mnt"))
    assert code == EXIT_BAD_INPUT, err
    assert "nowhere.pak" in err and "fuse" not in err.lower(), err


# --- item 7: diff says "equal" -------------------------------------------------------------


def test_diff_of_equal_inputs_says_equal(tmp_path: Path) -> None:
    a = _pack(tmp_path / "a.pak")
    code, out, err = in_process_cli("diff", str(a), str(a))
    assert code == EXIT_OK
    assert out.strip() == "equal", (out, err)


def test_diff_quiet_says_nothing(tmp_path: Path) -> None:
    a = _pack(tmp_path / "a.pak")
    b = _pack(tmp_path / "b.pak", {"a.txt": b"b"})
    assert in_process_cli("diff", "--quiet", str(a), str(a)) == (EXIT_OK, "", "")
    code, out, err = in_process_cli("diff", "-q", str(a), str(b))
    assert code == 3 and out == "" and err == ""


# --- item 6: one progress rule ---------------------------------------------------------------


class _Terminal(io.StringIO):
    """stderr as a terminal."""

    def isatty(self) -> bool:
        return True


def _cli_on_a_terminal(monkeypatch: pytest.MonkeyPatch, *arguments: str) -> tuple[int, list[str]]:
    """Run the CLI with stderr a terminal: (exit code, labels of the progress lines it started)."""
    from gamepak.cli import common, main

    started: list[str] = []
    real_enter = common.counting_bar.__enter__

    def enter(self: common.counting_bar) -> object:
        advance = real_enter(self)
        if advance is not None:
            started.append(self.label)
        return advance

    monkeypatch.setattr(common.counting_bar, "__enter__", enter)
    monkeypatch.setattr(sys, "stderr", _Terminal())
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding="utf-8"))
    return main(list(arguments)), started


def _progress_cases(tmp_path: Path) -> list[tuple[list[str], str]]:
    a = _pack(tmp_path / "a.pak", {"a.txt": b"a" * 100, "b.txt": b"b"})
    b = _pack(tmp_path / "b.pak", {"a.txt": b"A" * 100, "c.txt": b"c"})
    game = _pack(tmp_path / "game.pak", {"a.txt": b"a" * 100, "b.txt": b"b"})
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "a.txt").write_bytes(b"changed")
    patch = tmp_path / "p.gpatch"
    assert in_process_cli("patch", "make", str(a), str(b), "-o", str(patch))[0] == 0
    return [
        (["convert", str(a), str(tmp_path / "a.zip")], "converting"),
        (["diff", str(a), str(b)], "comparing"),
        (["verify", str(a)], "verifying"),
        (["update", str(b), str(folder)], "writing"),
        (["patch", "apply", str(game), str(patch)], "applying"),
        (["patch", "revert", str(game)], "reverting"),
    ]


def test_every_long_command_shows_progress_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for arguments, label in _progress_cases(tmp_path):
        code, started = _cli_on_a_terminal(monkeypatch, *arguments)
        assert code in (0, 3) and label in started, (arguments, code, started)


def test_no_progress_with_quiet_or_into_a_pipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for arguments, _ in _progress_cases(tmp_path):
        code, started = _cli_on_a_terminal(monkeypatch, "--quiet", *arguments)
        assert code in (0, 3) and started == [], (arguments, started)
    from gamepak.cli import common

    common.QUIET = False
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # a pipe
    assert not common.shows_progress()


def test_a_ticking_line_moves_without_items(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from gamepak.cli import common

    common.QUIET = False
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    bar = common.counting_bar("applying", delay=0, ticking=True)
    with bar as advance:
        assert advance is not None
        deadline = time.monotonic() + 10
        while bar._bar is None and time.monotonic() < deadline:
            time.sleep(0.05)
    assert bar._bar is not None and bar.done == 0  # drawn by the ticking thread alone
    quick = common.counting_bar("quick", delay=60, ticking=True)
    with quick:
        time.sleep(0.2)
    assert quick._bar is None
