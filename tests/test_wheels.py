"""Installable everywhere (issue 29 item 9): the nox session `wheels` asks pip for binary wheels
of every runtime dependency on Windows x64, macOS arm64, Linux x86-64 and Linux aarch64 for
CPython 3.11-3.13, with our environment markers evaluated for each target (pip evaluates them
for the host); and where neither DXT encoder with native code can be imported, Pillow's BCn
encoder encodes. The session itself needs the network (`python -m nox -s wheels`); these
tests check what it asks for, offline."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def noxfile() -> types.ModuleType:
    """noxfile.py, loaded with a stand-in `nox` (only its decorator and names are used here)."""
    stand_in = types.ModuleType("nox")
    stand_in.session = lambda function=None, **_: function if function else (lambda f: f)  # type: ignore[attr-defined]
    stand_in.Session = object  # type: ignore[attr-defined]
    stand_in.command = types.SimpleNamespace(CommandFailed=RuntimeError)  # type: ignore[attr-defined]
    saved = sys.modules.get("nox")
    sys.modules["nox"] = stand_in
    try:
        spec = importlib.util.spec_from_file_location("gamepak_noxfile", ROOT / "noxfile.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        if saved is None:
            del sys.modules["nox"]
        else:
            sys.modules["nox"] = saved
    return module


def _names(requirements: list[str]) -> set[str]:
    from packaging.requirements import Requirement

    return {Requirement(text).name.lower() for text in requirements}


def test_the_session_covers_the_four_platforms_and_three_pythons(noxfile: types.ModuleType) -> None:
    assert set(noxfile.TARGETS) == {"windows-x64", "macos-arm64", "linux-x86_64", "linux-aarch64"}
    assert noxfile.PYTHONS == ("3.11", "3.12", "3.13")
    command = noxfile.download_command("linux-aarch64", "3.12", "/tmp/x")
    assert command[:4] == ["python", "-m", "pip", "download"] and "--only-binary=:all:" in command
    assert "manylinux2014_aarch64" in command and command[command.index("--python-version") + 1] == "3.12"


def test_markers_are_evaluated_for_each_target(noxfile: types.ModuleType) -> None:
    """bc7enc-py (rgbcx) only where it has wheels; quicktex, the encoder of the other
    platforms, everywhere; the rest everywhere."""
    everywhere = _names(noxfile.runtime_requirements("linux-x86_64", "3.11")) - {"bc7enc-py"}
    assert "quicktex" in everywhere and "pillow" in everywhere
    for target in noxfile.TARGETS:
        for python in noxfile.PYTHONS:
            names = _names(noxfile.runtime_requirements(target, python))
            assert everywhere <= names, (target, python)
            assert ("bc7enc-py" in names) == (target in ("linux-x86_64", "windows-x64")), (target, python)
            assert all(";" not in text for text in noxfile.runtime_requirements(target, python))


def test_without_native_encoders_pillow_encodes_dxt(monkeypatch: pytest.MonkeyPatch) -> None:
    from gamepak.formats.rfg.peg import pixels
    from gamepak.formats.rfg.peg.layout import PixelFormat

    gradient = np.zeros((16, 16, 4), np.uint8)
    gradient[..., 0] = np.arange(16)[None, :] * 16
    gradient[..., 3] = 255
    native = {fmt: pixels.encode(fmt, gradient, "RGBA") for fmt in (PixelFormat.DXT1, PixelFormat.DXT5)}
    monkeypatch.setattr(pixels, "_rgbcx", lambda: None)
    monkeypatch.setattr(pixels, "_has_quicktex", lambda: False)

    def no_quicktex(*args: object) -> bytes:
        raise AssertionError("quicktex used where it is missing")

    monkeypatch.setattr(pixels, "_quicktex_blocks", no_quicktex)
    for fmt, reference in native.items():
        encoded = pixels.encode(fmt, gradient, "RGBA")
        assert len(encoded) == len(reference)
        decoded = pixels.decode(fmt, encoded, 16, 16, "RGBA")
        assert np.abs(decoded.astype(int) - gradient.astype(int)).max() <= 24, fmt
