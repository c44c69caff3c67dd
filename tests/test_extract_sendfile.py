"""Extraction that has the kernel send many members from the archive into their files
(`sendfile`, `ops.copier`, issue 48 item 2): one copy per member, no read into a buffer first.
An archive cut short while its members are being sent fails as one line naming the file, the
offset and the member, in this process or in a forked worker, and nothing of the extraction is
left behind; where a file cannot be sent to another, members are read and written as before."""

from __future__ import annotations

import os
import random
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.cli import main
from gamepak.errors import CorruptArchiveError, GamepakError
from gamepak.ops import copier

pytestmark = pytest.mark.skipif(not hasattr(os, "sendfile"), reason="no os.sendfile here")


def _pak(sizes: list[int], seed: int = 1) -> tuple[bytes, dict[str, bytes]]:
    """A PAK of members of these sizes, one after another from offset 12, and what each holds."""
    rng = random.Random(seed)
    members = {f"d{index % 4}/m{index}": rng.randbytes(size) for index, size in enumerate(sizes)}
    records = b""
    offset = 12
    for name, data in members.items():
        records += name.encode().ljust(56, b"\0") + struct.pack("<ii", offset, len(data))
        offset += len(data)
    blob = b"".join(members.values())
    return b"PACK" + struct.pack("<ii", 12 + len(blob), len(records)) + blob + records, members


def _cut_on_first_run(path: Path, size: int) -> Callable[..., None]:
    """`Copier.run_batch` that first cuts the archive at `path` to `size` bytes (in whichever process
    runs a batch first: this one, or a forked worker), as another program might mid-run."""
    real_run = copier.Copier.run_batch

    def run(self: copier.Copier, *args: Any, **kwargs: Any) -> None:
        if os.path.getsize(path) > size:
            os.truncate(path, size)
        real_run(self, *args, **kwargs)

    return run


def _left_behind(tmp_path: Path, *keep: str) -> list[str]:
    return sorted(name for name in os.listdir(tmp_path) if name not in keep)


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("cut", [200_000, 1000])  # far before the members' end, or in its first page
def test_an_archive_cut_short_mid_run_is_one_error_and_nothing_is_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int, cut: int
) -> None:
    data, _ = _pak([3000] * 400)
    path = tmp_path / "cut.pak"
    path.write_bytes(data)
    monkeypatch.setattr(copier, "_worker_count", lambda: workers)
    monkeypatch.setattr(copier.Copier, "run_batch", _cut_on_first_run(path, cut))
    with gamepak.open(path) as archive, pytest.raises(CorruptArchiveError) as caught:
        archive.extractall(tmp_path / "out")
    message = str(caught.value)
    assert "\n" not in message and "truncated" in message and str(path) in message and "offset" in message
    assert "member 'd" in message
    assert _left_behind(tmp_path, "cut.pak") == []


def test_the_command_says_it_in_one_line_and_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data, _ = _pak([3000] * 400)
    path = tmp_path / "cut.pak"
    path.write_bytes(data)
    monkeypatch.setattr(copier, "_worker_count", lambda: 2)  # the cut seen by a forked worker too
    monkeypatch.setattr(copier.Copier, "run_batch", _cut_on_first_run(path, 200_000))
    assert main(["extract", str(path), "-o", str(tmp_path / "out")]) == 1
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gamepak: error: ") and "truncated" in lines[0], captured.err
    assert "Traceback" not in captured.err
    assert _left_behind(tmp_path, "cut.pak") == []


def _counting_sendfile(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    sizes: list[int] = []
    real = os.sendfile

    def counting(out_fd: int, in_fd: int, offset: int, count: int) -> int:
        sizes.append(count)
        return real(out_fd, in_fd, offset, count)

    monkeypatch.setattr(os, "sendfile", counting)
    return sizes


def test_many_members_are_sent_by_the_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sizes = [random.Random(index).randint(0, 5000) for index in range(300)]
    data, members = _pak(sizes)
    path = tmp_path / "many.pak"
    path.write_bytes(data)
    monkeypatch.setattr(copier, "_worker_count", lambda: 1)
    sent = _counting_sendfile(monkeypatch)
    reads: list[int] = []
    monkeypatch.setattr(os, "preadv", lambda *args: reads.append(1))  # never needed
    with gamepak.open(path) as archive:
        archive.extractall(tmp_path / "out")
    assert sent == [size for size in sizes if size] and reads == []
    assert {name: (tmp_path / "out" / name).read_bytes() for name in members} == members


def test_a_few_members_are_read_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data, members = _pak([100] * 20)
    path = tmp_path / "few.pak"
    path.write_bytes(data)
    sent = _counting_sendfile(monkeypatch)
    with gamepak.open(path) as archive:
        archive.extractall(tmp_path / "out")
    assert sent == []
    assert {name: (tmp_path / "out" / name).read_bytes() for name in members} == members


@pytest.mark.parametrize("errno", [22, 95])  # EINVAL, EOPNOTSUPP: no sending between these files
def test_where_files_cannot_be_sent_they_are_read_and_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, errno: int
) -> None:
    data, members = _pak([random.Random(index).randint(1, 5000) for index in range(300)])
    path = tmp_path / "many.pak"
    path.write_bytes(data)
    monkeypatch.setattr(copier, "_worker_count", lambda: 1)
    tried: list[int] = []

    def refusing(out_fd: int, in_fd: int, offset: int, count: int) -> int:
        tried.append(count)
        raise OSError(errno, os.strerror(errno))

    monkeypatch.setattr(os, "sendfile", refusing)
    with gamepak.open(path) as archive:
        archive.extractall(tmp_path / "out")
    assert len(tried) == 1  # asked once, then read and written
    assert {name: (tmp_path / "out" / name).read_bytes() for name in members} == members


