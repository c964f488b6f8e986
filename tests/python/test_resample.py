"""kl.resample / kl.upsample (issue 29: Dr.Jit's dr.resample, which the radiance field
tutorial uses to refine its grids): values Dr.Jit 1.5 gives, Pillow's filters and scipy's
boundary modes, exactness on what a filter reproduces, derivatives (the transpose of the
resampling), and errors."""

import numpy as np
import pytest

import kiln as kl
from kiln.resample import FILTERS, filter_table


def values(x):
    return np.asarray(x, dtype=np.float64)


def test_values_drjit_gives():
    ramp = kl.Float(np.arange(1, 6, dtype=np.float32))
    np.testing.assert_allclose(values(kl.resample(ramp, (2,), filter="box")), [2.0, 4.5], atol=1e-6)
    np.testing.assert_allclose(values(kl.resample(ramp, (3,), filter="box")), [1.5, 3.0, 4.5], atol=1e-6)
    np.testing.assert_allclose(values(kl.resample(ramp, (10,), filter="box")), np.repeat(np.arange(1, 6), 2))
    delta = np.zeros(9, dtype=np.float32)
    delta[4] = 1.0
    up = values(kl.resample(kl.Float(delta), (18,), filter="gaussian"))
    np.testing.assert_allclose(up[5:13], [0.00147934, 0.03482735, 0.25905323, 0.7046401, 0.7046401, 0.25905323,
                                          0.03482735, 0.00147934], atol=1e-6)
    np.testing.assert_allclose(values(kl.resample(kl.Float(delta), (8,), filter="gaussian"))[2:6],
                               [0.0076608, 0.43192595, 0.43192595, 0.0076608], atol=1e-6)


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_every_filter_keeps_constants_and_the_tensor_shape(name):
    tensor = kl.full(kl.TensorXf, 0.7, shape=(4, 6, 2))
    for shape in ((8, 12, 2), (3, 5, 2), (4, 9, 2)):
        out = kl.resample(tensor, shape, filter=name)
        assert type(out) is kl.TensorXf and tuple(out.shape) == shape
        np.testing.assert_allclose(values(out), 0.7, atol=1e-5)


def test_linear_upsampling_is_exact_on_a_ramp_away_from_the_edges_and_boundaries_differ():
    ramp = kl.Float(np.arange(8, dtype=np.float32))
    out = values(kl.resample(ramp, (16,), filter="linear"))
    centers = (np.arange(16) + 0.5) / 2 - 0.5  # output sample centers in input samples
    np.testing.assert_allclose(out[1:-1], centers[1:-1], atol=1e-5)
    wrapped = values(kl.resample(ramp, (16,), filter="linear", boundary="wrap"))
    assert wrapped[0] == pytest.approx(0.75 * 0 + 0.25 * 7)  # the tap left of sample 0 is sample 7
    nearest = values(kl.resample(ramp, (16,), filter="linear", boundary="nearest"))
    assert nearest[0] == pytest.approx(0.0) and out[0] == pytest.approx(0.0)


def test_derivatives_are_the_transpose_of_the_resampling():
    rng = np.random.default_rng(1)
    source = kl.TensorXf(rng.uniform(size=(5, 3)).astype(np.float32))
    kl.enable_grad(source)
    weights = rng.uniform(size=(9, 3)).astype(np.float32)
    kl.backward(kl.sum(kl.resample(source, (9, 3), filter="cubic") * kl.TensorXf(weights), axis=None))
    index, w = filter_table(5, 9, FILTERS["cubic"][1], FILTERS["cubic"][0], "zero")
    matrix = np.zeros((9, 5))
    for row in range(9):
        for column, weight in zip(index[row], w[row]):
            matrix[row, column] += weight
    np.testing.assert_allclose(values(kl.grad(source)).reshape(5, 3), matrix.T @ weights, rtol=1e-5, atol=1e-6)


def test_upsample_and_errors():
    t = kl.TensorXf(np.arange(4, dtype=np.float32).reshape(2, 2, 1))
    np.testing.assert_allclose(values(kl.upsample(t, scale_factor=[2, 2])).reshape(4, 4),
                               [[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3], [2, 2, 3, 3]])
    assert tuple(kl.upsample(t, shape=[4, 6]).shape) == (4, 6, 1)
    with pytest.raises(TypeError, match="whole multiples"):
        kl.upsample(t, shape=[3, 2])
    with pytest.raises(TypeError, match="either shape or scale_factor"):
        kl.upsample(t)
    with pytest.raises(ValueError, match="axes"):
        kl.resample(t, (4, 4))
    with pytest.raises(ValueError, match="filter must be one of"):
        kl.resample(t, (4, 4, 1), filter="bicubic")
    with pytest.raises(ValueError, match="boundary"):
        kl.resample(t, (4, 4, 1), boundary="edge")
    with pytest.raises(ValueError, match="filter_radius"):
        kl.resample(t, (4, 4, 1), filter=lambda x: 1.0)
    custom = kl.resample(kl.Float([1.0, 3.0]), (4,), filter=lambda x: max(0.0, 1.0 - abs(x)), filter_radius=1.0)
    np.testing.assert_allclose(values(custom), values(kl.resample(kl.Float([1.0, 3.0]), (4,), filter="linear")))
