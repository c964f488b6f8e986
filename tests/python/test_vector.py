"""Vectors of arrays (kl.Array2f ... kl.Array3f64) against the same algebra in NumPy."""

import operator

import numpy as np
import pytest

import kiln as kl

LANES = 37  # not a multiple of any packet width

# (vector type, components, component array type, NumPy dtype)
SPECS = [
    pytest.param((kl.Array2f, 2, kl.Float, np.float32), id="Array2f"),
    pytest.param((kl.Array3f, 3, kl.Float, np.float32), id="Array3f"),
    pytest.param((kl.Array4f, 4, kl.Float, np.float32), id="Array4f"),
    pytest.param((kl.Array2u, 2, kl.UInt32, np.uint32), id="Array2u"),
    pytest.param((kl.Array3u, 3, kl.UInt32, np.uint32), id="Array3u"),
    pytest.param((kl.Array2i, 2, kl.Int32, np.int32), id="Array2i"),
    pytest.param((kl.Array3i, 3, kl.Int32, np.int32), id="Array3i"),
    pytest.param((kl.Array3f64, 3, kl.Float64, np.float64), id="Array3f64"),
]
FLOAT_SPECS = [p for p in SPECS if np.issubdtype(p.values[0][3], np.floating)]
THREE_SPECS = [p for p in SPECS if p.values[0][1] == 3]
NAMES = "xyzw"


def is_float(dtype):
    return np.issubdtype(dtype, np.floating)


def scalar(dtype, value):
    """A Python scalar of the kind the component type takes."""
    return float(value) if is_float(dtype) else int(value)


def host(spec, seed, lo=1, hi=50, n=LANES):
    """Random (n, N) host values: floats in [lo, hi), integers in [lo, hi)."""
    _, size, _, dtype = spec
    gen = np.random.default_rng(seed)
    if is_float(dtype):
        return gen.uniform(lo, hi, (n, size)).astype(dtype)
    return gen.integers(lo, hi, (n, size)).astype(dtype)


def column(spec, values):
    """A component array holding a copy of 1-D host values."""
    return spec[2](np.ascontiguousarray(values, dtype=spec[3]))


def vector(spec, values):
    """A vector built component by component from (n, N) host values."""
    return spec[0](*[column(spec, values[:, j]) for j in range(spec[1])])


def check(got, expected, dtype):
    got = np.asarray(got.numpy())
    assert got.dtype == dtype
    expected = np.asarray(expected)
    assert got.shape == expected.shape
    if is_float(dtype):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, expected.astype(dtype))


@pytest.mark.parametrize("spec", SPECS)
def test_construct_from_component_arrays(spec):
    values = host(spec, 1)
    v = vector(spec, values)
    check(v, values, spec[3])
    assert v.size() == LANES


@pytest.mark.parametrize("spec", SPECS)
def test_construct_from_scalars_and_broadcast_value(spec):
    cls, size, comp, dtype = spec
    from_scalars = cls(*[scalar(dtype, j + 2) for j in range(size)])
    check(from_scalars, [[j + 2 for j in range(size)]], dtype)
    check(cls(comp(scalar(dtype, 5))), [[5] * size], dtype)
    check(cls(scalar(dtype, 6)), [[6] * size], dtype)  # a Python scalar converts implicitly
    lanes = column(spec, np.arange(4) + 1)
    check(cls(lanes), np.repeat((np.arange(4) + 1)[:, None], size, axis=1), dtype)
    copy = cls(from_scalars)
    check(copy, [[j + 2 for j in range(size)]], dtype)


@pytest.mark.parametrize("spec", SPECS)
def test_components_by_name_and_index(spec):
    cls, size, comp, dtype = spec
    values = host(spec, 2)
    v = vector(spec, values)
    for j in range(size):
        np.testing.assert_array_equal(getattr(v, NAMES[j]).numpy(), values[:, j])
        np.testing.assert_array_equal(v[j].numpy(), values[:, j])
        np.testing.assert_array_equal(v[j - size].numpy(), values[:, j])
        assert isinstance(v[j], comp)
    if size < 4:
        assert not hasattr(v, NAMES[size])
    setattr(v, NAMES[0], column(spec, np.full(LANES, 9)))
    v[size - 1] = comp(scalar(dtype, 7))
    v[1] = scalar(dtype, 8)  # implicit conversion of a Python scalar
    expected = values.copy()
    expected[:, 0], expected[:, size - 1], expected[:, 1] = 9, 7, 8
    check(v, expected, dtype)
    with pytest.raises(IndexError):
        v[size]
    with pytest.raises(IndexError):
        v[-size - 1] = comp(scalar(dtype, 1))


