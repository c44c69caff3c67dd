"""The inflater chosen per case (`core.inflaters`): libdeflate on whole buffers within the
budget, the streaming inflater otherwise or when the `deflate` wheel is missing, and the same
gamepak errors for damaged data whichever runs."""

from __future__ import annotations

import os
import random
import struct
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.core import inflaters
from gamepak.core.archive import RawRange
from gamepak.errors import CorruptArchiveError, GamepakError

pytest.importorskip("deflate")


def _sync_flushed(pieces: list[bytes], level: int = 6) -> tuple[bytes, list[int]]:
    """One zlib stream, sync-flushed after each piece, never finished (as the game writes a
    condensed pack); and where each piece's compressed bytes start."""
    compressor = zlib.compressobj(level)
    out = b""
    starts = []
    for piece in pieces:
        starts.append(len(out))
        out += compressor.compress(piece) + compressor.flush(zlib.Z_SYNC_FLUSH)
    return out, starts


# -- the whole-buffer inflater ---------------------------------------------------------------
def test_hand_made_stored_block() -> None:
    # BFINAL=1, BTYPE=00, LEN=5, NLEN=~5, then the bytes (RFC 1951 3.2.4).
    assert inflaters.inflate_whole(b"\x01\x05\x00\xfa\xffhello", 5) == b"hello"
    # A fixed-Huffman final empty block: no output.
    assert inflaters.inflate_whole(b"\x03\x00", 0) == b""


def test_only_the_exact_size_is_accepted() -> None:
    data = b"hello"
    raw = b"\x01\x05\x00\xfa\xff" + data
    assert inflaters.inflate_whole(raw, 4) is None  # would go on
    assert inflaters.inflate_whole(raw, 6) is None  # stopped early


def test_damaged_data_is_none() -> None:
    assert inflaters.inflate_whole(b"\x07\xff\xff\xff", 10) is None  # reserved block type
    assert inflaters.inflate_zlib_whole(b"\x78\x9c\xff\xff", 10) is None


def test_continues_a_stream_at_a_sync_flush_with_its_window() -> None:
    first = os.urandom(1000) * 40
    second = first[-5000:] + b"tail " * 9000  # refers back into `first`
    stream, starts = _sync_flushed([first, second])
    window = first[-inflaters.WINDOW :]
    assert inflaters.inflate_whole(stream[starts[1] :], len(second), window, cut=True) == second
    # Without the window the back-references into `first` cannot be resolved.
    assert inflaters.inflate_whole(stream[starts[1] :], len(second), cut=True) is None


def test_cut_data_must_end_with_a_sync_flush() -> None:
    compressor = zlib.compressobj()
    partial = compressor.compress(os.urandom(70000))  # stops inside a block
    assert inflaters.inflate_whole(partial[2:], 70000, cut=True) is None


def test_zlib_stream_finished_or_cut() -> None:
    data = b"table row " * 5000
    assert inflaters.inflate_zlib_whole(zlib.compress(data), len(data)) == data
    cut, _ = _sync_flushed([data])
    assert inflaters.inflate_zlib_whole(cut, len(data)) == data
    bad_check = bytearray(zlib.compress(data))
    bad_check[-1] ^= 1  # the Adler-32 no longer matches
    assert inflaters.inflate_zlib_whole(bytes(bad_check), len(data)) is None
    assert inflaters.inflate_zlib_whole(b"\x78\x9d" + zlib.compress(data)[2:], len(data)) is None  # header check


