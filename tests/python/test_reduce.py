"""Reductions and search with Dr.Jit's names: scatter_reduce with Mul, And and Or,
block_reduce for every ReduceOp against NumPy (and its derivatives), count, mean, and
binary_search against numpy.searchsorted."""

import numpy as np
import pytest

import kiln as kl

REDUCERS = {
    kl.ReduceOp.Add: np.add, kl.ReduceOp.Mul: np.multiply, kl.ReduceOp.Min: np.minimum,
    kl.ReduceOp.Max: np.maximum, kl.ReduceOp.And: np.bitwise_and, kl.ReduceOp.Or: np.bitwise_or,
}


def numpy_block_reduce(op, a, block):
    return np.array([REDUCERS[op].reduce(a[i:i + block], dtype=a.dtype) for i in range(0, len(a), block)])


@pytest.mark.parametrize("block", [1, 4, 7, 103, 200])
def test_block_reduce_matches_numpy(block):
    rng = np.random.default_rng(3)
    ints = rng.integers(-1000, 1000, 103).astype(np.int32)
    floats = (rng.choice([0.5, 2.0], 103) * rng.choice([-1.0, 1.0], 103)).astype(np.float32)  # exact products
    for op in REDUCERS:
        np.testing.assert_array_equal(kl.block_reduce(op, kl.Int32(ints), block).numpy(),
                                      numpy_block_reduce(op, ints, block), err_msg=str(op))
    for op in (kl.ReduceOp.Add, kl.ReduceOp.Mul, kl.ReduceOp.Min, kl.ReduceOp.Max):
        np.testing.assert_array_equal(kl.block_reduce(op, kl.Float(floats), block).numpy(),
                                      numpy_block_reduce(op, floats, block), err_msg=str(op))


def test_block_reduce_of_masks():
    mask = np.array([True, True, False, True, False, False, True])
    assert kl.block_reduce(kl.ReduceOp.And, kl.Bool(mask), 2).numpy().tolist() == [True, False, False, True]
    assert kl.block_reduce(kl.ReduceOp.Or, kl.Bool(mask), 3).numpy().tolist() == [True, True, True]
    with pytest.raises(TypeError, match=r"Bool arrays reduce with And \(all\) or Or"):
        kl.block_reduce(kl.ReduceOp.Add, kl.Bool(mask), 2)


def test_block_reduce_errors():
    with pytest.raises(TypeError, match="bitwise reductions need integer arrays"):
        kl.block_reduce(kl.ReduceOp.And, kl.Float([1.0, 2.0]), 2)
    with pytest.raises(ValueError, match="block size must be positive"):
        kl.block_reduce(kl.ReduceOp.Add, kl.Float([1.0]), 0)


@pytest.mark.parametrize("op", [kl.ReduceOp.Add, kl.ReduceOp.Mul, kl.ReduceOp.Min, kl.ReduceOp.Max])
def test_block_reduce_derivatives(op):
    x = kl.Float64(np.array([0.6, -1.3, 0.9, 1.7, -0.8, 1.1, -1.9, 0.7, 1.45]))
    kl.check_grads(lambda a: kl.block_reduce(op, a * a, 4), (x,))


def test_scatter_reduce_mul_and_or_under_conflicts():
    n = 1 << 14
    lane = kl.arange(kl.UInt32, n)
    bins = lane % 5
    found = kl.zeros(kl.UInt32, 5)
    kl.scatter_reduce(kl.ReduceOp.Or, found, kl.UInt32(1) << (lane % 32), bins)
    kept = kl.full(kl.UInt32, 0xFFFFFFFF, 5)
    kl.scatter_reduce(kl.ReduceOp.And, kept, ~(kl.UInt32(1) << (lane % 32)), bins)
    product = kl.ones(kl.Float, 5)
    kl.scatter_reduce(kl.ReduceOp.Mul, product, kl.select(lane % 10 < 5, kl.Float(2.0), kl.Float(0.5)), bins)
    assert found.numpy().tolist() == [0xFFFFFFFF] * 5
    assert kept.numpy().tolist() == [0] * 5
    lanes = np.arange(n)
    ups = np.array([np.sum((lanes % 5 == b) & (lanes % 10 < 5)) for b in range(5)])
    downs = np.array([np.sum((lanes % 5 == b) & (lanes % 10 >= 5)) for b in range(5)])
    np.testing.assert_array_equal(product.numpy(), np.ldexp(np.float32(1), ups - downs))
    with pytest.raises(TypeError, match=r"scatter_reduce\(Or\): bitwise reductions need integer arrays"):
        kl.scatter_reduce(kl.ReduceOp.Or, kl.zeros(kl.Float, 2), kl.Float(1.0), kl.UInt32(0))


def test_scatter_reduce_mul_has_no_derivative():
    x = kl.Float64([1.0, 2.0])
    kl.enable_grad(x)
    target = kl.ones(kl.Float64, 2)
    with pytest.raises(ValueError, match=r"scatter_reduce\(Mul\): only plain scatters and scatter_add"):
        kl.scatter_reduce(kl.ReduceOp.Mul, target, x, kl.UInt32([0, 1]))


def test_count_and_mean():
    assert kl.count(kl.Bool([True, False, True, True])).item() == 3
    assert kl.count(kl.arange(kl.UInt32, 1000) % 7 == 0).item() == 143
    assert kl.mean(kl.Float([1.0, 2.0, 3.0, 6.0])).item() == 3.0
    x = np.linspace(-1, 3, 101)
    assert kl.mean(kl.Float64(x)).item() == pytest.approx(np.mean(x), rel=1e-15)


def test_binary_search_is_searchsorted():
    data = np.array([-3, -1, -1, 0, 2, 2, 2, 5, 9, 12, 12, 40], np.float32)
    queries = np.array([-5, -3, -1, -0.5, 0, 1, 2, 3, 12, 39, 40, 100], np.float32)
    sorted_data, values = kl.Float(data), kl.Float(queries)
    found = kl.binary_search(0, len(data), lambda i: kl.gather(sorted_data, i) < values)
    np.testing.assert_array_equal(found.numpy(), np.searchsorted(data, queries, side="left"))
    calls = []
    result = kl.binary_search(5, 17, lambda i: (calls.append(1), i < 9)[1])
    assert len(calls) == 4 and result.item() == 9
    with pytest.raises(ValueError, match=r"start \(4\) is after end"):
        kl.binary_search(4, 2, lambda i: i < 3)
    with pytest.raises(TypeError, match="pred must return a Bool"):
        kl.binary_search(0, 4, lambda i: "yes")
    with pytest.raises(ValueError, match="is not a UInt32 index"):
        kl.binary_search(-1, 2, lambda i: i < 3)
