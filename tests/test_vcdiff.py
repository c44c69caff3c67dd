"""VCDIFF deltas (formats/vcdiff.py): RFC 3284's byte layout by hand, xdelta3's own output (plain
and with its default LZMA secondary compression), budgets, and damaged deltas."""

from __future__ import annotations

import contextlib
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gamepak.errors import FormatLimitError, GamepakError, UnsupportedFeatureError
from gamepak.formats.vcdiff import CODE_TABLE, Delta

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fuzz"))
from seeds import vcdiff_append

XDELTA3 = shutil.which("xdelta3")


def _decode(delta: bytes, source: bytes, budget: int = 1 << 30) -> bytes:
    out = io.BytesIO()
    Delta(io.BytesIO(delta), "delta").decode(io.BytesIO(source), out, budget)
    return out.getvalue()


def test_the_default_code_table_is_rfc_3284s() -> None:
    assert CODE_TABLE[0] == (2, 0, 0, 0, 0, 0)  # RUN, size in the instructions
    assert CODE_TABLE[1] == (1, 0, 0, 0, 0, 0) and CODE_TABLE[18] == (1, 17, 0, 0, 0, 0)
    assert CODE_TABLE[19] == (3, 0, 0, 0, 0, 0) and CODE_TABLE[20] == (3, 4, 0, 0, 0, 0)
    assert CODE_TABLE[162] == (3, 18, 8, 0, 0, 0)
    assert CODE_TABLE[163] == (1, 1, 0, 3, 4, 0) and CODE_TABLE[234] == (1, 4, 0, 3, 6, 5)
    assert CODE_TABLE[235] == (1, 1, 0, 3, 4, 6) and CODE_TABLE[246] == (1, 4, 0, 3, 4, 8)
    assert CODE_TABLE[247] == (3, 4, 0, 1, 1, 0) and CODE_TABLE[255] == (3, 4, 8, 1, 1, 0)


def test_a_hand_made_delta_copies_and_adds() -> None:
    source = bytes(range(256)) * 4
    delta = vcdiff_append(source, b"new bytes")
    assert _decode(delta, source) == source + b"new bytes"
    parsed = Delta(io.BytesIO(delta))
    assert parsed.has_checksum and parsed.target_size == len(source) + 9 and parsed.secondary is None


def test_a_checksum_that_does_not_match_says_other_bytes() -> None:
    source = b"the source" * 50
    delta = vcdiff_append(source, b"!")
    with pytest.raises(GamepakError, match="made for other bytes"):
        _decode(delta, b"another source" * 50)


def test_the_budget_is_checked_before_a_byte_is_written() -> None:
    source = b"x" * 100
    delta = vcdiff_append(source, b"yz")
    out = io.BytesIO()
    with pytest.raises(FormatLimitError, match="more than the 101 allowed"):
        Delta(io.BytesIO(delta)).decode(io.BytesIO(source), out, 101)
    assert out.getvalue() == b""


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_damaged_deltas_raise_only_gamepak_errors(data: st.DataObject) -> None:
    source = b"abcdefgh" * 40
    delta = bytearray(vcdiff_append(source, b"tail of new bytes"))
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(0, len(delta) - 1))
        delta[position] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        del delta[data.draw(st.integers(0, len(delta) - 1)) :]
    with contextlib.suppress(GamepakError):
        _decode(bytes(delta), source, budget=1 << 20)


@pytest.mark.skipif(XDELTA3 is None, reason="xdelta3 is not installed (it makes the fixtures)")
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    source=st.binary(min_size=0, max_size=3000),
    edits=st.lists(st.tuples(st.integers(0, 3000), st.binary(min_size=0, max_size=200)), max_size=8),
    secondary=st.sampled_from([[], ["-S", "none"], ["-S", "lzma"]]),
)
def test_xdelta3s_own_deltas_decode_to_its_target(
    tmp_path: Path, source: bytes, edits: list[tuple[int, bytes]], secondary: list[str]
) -> None:
    target = bytearray(source)
    for position, inserted in edits:
        target[position:position] = inserted
    (tmp_path / "old").write_bytes(source)
    (tmp_path / "new").write_bytes(bytes(target))
    assert XDELTA3 is not None
    subprocess.run(
        [XDELTA3, "-e", "-f", *secondary, "-s", str(tmp_path / "old"), str(tmp_path / "new"), str(tmp_path / "d")],
        check=True,
    )
    assert _decode((tmp_path / "d").read_bytes(), source) == bytes(target)


