"""The forked copy workers' own rules (`ops.copy_workers`): a worker dies with its parent."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

# The middle process forks a worker that asks to die with it, then waits to be killed.
MIDDLE = """
import os, sys, time
from gamepak.ops.copy_workers import _die_with_parent
pid = os.fork()
if pid == 0:
    _die_with_parent()
    os.write(1, b"%d\\n" % os.getpid())
    time.sleep(60)
    os._exit(0)
time.sleep(60)
"""


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        return "gone"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_worker_dies_with_its_killed_parent() -> None:
    """kill -9 of the extraction leaves no worker writing into the temporaries the next command
    removes (`_die_with_parent`: prctl called through `_ctypes` alone)."""
    middle = subprocess.Popen([sys.executable, "-c", MIDDLE], stdout=subprocess.PIPE)
    assert middle.stdout is not None
    worker = int(middle.stdout.readline())
    try:
        assert _state(worker) in "RSD"
        middle.kill()
        middle.wait()
        deadline = time.monotonic() + 5
        while _state(worker) not in ("Z", "X", "gone") and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _state(worker) in ("Z", "X", "gone")  # killed (a zombie until its new parent reaps it)
    finally:
        if _state(worker) not in ("Z", "X", "gone"):
            os.kill(worker, 9)


def test_prctl_is_found_without_the_ctypes_package() -> None:
    code = "import sys; from gamepak.ops.copy_workers import _prctl; _prctl(); print('ctypes' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"
