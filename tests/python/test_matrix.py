"""Matrices of arrays (kl.Matrix2f / 3f / 4f) against numpy and numpy.linalg, lane by lane."""

import numpy as np
import pytest

import kiln as kl

LANES = 29  # not a multiple of any packet width

SPECS = [
    pytest.param((kl.Matrix2f, 2, kl.Array2f), id="Matrix2f"),
    pytest.param((kl.Matrix3f, 3, kl.Array3f), id="Matrix3f"),
    pytest.param((kl.Matrix4f, 4, kl.Array4f), id="Matrix4f"),
]


def random_matrices(size, seed, n=LANES):
    """Per lane, a well-conditioned matrix (dominant diagonal), exact in float32."""
    gen = np.random.default_rng(seed)
    return (gen.uniform(-1, 1, (n, size, size)) + 3 * np.eye(size)).astype(np.float32)


def random_vectors(size, seed, n=LANES):
    return np.random.default_rng(seed).uniform(-1, 1, (n, size)).astype(np.float32)


def matrix(cls, values):
    """A matrix built entry by entry (row-major) from (n, N, N) host values."""
    size = values.shape[1]
    return cls(*[kl.Float(np.ascontiguousarray(values[:, r, c])) for r in range(size) for c in range(size)])


def vector(cls, values):
    return cls(*[kl.Float(np.ascontiguousarray(values[:, j])) for j in range(values.shape[1])])


def check(got, expected, atol=1e-5):
    out = got.numpy()
    assert out.dtype == np.float32
    expected = np.asarray(expected)
    assert out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=atol)


@pytest.mark.parametrize("spec", SPECS)
def test_construct_from_entries(spec):
    cls, size, _ = spec
    m = cls(*[float(k) for k in range(size * size)])  # plain numbers
    check(m, np.arange(size * size, dtype=np.float32).reshape(1, size, size), atol=0)
    values = random_matrices(size, 1)
    check(matrix(cls, values), values, atol=0)
    copy = cls(m)
    check(copy, np.arange(size * size, dtype=np.float32).reshape(1, size, size), atol=0)
    assert len(m) == size
    with pytest.raises(TypeError):
        cls(*[1.0] * (size * size - 1))


@pytest.mark.parametrize("spec", SPECS)
def test_identity(spec):
    cls, size, _ = spec
    eye = cls.identity()
    check(eye, np.eye(size, dtype=np.float32)[None], atol=0)
    values = random_matrices(size, 2)
    m = matrix(cls, values)
    check(eye @ m, values, atol=0)
    check(m @ eye, values, atol=0)


@pytest.mark.parametrize("spec", SPECS)
def test_entry_get_and_set(spec):
    cls, size, _ = spec
    values = random_matrices(size, 3)
    m = matrix(cls, values)
    for r in range(size):
        for c in range(size):
            entry = m[r, c]
            assert isinstance(entry, kl.Float)
            np.testing.assert_array_equal(entry.numpy(), values[:, r, c])
    np.testing.assert_array_equal(m[-1, -2].numpy(), values[:, size - 1, size - 2])
    column = np.arange(LANES, dtype=np.float32)
    m[0, size - 1] = kl.Float(column)
    m[size - 1, 0] = 7.5  # a plain number converts
    expected = values.copy()
    expected[:, 0, size - 1] = column
    expected[:, size - 1, 0] = 7.5
    check(m, expected, atol=0)
    with pytest.raises(IndexError):
        m[size, 0]
    with pytest.raises(IndexError):
        m[0, -size - 1] = 1.0


@pytest.mark.parametrize("spec", SPECS)
def test_sum_difference_and_product(spec):
    cls, size, _ = spec
    a, b = random_matrices(size, 4), random_matrices(size, 5)
    ma, mb = matrix(cls, a), matrix(cls, b)
    check(ma + mb, a + b)
    check(ma - mb, a - b)
    check(ma * mb, a @ b, atol=1e-4)  # * is the matrix product
    check(ma @ mb, a @ b, atol=1e-4)
    check(mb @ ma, b @ a, atol=1e-4)


@pytest.mark.parametrize("spec", SPECS)
def test_matrix_times_vector(spec):
    cls, size, vector_cls = spec
    a, v = random_matrices(size, 6), random_vectors(size, 7)
    ma, vv = matrix(cls, a), vector(vector_cls, v)
    expected = np.einsum("nrc,nc->nr", a, v)
    for product in (ma @ vv, ma * vv):
        assert isinstance(product, vector_cls)
        got = product.numpy()
        assert got.shape == (LANES, size)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("spec", SPECS)
def test_scalar_products(spec):
    cls, size, _ = spec
    a = random_matrices(size, 8)
    ma = matrix(cls, a)
    check(ma * 2.5, a * 2.5)
    check(2.5 * ma, a * 2.5)
    s = np.linspace(-2, 2, LANES, dtype=np.float32)
    check(ma * kl.Float(s), a * s[:, None, None])
    check(kl.Float(s) * ma, a * s[:, None, None])


@pytest.mark.parametrize("spec", SPECS)
def test_transpose(spec):
    cls, size, _ = spec
    a = random_matrices(size, 9)
    ma = matrix(cls, a)
    check(kl.transpose(ma), np.transpose(a, (0, 2, 1)), atol=0)
    check(kl.transpose(kl.transpose(ma)), a, atol=0)


