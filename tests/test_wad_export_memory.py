"""Memory of `texture export` of a WAD (issue 41's budget): the pictures are kept as their pixels
until each PNG is made as its file is written, the lumps are made one at a time (no entry held
per lump), the layout is made from the directory's records one at a time, the pictures exported
are told by a packed look-up, and the manifest is written in pieces, never joined
(benchmarks/bench_texture_memory.py: 28.6 -> 5.9 bytes per input byte in a fresh process)."""

from __future__ import annotations

import io
import random
import struct
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from texture_worst_inputs import wad_many_tiny_pictures

from gamepak.core import lazy
from gamepak.core.layout import fill_bytes
from gamepak.core.lazy import PackedStrings
from gamepak.formats.quake.wad import Reader
from gamepak.ops import quake_textures
from gamepak.ops.made_files import write_files

from conftest import sample


def test_exporting_a_wad_of_many_tiny_pictures_holds_a_few_bytes_a_lump(tmp_path: Path) -> None:
    """Each added 1x1 picture (41 bytes in the WAD) costs its share of the manifest written
    beside the pictures (~160 bytes of JSON), its packed path and pixels (measured: ~440 in
    all, 1,050 before: a PNG, a tuple and a path per picture, a WadEntry per lump twice, the
    layout's records and ranges, a set of every name and of every path)."""
    peaks = []
    for count in (5_000, 15_000):
        path = tmp_path / f"p{count}.wad"
        path.write_bytes(wad_many_tiny_pictures(41 * count))
        runs = iter(range(2))

        def export() -> None:
            out = tmp_path / f"out{count}-{next(runs)}"  # noqa: B023
            assert len(quake_textures.export_textures(path, out)) == count  # noqa: B023

        export()
        tracemalloc.start()
        try:
            export()
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    per_lump = (peaks[1] - peaks[0]) / 10_000
    assert per_lump < 600, per_lump


NAMES = st.text(alphabet="ab/.\u00e9\udcff", max_size=6)


@settings(max_examples=150, deadline=None)
@given(st.lists(NAMES, max_size=12), st.lists(NAMES, max_size=6), st.booleans())
def test_a_packed_lookup_holds_exactly_the_strings_packed(packed: list[str], others: list[str], collide: bool) -> None:
    """With every string hashed alike (`collide`), strings are still told apart by themselves."""
    if collide:
        setattr(lazy, "hash", lambda text: 7)  # noqa: B010 - a name the module does not define
    try:
        strings = PackedStrings()
        for text in packed:
            strings.append(text)
        lookup = strings.lookup()
        for text in packed + others:
            assert (text in lookup) == (text in set(packed))
        assert 7 not in lookup
    finally:
        if collide:
            delattr(lazy, "hash")


def _wad(lumps: list[tuple[int, int]], seed: int) -> bytes:
    """A WAD whose lumps lie at the given (offset, size), over random bytes and zeros."""
    end = max([12] + [offset + size for offset, size in lumps])
    generator = random.Random(seed)
    body = bytearray(bytes(generator.choice([0, 0, 7]) for _ in range(end)))
    directory = end + 3
    body += b"\0\5\0"
    records = b"".join(
        struct.pack("<iiiBBH16s", offset, size, size, 0x42, 0, 0, b"L%d" % index)
        for index, (offset, size) in enumerate(lumps)
    )
    body[:12] = struct.pack("<4sii", b"WAD2", len(lumps), directory)
    return bytes(body) + records


LUMPS = st.lists(st.tuples(st.integers(12, 120), st.sampled_from([0, 1, 3, 8, 40])), max_size=10)


@settings(max_examples=150, deadline=None)
@given(LUMPS, st.booleans(), st.integers(0, 3))
def test_the_layout_keeps_the_bytes_between_lumps_as_before(
    lumps: list[tuple[int, int]], order: bool, seed: int
) -> None:
    """Lumps in order are covered by merged ranges: the filler kept is what every lump's own
    range gives (zero-sized lumps, overlaps and repeats included), and the rest of the layout
    says what the records say."""
    if order:
        lumps = sorted(lumps)
    data = _wad(lumps, seed)
    with Reader(io.BytesIO(data)) as reader:
        exact = reader.layout()["exact"]
        covered = [(0, 12), (reader.directory_offset, 32 * len(lumps)), *lumps]
        assert exact["fill"] == fill_bytes(reader._source, covered)
        entries = reader.infolist()
    assert exact["offsets"] == [offset for offset, _ in lumps] == [entry.offset for entry in entries]
    assert exact["sizes"] == [size for _, size in lumps]
    assert exact["types"] == {f"L{index}": 0x42 for index in range(len(lumps))}


@pytest.mark.parametrize("listed_first", [False, True])
def test_lumps_made_one_at_a_time_are_the_entries(listed_first: bool) -> None:
    path = sample("quake/gfx.wad")
    with Reader(path) as reader:
        with Reader(path) as other:
            expected = [
                (entry.name, entry.offset, entry.size, entry.index, entry.lump_type, entry.kind)
                for entry in map(other.lump, other.namelist())
            ]
        if listed_first:
            reader.infolist()
        lumps = [
            (lump.name, lump.offset, lump.size, lump.index, lump.lump_type, lump.kind) for lump in reader.iter_lumps()
        ]
        assert reader._entries is None or listed_first
    assert lumps == expected and len(lumps) > 100


def test_a_file_given_in_pieces_is_written_whole(tmp_path: Path) -> None:
    written = write_files(tmp_path / "out", [("a.json", [b"[1", b",2", b"]"]), ("b.json", lambda: [b"{", b"}"])])
    assert [Path(path).read_bytes() for path in written] == [b"[1,2]", b"{}"]