def test_a_short_send_is_finished(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data, members = _pak([random.Random(index).randint(1, 5000) for index in range(300)])
    path = tmp_path / "many.pak"
    path.write_bytes(data)
    monkeypatch.setattr(copier, "_worker_count", lambda: 1)
    real = os.sendfile
    monkeypatch.setattr(os, "sendfile", lambda out_fd, in_fd, offset, count: real(out_fd, in_fd, offset, min(count, 7)))
    with gamepak.open(path) as archive:
        archive.extractall(tmp_path / "out")
    assert {name: (tmp_path / "out" / name).read_bytes() for name in members} == members


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(0, 20_000), min_size=2, max_size=60), st.integers(0, 5))
def test_every_file_gets_its_own_bytes_when_sent(
    tmp_path_factory: pytest.TempPathFactory, sizes: list[int], seed: int
) -> None:
    data, members = _pak(sizes, seed)
    tmp_path = tmp_path_factory.mktemp("sent")
    path = tmp_path / "p.pak"
    path.write_bytes(data)
    # Sent for this few members too, and split over two processes.
    with mock.patch.object(copier, "_THREAD_THRESHOLD", 2), mock.patch.object(copier, "_worker_count", lambda: 2):
        with gamepak.open(path) as archive:
            archive.extractall(tmp_path / "out")
    assert {name: (tmp_path / "out" / name).read_bytes() for name in members} == members


@pytest.mark.parametrize("workers", [1, 2])
def test_a_pack_inside_a_pack_is_sent_from_its_place_in_the_outer_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    inner, members = _pak([random.Random(index).randint(0, 3000) for index in range(300)], seed=4)
    filler = random.Random(6).randbytes(5001)  # the inner pack starts at an odd, unaligned offset
    records = b"filler".ljust(56, b"\0") + struct.pack("<ii", 12, len(filler))
    records += b"inner.pak".ljust(56, b"\0") + struct.pack("<ii", 12 + len(filler), len(inner))
    outer = b"PACK" + struct.pack("<ii", 12 + len(filler) + len(inner), len(records)) + filler + inner + records
    path = tmp_path / "outer.pak"
    path.write_bytes(outer)
    monkeypatch.setattr(copier, "_worker_count", lambda: workers)
    with gamepak.open(path) as archive, gamepak.open(archive.open("inner.pak")) as nested:
        assert nested._source.base == 12 + len(filler)
        nested.extractall(tmp_path / "out")
    assert {name: (tmp_path / "out" / name).read_bytes() for name in members} == members


@pytest.mark.parametrize("workers", [1, 2])
def test_a_member_that_cannot_be_written_is_named_and_nothing_is_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """The short loop of sent members (`Copier._send_planned`) names the member whose file
    failed, in this process or in a forked worker, and the extraction leaves nothing."""
    sizes = [random.Random(index).randint(1, 3000) for index in range(400)]
    data, _ = _pak(sizes)
    path = tmp_path / "many.pak"
    path.write_bytes(data)
    monkeypatch.setattr(copier, "_worker_count", lambda: workers)
    full_at = 12 + sum(sizes[:321])  # member 321's data: the disk is full from there on
    real = os.sendfile

    def filling(out_fd: int, in_fd: int, offset: int, count: int) -> int:
        if offset == full_at:
            raise OSError(28, "No space left on device")
        return real(out_fd, in_fd, offset, count)

    monkeypatch.setattr(os, "sendfile", filling)
    with gamepak.open(path) as archive, pytest.raises(GamepakError) as caught:
        archive.extractall(tmp_path / "out")
    assert str(caught.value) == "cannot write member 'd1/m321': No space left on device"
    assert _left_behind(tmp_path, "many.pak") == []


@pytest.mark.parametrize("workers", [1, 2])
def test_progress_hears_of_every_sent_member_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """A progress callback (the CLI's bar on a terminal) does not keep members from the short
    loop: it hears of each one, with its own entry, once its batch is written."""
    data, members = _pak([random.Random(index).randint(0, 3000) for index in range(400)])
    path = tmp_path / "many.pak"
    path.write_bytes(data)
    monkeypatch.setattr(copier, "_worker_count", lambda: workers)
    short_loops: list[int] = []
    real = copier.Copier._send_planned

    def counting(self: copier.Copier, *args: Any) -> int:
        short_loops.append(1)
        return real(self, *args)

    monkeypatch.setattr(copier.Copier, "_send_planned", counting)
    seen: list[str] = []
    with gamepak.open(path) as archive:
        archive.extractall(tmp_path / "out", progress=lambda entry: seen.append(entry.name))
    assert short_loops and sorted(seen) == sorted(members)
    assert {name: (tmp_path / "out" / name).read_bytes() for name in members} == members
