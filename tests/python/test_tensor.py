"""kl.TensorXf / TensorXd: values against NumPy for indexing, reshape, transpose,
broadcasting operators, reductions along axes, cumsum, concatenate and matmul (an OpenBLAS
'library' launch in kernel_history()); derivatives of matmul, broadcast biases, sums and
cumsum against finite differences (kl.check_grads, which takes tensors) and analytic
values; and the errors (mismatched broadcast, bad reshape, axis out of range, matmul
shapes)."""

import operator

import numpy as np
import pytest

import kiln as kl

RNG = np.random.default_rng(1234)
A = RNG.normal(size=(3, 4, 5)).astype(np.float32)
M = RNG.normal(size=(4, 6)).astype(np.float32)
N = RNG.normal(size=(6, 3)).astype(np.float32)


def t(values):
    return kl.TensorXf(np.ascontiguousarray(values, dtype=np.float32))


def d(values):
    return kl.TensorXd(np.ascontiguousarray(values, dtype=np.float64))


def close(tensor, expected, rtol=1e-5, atol=1e-5):
    got = tensor.numpy()
    assert got.shape == np.shape(expected)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------- construction


def test_construct_shape_and_roundtrip():
    x = t(A)
    assert x.shape == (3, 4, 5) and x.ndim == 3 and x.size() == 60 and len(x) == 3
    close(x, A, 0, 0)
    np.testing.assert_array_equal(np.asarray(x), A)


def test_a_tensor_of_a_tensor_is_the_same_tensor_with_its_derivatives():
    """kl.TensorXf(t) used to copy t through NumPy, silently dropping its derivatives."""
    x = kl.Float([1.0, 2.0, 3.0, 4.0])
    kl.enable_grad(x)
    t = kl.TensorXf(x * 2.0, (2, 2))
    same = kl.TensorXf(t)
    assert same.shape == (2, 2) and kl.grad_enabled(same)
    kl.backward(kl.sum(same))
    np.testing.assert_array_equal(kl.grad(x).numpy(), [2, 2, 2, 2])


def test_flat_array_with_shape_and_fill():
    x = kl.TensorXf(kl.arange(kl.Float, 6), [2, 3])
    close(x, np.arange(6, dtype=np.float32).reshape(2, 3), 0, 0)
    filled = kl.TensorXf(kl.Float(2.5), [2, 2])
    close(filled, np.full((2, 2), 2.5, np.float32), 0, 0)


# ---------------------------------------------------------------------------- indexing


@pytest.mark.parametrize("key", [
    1, -1, (slice(None), 2), (slice(1, 3),), (slice(None), slice(1, 4, 2)), (Ellipsis, 0), (0, Ellipsis, -2),
    (slice(None, None, -1),), (2, 3, 4), (slice(None), slice(None), slice(3, None)),
], ids=lambda k: repr(k))
def test_indexing_matches_numpy(key):
    close(t(A)[key], A[key], 0, 0)


def test_index_out_of_range_and_too_many_indices():
    with pytest.raises(IndexError):
        t(A)[3]
    with pytest.raises(IndexError):
        t(A)[0, 0, 0, 0]


# ---------------------------------------------------------------------------- shape ops


def test_reshape_and_minus_one():
    close(t(A).reshape([12, 5]), A.reshape(12, 5), 0, 0)
    close(t(A).reshape([-1, 10]), A.reshape(-1, 10), 0, 0)


def test_transpose_and_T():
    close(t(A).transpose(), A.transpose(), 0, 0)
    close(t(A).transpose([1, 0, 2]), A.transpose(1, 0, 2), 0, 0)
    close(t(M).T, M.T, 0, 0)


def test_broadcast_to():
    row = RNG.normal(size=(1, 5)).astype(np.float32)
    close(t(row).broadcast_to([4, 5]), np.broadcast_to(row, (4, 5)), 0, 0)


# ---------------------------------------------------------------------------- arithmetic


@pytest.mark.parametrize("shape", [(5,), (4, 1), (3, 1, 5), (1, 4, 1), ()])
@pytest.mark.parametrize("op", ["+", "-", "*", "/"])
def test_broadcasting_binary_ops(op, shape):
    other = (RNG.uniform(0.5, 2.0, size=shape)).astype(np.float32)
    fn = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}[op]
    close(fn(t(A), t(other)), fn(A, other))
    close(fn(t(other), t(A)), fn(other, A))


