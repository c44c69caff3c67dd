"""Third-party readers as judges of what gamepak writes: vgio (the Python Quake file library) must
read every PAK gamepak writes, whatever the layout options, with the same names and bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gamepak

from conftest import storable_name

vgio_pak = pytest.importorskip("vgio.quake.pak", reason="vgio (a test dependency) is not installed")

NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_./", min_size=1, max_size=40).filter(
    lambda name: storable_name(name) and "//" not in name
)


def _vgio_members(path: Path) -> list[tuple[str, bytes]]:
    with vgio_pak.PakFile(str(path)) as pak:
        return [(info.filename, pak.read(info.filename)) for info in pak.infolist()]


@pytest.mark.parametrize("options", [{}, {"align": 4}, {"align": 16, "directory": "start"}])
def test_vgio_reads_gamepak_paks(tmp_path: Path, options: dict[str, Any]) -> None:
    members = [("maps/e1m1.bsp", b"BSP" * 100), ("progs.dat", b"\x06\x00"), ("sound/empty.wav", b"")]
    path = tmp_path / "mod.pak"
    with gamepak.create(path, **options) as writer:
        for name, data in members:
            writer.add(name, data)
    assert _vgio_members(path) == members


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(members=st.dictionaries(NAMES, st.binary(max_size=300), min_size=1, max_size=8))
def test_vgio_agrees_with_gamepak_on_random_paks(tmp_path: Path, members: dict[str, bytes]) -> None:
    path = tmp_path / "random.pak"
    with gamepak.create(path, overwrite=True) as writer:
        for name, data in members.items():
            writer.add(name, data)
    assert _vgio_members(path) == list(members.items())
    with gamepak.open(path) as pak:
        assert [(entry.name, pak.read(entry)) for entry in pak.infolist()] == list(members.items())
