"""Arrays holding many meshes' rows one mesh after another ("runs"), reduced run by run in one
numpy call: a track's thousands of small meshes cost one pass, not thousands of tiny calls."""

from __future__ import annotations

from typing import Any


def run_starts(counts: Any) -> Any:
    """Where each run starts, for runs of `counts` rows laid end to end."""
    import numpy as np

    starts = np.zeros(len(counts), np.int64)
    if len(counts) > 1:
        np.cumsum(counts[:-1], out=starts[1:])
    return starts


def per_run(values: Any, counts: Any, reduce: Any, empty: Any) -> Any:
    """`reduce` (a ufunc such as `np.maximum`) of each run of `values`; `empty` for runs with no
    rows (which `ufunc.reduceat` would get wrong)."""
    import numpy as np

    result = np.full((len(counts),) + values.shape[1:], empty, dtype=values.dtype)
    present = counts > 0
    if present.any():
        result[present] = reduce.reduceat(values, run_starts(counts)[present], axis=0)
    return result


def all_finite(rows: Any, counts: Any) -> Any:
    """Whether each run of `rows` (an (N, k) float array) holds only finite values."""
    import numpy as np

    width = rows.shape[1] if rows.ndim > 1 else 1
    return per_run(np.isfinite(rows.reshape(-1)), counts * width, np.logical_and, True)
