"""Fixtures shared by every format's tests: the real samples, a CLI runner, a round trip."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import gamepak

SAMPLES = Path(os.environ.get("GAMEPAK_SAMPLES") or Path(__file__).resolve().parents[2] / "shared" / "samples")


def sample(relative: str) -> Path:
    """Path of a real sample under ../shared/samples, or skip the test when it is absent."""
    path = SAMPLES / relative
    if not path.exists():
        pytest.skip(f"sample {relative} not available (../shared/samples is absent)")
    return path


def roundtrip(
    tmp_path: Path, format_name: str, members: list[tuple[str, bytes]], **options: Any
) -> tuple[Path, list[tuple[str, bytes]]]:
    """Write `members` with the library, read them back; returns the file and what was read."""
    path = tmp_path / f"roundtrip.{format_name}"
    with gamepak.create(path, format_name, overwrite=True, **options) as writer:
        for name, data in members:
            writer.add(name, data)
    with gamepak.open(path, format_name) as archive:
        read = [(entry.name, archive.read(entry)) for entry in archive.infolist()]
    return path, read


def run_cli(*arguments: str, cwd: Path | None = None, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run `gamepak` in a subprocess (exit codes and stderr as a user sees them)."""
    return subprocess.run(
        [sys.executable, "-m", "gamepak", *arguments],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        timeout=120,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )


def in_process_cli(*arguments: str) -> tuple[int, str, str]:
    """Run the CLI in this process (faster than a subprocess): (exit code, stdout, stderr)."""
    from gamepak.cli.app import run

    out, err = io.BytesIO(), io.StringIO()
    stdout_wrapper = io.TextIOWrapper(out, encoding="utf-8")
    old_out, old_err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = stdout_wrapper, err
    try:
        code = run(list(arguments))
    finally:
        stdout_wrapper.flush()
        sys.stdout, sys.stderr = old_out, old_err
    return code, out.getvalue().decode("utf-8", "replace"), err.getvalue()
