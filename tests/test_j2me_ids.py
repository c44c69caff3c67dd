"""The `j2me-ids` layout (Diamond Rush's `demoSpr.bin`: a uint16 count, then records of uint16
id, uint32 size, data): bytes by hand from gameloft-sprites.md §1, detection, exact rebuilds
(ids kept through an edit), hostile input, a property test and the real file."""

from __future__ import annotations

import io
import re
import struct
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.core.source import Source
from gamepak.errors import CorruptArchiveError, InvalidOptionError
from gamepak.formats.j2me import structure
from gamepak.formats.j2me.packs import IdsReader

from conftest import sample


def ids_pack(records: list[tuple[int, bytes]]) -> bytes:
    """u16 count, then per record u16 id, u32 size, data; little-endian."""
    body = b"".join(struct.pack("<HI", record_id, len(data)) + data for record_id, data in records)
    return struct.pack("<H", len(records)) + body


RECORDS = [(0, b"\xdf\x03sprite zero"), (7, b"second"), (2, b"\x00\x01\x02")]


def test_spec_bytes_read_and_detected(tmp_path: Path) -> None:
    path = tmp_path / "demoSpr.bin"
    path.write_bytes(ids_pack(RECORDS))
    assert [d.format for d in gamepak.detect(path)][:1] == ["j2me-ids"]
    with gamepak.open(path) as pack:
        assert pack.format_name == "j2me-ids" and isinstance(pack, IdsReader)
        assert pack.namelist() == ["0", "1", "2"]
        assert [pack.read(name) for name in pack.namelist()] == [data for _, data in RECORDS]
        assert pack.ids == [0, 7, 2]
        assert pack.header_fields()["ids"] == [0, 7, 2]


def test_writer_matches_spec_and_keeps_ids_through_an_edit(tmp_path: Path) -> None:
    path = tmp_path / "demoSpr.bin"
    with gamepak.create(path, "j2me-ids", ids="0,7,2") as writer:
        for index, (_, data) in enumerate(RECORDS):
            writer.add(str(index), data)
    assert path.read_bytes() == ids_pack(RECORDS)
    # An edit that changes a record's size keeps every id (they are the pack's own choice).
    with gamepak.edit(path) as pack:
        pack.replace("1", b"a longer second record")
    assert path.read_bytes() == ids_pack([RECORDS[0], (7, b"a longer second record"), RECORDS[2]])
    # Without ids, records are numbered; added records count on from the largest id.
    with gamepak.create(tmp_path / "plain.bin", "j2me-ids") as writer:
        writer.add("0", b"x")
        writer.add("1", b"y")
    assert (tmp_path / "plain.bin").read_bytes() == ids_pack([(0, b"x"), (1, b"y")])
    with gamepak.edit(path) as pack:
        pack.add("3", b"new")
    with gamepak.open(path, "j2me-ids") as reopened:
        assert isinstance(reopened, IdsReader) and reopened.ids == [0, 7, 2, 8]


@pytest.mark.parametrize("ids", [[-1], [65536], "0,x", [True], "70000"])
def test_bad_ids_option(tmp_path: Path, ids: object) -> None:
    with pytest.raises(InvalidOptionError, match="ids"):
        gamepak.create(tmp_path / "x.bin", "j2me-ids", ids=ids)


@pytest.mark.parametrize(
    ("data", "message", "offset"),
    [
        (b"\x05\x00" + struct.pack("<HI", 0, 1) + b"x", "record count 5 needs at least 30 bytes", 0),
        (ids_pack(RECORDS)[:-1], "record 2 (id 2): 3 bytes run past the end", 2 + 6 + 13 + 6 + 6 + 2),
        (ids_pack(RECORDS) + b"\0", "1 bytes after the last of 3 records", len(ids_pack(RECORDS))),
        (b"\x01", "record count", 0),
        (b"\x01\x00\x00\x00\xff\xff\xff\xff", "record 0 (id 0): 4294967295 bytes run past the end", 4),
    ],
)
def test_hostile_input(tmp_path: Path, data: bytes, message: str, offset: int) -> None:
    path = tmp_path / "bad.bin"
    path.write_bytes(data)
    with pytest.raises(CorruptArchiveError, match=re.escape(message)) as caught:
        with gamepak.open(path, "j2me-ids") as pack:
            pack.namelist()
    assert caught.value.offset == offset
    assert structure.sniff_ids(Source.open(io.BytesIO(data))) == 0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 0xFFFF), st.binary(max_size=40)), max_size=8))
def test_roundtrip_property(records: list[tuple[int, bytes]]) -> None:
    data = ids_pack(records)
    with gamepak.open(io.BytesIO(data), "j2me-ids") as pack:
        members = [pack.read(name) for name in pack.namelist()]
        options = pack.layout()["options"]
    assert members == [body for _, body in records]
    with tempfile.TemporaryDirectory() as folder:
        rebuilt = Path(folder) / "r.bin"
        with gamepak.create(rebuilt, "j2me-ids", **options) as writer:
            for index, body in enumerate(members):
                writer.add(str(index), body)
        assert rebuilt.read_bytes() == data


def test_the_games_demospr_bin(tmp_path: Path) -> None:
    """The real file: 3 records, ids 0, 1, 2, sizes 2,750 / 940 / 481, each a sprite; rebuilt
    byte for byte through the registry (gamepak convert to the same format)."""
    path = sample("gameloft/demoSpr.bin")
    assert gamepak.detect(path)[0].format == "j2me-ids"
    with gamepak.open(path) as pack:
        assert isinstance(pack, IdsReader) and pack.ids == [0, 1, 2]
        assert [entry.size for entry in pack.infolist()] == [2750, 940, 481]
        assert all(pack.read(entry).startswith(b"\xdf\x03\x01\x01\x01\x01") for entry in pack.infolist())
    gamepak.convert(path, tmp_path / "copy.bin", "j2me-ids")
    assert (tmp_path / "copy.bin").read_bytes() == path.read_bytes()


def test_extract_with_a_manifest_and_create_rebuild_the_same_file(tmp_path: Path) -> None:
    from conftest import in_process_cli

    source = tmp_path / "demoSpr.bin"
    source.write_bytes(ids_pack(RECORDS))
    assert in_process_cli("extract", str(source), "-o", str(tmp_path / "x"), "--manifest")[0] == 0
    code, _, err = in_process_cli("create", str(tmp_path / "copy.bin"), str(tmp_path / "x"))
    assert code == 0, err
    assert (tmp_path / "copy.bin").read_bytes() == source.read_bytes()
