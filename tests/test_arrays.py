"""`core.arrays.sorted_unique`: what `np.unique` gives (sorted distinct values, flat, same dtype),
by a sort for integers rather than numpy 2.x's hash table."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from gamepak.core.arrays import sorted_unique

INTEGER_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.bool_]


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(INTEGER_DTYPES).flatmap(
        lambda dtype: hnp.arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=12))
    )
)
def test_integers_are_what_np_unique_gives(values: np.ndarray) -> None:
    found = sorted_unique(values)
    expected = np.unique(values)
    assert found.dtype == expected.dtype and found.shape == expected.shape
    assert np.array_equal(found, expected)


@pytest.mark.parametrize(
    "values",
    [
        np.zeros(0, np.int64),
        np.array([7]),
        np.array([[3, 1], [3, 2]], np.uint16),
        np.array([5, 5, 5, 5], np.int32),
        np.array([-1, 65535, -1, 0], np.int64),
    ],
)
def test_hand_made(values: np.ndarray) -> None:
    assert np.array_equal(sorted_unique(values), np.unique(values))
    assert sorted_unique(values).dtype == values.dtype


def test_floats_fold_their_nans_as_np_unique_does() -> None:
    values = np.array([2.0, np.nan, 1.0, np.nan, 2.0])
    assert np.array_equal(sorted_unique(values), np.array([1.0, 2.0, np.nan]), equal_nan=True)


def test_a_list_is_taken_as_an_array() -> None:
    assert sorted_unique([3, 1, 3]).tolist() == [1, 3]  # type: ignore[arg-type]
