"""The seven array types: construction, Python operators against NumPy, len/repr/indexing/slicing/item."""

import operator

import numpy as np
import pytest

import kiln as kl
from checks import assert_same

TYPES = [(kl.Bool, np.bool_), (kl.Int32, np.int32), (kl.UInt32, np.uint32), (kl.Int64, np.int64),
         (kl.UInt64, np.uint64), (kl.Float, np.float32), (kl.Float64, np.float64)]
IDS = [t.__name__ for t, _ in TYPES]
N = 37  # not a multiple of the packet width


def kind(dtype):
    return "b" if dtype == np.bool_ else "f" if np.issubdtype(dtype, np.floating) else "i"


def sample(dtype, seed, n=N):
    """Values of `dtype` with its extremes mixed in (fixed seed)."""
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_)
    if kind(dtype) == "f":
        x = (rng.standard_normal(n) * 10).astype(dtype)
        info = np.finfo(dtype)
        if n >= 10:
            x[:8] = [0.0, -0.0, info.max, -info.tiny, info.smallest_subnormal, 1e30, np.nan, -np.inf]
        return x
    info = np.iinfo(dtype)
    x = rng.integers(max(info.min, -1000), 1000, n).astype(dtype)
    if n >= 10:
        x[:5] = [info.min, info.max, 0, 1, info.max - 1]
    return x


SCALARS = {np.bool_: True, np.int32: -7, np.uint32: 7, np.int64: -(2**40) - 3,
           np.uint64: 2**63 + 5, np.float32: 0.1, np.float64: -0.1}


@pytest.fixture(params=["llvm", "interpreter"])
def backend(request):
    kl.set_flag(kl.Flag.Interpreter, request.param == "interpreter")


# ---- construction ----------------------------------------------------------------------------

@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
def test_from_scalar_is_size_one(cls, dtype):
    value = SCALARS[dtype]
    x = cls(value)
    assert len(x) == 1 and x.size() == 1
    assert x.item() == dtype(value) and type(x.item()) is type(value)
    assert_same(x.numpy(), np.array([value], dtype))


@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
@pytest.mark.parametrize("container", [list, tuple])
def test_from_sequence(cls, dtype, container):
    data = sample(dtype, 1)
    x = cls(container(data.tolist()))
    assert len(x) == N
    assert_same(x.numpy(), data)


@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
def test_from_numpy_scalars(cls, dtype):
    value = dtype(SCALARS[dtype])
    assert cls(value).item() == value
    assert_same(kl.full(cls, value, 3).numpy(), np.full(3, value, dtype))


@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
def test_numpy_same_dtype_shares_memory(cls, dtype):
    data = sample(dtype, 2)
    x = cls(data)
    assert np.shares_memory(x.numpy(), data)
    data[3] = data[4]  # writes are seen on both sides
    assert_same(x.numpy(), data)
    x[5] = data[9].item()
    kl.eval(x)
    assert data[5] == data[9]


CONVERSIONS = [(t, d, s) for t, d in TYPES for s in (np.int64, np.float64, np.int32, np.bool_, np.uint32, np.uint8,
                                                        np.int16, np.float32) if s != d]


def converts_implicitly(dtype, source, data):
    """The documented rule: bool to any type, integer to float, float to float, and integer to
    integer when every element is in range; nothing else."""
    if source == np.bool_:
        return True
    if dtype == np.bool_ or (kind(dtype) == "i" and kind(source) == "f"):
        return False
    if kind(dtype) == "i":
        info = np.iinfo(dtype)
        return all(info.min <= int(v) <= info.max for v in data)
    return True


@pytest.mark.parametrize("cls, dtype, source", CONVERSIONS,
                         ids=[f"{t.__name__}-from-{np.dtype(s).name}" for t, _, s in CONVERSIONS])
@pytest.mark.parametrize("values", [[0, 1, 2, 5, 100, 1, 0], [0, 1, -1, 1, 0], [1, 255, 70000, 0]],
                         ids=["small", "negative", "wide"])
