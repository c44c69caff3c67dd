"""Each weak test the audit of issue 43 named fails under the break the audit used
(`tests/mutations.py` lists the breaks and the tests): a test that passes with the feature
broken guards nothing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mutations import BREAKS

TESTS = Path(__file__).resolve().parent


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_the_named_tests_fail_under_the_break(name: str) -> None:
    _, node_ids = BREAKS[name]
    environment = dict(os.environ, GAMEPAK_BREAK=name)
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(TESTS.parent / "src"), str(TESTS), environment.get("PYTHONPATH", "")]
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "mutations", "-q", "-rA", "-p", "no:cacheprovider", *node_ids],
        cwd=TESTS.parent,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
    )
    failed = set(re.findall(r"^(?:FAILED|ERROR) (\S+)", result.stdout, re.MULTILINE))
    skipped = re.findall(r"^SKIPPED .*", result.stdout, re.MULTILINE)
    if skipped and not failed:
        pytest.skip(f"the tests of {name} skipped here: {skipped[0]}")
    # A survivor is a named test that passed with the feature broken (a skipped one, e.g.
    # without ../shared, proves nothing either way).
    passed = set(re.findall(r"^PASSED (\S+)", result.stdout, re.MULTILINE))
    survivors = [node for node in node_ids if node in passed]
    assert survivors == [], f"{name}: these pass with the feature broken:\n{result.stdout[-3000:]}"
