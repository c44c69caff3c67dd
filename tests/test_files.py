"""`core.files.read_file`: the one capped way gamepak reads a whole file, and the one in-place
append of PAK and WAD (`core.inplace.append_with_trailing_directory`), and the one offsets helper.

The source scan below fails when a module reads a file whole some other way (`open(...)` then
`.read()` with no size, `Path.read_bytes()`, `json.load(handle)`): each such read was one of the
dozen "read the whole file or raise" helpers, most without a cap.
"""

from __future__ import annotations

import io
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamepak.core.files import read_file, read_file_owned
from gamepak.core.source import OwnedBuffer
from gamepak.errors import GamepakError

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "gamepak"


def test_reads_a_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "a.bin"
    data = os.urandom(3 << 20)
    path.write_bytes(data)
    assert read_file(path) == data
    owned = read_file_owned(path)
    assert isinstance(owned, OwnedBuffer) and bytes(owned) == data
    (tmp_path / "empty").write_bytes(b"")
    assert read_file(tmp_path / "empty") == b""


def test_a_file_over_the_cap_is_refused_before_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.bin"
    path.write_bytes(b"x" * 1000)
    import gamepak.core.files as files

    def no_read(*args: object, **kwargs: object) -> bytes:
        raise AssertionError("read although over the cap")

    monkeypatch.setattr(files, "read_whole", no_read)
    monkeypatch.setattr(files.os, "read", no_read)
    with pytest.raises(GamepakError, match=rf"^{re.escape(str(path))}: 1000 bytes, more than the 999 bytes"):
        read_file(path, limit=999)
    monkeypatch.undo()
    assert read_file(path, limit=1000) == b"x" * 1000


def test_a_file_growing_past_the_cap_while_read_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "grows.bin"
    path.write_bytes(b"x" * 10)
    _grows_once_opened(path, monkeypatch, b"y" * 100)  # past the size seen when opened, and the cap
    with pytest.raises(GamepakError, match="grew while read"):
        read_file(path, limit=50)


@pytest.mark.parametrize("grown", [1, 5000, 3 << 20])
def test_a_file_growing_within_the_cap_while_read_is_read_to_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, grown: int
) -> None:
    path = tmp_path / "grows.bin"
    path.write_bytes(b"x" * 10)
    _grows_once_opened(path, monkeypatch, b"y" * grown)
    assert read_file(path, limit=10 + grown) == b"x" * 10 + b"y" * grown
    monkeypatch.undo()
    # The same growth once more (10 + 2 * grown bytes): one byte over the cap is refused.
    _grows_once_opened(path, monkeypatch, b"z" * grown)
    with pytest.raises(GamepakError, match="grew while read"):
        read_file(path, limit=9 + 2 * grown)


def _grows_once_opened(path: Path, monkeypatch: pytest.MonkeyPatch, more: bytes) -> None:
    """`read_file` of `path` sees the size it has when opened, then the file holds `more` too."""
    import gamepak.core.files as files

    real_fstat = os.fstat

    def small_fstat(fd: int) -> os.stat_result:
        result = real_fstat(fd)
        with open(path, "ab") as handle:
            handle.write(more)
        return result

    monkeypatch.setattr(files.os, "fstat", small_fstat)


def test_a_file_is_read_whole_in_one_buffer_of_its_size(tmp_path: Path) -> None:
    """No buffer larger than the file made first (before: a first buffer of 1 MiB at least,
    zeroed, then cut: 0.71 ms for an 850 kB file against a direct read's 0.09 ms)."""
    import tracemalloc

    path = tmp_path / "a.bin"
    data = os.urandom(600_000)
    path.write_bytes(data)
    read_file(path)
    tracemalloc.start()
    try:
        assert read_file(path) == data
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(data) <= peak < len(data) + 4096, peak


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    outcome: list[BaseException | bytes] = []

    def read() -> None:
        try:
            outcome.append(read_file(fifo))
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=read, daemon=True)
    started = time.monotonic()
    thread.start()
    thread.join(5)
    if thread.is_alive():  # unblock it: a writer opens the other end
        with open(fifo, "wb"):
            pass
        pytest.fail("read_file blocked on a FIFO")
    assert time.monotonic() - started < 5
    assert isinstance(outcome[0], GamepakError)
    assert str(outcome[0]) == f"{fifo}: cannot read: not a regular file (a FIFO, device or socket)"


def test_messages_name_the_file_and_the_role(tmp_path: Path) -> None:
    with pytest.raises(GamepakError, match=rf"^{re.escape(str(tmp_path))}: cannot read: a folder$"):
        read_file(tmp_path)
    missing = tmp_path / "missing.lmp"
    with pytest.raises(GamepakError, match=r"missing.lmp: cannot read the palette: No such file"):
        read_file(missing, what="the palette")

    class OwnError(GamepakError):
        pass

    with pytest.raises(OwnError, match=r"^buffer 0 \(x.bin\): cannot read: No such file"):
        read_file(missing, error=OwnError, label="buffer 0 (x.bin)")


def test_a_palette_file_larger_than_a_palette_reads_is_refused(tmp_path: Path) -> None:
    # Before: silently cut at 1 MiB, then judged by what was left.
    from gamepak.formats.quake.palette import read_palette_file

    path = tmp_path / "palette.lmp"
    path.write_bytes(bytes((1 << 20) + 1))
    with pytest.raises(GamepakError, match="palette.lmp: 1048577 bytes, more than the 1048576"):
        read_palette_file(path)