@pytest.mark.parametrize("spec", SPECS)
def test_determinant(spec):
    cls, size, _ = spec
    a = random_matrices(size, 10)
    det = kl.determinant(matrix(cls, a))
    assert isinstance(det, kl.Float)
    np.testing.assert_allclose(det.numpy(), np.linalg.det(a.astype(np.float64)), rtol=1e-5)
    assert kl.determinant(cls.identity()).item() == 1.0


@pytest.mark.parametrize("spec", SPECS)
def test_inverse(spec):
    cls, size, _ = spec
    a = random_matrices(size, 11)
    ma = matrix(cls, a)
    inv = kl.inverse(ma)
    check(inv, np.linalg.inv(a.astype(np.float64)))
    eye = np.broadcast_to(np.eye(size, dtype=np.float32), a.shape)
    check(inv @ ma, eye)
    check(ma @ inv, eye)


@pytest.mark.parametrize("spec", SPECS)
def test_singular_matrix_gives_non_finite_inverse(spec):
    cls, size, _ = spec
    singular = cls(*[1.0] * (size * size))  # every row the same
    assert kl.determinant(singular).item() == 0.0
    assert not np.all(np.isfinite(kl.inverse(singular).numpy()))


def projective_matrices(seed):
    m = random_matrices(4, seed).astype(np.float64)
    m[:, 3, :3] *= 0.1
    m[:, 3, 3] = 2.0
    return m.astype(np.float32)


def test_transform_point():
    m, p = projective_matrices(12), random_vectors(3, 13)
    got = kl.transform_point(matrix(kl.Matrix4f, m), vector(kl.Array3f, p))
    assert isinstance(got, kl.Array3f)
    h = np.einsum("nrc,nc->nr", m.astype(np.float64), np.concatenate([p, np.ones((LANES, 1))], axis=1))
    np.testing.assert_allclose(got.numpy(), h[:, :3] / h[:, 3:], rtol=1e-5, atol=1e-5)


def test_transform_vector():
    m, v = projective_matrices(14), random_vectors(3, 15)
    got = kl.transform_vector(matrix(kl.Matrix4f, m), vector(kl.Array3f, v))
    expected = np.einsum("nrc,nc->nr", m[:, :3, :3].astype(np.float64), v)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-5)


def test_transform_normal():
    m, n = projective_matrices(16), random_vectors(3, 17)
    got = kl.transform_normal(matrix(kl.Matrix4f, m), vector(kl.Array3f, n))
    inverse_transpose = np.transpose(np.linalg.inv(m[:, :3, :3].astype(np.float64)), (0, 2, 1))
    expected = np.einsum("nrc,nc->nr", inverse_transpose, n)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-4, atol=1e-5)
    # A transformed normal stays perpendicular to the transformed tangent plane.
    t = random_vectors(3, 18)
    normal = kl.cross(vector(kl.Array3f, t), vector(kl.Array3f, n))
    moved = kl.transform_normal(matrix(kl.Matrix4f, m), normal)
    tangent = kl.transform_vector(matrix(kl.Matrix4f, m), vector(kl.Array3f, t))
    cosine = kl.dot(kl.normalize(moved), kl.normalize(tangent))
    np.testing.assert_allclose(cosine.numpy(), 0, atol=1e-5)


def test_translation_moves_points_only():
    shift = kl.Matrix4f(1.0, 0.0, 0.0, 5.0, 0.0, 1.0, 0.0, 6.0, 0.0, 0.0, 1.0, 7.0, 0.0, 0.0, 0.0, 1.0)
    p = kl.Array3f(1.0, 2.0, 3.0)
    np.testing.assert_array_equal(kl.transform_point(shift, p).numpy(), [[6.0, 8.0, 10.0]])
    np.testing.assert_array_equal(kl.transform_vector(shift, p).numpy(), [[1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(kl.transform_normal(shift, p).numpy(), [[1.0, 2.0, 3.0]])


@pytest.mark.parametrize("spec", SPECS)
def test_numpy_shape_and_values(spec):
    cls, size, _ = spec
    a = random_matrices(size, 19)
    out = matrix(cls, a).numpy()
    assert isinstance(out, np.ndarray)
    assert out.shape == (LANES, size, size)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, a)
    np.testing.assert_array_equal(np.asarray(matrix(cls, a)), a)
    # size-1 entries broadcast to every lane
    mixed = cls.identity()
    mixed[0, 0] = kl.Float(np.arange(5, dtype=np.float32))
    expected = np.repeat(np.eye(size, dtype=np.float32)[None], 5, axis=0)
    expected[:, 0, 0] = np.arange(5)
    np.testing.assert_array_equal(mixed.numpy(), expected)


@pytest.mark.parametrize("spec", SPECS)
def test_construct_from_numpy(spec):
    cls, size, _ = spec
    a = random_matrices(size, 20)
    m = cls(a)
    for r in range(size):
        for c in range(size):
            np.testing.assert_array_equal(m[r, c].numpy(), a[:, r, c])
    check(m @ cls.identity(), a, atol=0)
    readonly = a.copy()
    readonly.setflags(write=False)
    check(cls(readonly), a, atol=0)
    check(cls(a.astype(np.float64)), a, atol=0)  # converted (a copy)
    with pytest.raises(TypeError):
        cls(np.zeros((3, size, size + 1), np.float32))
    with pytest.raises(TypeError):
        cls(np.zeros((3, size * size), np.float32))


def test_construct_from_numpy_shares_memory():
    a = np.zeros((3, 2, 2), np.float32)
    m = kl.Matrix2f(a)
    a[1, 0, 1] = 4.0
    np.testing.assert_array_equal(m[0, 1].numpy(), [0.0, 4.0, 0.0])
