"""Extraction of every member from the directory's columns (issue 48 item 2): a pack whose
directory holds each member's offset and size as they are (PAK, JoePack) is extracted without
an `Entry` per member, with the same checks made in bulk, and the entry-by-entry path takes
over whenever anything needs more (a duplicate name, a range outside the file, shared bytes)."""

from __future__ import annotations

import io
import os
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.core.archive import Archive
from gamepak.errors import CorruptArchiveError, GamepakError


def _pak(members: list[tuple[bytes, bytes]], *, shift: int = 0) -> bytes:
    """A PAK of (name, data) members stored one after another; `shift` moves every recorded
    offset (past the file's end, for a damaged pack)."""
    body = b"".join(data for _, data in members)
    records = []
    offset = 12
    for name, data in members:
        records.append(name.ljust(56, b"\0") + struct.pack("<ii", offset + shift, len(data)))
        offset += len(data)
    directory = b"".join(records)
    return b"PACK" + struct.pack("<ii", 12 + len(body), len(directory)) + body + directory


def _jpk(members: list[tuple[bytes, bytes]], name_length: int) -> bytes:
    """A JoePack of (name, data) members with name fields of `name_length` bytes."""
    fat_end = 16 + len(members) * (8 + name_length)
    records = []
    offset = fat_end
    for name, data in members:
        records.append(struct.pack("<II", offset, len(data)) + name.ljust(name_length, b"\0"))
        offset += len(data)
    return (
        b"JPK01.00"
        + struct.pack("<II", len(members), name_length)
        + b"".join(records)
        + b"".join(d for _, d in members)
    )