def test_over_the_budget_is_left_to_the_streaming_inflater(monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"x" * 5000
    monkeypatch.setattr(inflaters, "WHOLE_BUDGET", 4096)
    assert not inflaters.fits_whole(len(data))
    assert inflaters.inflate_zlib_whole(zlib.compress(data), len(data)) is None
    assert inflaters.inflate_zlib_whole(zlib.compress(data[:4000]), 4000) == data[:4000]


def test_missing_wheel_means_streaming(inflater_choice: str) -> None:
    data = b"abc" * 100
    result = inflaters.inflate_zlib_whole(zlib.compress(data), len(data))
    if inflater_choice == "libdeflate":
        assert result == data and inflaters.whole_inflater() is not None
    else:
        assert result is None and inflaters.whole_inflater() is None and not inflaters.fits_whole(1)


def test_run_input_reused_for_runs_of_a_stream() -> None:
    first = os.urandom(1000) * 40
    second = first[-5000:] + b"tail " * 9000
    stream, starts = _sync_flushed([first, second])
    runs = inflaters.RunInput(1 << 20)

    def reader(data: bytes) -> Callable[[memoryview], int]:
        def read_into(view: memoryview) -> int:
            view[: len(data)] = data[: len(view)]
            return min(len(view), len(data))

        return read_into

    head = stream[: starts[1]]
    assert runs.inflate_run(reader(head), len(head), len(first), b"", skip=2) == first
    tail = stream[starts[1] :]
    window = first[-inflaters.WINDOW :]
    assert runs.inflate_run(reader(tail), len(tail), len(second), window) == second
    assert runs.inflate_run(reader(tail[:-10]), len(tail), len(second), window) is None  # read short
    assert runs.inflate_run(reader(b"\x78\x9d" + head[2:]), len(head), len(first), b"", skip=2) is None  # header
    assert runs.inflate_run(reader(tail), len(tail), len(second) - 1, window) is None  # would go on
    assert inflaters.RunInput(100).inflate_run(reader(tail), len(tail), len(second), window) is None  # too big


def _bytes_reader(data: bytes) -> Callable[[memoryview], int]:
    def read_into(view: memoryview) -> int:
        view[: len(data)] = data[: len(view)]
        return min(len(view), len(data))

    return read_into


def test_run_input_allocates_what_a_run_needs_not_its_capacity() -> None:
    import tracemalloc

    data = b"small pack member " * 50
    stream, _ = _sync_flushed([data])
    inflaters._thread_buffer.spare = None  # as on a fresh thread
    tracemalloc.start()
    try:
        for _ in range(20):  # one owner per pack, as the catalog opens them
            runs = inflaters.RunInput(inflaters.WHOLE_BUDGET)
            assert runs.inflate_run(_bytes_reader(stream), len(stream), len(data), b"", skip=2) == data
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The thread's one small buffer, not the 8 MiB capacity (each owner used to zero its own).
    assert peak < 2 * inflaters.RunInput.THREAD_KEEP


def test_small_runs_share_the_threads_buffer() -> None:
    data = b"shared " * 100
    stream, _ = _sync_flushed([data])
    inflaters.RunInput(1 << 20).inflate_run(_bytes_reader(stream), len(stream), len(data), b"", skip=2)
    kept = inflaters._thread_buffer.spare
    assert kept is not None
    assert inflaters.RunInput(1 << 20).inflate_run(_bytes_reader(stream), len(stream), len(data), b"", skip=2) == data
    assert inflaters._thread_buffer.spare is kept


def test_a_run_read_while_another_is_inflating_gets_its_own_buffer() -> None:
    # A pack nested in another: reading the outer run's input inflates a run of the inner
    # stream on the same thread; the outer input must not be overwritten by it.
    outer_data = b"outer member " * 300
    inner_data = b"INNER!" * 500
    outer, _ = _sync_flushed([outer_data])
    inner, _ = _sync_flushed([inner_data])
    results = []

    def read_outer(view: memoryview) -> int:
        got = _bytes_reader(outer)(view)
        results.append(
            inflaters.RunInput(1 << 20).inflate_run(_bytes_reader(inner), len(inner), len(inner_data), b"", skip=2)
        )
        return got

    assert inflaters.RunInput(1 << 20).inflate_run(read_outer, len(outer), len(outer_data), b"", skip=2) == outer_data
    assert results == [inner_data]


def test_large_runs_use_the_owners_buffer_grown_as_runs_grow() -> None:
    rng = random.Random(5)
    pieces = [rng.randbytes(700_000), rng.randbytes(1_500_000), rng.randbytes(1_000)]
    stream, starts = _sync_flushed(pieces, level=1)
    runs = inflaters.RunInput(inflaters.WHOLE_BUDGET)
    ends = [*starts[1:], len(stream)]
    window = b""
    sizes = []
    for index, piece in enumerate(pieces):
        chunk = stream[starts[index] : ends[index]]
        assert runs.inflate_run(_bytes_reader(chunk), len(chunk), len(piece), window, skip=0 if index else 2) == piece
        window = piece[-inflaters.WINDOW :]
        sizes.append(len(runs.buffer))
    # The first run fits the thread's buffer; the second needs more and keeps it for the third.
    assert sizes[0] == 0 and 1_500_000 < sizes[1] <= runs.capacity and sizes[2] == sizes[1]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.binary(max_size=3000), min_size=1, max_size=6), st.integers(0, 5), st.integers(0, 9))
