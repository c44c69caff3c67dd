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

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from texture_worst_inputs import mdl_many_tiny_skins, spr_many_tiny_frames

from gamepak.cli.common import write_lines
from gamepak.cli.json_output import json_text, print_json_rows
from gamepak.core.files import read_file
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


@pytest.mark.parametrize(
    ("build", "name", "size"),
    [(mdl_many_tiny_skins, "k.mdl", 15_000), (spr_many_tiny_frames, "s.spr", 60_000)],
    ids=["mdl skins", "spr frames"],
)
def test_listing_many_tiny_images_stays_within_the_input(
    tmp_path: Path, build: Callable[[int], bytes], name: str, size: int
) -> None:
    """`texture ls` (rows and printed lines) holds neither a row nor a line per image. (Sizes:
    a list per image must pass the 1 MiB first buffer of reading the file, or it hides.)"""
    from gamepak.cli import main

    path = tmp_path / name
    path.write_bytes(build(size))
    printed: list[bytes] = []

    def command() -> None:
        printed[:] = [_stdout_of(lambda: main(["texture", "ls", "-q", str(path)]))]

    # Reading the file whole is the floor (a first buffer of 1 MiB at least).
    floor = _peak(lambda: read_file(path))
    assert _peak(command) - floor < 6 * path.stat().st_size
    assert printed[0].count(b"\n") == len(sources.read_images(name[-3:], path.read_bytes(), "x", "x")) > 700


def test_exporting_skins_makes_each_png_when_it_is_written(tmp_path: Path) -> None:
    """Before: every PNG was made and held, then the files were written (here 100 PNGs of
    noise, 7 KB each: 1.8 bytes per input byte); now one at a time."""
    import random

    skins = 100
    pixels = random.Random(41).randbytes(64 * 64 * skins)
    data = bytearray(mdl_many_tiny_skins(5))
    data[48:60] = struct.pack("<iii", 1, 64, 64)  # one group of `skins` 64x64 skins
    path = tmp_path / "k.mdl"
    skin_part = struct.pack("<ii", 1, skins) + struct.pack(f"<{skins}f", *([0.1] * skins)) + pixels
    path.write_bytes(bytes(data[:84]) + skin_part + bytes(data[84 + 8 + 4 + 1 :]))
    assert len(mdl.read(path.read_bytes(), "k").skins) == skins

    def export() -> None:
        shutil.rmtree(tmp_path / "out", ignore_errors=True)
        written = quake_textures.export_textures(path, tmp_path / "out")
        assert len(written) == skins

    peak = _peak(export) - _peak(lambda: read_file(path))
    assert peak < 0.8 * path.stat().st_size, peak
    assert (tmp_path / "out" / "skin0_99.png").stat().st_size > 7_000


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