# Reads of a whole file that are not a file's: a member stream (`stream`, `source`, `base`,
# `target`: members of open packs), a queued member (`member.read()`), a reader's own verb.
_WHOLE_READ = re.compile(r"\b(handle|fh|file|f)\.read\(\)|\.read_bytes\(\)|json\.load\(")


def test_no_module_reads_a_file_whole_but_through_read_file() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "files.py" and path.parent.name == "core":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _WHOLE_READ.search(line) and not line.lstrip().startswith(("#", "|")):
                found.append(f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}")
    assert found == [], "read whole without a cap (use core.files.read_file):\n" + "\n".join(found)


def test_the_scan_sees_a_whole_read() -> None:
    assert _WHOLE_READ.search('        with open(path, "rb") as handle:\n            data = handle.read()')
    assert _WHOLE_READ.search("data = Path(p).read_bytes()")
    assert not _WHOLE_READ.search("head = handle.read(40)")


def test_one_offsets_helper_for_nul_terminated_blocks() -> None:
    from gamepak.core.layout import terminated_offsets
    from gamepak.formats.j2me import string_tables
    from gamepak.formats.rfg import records

    assert terminated_offsets([b"ab", b"", b"c"]) == [0, 3, 4]
    assert not hasattr(string_tables, "_string_starts")
    assert not hasattr(records, "name_offsets")
    block, offsets = records.name_block([b"ab", b"", b"c"])
    assert block == b"ab\0\0c\0" and offsets == [0, 3, 4]


@pytest.mark.parametrize("suffix", [".pak", ".wad"])
def test_pak_and_wad_append_through_one_helper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str) -> None:
    import gamepak
    import gamepak.core.inplace as inplace

    path = tmp_path / f"pack{suffix}"
    with gamepak.create(path) as writer:
        writer.add("one", b"1" * 100)
        writer.add("two", b"2" * 50)
    calls = []
    real = inplace.append_with_trailing_directory

    def traced(*args: object, **kwargs: object) -> None:
        calls.append(args[0])
        real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(inplace, "append_with_trailing_directory", traced)
    with gamepak.edit(path) as editor:
        editor.replace("two", b"3" * 70)
        editor.add("three", b"4" * 10)
    assert editor.result.method == "in place"
    assert calls == [str(path)]
    with gamepak.open(path) as pack:
        assert [pack.read(name) for name in pack.namelist()] == [b"1" * 100, b"3" * 70, b"4" * 10]


def test_a_format_module_being_imported_by_another_thread_is_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A server's requests open packs at once: the second must not get the first's half-made module.
    import sys

    from gamepak.core.registry import load_module

    (tmp_path / "slow_format_module.py").write_text("import time\ntime.sleep(0.5)\nsniff = 'ready'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "slow_format_module", raising=False)
    first = threading.Thread(target=load_module, args=("slow_format_module",))
    first.start()
    while "slow_format_module" not in sys.modules:
        time.sleep(0.01)
    assert load_module("slow_format_module").sniff == "ready"
    first.join()


class _Trickle(io.RawIOBase):
    """A stream giving at most `step` bytes a read (as a pipe or a signal may)."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data, self.step, self.position = data, step, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        piece = self.data[self.position : self.position + min(self.step, len(buffer))]
        buffer[: len(piece)] = piece
        self.position += len(piece)
        return len(piece)


@settings(max_examples=200, deadline=None)
@given(
    length=st.integers(0, 3000),
    size=st.integers(0, 4000),
    first_buffer=st.one_of(st.none(), st.integers(1, 4000)),
    step=st.integers(1, 5000),
)
def test_read_whole_reads_up_to_its_size_whatever_the_first_buffer_said(
    length: int, size: int, first_buffer: int | None, step: int
) -> None:
    # (small direct reads and buffer steps: a first buffer too small for the stream, as for a
    # file that grew since its size was taken, still gets all of it up to `size`)
    from gamepak.core import files

    data = bytes(range(256)) * (length // 256 + 1)
    data = data[:length]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(files, "_DIRECT_READ", 1000)
        patch.setattr(files, "_READ_STEP", 700)
        assert files.read_whole(_Trickle(data, step), size, first_buffer) == data[:size]


def test_a_module_another_thread_is_still_importing_is_not_looked_into(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Source.open` and the zip writer ask whether `core.streams` / `formats.zip_reader` is
    loaded (to know a MemberStream, or a member from a zip, without importing them). A module
    another thread is still importing is in `sys.modules` without its classes yet: that is
    "not loaded", not an AttributeError (`serve` answered two concurrent table pages with
    500 when one thread opened a pack while another imported `core.streams`)."""
    import sys
    import types
    import zipfile

    import gamepak
    from gamepak.core.source import Source

    monkeypatch.setitem(sys.modules, "gamepak.core.streams", types.ModuleType("gamepak.core.streams"))
    monkeypatch.setitem(sys.modules, "gamepak.formats.zip_reader", types.ModuleType("gamepak.formats.zip_reader"))
    with Source.open(io.BytesIO(b"data"), name="x") as source:
        assert source.size == 4
    out = tmp_path / "out.zip"
    with gamepak.create(out, "zip") as writer:
        writer.add("a.txt", b"hello")
    assert zipfile.ZipFile(out).read("a.txt") == b"hello"
