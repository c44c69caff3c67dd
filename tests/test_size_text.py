"""Sizes in messages (`core.sizes.size_text`): a limit under 1 MiB is named in KiB or bytes,
never "0 MiB" (the viewer's `read_all` said so for its small limits)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamepak.core.sizes import size_text
from gamepak.errors import GamepakError
from gamepak.web import previews
from gamepak.web.site import Site


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (0, "0 bytes"),
        (1, "1 byte"),
        (1000, "1,000 bytes"),
        (1 << 10, "1 KiB"),
        (512 << 10, "512 KiB"),
        (1536, "1.5 KiB"),
        (4 << 20, "4 MiB"),
        ((1 << 20) + 1, "1.0 MiB"),
        ((64 << 20) - 1, "63.9 MiB"),
        (1 << 30, "1 GiB"),
        (3 << 40, "3,072 GiB"),
    ],
)
def test_sizes_are_named_in_the_largest_unit_they_reach(size: int, text: str) -> None:
    assert size_text(size) == text


@settings(max_examples=200)
@given(st.integers(min_value=0, max_value=1 << 44))
def test_a_size_is_never_shown_larger_than_it_is_nor_a_tenth_smaller(size: int) -> None:
    number, unit = size_text(size).split(" ")
    scale = {"byte": 1, "bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit]
    shown = float(number.replace(",", "")) * scale
    assert shown <= size < shown + scale / 10 + 1
    assert unit in ("byte", "bytes", "GiB") or size < 1024 * scale


def test_the_viewer_names_a_limit_under_1_mib(tmp_path: Path) -> None:
    (tmp_path / "big.bin").write_bytes(bytes(600 << 10))
    place = Site(str(tmp_path)).resolve(["big.bin"], as_file=True)
    with pytest.raises(GamepakError, match=f"big.bin: {600 << 10} bytes, more than the 512 KiB a preview reads$"):
        previews.read_all(place, 512 << 10)
    assert len(previews.read_all(place, 1 << 20)) == 600 << 10


def test_scene_text_limit_under_a_mebibyte_is_named_in_kibibytes(tmp_path):
    """A limit below 1 MiB used to read "0 MiB" in the message."""
    import pytest

    from gamepak.models.scene.ini import SceneError, read_text

    path = tmp_path / "list.txt"
    path.write_bytes(b"x" * 2000)
    with pytest.raises(SceneError, match=r"larger than the 1 KiB gamepak reads"):
        read_text(str(path), limit=1024)
