"""Detection imports a format's sniffer only when it asks that format: a pack whose signature
(and extension) decides its format is opened, listed and taken by a content row without
importing the structural sniffers (the J2ME packs', the JOE models' header check), which detect
asks about every file without a signature, and which `table ls x.vpp_pc`, `table check` and
`texture ls` imported through the content registry's full `detect`."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.core import detection, registry
from gamepak.core.detection import detect, detections

STRUCTURAL = ("gamepak.models.joe_header", "gamepak.formats.j2me")

# Runs a few commands or library calls on ARGV[1] (a .vpp_pc) in a fresh interpreter, then
# prints which structural sniffers' modules were imported.
PROBE = f"""
import contextlib, io, sys
from gamepak.cli import main
path, how = sys.argv[1], sys.argv[2]
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    if how == "open":
        import gamepak
        with gamepak.open(path) as pack:
            pack.namelist()
    elif how == "row":
        from gamepak.content import for_path
        for_path("table", path)
    else:
        try:
            main([*how.split(), path])
        except SystemExit:
            pass
print(",".join(sorted(m for m in {STRUCTURAL!r} if m in sys.modules)))
"""


def _vpp(tmp_path: Path) -> Path:
    """A small `.vpp_pc` holding one table (its version field, 3, is what the JOE row's quick
    test looks for at offset 4: that row's sniffer would be asked)."""
    path = tmp_path / "t.vpp_pc"
    with gamepak.create(path) as pack:
        pack.add("a.xtbl", b"<root><Table><Element><Name>x</Name></Element></Table></root>")
    assert path.read_bytes()[4:8] == b"\x03\x00\x00\x00"
    return path


def _imported_after(path: Path, how: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(path), how], capture_output=True, text=True, timeout=120, check=True
    )
    line = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    return line.split(",") if line else []


@pytest.mark.parametrize("how", ["open", "row", "ls", "info", "table ls", "table check", "texture ls"])
def test_a_pack_its_signature_decides_imports_no_structural_sniffer(tmp_path: Path, how: str) -> None:
    assert _imported_after(_vpp(tmp_path), how) == []


def test_the_detect_command_still_asks_every_format(tmp_path: Path) -> None:
    # The probe can see the imports (`detect` lists every fit, structural guesses included).
    assert _imported_after(_vpp(tmp_path), "detect") == sorted(STRUCTURAL)


def test_detections_ask_the_structural_formats_only_when_read_that_far(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _vpp(tmp_path)
    asked: list[str] = []
    real = registry.FormatSpec.sniffer

    def traced(spec: registry.FormatSpec) -> object:
        asked.append(spec.name)
        return real(spec)

    monkeypatch.setattr(registry.FormatSpec, "sniffer", traced)
    found = detections(path)
    assert next(found).format == "vpp"
    assert all(detection.has_magic for detection in map(registry.get_format, asked))
    rest = list(found)
    assert "joe" in asked and "j2me-table" in asked
    assert [d.format for d in rest] == [d.format for d in detect(path)][1:]


def _detect_as_before(data: bytes, name: str) -> list[detection.Detection]:
    """detect as it was written before it was made from `detections`: every format asked, one sort."""
    source = detection.Source.open(io.BytesIO(data), name)
    try:
        by_extension = registry.format_for_path(name)
        head = source.pread(registry.MAGIC_SPAN, 0)
        found = []
        for spec in registry.FORMATS:
            if not spec.may_hold(head):
                continue
            confidence = float(spec.sniffer()(source))
            if confidence > 0:
                if by_extension is spec:
                    confidence = min(1.0, confidence + 0.05)
                found.append(detection.Detection(spec.name, round(confidence, 3), spec.has_magic))
    finally:
        source.close()
    found.sort(key=lambda d: (d.has_magic, d.confidence), reverse=True)
    return found


HEADS = [
    b"",
    b"PACK",
    bytes(1024),
    b"\x1f\x8b",
    b"PK\x03\x04",
    b"\xce\x0a\x89\x51\x03\x00\x00\x00",
    b"IDP2\x03\x00\x00\x00",
]


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(["a.bin", "a.pak", "a.tar", "a.joe", "a.vpp_pc", "a.zip"]),
    head=st.sampled_from(HEADS),
    tail=st.binary(max_size=48),
)
@example(name="a.tar", head=bytes(1024), tail=b"")
def test_detect_lists_what_it_listed_before(name: str, head: bytes, tail: bytes) -> None:
    # (random tails fit the J2ME layouts often, a zero head fits tar weakly: lists of both kinds)
    data = head + tail
    found = detect(io.BytesIO(data), name=name)
    assert found == _detect_as_before(data, name)


def test_the_inputs_above_give_lists_of_both_kinds() -> None:
    found = detect(io.BytesIO(bytes(1024)), name="a.tar")
    assert found[0].has_magic and not found[-1].has_magic
