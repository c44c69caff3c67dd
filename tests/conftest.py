"""Fixtures shared by every format's tests: the real samples, a CLI runner, a round trip."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import gamepak

# GAMEPAK_SAMPLES points elsewhere (e.g. a missing folder, to see what runs without the samples).
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
    """Write `members` with the library, read them back; returns the file and what was read.
    Duplicate names are kept where the format can hold them."""
    path = tmp_path / f"roundtrip.{format_name}"
    with gamepak.create(path, format_name, overwrite=True, allow_duplicates=True, **options) as writer:
        for name, data in members:
            writer.add(name, data)
    with gamepak.open(path, format_name) as archive:
        read = [(entry.name, archive.read(entry)) for entry in archive.infolist()]
    return path, read


def storable_name(name: str) -> bool:
    """Whether writers accept `name` (no '..', absolute path or backslash): for strategies."""
    from gamepak.core.archive import unsafe_name_reason

    return unsafe_name_reason(name) is None


def write_pack(path: Path, members: dict[str, bytes], format_name: str | None = None) -> Path:
    """A pack of `members` at `path` (folders made), in `format_name` or its extension's."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with gamepak.create(path, format_name, overwrite=True) as writer:
        for name, data in members.items():
            writer.add(name, data)
    return path


def pack_members(path: Path) -> dict[str, bytes]:
    """A pack's members, name -> bytes."""
    with gamepak.open(path) as archive:
        return {entry.name: archive.read(entry) for entry in archive.infolist()}


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


# Modules a command must not import unless its handler needs them: each costs more than
# Python's own start-up (`gamepak.cli` declares every command with argparse alone).
HEAVY_MODULES = ("click", "rich", "numpy", "pygltflib", "PIL", "dask", "pyarrow", "zstandard", "isal", "polib")
# Runs the CLI's entry point in a fresh interpreter and says on stderr's last line which heavy
# modules were imported.
QUICK = f"""
import sys
from gamepak.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
print("heavy imported:", sorted(m for m in {HEAVY_MODULES!r} if m in sys.modules), file=sys.stderr)
sys.exit(code)
"""


def quick_cli(*arguments: str) -> tuple[int, str, str]:
    """Run `gamepak.cli.main` in a subprocess: (exit code, stdout, stderr ending with the heavy
    modules that were imported)."""
    result = subprocess.run([sys.executable, "-c", QUICK, *arguments], capture_output=True, text=True, timeout=120)
    return result.returncode, result.stdout, result.stderr


def in_process_cli(*arguments: str) -> tuple[int, str, str]:
    """Run the CLI in this process (faster than a subprocess): (exit code, stdout, stderr)."""
    from gamepak.cli import main as run

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


def _what_a_skip_needs(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    reason = reason.removeprefix("Skipped: ")
    if "shared/samples" in reason:
        return "the real game files in ../shared/samples"
    return reason


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line saying what the skipped tests need, so a short run is never mistaken for a full one."""
    skipped = [report for report in terminalreporter.stats.get("skipped", []) if report.when in ("setup", "call")]
    if not skipped:
        return
    needs: dict[str, int] = {}
    for report in skipped:
        what = _what_a_skip_needs(report)
        needs[what] = needs.get(what, 0) + 1
    parts = [f"{count} need {what}" for what, count in sorted(needs.items(), key=lambda item: -item[1])]
    terminalreporter.write_line(f"gamepak: {len(skipped)} test(s) skipped: " + "; ".join(parts))


# The Khronos glTF-Validator judges every glTF gamepak writes (models, scenes).
VALIDATE_SCRIPT = r"""
const validator = require(process.argv[2]);
const fs = require('fs');
const path = require('path');
(async () => {
  const results = {};
  for (const file of process.argv.slice(3)) {
    const report = await validator.validateBytes(new Uint8Array(fs.readFileSync(file)), {
      uri: path.basename(file),
      externalResourceFunction: (uri) => new Promise((resolve, reject) => {
        fs.readFile(path.join(path.dirname(file), decodeURIComponent(uri)),
                    (error, data) => error ? reject(error.toString()) : resolve(new Uint8Array(data)));
      }),
    });
    results[path.basename(file)] = {
      errors: report.issues.numErrors,
      messages: report.issues.messages.filter((m) => m.severity === 0),
    };
  }
  console.log(JSON.stringify(results));
})();
"""


@pytest.fixture(scope="session")
def gltf_validator(request: pytest.FixtureRequest) -> Path:
    """The Khronos glTF-Validator (npm `gltf-validator`), installed once into pytest's cache."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node/npm not available: cannot run the Khronos glTF-Validator")
    cache = getattr(request.config, "cache", None)  # absent under -p no:cacheprovider
    if cache is not None:
        folder = Path(cache.mkdir("gltf-validator"))
    else:
        import tempfile

        folder = Path(tempfile.gettempdir()) / "gamepak-gltf-validator"
        folder.mkdir(exist_ok=True)
    package = folder / "node_modules" / "gltf-validator"
    if not (package / "package.json").exists():
        try:
            subprocess.run(
                [npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund", "gltf-validator"],
                capture_output=True,
                timeout=180,
                check=True,
            )
        except (subprocess.SubprocessError, OSError) as exc:
            pytest.skip(f"could not install the gltf-validator npm package: {exc}")
    if not (package / "package.json").exists():
        pytest.skip("the gltf-validator npm package did not install")
    script = folder / "validate.cjs"
    script.write_text(VALIDATE_SCRIPT)
    return package


def gltf_validator_errors(validator: Path, files: list[Any]) -> dict[str, list[Any]]:
    """The Khronos glTF-Validator's messages for each of `files` that has errors (empty: all
    valid); `validator` is the `gltf_validator` fixture."""
    import json

    result = subprocess.run(
        ["node", str(validator.parent.parent / "validate.cjs"), str(validator), *map(str, files)],
        capture_output=True,
        timeout=120,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    reports = json.loads(result.stdout)
    assert len(reports) == len(files)
    return {name: report["messages"] for name, report in reports.items() if report["errors"]}
