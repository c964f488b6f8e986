"""kl.nn layers from Python: Linear's initialization comes from C++ (kiln::nn::Linear), and
layers built without a seed start different while explicit seeds repeat."""

import numpy as np

import kiln as kl


def test_linear_layers_without_seed_start_different():
    first, second = kl.nn.Linear(5, 4), kl.nn.Linear(5, 4)
    assert not np.array_equal(first.weight.numpy(), second.weight.numpy())
    assert not np.array_equal(first.bias.numpy(), second.bias.numpy())


def test_linear_explicit_seed_repeats_and_bounds_hold():
    a, b = kl.nn.Linear(9, 3, seed=5), kl.nn.Linear(9, 3, seed=5)
    np.testing.assert_array_equal(a.weight.numpy(), b.weight.numpy())
    np.testing.assert_array_equal(a.bias.numpy(), b.bias.numpy())
    assert a.weight.shape == (9, 3) and a.bias.shape == (3,)
    assert np.abs(a.weight.numpy()).max() <= 1 / 3 and np.abs(a.weight.numpy()).std() > 0.05


def test_linear_without_bias_and_with_gradients():
    layer = kl.nn.Linear(3, 2, bias=False, seed=1)
    assert layer.bias is None and layer.parameters() == [layer.weight]
    x = kl.TensorXf(np.ones((4, 3), np.float32))
    kl.backward(layer(x).sum())
    np.testing.assert_allclose(kl.grad(layer.weight).numpy(), np.full((3, 2), 4.0))
