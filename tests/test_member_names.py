"""One name per member in every verb (issue 19 class 3): the name `ls` prints and the name
`extract` writes (a J2ME member `0` as `0.bin`, a PAK's `./test_data/x.txt` as
`test_data/x.txt`) both work in cat, extract patterns, rm, fsspec paths and diff."""

from __future__ import annotations

import struct
from pathlib import Path

import fsspec
import pytest

import gamepak

from conftest import in_process_cli


def dotted_pak(path: Path) -> Path:
    data = b"hello"
    record = struct.pack("<56sii", b"./test_data/x.txt", 12, len(data))
    path.write_bytes(struct.pack("<4sii", b"PACK", 12 + len(data), len(record)) + data + record)
    return path


def j2me_pack(path: Path) -> Path:
    with gamepak.create(path, "j2me-table") as writer:
        writer.add("0", b"\x89PNG\r\n\x1a\n" + bytes(20))
        writer.add("1", b"plain bytes \x00\x01")
    return path


CASES = {
    "pak": (dotted_pak, None, "./test_data/x.txt", "test_data/x.txt", "test_data/*.txt"),
    "j2me": (j2me_pack, "j2me-table", "0", "0.png", "*.png"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_listed_and_the_extracted_name_work_in_every_verb(tmp_path: Path, case: str) -> None:
    make, format_name, listed, extracted, pattern = CASES[case]
    pack = make(tmp_path / "pack.bin")
    fmt = ["--format", format_name] if format_name else []
    code, out, _ = in_process_cli(*fmt, "ls", str(pack))
    assert code == 0 and listed in out.split()
    with gamepak.open(pack, format_name) as archive:
        expected = archive.read(listed)
        assert archive.read(extracted) == expected
        assert extracted in archive and archive.getinfo(extracted) is archive.getinfo(listed)
    for name in (listed, extracted, pattern):
        out_dir = tmp_path / f"out-{name.replace('/', '_').replace('*', 'star')}"
        code, _, err = in_process_cli(*fmt, "extract", str(pack), name, "-o", str(out_dir))
        assert code == 0, err
        assert (out_dir / extracted).read_bytes() == expected
    # fsspec shows the extracted names.
    fs = fsspec.filesystem("gamepak", fo=str(pack), format=format_name) if format_name else None
    if fs is None:
        fs = fsspec.filesystem("gamepak", fo=str(pack))
    assert fs.cat_file(extracted) == expected
    # A pack against its own extraction is equal.
    folder = tmp_path / "all"
    gamepak.open(pack, format_name).extractall(folder)
    assert gamepak.diff(pack, folder, format_a=format_name).equal
    # rm takes either name.
    for name in (listed, extracted):
        copy = tmp_path / f"copy-{name.replace('/', '_')}.bin"
        copy.write_bytes(pack.read_bytes())
        code, _, err = in_process_cli(*fmt, "rm", str(copy), name)
        assert code == 0, err
        with gamepak.open(copy, format_name) as archive:
            assert len(archive) == (1 if case == "j2me" else 0)
