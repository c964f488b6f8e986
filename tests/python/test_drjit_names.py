"""Dr.Jit's names on kiln (issue 29): what scripts written with `import drjit as dr` call,
with Dr.Jit 1.5's results (written out here): reductions of Python sequences and of vectors
over their components, slice, maximum/minimum, the constants and ADFlag."""

import math

import numpy as np
import pytest

import kiln as kl


def test_reductions_of_python_sequences_stay_on_the_host():
    assert kl.prod([256, 128]) == 32768 and isinstance(kl.prod((2, 3)), int)
    assert kl.sum([1.0, 2.0, 3.0]) == 6.0
    assert kl.mean([1.0, 2.0, 3.0, 6.0]) == 3.0


def test_reductions_of_vectors_run_over_components_per_lane():
    v = kl.Array3f(kl.Float([1.0, 2.0]), kl.Float([3.0, 4.0]), kl.Float([5.0, 7.0]))
    assert np.allclose(kl.sum(v).numpy(), [9.0, 13.0])
    assert np.allclose(kl.prod(v).numpy(), [15.0, 56.0])
    assert np.allclose(kl.mean(v).numpy(), [3.0, 13.0 / 3.0])
    # Arrays and tensors keep Kiln's meaning: over lanes.
    assert kl.sum(kl.Float([1.0, 2.0])).numpy().tolist() == [3.0]


def test_the_gradient_tutorials_parameter_error():
    reference = kl.Array3f(0.5, 0.1, 0.2)
    value = kl.Array3f(0.4, 0.3, 0.2)
    error = kl.sum(kl.square(reference - value))
    assert isinstance(error, kl.Float) and kl.slice(error) == pytest.approx(0.05, rel=1e-6)


def test_slice_gives_host_values():
    assert kl.slice(kl.Float([1.5, 2.5]), 1) == 2.5 and isinstance(kl.slice(kl.Float([1.5])), float)
    assert kl.slice(kl.UInt32([7])) == 7
    vector = kl.slice(kl.Array3f(kl.Float([1.0, 2.0]), 3.0, 4.0), 1)
    assert isinstance(vector, kl.Array3f) and np.allclose(np.asarray(vector).ravel(), [2.0, 3.0, 4.0])
    with pytest.raises(TypeError, match="Kiln array"):
        kl.slice("text")


def test_maximum_and_minimum():
    assert np.allclose(kl.maximum(kl.Float([1.0, 5.0]), 3.0).numpy(), [3.0, 5.0])
    assert np.allclose(kl.minimum(kl.Float([1.0, 5.0]), kl.Float([2.0, 2.0])).numpy(), [1.0, 2.0])
    assert kl.maximum(2, 3) == 3 and kl.minimum(2.0, 3.0) == 2.0


def test_constants_and_angle_conversions():
    assert kl.two_pi == 2 * math.pi and kl.inv_pi == 1 / math.pi
    assert kl.deg2rad(180.0) == pytest.approx(math.pi) and kl.rad2deg(kl.pi) == pytest.approx(180.0)
    assert np.allclose(kl.deg2rad(kl.Float([90.0])).numpy(), [math.pi / 2])
    assert np.allclose(kl.sqr(kl.Float([3.0])).numpy(), [9.0])


def test_adflag_clear_none_keeps_the_graph():
    x = kl.Float([1.0, 2.0])
    kl.enable_grad(x)
    loss = kl.sum(x * x)
    kl.backward(loss, kl.ADFlag.ClearNone)
    kl.backward(loss, kl.ADFlag.ClearEdges)  # the graph was kept: a second traversal works
    assert np.allclose(kl.grad(x).numpy(), [4.0, 8.0])
    with pytest.raises(ValueError, match="retain_graph"):
        kl.backward(loss)  # ClearEdges freed it


def test_forward_and_forward_to_take_flags():
    x = kl.Float([1.0, 2.0])
    kl.enable_grad(x)
    y = x * 3.0
    kl.forward(x, kl.ADFlag.ClearEdges)
    assert np.allclose(kl.grad(y).numpy(), [3.0, 3.0])
    a = kl.Float([2.0])
    kl.enable_grad(a)
    b = a * a
    kl.set_grad(a, 1.0)
    assert np.allclose(kl.forward_to(b, kl.ADFlag.Default).numpy(), [4.0])
    assert kl.ADMode.Backward != kl.ADMode.Forward


