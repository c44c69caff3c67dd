"""Fuzzing the RFG zone reader with hypothesis: the atheris harness fuzz/fuzz_read_zone.py (only
gamepak errors; what reads is written back byte for byte, its document imports back unchanged,
its diff against itself is empty and a one-property change replays and is taken back) runs here
on its seeds, mutated where a zone's counts and sizes live.

`make test` runs a small budget; `make fuzz` a larger one (GAMEPAK_FUZZ_EXAMPLES examples).
"""

from __future__ import annotations

import importlib
import json
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
# Values that mean something in a zone: the end of a string, a bool's two values, counts and
# sizes at their edges (u16 fields: block_size, prop_count, prop_block_size, value size).
SPECIAL_BYTES = [0, 1, 2, 3, 4, 5, 6, 0x38, 0x7F, 0x80, 0xFE, 0xFF]


def _mutate(data: bytes, edits: list[tuple[int, int]], copies: list[tuple[int, int]], cut: int, extra: bytes) -> bytes:
    buffer = bytearray(data)
    for position, value in edits:
        if buffer:
            buffer[position % len(buffer)] = value
    # A word copied over another (every field of a zone is aligned to 4): a handle or a
    # property name that repeats, a size equal to another's.
    words = len(buffer) // 4
    for source, target in copies:
        if words:
            at, to = source % words * 4, target % words * 4
            buffer[to : to + 4] = buffer[at : at + 4]
    return bytes(buffer[: max(0, len(buffer) - cut)]) + extra


@pytest.fixture(scope="module")
def seeds() -> list[tuple[str, bytes]]:
    # The territory cell's 87 KB relation section would take most edits away from the objects.
    return [(name, data) for name, data in content_seeds.zone_seeds() if len(data) < 4096]


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    pick=st.integers(0, 1 << 16),
    edits=st.lists(
        st.tuples(st.integers(0, 1 << 12), st.sampled_from(SPECIAL_BYTES) | st.integers(0, 255)), max_size=6
    ),
    copies=st.lists(st.tuples(st.integers(0, 1 << 10), st.integers(0, 1 << 10)), max_size=2),
    cut=st.integers(0, 16) | st.just(0),
    extra=st.binary(max_size=8),
)
def test_mutated_zones_are_refused_only_with_gamepak_errors(
    seeds: list[tuple[str, bytes]],
    pick: int,
    edits: list[tuple[int, int]],
    copies: list[tuple[int, int]],
    cut: int,
    extra: bytes,
) -> None:
    harness = importlib.import_module("fuzz_read_zone")
    _, seed = seeds[pick % len(seeds)]
    harness.TestOneInput(_mutate(seed, edits, copies, cut, extra))


def test_the_seeds_read_and_reach_the_diff() -> None:
    from gamepak.formats.rfg.zone.model import read

    harness = importlib.import_module("fuzz_read_zone")
    from gamepak.formats.rfg.zone.document import from_document

    for name, data in content_seeds.zone_seeds():
        # A seed the reader refuses would leave the fuzzer nothing to start from.
        if name.endswith(".json"):
            assert from_document(json.loads(data), name).to_bytes(), name
            continue
        zone = read(data)
        assert zone.to_bytes() == data, name
    changed = harness._one_property_changed(content_seeds.zone_seeds().__next__()[1])
    assert changed is not None


@st.composite
def odd_zones(draw: st.DrawFn) -> bytes:
    """Zones the reader accepts whose objects share handles and whose properties share names
    (drawn from a few of each), with values of any bytes: what byte flips rarely make."""
    from gamepak.formats.rfg.zone.model import Zone, ZoneObject, ZoneProperty
    from gamepak.formats.rfg.zone.names import property_hash

    names = [property_hash(name) for name in ("op", "enabled", "dummy_type", "obj_links", "yellow_polygon")]
    objects = []
    for _ in range(draw(st.integers(0, 4))):
        properties = [
            ZoneProperty(draw(st.sampled_from([4, 5, 6])), draw(st.sampled_from(names)), draw(st.binary(max_size=52)))
            for _ in range(draw(st.integers(0, 4)))
        ]
        handle = draw(st.sampled_from([0x78800001, 0x78800002, 0x78800003]))
        objects.append(
            ZoneObject(
                0x9F3641D4, handle, parent=draw(st.sampled_from([0xFFFFFFFF, 0x78800001])), properties=properties
            )
        )
    return Zone(objects).to_bytes()


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(odd_zones())
def test_zones_with_repeated_handles_and_names_are_refused_only_with_gamepak_errors(data: bytes) -> None:
    importlib.import_module("fuzz_read_zone").TestOneInput(data)
