"""Process memory tuning for numpy-heavy work.

glibc returns the top of its heap to the system whenever more than 128 KiB of it is free
(M_TRIM_THRESHOLD). numpy work on pictures allocates and frees dozens of arrays of 16-64 KiB
per step, so the heap is trimmed and grown again over and over, and touching fresh pages is
slow here (PERF-NOTES: fresh memory). Measured on `texture build`: elementwise numpy
operations on 16,384 float32 took about 100 us each with the default and 10 us with a 64 MiB
threshold.
"""

from __future__ import annotations

import functools
import sys

# glibc's mallopt parameter number for the trim threshold (malloc.h).
M_TRIM_THRESHOLD = -1
KEEP_FREE = 64 << 20


@functools.cache
def keep_freed_heap() -> bool:
    """Let glibc keep up to 64 MiB of freed heap for reuse instead of returning it at once
    (process-wide, once; the memory is still reused by the process and returned past 64 MiB).
    Returns whether it applied (False off Linux or without glibc)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(M_TRIM_THRESHOLD, KEEP_FREE))
    except (OSError, AttributeError):
        return False