def test_runs_of_chunks_rebuild_the_stream(pieces: list[bytes], cut_at: int, level: int) -> None:
    # Repetitive pieces, so later chunks refer back into earlier ones.
    pieces = [piece * 3 + pieces[0] for piece in pieces]
    stream, starts = _sync_flushed(pieces, level)
    cut_at = min(cut_at, len(pieces) - 1) or 1
    head = b"".join(pieces[:cut_at])
    first = inflaters.inflate_whole(stream[2 : starts[cut_at] if cut_at < len(pieces) else None], len(head), cut=True)
    assert first == head
    if cut_at < len(pieces):
        tail = b"".join(pieces[cut_at:])
        rest = inflaters.inflate_whole(stream[starts[cut_at] :], len(tail), head[-inflaters.WINDOW :], cut=True)
        assert rest == tail


# -- packs: the same bytes and the same errors whichever inflater runs --------------------------
def _pack(tmp_path: Path, members: list[tuple[str, bytes]], flags: int) -> bytes:
    path = tmp_path / f"p{flags}.str2_pc"
    with gamepak.create(path, flags=flags, overwrite=True) as writer:
        for name, data in members:
            writer.add(name, data)
    return path.read_bytes()


def _members(count: int = 40, seed: int = 3) -> list[tuple[str, bytes]]:
    rng = random.Random(seed)
    words = [bytes(rng.choices(b"abcdefghij<>/= ", k=rng.randint(3, 9))) for _ in range(50)]
    return [(f"m{i:03d}.xtbl", b" ".join(rng.choices(words, k=rng.randint(0, 3000)))) for i in range(count)]


def _extract(
    data: bytes, tmp_path: Path, name: str, suffix: str = ".str2_pc"
) -> tuple[str, object, object] | dict[str, bytes]:
    """What extracting the pack gives: its files, or the error (message, offset, member)."""
    path = tmp_path / f"{name}{suffix}"
    path.write_bytes(data)
    out = tmp_path / f"out-{name}"
    try:
        with gamepak.open(path) as archive:
            archive.extractall(out)
    except GamepakError as exc:
        assert not out.exists()  # nothing left of a failed extraction
        return (str(exc).replace(str(path), "PACK"), getattr(exc, "offset", None), getattr(exc, "member", None))
    return {file.name: file.read_bytes() for file in out.iterdir()}


def _both(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data: bytes, suffix: str = ".str2_pc"
) -> tuple[tuple[str, object, object] | dict[str, bytes], tuple[str, object, object] | dict[str, bytes]]:
    """`_extract` with libdeflate, then with the `deflate` wheel made unimportable."""
    inflaters.forget_choice()
    fast = _extract(data, tmp_path, "fast", suffix)
    with monkeypatch.context() as hidden:
        hidden.setitem(sys.modules, "deflate", None)
        inflaters.forget_choice()
        streamed = _extract(data, tmp_path, "streamed", suffix)
    inflaters.forget_choice()
    return fast, streamed


def _set(data: bytes, offset: int, fmt: str, *values: int) -> bytes:
    patched = bytearray(data)
    struct.pack_into(fmt, patched, offset, *values)
    return bytes(patched)


def _flip(data: bytes, offset: int) -> bytes:
    patched = bytearray(data)
    patched[offset] ^= 0x55
    return bytes(patched)


def _entry_field(index: int, field: int) -> int:
    """Offset in the file of entry `index`'s field (0 name offset ... 5 compressed size)."""
    return 2048 + 28 * index + 4 * field


DATA_START = 6144  # header block, entry block (40 x 28 bytes), name block: 2048 each
DAMAGES: dict[str, Callable[[bytes], bytes]] = {
    "intact": lambda data: data,
    "bad block in the middle": lambda data: _flip(data, DATA_START + 9000),
    "bad header": lambda data: _flip(data, DATA_START),
    "truncated file": lambda data: data[: DATA_START + 20000],
    "member larger than declared": lambda data: _set(data, _entry_field(20, 4), "<I", 10),
    "member smaller than declared": lambda data: _set(data, _entry_field(39, 4), "<I", 70000),
}