@pytest.mark.skipif(XDELTA3 is None, reason="xdelta3 is not installed (it makes the fixtures)")
def test_many_windows_with_lzma_sections_decode(tmp_path: Path) -> None:
    """xdelta3 keeps one LZMA stream per kind of section across windows: each window's section
    continues the last, so every window after the first depends on the decoder's state."""
    import random

    rng = random.Random(5)
    source = bytes(rng.getrandbits(8) for _ in range(300_000))
    target = bytearray(source)
    for position in range(0, len(target), 777):
        target[position : position + 3] = b"%03d" % (position % 1000)
    (tmp_path / "old").write_bytes(source)
    (tmp_path / "new").write_bytes(bytes(target))
    assert XDELTA3 is not None
    subprocess.run(
        [XDELTA3, "-e", "-f", "-W", "16384", "-s", str(tmp_path / "old"), str(tmp_path / "new"), str(tmp_path / "d")],
        check=True,
    )
    delta = (tmp_path / "d").read_bytes()
    parsed = Delta(io.BytesIO(delta))
    assert len(parsed.windows) > 10 and parsed.secondary == 2
    assert _decode(delta, source) == bytes(target)


def test_an_unknown_secondary_is_refused_naming_it_and_the_fix() -> None:
    source = b"s" * 64
    delta = bytearray(vcdiff_append(source, b"t" * 32))
    delta[4] = 1  # Hdr_Indicator: VCD_DECOMPRESS, the compressor's id follows
    delta[5:5] = b"\x01"  # DJW
    assert Delta(io.BytesIO(bytes(delta))).secondary == 1
    assert _decode(bytes(delta), source) == source + b"t" * 32  # named, but no section uses it
    delta[_delta_indicator_offset(bytes(delta))] = 1  # the data section is DJW-coded
    with pytest.raises(UnsupportedFeatureError, match=r"djw secondary compressor.*-S none"):
        _decode(bytes(delta), source)


def _delta_indicator_offset(delta: bytes) -> int:
    """Where the first window's Delta_Indicator sits (after its varints)."""
    position = 6  # magic, version, Hdr_Indicator, the compressor id
    position += 1  # Win_Indicator
    for _ in range(4):  # source length, source position, delta length, target length
        while delta[position] & 0x80:
            position += 1
        position += 1
    return position


def _window(
    indicator: int, segment: tuple[int, int] | None, target: bytes, data: bytes, instructions: bytes, addresses: bytes
) -> bytes:
    """One window by hand (RFC 3284 section 4.2), without a checksum."""
    from gamepak.formats.vcdiff import encode_varint

    sections = encode_varint(len(data)) + encode_varint(len(instructions)) + encode_varint(len(addresses))
    body = encode_varint(len(target)) + b"\x00" + sections + data + instructions + addresses
    head = bytes([indicator])
    if segment is not None:
        head += encode_varint(segment[0]) + encode_varint(segment[1])
    return head + encode_varint(len(body)) + body


@pytest.mark.parametrize("in_memory", [True, False])
def test_a_vcd_target_window_copies_from_what_is_already_written(
    monkeypatch: pytest.MonkeyPatch, in_memory: bool
) -> None:
    # Window 1 adds "abcdefgh"; window 2 (VCD_TARGET, segment: 4 bytes at target position 2)
    # copies its segment ("cdef") and adds "XY". A copy from the source, from position 0 or from
    # the window's own output instead gives other bytes.
    import gamepak.formats.vcdiff as vcdiff

    if not in_memory:  # the segment read from the output as the copy goes, not held first
        monkeypatch.setattr(vcdiff, "SEGMENT_IN_MEMORY", 0)
    first = _window(0, None, b"abcdefgh", b"abcdefgh", bytes([1]) + vcdiff.encode_varint(8), b"")
    instructions = bytes([19]) + vcdiff.encode_varint(4) + bytes([1]) + vcdiff.encode_varint(2)  # COPY 4, ADD 2
    second = _window(2, (4, 2), b"cdefXY", b"XY", instructions, vcdiff.encode_varint(0))
    delta = b"\xd6\xc3\xc4\x00\x00" + first + second
    assert _decode(delta, b"SOURCE BYTES, NEVER COPIED") == b"abcdefgh" + b"cdefXY"
    # A segment past what is written is refused, naming the window.
    late = _window(2, (4, 6), b"ghXXXY", b"XY", instructions, vcdiff.encode_varint(0))
    with pytest.raises(GamepakError, match="window 1 copies from target bytes not yet written"):
        _decode(b"\xd6\xc3\xc4\x00\x00" + first + late, b"")
