"""Array construction (zeros/full/empty/arange/linspace/opaque) and conversions (cast, reinterpret)."""

import math

import numpy as np
import pytest

import kiln as kl
from checks import assert_same

TYPES = [(kl.Bool, np.bool_), (kl.Int32, np.int32), (kl.UInt32, np.uint32), (kl.Int64, np.int64),
         (kl.UInt64, np.uint64), (kl.Float, np.float32), (kl.Float64, np.float64)]
IDS = [t.__name__ for t, _ in TYPES]
NUMERIC, NUMERIC_IDS = TYPES[1:], IDS[1:]
FLOATS, FLOAT_IDS = TYPES[5:], IDS[5:]
INTS, INT_IDS = TYPES[1:5], IDS[1:5]
VALUE = {np.bool_: True, np.int32: -123456, np.uint32: 4000000000, np.int64: -(2**50) - 1,
         np.uint64: 2**64 - 2, np.float32: 0.1, np.float64: -1 / 3}
SIZES = [1, 5, 33]


def is_float(dtype):
    return np.issubdtype(dtype, np.floating)


# ---- zeros, full, empty, opaque -----------------------------------------------------------------

@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
@pytest.mark.parametrize("n", SIZES)
def test_zeros(cls, dtype, n):
    x = kl.zeros(cls, n)
    assert type(x) is cls and len(x) == n
    assert_same(x.numpy(), np.zeros(n, dtype))


@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
@pytest.mark.parametrize("n", SIZES)
def test_full(cls, dtype, n):
    x = kl.full(cls, VALUE[dtype], n)
    assert type(x) is cls and len(x) == n
    assert_same(x.numpy(), np.full(n, VALUE[dtype], dtype))


@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
@pytest.mark.parametrize("n", SIZES + [0])
def test_empty_allocates_size_elements(cls, dtype, n):
    x = kl.empty(cls, n)
    assert type(x) is cls and len(x) == n
    assert x.numpy().dtype == dtype and x.numpy().shape == (n,)


@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
def test_default_size_is_one(cls, dtype):
    assert len(kl.zeros(cls)) == 1 and len(kl.empty(cls)) == 1
    assert kl.full(cls, VALUE[dtype]).item() == dtype(VALUE[dtype])
    assert kl.opaque(cls, VALUE[dtype]).item() == dtype(VALUE[dtype])


@pytest.mark.parametrize("make", [lambda c: kl.zeros(c, -1), lambda c: kl.empty(c, -1),
                                  lambda c: kl.full(c, 1, -2), lambda c: kl.opaque(c, 1, -3)],
                         ids=["zeros", "empty", "full", "opaque"])
def test_negative_sizes_raise_value_error(make):
    with pytest.raises(ValueError):
        make(kl.Int32)


@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
@pytest.mark.parametrize("n", SIZES)
def test_opaque_holds_the_value_and_changing_it_reuses_the_kernel(cls, dtype, n):
    def run(value):
        x = kl.opaque(cls, value, n)
        return (x ^ cls(True) if dtype == np.bool_ else x + x).numpy()

    first, second = VALUE[dtype], (False if dtype == np.bool_ else dtype(7).item())
    assert_same(kl.opaque(cls, first, n).numpy(), np.full(n, first, dtype))
    with np.errstate(all="ignore"):
        reference = lambda v: ~np.full(n, v) if dtype == np.bool_ else np.full(n, v, dtype) * dtype(2)  # noqa: E731
        assert_same(run(first), reference(first))
        kl.kernel_history(clear=True)
        assert_same(run(second), reference(second))
    history = kl.kernel_history()
    assert history[-1]["source"] == "memory" and history[-1]["parameters"] >= 1


# ---- arange, linspace -----------------------------------------------------------------------------

@pytest.mark.parametrize("cls, dtype", NUMERIC, ids=NUMERIC_IDS)
@pytest.mark.parametrize("n", [0, 1, 17, 1000])
def test_arange_size(cls, dtype, n):
    x = kl.arange(cls, n)
    assert type(x) is cls
    assert_same(x.numpy(), np.arange(n, dtype=dtype))


INT_RANGES = [(0, 10, 1), (3, 20, 4), (5, 2, 1), (7, 7, 1), (0, 7, 3), (100, 1000, 7)]
SIGNED_RANGES = [(10, 0, -3), (7, -8, -5), (-5, 5, 2), (-2**31, 2**31 - 1, 2**30), (3, 10, -1)]
BIG_RANGES = [(2**60, 2**60 + 5, 1), (2**53, 2**53 + 3, 1), (-2**62, 2**62, 2**61), (2**62 + 1, 2**62 + 40, 13)]
RANGE_CASES = ([(t, d, r) for t, d in INTS for r in INT_RANGES]
               + [(t, d, r) for t, d in (INTS[0], INTS[2]) for r in SIGNED_RANGES]
               + [(t, d, r) for t, d in (INTS[2], INTS[3]) for r in BIG_RANGES if r[0] >= 0 or d == np.int64])


