"""Fuzzing the RFG mesh readers with hypothesis: fuzz/fuzz_read_rfgmesh.py (which checks the
reader's invariants: only gamepak errors, in one line naming the file; `verify` finds no error in
what the reader accepts; the unchanged export writes back the same bytes) runs here on its seeds,
mutated: bytes of either file changed, a u32 field overwritten with a hostile value, either file
cut short.

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

import fuzz_read_rfgmesh  # noqa: E402

import content_seeds  # noqa: E402

EXAMPLES = int(os.environ.get("GAMEPAK_FUZZ_EXAMPLES", "30"))
# u32 values that break counts and offsets: zero, one, the sign bit, the top, small and large.
HOSTILE_U32 = [0, 1, 2, 3, 4, 16, 0xFF, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFF0, 0xFFFFFFFF]


@pytest.fixture(scope="module")
def seeds() -> list[tuple[bytes, bytes]]:
    return [fuzz_read_rfgmesh.split_mesh_pair(data) for _, data in content_seeds.rfgmesh_seeds()]


def _mutate(data: bytes, edits: list[tuple[int, int]], fields: list[tuple[int, int]], cut: int) -> bytes:
    buffer = bytearray(data)
    if not buffer:
        return b""
    for position, value in edits:
        buffer[position % len(buffer)] = value
    for position, value in fields:
        if len(buffer) >= 4:
            # Fields are 4-aligned in both files: hit them, not the middle of two.
            at = (position % (len(buffer) // 4)) * 4
            struct.pack_into("<I", buffer, at, value)
    return bytes(buffer[: max(0, len(buffer) - cut)])


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
@given(
    pick=st.integers(0, 1 << 16),
    gpu_side=st.booleans(),
    edits=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), max_size=4),
    fields=st.lists(
        st.tuples(st.integers(0, 1 << 20), st.sampled_from(HOSTILE_U32) | st.integers(0, 0xFFFF)), max_size=3
    ),
    cut=st.sampled_from([0, 0, 0, 1, 4, 16, 64]),
)
def test_mutated_meshes_are_refused_only_with_gamepak_errors(
    seeds: list[tuple[bytes, bytes]],
    pick: int,
    gpu_side: bool,
    edits: list[tuple[int, int]],
    fields: list[tuple[int, int]],
    cut: int,
) -> None:
    cpu, gpu = seeds[pick % len(seeds)]
    if gpu_side:
        gpu = _mutate(gpu, edits, fields, cut)
    else:
        cpu = _mutate(cpu, edits, fields, cut)
    fuzz_read_rfgmesh.TestOneInput(fuzz_read_rfgmesh.join_mesh_pair(cpu, gpu))


def test_the_seeds_read_and_round_trip(seeds: list[tuple[bytes, bytes]]) -> None:
    """Every seed is a mesh the reader accepts (a refused seed would test nothing past the
    first check), and the harness passes it."""
    from gamepak.models.rfg import read_mesh

    for cpu, gpu in seeds:
        read_mesh(cpu, gpu)
        fuzz_read_rfgmesh.TestOneInput(fuzz_read_rfgmesh.join_mesh_pair(cpu, gpu))
    kinds = {read_mesh(cpu, gpu).kind for cpu, gpu in seeds}
    assert kinds == {"static", "character"}


def test_the_harness_catches_a_write_back_that_changes_bytes(
    seeds: list[tuple[bytes, bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The round-trip rule can fail: a write-back that loses a byte is a crash."""
    from gamepak.models import rfg

    real = rfg.write_back

    def lossy(*args: object, **kwargs: object) -> object:
        result = real(*args, **kwargs)  # type: ignore[arg-type]
        result.gpu = result.gpu[:-1] + b"\0"
        return result

    monkeypatch.setattr(rfg, "write_back", lossy)
    cpu, gpu = seeds[0]
    with pytest.raises(AssertionError, match="other GPU bytes"):
        fuzz_read_rfgmesh.TestOneInput(fuzz_read_rfgmesh.join_mesh_pair(cpu, gpu))
