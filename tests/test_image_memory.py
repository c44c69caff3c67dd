"""Memory per input byte of the readers and commands of image-heavy content (issue 41): a
sprite's frames and a model's skins are made when read, never one object per image held for
the whole file; listings and exports stream (benchmarks/bench_texture_memory.py reports each
command's figure in a fresh process). Each bound here is a multiple of the input that a list of
per-image objects passes several times over."""

from __future__ import annotations

import io
import json
import shutil
import struct
import tracemalloc
from collections.abc import Callable
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from texture_worst_inputs import mdl_many_tiny_skins, spr_many_tiny_frames

from gamepak.cli.common import write_lines
from gamepak.cli.json_output import json_text, print_json_rows
from gamepak.core.lazy import Lazy
from gamepak.formats.quake import mdl, sources, spr
from gamepak.ops import quake_textures


def _stdout_of(work: Callable[[], object]) -> bytes:
    """What `work` wrote to stdout (through `sys.stdout.buffer`, as the CLI writes)."""
    out = io.BytesIO()
    stream = io.TextIOWrapper(out, encoding="utf-8")
    with redirect_stdout(stream):
        work()
    stream.flush()
    stream.detach()  # the wrapper would close `out` when collected
    return out.getvalue()


class _LineCounter(io.RawIOBase):
    """A stdout that counts the lines written to it and keeps none of them: what a test keeps
    of the output is not the command's memory."""

    def __init__(self) -> None:
        self.lines = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        with memoryview(data) as view:
            self.lines += view.tobytes().count(b"\n")
            return view.nbytes


def _lines_printed(work: Callable[[], object]) -> int:
    """How many lines `work` wrote to stdout (through `sys.stdout.buffer`, as the CLI writes)."""
    counter = _LineCounter()
    stream = io.TextIOWrapper(io.BufferedWriter(counter), encoding="utf-8")
    with redirect_stdout(stream):
        work()
    stream.flush()
    return counter.lines


def _peak(work: Callable[[], object]) -> int:
    """Peak bytes Python allocated while `work` ran (its result dropped inside), `work` run
    once before untraced (the modules it imports are not the input's cost)."""
    work()
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    ("build", "kind"),
    [(mdl_many_tiny_skins, "mdl"), (spr_many_tiny_frames, "spr")],
    ids=["mdl skins", "spr frames"],
)
def test_reading_and_walking_many_tiny_images_stays_within_the_input(build: Callable[[int], bytes], kind: str) -> None:
    """Before: 150 (skins) and 40 (frames) bytes per input byte, an object per image."""
    data = build(30_000)

    def walk() -> None:
        found = sources.read_images(kind, data, "x", "x")
        for image in found:
            assert image.mips

    assert _peak(walk) < 6 * len(data)


@pytest.mark.parametrize(("build", "name"), [(mdl_many_tiny_skins, "k.mdl"), (spr_many_tiny_frames, "s.spr")])
def test_listing_many_tiny_images_stays_within_the_input(
    tmp_path: Path, build: Callable[[int], bytes], name: str
) -> None:
    """`texture ls` (rows and printed lines) holds neither a row nor a line per image, and reads
    the file once: the floor is the file's size, and each added image costs less than its input
    did (2.5 B/B: the reader's index of image offsets, 8 bytes an image). Before: the floor was
    what `read_file` took (a first buffer of 1 MiB at least), and under it hid 64 Ki characters of
    printed lines held as a str each, joined and encoded (260 kB), and the test's own copy of the
    output: 433 kB above the file for 3,000 skins."""
    from gamepak.cli import main

    peaks: list[int] = []
    sizes: list[int] = []
    for size in (15_000, 30_000):
        path = tmp_path / name
        path.write_bytes(build(size))
        printed: list[int] = []

        def command() -> None:
            printed[:] = [_lines_printed(lambda: main(["texture", "ls", "-q", str(path)]))]  # noqa: B023

        peaks.append(_peak(command))
        sizes.append(path.stat().st_size)
        assert printed[0] == len(sources.read_images(name[-3:], path.read_bytes(), "x", "x")) > 700
    above = [peak - size for peak, size in zip(peaks, sizes, strict=True)]
    # 166 kB above a 30 kB file: the parser, one batch of lines (65 kB), the offsets (48 kB)
    assert above[1] < 7 * sizes[1], above
    assert above[1] - above[0] < 2.5 * (sizes[1] - sizes[0]), above