@pytest.mark.parametrize("spec", SPECS)
def test_len_is_components_and_size_is_lanes(spec):
    cls, size, comp, dtype = spec
    v = cls(*([column(spec, np.arange(10))] + [comp(scalar(dtype, 1))] * (size - 1)))
    assert len(v) == size
    assert v.size() == 10
    assert cls(scalar(dtype, 3)).size() == 1
    assert cls().size() == 0
    assert len(cls()) == size
    # numpy() broadcasts the size-1 components to every lane.
    expected = np.ones((10, size))
    expected[:, 0] = np.arange(10)
    check(v, expected, dtype)


def integer_divide(a, b):
    return np.floor_divide(a, b)  # operands are positive here: the same as C's truncation


# op: (Kiln operator for floats, for integers, NumPy reference for floats, for integers)
OPS = {
    "+": (operator.add, operator.add, np.add, np.add),
    "-": (operator.sub, operator.sub, np.subtract, np.subtract),
    "*": (operator.mul, operator.mul, np.multiply, np.multiply),
    "/": (operator.truediv, operator.floordiv, np.true_divide, integer_divide),  # integers: // (truncating)
}


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("op", list(OPS))
def test_arithmetic_with_vectors_arrays_and_scalars(spec, op):
    _, size, _, dtype = spec
    float_kiln_op, int_kiln_op, float_op, int_op = OPS[op]
    kiln_op = float_kiln_op if is_float(dtype) else int_kiln_op
    host_op = float_op if is_float(dtype) else int_op
    a, b = host(spec, 3), host(spec, 4)
    s = host(spec, 5)[:, :1]  # one value per lane
    k = scalar(dtype, 3)
    va, vb, vs = vector(spec, a), vector(spec, b), column(spec, s[:, 0])
    check(kiln_op(va, vb), host_op(a, b), dtype)
    check(kiln_op(va, vs), host_op(a, s), dtype)
    check(kiln_op(vs, va), host_op(s, a), dtype)
    check(kiln_op(va, k), host_op(a, dtype(k)), dtype)
    check(kiln_op(k, va), host_op(dtype(k), a), dtype)