def test_scalar_ops_and_unary():
    x = t(A)
    close(x * 2.0 + 1.0, A * 2 + 1)
    close(3.0 - x, 3 - A)
    close(1.0 / (1.0 + kl.exp(-x)), 1 / (1 + np.exp(-A)))
    close(-x, -A, 0, 0)
    close(abs(x), np.abs(A), 0, 0)
    close(kl.sin(x) + kl.cos(x), np.sin(A) + np.cos(A))
    close(x ** 2.0, A ** 2)
    close(kl.square(x), A * A)
    close(kl.clip(x, -0.5, 0.25), np.clip(A, -0.5, 0.25), 0, 0)


def test_comparisons_select_min_max():
    x, zero = t(A), t(np.zeros((5,), np.float32))
    mask = x > 0.0
    assert isinstance(mask, kl.TensorXb) and mask.shape == A.shape
    np.testing.assert_array_equal(mask.numpy(), A > 0)
    close(kl.select(mask, x, x * 0.1), np.where(A > 0, A, A * 0.1))
    close(kl.max(x, zero), np.maximum(A, 0), 0, 0)
    close(kl.min(x, zero), np.minimum(A, 0), 0, 0)


# ---------------------------------------------------------------------------- reductions


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_sum_mean_along_axis(axis):
    close(t(A).sum(axis), A.sum(axis), 1e-5, 1e-5)
    close(t(A).mean(axis), A.mean(axis), 1e-5, 1e-5)
    close(kl.sum(t(A), axis), A.sum(axis), 1e-5, 1e-5)  # the functions, as for arrays
    close(kl.mean(t(A), axis=axis), A.mean(axis), 1e-5, 1e-5)