def test_numpy_other_dtype_converts_only_without_loss(cls, dtype, source, values):
    data = np.array(values).astype(source)
    if converts_implicitly(dtype, source, data):
        x = cls(data)
        assert not np.shares_memory(x.numpy(), data)
        assert_same(x.numpy(), data.astype(dtype))
    else:
        with pytest.raises(TypeError, match=r"astype\(np\.\w+\).*kl\.cast\(kl\." + cls.__name__):
            cls(data)


@pytest.mark.parametrize("source", [np.float64, np.float32])
def test_numpy_fractions_refused_for_integer_arrays(source):
    """kl.UInt32(np.array([1.5, 2.7, -3.2])) used to give [1, 2, 4294967293]."""
    data = np.array([1.5, 2.7, -3.2], source)
    for cls in (kl.UInt32, kl.Int32, kl.UInt64, kl.Int64, kl.Bool):
        with pytest.raises(TypeError, match="can change values"):
            cls(data)
    assert_same(kl.cast(kl.UInt32, kl.Float64(data.astype(np.float64))).numpy(), np.array([1, 2, 0], np.uint32))


def test_numpy_integer_out_of_range_is_refused_naming_the_element():
    with pytest.raises(TypeError, match=r"element 2 \(4294967296\) is out of the range of int32"):
        kl.Int32(np.array([1, 2, 2**32], np.uint64))
    with pytest.raises(TypeError, match=r"element 1 \(-1\) is out of the range of uint32"):
        kl.UInt32(np.array([0, -1], np.int64))
    assert_same(kl.Int32(np.array([1, 2, 3], np.uint64)).numpy(), np.array([1, 2, 3], np.int32))
    with pytest.raises(TypeError, match="float16 has no conversion"):
        kl.Float(np.ones(3, np.float16))


def test_strided_numpy_of_another_dtype_follows_the_rule():
    data = np.arange(12, dtype=np.float64)
    assert_same(kl.Float(data[::3]).numpy(), np.array([0, 3, 6, 9], np.float32))
    with pytest.raises(TypeError, match="can change values"):
        kl.UInt32(data[::3])


def test_conversion_rule_applies_to_vectors_and_tensors():
    assert_same(kl.Array3f(np.ones((2, 3))).numpy(), np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="can change values"):
        kl.Array3u(np.full((2, 3), 1.5))
    assert kl.TensorXi(np.arange(6).reshape(2, 3)).shape == (2, 3)
    with pytest.raises(TypeError, match="can change values"):
        kl.TensorXu(np.full((2, 3), 0.5))


@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
def test_numpy_strided_and_read_only_arrays_are_copied(cls, dtype):
    data = sample(dtype, 3)
    assert_same(cls(data[::3]).numpy(), data[::3])
    frozen = data.copy()
    frozen.flags.writeable = False
    x = cls(frozen)
    assert not np.shares_memory(x.numpy(), frozen)
    assert_same(x.numpy(), frozen)


@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
def test_copy_construction_shares_the_value_but_writes_do_not_leak(cls, dtype):
    data = sample(dtype, 4)
    x = cls(data.tolist())
    y = cls(x)
    assert y.index == x.index and len(y) == N
    y[0] = data[1].item()
    assert_same(x.numpy(), data)
    assert_same(y.numpy(), np.concatenate([data[1:2], data[1:]]))


# ---- binary operators ------------------------------------------------------------------------

def trunc_div(a, b):
    """C++'s (and Dr.Jit's) integer quotient: toward zero, where NumPy floors."""
    q = a // b
    if np.issubdtype(a.dtype, np.signedinteger):
        q = q + ((a % b != 0) & ((a < 0) != (b < 0))).astype(a.dtype)
    return q