def test_masked_assignment():
    x = kl.Float([1.0, 2.0, 3.0])
    x[x > 1.5] = 0.0
    assert x.numpy().tolist() == [1.0, 0.0, 0.0]
    v = kl.Array3f(kl.Float([1.0, 2.0]), 5.0, 6.0)
    v[kl.arange(kl.UInt32, 2) == 1] = kl.Array3f(7.0, 8.0, 9.0)
    assert np.asarray(v).tolist() == [[1.0, 5.0, 6.0], [7.0, 8.0, 9.0]]
    v[kl.Bool([True, False])] = 0.0
    assert np.asarray(v).tolist() == [[0.0, 0.0, 0.0], [7.0, 8.0, 9.0]]


def test_tensor_slice_assignment():
    t = kl.TensorXf(np.arange(12, dtype=np.float32).reshape(3, 4))
    t[:2, 1:3] = 0.0
    t[2] = kl.TensorXf(np.full(4, 7.0, np.float32))
    expected = np.arange(12, dtype=np.float32).reshape(3, 4)
    expected[:2, 1:3] = 0.0
    expected[2] = 7.0
    assert np.array_equal(t.numpy(), expected)
    x = kl.TensorXf(np.ones((2, 2), np.float32))
    kl.enable_grad(x)
    y = kl.TensorXf(x.array * 2.0, [2, 2])
    y[0, 0] = 5.0  # the overwritten element no longer depends on x
    kl.backward(kl.sum(y.array))
    assert kl.grad(x).numpy().tolist() == [[0.0, 2.0], [2.0, 2.0]]
    with pytest.raises(ValueError, match="selection"):
        t[0] = kl.TensorXf(np.ones(3, np.float32))


def test_wrap_picks_the_direction():
    assert kl.wrap(source="torch", target="drjit") is kl.wrap_torch
    assert kl.wrap(source="kiln", target="torch") is kl.torch_op
    with pytest.raises(ValueError, match="not a framework"):
        kl.wrap(source="jax", target="drjit")
    with pytest.raises(ValueError, match="must differ"):
        kl.wrap(source="torch", target="torch")


def test_vectors_from_lists_of_components_and_tensors_of_a_shape():
    faces = kl.Array3u([1, 2], [3, 4], [5, 6])
    assert np.asarray(faces).tolist() == [[1, 3, 5], [2, 4, 6]]
    mixed = kl.Array3f([1.0, 2.0], 0.5, kl.Float([3.0, 4.0]))
    assert np.asarray(mixed).tolist() == [[1.0, 0.5, 3.0], [2.0, 0.5, 4.0]]
    with pytest.raises(TypeError, match="incompatible function arguments"):
        kl.Array3u([1], [2])
    with pytest.raises(TypeError, match="Array3u\\(\\): component 0 must be"):
        kl.Array3u("a", [2], [3])
    assert kl.zeros(kl.TensorXf, (32, 32, 3)).shape == (32, 32, 3)
    assert np.all(kl.full(kl.TensorXf, 0.5, [2, 2]).numpy() == 0.5)
    assert kl.ones(kl.TensorXu, (4,)).numpy().tolist() == [1, 1, 1, 1]
    assert kl.zeros(kl.Float, 3).numpy().tolist() == [0.0, 0.0, 0.0]  # Kiln's own form unchanged


def test_sh_eval_is_orthonormal_and_matches_the_closed_forms():
    # Gauss-Legendre in cos θ times a uniform rule in φ integrates the products exactly.
    nodes, node_weights = np.polynomial.legendre.leggauss(12)
    phi = (np.arange(24) + 0.5) * (2 * np.pi / 24)
    z, p = np.meshgrid(nodes, phi, indexing="ij")
    w = np.repeat(node_weights, 24) * (2 * np.pi / 24)
    s = np.sqrt(1 - z ** 2)
    x, y = (s * np.cos(p)).ravel(), (s * np.sin(p)).ravel()
    d = kl.Array3f(kl.Float(x.astype(np.float32)), kl.Float(y.astype(np.float32)), kl.Float(z.ravel().astype(np.float32)))
    basis = np.array([np.asarray(b, dtype=np.float64) for b in kl.sh_eval(d, 4)])
    gram = (basis * w) @ basis.T
    np.testing.assert_allclose(gram, np.eye(25), atol=2e-5)
    # Sloan's constants for degrees 0 to 2 (Dr.Jit's signs)
    closed = [0.2820948 + 0 * x, -0.4886025 * y, 0.4886025 * z.ravel(), -0.4886025 * x, 1.0925484 * x * y,
              -1.0925484 * y * z.ravel(), 0.3153916 * (3 * z.ravel() ** 2 - 1), -1.0925484 * x * z.ravel(),
              0.5462742 * (x * x - y * y)]
    np.testing.assert_allclose(basis[:9], closed, atol=2e-6)
    with pytest.raises(ValueError, match="order"):
        kl.sh_eval(d, 10)


