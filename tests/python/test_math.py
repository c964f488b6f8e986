"""Elementwise functions (rounding, min/max, fma, select, tests, the math library) against NumPy and math."""

import math
from fractions import Fraction

import numpy as np
import pytest

import kiln as kl

FLOATS = [(kl.Float, np.float32), (kl.Float64, np.float64)]
FLOAT_IDS = ["Float", "Float64"]
INTS = [(kl.Int32, np.int32), (kl.UInt32, np.uint32), (kl.Int64, np.int64), (kl.UInt64, np.uint64)]
INT_IDS = ["Int32", "UInt32", "Int64", "UInt64"]
LD = np.longdouble  # x86 extended precision: the reference for doubles, as in docs/math.md
SPECIAL = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -3.0]


def bits_of(x):
    return x.view({4: np.uint32, 8: np.uint64}[x.itemsize])


def assert_same(actual, expected):
    """Bit-identical floats, except that any NaN matches any NaN."""
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(actual), nan)
    np.testing.assert_array_equal(bits_of(actual[~nan]), bits_of(expected[~nan]))


def ulp_error(actual, reference, dtype):
    """|actual - reference| in ulps of `dtype` at the (unrounded) reference, as docs/math.md measures it."""
    info = np.finfo(dtype)
    a, r = actual.astype(LD), np.asarray(reference, dtype=LD)
    err = np.zeros(len(r), dtype=LD)
    nan_a, nan_r = np.isnan(a), np.isnan(r)
    err[nan_a != nan_r] = np.inf
    ok = ~nan_a & ~nan_r
    r = np.where(ok & np.isfinite(a) & (np.abs(r) > LD(info.max)), np.sign(r) * LD(info.max), r)  # overflow
    infinite = ok & (np.isinf(a) | np.isinf(r))
    err[infinite] = np.where(a[infinite] == r[infinite], 0, np.inf)
    finite = ok & ~infinite
    _, e = np.frexp(r[finite])
    exponent = np.where(r[finite] == 0, info.minexp, np.maximum(e - 1, info.minexp))
    err[finite] = np.abs(a[finite] - r[finite]) / np.ldexp(LD(1), exponent - info.nmant)
    return err


def sweep(rng, lo, hi, n=1500):
    return rng.uniform(lo, hi, n)


def log_sweep(rng, lo, hi, n=1500, signed=True):
    x = np.exp(rng.uniform(math.log(lo), math.log(hi), n))
    return x * rng.choice([-1.0, 1.0], n) if signed else x


def inputs(rng, parts):
    """Concatenated sweeps: ("lin", lo, hi) uniform, ("log", lo, hi) log-uniform magnitudes of both signs,
    ("pos", lo, hi) positive log-uniform, ("near1",) [-1, 1] and +-(1 - d) for d down to 1e-7."""
    out = []
    for kind, *args in parts:
        if kind == "near1":
            d = log_sweep(rng, 1e-7, 0.5, n=800, signed=False)
            out += [sweep(rng, -1, 1), 1 - d, d - 1]
        else:
            out.append(log_sweep(rng, *args, signed=False) if kind == "pos" else
                       {"lin": sweep, "log": log_sweep}[kind](rng, *args))
    return np.concatenate(out)


def erfinv_reference(x):
    """Newton's method on erf (erfc near +-1), in double: far more accurate than a float."""
    out = []
    for v in np.asarray(x, dtype=np.float64).tolist():
        if math.isnan(v) or abs(v) > 1:
            out.append(math.nan)
        elif abs(v) == 1 or v == 0:
            out.append(math.copysign(math.inf, v) if v else v)
        else:
            a = abs(v)
            y = math.sqrt(-math.log((1 - a) * (1 + a)))  # a starting value
            for _ in range(60):
                residual = (math.erf(y) - a) if a < 0.5 else ((1 - a) - math.erfc(y))
                step = residual / (2 / math.sqrt(math.pi) * math.exp(-y * y))
                y -= step
                if abs(step) <= 1e-17 * abs(y):
                    break
            out.append(math.copysign(y, v))
    return np.array(out, dtype=LD)