# name: (Python operator, NumPy reference, kinds where defined)
BINARY = {
    "add": (operator.add, np.add, "if"), "sub": (operator.sub, np.subtract, "if"),
    "mul": (operator.mul, np.multiply, "if"), "truediv": (operator.truediv, np.true_divide, "f"),
    "floordiv": (operator.floordiv, trunc_div, "i"), "mod": (operator.mod, np.fmod, "i"), "and": (operator.and_, np.bitwise_and, "bi"),
    "or": (operator.or_, np.bitwise_or, "bi"), "xor": (operator.xor, np.bitwise_xor, "bi"),
    "lshift": (operator.lshift, np.left_shift, "i"), "rshift": (operator.rshift, np.right_shift, "i"),
    "eq": (operator.eq, np.equal, "bif"), "ne": (operator.ne, np.not_equal, "bif"),
    "lt": (operator.lt, np.less, "if"), "le": (operator.le, np.less_equal, "if"),
    "gt": (operator.gt, np.greater, "if"), "ge": (operator.ge, np.greater_equal, "if"),
}
DEFINED = [(t, d, op) for t, d in TYPES for op, (_, _, k) in BINARY.items() if kind(d) in k]
FLOAT_FLOOR_OPS = ("floordiv", "mod")  # defined for floats too, with Python's semantics: tested on their own
UNDEFINED = [(t, d, op) for t, d in TYPES for op, (_, _, k) in BINARY.items()
             if kind(d) not in k and not (kind(d) == "f" and op in FLOAT_FLOOR_OPS)]


def operands(dtype, op):
    """(a, b, scalar for a ∘ s, scalar for s ∘ b) valid for `op` (no zero divisors, shift counts in range)."""
    a, b, s = sample(dtype, 10), sample(dtype, 11), SCALARS[dtype]
    if op in ("floordiv", "mod") and kind(dtype) == "i":
        b[b == 0] = 1
        if np.issubdtype(dtype, np.signedinteger):
            b[(a == np.iinfo(dtype).min) & (b == -1)] = 3
    if op in ("lshift", "rshift"):
        bits = 8 * a.itemsize
        b = (np.arange(N) % bits).astype(dtype)
        return a, b, 5, s
    return a, b, s, s


@pytest.mark.parametrize("cls, dtype, op", DEFINED, ids=[f"{t.__name__}-{o}" for t, _, o in DEFINED])
def test_binary_operator_matches_numpy(cls, dtype, op, backend):
    fn, ref, _ = BINARY[op]
    a, b, s_right, s_left = operands(dtype, op)
    full = lambda v: np.full(N, v, dtype)  # noqa: E731
    with np.errstate(all="ignore"):
        assert_same(fn(cls(a), cls(b)).numpy(), ref(a, b))
        assert_same(fn(cls(a), s_right).numpy(), ref(a, full(s_right)))
        assert_same(fn(s_left, cls(b)).numpy(), ref(full(s_left), b))  # comparisons: reflected
        expected = ref(a[:12], b[:12])  # size-1 literals: folded at trace time by the scalar semantics
        assert_same(np.array([fn(cls(p), cls(q)).item() for p, q in zip(a[:12].tolist(), b[:12].tolist())],
                             expected.dtype), expected)


@pytest.mark.parametrize("cls, dtype, op", UNDEFINED, ids=[f"{t.__name__}-{o}" for t, _, o in UNDEFINED])
def test_binary_operator_undefined_for_type_raises(cls, dtype, op):
    fn = BINARY[op][0]
    x, s = cls(sample(dtype, 12)), SCALARS[dtype]
    for call in (lambda: fn(x, x), lambda: fn(x, s), lambda: fn(s, x)):
        with pytest.raises(TypeError):
            call()


