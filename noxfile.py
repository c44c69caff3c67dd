"""`make test` and `make run` where there is no make (Windows): `python -m nox -s tests`; and
`python -m nox -s wheels`: every runtime dependency installs from binary wheels everywhere."""

from __future__ import annotations

import tempfile
import tomllib
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent
PYTHONS = ("3.11", "3.12", "3.13")
# Where gamepak must install without a compiler: pip's platform tags for each, and the values
# of the environment markers there (pip download evaluates our markers for the HOST, not for
# --platform, so they are evaluated here for each target).
TARGETS: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    "windows-x64": (
        ("win_amd64",),
        {"sys_platform": "win32", "platform_machine": "AMD64", "platform_system": "Windows", "os_name": "nt"},
    ),
    "macos-arm64": (
        ("macosx_11_0_arm64", "macosx_12_0_arm64", "macosx_13_0_arm64", "macosx_14_0_arm64"),
        {"sys_platform": "darwin", "platform_machine": "arm64", "platform_system": "Darwin", "os_name": "posix"},
    ),
    "linux-x86_64": (
        ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64"),
        {"sys_platform": "linux", "platform_machine": "x86_64", "platform_system": "Linux", "os_name": "posix"},
    ),
    "linux-aarch64": (
        ("manylinux2014_aarch64", "manylinux_2_17_aarch64", "manylinux_2_28_aarch64"),
        {"sys_platform": "linux", "platform_machine": "aarch64", "platform_system": "Linux", "os_name": "posix"},
    ),
}


def runtime_requirements(target: str, python: str) -> list[str]:
    """gamepak's runtime dependencies (pyproject.toml) that apply on `target` under CPython
    `python`, their markers evaluated for that target, as pip requirement strings."""
    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    environment = {
        **TARGETS[target][1],
        "python_version": python,
        "python_full_version": f"{python}.0",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "platform_release": "",
        "platform_version": "",
        "extra": "",
    }
    wanted = []
    for text in project["dependencies"]:
        requirement = Requirement(text)
        if requirement.marker is None or requirement.marker.evaluate(environment):
            requirement.marker = None
            wanted.append(str(requirement))
    return wanted


def download_command(target: str, python: str, folder: str) -> list[str]:
    """`pip download` of the target's runtime dependencies (and theirs) as wheels only."""
    platforms = [argument for tag in TARGETS[target][0] for argument in ("--platform", tag)]
    return [
        "python",
        "-m",
        "pip",
        "download",
        "--quiet",
        "--only-binary=:all:",
        *platforms,
        "--python-version",
        python,
        "--implementation",
        "cp",
        "--dest",
        folder,
        *runtime_requirements(target, python),
    ]


@nox.session
def tests(session: nox.Session) -> None:
    """Install gamepak with its test extras and run the whole suite."""
    session.install("-e", ".[test]")
    session.run("python", "-m", "pytest", "-q", "-n", "2")


@nox.session
def run(session: nox.Session) -> None:
    """Install gamepak and run the demo job (what `make run` does)."""
    session.install("-e", ".")
    session.run("python", "-m", "gamepak.demo", "build/demo")


@nox.session
def wheels(session: nox.Session) -> None:
    """Every runtime dependency (and each of theirs) resolves to binary wheels on Windows x64,
    macOS arm64, Linux x86-64 and Linux aarch64 for CPython 3.11-3.13: `pip download
    --only-binary=:all:` per target, from the package index (needs the network)."""
    session.install("packaging")
    failed = []
    with tempfile.TemporaryDirectory(prefix="gamepak-wheels-") as scratch:
        for target in TARGETS:
            for python in PYTHONS:
                session.log(f"{target}, CPython {python}")
                try:
                    session.run(*download_command(target, python, str(Path(scratch) / f"{target}-{python}")))
                except nox.command.CommandFailed:
                    failed.append(f"{target} CPython {python}")
    if failed:
        session.error(f"no binary wheel for every dependency on: {', '.join(failed)} (pip said which above)")
