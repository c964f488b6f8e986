"""Quaternions (kl.Quaternion4f / Quaternion4f64) against NumPy: rotations against
Rodrigues matrices, products against composed matrices, slerp against the textbook
formula, exp/log against closed forms, bad input, and gradient checks."""

import numpy as np
import pytest

import kiln as kl

LANES = 29  # not a multiple of any packet width


def random_rotations(seed, n=LANES):
    """Unit axes (n, 3) and angles (n,) in (-pi, pi)."""
    rng = np.random.default_rng(seed)
    axis = rng.normal(size=(n, 3))
    return axis / np.linalg.norm(axis, axis=1, keepdims=True), rng.uniform(-3.1, 3.1, n)


def rodrigues(axis, angle):
    """(n, 3, 3) rotation matrices I + sin(a) K + (1 - cos(a)) K^2."""
    k = np.zeros((len(angle), 3, 3))
    k[:, 0, 1], k[:, 0, 2], k[:, 1, 2] = -axis[:, 2], axis[:, 1], -axis[:, 0]
    k -= k.transpose(0, 2, 1)
    s, c = np.sin(angle)[:, None, None], np.cos(angle)[:, None, None]
    return np.eye(3) + s * k + (1 - c) * k @ k


def vector(values, cls=kl.Array3f, array=kl.Float):
    return cls(*[array(np.ascontiguousarray(values[:, j])) for j in range(3)])


def quaternion(axis, angle, cls=kl.Quaternion4f):
    if cls is kl.Quaternion4f:
        return kl.rotate(cls, vector(axis.astype(np.float32)), kl.Float(angle.astype(np.float32)))
    return kl.rotate(cls, vector(axis, kl.Array3f64, kl.Float64), kl.Float64(angle))


def components(q):
    """(n, 4) host values x, y, z, w."""
    return np.stack([np.broadcast_to(c.numpy(), (q.size(),)) for c in (q.x, q.y, q.z, q.w)], axis=1)


def matrix_values(m, size):
    return np.stack([np.stack([np.broadcast_to(m[r, c].numpy(), (LANES,)) for c in range(size)], axis=1)
                     for r in range(size)], axis=1)


def test_basis_units_multiply_as_hamilton_defined():
    i, j, k = kl.Quaternion4f(1, 0, 0, 0), kl.Quaternion4f(0, 1, 0, 0), kl.Quaternion4f(0, 0, 1, 0)
    assert components(i * j).tolist() == components(k).tolist()
    assert components(j * k).tolist() == components(i).tolist()
    assert components(j * i).tolist() == components(-k).tolist()
    assert components(i * j * k).tolist() == [[0, 0, 0, -1]]
    assert components(kl.Quaternion4f.identity()).tolist() == [[0, 0, 0, 1]]


def test_rotation_matches_rodrigues():
    axis, angle = random_rotations(1)
    q = quaternion(axis, angle)
    expected = rodrigues(axis, angle)
    v = np.random.default_rng(2).uniform(-2, 2, (LANES, 3))
    rotated = kl.rotate_vector(q, vector(v.astype(np.float32))).numpy()
    np.testing.assert_allclose(rotated, np.einsum("nij,nj->ni", expected, v), atol=2e-5)
    np.testing.assert_allclose(matrix_values(kl.quat_to_matrix(q, 3), 3), expected, atol=2e-6)
    m4 = matrix_values(kl.quat_to_matrix(q), 4)
    np.testing.assert_allclose(m4[:, :3, :3], expected, atol=2e-6)
    np.testing.assert_array_equal(m4[:, 3], np.tile([0, 0, 0, 1], (LANES, 1)))
    np.testing.assert_array_equal(m4[:, :3, 3], 0)


def test_product_composes_rotations():
    (a_axis, a_angle), (b_axis, b_angle) = random_rotations(3), random_rotations(4)
    product = quaternion(a_axis, a_angle) * quaternion(b_axis, b_angle)
    np.testing.assert_allclose(matrix_values(kl.quat_to_matrix(product, 3), 3),
                               rodrigues(a_axis, a_angle) @ rodrigues(b_axis, b_angle), atol=2e-6)


def test_matrix_to_quat_round_trips_every_branch():
    axis, angle = random_rotations(5)
    half_turns = [([1, 0, 0], np.pi), ([0, 1, 0], np.pi), ([0, 0, 1], np.pi), ([0, 0, 1], 0.0),
                  ([0.6, 0.8, 0], np.pi), ([0, 0.6, -0.8], 3.0)]
    for lane, (a, t) in enumerate(half_turns):
        axis[lane], angle[lane] = a, t
    q = components(quaternion(axis, angle))
    for size in (3, 4):
        back = components(kl.matrix_to_quat(kl.quat_to_matrix(quaternion(axis, angle), size)))
        sign = np.sign(np.sum(back * q, axis=1, keepdims=True))  # q and -q: the same rotation
        np.testing.assert_allclose(back * sign, q, atol=2e-6)


def numpy_slerp(a, b, t):
    """The textbook formula with theta = 2 atan2(|a - b|, |a + b|) along the shorter arc."""
    b = np.where(np.sum(a * b, axis=1, keepdims=True) < 0, -b, b)
    theta = 2 * np.arctan2(np.linalg.norm(a - b, axis=1), np.linalg.norm(a + b, axis=1))[:, None]
    safe = np.where(theta == 0, 1, theta)
    mixed = (np.sin((1 - t[:, None]) * safe) * a + np.sin(t[:, None] * safe) * b) / np.sin(safe)
    return np.where(theta == 0, a, mixed)


