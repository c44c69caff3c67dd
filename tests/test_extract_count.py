"""`gamepak extract` counts what it wrote without a path per member (`ops.extract.extract_tree`):
the paths are made only for `--json`, and `Archive.extractall` still returns them to a library
caller, the same as before."""

from __future__ import annotations

import io
import json
import os
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

import gamepak
from gamepak.cli import main
from gamepak.ops import extract


def _pack(tmp_path: Path, count: int = 30) -> Path:
    path = tmp_path / "p.pak"
    with gamepak.create(path) as writer:
        for index in range(count):
            writer.add(f"d{index % 3}/f{index}.bin", bytes([index]) * (index + 1))
    return path


def _run(*arguments: str) -> tuple[str, str]:
    """(stdout, stderr) of the command (stdout through `sys.stdout.buffer`, as the CLI writes)."""
    out, err = io.BytesIO(), io.StringIO()
    stream = io.TextIOWrapper(out, encoding="utf-8")
    with redirect_stdout(stream), redirect_stderr(err):
        code = main(list(arguments))
    stream.flush()
    stream.detach()
    assert code in (0, None), err.getvalue()
    return out.getvalue().decode("utf-8"), err.getvalue()


def test_the_cli_counts_the_files_without_making_their_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pack = _pack(tmp_path)
    made: list[int] = []
    real = extract.written_paths

    def counted(root: str, keys: list[str]) -> list[str]:
        made.append(len(keys))
        return real(root, keys)

    monkeypatch.setattr(extract, "written_paths", counted)
    _, said = _run("extract", str(pack), "-o", str(tmp_path / "out"))
    assert "extracted 30 members" in said
    assert made == []
    assert sorted(os.listdir(tmp_path / "out")) == ["d0", "d1", "d2"]
    printed, _ = _run("extract", str(pack), "-o", str(tmp_path / "again"), "--json")
    assert made == [30]
    rows = json.loads(printed)["written"]
    assert [row["path"] for row in rows] == [str((tmp_path / "again").resolve() / row["name"]) for row in rows]


def test_extractall_returns_the_paths_it_returned_before(tmp_path: Path) -> None:
    pack = _pack(tmp_path)
    with gamepak.open(pack) as archive:
        names = archive.namelist()
        written = archive.extractall(tmp_path / "out", names[:5])
        every = archive.extractall(tmp_path / "all")
    root = os.path.realpath(tmp_path / "out")
    assert isinstance(written, list)
    assert written == [os.path.join(root, *name.split("/")) for name in names[:5]]
    assert every == [os.path.join(os.path.realpath(tmp_path / "all"), *name.split("/")) for name in names]


def test_the_paths_under_a_root_that_ends_in_a_separator_have_one_separator() -> None:
    assert extract.written_paths(os.sep, ["a/b"]) == [os.path.join(os.sep, "a", "b")]
    assert extract.written_paths(os.path.join(os.sep, "x"), ["a/b", "c"]) == [
        os.path.join(os.sep, "x", "a", "b"),
        os.path.join(os.sep, "x", "c"),
    ]