def test_integer_vector_division_truncates_towards_zero():
    check(kl.Array3i(7, -7, 9) // 2, [[3, -3, 4]], np.int32)
    check(kl.Array2u(7, 8) // kl.Array2u(2, 3), [[3, 2]], np.uint32)
    check(14 // kl.Array2u(7, 8), [[2, 1]], np.uint32)
    for call in (lambda: kl.Array3i(7, -7, 9) / 2, lambda: kl.Int32(2) / kl.Array3i(1, 2, 3)):
        with pytest.raises(TypeError, match="no true division; use //"):
            call()


@pytest.mark.parametrize("spec", SPECS)
def test_unary_minus_and_abs(spec):
    _, _, _, dtype = spec
    lo = 0 if dtype == np.uint32 else -50
    a = host(spec, 6, lo=lo)
    v = vector(spec, a)
    check(-v, np.negative(a), dtype)  # unsigned components wrap around
    check(abs(v), np.abs(a), dtype)
    check(kl.abs(v), np.abs(a), dtype)


@pytest.mark.parametrize("spec", SPECS)
def test_min_max_fma_select(spec):
    _, _, _, dtype = spec
    a, b, c = host(spec, 7), host(spec, 8), host(spec, 9)
    va, vb, vc = vector(spec, a), vector(spec, b), vector(spec, c)
    check(kl.min(va, vb), np.minimum(a, b), dtype)
    check(kl.max(va, vb), np.maximum(a, b), dtype)
    check(kl.fma(va, vb, vc), a * b + c, dtype)
    mask = va.x < vb.x
    check(kl.select(mask, va, vb), np.where((a[:, 0] < b[:, 0])[:, None], a, b), dtype)


@pytest.mark.parametrize("spec", SPECS)
def test_dot_and_squared_norm(spec):
    _, _, comp, dtype = spec
    a, b = host(spec, 10), host(spec, 11)
    va, vb = vector(spec, a), vector(spec, b)
    d = kl.dot(va, vb)
    assert isinstance(d, comp)
    check(d, np.sum(a * b, axis=1), dtype)
    check(kl.squared_norm(va), np.sum(a * a, axis=1), dtype)


@pytest.mark.parametrize("spec", FLOAT_SPECS)
def test_norm_and_normalize(spec):
    _, size, _, dtype = spec
    a = host(spec, 12, lo=-1, hi=1)
    va = vector(spec, a)
    length = np.sqrt(np.sum(a.astype(np.float64) ** 2, axis=1))
    check(kl.norm(va), length, dtype)
    n = kl.normalize(va)
    check(n, a / length[:, None], dtype)
    check(kl.norm(n), np.ones(LANES), dtype)
    zero = kl.normalize(spec[0](scalar(dtype, 0)))
    assert np.all(np.isnan(zero.numpy()))


@pytest.mark.parametrize("spec", THREE_SPECS)
def test_cross(spec):
    _, _, _, dtype = spec
    a, b = host(spec, 13, hi=20), host(spec, 14, hi=20)
    va, vb = vector(spec, a), vector(spec, b)
    expected = np.stack([a[:, (j + 1) % 3] * b[:, (j + 2) % 3] - a[:, (j + 2) % 3] * b[:, (j + 1) % 3]
                         for j in range(3)], axis=1)  # uint32 wraps in NumPy as in Kiln
    c = kl.cross(va, vb)
    check(c, expected, dtype)
    if dtype != np.uint32:  # perpendicular (up to rounding of products near 20^3)
        np.testing.assert_allclose(kl.dot(c, va).numpy(), 0, atol=8 * 20**3 * np.finfo(dtype).eps if is_float(dtype) else 0)
    check(kl.cross(spec[0](1, 0, 0), spec[0](0, 1, 0)), [[0, 0, 1]], dtype)


@pytest.mark.parametrize("spec", SPECS)
def test_gather_whole_vectors(spec):
    cls, size, comp, dtype = spec
    count = 11
    flat_host = host(spec, 15, n=count).reshape(-1)
    flat = column(spec, flat_host)
    index_host = (np.arange(LANES) * 7 + 3) % count
    index = kl.UInt32(index_host.astype(np.uint32))
    g = kl.gather(cls, flat, index)
    assert isinstance(g, cls)
    check(g, flat_host.reshape(count, size)[index_host], dtype)
    even = (kl.arange(kl.UInt32, LANES) & 1) == 0
    expected = flat_host.reshape(count, size)[index_host].copy()
    expected[1::2] = 0
    check(kl.gather(cls, flat, index, even), expected, dtype)


@pytest.mark.parametrize("spec", SPECS)
def test_scatter_whole_vectors(spec):
    cls, size, comp, dtype = spec
    count = 13
    values = host(spec, 16, n=count)
    target = kl.zeros(comp, size * count)
    slots = (count - 1 - np.arange(count)).astype(np.uint32)
    kl.scatter(target, vector(spec, values), kl.UInt32(slots))
    expected = np.zeros((count, size), dtype)
    expected[slots] = values
    check(target, expected.reshape(-1), dtype)

    masked = kl.zeros(comp, size * count)
    keep = kl.Bool(np.arange(count) % 3 == 0)
    kl.scatter(masked, vector(spec, values), kl.UInt32(slots), keep)
    expected = np.zeros((count, size), dtype)
    expected[slots[::3]] = values[::3]
    check(masked, expected.reshape(-1), dtype)


@pytest.mark.parametrize("spec", SPECS)
def test_scatter_add_whole_vectors(spec):
    cls, size, comp, dtype = spec
    values = host(spec, 17, hi=20)  # small integers (also as floats): exact sums
    if is_float(dtype):
        values = np.round(values)
    slots = (np.arange(LANES) % 3 == 0).astype(np.uint32)  # conflicts on slots 0 and 1
    target = kl.zeros(comp, size * 4)
    kl.scatter_add(target, vector(spec, values), kl.UInt32(slots))
    expected = np.zeros((4, size), dtype)
    np.add.at(expected, slots, values)
    check(target, expected.reshape(-1), dtype)

    active = np.arange(LANES) < 5
    masked = kl.zeros(comp, size * 4)
    kl.scatter_add(masked, vector(spec, values), kl.UInt32(slots), kl.Bool(active))
    expected = np.zeros((4, size), dtype)
    np.add.at(expected, slots[active], values[active])
    check(masked, expected.reshape(-1), dtype)


@pytest.mark.parametrize("spec", SPECS)
def test_checked_mode_catches_a_vector_past_the_end(spec):
    cls, size, comp, dtype = spec
    kl.set_flag(kl.Flag.Checks, True)  # conftest restores it
    flat = column(spec, np.arange(2 * size + 1))  # two whole vectors and one stray element
    np.testing.assert_array_equal(kl.gather(cls, flat, kl.UInt32([1, 0])).numpy()[0], np.arange(size) + size)
    with pytest.raises(IndexError, match="out of range"):
        kl.gather(cls, flat, kl.UInt32([2])).numpy()
    masked = kl.gather(cls, flat, kl.UInt32([0, 2]), kl.Bool([True, False]))  # masked lanes are not checked
    np.testing.assert_array_equal(masked.numpy()[1], np.zeros(size))
    target = kl.zeros(comp, 2 * size + 1)
    kl.scatter(target, cls(scalar(dtype, 1)), kl.UInt32([2]))
    with pytest.raises(IndexError, match="out of range"):
        kl.eval(target)


DTYPES = {kl.Array2f: np.float32, kl.Array3f: np.float32, kl.Array2u: np.uint32, kl.Array3u: np.uint32,
          kl.Array2i: np.int32, kl.Array3i: np.int32, kl.Array3f64: np.float64}
CASTS = [(kl.Array3i, kl.Array3f), (kl.Array3i, kl.Array3u), (kl.Array3i, kl.Array3f64), (kl.Array3f, kl.Array3i),
         (kl.Array3f, kl.Array3u), (kl.Array3f, kl.Array3f64), (kl.Array3u, kl.Array3f), (kl.Array3f64, kl.Array3i),
         (kl.Array2f, kl.Array2u), (kl.Array2i, kl.Array2f), (kl.Array2u, kl.Array2i)]


@pytest.mark.parametrize("to, source", CASTS, ids=lambda t: t.__name__)
def test_cast_between_vector_types(to, source):
    values = (np.arange(12 * len(source())).reshape(-1, len(source())) * 1.5 + 0.25).astype(DTYPES[source])
    got = kl.cast(to, source(values))
    assert isinstance(got, to)
    check(got, values.astype(DTYPES[to]), DTYPES[to])  # float to integer truncates


def test_cast_float_to_int_truncates_towards_zero():
    check(kl.cast(kl.Array3i, kl.Array3f(1.7, -2.7, 3.2)), [[1, -2, 3]], np.int32)
    check(kl.cast(kl.Array3i, kl.Array3f64(-0.5, 2.999, -1e3)), [[0, 2, -1000]], np.int32)


@pytest.mark.parametrize("spec", SPECS)
def test_numpy_shape_dtype_and_values(spec):
    cls, size, _, dtype = spec
    values = host(spec, 18)
    out = vector(spec, values).numpy()
    assert isinstance(out, np.ndarray)
    assert out.shape == (LANES, size)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, values)
    np.testing.assert_array_equal(np.asarray(vector(spec, values)), values)


@pytest.mark.parametrize("spec", SPECS)
def test_construct_from_numpy(spec):
    cls, size, _, dtype = spec
    values = host(spec, 19)
    v = cls(values)
    assert v.size() == LANES
    for j in range(size):
        np.testing.assert_array_equal(v[j].numpy(), values[:, j])
    check(v * scalar(dtype, 2), values * dtype(2), dtype)
    readonly = values.copy()
    readonly.setflags(write=False)
    check(cls(readonly), values, dtype)
    check(cls(np.asfortranarray(values)), values, dtype)  # converted (a copy)
    if is_float(dtype):
        check(cls(values.astype(np.float64 if dtype != np.float64 else np.float32)), values, dtype)
    else:  # integers: another integer dtype converts when every element fits; floats do not
        check(cls(values.astype(np.int64)), values, dtype)
        with pytest.raises(TypeError, match="can change values"):
            cls(values.astype(np.float64))
    with pytest.raises(TypeError):
        cls(np.zeros((4, size + 1), dtype))
    with pytest.raises(TypeError):
        cls(np.zeros((4, size, size), dtype))


def test_construct_from_numpy_shares_memory():
    values = np.arange(12, dtype=np.float32).reshape(4, 3)
    v = kl.Array3f(values)
    values[2, 1] = 100.0
    np.testing.assert_array_equal(v.y.numpy(), [1.0, 4.0, 100.0, 10.0])
