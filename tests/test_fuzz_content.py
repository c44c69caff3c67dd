"""Fuzzing the content readers that are not archives with hypothesis: RFG localization files and
the translations `text import` reads, RFG tables and the sheets `table import` reads, VDrift
track and car folders. Each atheris harness of fuzz/ for them (which checks its reader's
invariants: only gamepak errors, round trips, nothing read outside the data folder) runs here on
its seeds, mutated. The Quake readers have their own (test_fuzz_quake.py).

`make test` runs a small budget; `make fuzz` a larger one (GAMEPAK_FUZZ_EXAMPLES examples per
test).
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FUZZ = Path(__file__).resolve().parent.parent / "fuzz"
sys.path.insert(0, str(FUZZ))

import content_seeds  # noqa: E402

EXAMPLES = int(os.environ.get("GAMEPAK_FUZZ_EXAMPLES", "30"))
# Each content harness and the seeds its corpus starts from.
HARNESS_SEEDS = {
    "fuzz_read_locatext": content_seeds.locatext_seeds,
    "fuzz_import_translation": content_seeds.translation_seeds,
    "fuzz_read_xtbl": content_seeds.xtbl_seeds,
    "fuzz_import_sheet": content_seeds.sheet_seeds,
    "fuzz_read_scene": content_seeds.scene_seeds,
}
# Bytes that mean something to these readers: NUL, blanks and line ends, markup, quotes,
# brackets, comment starts, the high bit.
SPECIAL_BYTES = [0, 9, 10, 13, 32, ord("#"), ord(";"), ord('"'), ord("<"), ord(">"), ord("["), ord("{"), 0x7F, 0xFF]


def _mutate(data: bytes, edits: list[tuple[int, int]], cut: int) -> bytes:
    buffer = bytearray(data)
    for position, value in edits:
        if buffer:
            buffer[position % len(buffer)] = value
    return bytes(buffer[: max(0, len(buffer) - cut)])


@pytest.fixture(scope="module")
def harness_seeds() -> dict[str, list[tuple[str, bytes]]]:
    return {harness: list(make()) for harness, make in HARNESS_SEEDS.items()}


@pytest.mark.parametrize("harness", sorted(HARNESS_SEEDS))
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
@given(
    pick=st.integers(0, 1 << 16),
    edits=st.lists(
        st.tuples(st.integers(0, 1 << 20), st.sampled_from(SPECIAL_BYTES) | st.integers(0, 255)), max_size=6
    ),
    cut=st.integers(0, 64),
)
def test_mutated_content_is_refused_only_with_gamepak_errors(
    harness: str, harness_seeds: dict[str, list[tuple[str, bytes]]], pick: int, edits: list[tuple[int, int]], cut: int
) -> None:
    module = importlib.import_module(harness)
    found = harness_seeds[harness]
    _, seed = found[pick % len(found)]
    module.TestOneInput(_mutate(seed, edits, cut))