def test_total_sum_is_0d():
    s = t(A).sum()
    assert s.shape == () and s.ndim == 0
    np.testing.assert_allclose(s.numpy(), A.sum(), rtol=1e-5)
    np.testing.assert_allclose(t(A).mean().numpy(), A.mean(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(kl.mean(t(A)).numpy(), A.mean(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("exclusive", [False, True])
def test_cumsum_last_axis(exclusive):
    expected = np.cumsum(A, axis=-1)
    if exclusive:
        expected = expected - A
    close(kl.cumsum(t(A), exclusive=exclusive), expected, 1e-5, 1e-5)


def test_cumsum_is_accumulated_in_double():
    # 2**24 + ones: float32 running sums would stall at 16777216.
    row = np.array([2.0 ** 24] + [1.0] * 8, np.float32)
    got = kl.cumsum(t(row)).numpy()
    assert got[-1] == np.float32(2.0 ** 24 + 8)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_concatenate(axis):
    other = np.ones_like(A)
    close(kl.concatenate([t(A), t(other), t(A)], axis), np.concatenate([A, other, A], axis), 0, 0)


# ---------------------------------------------------------------------------- matmul


def test_matmul_2d_and_batched_leading_axes():
    close(kl.matmul(t(M), t(N)), M @ N, 1e-5, 1e-5)
    batched = RNG.normal(size=(2, 5, 4)).astype(np.float32)
    close(t(batched) @ t(M), batched @ M, 1e-5, 1e-5)


def test_matmul_is_a_library_launch():
    kl.kernel_history(clear=True)
    out = kl.matmul(t(M), t(N))
    out.numpy()
    library = [k for k in kl.kernel_history() if k["source"] == "library"]
    assert len(library) == 1
    assert "matmul" in library[0]["reason"] and library[0]["size"] == 4 * 3


def test_matmul_fused_with_elementwise():
    # Elementwise producers are evaluated first, consumers fuse afterwards.
    close(kl.exp(t(M) * 0.5) @ t(N) + 1.0, np.exp(M * 0.5) @ N + 1, 1e-4, 1e-4)


# ---------------------------------------------------------------------------- derivatives


def test_grad_matmul_finite_differences():
    kl.check_grads(lambda a, b: a @ b, (d(M), d(N)))


def test_grad_matmul_analytic_float32():
    a, b = t(M), t(N)
    kl.enable_grad(a, b)
    kl.backward((a @ b).sum())
    close(kl.grad(a), np.ones((4, 3)) @ N.T, 1e-5, 1e-5)
    close(kl.grad(b), M.T @ np.ones((4, 3)), 1e-5, 1e-5)


def test_grad_bias_broadcast():
    x, w, b = t(M), t(N), t(np.arange(3, dtype=np.float32))
    kl.enable_grad(w, b)
    y = x @ w + b                     # (4, 3) + (3,)
    kl.backward((y * y).sum())
    yv = M @ N + np.arange(3)
    close(kl.grad(b), (2 * yv).sum(0), 1e-4, 1e-4)
    close(kl.grad(w), M.T @ (2 * yv), 1e-4, 1e-4)
    kl.check_grads(lambda x, w, b: x @ w + b, (d(M), d(N), d(np.arange(3.0))))


def test_grad_broadcast_column_and_scalar():
    kl.check_grads(lambda a, c, s: a * c + s, (d(A), d(RNG.normal(size=(3, 1, 5))), d(np.array(0.5))))


def test_grad_sum_mean_along_axes():
    kl.check_grads(lambda a: a.sum(1) * a.mean(2).sum(1).reshape([3, 1]), (d(A),))
    x = t(A)
    kl.enable_grad(x)
    kl.backward(x.mean())
    close(kl.grad(x), np.full(A.shape, 1 / A.size), 1e-6, 1e-7)


@pytest.mark.parametrize("exclusive", [False, True])
def test_grad_cumsum(exclusive):
    kl.check_grads(lambda a: kl.exp(-kl.cumsum(a, exclusive=exclusive)), (d(A * 0.3),))
    x = t(A)
    kl.enable_grad(x)
    kl.backward(kl.cumsum(x, exclusive=exclusive).sum())
    n = A.shape[-1]
    counts = np.arange(n, 0, -1) - (1 if exclusive else 0)   # entries each value reaches
    close(kl.grad(x), np.broadcast_to(counts, A.shape).astype(np.float32), 0, 0)


def test_grad_indexing_and_concatenate():
    kl.check_grads(lambda a: kl.concatenate([a[..., 1:3], a[:, 0:1, 1:3] * 2.0], 1), (d(A),))
    kl.check_grads(lambda a: a[1] * a[2] + a[..., 0].reshape([3, 4, 1]), (d(A),))


def test_forward_mode_matmul():
    a, b = t(M), t(N)
    kl.enable_grad(b)
    out = a @ b
    kl.forward_from(b, t(np.ones_like(N)))
    close(kl.grad(out), M @ np.ones_like(N), 1e-5, 1e-5)


# ---------------------------------------------------------------------------- errors


def test_mismatched_broadcast_is_size_error():
    with pytest.raises(kl.SizeError, match="broadcast"):
        t(A) + t(np.ones((4,), np.float32))
    with pytest.raises(kl.SizeError):
        kl.select(t(A) > 0.0, t(A), t(np.ones((2, 5), np.float32)))


def test_bad_reshape_is_size_error():
    with pytest.raises(kl.SizeError, match="reshape"):
        t(A).reshape([7, 9])


@pytest.mark.parametrize("call", [lambda x: x.sum(3), lambda x: x.mean(-4), lambda x: kl.concatenate([x, x], 5)],
                         ids=["sum", "mean", "concatenate"])
def test_axis_out_of_range_is_index_error(call):
    with pytest.raises(IndexError):
        call(t(A))


def test_matmul_shape_mismatch():
    with pytest.raises(kl.SizeError, match="matmul"):
        t(M) @ t(M)
    with pytest.raises(kl.SizeError):
        kl.matmul(t(M), t(np.ones((6,), np.float32)).reshape([1, 6]))


def test_concatenate_mismatched_shapes():
    with pytest.raises(kl.SizeError):
        kl.concatenate([t(A), t(np.ones((3, 4, 2), np.float32))], 0)


def test_a_flat_array_operand_is_a_tensor_of_one_axis():
    """Dr.Jit's rule, which Mitsuba's shape tutorial relies on: `total = mi.Float(0.0);
    total += dr.mean(...)` (a shape-() tensor) accumulates into a tensor."""
    mean = kl.mean(kl.abs(kl.TensorXf(np.array([1.0, -2.0, 3.0], dtype=np.float32))))
    total = kl.Float(0.0)
    total += mean
    total = total + mean
    assert isinstance(total, kl.TensorXf) and total.shape == (1,)
    np.testing.assert_allclose(np.asarray(total), [4.0])
    np.testing.assert_allclose(np.asarray(kl.TensorXf(np.ones((2, 2), dtype=np.float32)) * kl.Float([1.0, 2.0])),
                               [[1.0, 2.0], [1.0, 2.0]])
    with pytest.raises(ValueError):
        kl.TensorXf(np.ones((2, 3), dtype=np.float32)) + kl.Float([1.0, 2.0])
