"""Assertions shared by the Python tests."""

import dataclasses

import numpy as np

import kiln as kl

MODES = ["symbolic", "evaluated"]  # the two ways control flow runs


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


def numpy_leaves(value):
    """The arrays inside a result, as NumPy arrays, in a fixed order."""
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in numpy_leaves(v)]
    if isinstance(value, dict):
        return [a for k in sorted(value) for a in numpy_leaves(value[k])]
    if dataclasses.is_dataclass(value):
        return [a for f in dataclasses.fields(value) for a in numpy_leaves(getattr(value, f.name))]
    if isinstance(value, kl.PCG32):
        return [value.state.numpy(), value.inc.numpy()]
    return [np.asarray(value)]


def in_both_modes(run):
    """run(mode) in each mode; checks that the results agree bit for bit and returns them."""
    results = {mode: run(mode) for mode in MODES}
    symbolic, evaluated = (numpy_leaves(results[mode]) for mode in MODES)
    assert len(symbolic) == len(evaluated)
    for a, b in zip(symbolic, evaluated):
        assert_same(b, a)
    return results["symbolic"]
