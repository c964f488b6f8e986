"""Memory and horizontal operations: gather, the scatters, reductions, prefix_sum, compress, block_sum."""

import numpy as np
import pytest

import kiln as kl

TYPES = [(kl.Bool, np.bool_), (kl.Int32, np.int32), (kl.UInt32, np.uint32), (kl.Int64, np.int64),
         (kl.UInt64, np.uint64), (kl.Float, np.float32), (kl.Float64, np.float64)]
IDS = [t.__name__ for t, _ in TYPES]
NUMERIC, NUMERIC_IDS = TYPES[1:], IDS[1:]
SIZES = [1, 15, 16, 1000, 20001]  # 20001: several blocks of the horizontal operations
SIZES0 = [0] + SIZES


def values(dtype, n, seed, small=False):
    """Random values; floats are small integers so that sums are exact in any order."""
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(bool)
    if np.issubdtype(dtype, np.floating) or small:
        return rng.integers(-100 if np.issubdtype(dtype, np.signedinteger) or np.issubdtype(dtype, np.floating) else 0,
                            100, n).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def lazy(cls, data, pending):
    """The array, or the same values as a pending expression that must be evaluated first."""
    x = cls(data)
    if not pending:
        return x
    return (x == cls(True)) if cls is kl.Bool else (x * cls(1))


def assert_equal(actual, expected):
    actual = np.asarray(actual)
    assert actual.dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(actual, expected)


# ---- gather ---------------------------------------------------------------------------------

@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
@pytest.mark.parametrize("n", SIZES0)
def test_gather(cls, dtype, n):
    source = values(dtype, 50, 1)
    index = np.random.default_rng(n).integers(0, 50, n).astype(np.uint32)
    assert_equal(kl.gather(cls(source), kl.UInt32(index)).numpy(), source[index])
    assert_equal(kl.gather(lazy(cls, source, True), kl.UInt32(index)).numpy(), source[index])


@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
@pytest.mark.parametrize("n", SIZES)
def test_gather_with_mask_gives_zero_on_inactive_lanes(cls, dtype, n):
    kl.set_flag(kl.Flag.Checks, True)  # inactive lanes are not read, so their index may be anything
    source = values(dtype, 50, 2)
    rng = np.random.default_rng(n)
    index, mask = rng.integers(0, 50, n).astype(np.uint32), rng.integers(0, 2, n).astype(bool)
    index[~mask] = 10**6
    result = kl.gather(cls(source), kl.UInt32(index), kl.Bool(mask)).numpy()
    assert_equal(result, np.where(mask, source[np.where(mask, index, 0)], dtype(0)))


def test_gather_out_of_range_raises_in_checked_mode():
    kl.set_flag(kl.Flag.Checks, True)
    with pytest.raises(IndexError):
        kl.gather(kl.Float([1, 2, 3]), kl.UInt32([0, 3])).numpy()


def test_gather_needs_a_uint32_index_and_a_bool_mask():
    with pytest.raises(TypeError):
        kl.gather(kl.Float([1, 2]), kl.Int32([0]))
    with pytest.raises(TypeError):
        kl.gather(kl.Float([1, 2]), kl.UInt32([0]), kl.UInt32([1]))


# ---- scatter ----------------------------------------------------------------------------------

@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
@pytest.mark.parametrize("n", SIZES0)
@pytest.mark.parametrize("masked", [False, True])
def test_scatter(cls, dtype, n, masked):
    rng = np.random.default_rng(n)
    target, value = values(dtype, n + 3, 3), values(dtype, n, 4)
    index = rng.permutation(n + 3)[:n].astype(np.uint32)  # distinct slots
    mask = rng.integers(0, 2, n).astype(bool) if masked else np.ones(n, bool)
    t = cls(target.copy())
    before = cls(t)  # shares the value: the scatter must copy first
    kl.scatter(t, cls(value), kl.UInt32(index), kl.Bool(mask) if masked else None)
    expected = target.copy()
    expected[index[mask]] = value[mask]
    assert_equal(t.numpy(), expected)
    assert_equal(before.numpy(), target)


