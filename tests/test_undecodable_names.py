"""Names that are not UTF-8 (issue 20 finding 1): kept as bytes where the target can hold them,
refused with a clear error where it cannot, and cataloged as raw bytes plus escaped text."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

import gamepak
from gamepak.errors import FormatLimitError

from conftest import in_process_cli


def latin1_pak(path: Path) -> Path:
    data = b"hello"
    record = struct.pack("<56sii", b"caf\xe9.txt", 12, len(data))
    path.write_bytes(struct.pack("<4sii", b"PACK", 12 + len(data), len(record)) + data + record)
    return path


def test_a_latin1_name_travels_as_bytes_where_the_target_can_hold_it(tmp_path: Path) -> None:
    pak = latin1_pak(tmp_path / "cafe.pak")
    name = b"caf\xe9.txt".decode("utf-8", "surrogateescape")
    assert gamepak.open(pak).namelist() == [name]
    for target in ("out.tar", "out.jpk", "out.vpp_pc", "again.pak"):
        gamepak.convert(pak, tmp_path / target)
        with gamepak.open(tmp_path / target) as archive:
            assert archive.namelist() == [name] and archive.read(name) == b"hello"
    code, out, _ = in_process_cli("ls", str(pak))
    assert code == 0 and out == "caf\\xe9.txt\n"


def test_a_zip_refuses_it_naming_the_member(tmp_path: Path) -> None:
    pak = latin1_pak(tmp_path / "cafe.pak")
    with pytest.raises(FormatLimitError, match=r"caf\\\\xe9.txt.*not UTF-8"):
        gamepak.convert(pak, tmp_path / "out.zip")
    assert not (tmp_path / "out.zip").exists()
    code, _, err = in_process_cli("convert", str(pak), str(tmp_path / "out.zip"))
    assert code == 1 and "not UTF-8" in err and "Traceback" not in err
    zip_path = tmp_path / "a.zip"
    with gamepak.create(zip_path) as writer:
        writer.add("ok.txt", b"ok")
    (tmp_path / "f.txt").write_bytes(b"x")
    bad = b"a\xffb.txt".decode("utf-8", "surrogateescape")
    code, _, err = in_process_cli("add", str(zip_path), str(tmp_path / "f.txt"), "--name", bad)
    assert code == 1 and "not UTF-8" in err
    assert gamepak.open(zip_path).namelist() == ["ok.txt"]


def test_the_catalog_keeps_the_raw_bytes(tmp_path: Path) -> None:
    import pyarrow.dataset as ds

    from gamepak.catalog import build_catalog

    folder = tmp_path / "games"
    folder.mkdir()
    latin1_pak(folder / "cafe.pak")
    build_catalog([str(folder)], str(tmp_path / "c.catalog"), scheduler="synchronous")
    rows = ds.dataset(tmp_path / "c.catalog" / "members", format="parquet").to_table(columns=["name", "raw_name"])
    assert rows.to_pylist() == [{"name": "caf\\xe9.txt", "raw_name": b"caf\xe9.txt"}]
