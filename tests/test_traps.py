"""The traps a new user hit (issue 13): each test failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import gamepak

from conftest import in_process_cli


@pytest.fixture
def dotted_pak(tmp_path: Path) -> Path:
    path = tmp_path / "dotted.pak"
    with gamepak.create(path) as writer:
        writer.add("./test_data/a.txt", b"a")
        writer.add("./test_data/b.txt", b"bb")
        writer.add("./other.txt", b"o")
    return path


def test_info_reports_a_stored_total_for_uncompressed_packs(dotted_pak: Path) -> None:
    code, out, _ = in_process_cli("info", "--json", str(dotted_pak))
    info = json.loads(out)
    assert code == 0 and info["stored_size"] == info["size"] == 4
    code, out, _ = in_process_cli("info", str(dotted_pak))
    assert "None" not in out


def test_glob_matches_names_with_a_dot_slash_prefix(dotted_pak: Path, tmp_path: Path) -> None:
    code, _, err = in_process_cli("extract", str(dotted_pak), "test_data/*", "-o", str(tmp_path / "out"))
    assert code == 0, err
    written = sorted(p.name for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert written == ["a.txt", "b.txt"]


def test_detect_goes_on_after_a_missing_file(dotted_pak: Path, tmp_path: Path) -> None:
    code, out, err = in_process_cli("detect", "--json", str(tmp_path / "missing.pak"), str(dotted_pak))
    assert code == 1
    results = json.loads(out)
    assert results[1]["formats"][0]["format"] == "pak"
    assert "missing.pak" in err and "error" in results[0]


def test_ambiguous_format_error_names_the_api_parameter(tmp_path: Path) -> None:
    path = tmp_path / "mystery.bin"
    path.write_bytes(b"\xff" * 7)
    with pytest.raises(gamepak.UnknownFormatError) as caught:
        gamepak.open(path)
    assert "format=" in str(caught.value)


def test_open_documents_its_parameters_and_errors() -> None:
    doc = gamepak.open.__doc__ or ""
    for word in ("name", "format", "UnknownFormatError", "AmbiguousFormatError", "CorruptArchiveError"):
        assert word in doc


def test_iter_data_yields_bytes(dotted_pak: Path) -> None:
    with gamepak.open(dotted_pak) as archive:
        pairs = [(entry.name, b"".join(chunks)) for entry, chunks in archive.iter_data()]
    assert pairs == [("./test_data/a.txt", b"a"), ("./test_data/b.txt", b"bb"), ("./other.txt", b"o")]
    for _, data in pairs:
        assert isinstance(data, bytes)


def test_a_handler_exit_code_reaches_the_caller(tmp_path: Path) -> None:
    from gamepak.cli import main

    for name, data in (("a.pak", b"one"), ("b.pak", b"two")):
        with gamepak.create(tmp_path / name) as writer:
            writer.add("x.txt", data)
    assert main(["diff", str(tmp_path / "a.pak"), str(tmp_path / "a.pak")]) == 0
    assert main(["diff", str(tmp_path / "a.pak"), str(tmp_path / "b.pak")]) == 3


def test_verify_checks_a_joe_model_as_a_model(tmp_path: Path) -> None:
    import numpy as np

    from gamepak.models import joe
    from gamepak.models.mesh import Mesh

    positions = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=np.float32)
    corners = np.zeros((1, 3, 3), dtype=np.int64)
    corners[0, :, 0] = [0, 1, 2]
    normals = np.array([[0, 0, 1]], dtype=np.float32)
    texcoords = np.array([[0, 0]], dtype=np.float32)
    good = tmp_path / "tri.joe"
    good.write_bytes(joe.write(Mesh(positions, normals, texcoords, corners)))
    code, out, err = in_process_cli("verify", str(good))
    assert code == 0 and "OK (1 face)" in out, err
    positions[1, 0] = np.nan
    odd = tmp_path / "nan.joe"
    odd.write_bytes(joe.write(Mesh(positions, normals, texcoords, corners)))
    code, out, err = in_process_cli("verify", str(odd))
    assert code == 0 and "warning" in err and "NaN" in err
    assert in_process_cli("verify", "--strict", str(odd))[0] == 1
    truncated = tmp_path / "short.joe"
    truncated.write_bytes(good.read_bytes()[:40])
    code, _, err = in_process_cli("verify", str(truncated))
    assert code == 1 and "short.joe" in err and "Traceback" not in err


@pytest.mark.parametrize("name", ["dir/", ".", "./", "", "a/./"])
def test_writers_refuse_names_that_hold_no_file(tmp_path: Path, name: str) -> None:
    """A name ending in '/' (or naming no file) would become a folder entry in a zip or an
    unreachable member elsewhere: extract never shows it, the data is gone."""
    for suffix in (".zip", ".pak", ".jpk"):
        with gamepak.create(tmp_path / f"out{suffix}") as writer, pytest.raises(gamepak.GamepakError):
            writer.add(name, b"data")
    pak = tmp_path / "p.pak"
    with gamepak.create(pak) as writer:
        writer.add("a.txt", b"a")
    (tmp_path / "f.txt").write_bytes(b"x")
    from gamepak.cli import main

    assert main(["add", str(pak), str(tmp_path / "f.txt"), "--name", "dir/"]) == 1
    with gamepak.open(pak) as archive:
        assert archive.namelist() == ["a.txt"]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_model_import_refuses_non_finite_coordinates(tmp_path: Path, value: str) -> None:
    from gamepak.cli import main

    source = tmp_path / "bad.obj"
    source.write_text(f"v 0 0 0\nv 1 0 0\nv 0 {value} 0\nf 1 2 3\n")
    assert main(["model", "import", str(source), "-o", str(tmp_path / "bad.joe")]) == 1
    assert not (tmp_path / "bad.joe").exists()
