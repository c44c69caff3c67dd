"""Extraction that writes members straight from the mapped archive file (`ops.copier`, issue 48
item 2): only the kernel touches the mapped bytes, so an archive cut short while its members are
being written fails as one line naming the file and the offset (EFAULT, not SIGBUS), in this
process or in a forked worker, and nothing of the extraction is left behind."""

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
from gamepak.errors import CorruptArchiveError
from gamepak.ops import copier


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
    """`Copier.run` that first cuts the archive at `path` to `size` bytes (in whichever process
    runs a batch first: this one, or a forked worker), as another program might mid-run."""
    real_run = copier.Copier.run

    def run(self: copier.Copier, *args: Any, **kwargs: Any) -> None:
        if os.path.getsize(path) > size:
            os.truncate(path, size)
        real_run(self, *args, **kwargs)

    return run


def _left_behind(tmp_path: Path, *keep: str) -> list[str]:
    return sorted(name for name in os.listdir(tmp_path) if name not in keep)


@pytest.mark.parametrize("workers", [1, 2])
def test_an_archive_cut_short_mid_run_is_one_error_and_nothing_is_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    data, _ = _pak([3000] * 400)
    path = tmp_path / "cut.pak"
    path.write_bytes(data)
    monkeypatch.setattr(copier, "_worker_count", lambda: workers)
    monkeypatch.setattr(copier.Copier, "run", _cut_on_first_run(path, 200_000))
    with gamepak.open(path) as archive, pytest.raises(CorruptArchiveError) as caught:
        archive.extractall(tmp_path / "out")
    message = str(caught.value)
    assert "\n" not in message and "shrank" in message and str(path) in message and "offset" in message
    assert _left_behind(tmp_path, "cut.pak") == []


def test_the_command_says_it_in_one_line_and_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data, _ = _pak([3000] * 400)
    path = tmp_path / "cut.pak"
    path.write_bytes(data)
    monkeypatch.setattr(copier, "_worker_count", lambda: 2)  # the cut seen by a forked worker too
    monkeypatch.setattr(copier.Copier, "run", _cut_on_first_run(path, 200_000))
    assert main(["extract", str(path), "-o", str(tmp_path / "out")]) == 1
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gamepak: error: ") and "shrank" in lines[0], captured.err
    assert "Traceback" not in captured.err
    assert _left_behind(tmp_path, "cut.pak") == []


