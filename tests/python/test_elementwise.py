"""Elementwise helpers (kl.clip, clamp, lerp, square, sign, fmod, copysign, hypot, log1p,
expm1) against NumPy, their derivatives, and the componentwise vector functions and
comparisons (kl.Array3b)."""

import numpy as np
import pytest

import kiln as kl

EDGES = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -7.25, 1e-30, -3e5, np.inf, -np.inf, np.nan, 0.75])
GRID_X, GRID_Y = (a.ravel() for a in np.meshgrid(EDGES, EDGES))


def same(got, want):
    """Equal values, NaNs equal, zero signs compared."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got[~np.isnan(got)]), np.signbit(want[~np.isnan(want)]))


@pytest.mark.parametrize("dtype, kl_type", [(np.float32, kl.Float), (np.float64, kl.Float64)])
def test_binary_functions_match_numpy(dtype, kl_type):
    x, y = GRID_X.astype(dtype), GRID_Y.astype(dtype)
    with np.errstate(all="ignore"):
        same(kl.copysign(kl_type(x), kl_type(y)).numpy(), np.copysign(x, y))
        same(kl.fmod(kl_type(x), kl_type(y)).numpy(), np.fmod(x, y))
        same(kl.square(kl_type(x)).numpy(), np.square(x))
        hypot = kl.hypot(kl_type(x), kl_type(y)).numpy()
        np.testing.assert_allclose(hypot, np.hypot(x, y), rtol=4 * np.finfo(dtype).eps)
        same(hypot[np.isinf(np.hypot(x, y))], np.hypot(x, y)[np.isinf(np.hypot(x, y))])


def test_fmod_sign_of_dividend_and_huge_quotients():
    x = np.array([7.5, -7.5, 1e30, -1e300, 0.3])
    y = np.array([2.0, 2.0, 3.0, 7.0, 0.1])
    same(kl.fmod(kl.Float64(x), kl.Float64(y)).numpy(), np.fmod(x, y))
    assert kl.fmod(kl.Int32([7, -7, 5]), kl.Int32([3, 3, 0])).numpy().tolist() == [1, -1, 5]


def test_clip_lerp_sign():
    x = kl.Float([-2.0, -0.5, 0.0, 0.25, 3.0])
    assert kl.clip(x, -1.0, 1.0).numpy().tolist() == [-1.0, -0.5, 0.0, 0.25, 1.0]
    assert kl.clamp(x, 0.0, 0.5).numpy().tolist() == [0.0, 0.0, 0.0, 0.25, 0.5]
    assert kl.clip(kl.Int32([-5, 3, 9]), 0, 4).numpy().tolist() == [0, 3, 4]
    a, b = kl.Float([1.0, -3.0, 0.1]), kl.Float([5.0, 7.0, 0.7])
    np.testing.assert_array_equal(kl.lerp(a, b, 0.0).numpy(), a.numpy())
    np.testing.assert_array_equal(kl.lerp(a, b, 1.0).numpy(), b.numpy())
    # Dr.Jit's sign: 1 for both zeros and NaN -> -1; NumPy's gives 0 and NaN there.
    assert kl.sign(kl.Float([-2.0, -0.0, 0.0, 3.0, np.nan])).numpy().tolist() == [-1.0, 1.0, 1.0, 1.0, -1.0]
    assert kl.sign(kl.Int32([-4, 0, 9])).numpy().tolist() == [-1, 1, 1]


@pytest.mark.parametrize("dtype, kl_type", [(np.float32, kl.Float), (np.float64, kl.Float64)])
def test_log1p_expm1_accurate_near_zero(dtype, kl_type):
    x = np.concatenate([10.0 ** np.arange(-30, 1, 0.37), -(10.0 ** np.arange(-30, -0.1, 0.37))]).astype(dtype)
    reference_log1p = np.log1p(x.astype(np.float64))
    reference_expm1 = np.expm1(x.astype(np.float64))
    eps = np.finfo(dtype).eps
    for got, want in ((kl.log1p(kl_type(x)).numpy(), reference_log1p), (kl.expm1(kl_type(x)).numpy(), reference_expm1)):
        relative = np.abs((got.astype(np.float64) - want) / want)
        assert relative.max() < (3 * eps if dtype == np.float32 else 4 * eps), relative.max()
    naive = kl.log(kl_type(x) + 1).numpy().astype(np.float64)
    assert np.abs((naive - reference_log1p) / reference_log1p).max() > 0.5  # what log1p avoids


def test_log1p_expm1_special_values():
    x = np.array([0.0, -0.0, -1.0, -2.0, np.inf, -np.inf, np.nan, 1e4])
    with np.errstate(all="ignore"):
        same(kl.log1p(kl.Float64(x)).numpy(), np.log1p(x))
        same(kl.expm1(kl.Float64(x)).numpy(), np.expm1(x))


AWAY = kl.Float64(np.array([0.3, -0.7, 1.3, -1.9, 0.55, -1.1]))
OTHER = kl.Float64(np.array([-1.4, 0.45, 0.8, -0.35, -1.2, 0.6]))
T = kl.Float64(np.array([0.1, 0.9, 0.5, 0.3, 0.75, 0.2]))


@pytest.mark.parametrize("fn, inputs", [
    (lambda x, lo: kl.clip(x, lo * 0.5, 1.0), (AWAY, OTHER)),
    (kl.lerp, (AWAY, OTHER, T)),
    (kl.hypot, (AWAY, OTHER)),
    (kl.copysign, (AWAY, OTHER)),
    (kl.square, (AWAY,)),
    (lambda x, y: kl.fmod(x * 7.3, y), (AWAY, OTHER)),  # quotients away from integers
    (kl.log1p, (T,)),
    (kl.expm1, (AWAY,)),
    (lambda x, y: kl.norm(kl.Array3f64(x, y, x * y)), (AWAY, OTHER)),
], ids=["clip", "lerp", "hypot", "copysign", "square", "fmod", "log1p", "expm1", "norm"])
def test_derivatives(fn, inputs):
    kl.check_grads(fn, inputs)


def test_vectors_componentwise():
    v = kl.Array3f(kl.Float([1.0, 4.0]), kl.Float([9.0, 16.0]), kl.Float([0.25, 2.0]))
    np.testing.assert_allclose(kl.sqrt(v).numpy(), np.sqrt(v.numpy()), rtol=1e-7)
    np.testing.assert_allclose((v ** 2).numpy(), v.numpy() ** 2, rtol=1e-7)
    np.testing.assert_allclose((v ** v).numpy(), v.numpy() ** v.numpy(), rtol=1e-6)
    np.testing.assert_allclose(kl.exp(v).numpy(), np.exp(v.numpy()), rtol=1e-6)
    np.testing.assert_array_equal(kl.clip(v, 1.0, 10.0).numpy(), np.clip(v.numpy(), 1.0, 10.0))
    np.testing.assert_array_equal(kl.max(v, kl.Float(3.0)).numpy(), np.maximum(v.numpy(), 3.0))
    np.testing.assert_array_equal(kl.lerp(v, kl.Array3f(kl.Float(0.0)), 0.5).numpy(), v.numpy() * 0.5)
    less = v < kl.Array3f(kl.Float(5.0))
    assert type(less) is kl.Array3b
    assert [less[k].numpy().tolist() for k in range(3)] == [[True, True], [False, False], [True, True]]
    assert kl.all(v < 20.0).numpy().tolist() == [True, True]
    assert kl.any(v < 1.0).numpy().tolist() == [True, False]
    picked = kl.select(less, v, kl.Array3f(kl.Float(-1.0)))
    np.testing.assert_array_equal(picked.numpy(), np.where(v.numpy() < 5, v.numpy(), -1))
    assert (kl.Array3i(kl.Int32(1), kl.Int32(2), kl.Int32(3)) == kl.Int32(2)).y.numpy().tolist() == [True]
    with pytest.raises(ValueError, match="truth value of a mask vector is ambiguous"):
        bool(v == v)