@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
def test_scatter_broadcasts_a_value_and_runs_in_program_order(cls, dtype):
    target = values(dtype, 40, 5)
    t = cls(target.copy())
    one = dtype(1).item()
    kl.scatter(t, cls(one), kl.UInt32([3, 5, 7]))
    kl.scatter(t, cls(dtype(0).item()), kl.UInt32([5]))
    expected = target.copy()
    expected[[3, 5, 7]] = dtype(1)
    expected[5] = dtype(0)
    assert_equal(t.numpy(), expected)
    assert t[7] == one and len(t) == 40


@pytest.mark.parametrize("cls, dtype", NUMERIC, ids=NUMERIC_IDS)
def test_reads_after_a_scatter_see_it(cls, dtype):
    data = values(dtype, 100, 6, small=True)
    t = cls(data.copy())
    kl.scatter(t, cls(dtype(9).item()), kl.UInt32([0, 99]))
    expected = data.copy()
    expected[[0, 99]] = 9
    with np.errstate(over="ignore"):
        assert kl.sum(t).item() == np.sum(expected, dtype=dtype)
        assert_equal(kl.gather(t, kl.UInt32([99, 1, 0])).numpy(), expected[[99, 1, 0]])
        assert_equal((t + cls(dtype(1).item())).numpy(), expected + dtype(1))


@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
def test_conflicting_scatter_writes_one_of_the_values(cls, dtype):
    value = values(dtype, 64, 7)
    t = kl.zeros(cls, 4)
    kl.scatter(t, cls(value), kl.UInt32(np.full(64, 2, np.uint32)))
    result = t.numpy()
    assert result[2] in value and result[0] == 0 and result[3] == 0


# ---- scatter_reduce, scatter_add, scatter_inc ---------------------------------------------------

REDUCE = {kl.ReduceOp.Add: np.add, kl.ReduceOp.Min: np.minimum, kl.ReduceOp.Max: np.maximum}


