"""Assertions shared by the Python tests."""

import numpy as np


def assert_same(actual, expected):
    """Equal dtype and values; floats bit for bit except that any NaN matches any NaN."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape
    if np.issubdtype(expected.dtype, np.floating):
        nan = np.isnan(expected)
        np.testing.assert_array_equal(np.isnan(actual), nan)
        bits = {4: np.uint32, 8: np.uint64}[expected.itemsize]
        np.testing.assert_array_equal(actual[~nan].view(bits), expected[~nan].view(bits))
    else:
        np.testing.assert_array_equal(actual, expected)
