"""core/memory.py: the heap tuning `texture build` applies once per process."""

from __future__ import annotations

import platform
import sys

import pytest


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_keep_freed_heap_applies_on_glibc() -> None:
    from gamepak.core.memory import keep_freed_heap

    assert keep_freed_heap() is True
    assert keep_freed_heap() is True  # once per process, the answer remembered