def _mdl_of_noise_skins(path: Path, skins: int) -> int:
    """An MDL of one group of `skins` 64x64 skins of noise at `path`; its size."""
    import random

    pixels = random.Random(41).randbytes(64 * 64 * skins)
    data = bytearray(mdl_many_tiny_skins(5))
    data[48:60] = struct.pack("<iii", 1, 64, 64)  # one group of `skins` 64x64 skins
    skin_part = struct.pack("<ii", 1, skins) + struct.pack(f"<{skins}f", *([0.1] * skins)) + pixels
    path.write_bytes(bytes(data[:84]) + skin_part + bytes(data[84 + 8 + 4 + 1 :]))
    assert len(mdl.read(path.read_bytes(), "k").skins) == skins
    return path.stat().st_size


def test_exporting_skins_makes_each_png_when_it_is_written(tmp_path: Path) -> None:
    """Before: every PNG was made and held, then the files were written (PNGs of noise, 7 KB
    each: 1.8 bytes per input byte); now one at a time. The floor is the file's size (read
    once); above it, a fixed cost (the compressor's state, 290 kB at any level) and, for each
    skin, little (its name, until the files are written)."""
    peaks: list[int] = []
    sizes: list[int] = []
    for skins in (100, 300):
        path = tmp_path / "k.mdl"
        sizes.append(_mdl_of_noise_skins(path, skins))

        def export() -> None:
            shutil.rmtree(tmp_path / "out", ignore_errors=True)
            written = quake_textures.export_textures(path, tmp_path / "out")  # noqa: B023
            assert len(written) == skins  # noqa: B023

        peaks.append(_peak(export))
        assert (tmp_path / "out" / f"skin0_{skins - 1}.png").stat().st_size > 7_000
    above = [peak - size for peak, size in zip(peaks, sizes, strict=True)]
    assert above[1] < 0.8 * sizes[1], above
    assert above[1] - above[0] < 0.1 * (sizes[1] - sizes[0]), above


def test_lazy_images_say_what_the_lists_said() -> None:
    """Names, offsets, groups and intervals of a lazily read model and sprite, from the bytes."""
    data = mdl_many_tiny_skins(50)
    model = mdl.read(data, "k")
    assert isinstance(model.skins, Lazy) and len(model.skins) == 10
    assert [skin.name for skin in model.skins] == [f"skin0_{n}" for n in range(10)]
    assert model.skins[-1].offset == mdl.HEADER.size + 8 + 4 * 10 + 9
    assert model.skins[3].interval == pytest.approx(0.1) and model.skins[3].group == 0
    with pytest.raises(IndexError):
        model.skins[10]
    # A sprite of a single frame, then a group of two (intervals 0.5, 1.5).
    header = struct.pack("<4siifiiifi", b"IDSP", 1, 0, 1.0, 2, 1, 2, 0.0, 0)
    single = struct.pack("<iiiii", 0, 3, -4, 1, 1) + b"\7"
    group = struct.pack("<ii2f", 1, 2, 0.5, 1.5) + struct.pack("<iiii", 0, 0, 2, 1) + b"\1\2"
    group += struct.pack("<iiii", 1, 1, 1, 1) + b"\3"
    sprite_data = header + single + group
    frames = spr.read(sprite_data, "s").frames
    assert [(f.name, f.origin, f.width, f.group, f.interval) for f in frames] == [
        ("frame0", (3, -4), 1, None, None),
        ("frame1_0", (0, 0), 2, 1, 0.5),
        ("frame1_1", (1, 1), 1, 1, 1.5),
    ]
    assert [image.pixels for image in spr.read(sprite_data, "s").images(sprite_data)] == [b"\7", b"\1\2", b"\3"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.dictionaries(
            st.text(max_size=5),
            st.one_of(st.none(), st.integers(), st.text(max_size=8), st.lists(st.integers(), max_size=3)),
            max_size=4,
        ),
        max_size=5,
    )
)
def test_rows_printed_as_they_come_are_the_json_of_the_list(rows: list[dict[str, object]]) -> None:
    printed = _stdout_of(lambda: print_json_rows(iter(rows)))
    assert printed.decode("utf-8") == json_text(rows)
    assert json.loads(printed) == rows