def ld(f):
    return lambda *xs: f(*(np.asarray(x, dtype=LD) for x in xs))


def erf_reference(x):
    return np.array([math.erf(v) for v in np.asarray(x, np.float64).tolist()], dtype=LD)


TRIG = [("lin", -10, 10), ("log", 1e-30, 5e5)], [("lin", -10, 10), ("log", 1e-30, 1e14)]
HYPERBOLIC = [("lin", -1.5, 1.5), ("lin", -85, 85)]
# name: (Kiln function, reference, ulp bound (docs/math.md "asserted", float / double), odd,
#        float inputs, double inputs (None: the same))
FUNCTIONS = {
    "exp": (kl.exp, ld(np.exp), (1, 1), False, [("lin", -87, 88)], [("lin", -708, 709)]),
    "exp2": (kl.exp2, ld(np.exp2), (1, 1), False, [("lin", -149, 127)], [("lin", -1074, 1023)]),
    "log": (kl.log, ld(np.log), (1, 1), False, [("pos", 1e-44, 3e38)], [("pos", 1e-320, 1e308)]),
    "log2": (kl.log2, ld(np.log2), (1.5, 1.5), False, [("pos", 1e-44, 3e38)], [("pos", 1e-320, 1e308)]),
    "sinh": (kl.sinh, ld(np.sinh), (2, 2), True, HYPERBOLIC, None),
    "cosh": (kl.cosh, ld(np.cosh), (1.5, 1.5), False, HYPERBOLIC, None),
    "tanh": (kl.tanh, ld(np.tanh), (2, 2), True, [("lin", -1, 1), ("lin", -22, 22), ("log", 1e-30, 1e3)], None),
    "erf": (kl.erf, erf_reference, (1.5, 1.5), True, [("lin", -1, 1), ("lin", -6.5, 6.5), ("log", 1e-30, 100)], None),
    "erfinv": (kl.erfinv, erfinv_reference, (3, 3), True, [("near1",), ("log", 1e-30, 1)], None),
    "cbrt": (kl.cbrt, ld(np.cbrt), (1, 1), True, [("log", 1e-44, 3e38)], [("log", 1e-320, 1e308)]),
    "sin": (kl.sin, ld(np.sin), (1, 1), True, *TRIG),
    "cos": (kl.cos, ld(np.cos), (1, 1), False, *TRIG),
    "tan": (kl.tan, ld(np.tan), (2.5, 2.5), True, *TRIG),
    "asin": (kl.asin, ld(np.arcsin), (1, 1), True, [("near1",)], None),
    "acos": (kl.acos, ld(np.arccos), (1.5, 1.5), False, [("near1",)], None),
    "atan": (kl.atan, ld(np.arctan), (2, 2), True, [("lin", -3, 3), ("log", 1e-30, 1e30)], None),
}
BINARY = {  # name: (Kiln function, reference, bound, inputs(rng) -> (a, b))
    "atan2": (kl.atan2, ld(np.arctan2), (2, 2),
              lambda g: (np.concatenate([log_sweep(g, 1e-30, 1e30), sweep(g, -10, 10)]),
                         np.concatenate([log_sweep(g, 1e-30, 1e30), sweep(g, -10, 10)]))),
    "pow": (kl.pow, ld(np.power), (1.5, 1.5),  # x in [1e-3, 1e3] and [0.5, 2]; negative x with integer y
            lambda g: (np.concatenate([log_sweep(g, 1e-3, 1e3, signed=False), sweep(g, 0.5, 2),
                                       -np.round(sweep(g, 1, 30, 300))]),
                       np.concatenate([sweep(g, -12, 12), sweep(g, -60, 60), np.round(sweep(g, -20, 20, 300))]))),
}


def tolerance(bounds, dtype, name):
    """Kiln's asserted bound; for doubles plus the reference's own error where it is a double."""
    bound = bounds[dtype == np.float64]
    if dtype == np.float64 and name in ("erf", "erfinv"):
        bound += 2.0
    return bound + 1e-3


