"""`model info` reads what it prints without holding the model (issue 29 item 7): a JOE file is
checked a window at a time (`joe.scan_file`), with the same summary, errors and issues as the
whole-file reader; the peak RSS of `model info` of a 74 MB JOE stays within 1.2x of the file
(or under 100 MB), and `model export` within 2x."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from gamepak import models
from gamepak.errors import CorruptArchiveError
from gamepak.models import joe
from gamepak.models.mesh import Frame, Mesh

SRC = str(Path(__file__).resolve().parent.parent / "src")


def many_frames(frames: int, faces: int = 40, vertices: int = 30, seed: int = 1) -> Mesh:
    """A model of `frames` frames (each its own positions) made with the library's classes."""
    rng = np.random.default_rng(seed)
    corners = np.stack([rng.integers(0, vertices, (faces, 3))] * 3, axis=2)

    def frame(number: int) -> Frame:
        return Frame(
            rng.random((vertices, 3), dtype=np.float32) + number,
            rng.random((vertices, 3), dtype=np.float32),
            rng.random((vertices, 2), dtype=np.float32),
            corners,
        )

    first = frame(0)
    rest = [frame(number) for number in range(1, frames)]
    return Mesh(first.positions, first.normals, first.texcoords, first.corners, extra_frames=rest)


def _both(path: Path, up: str | None = None) -> tuple[object, object]:
    """(summary or error of the whole-file reader, the same of the scanning one)."""
    results: list[object] = []
    for read in (lambda: models.load(path, "joe", up=up).summary(), lambda: models.summarize(path, "joe", up=up)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                results.append(read())
            except CorruptArchiveError as exc:
                results.append(("error", str(exc), exc.offset))
    return results[0], results[1]


@pytest.mark.parametrize("window", [joe.SCAN_WINDOW, 4096, 100])
def test_the_scan_says_what_the_reader_says(tmp_path: Path, window: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(joe, "SCAN_WINDOW", window)  # frames across windows, and larger than one
    mesh = many_frames(12)
    data = bytearray(joe.write(mesh))
    path = tmp_path / "m.joe"
    path.write_bytes(bytes(data))
    whole, scanned = _both(path)
    assert whole == scanned and scanned["frames"] == 12  # type: ignore[index]
    assert _both(path, "y")[0] == _both(path, "y")[1]
    # NaN in frames 0, 2, 3, 5, 7, 9, 11 (more than are spelled out), and trailing bytes.
    frame_size = (len(data) - joe.HEADER.size) // 12
    for frame_number in (0, 2, 3, 5, 7, 9, 11):
        at = joe.HEADER.size + frame_number * frame_size + 40 * joe.FACE_SIZE + joe.FRAME_HEADER.size + 4
        data[at : at + 4] = np.float32("nan").tobytes()
    path.write_bytes(bytes(data) + b"tail")
    whole, scanned = _both(path)
    assert whole == scanned
    issues = scanned["issues"]  # type: ignore[index]
    assert any("more frames hold NaN" in issue for issue in issues)
    assert "4 bytes after the last frame are ignored" in issues
    # A bad index in a late frame: the same error at the same offset.
    bad = bytearray(data)
    at = joe.HEADER.size + 10 * frame_size + 7 * joe.FACE_SIZE
    bad[at : at + 2] = (999).to_bytes(2, "little")
    path.write_bytes(bytes(bad))
    whole, scanned = _both(path)
    assert whole == scanned and scanned[0] == "error" and "frame 10 face 7" in scanned[1]  # type: ignore[index]
    assert scanned[2] == at  # type: ignore[index]  # (the index's own offset in the file: vertex 0 of corner 0)
    # A frame whose counts run past the end, and a negative count.
    for value in (1 << 20, -1):
        broken = bytearray(data)
        header_at = joe.HEADER.size + 6 * frame_size + 40 * joe.FACE_SIZE
        broken[header_at : header_at + 4] = value.to_bytes(4, "little", signed=True)
        path.write_bytes(bytes(broken))
        whole, scanned = _both(path)
        assert whole == scanned and scanned[0] == "error", scanned  # type: ignore[index]
    # Cut short, and not a model at all.
    for short in (bytes(data[:100]), b"hello, this is text named .joe\n"):
        path.write_bytes(short)
        whole, scanned = _both(path)
        assert whole == scanned and scanned[0] == "error"  # type: ignore[index]


def test_a_scanned_models_later_frames_are_not_kept(tmp_path: Path) -> None:
    path = tmp_path / "m.joe"
    path.write_bytes(joe.write(many_frames(3)))
    mesh = joe.scan_file(str(path))
    assert mesh.frame_count == 3 and len(mesh.positions) == 30
    with pytest.raises(CorruptArchiveError.__bases__[0], match="checked, not kept"):
        mesh.frames[1]


# The command's own peak in KiB: VmHWM where /proc has it (it starts again at exec), else
# getrusage (which on Linux also counts the forking parent's pages copied before the exec).
MEASURE = """
import resource, sys
from gamepak.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
try:
    with open("/proc/self/status") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
except (OSError, StopIteration):
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(peak, file=sys.stderr)
sys.exit(code)
"""
BUILD = """
import sys
sys.path.insert(0, sys.argv[3])
from test_model_info_memory import many_frames
from gamepak.models import joe
with open(sys.argv[1], "wb") as handle:
    handle.write(joe.write(many_frames(int(sys.argv[2]), faces=2000, vertices=1000)))
"""


def _peak_mib(*arguments: str) -> float:
    """Peak RSS (MiB) of one gamepak command run in a fresh interpreter (its own getrusage)."""
    result = subprocess.run(
        [sys.executable, "-c", MEASURE, *arguments],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": SRC},
    )
    assert result.returncode == 0, result.stderr
    return int(result.stderr.strip().splitlines()[-1]) / 1024


def test_model_info_of_a_74_mb_joe_holds_about_a_window(tmp_path: Path) -> None:
    folder = Path("/dev/shm") if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else tmp_path
    path = folder / f"gamepak-info-{os.getpid()}.joe"
    try:
        env = {**os.environ, "PYTHONPATH": SRC}
        tests = str(Path(__file__).resolve().parent)
        subprocess.run([sys.executable, "-c", BUILD, str(path), "1090", tests], check=True, timeout=300, env=env)
        file_mib = path.stat().st_size / (1 << 20)
        assert file_mib > 70
        info = _peak_mib("model", "info", str(path))
        assert info <= 1.2 * file_mib or info < 100 * 1e6 / (1 << 20), (info, file_mib)
        exported = _peak_mib("model", "export", str(path), "-o", str(folder / f"gamepak-info-{os.getpid()}.glb"))
        assert exported <= 2 * file_mib, (exported, file_mib)
    finally:
        for leftover in (path, folder / f"gamepak-info-{os.getpid()}.glb"):
            leftover.unlink(missing_ok=True)