def test_slerp_matches_numpy():
    a, b = quaternion(*random_rotations(6)), quaternion(*random_rotations(7))
    t = np.linspace(0, 1, LANES).astype(np.float32)
    want = numpy_slerp(components(a).astype(np.float64), components(b).astype(np.float64), t)
    np.testing.assert_allclose(components(kl.slerp(a, b, kl.Float(t))), want, atol=2e-5)
    np.testing.assert_allclose(components(kl.slerp(a, -b, kl.Float(t))), want, atol=2e-5)  # shorter arc
    same = kl.slerp(a, a, kl.Float(t))
    np.testing.assert_allclose(components(same), components(a), atol=1e-6)  # parallel: finite


def test_exp_log_and_arithmetic():
    q = kl.Quaternion4f(0.3, -0.2, 0.5, 0.4)
    v, w = np.array([0.3, -0.2, 0.5]), 0.4
    r = np.linalg.norm(v)
    want = np.exp(w) * np.concatenate([v * np.sin(r) / r, [np.cos(r)]])
    np.testing.assert_allclose(components(kl.exp(q))[0], want, rtol=1e-6)
    np.testing.assert_allclose(components(kl.log(kl.exp(q)))[0], [0.3, -0.2, 0.5, 0.4], rtol=1e-5)
    assert components(kl.exp(kl.Quaternion4f(0, 0, 0, 1)))[0].tolist() == [0, 0, 0, np.float32(np.e)]
    negative = components(kl.log(kl.Quaternion4f(0, 0, 0, -1)))[0]
    assert np.isnan(negative[:3]).all() and negative[3] == 0
    np.testing.assert_allclose(components(q * kl.rcp(q))[0], [0, 0, 0, 1], atol=1e-6)
    np.testing.assert_allclose(components(q / q)[0], [0, 0, 0, 1], atol=1e-6)
    assert components(kl.conj(q))[0].tolist() == pytest.approx([-0.3, 0.2, -0.5, 0.4])
    assert kl.norm(kl.normalize(q)).numpy()[0] == pytest.approx(1, abs=1e-6)
    assert kl.imag(q).y.numpy()[0] == pytest.approx(-0.2) and kl.real(q).numpy()[0] == pytest.approx(0.4)
    assert components(q * 2.0 - q)[0].tolist() == pytest.approx([0.3, -0.2, 0.5, 0.4])
    assert len(q) == 4 and q[3].numpy()[0] == pytest.approx(0.4)


def test_bad_input_raises():
    q = kl.Quaternion4f.identity()
    with pytest.raises(ValueError, match=r"quat_to_matrix\(\): size must be 3 \(Matrix3f\) or 4 \(Matrix4f\); got 5"):
        kl.quat_to_matrix(q, 5)
    with pytest.raises(IndexError):
        q[4]
    with pytest.raises(TypeError):
        kl.Quaternion4f(1, 2, 3)
    with pytest.raises(TypeError):
        kl.rotate(kl.Quaternion4f, kl.Array3f64(0, 0, 1), kl.Float(1))  # mixed precision
    with pytest.raises(TypeError):
        q * kl.Quaternion4f64.identity()


# ---- gradients (float64, through the components) ---------------------------------------------

def q64(seed, n=8):
    return [kl.Float64(c) for c in np.random.default_rng(seed).uniform(-1, 1, (4, n))]


def parts(q):
    return (q.x, q.y, q.z, q.w)


def test_gradients_of_product_reciprocal_exp_log():
    def f(*c):
        a, b = kl.Quaternion4f64(*c[:4]), kl.Quaternion4f64(*c[4:])
        return parts(a * kl.conj(b) + kl.rcp(a) * b + kl.exp(a) + kl.log(b + kl.Quaternion4f64(0, 0, 0, 2)))

    kl.check_grads(f, (*q64(1), *q64(2)))


def test_gradients_of_rotations_and_slerp():
    axis, angle = random_rotations(8, 8)

    def rotation(ax, ay, az, angle, vx, vy, vz):
        q = kl.rotate(kl.Quaternion4f64, kl.Array3f64(ax, ay, az), angle)
        v = kl.rotate_vector(q, kl.Array3f64(vx, vy, vz))
        return v.x, v.y, v.z

    v = np.random.default_rng(9).uniform(-1, 1, (3, 8))
    kl.check_grads(rotation, (*[kl.Float64(axis[:, j]) for j in range(3)], kl.Float64(angle),
                              *[kl.Float64(x) for x in v]))

    a = kl.normalize(kl.Quaternion4f64(*q64(3)))
    far = kl.normalize(kl.Quaternion4f64(*q64(4)))
    near = kl.normalize(a + kl.Quaternion4f64(0.01, 0, -0.01, 0))
    b = kl.select(kl.Float64(np.arange(8.0)) < 4, far, near)  # lanes 4..7: the nearly-parallel branch

    def slerp(*c):
        return parts(kl.slerp(kl.Quaternion4f64(*c[:4]), kl.Quaternion4f64(*c[4:8]), c[8]))

    kl.check_grads(slerp, (*parts(a), *parts(b), kl.Float64(np.linspace(0.1, 0.9, 8))))


def test_slerp_gradients_stay_finite_for_parallel_quaternions():
    same = [kl.Float64(0.5) for _ in range(4)]  # dot(q, q) = 1 exactly: the arc branch divides by 0 unguarded
    kl.enable_grad(*same)
    q = kl.Quaternion4f64(*same)
    y = kl.slerp(q, q, kl.Float64(0.25))
    kl.backward(y.x + y.y + y.z + y.w)
    assert all(np.isfinite(kl.grad(c).numpy()).all() for c in same)
