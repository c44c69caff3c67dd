"""Fuzzing the Gameloft sprite reader with hypothesis: the atheris harness fuzz/fuzz_read_sprite.py
(which checks every path a stranger's sprite takes: only gamepak errors, byte-exact write,
pixels, drawing, export and import back to the same bytes, the commands, the preview) runs
here on its seeds (content_seeds.sprite_seeds), mutated where a sprite's fields are: bytes set,
16-bit counts and sizes changed, the end cut or grown.

`make test` runs a small budget; `make fuzz` a larger one (GAMEPAK_FUZZ_EXAMPLES examples per
test).
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FUZZ = Path(__file__).resolve().parent.parent / "fuzz"
sys.path.insert(0, str(FUZZ))

import fuzz_read_sprite  # noqa: E402

import content_seeds  # noqa: E402

EXAMPLES = int(os.environ.get("GAMEPAK_FUZZ_EXAMPLES", "30"))
# Bytes that mean something to the reader: 0 and 1, the signed bytes' edges, I127RLE's run
# marker (0x80 + n), the largest size (255, frame 255 = "nothing").
SPECIAL_BYTES = [0, 1, 2, 0x7F, 0x80, 0x81, 0xFE, 0xFF]
# 16-bit values of the counts, `first` indices and data sizes: one more or less than a seed's,
# the high byte the game ignores, the largest.
SPECIAL_WORDS = [0, 1, 2, 0xFF, 0x100, 0x101, 0x7FFF, 0xFFFF]
# Where to change: most often among the counts, tables and references before the pixels (the
# seeds' first 48 bytes), else anywhere.
POSITIONS = st.integers(6, 48) | st.integers(0, 1 << 20)
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)


@pytest.fixture(scope="module")
def seeds() -> list[bytes]:
    return [data for _, data in content_seeds.sprite_seeds()]


def _mutate(data: bytes, bytes_set: list[tuple[int, int]], words_set: list[tuple[int, int]], end: int) -> bytes:
    buffer = bytearray(data)
    for position, value in bytes_set:
        buffer[position % len(buffer)] = value
    for position, value in words_set:
        at = position % max(1, len(buffer) - 1)
        if at + 2 <= len(buffer):
            struct.pack_into("<H", buffer, at, value)
    if end < 0:
        return bytes(buffer[: max(0, len(buffer) + end)])
    return bytes(buffer) + bytes([0x80]) * end


@SETTINGS
@given(
    pick=st.integers(0, 1 << 16),
    bytes_set=st.lists(st.tuples(POSITIONS, st.sampled_from(SPECIAL_BYTES) | st.integers(0, 255)), max_size=4),
    words_set=st.lists(st.tuples(POSITIONS, st.sampled_from(SPECIAL_WORDS) | st.integers(0, 0xFFFF)), max_size=2),
    end=st.integers(-16, 4),
)
def test_mutated_sprites_are_refused_only_with_gamepak_errors(
    seeds: list[bytes], pick: int, bytes_set: list[tuple[int, int]], words_set: list[tuple[int, int]], end: int
) -> None:
    fuzz_read_sprite.TestOneInput(_mutate(seeds[pick % len(seeds)], bytes_set, words_set, end))


def test_the_seeds_take_every_path(seeds: list[bytes]) -> None:
    """Each seed reads, and together they name every encoding and colour format, several
    palettes, flips, frame 255 and a sprite without modules: the mutations start from there."""
    from gamepak.formats.j2me.sprite import codec, read_sprite

    sprites = [read_sprite(data) for data in seeds]
    assert {sprite.encoding for sprite in sprites} == set(codec.ENCODINGS) | {None}
    assert {sprite.pixel_format for sprite in sprites} == set(codec.PIXEL_FORMATS) | {None}
    assert max(len(sprite.palettes) for sprite in sprites) >= 2
    assert any(af.frame == 255 for sprite in sprites for af in sprite.aframes)
    assert {fm.flags for sprite in sprites for fm in sprite.fmodules} >= {0, 1, 2, 3}
    for data in seeds:
        fuzz_read_sprite.TestOneInput(data)


def test_each_byte_of_the_structure_changed(seeds: list[bytes]) -> None:
    """Every byte between the header and the pixel format (counts, modules, FModules, frames,
    AFrames, anims) of the hand-made and the written sprite, one more and 255: a sweep that
    hypothesis's few examples may miss."""
    from gamepak.formats.j2me.sprite import read_sprite

    for data in (seeds[0], seeds[-1]):
        sprite = read_sprite(data)
        # After the anims: pixel format, palette counts, palettes (1555: 2 bytes), encoding, modules.
        images = 6 + 2 * len(sprite.palettes) * sprite.colours + sum(2 + len(data) for data in sprite.module_data)
        structure_end = len(data) - images
        for position in range(6, structure_end):
            for value in ((data[position] + 1) & 0xFF, 0xFF):
                fuzz_read_sprite.TestOneInput(data[:position] + bytes([value]) + data[position + 1 :])