@pytest.mark.parametrize("cls, dtype", [t for t in TYPES if kind(t[1]) == "i"], ids=IDS[1:5])
def test_integer_division_truncates_toward_zero(cls, dtype, backend):
    signed = np.issubdtype(dtype, np.signedinteger)
    a = np.array([7, -7, 7, -7, 9, -9, 0, 5] if signed else [7, 8, 9, 100, 5, 0, 3, 1], dtype)
    b = np.array([2, 2, -2, -2, 4, 5, 3, -6] if signed else [2, 3, 4, 7, 6, 4, 5, 1], dtype)
    q, r = (cls(a) // cls(b)).numpy(), (cls(a) % cls(b)).numpy()
    np.testing.assert_array_equal(q, np.fix(a.astype(np.float64) / b).astype(dtype))
    np.testing.assert_array_equal(r, np.fmod(a, b))
    np.testing.assert_array_equal(q * b + r, a)


@pytest.mark.parametrize("cls", [kl.Int32, kl.UInt32, kl.Int64, kl.UInt64])
def test_true_division_of_integers_raises_naming_floor_division(cls):
    x = cls([7, 8])
    for call in (lambda: x / x, lambda: x / 2, lambda: 2 / x, lambda: x / 2.0, lambda: x / np.array([1, 2])):
        with pytest.raises(TypeError, match=r"no true division; use // .*truncated toward zero"):
            call()
    np.testing.assert_array_equal((kl.Float(x) / 2).numpy(), [3.5, 4.0])


@pytest.mark.parametrize("cls, dtype", [(kl.Float, np.float32), (kl.Float64, np.float64)])
def test_float_floor_division_and_remainder_follow_python(cls, dtype, backend):
    """x // y rounds the quotient down and x % y takes the sign of y, as Python's and NumPy's."""
    a = np.array([7.5, -7.5, 7.5, -7.5, 6.0, -0.25, 1e3, 0.0], dtype)
    b = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 1.0, 0.7, 5.0], dtype)
    q, r = (cls(a) // cls(b)).numpy(), (cls(a) % cls(b)).numpy()
    np.testing.assert_array_equal(q, np.floor_divide(a, b))
    np.testing.assert_allclose(r, np.mod(a, b), rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(q * b + r, a, rtol=1e-6)
    np.testing.assert_array_equal((cls(a) // 2).numpy(), np.floor_divide(a, dtype(2)))
    np.testing.assert_allclose((10 % cls(b)).numpy(), np.mod(dtype(10), b), rtol=1e-6)
    assert [float(v) for v in (cls([-7.5]) // 2, cls([-7.5]) % 2)] == [-7.5 // 2, -7.5 % 2]


def test_float_remainder_is_differentiable():
    x = kl.Float([7.5, -1.25])
    kl.enable_grad(x)
    y = x % 2.0
    kl.backward(kl.sum(y))
    np.testing.assert_array_equal(kl.grad(x).numpy(), [1.0, 1.0])


@pytest.mark.parametrize("cls, dtype", [t for t in TYPES if kind(t[1]) == "i"], ids=IDS[1:5])
def test_integer_division_edge_cases(cls, dtype, backend):
    """Documented: x // 0 == 0, x % 0 == x, INT_MIN // -1 == INT_MIN, INT_MIN % -1 == 0."""
    info = np.iinfo(dtype)
    a = cls([5, info.max, info.min])
    np.testing.assert_array_equal((a // cls(0)).numpy(), [0, 0, 0])
    np.testing.assert_array_equal((a % cls(0)).numpy(), [5, info.max, info.min])
    if info.min < 0:
        m = cls([info.min, info.min])
        np.testing.assert_array_equal((m // cls([-1, -1])).numpy(), [info.min, info.min])
        np.testing.assert_array_equal((m % cls([-1, -1])).numpy(), [0, 0])


@pytest.mark.parametrize("cls, dtype", [t for t in TYPES if kind(t[1]) == "i"], ids=IDS[1:5])
def test_shift_by_at_least_the_width(cls, dtype, backend):
    """Documented: 0 for << and logical >>, the sign fill for arithmetic >>."""
    bits = 8 * np.dtype(dtype).itemsize
    x = cls([-8 if np.issubdtype(dtype, np.signedinteger) else 8, 8])
    counts = cls([bits, bits + 3])
    np.testing.assert_array_equal((x << counts).numpy(), [0, 0])
    fill = [-1, 0] if np.issubdtype(dtype, np.signedinteger) else [0, 0]
    np.testing.assert_array_equal((x >> counts).numpy(), fill)


# ---- unary operators and ** -------------------------------------------------------------------

UNARY = {"neg": (operator.neg, np.negative, "if"), "invert": (operator.invert, np.invert, "bi"),
         "abs": (abs, np.abs, "if"), "pos": (operator.pos, lambda a: a, "bif")}


@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
@pytest.mark.parametrize("op", UNARY)
def test_unary_operator(cls, dtype, op, backend):
    fn, ref, kinds = UNARY[op]
    a = sample(dtype, 20)
    if kind(dtype) not in kinds:
        with pytest.raises(TypeError):
            fn(cls(a))
        return
    with np.errstate(all="ignore"):
        assert_same(fn(cls(a)).numpy(), ref(a))
        assert_same(fn(cls(SCALARS[dtype])).numpy(), ref(np.array([SCALARS[dtype]], dtype)))


def ulp_error(actual, expected, dtype):
    expected = expected.astype(np.float64)
    _, e = np.frexp(expected)
    exponent = np.where(expected == 0, -10000, e - 1)
    ulp = np.ldexp(1.0, np.maximum(exponent, np.finfo(dtype).minexp) - np.finfo(dtype).nmant)
    return np.abs(actual.astype(np.float64) - expected) / ulp


@pytest.mark.parametrize("cls, dtype", TYPES[5:], ids=IDS[5:])
def test_pow_operator(cls, dtype):
    rng = np.random.default_rng(30)
    x = rng.uniform(0.01, 20, N).astype(dtype)
    y = rng.uniform(-6, 6, N).astype(dtype)
    tolerance = 1.5 if dtype == np.float32 else 2.5  # Kiln's bound, plus NumPy's own error for doubles
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    for actual, expected in [((cls(x) ** cls(y)).numpy(), x64**y64), ((cls(x) ** 2.5).numpy(), x64**2.5),
                             ((1.75 ** cls(y)).numpy(), 1.75**y64), ((cls(x) ** 2).numpy(), x64**2)]:
        assert actual.dtype == dtype
        assert ulp_error(actual, expected, dtype).max() <= tolerance


@pytest.mark.parametrize("cls, dtype", TYPES[:5], ids=IDS[:5])
def test_pow_operator_not_defined_for_bool_and_integers(cls, dtype):
    with pytest.raises(TypeError):
        cls(sample(dtype, 31)) ** cls(sample(dtype, 32))


@pytest.mark.parametrize("cls, dtype", [TYPES[i] for i in (1, 4, 5, 6)], ids=[IDS[i] for i in (1, 4, 5, 6)])
def test_large_arrays_and_no_contraction_into_fma(cls, dtype):
    a, b = sample(dtype, 70, 100_003), sample(dtype, 71, 100_003)
    with np.errstate(all="ignore"):
        assert_same((cls(a) * cls(b) - cls(a)).numpy(), a * b - a)  # two roundings, as written


# ---- broadcasting --------------------------------------------------------------------------

@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
def test_size_one_arrays_broadcast(cls, dtype):
    a, one = sample(dtype, 40), sample(dtype, 41, 1)
    fn = operator.xor if kind(dtype) == "b" else operator.sub
    with np.errstate(all="ignore"):
        assert_same(fn(cls(a), cls(one)).numpy(), fn(a, np.full(N, one[0], dtype)))
        assert_same(fn(cls(one), cls(a)).numpy(), fn(np.full(N, one[0], dtype), a))
    assert_same((cls(a) == cls(one)).numpy(), a == one[0])


@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
def test_other_size_mismatches_raise_size_error(cls, dtype):
    with pytest.raises(kl.SizeError) as info:
        cls(sample(dtype, 42, 3)) == cls(sample(dtype, 43, 4))
    assert isinstance(info.value, ValueError)


def test_different_array_types_do_not_mix():
    for a, b in [(kl.Float([1.0]), kl.Int32([1])), (kl.Int32([1]), kl.Int64([1])), (kl.UInt32([1]), kl.Bool([True]))]:
        with pytest.raises(TypeError):
            a + b
        with pytest.raises(TypeError):
            b < a


# ---- len, repr, indexing, slicing, setitem, iteration, bool, item -------------------------------

@pytest.mark.parametrize("value, text", [
    (kl.Float([1, 2]), "Float([1.0, 2.0])"), (kl.Int32([1, -2]), "Int32([1, -2])"),
    (kl.Bool([True, False]), "Bool([True, False])"), (kl.UInt64([2**64 - 1]), "UInt64([18446744073709551615])"),
    (kl.Float64([0.1, -0.0]), "Float64([0.1, -0.0])"), (kl.UInt32([]), "UInt32([])"),
    (kl.arange(kl.Int64, 25), "Int64([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ..., 15, 16, 17, 18, 19, 20, 21, 22, 23, 24], size=25)"),
])
def test_repr(value, text):
    assert repr(value) == text


@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
@pytest.mark.parametrize("n", [0, 1, 17])
def test_len_and_size(cls, dtype, n):
    x = cls(sample(dtype, 50, n)) if n else cls([])
    assert len(x) == n and x.size() == n
    assert len(kl.zeros(cls, n)) == n


@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
def test_indexing_reads_elements(cls, dtype):
    data = sample(dtype, 51)
    x = cls(data) + cls(data) if kind(dtype) != "b" else cls(data) ^ cls(True)  # a pending expression
    with np.errstate(all="ignore"):
        ref = (data + data) if kind(dtype) != "b" else ~data
        for i in (0, 1, 5, N - 1, -1, -N):
            assert x[i] == ref[i] or (np.isnan(ref[i]) and np.isnan(x[i]))
            assert type(x[i]) is type(ref[i].item())
    for i in (N, -N - 1, 10**6):
        with pytest.raises(IndexError):
            x[i]


SLICES = [slice(1, 7, 2), slice(None, None, -1), slice(5, 2), slice(-5, None), slice(None, None, 3),
          slice(30, 2, -4), slice(None, 1000), slice(-1000, 2)]


@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
@pytest.mark.parametrize("s", SLICES, ids=str)
def test_slicing_gives_new_arrays(cls, dtype, s):
    data = sample(dtype, 52)
    expected, x = data[s].copy(), cls(data)
    part = x[s]
    assert type(part) is cls
    if len(expected):
        x[int(np.arange(N)[s][0])] = data[2].item()  # a later write, before the slice is evaluated
    assert_same(part.numpy(), expected)
    assert_same(x[s].numpy()[1:], expected[1:])


@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
def test_setitem_writes_one_element(cls, dtype):
    data = sample(dtype, 53)
    x = cls(data.tolist())
    ref = data.copy()
    for i, j in [(3, 7), (-1, 0), (0, 8), (3, 9)]:  # program order: the last write to 3 wins
        x[i] = data[j].item()
        ref[i] = data[j]
    assert_same(x.numpy(), ref)
    for i in (N, -N - 1):
        with pytest.raises(IndexError):
            x[i] = data[0].item()


@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
def test_iteration(cls, dtype):
    data = sample(dtype, 54, 19)
    values = list(cls(data))
    assert len(values) == 19
    np.testing.assert_array_equal(np.array(values, dtype), data)
    assert list(cls([])) == []


@pytest.mark.parametrize("cls, dtype", TYPES, ids=IDS)
def test_bool_and_item(cls, dtype):
    zero, one = dtype(0).item(), dtype(1).item()
    assert bool(cls(one)) is True and bool(cls(zero)) is False
    assert bool(cls([one])) is True
    assert cls([one]).item() == one and cls(SCALARS[dtype]).item() == dtype(SCALARS[dtype])
    pair = cls([one, zero])
    with pytest.raises(ValueError):
        bool(pair)
    with pytest.raises(kl.SizeError):
        pair.item()
    with pytest.raises(kl.SizeError):
        cls([]).item()