@pytest.mark.parametrize("flags", [1, 3])
@pytest.mark.parametrize("damage", list(DAMAGES))
@pytest.mark.parametrize("budget", [1 << 20, 20000, 4096])  # one run, several, members past it
@pytest.mark.parametrize("ahead", [False, True], ids=["one-thread", "runs-ahead"])
def test_same_result_whichever_inflater(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, flags: int, damage: str, budget: int, ahead: bool
) -> None:
    from gamepak.formats.rfg import passes

    monkeypatch.setattr(inflaters, "WHOLE_BUDGET", budget)
    monkeypatch.setattr(passes, "_second_core", lambda: ahead)
    members = _members()
    data = DAMAGES[damage](_pack(tmp_path, members, flags))
    fast, streamed = _both(monkeypatch, tmp_path, data)
    assert fast == streamed
    if damage == "intact":
        assert fast == dict(members)
    elif flags == 3 and damage == "member larger than declared":
        # A shared stream is cut at the offsets: the member is its first 10 bytes.
        assert isinstance(fast, dict) and fast["m020.xtbl"] == dict(members)["m020.xtbl"][:10]
    else:
        assert isinstance(fast, tuple)


def test_errors_are_gamepak_errors(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    data = _flip(_pack(tmp_path, _members(), 3), DATA_START + 9000)
    path = tmp_path / "bad.str2_pc"
    path.write_bytes(data)
    with gamepak.open(path) as archive, pytest.raises(CorruptArchiveError) as caught:
        archive.extractall(tmp_path / "out")
    assert caught.value.member is not None and caught.value.offset is not None


def test_libdeflate_runs_within_the_budget(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Runs of chunks are inflated whole, each at most the budget: no streaming inflater."""
    from gamepak.formats.rfg import inflate

    monkeypatch.setattr(inflaters, "WHOLE_BUDGET", 20000)
    sizes: list[int] = []
    original = inflaters.RunInput.inflate_run

    def recording(
        self: inflaters.RunInput, read_into: object, length: int, size: int, *args: object, **kw: object
    ) -> object:
        sizes.append(size)
        return original(self, read_into, length, size, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(inflaters.RunInput, "inflate_run", recording)
    monkeypatch.setattr(inflate.Inflater, "__init__", lambda *args: pytest.fail("streamed"))
    inflaters.forget_choice()
    members = _members()
    path = tmp_path / "p.str2_pc"
    path.write_bytes(_pack(tmp_path, members, 3))
    with gamepak.open(path) as archive:
        archive.extractall(tmp_path / "out")
    assert len(sizes) > 3 and max(sizes) <= 20000
    assert {file.name: file.read_bytes() for file in (tmp_path / "out").iterdir()} == dict(members)


# -- zip members ---------------------------------------------------------------------------------
def _zip(members: list[tuple[str, bytes]]) -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return buffer.getvalue()


ZIP_DAMAGES: dict[str, Callable[[bytes], bytes]] = {
    "intact": lambda data: data,
    "bad deflate data": lambda data: _flip(data, 30 + 8 + 40),  # inside the first member's data
    "wrong CRC-32": lambda data: _flip(data, data.index(b"PK\x01\x02") + 16),  # the central directory's
    "stored size cut short": lambda data: _cut_central_size(data),
}


def _cut_central_size(data: bytes) -> bytes:
    """The first member's compressed size in the central directory, halved."""
    central = data.index(b"PK\x01\x02")
    (size,) = struct.unpack_from("<I", data, central + 20)
    return _set(data, central + 20, "<I", size // 2)


@pytest.mark.parametrize("damage", list(ZIP_DAMAGES))
def test_zip_members_same_result_whichever_inflater(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, damage: str
) -> None:
    members = _members(8)
    fast, streamed = _both(monkeypatch, tmp_path, ZIP_DAMAGES[damage](_zip(members)), ".zip")
    assert fast == streamed
    assert (fast == dict(members)) == (damage == "intact")


def test_zip_members_inflated_whole(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from gamepak.formats import zip as zip_format

    monkeypatch.setattr(zip_format.Reader, "_inflated_chunks", lambda *args: pytest.fail("streamed"))
    inflaters.forget_choice()
    members = _members(8)
    path = tmp_path / "a.zip"
    path.write_bytes(_zip(members))
    with gamepak.open(path) as archive:
        assert dict((entry.name, b"".join(chunks)) for entry, chunks in archive.iter_data()) == dict(members)


def test_no_members_asked_for(tmp_path: Path) -> None:
    path = tmp_path / "p.str2_pc"
    path.write_bytes(_pack(tmp_path, _members(3), 3))
    with gamepak.open(path) as archive:
        assert list(archive.iter_data([])) == []
        assert archive.extractall(tmp_path / "out", []) == []


# -- a condensed stream's runs inflated a run ahead, on a second thread ---------------------------
def _runs_ahead_threads() -> list[str]:
    import threading

    return [thread.name for thread in threading.enumerate() if thread.name == "gamepak-inflate"]


def test_runs_inflated_ahead_on_a_second_thread(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With a second core and several runs, runs are inflated on another thread, in order, and
    the thread is gone when the pass ends."""
    import threading

    from gamepak.formats.rfg import passes

    monkeypatch.setattr(inflaters, "WHOLE_BUDGET", 20000)
    monkeypatch.setattr(passes, "_second_core", lambda: True)
    threads: list[str] = []
    original = passes._Runs.inflate

    def recording(self: passes._Runs, *args: object) -> object:
        threads.append(threading.current_thread().name)
        return original(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(passes._Runs, "inflate", recording)
    inflaters.forget_choice()
    members = _members()
    path = tmp_path / "p.str2_pc"
    path.write_bytes(_pack(tmp_path, members, 3))
    with gamepak.open(path) as archive:
        archive.extractall(tmp_path / "out")
    assert len(threads) > 3 and set(threads) == {"gamepak-inflate"}
    assert {file.name: file.read_bytes() for file in (tmp_path / "out").iterdir()} == dict(members)
    assert not _runs_ahead_threads()


def test_one_run_needs_no_second_thread(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Members within the first run (here: the first few of many) are inflated right here."""
    from gamepak.formats.rfg import passes

    monkeypatch.setattr(inflaters, "WHOLE_BUDGET", 20000)
    monkeypatch.setattr(passes, "_second_core", lambda: True)
    monkeypatch.setattr(passes._RunsAhead, "__init__", lambda *args: pytest.fail("a thread for one run"))
    inflaters.forget_choice()
    members = [(name, data[:1000]) for name, data in _members()]
    path = tmp_path / "p.str2_pc"
    path.write_bytes(_pack(tmp_path, members, 3))
    with gamepak.open(path) as archive:
        archive.extractall(tmp_path / "out", [name for name, _ in members[:3]])
    assert (tmp_path / "out" / members[2][0]).read_bytes() == members[2][1]


def test_a_pass_left_early_ends_the_thread(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A pass that is not read to its end (a write failed) stops the thread at once."""
    from gamepak.formats.rfg import passes

    monkeypatch.setattr(inflaters, "WHOLE_BUDGET", 20000)
    monkeypatch.setattr(passes, "_second_core", lambda: True)
    inflaters.forget_choice()
    members = _members()
    path = tmp_path / "p.str2_pc"
    path.write_bytes(_pack(tmp_path, members, 3))
    with gamepak.open(path) as archive:
        passing = archive._member_views(archive.infolist())
        _, data = next(iter(passing))
        assert not isinstance(data, RawRange) and b"".join(data) == members[0][1]
        assert _runs_ahead_threads()
        passing.close()  # type: ignore[attr-defined]
        assert not _runs_ahead_threads()


def test_an_error_ahead_is_raised_when_the_pass_gets_there(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An error while inflating ahead (here a read failing) is raised in the pass, as the same
    error, after the members before it were handed out."""
    from gamepak.formats.rfg import passes

    monkeypatch.setattr(inflaters, "WHOLE_BUDGET", 20000)
    monkeypatch.setattr(passes, "_second_core", lambda: True)
    calls = []
    original = passes._Runs.inflate

    def failing(self: passes._Runs, first: int, *args: object) -> object:
        calls.append(first)
        if len(calls) == 3:
            raise CorruptArchiveError("cannot read run", path="PACK", offset=first)
        return original(self, first, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(passes._Runs, "inflate", failing)
    inflaters.forget_choice()
    members = _members()
    path = tmp_path / "p.str2_pc"
    path.write_bytes(_pack(tmp_path, members, 3))
    seen = []
    with gamepak.open(path) as archive, pytest.raises(CorruptArchiveError, match="cannot read run") as caught:
        for entry, _ in archive._member_views(archive.infolist()):
            seen.append(entry.name)
    assert caught.value.offset == calls[2]
    assert 0 < len(seen) < len(members) and seen == [name for name, _ in members[: len(seen)]]
    assert not _runs_ahead_threads()


def test_runs_are_cut_at_the_target_and_a_larger_chunk_is_a_run_of_its_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Runs of several chunks stop at RUN_TARGET of output; a member larger than that is still
    inflated whole (a run of one chunk, within the budget), never streamed."""
    from gamepak.formats.rfg import inflate, passes

    monkeypatch.setattr(inflaters, "WHOLE_BUDGET", 1 << 20)
    monkeypatch.setattr(inflaters, "RUN_TARGET", 8000)
    monkeypatch.setattr(inflate.Inflater, "__init__", lambda *args: pytest.fail("streamed"))
    runs: list[tuple[int, int]] = []  # (chunks, output bytes)
    original = passes._Runs.inflate

    def recording(self: passes._Runs, first: int, stop: int, *args: object) -> bytearray | None:
        out = original(self, first, stop, *args)  # type: ignore[arg-type]
        assert out is not None
        runs.append((stop - first, len(out)))
        return out

    monkeypatch.setattr(passes._Runs, "inflate", recording)
    inflaters.forget_choice()
    members = [(name, data[:2000]) for name, data in _members()]
    members[5] = (members[5][0], b"<x/>" * 5000)  # 20,000 bytes: larger than a run
    path = tmp_path / "p.str2_pc"
    path.write_bytes(_pack(tmp_path, members, 3))
    with gamepak.open(path) as archive:
        archive.extractall(tmp_path / "out")
    assert {file.name: file.read_bytes() for file in (tmp_path / "out").iterdir()} == dict(members)
    assert (1, 20000) in runs
    assert all(size <= 8000 for chunks, size in runs if chunks > 1)
    assert sum(1 for chunks, _ in runs if chunks > 1) >= 4


def test_a_source_that_watches_its_reads_is_read_from_one_thread(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The catalog hashes a file from the reads made through its source, in order: such a
    source is never read from the second thread."""
    import threading

    from gamepak.core.source import Source
    from gamepak.formats.rfg import passes

    monkeypatch.setattr(inflaters, "WHOLE_BUDGET", 20000)
    monkeypatch.setattr(passes, "_second_core", lambda: True)
    inflaters.forget_choice()
    members = _members()
    path = tmp_path / "p.str2_pc"
    path.write_bytes(_pack(tmp_path, members, 3))
    readers: set[str] = set()

    class Watching(Source):
        def pread(self, size: int, offset: int) -> bytes:
            readers.add(threading.current_thread().name)
            return super().pread(size, offset)

    with gamepak.open(path) as archive:
        plain = archive._source
        archive._source = Watching(name=plain.name, size=plain.size, fd=plain.fd)
        got = {entry.name: b"".join(data) for entry, data in archive.iter_data()}
    assert got == dict(members)
    assert readers == {threading.current_thread().name}


def test_separate_streams_inflated_a_group_ahead(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Flags 1: members are independent streams, inflated in groups on the second thread; a
    member refused on the way comes after every member before it, as on one thread."""
    import threading

    from gamepak.formats.rfg import passes

    monkeypatch.setattr(inflaters, "RUN_TARGET", 100_000)  # groups of several members
    monkeypatch.setattr(passes, "_second_core", lambda: True)
    threads: list[str] = []
    original = passes.inflate_zlib_whole

    def recording(data: bytes, size: int) -> bytearray | None:
        threads.append(threading.current_thread().name)
        return original(data, size)

    monkeypatch.setattr(passes, "inflate_zlib_whole", recording)
    inflaters.forget_choice()
    members = _members()
    path = tmp_path / "p.str2_pc"
    path.write_bytes(_pack(tmp_path, members, 1))
    with gamepak.open(path) as archive:
        archive.extractall(tmp_path / "out")
    assert {file.name: file.read_bytes() for file in (tmp_path / "out").iterdir()} == dict(members)
    assert len(threads) == len(members) and set(threads) == {"gamepak-inflate"}
    assert not _runs_ahead_threads()
    # Member 30 declares more than its compressed bytes can hold: refused after 0..29.
    bad = tmp_path / "bad.str2_pc"
    bad.write_bytes(_set(path.read_bytes(), _entry_field(30, 4), "<I", 0x7FFFFFFF))
    seen = []
    with gamepak.open(bad) as archive, pytest.raises(CorruptArchiveError):
        for entry, _ in archive.iter_data():
            seen.append(entry.name)
    assert seen == [name for name, _ in members[:30]]
    assert not _runs_ahead_threads()