def test_constructors_take_drjits_shape_keyword_and_scopes_take_when():
    assert kl.full(kl.TensorXf, 0.5, shape=(2, 3)).shape == (2, 3)
    assert len(kl.zeros(kl.Float, shape=4)) == 4
    x = kl.Float([1.0, 2.0])
    kl.enable_grad(x)
    with kl.suspend_grad():
        with kl.resume_grad(when=False):
            assert not kl.grad_enabled(x * 2.0)
        with kl.resume_grad(when=True):
            assert kl.grad_enabled(x * 2.0)
    with kl.suspend_grad(when=False):
        assert kl.grad_enabled(x * 2.0)
    t = kl.TensorXf(kl.Float([-1.0, 2.0]), (2,))
    np.testing.assert_allclose(np.asarray(kl.maximum(t, 0.0)), [0.0, 2.0])
    np.testing.assert_allclose(np.asarray(kl.minimum(1.0, t)), [-1.0, 1.0])


def test_gather_takes_drjits_type_first_order():
    source = kl.Float([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    index = kl.UInt32([1, 0])
    np.testing.assert_allclose(np.asarray(kl.gather(kl.Float, source, index)), [2.0, 1.0])
    np.testing.assert_allclose(np.asarray(kl.gather(source, index)), [2.0, 1.0])
    np.testing.assert_allclose(np.asarray(kl.gather(kl.Float, source, index, kl.Bool([True, False]), mode=None)),
                               [2.0, 0.0])
    np.testing.assert_allclose(np.asarray(kl.gather(kl.Array3f, source, index)), [[4, 5, 6], [1, 2, 3]])
    vectors = kl.Array3f(source, source * 2.0, source * 3.0)
    np.testing.assert_allclose(np.asarray(kl.gather(kl.Array3f, vectors, index)), [[2, 4, 6], [1, 2, 3]])


def test_linspace_without_endpoint_square_of_anything_and_tensor_shape():
    # Dr.Jit 1.5: linspace(Float, 0, 1, 5, endpoint=False) = 0, 0.2, ..., 0.8.
    np.testing.assert_allclose(kl.linspace(kl.Float, 0, 1, 5, endpoint=False).numpy(), [0, 0.2, 0.4, 0.6, 0.8],
                               atol=1e-7)
    assert kl.linspace(kl.Float, 0, 1, 3).numpy().tolist() == [0.0, 0.5, 1.0]
    # The caustics tutorial squares a NumPy array with dr.square.
    np.testing.assert_array_equal(kl.square(np.array([1.0, -3.0])), [1.0, 9.0])
    assert kl.square(2.5) == 6.25 and kl.sqr is kl.square
    assert kl.square(kl.Float([3.0])).numpy().tolist() == [9.0]
    assert kl.shape(kl.TensorXf(kl.zeros(kl.Float, 12), (2, 3, 2))) == (2, 3, 2)


def test_scatter_takes_drjit_operands():
    # The mesh_io tutorial: dr.scatter(values, 1, [(N - 1) * 3 + 2]) (a list index, a number).
    values = kl.zeros(kl.Float, 6)
    kl.scatter(values, 1, [4])
    kl.scatter(values, [7, 8], np.array([0, 1], dtype=np.uint32), mode=None)
    kl.scatter(values, kl.Float(2.0), kl.UInt32(5))
    np.testing.assert_array_equal(np.asarray(values), [7, 8, 0, 0, 1, 2])
    with pytest.raises(TypeError, match="scatter"):
        kl.scatter(values, 1.0, None)
