"""Texture readers within a budget on their worst inputs (tests/texture_worst_inputs.py): counts
and sizes checked against the input before anything is allocated or copied per entry, memory a
small multiple of the input (benchmarks/bench_texture_memory.py reports each reader's figure)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from test_cli_texture import _peak_rss_mb
from texture_worst_inputs import (
    BUILDERS,
    bsp_repeated_offsets,
    peg_many_tiny_textures,
    peg_overlapping_frames,
)

from gamepak.cli import main
from gamepak.errors import CorruptArchiveError
from gamepak.formats.quake import sources
from gamepak.formats.rfg.peg import Peg

# What the CLI costs before reading anything (interpreter, numpy, Pillow, gamepak), in MB.
FLOOR_MB = 60


def test_a_bsp_naming_one_miptex_from_every_slot_reads_it_once(tmp_path: Path) -> None:
    """Before: the record was copied once per slot (48,000 slots x 5.4 KB: 260 MB for a 200 KB
    map), and each slot's end was found by a linear search (quadratic in the slot count)."""
    data = bsp_repeated_offsets(200_000, side=64)
    path = tmp_path / "m.bsp"
    path.write_bytes(data)
    found = sources.read_images("bsp", data, "m", str(path))
    assert [image.name for image in found] == ["wall"]  # one record, listed once
    code, peak = _peak_rss_mb("texture", "ls", str(path))
    assert code == 0 and peak < FLOOR_MB + 60, peak


def test_bsp_import_puts_a_shared_record_back_once(tmp_path: Path) -> None:
    """The images listed, exported and imported skip repeated slots alike."""
    import numpy as np
    from PIL import Image

    path = tmp_path / "m.bsp"
    path.write_bytes(bsp_repeated_offsets(2_000, side=16))
    [before] = sources.read_images("bsp", path.read_bytes(), "m", str(path))
    assert main(["texture", "export", str(path), "-o", str(tmp_path / "out")]) == 0
    [png] = sorted((tmp_path / "out").glob("*.png"))
    Image.fromarray(np.full((16, 16, 4), (20, 20, 20, 255), dtype=np.uint8)).save(png)
    assert main(["texture", "import", str(path), str(tmp_path / "out")]) == 0
    [after] = sources.read_images("bsp", path.read_bytes(), "m", str(path))
    assert after.pixels != before.pixels and len(set(after.pixels)) == 1


def test_a_peg_whose_entries_share_one_frame_is_refused_before_copying(tmp_path: Path) -> None:
    """Before: each entry's frame was sliced out of the GPU file before the layout was checked
    (300 entries x 1 MB: 300 MB for a 1 MB pair)."""
    cpu, gpu = peg_overlapping_frames(300, 1 << 20)
    (tmp_path / "o.cpeg_pc").write_bytes(cpu)
    (tmp_path / "o.gpeg_pc").write_bytes(gpu)
    with pytest.raises(CorruptArchiveError, match="not laid out one after another"):
        Peg.parse(cpu, gpu, "o.cpeg_pc")
    code, peak = _peak_rss_mb("texture", "export", str(tmp_path / "o.cpeg_pc"), "-o", str(tmp_path / "out"))
    assert code == 1 and peak < FLOOR_MB + 40, peak


def test_looking_up_every_texture_of_a_large_peg_is_linear() -> None:
    """Before: `Peg.texture` scanned the list per look-up: export of 30,000 textures took
    minutes (every texture is looked up by name several times)."""
    cpu, gpu = peg_many_tiny_textures(20_000 * 66)
    peg = Peg.parse(cpu, gpu, "many.cpeg_pc")
    assert len(peg.textures) == 20_000
    start = time.perf_counter()
    for texture in peg.textures:
        assert peg.texture(texture.name) is texture
        assert len(peg.mip_data(texture.name)) == 8
    assert time.perf_counter() - start < 5
    peg.remove_texture("t5")  # the table follows removals and additions
    assert peg.texture("t6").name == "t6" and peg.textures.index(peg.texture("t6")) == 5
    with pytest.raises(Exception, match="no texture named 't5'"):
        peg.texture("t5")


@pytest.mark.parametrize("label", list(BUILDERS))
def test_every_quake_readers_worst_input_lists_within_budget(tmp_path: Path, label: str) -> None:
    """`texture ls` of 1 MB of each reader's worst input stays under 30 bytes of memory per
    input byte above the floor (the benchmark prints each figure, all 12 or under; an MDL of
    1x1 skins at 5 bytes each took 150 when it held an image object per skin, a sprite's 1x1
    frames 40)."""
    build, name = BUILDERS[label]
    path = tmp_path / name
    path.write_bytes(build(1 << 20))
    code, peak = _peak_rss_mb("texture", "ls", str(path))
    assert code == 0, label
    assert peak - FLOOR_MB < 30 * path.stat().st_size / 1e6, (label, peak)