@pytest.mark.parametrize("cls, dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_math_function_accuracy(cls, dtype, name):
    fn, ref, bounds, _, float_inputs, double_inputs = FUNCTIONS[name]
    parts = float_inputs if dtype == np.float32 or double_inputs is None else double_inputs
    x = np.concatenate([inputs(np.random.default_rng(len(name)), parts), SPECIAL]).astype(dtype)
    actual = fn(cls(x)).numpy()
    assert actual.dtype == dtype
    with np.errstate(all="ignore"):
        err = ulp_error(actual, ref(x), dtype)
    worst = int(np.argmax(err))
    assert err[worst] <= tolerance(bounds, dtype, name), f"{name}({x[worst]!r}) = {actual[worst]!r}: {err[worst]} ulp"


@pytest.mark.parametrize("cls, dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("name", BINARY)
def test_binary_math_function_accuracy(cls, dtype, name):
    fn, ref, bounds, make = BINARY[name]
    a, b = make(np.random.default_rng(7))
    special = np.array(np.meshgrid(SPECIAL, SPECIAL)).reshape(2, -1)
    a, b = np.concatenate([a, special[0]]).astype(dtype), np.concatenate([b, special[1]]).astype(dtype)
    actual = fn(cls(a), cls(b)).numpy()
    with np.errstate(all="ignore"):
        err = ulp_error(actual, ref(a, b), dtype)
    worst = int(np.argmax(err))
    assert err[worst] <= tolerance(bounds, dtype, name), \
        f"{name}({a[worst]!r}, {b[worst]!r}) = {actual[worst]!r}: {err[worst]} ulp"


@pytest.mark.parametrize("cls, dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("name", [n for n, f in FUNCTIONS.items() if f[3]])
def test_odd_functions_keep_the_sign_of_zero(cls, dtype, name):
    result = FUNCTIONS[name][0](cls([0.0, -0.0])).numpy()
    np.testing.assert_array_equal(result, [0.0, 0.0])
    np.testing.assert_array_equal(np.signbit(result), [False, True])


@pytest.mark.parametrize("cls, dtype", FLOATS, ids=FLOAT_IDS)
def test_log2_of_powers_of_two_is_exact(cls, dtype):
    k = np.arange(np.finfo(dtype).minexp - np.finfo(dtype).nmant, np.finfo(dtype).maxexp)
    x = np.ldexp(np.ones(len(k), dtype), k)
    np.testing.assert_array_equal(kl.log2(cls(x)).numpy(), k.astype(dtype))


@pytest.mark.parametrize("cls, dtype", FLOATS, ids=FLOAT_IDS)
def test_sincos_is_sin_and_cos(cls, dtype):
    x = cls(np.linspace(-1000, 1000, 777, dtype=dtype))
    s, c = kl.sincos(x)
    assert_same(s.numpy(), kl.sin(x).numpy())
    assert_same(c.numpy(), kl.cos(x).numpy())


ALL_MATH = {**{n: f[0] for n, f in FUNCTIONS.items()}, "atan2": kl.atan2, "pow": kl.pow}


@pytest.mark.parametrize("cls, dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("name", ALL_MATH)
def test_llvm_interpreter_and_constant_folding_agree_bit_for_bit(cls, dtype, name):
    fn = ALL_MATH[name]
    x = np.array([0.3, -0.7, 2.5, 1e-3, 0.999, -4.25, 100.0, math.inf, 0.0, -0.0], dtype=dtype)
    y = np.array([1.5, 2.0, -0.5, 3.0, 0.25, -1.0, 0.5, 2.0, -1.0, 1.0], dtype=dtype)
    args = (x, y) if name in ("atan2", "pow") else (x,)
    compiled = fn(*(cls(a) for a in args)).numpy()
    kl.set_flag(kl.Flag.Interpreter, True)
    assert_same(fn(*(cls(a) for a in args)).numpy(), compiled)
    folded = [fn(*(cls(a[i].item()) for a in args)).item() for i in range(len(x))]  # size-1 literals
    assert_same(np.array(folded, dtype=dtype), compiled)


# ---- abs, sqrt, rcp, rsqrt, rounding ----------------------------------------------------------------

def basic_inputs(dtype):
    rng = np.random.default_rng(3)
    halves = np.arange(-8, 8) + 0.5
    info = np.finfo(dtype)
    edge = [info.max, -info.max, info.tiny, info.smallest_subnormal, -info.smallest_subnormal,
            2.0 ** (info.nmant - 1) + 0.5, -(2.0 ** (info.nmant - 1)) - 1.5, 2.0 ** (info.nmant + 1), -0.49999997]
    return np.concatenate([rng.standard_normal(200) * 100, halves, edge, SPECIAL]).astype(dtype)


EXACT = {"abs": (kl.abs, np.abs), "sqrt": (kl.sqrt, np.sqrt), "rcp": (kl.rcp, lambda x: x.dtype.type(1) / x),
         "rsqrt": (kl.rsqrt, lambda x: x.dtype.type(1) / np.sqrt(x)), "floor": (kl.floor, np.floor),
         "ceil": (kl.ceil, np.ceil), "round": (kl.round, np.rint), "trunc": (kl.trunc, np.trunc)}


@pytest.mark.parametrize("cls, dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("name", EXACT)
@pytest.mark.parametrize("backend", ["llvm", "interpreter"])
def test_correctly_rounded_and_rounding_functions(cls, dtype, name, backend):
    kl.set_flag(kl.Flag.Interpreter, backend == "interpreter")
    fn, ref = EXACT[name]
    x = basic_inputs(dtype)
    with np.errstate(all="ignore"):
        assert_same(fn(cls(x)).numpy(), ref(x))


@pytest.mark.parametrize("cls, dtype", FLOATS, ids=FLOAT_IDS)
def test_round_is_half_to_even(cls, dtype):
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 4.5], dtype)
    np.testing.assert_array_equal(kl.round(cls(x)).numpy(), [0, 2, 2, -0, -2, -2, 4, 4])


def test_float_only_functions_reject_integers_and_bool():
    for name in ("sqrt", "rcp", "rsqrt", "floor", "ceil", "round", "trunc", "exp", "sin", "isnan"):
        for x in (kl.Int32([4]), kl.UInt64([4]), kl.Bool([True])):
            with pytest.raises(TypeError):
                getattr(kl, name)(x)
    for name in ("abs", "min", "max"):
        with pytest.raises(TypeError):
            getattr(kl, name)(*([kl.Bool([True, False])] * (1 if name == "abs" else 2)))


# ---- min, max, fma, select, floating-point tests ----------------------------------------------------

@pytest.mark.parametrize("cls, dtype", FLOATS, ids=FLOAT_IDS)
def test_float_min_max(cls, dtype):
    """Documented: min(a, b) = (a < b or isnan(b)) ? a : b, so NaN operands are ignored and ties keep b."""
    x = basic_inputs(dtype)
    y = np.roll(x, 7)
    a = np.concatenate([x, [0.0, -0.0, np.nan, 1.0, np.nan]]).astype(dtype)
    b = np.concatenate([y, [-0.0, 0.0, 1.0, np.nan, np.nan]]).astype(dtype)
    with np.errstate(invalid="ignore"):
        assert_same(kl.min(cls(a), cls(b)).numpy(), np.where((a < b) | np.isnan(b), a, b))
        assert_same(kl.max(cls(a), cls(b)).numpy(), np.where((a > b) | np.isnan(b), a, b))
    assert_same(kl.min(cls(a), 0.5).numpy(), np.where((a < 0.5), a, dtype(0.5)).astype(dtype))


def round_fraction(value, dtype):
    """The correctly rounded (to nearest, ties to even) `dtype` value of an exact Fraction."""
    guess = dtype(float(value))
    candidates = [np.nextafter(guess, dtype(-np.inf)), guess, np.nextafter(guess, dtype(np.inf))]
    return min(candidates, key=lambda c: (abs(Fraction(float(c)) - value), int(bits_of(np.array([c]))[0]) & 1))


@pytest.mark.parametrize("cls, dtype", FLOATS, ids=FLOAT_IDS)
def test_fma_rounds_once(cls, dtype):
    rng = np.random.default_rng(11)
    a, b, c = (rng.standard_normal(300).astype(dtype) * dtype(s) for s in (10, 3, 30))
    tiny = 2.0 ** (-13 if dtype == np.float32 else -30)
    a, b, c = (np.append(v, [w]).astype(dtype) for v, w in ((a, 1 + tiny), (b, 1 - tiny), (c, -1.0)))
    expected = np.array([round_fraction(Fraction(float(p)) * Fraction(float(q)) + Fraction(float(r)), dtype)
                         for p, q, r in zip(a, b, c)], dtype=dtype)
    assert expected[-1] == -tiny * tiny and (a[-1] * b[-1] + c[-1]) == 0  # unfused gives 0
    assert_same(kl.fma(cls(a), cls(b), cls(c)).numpy(), expected)


@pytest.mark.parametrize("cls, dtype", FLOATS, ids=FLOAT_IDS)
def test_isnan_isinf_isfinite(cls, dtype):
    x = basic_inputs(dtype)
    for fn, ref in ((kl.isnan, np.isnan), (kl.isinf, np.isinf), (kl.isfinite, np.isfinite)):
        result = fn(cls(x))
        assert type(result) is kl.Bool
        np.testing.assert_array_equal(result.numpy(), ref(x))


@pytest.mark.parametrize("cls, dtype", FLOATS + INTS + [(kl.Bool, np.bool_)], ids=FLOAT_IDS + INT_IDS + ["Bool"])
def test_select(cls, dtype):
    rng = np.random.default_rng(5)
    mask = rng.integers(0, 2, 45).astype(bool)
    t, f = (rng.integers(0, 2, 45).astype(dtype), rng.integers(0, 2, 45).astype(dtype)) if dtype == np.bool_ else \
        (rng.integers(0, 100, 45).astype(dtype), rng.integers(100, 200, 45).astype(dtype))
    np.testing.assert_array_equal(kl.select(kl.Bool(mask), cls(t), cls(f)).numpy(), np.where(mask, t, f))
    scalar = dtype(1).item()
    np.testing.assert_array_equal(kl.select(kl.Bool(mask), cls(t), scalar).numpy(), np.where(mask, t, dtype(1)))
    np.testing.assert_array_equal(kl.select(kl.Bool(mask), scalar, cls(f)).numpy(), np.where(mask, dtype(1), f))
    np.testing.assert_array_equal(kl.select(kl.Bool(True), cls(t), cls(f)).numpy(), t)  # a broadcast mask
    with pytest.raises(TypeError):
        kl.select(cls(t) if dtype != np.bool_ else kl.Int32([1] * 45), cls(t), cls(f))


# ---- integer abs, min, max, fma ---------------------------------------------------------------

def int_inputs(dtype, seed):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    x = rng.integers(info.min, info.max, 200, dtype=dtype, endpoint=True)
    return np.concatenate([x, np.array([info.min, info.max, 0, 1, info.min + 1], dtype=dtype),
                           rng.integers(max(info.min, -50), 50, 40).astype(dtype)])


@pytest.mark.parametrize("cls, dtype", INTS, ids=INT_IDS)
def test_integer_abs_min_max_fma(cls, dtype):
    a, b, c = int_inputs(dtype, 1), int_inputs(dtype, 2), int_inputs(dtype, 3)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(kl.abs(cls(a)).numpy(), np.abs(a))  # abs(INT_MIN) wraps to INT_MIN
        np.testing.assert_array_equal(kl.min(cls(a), cls(b)).numpy(), np.minimum(a, b))
        np.testing.assert_array_equal(kl.max(cls(a), cls(b)).numpy(), np.maximum(a, b))
        np.testing.assert_array_equal(kl.fma(cls(a), cls(b), cls(c)).numpy(), a * b + c)
    assert kl.abs(cls(a)).numpy().dtype == dtype
    np.testing.assert_array_equal(kl.max(cls(a), 3).numpy(), np.maximum(a, dtype(3)))