def _files(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


def _no_entries(monkeypatch: pytest.MonkeyPatch, archive: Archive) -> None:
    def refuse() -> list[object]:
        raise AssertionError("an entry per member was made")

    monkeypatch.setattr(archive, "_build_entries", refuse)


MEMBERS = [
    (f"d{index % 4}/sub/m{index}.bin".encode(), bytes([index % 256]) * (index * 37 % 900)) for index in range(300)
]


@pytest.mark.parametrize("kind", ["pak", "jpk"])
def test_every_member_is_extracted_without_an_entry_per_member(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    path = tmp_path / f"many.{kind}"
    path.write_bytes(_pak(MEMBERS) if kind == "pak" else _jpk(MEMBERS, 56))
    with gamepak.open(path) as archive:
        _no_entries(monkeypatch, archive)
        written = archive.extractall(tmp_path / "out")
    assert _files(tmp_path / "out") == {name.decode(): data for name, data in MEMBERS}
    assert written == [os.path.join(os.path.realpath(tmp_path / "out"), name.decode()) for name, _ in MEMBERS]


def test_into_an_existing_folder_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Folders and files that exist already: each new file still comes from the columns, the
    existing ones refused without --overwrite and replaced with it."""
    path = tmp_path / "many.pak"
    path.write_bytes(_pak(MEMBERS))
    out = tmp_path / "out"
    (out / "d1" / "sub").mkdir(parents=True)
    (out / "d1" / "sub" / "m1.bin").write_bytes(b"mine")
    with gamepak.open(path) as archive:
        _no_entries(monkeypatch, archive)
        with pytest.raises(gamepak.OutputExistsError):
            archive.extractall(out)
        assert _files(out) == {"d1/sub/m1.bin": b"mine"}
        archive.extractall(out, overwrite=True)
    assert _files(out) == {name.decode(): data for name, data in MEMBERS}


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["a", "b/c", "d/e/f"]), st.binary(max_size=40)), max_size=12),
    st.integers(1, 70),
)
def test_the_columns_say_what_the_entries_say(members: list[tuple[str, bytes]], name_length: int) -> None:
    named = [(f"{folder}/{index}".encode(), data) for index, (folder, data) in enumerate(members)]
    longest = max((len(name) for name, _ in named), default=0)
    name_length = max(name_length, longest)
    for archive in (
        gamepak.open(io.BytesIO(_pak(named)), "pak"),
        gamepak.open(io.BytesIO(_jpk(named, name_length)), "jpk"),
    ):
        columns = archive._plain_columns()
        entries = archive.infolist()
        if columns is None:  # JoePack records whose name field leaves them unaligned
            assert archive.format_name != "pak" and (8 + name_length) % 4
            continue
        names, offsets, sizes = columns
        assert list(names) == [entry.name for entry in entries]
        assert list(offsets) == [entry.offset for entry in entries]
        assert list(sizes) == [entry.size for entry in entries]


def test_duplicate_names_go_the_entry_by_entry_way(tmp_path: Path) -> None:
    """Two members of one name: the copy the game loads under the name, the other as `.dupN`,
    exactly as when the entries are given."""
    members = [(b"a/x.bin", b"first"), (b"a/x.bin", b"second"), (b"b.bin", b"bee")]
    path = tmp_path / "twice.pak"
    path.write_bytes(_pak(members))
    with gamepak.open(path) as archive:
        archive.extractall(tmp_path / "all")
        archive.extractall(tmp_path / "given", archive.infolist())
    assert _files(tmp_path / "all") == _files(tmp_path / "given")
    assert len(_files(tmp_path / "all")) == 3


def test_a_range_outside_the_file_is_refused_as_before_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "damaged.pak"
    path.write_bytes(_pak(MEMBERS[:20], shift=1 << 20))
    messages = []
    for members in (None, "given"):
        with gamepak.open(path) as archive, pytest.raises(CorruptArchiveError) as caught:
            archive.extractall(tmp_path / "out", None if members is None else archive.infolist())
        messages.append(str(caught.value))
    assert messages[0] == messages[1] and "runs past the end of the file" in messages[0]
    assert not (tmp_path / "out").exists() and os.listdir(tmp_path) == ["damaged.pak"]


def test_progress_gets_each_member_s_entry(tmp_path: Path) -> None:
    path = tmp_path / "few.pak"
    path.write_bytes(_pak(MEMBERS[:40]))
    seen: list[gamepak.Entry] = []
    with gamepak.open(path) as archive:
        archive.extractall(tmp_path / "out", progress=seen.append)
        entries = archive.infolist()
    assert sorted(seen, key=entries.index) == entries  # each member's own entry, once


def test_a_write_error_names_its_member(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "few.pak"
    path.write_bytes(_pak(MEMBERS[1:11]))  # none empty: one write each
    from gamepak.ops import copier

    real_write = os.write
    calls = []

    def failing_write(fd: int, data: bytes) -> int:
        calls.append(fd)
        if len(calls) == 4:  # the fourth member's file
            raise OSError(28, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(copier.os, "write", failing_write)
    with gamepak.open(path) as archive, pytest.raises(GamepakError, match=r"cannot write member 'd0/sub/m4.bin'"):
        archive.extractall(tmp_path / "out")
    assert os.listdir(tmp_path) == ["few.pak"]


@pytest.mark.parametrize("flags", [0, 1, 2, 3])
def test_an_rfg_pack_s_columns_are_its_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: int) -> None:
    """Uncompressed `.vpp_pc` packs (flags 0 and 2) give their columns, condensed or not; a
    compressed one has none (its members are not plain ranges)."""
    members = {f"m{index}.bin": bytes([index]) * (index * 777 % 5000) for index in range(40)}
    for name, data in members.items():
        (tmp_path / name).write_bytes(data)
    path = tmp_path / "pack.vpp_pc"
    with gamepak.create(path, "vpp", flags=flags) as writer:
        for name in members:
            writer.add(name, tmp_path / name)
    with gamepak.open(path) as archive:
        columns = archive._plain_columns()
        if flags & 1:
            assert columns is None
            return
        assert columns is not None
        names, offsets, sizes = columns
        entries = archive.infolist()
        assert (list(names), list(offsets), list(sizes)) == (
            [entry.name for entry in entries],
            [entry.offset for entry in entries],
            [entry.size for entry in entries],
        )
    with gamepak.open(path) as archive:
        _no_entries(monkeypatch, archive)
        archive.extractall(tmp_path / "out")
    assert _files(tmp_path / "out") == members
