"""The atheris harnesses in fuzz/ (`make fuzz-long`), run here without atheris: every harness
imports without it and answers each of its seeds without a crash, and the seeds are packs the
readers accept (a corpus of garbage would leave the fuzzer nothing to start from)."""

from __future__ import annotations

import builtins
import importlib
import sys
from pathlib import Path
from typing import Any

import pytest

FUZZ = Path(__file__).resolve().parent.parent / "fuzz"
sys.path.insert(0, str(FUZZ))

import _fuzzing  # noqa: E402
import seeds  # noqa: E402

HARNESSES = sorted(path.stem for path in FUZZ.glob("fuzz_*.py"))
# Inputs the harnesses once crashed on, under the harness that found each (README.md there).
# Content readers without a writer of their own to round-trip through (each checks what it can).
CONTENT_HARNESSES = [
    "fuzz_read_qimage",
    "fuzz_read_mdl",
    "fuzz_read_bsp",
    "fuzz_read_locatext",
    "fuzz_import_translation",
    "fuzz_read_xtbl",
    "fuzz_read_scene",
    "fuzz_import_sheet",
    "fuzz_read_model",
    "fuzz_read_zone",
    "fuzz_read_sprite",
    "fuzz_read_rfgmesh",
]
FINDINGS = sorted((Path(__file__).resolve().parent / "data" / "fuzz").glob("fuzz_*/*"))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seeds gamepak's writers make (the real samples are left to `make fuzz-long`)."""
    folder = tmp_path_factory.mktemp("corpus")
    seeds.write_seeds(folder, samples=None)
    return folder


def test_every_format_has_a_reader_and_a_round_trip_harness() -> None:
    kinds = {"pak", "jpk", "j2me", "vpp", "zip", "tar", "joe", "peg", "asm", "wad"}
    expected = {f"fuzz_{role}_{kind}" for role in ("read", "rebuild") for kind in kinds}
    assert set(HARNESSES) == expected | {
        "fuzz_manifest_all",
        "fuzz_edit_all",
        "fuzz_read_gpatch",
        "fuzz_read_mod",
        "fuzz_import_image",
        *CONTENT_HARNESSES,
    }


@pytest.mark.parametrize("harness", HARNESSES)
def test_harness_imports_without_atheris_and_survives_its_seeds(
    harness: str, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = builtins.__import__

    def no_atheris(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "atheris":
            raise ImportError("atheris is not installed")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_atheris)
    monkeypatch.delitem(sys.modules, harness, raising=False)
    module = importlib.import_module(harness)
    assert callable(module.main)
    assert _fuzzing.run_on_seeds(module.TestOneInput, str(corpus / harness)) >= 2


@pytest.mark.parametrize("finding", FINDINGS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_fuzz_findings_stay_fixed(finding: Path) -> None:
    harness = importlib.import_module(finding.parent.name)
    harness.TestOneInput(finding.read_bytes())


@pytest.mark.parametrize("kind", ["pak", "jpk", "vpp", "zip", "tar", "wad"])
def test_archive_seeds_read(kind: str, corpus: Path) -> None:
    for seed in sorted((corpus / f"fuzz_read_{kind}").iterdir()):
        assert _fuzzing.exercise_archive(seed.read_bytes(), kind) is not None, seed.name


def test_j2me_seeds_read_in_some_layout(corpus: Path) -> None:
    for seed in sorted((corpus / "fuzz_read_j2me").iterdir()):
        data = seed.read_bytes()
        assert any(_fuzzing.exercise_archive(data, layout) is not None for layout in _fuzzing.J2ME_LAYOUTS), seed.name


def test_a_broken_invariant_is_a_crash_and_a_refusal_is_not() -> None:
    class Lying:
        """An archive whose random access reads other bytes than its archive-order pass."""

        def infolist(self) -> list[Any]:
            return [type("E", (), {"name": "a", "size": 1})()]

        def namelist(self) -> list[str]:
            return ["a"]

        def iter_data(self) -> Any:
            return iter([(self.infolist()[0], iter([b"x"]))])

        def read(self, entry: Any) -> bytes:
            return b"y"

    with pytest.raises(AssertionError, match="disagree"):
        _fuzzing.read_members(Lying())  # type: ignore[arg-type]
    assert _fuzzing.exercise_archive(b"not a pack", "pak") is None