def test_lines_are_written_in_batches_as_they_come() -> None:
    printed = _stdout_of(lambda: write_lines((f"{n}\n" for n in range(10_000)), batch=100))
    assert printed.decode() == "".join(f"{n}\n" for n in range(10_000))


def test_a_lazy_list_is_a_read_only_list() -> None:
    squares = Lazy(5, lambda n: n * n)
    assert list(squares) == [0, 1, 4, 9, 16] and squares == [0, 1, 4, 9, 16] and squares != [0, 1]
    assert squares[-1] == 16 and squares[1:3] == [1, 4] and 9 in squares and squares.index(4) == 2
    with pytest.raises(IndexError):
        squares[5]


def test_exporting_a_peg_makes_each_png_when_it_is_written(tmp_path: Path) -> None:
    """Before: a peg's PNGs were all made and held, then written (here 100 DXT1 textures of
    64x64 noise, 2 KB each in the peg and several times that as PNGs); now one at a time."""
    import random

    from gamepak.formats.rfg.peg.layout import ENTRY, HEADER
    from gamepak.ops.textures import export_textures

    count, side = 100, 64
    frame = side * side // 2  # DXT1: 8 bytes a 4x4 block
    names = b"".join(b"t%d\0" % index for index in range(count))
    entries = b"".join(
        ENTRY.pack(frame * index, side, side, 400, side, 0, 0, 1, 0, 0, side, 1, 1, frame, bytes(16))
        for index in range(count)
    )
    gpu = random.Random(41).randbytes(frame * count)
    cpu_size = HEADER.size + len(entries) + len(names)
    cpu = HEADER.pack(b"GEKV", 10, 0, cpu_size, len(gpu), count, 0, count, 16) + entries + names
    (tmp_path / "n.cpeg_pc").write_bytes(cpu)
    (tmp_path / "n.gpeg_pc").write_bytes(gpu)

    def export() -> None:
        shutil.rmtree(tmp_path / "out", ignore_errors=True)
        assert len(export_textures(tmp_path / "n.cpeg_pc", tmp_path / "out")) == count

    peak = _peak(export)
    png_total = sum(path.stat().st_size for path in (tmp_path / "out").iterdir())
    assert png_total > 3 * len(gpu)
    assert peak < png_total, (peak, png_total)


@pytest.mark.parametrize("existing", [False, True], ids=["into a new folder", "into a folder that exists"])
def test_exporting_many_tiny_skins_holds_a_few_bytes_a_skin(tmp_path: Path, existing: bool) -> None:
    """`texture export` of a model of many 1x1 skins (5 bytes each in the file): each added skin
    costs its packed file name and a few bytes of the plan (measured: 40), not a str and list
    slots (93 before; 20.7 bytes per input byte above the floor in a fresh process, 7.4 now).
    Into a folder that exists (holding a file), the same 40 (370 before: a set of every file in
    the plan, and a temporary name and a tuple per file until they were renamed into place)."""
    peaks: list[int] = []
    for skins in (10_000, 30_000):
        path = tmp_path / f"k{skins}.mdl"
        path.write_bytes(mdl_many_tiny_skins(5 * skins))
        runs = iter(range(2))

        def export() -> None:
            # A new folder each run: removing the last one here would count rmtree's listing.
            out = tmp_path / f"out{skins}-{next(runs)}"  # noqa: B023
            if existing:
                out.mkdir()
                (out / "theirs.txt").write_bytes(b"kept")
            assert len(quake_textures.export_textures(path, out)) == skins  # noqa: B023

        peaks.append(_peak(export))
        assert (tmp_path / f"out{skins}-1" / f"skin0_{skins - 1}.png").stat().st_size > 60
    per_skin = (peaks[1] - peaks[0]) / 20_000
    assert per_skin < 50, per_skin