@pytest.mark.parametrize("cls, dtype, r", RANGE_CASES, ids=[f"{t.__name__}-{r}" for t, _, r in RANGE_CASES])
def test_arange_integer_range_is_like_python_range(cls, dtype, r):
    x = kl.arange(cls, *r)
    assert_same(x.numpy(), np.array(list(range(*r)), dtype=dtype))


@pytest.mark.parametrize("cls, dtype", INTS, ids=INT_IDS)
def test_arange_default_step_is_one(cls, dtype):
    assert_same(kl.arange(cls, 4, 9).numpy(), np.arange(4, 9, dtype=dtype))


@pytest.mark.parametrize("cls, dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("r", [(0, 1, 0.1), (-2, 3, 0.25), (5, 1, -0.5), (1.5, 1.5, 1.0), (0, 100, 3.3), (2, 1, 0.5)])
def test_arange_float_range(cls, dtype, r):
    start, stop, step = (dtype(v) for v in r)
    count = len(np.arange(float(start), float(stop), float(step)))
    expected = start + np.arange(count).astype(dtype) * step  # start + i * step, in the array's precision
    assert_same(kl.arange(cls, *r).numpy(), expected.astype(dtype))


@pytest.mark.parametrize("cls, dtype", NUMERIC, ids=NUMERIC_IDS)
def test_arange_zero_step_raises(cls, dtype):
    with pytest.raises(ValueError):
        kl.arange(cls, 0, 5, 0)


def test_arange_and_linspace_are_not_defined_for_bool_or_integers():
    with pytest.raises(TypeError):
        kl.arange(kl.Bool, 3)
    for cls in (kl.Bool, kl.Int32, kl.UInt64):
        with pytest.raises(TypeError):
            kl.linspace(cls, 0, 1, 4)


@pytest.mark.parametrize("cls, dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("lo, hi, n", [(0, 1, 5), (-3, 7, 11), (2, 3, 1), (1, -1, 1001), (0.1, 0.7, 33), (5, 5, 4), (0, 1, 0)])
def test_linspace(cls, dtype, lo, hi, n):
    x = kl.linspace(cls, lo, hi, n).numpy()
    assert x.dtype == dtype and len(x) == n
    if n == 0:
        return
    assert x[0] == dtype(lo)
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(x, np.linspace(dtype(lo), dtype(hi), n), rtol=4 * eps, atol=4 * eps * max(abs(lo), abs(hi)))
    if n > 1:
        assert x[-1] == dtype(hi)  # the docstring: "from `min` to `max` (both included)"


# ---- cast --------------------------------------------------------------------------------------

INT_VALUES = [0, 1, -1, 2, 7, -7, 255, 256, 2**24 + 1, 2**31 - 1, -2**31, 2**31, 2**32 - 1, 2**32 + 5,
              2**53 + 1, -2**53 - 1, 2**63 - 1, -2**63, 2**63 + 2**40 + 1, 2**64 - 1, 123456789012345]
FLOAT_VALUES = [0.0, -0.0, 0.5, -0.5, 2.9, -2.9, 1.5, -1.5, 255.5, 65536.7, 1e10, -1e10, 3e9, 5e18, -5e18,
                1e20, -1e20, 1e39, math.inf, -math.inf, math.nan, 1e-45, -1e-310, 2147483520.0, 2.0**31,
                2.0**31 - 0.5, -2.0**31, -2.0**31 - 1, 2.0**32, 4294967040.0, 2.0**63, -2.0**63, 2.0**64,
                2.0**53 + 2, 1.0 / 3, 1e300, 1e19, 1.8e19]


def source_values(dtype):
    if dtype == np.bool_:
        return np.array([True, False, True, True, False])
    if is_float(dtype):
        with np.errstate(over="ignore"):
            return np.array(FLOAT_VALUES, dtype=dtype)
    unsigned = {4: np.uint32, 8: np.uint64}[np.dtype(dtype).itemsize]
    mask = (1 << (8 * np.dtype(dtype).itemsize)) - 1
    return np.array([v & mask for v in INT_VALUES], dtype=unsigned).view(dtype)  # wrapped into range


def cast_reference(values, source, target):
    """Kiln's documented semantics: to Bool is != 0; float to integer truncates, saturates, NaN gives 0."""
    if target == np.bool_:
        return values != 0
    if is_float(source) and not is_float(target):
        info = np.iinfo(target)
        out = []
        for v in values.tolist():
            out.append(0 if math.isnan(v) else info.min if v <= info.min else info.max if v >= info.max + 1
                       else math.trunc(v))
        return np.array(out, dtype=target)
    with np.errstate(all="ignore"):
        return values.astype(target)  # integers wrap, floats round to nearest


CAST_PAIRS = [(to, t_dt, frm, f_dt) for to, t_dt in TYPES for frm, f_dt in TYPES]
CAST_IDS = [f"{f.__name__}-to-{t.__name__}" for t, _, f, _ in CAST_PAIRS]


@pytest.mark.parametrize("to, to_dtype, source, source_dtype", CAST_PAIRS, ids=CAST_IDS)
@pytest.mark.parametrize("path", ["llvm", "interpreter", "literal"])
def test_cast(to, to_dtype, source, source_dtype, path):
    values = source_values(source_dtype)
    expected = cast_reference(values, source_dtype, to_dtype)
    if path == "literal":  # folded at trace time by the scalar semantics
        actual = np.array([kl.cast(to, source(v)).item() for v in values.tolist()], dtype=to_dtype)
    else:
        kl.set_flag(kl.Flag.Interpreter, path == "interpreter")
        actual = kl.cast(to, source(values)).numpy()
    assert_same(actual, expected)


@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
def test_cast_to_the_same_type_keeps_the_values(cls, dtype):
    x = cls(source_values(dtype))
    y = kl.cast(cls, x)
    assert type(y) is cls
    assert_same(y.numpy(), source_values(dtype))


def test_cast_of_a_pending_expression():
    x = kl.arange(kl.Float, 10) * 0.75 - 3
    assert_same(kl.cast(kl.Int32, x).numpy(), np.trunc(np.arange(10, dtype=np.float32) * np.float32(0.75) - 3).astype(np.int32))


# ---- reinterpret -----------------------------------------------------------------------------------

SAME_WIDTH = [(kl.Int32, np.int32), (kl.UInt32, np.uint32), (kl.Float, np.float32)], \
             [(kl.Int64, np.int64), (kl.UInt64, np.uint64), (kl.Float64, np.float64)]
REINTERPRET = [(t, td, f, fd) for group in SAME_WIDTH for t, td in group for f, fd in group if t is not f]


def bit_patterns(itemsize):
    bits = {4: np.uint32, 8: np.uint64}[itemsize]
    rng = np.random.default_rng(itemsize)
    special = [0, 1, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFC01234, 0x3F800000]
    if itemsize == 8:
        special = [0, 1, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000,
                   0x7FF0000000000001, 0xFFF8000000001234, 0x3FF0000000000000]
    random = rng.integers(0, np.iinfo(bits).max, 40, dtype=bits, endpoint=True)
    return np.concatenate([np.array(special, dtype=bits), random])


@pytest.mark.parametrize("to, to_dtype, source, source_dtype", REINTERPRET,
                         ids=[f"{f.__name__}-as-{t.__name__}" for t, _, f, _ in REINTERPRET])
@pytest.mark.parametrize("path", ["llvm", "interpreter", "literal"])
def test_reinterpret_matches_numpy_view(to, to_dtype, source, source_dtype, path):
    bits = bit_patterns(np.dtype(to_dtype).itemsize)
    values = bits.view(source_dtype)
    if path == "literal":
        if source_dtype == np.float32:  # a float32 NaN does not survive the trip through a Python float
            bits, values = bits[~np.isnan(values)], values[~np.isnan(values)]
        result = np.concatenate([kl.reinterpret(to, source(v)).numpy() for v in values.tolist()])
    else:
        kl.set_flag(kl.Flag.Interpreter, path == "interpreter")
        result = kl.reinterpret(to, source(values)).numpy()
    assert result.dtype == to_dtype
    np.testing.assert_array_equal(result.view(bits.dtype), values.view(to_dtype).view(bits.dtype))
    back = kl.reinterpret(source, kl.reinterpret(to, source(values))).numpy()
    np.testing.assert_array_equal(back.view(bits.dtype), bits)


@pytest.mark.parametrize("to, source", [(kl.Float, kl.Float64), (kl.Int64, kl.Int32), (kl.UInt32, kl.UInt64),
                                        (kl.Bool, kl.Int32), (kl.Float, kl.Float), (kl.Int32, kl.Bool)])
def test_reinterpret_needs_another_type_of_the_same_width(to, source):
    with pytest.raises(TypeError):
        kl.reinterpret(to, kl.zeros(source, 3))