def test_a_cut_inside_the_last_mapped_page_is_caught_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bytes past the new end but inside its page read as zeros without any error: the size is
    checked again once everything is written."""
    data, _ = _pak([10] * 300)  # all member data inside the file's first page
    path = tmp_path / "cut.pak"
    path.write_bytes(data)
    monkeypatch.setattr(copier, "_worker_count", lambda: 1)
    monkeypatch.setattr(copier.Copier, "run", _cut_on_first_run(path, 1000))
    with gamepak.open(path) as archive, pytest.raises(CorruptArchiveError, match="shrank from .* to 1000 bytes"):
        archive.extractall(tmp_path / "out")
    assert _left_behind(tmp_path, "cut.pak") == []


def test_many_members_are_written_from_the_mapping(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data, members = _pak([random.Random(index).randint(0, 5000) for index in range(300)])
    path = tmp_path / "many.pak"
    path.write_bytes(data)
    monkeypatch.setattr(copier, "_worker_count", lambda: 1)
    mapped: list[bool] = []
    real_run = copier.Copier.run

    def recording(self: copier.Copier, *args: Any, **kwargs: Any) -> None:
        mapped.append(self._mapped is not None)
        real_run(self, *args, **kwargs)

    monkeypatch.setattr(copier.Copier, "run", recording)
    with gamepak.open(path) as archive:
        archive.extractall(tmp_path / "out")
    assert mapped == [True]
    assert {name: (tmp_path / "out" / name).read_bytes() for name in members} == members


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(0, 20_000), min_size=2, max_size=60), st.integers(0, 5))
def test_every_file_gets_its_own_bytes_from_the_mapping(
    tmp_path_factory: pytest.TempPathFactory, sizes: list[int], seed: int
) -> None:
    data, members = _pak(sizes, seed)
    tmp_path = tmp_path_factory.mktemp("mapped")
    path = tmp_path / "p.pak"
    path.write_bytes(data)
    # The mapping is made for this few members too, and split over two processes.
    with mock.patch.object(copier, "_THREAD_THRESHOLD", 2), mock.patch.object(copier, "_worker_count", lambda: 2):
        with gamepak.open(path) as archive:
            archive.extractall(tmp_path / "out")
    assert {name: (tmp_path / "out" / name).read_bytes() for name in members} == members


def _mapped_kib(path: Path) -> int:
    """The resident kilobytes of this process's mappings of `path` (Linux: /proc/self/smaps)."""
    total, inside = 0, False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            fields = line.split()
            if fields and "-" in fields[0] and len(fields[0]) > 8 and not fields[0].endswith(":"):
                inside = fields[-1] == str(path)
            elif inside and fields[0] == "Rss:":
                total += int(fields[1])
    return total


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps"), reason="Linux's /proc/self/smaps")
def test_each_run_lets_go_of_the_pages_it_wrote_from(tmp_path: Path) -> None:
    """The page table entries of the members written are dropped batch by batch while copying,
    not all at once by `munmap` (or a worker's exit) once the other core has nothing left to do."""
    data, members = _pak([8000] * 300)
    path = tmp_path / "many.pak"
    path.write_bytes(data)
    out = tmp_path / "out"
    out.mkdir()
    folders = {}
    for folder in ("d0", "d1", "d2", "d3"):
        (out / folder).mkdir()
        folders[folder] = os.open(out / folder, os.O_RDONLY)
    try:
        with gamepak.open(path) as archive:
            from gamepak.ops.copy_jobs import PlannedJobs

            entries = archive.infolist()
            jobs = PlannedJobs([e.offset for e in entries], [e.size for e in entries], list(members), folders)
            worker = copier.Copier(archive, entries, None)
            worker.map_source()
            try:
                assert worker._mapped is not None
                worker.run(jobs[0:150])
                assert _mapped_kib(path) < 64  # at most a page at each end of the batch
                bytes(worker._mapped[12 : 12 + 8000 * 150])  # touched here: resident again
                assert _mapped_kib(path) >= 8000 * 150 // 1024
                worker.run(jobs[150:300][::-1])  # a batch in the other order: let go of as well
                assert _mapped_kib(path) < 8000 * 150 // 1024 + 64
            finally:
                worker.unmap_source()
    finally:
        for fd in folders.values():
            os.close(fd)
    assert {name: (out / name).read_bytes() for name in members} == members


@pytest.mark.parametrize("workers", [1, 2])
def test_a_pack_inside_a_pack_is_written_from_its_place_in_the_outer_file(
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


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps"), reason="Linux's /proc/self/smaps")
@pytest.mark.parametrize("order", ["stored", "shuffled"])
def test_the_pages_written_from_stay_a_few_megabytes_however_long_the_batch(tmp_path: Path, order: str) -> None:
    """A batch may be an eighth of a big pack: the mapped pages it wrote from are let go of as
    it goes, in the pack's order or not, so the process's resident size does not grow by it."""
    data, members = _pak([16_000] * 1500)  # 24 MB, in one batch
    path = tmp_path / "long.pak"
    path.write_bytes(data)
    out = tmp_path / "out"
    out.mkdir()
    folders = {}
    for folder in ("d0", "d1", "d2", "d3"):
        (out / folder).mkdir()
        folders[folder] = os.open(out / folder, os.O_RDONLY)
    resident: list[int] = []

    def report(position: int) -> None:
        if position % 100 == 0:
            resident.append(_mapped_kib(path))

    try:
        with gamepak.open(path) as archive:
            from gamepak.ops.copy_jobs import PlannedJobs

            entries = archive.infolist()
            jobs = PlannedJobs([e.offset for e in entries], [e.size for e in entries], list(members), folders)
            batch = jobs[101:1500]  # from the middle of the file: pages before it get mapped too
            if order == "shuffled":
                random.Random(3).shuffle(batch)
            worker = copier.Copier(archive, entries, None)
            worker.map_source()
            try:
                worker.run(batch, report)
                after = _mapped_kib(path)  # nothing left mapped, the kernel's read-around included
            finally:
                worker.unmap_source()
    finally:
        for fd in folders.values():
            os.close(fd)
    # Pages are mapped a folio at a time, up to 2 MiB on some file systems: two of slack.
    assert len(resident) == 13 and max(resident) <= (copier._MAPPED_KEPT + (4 << 20)) // 1024 and after == 0
    written = list(members)[101:1500]
    assert {name: (out / name).read_bytes() for name in written} == {name: members[name] for name in written}
