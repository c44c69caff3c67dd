"""Fixtures shared by every format's tests: the real samples, a CLI runner, a round trip."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
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


def glb_summary(data: bytes) -> dict[str, int]:
    """What a binary glTF holds, checked: its header and chunk lengths add up, every buffer view
    lies inside the BIN chunk and every accessor inside its view. {"meshes", "nodes",
    "triangles"}; a few bytes that start with `glTF` fail here (AssertionError)."""
    import json
    import struct

    assert len(data) >= 20, f"a glb of {len(data)} bytes"
    magic, version, length = struct.unpack_from("<4sII", data)
    assert (magic, version, length) == (b"glTF", 2, len(data)), (magic, version, length, len(data))
    json_length, kind = struct.unpack_from("<I4s", data, 12)
    assert kind == b"JSON" and 20 + json_length <= len(data)
    document = json.loads(data[20 : 20 + json_length])
    blob = b""
    if 20 + json_length < len(data):
        blob_length, kind = struct.unpack_from("<I4s", data, 20 + json_length)
        assert kind == b"BIN\0" and 28 + json_length + blob_length == len(data)
        blob = data[28 + json_length :]
    views = document.get("bufferViews", [])
    for view in views:
        assert view.get("byteOffset", 0) + view["byteLength"] <= len(blob), view
    sizes = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}
    widths = {5120: 1, 5121: 1, 5122: 2, 5123: 2, 5125: 4, 5126: 4}
    accessors = document.get("accessors", [])
    for accessor in accessors:
        if "bufferView" in accessor:
            view = views[accessor["bufferView"]]
            size = accessor["count"] * sizes[accessor["type"]] * widths[accessor["componentType"]]
            assert accessor.get("byteOffset", 0) + size <= view["byteLength"], accessor
    meshes = document.get("meshes", [])
    per_mesh = [
        sum(accessors[p.get("indices", p["attributes"]["POSITION"])]["count"] // 3 for p in mesh["primitives"])
        for mesh in meshes
    ]
    nodes = document.get("nodes", [])
    return {
        "meshes": len(meshes),
        "nodes": len(nodes),
        "triangles": sum(per_mesh),
        # Each node's mesh counted where it stands (a scene reuses one mesh for several objects).
        "drawn_triangles": sum(per_mesh[node["mesh"]] for node in nodes if "mesh" in node),
    }


# Parameter ids of sample-driven parametrisations that ran on stand-ins, per test file: without
# ../shared/samples such a test runs fewer (made-up) cases instead of skipping, and the summary
# line says how many (`sample_cases`).
STANDIN_IDS: dict[str, set[str]] = {}


def sample_cases(test_file: str, real: list[str], standins: list[str]) -> list[str]:
    """The parameter ids of a sample-driven parametrisation: `real` (the samples found), or, when
    ../shared/samples has none, `standins` (noted, so the summary counts the cases they ran)."""
    if real:
        return real
    STANDIN_IDS.setdefault(os.path.basename(test_file), set()).update(standins)
    return standins


def _standin_runs(terminalreporter: Any) -> dict[str, int]:
    """How many test cases of each file ran with a stand-in sample as a parameter."""
    runs: dict[str, int] = {}
    for outcome in ("passed", "failed"):
        for report in terminalreporter.stats.get(outcome, []):
            if getattr(report, "when", None) != "call" or "[" not in report.nodeid:
                continue
            file = os.path.basename(report.nodeid.split("::")[0])
            parameters = report.nodeid[report.nodeid.index("[") + 1 : -1]
            if any(standin in parameters for standin in STANDIN_IDS.get(file, ())):
                runs[file] = runs.get(file, 0) + 1
    return runs


def _what_a_skip_needs(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    reason = reason.removeprefix("Skipped: ")
    if "shared/samples" in reason:
        return "the real game files in ../shared/samples"
    return reason


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line saying what the skipped tests need, and one saying how many sample-driven cases
    ran on stand-ins, so a short run is never mistaken for a full one."""
    standins = _standin_runs(terminalreporter)
    if standins:
        files = ", ".join(f"{file} {count}" for file, count in sorted(standins.items()))
        terminalreporter.write_line(
            f"gamepak: {sum(standins.values())} sample-driven case(s) ran on stand-ins, not the real game files "
            f"(../shared/samples absent): {files}"
        )
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


# The validator version every glTF test is judged by (npm's `gltf-validator`, exactly this one).
GLTF_VALIDATOR_VERSION = "2.0.0-dev.3.10"


def _npm_version(package: Path) -> str | None:
    import json

    try:
        return str(json.loads((package / "package.json").read_text(encoding="utf-8"))["version"])
    except (OSError, ValueError, KeyError):
        return None


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
    if _npm_version(package) != GLTF_VALIDATOR_VERSION:
        # Pinned: the judge of every glTF test is the same validator on every machine.
        wanted = f"gltf-validator@{GLTF_VALIDATOR_VERSION}"
        try:
            subprocess.run(
                [npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund", "--save-exact", wanted],
                capture_output=True,
                timeout=180,
                check=True,
            )
        except subprocess.CalledProcessError as exc:
            lines = (exc.stderr or b"").decode("utf-8", "replace").strip().splitlines()
            reason = next((line for line in reversed(lines) if "ERR" in line), lines[-1] if lines else "")
            pytest.skip(f"could not install {wanted} (offline?): npm: {reason or f'exit {exc.returncode}'}")
        except (subprocess.SubprocessError, OSError) as exc:
            pytest.skip(f"could not install {wanted} (offline?): {exc}")
    if _npm_version(package) != GLTF_VALIDATOR_VERSION:
        pytest.skip(f"gltf-validator {GLTF_VALIDATOR_VERSION} did not install (found {_npm_version(package)})")
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


@pytest.fixture(params=["libdeflate", "streaming"])
def inflater_choice(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Run a test with libdeflate (whole buffers within the budget) and with the `deflate`
    wheel made unimportable (the streaming inflater for everything)."""
    from gamepak.core import inflaters

    if request.param == "libdeflate":
        pytest.importorskip("deflate")
    else:
        monkeypatch.setitem(sys.modules, "deflate", None)  # `import deflate` raises ImportError
    inflaters.forget_choice()
    yield request.param
    monkeypatch.undo()
    inflaters.forget_choice()
