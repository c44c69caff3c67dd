"""Fuzzing every archive reader: mutated packs built by the writers may only raise GamepakError.

The budget is small in `make test`; `make fuzz` raises it with GAMEPAK_FUZZ_EXAMPLES.
"""

from __future__ import annotations

import io
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.errors import GamepakError

EXAMPLES = int(os.environ.get("GAMEPAK_FUZZ_EXAMPLES", "60"))
MEMBERS = [("e1m1.bsp", b"IBSP" + bytes(range(60))), ("readme.txt", b"hello world\n" * 5), ("b.bin", b"\x01\x02")]

# (format, writer options): every reader, and each RFG data mode.
CASES = [
    ("pak", {}),
    ("jpk", {}),
    ("vpp", {"flags": 0}),
    ("vpp", {"flags": 1}),
    ("vpp", {"flags": 2}),
    ("vpp", {"flags": 3}),
    ("j2me-table", {}),
    ("j2me-offsets", {}),
    ("j2me-end-offsets", {}),
    ("j2me-sized", {}),
]


def _pack(format_name: str, options: dict[str, Any]) -> bytes:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "fuzz.bin")
        with gamepak.create(path, format_name, **options) as writer:
            for index, (name, data) in enumerate(MEMBERS):
                writer.add(name if not format_name.startswith("j2me") else str(index), data)
        with open(path, "rb") as handle:
            return handle.read()


PACKS = {f"{name}-{i}": (name, _pack(name, options)) for i, (name, options) in enumerate(CASES)}


def _mutate(data: bytes, edits: list[tuple[int, int, int]], cut: int | None) -> bytes:
    buffer = bytearray(data)
    for kind, position, value in edits:
        if not buffer:
            break
        position %= len(buffer)
        if kind == 0:
            buffer[position] = value
        elif kind == 1:
            buffer[position : position + 4] = value.to_bytes(4, "little") * 1
        else:
            del buffer[position]
    if cut is not None:
        del buffer[cut % (len(buffer) + 1) :]
    return bytes(buffer)


def _exercise(data: bytes, format_name: str) -> None:
    try:
        with gamepak.open(io.BytesIO(data), format_name, name="fuzz") as archive:
            for entry in archive.infolist():
                with archive.open(entry) as stream:
                    stream.read(1 << 16)
            for _, chunks in archive.iter_data():
                for _ in chunks:
                    pass
            archive.check()
    except GamepakError:
        pass


@pytest.mark.parametrize("key", sorted(PACKS))
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    edits=st.lists(
        st.tuples(st.integers(0, 2), st.integers(0, 1 << 16), st.integers(0, 0xFFFFFFFF)), min_size=1, max_size=4
    ),
    cut=st.none() | st.integers(0, 1 << 16),
)
def test_mutated_packs_raise_only_gamepak_errors(key: str, edits: list[tuple[int, int, int]], cut: int | None) -> None:
    format_name, data = PACKS[key]
    _exercise(_mutate(data, [(k, p, v if k else v & 0xFF) for k, p, v in edits], cut), format_name)


@pytest.mark.parametrize("key", sorted(PACKS))
def test_unmutated_packs_read_back(key: str) -> None:
    format_name, data = PACKS[key]
    with gamepak.open(io.BytesIO(data), format_name, name="fuzz") as archive:
        assert [archive.read(entry) for entry in archive.infolist()] == [data for _, data in MEMBERS]
        assert archive.verify() == []