@pytest.mark.parametrize("cls, dtype", NUMERIC, ids=NUMERIC_IDS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("op", list(REDUCE), ids=lambda op: op.name)
@pytest.mark.parametrize("masked", [False, True])
def test_scatter_reduce(cls, dtype, n, op, masked):
    rng = np.random.default_rng(n + 100)
    target, value = values(dtype, 7, 8), values(dtype, n, 9)
    index = rng.integers(0, 7, n).astype(np.uint32)  # many conflicts
    mask = rng.integers(0, 2, n).astype(bool) if masked else np.ones(n, bool)
    t = cls(target.copy())
    kl.scatter_reduce(op, t, cls(value), kl.UInt32(index), kl.Bool(mask) if masked else None)
    expected = target.copy()
    with np.errstate(over="ignore"):
        REDUCE[op].at(expected, index[mask], value[mask])
    assert_equal(t.numpy(), expected)


@pytest.mark.parametrize("cls, dtype", NUMERIC, ids=NUMERIC_IDS)
@pytest.mark.parametrize("n", SIZES)
def test_scatter_add(cls, dtype, n):
    value = values(dtype, n, 10)
    index = np.random.default_rng(n).integers(0, 5, n).astype(np.uint32)
    t = kl.zeros(cls, 5)
    kl.scatter_add(t, lazy(cls, value, True), kl.UInt32(index))
    expected = np.zeros(5, dtype)
    with np.errstate(over="ignore"):
        np.add.at(expected, index, value)
    assert_equal(t.numpy(), expected)


def test_scatter_reduce_is_not_defined_for_bool():
    t = kl.zeros(kl.Bool, 3)
    with pytest.raises(TypeError):
        kl.scatter_reduce(kl.ReduceOp.Add, t, kl.Bool([True]), kl.UInt32([0]))


@pytest.mark.parametrize("n", SIZES0)
@pytest.mark.parametrize("counters", [1, 4])
def test_scatter_inc_gives_each_active_lane_a_distinct_slot(n, counters):
    rng = np.random.default_rng(n)
    mask = rng.integers(0, 4, n) != 0
    lane = np.arange(n)
    which = (lane % counters).astype(np.uint32)
    counter = kl.zeros(kl.UInt32, counters)
    slots = kl.scatter_inc(counter, kl.UInt32(which), kl.Bool(mask))
    slots_np, counts = slots.numpy().copy(), counter.numpy()
    assert_equal(counts, np.bincount(which[mask], minlength=counters).astype(np.uint32))
    for c in range(counters):
        mine = slots_np[mask & (which == c)]
        assert sorted(mine.tolist()) == list(range(len(mine)))  # 0 .. count-1, each once


@pytest.mark.parametrize("n", SIZES0)
def test_scatter_inc_as_an_append_buffer(n):
    rng = np.random.default_rng(n + 1)
    data = rng.integers(0, 1000, n).astype(np.int32)
    keep = data % 3 == 0
    counter = kl.zeros(kl.UInt32, 1)
    slot = kl.scatter_inc(counter, kl.zeros(kl.UInt32, n), kl.Bool(keep))
    buffer = kl.full(kl.Int32, -1, n)
    kl.scatter(buffer, kl.Int32(data), slot, kl.Bool(keep))
    count = counter[0]
    assert count == keep.sum()
    out = buffer.numpy()
    assert sorted(out[:count].tolist()) == sorted(data[keep].tolist())
    assert np.all(out[count:] == -1)


# ---- sum, prod, min, max, dot, any, all -------------------------------------------------------------

def prod_values(dtype, n, seed):
    """Products without overflow or rounding for floats (+-1 with as many 2s as halves), odd integers."""
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.floating):
        x = rng.choice([1.0, -1.0], n)
        k = min(n // 2, 20)
        where = rng.permutation(n)[: 2 * k]
        x[where[:k]], x[where[k:]] = 2.0, 0.5
        return x.astype(dtype)
    return values(dtype, n, seed) | dtype(1)


REDUCTIONS = {"sum": (kl.sum, lambda a: np.sum(a, dtype=a.dtype)), "prod": (kl.prod, lambda a: np.prod(a, dtype=a.dtype)),
              "min": (kl.min, np.min), "max": (kl.max, np.max)}


REDUCTION_CASES = [(name, n) for name in REDUCTIONS for n in SIZES0 if n or name in ("sum", "prod")]


@pytest.mark.parametrize("cls, dtype", NUMERIC, ids=NUMERIC_IDS)
@pytest.mark.parametrize("name, n", REDUCTION_CASES, ids=[f"{a}-{b}" for a, b in REDUCTION_CASES])
@pytest.mark.parametrize("pending", [False, True])
def test_reductions(cls, dtype, n, name, pending):
    fn, ref = REDUCTIONS[name]
    data = prod_values(dtype, n, n) if name == "prod" else values(dtype, n, n)
    result = fn(lazy(cls, data, pending))
    assert type(result) is cls and len(result) == 1
    assert_equal(result.numpy(), np.array([ref(data)], dtype))


@pytest.mark.parametrize("cls, dtype", NUMERIC[4:], ids=NUMERIC_IDS[4:])
def test_float_min_and_max_ignore_nan(cls, dtype):
    data = np.array([3.0, np.nan, -2.0, 7.5, np.nan], dtype)
    assert kl.min(cls(data)).item() == -2.0 and kl.max(cls(data)).item() == 7.5


@pytest.mark.parametrize("cls, dtype", NUMERIC, ids=NUMERIC_IDS)
@pytest.mark.parametrize("n", SIZES0)
def test_dot(cls, dtype, n):
    a, b = values(dtype, n, n), values(dtype, n, n + 1)
    with np.errstate(over="ignore"):
        expected = np.sum(a * b, dtype=dtype)
    result = kl.dot(cls(a), cls(b))
    assert len(result) == 1
    assert_equal(result.numpy(), np.array([expected], dtype))


@pytest.mark.parametrize("n", SIZES0)
@pytest.mark.parametrize("pattern", ["random", "none", "last", "all", "all_but_last"])
@pytest.mark.parametrize("pending", [False, True])
def test_any_all(n, pattern, pending):
    mask = {"random": values(np.bool_, n, n), "none": np.zeros(n, bool), "all": np.ones(n, bool),
            "last": np.arange(n) == n - 1, "all_but_last": np.arange(n) != n - 1}[pattern]
    x = lazy(kl.Bool, mask, pending)
    assert type(kl.any(x)) is kl.Bool and len(kl.any(x)) == 1
    assert kl.any(x).item() == bool(mask.any())
    assert kl.all(x).item() == bool(mask.all())


def test_reductions_of_the_wrong_type_raise():
    for fn in (kl.sum, kl.prod, kl.min, kl.max, lambda x: kl.prefix_sum(x), lambda x: kl.block_sum(x, 2)):
        with pytest.raises(TypeError):
            fn(kl.Bool([True, False]))
    for fn in (kl.any, kl.all, kl.compress):
        with pytest.raises(TypeError):
            fn(kl.Int32([1, 0]))


# ---- prefix_sum, compress, block_sum -------------------------------------------------------------

@pytest.mark.parametrize("cls, dtype", NUMERIC, ids=NUMERIC_IDS)
@pytest.mark.parametrize("n", SIZES0)
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("pending", [False, True])
def test_prefix_sum(cls, dtype, n, exclusive, pending):
    data = values(dtype, n, n + 2)
    with np.errstate(over="ignore"):
        inclusive = np.cumsum(data, dtype=dtype)
    expected = np.concatenate([np.zeros(1, dtype), inclusive])[:n] if exclusive else inclusive
    x = lazy(cls, data, pending)
    result = kl.prefix_sum(x, exclusive) if exclusive else kl.prefix_sum(x)  # the default is inclusive
    assert type(result) is cls
    assert_equal(result.numpy(), expected)


@pytest.mark.parametrize("n", SIZES0)
@pytest.mark.parametrize("pattern", ["random", "none", "all", "sparse"])
@pytest.mark.parametrize("pending", [False, True])
def test_compress(n, pattern, pending):
    rng = np.random.default_rng(n)
    mask = {"random": rng.integers(0, 2, n).astype(bool), "none": np.zeros(n, bool), "all": np.ones(n, bool),
            "sparse": rng.integers(0, 97, n) == 0}[pattern]
    result = kl.compress(lazy(kl.Bool, mask, pending))
    assert type(result) is kl.UInt32
    assert_equal(result.numpy(), np.flatnonzero(mask).astype(np.uint32))


@pytest.mark.parametrize("cls, dtype", NUMERIC, ids=NUMERIC_IDS)
@pytest.mark.parametrize("n", SIZES0)
@pytest.mark.parametrize("block", [1, 3, 16, 1000, 30000])
def test_block_sum(cls, dtype, n, block):
    data = values(dtype, n, n + 3)
    starts = np.arange(0, n, block)
    with np.errstate(over="ignore"):
        expected = np.add.reduceat(data, starts, dtype=dtype)
    result = kl.block_sum(lazy(cls, data, True), block)
    assert len(result) == len(starts)  # the last group may be short
    assert_equal(result.numpy(), expected)


def test_block_sum_needs_a_positive_block():
    with pytest.raises(ValueError):
        kl.block_sum(kl.Int32([1, 2, 3]), 0)
    with pytest.raises(ValueError):
        kl.block_sum(kl.Int32([1, 2, 3]), -1)
