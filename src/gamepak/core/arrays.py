"""numpy helpers the formats and the models share (numpy is imported by the functions, so that
`import gamepak` stays light).

`np.unique` of numpy 2.x takes a hash table for a plain call (no `return_index`,
`return_inverse` or `return_counts`): measured here under numpy 2.4, about 2.9 million
instructions for 1,024 small integers against 30 thousand to sort them and keep each first
one, and 22 million against 7 million for 100,000. `sorted_unique` is that sort.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import numpy as np


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """`np.unique(values)`: the distinct values, sorted, flat, of the array's dtype; for an
    integer (or boolean) array by a sort rather than numpy's hash table. Other arrays are
    handed to `np.unique` (it folds every NaN into one, which a plain sort would not)."""
    import numpy as np

    values = np.asarray(values)
    if values.dtype.kind not in "biu":
        return np.unique(values)
    ordered = np.sort(values, axis=None)
    first = np.empty(ordered.shape, dtype=bool)
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return ordered[first]
