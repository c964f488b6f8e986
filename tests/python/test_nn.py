"""kl.nn layers from Python: Linear's initialization comes from C++ (kiln::nn::Linear), and
layers built without a seed start different while explicit seeds repeat; the optimizers are
C++'s (kiln::nn::SGD, Adam)."""

import numpy as np
import pytest

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


def test_optimizers_forward_to_cpp_and_hold_their_parameters():
    # kl.nn.SGD / Adam are C++'s optimizers: they update the Python tensors in place through
    # pointers, so they hold them (here the caller's list and tensors are gone).
    opt = kl.nn.SGD([kl.TensorXf(np.full((2, 2), 2.0, np.float32))], lr=0.25)
    p = opt.params[0]
    assert kl.grad_enabled(p)                                   # parameters become AD leaves
    kl.backward((p * p).sum())
    opt.step()
    np.testing.assert_array_equal(p.numpy(), np.full((2, 2), 1.0))  # 2 - 0.25 * 4
    kl.backward((p * p).sum())
    opt.zero_grad()
    np.testing.assert_array_equal(kl.grad(p).numpy(), 0)
    opt.lr = 0.5
    assert opt.lr == 0.5
    adam = kl.nn.Adam(opt.params, lr=0.1, betas=(0.5, 0.9), eps=1e-6)
    kl.backward((p * p).sum())
    adam.step()                                                 # the first step moves by lr
    np.testing.assert_allclose(p.numpy(), np.full((2, 2), 0.9), rtol=1e-6)
    with pytest.raises(TypeError, match=r"Adam\(\): parameters are TensorXf, got .*Float"):
        kl.nn.Adam([kl.Float(1.0)])


def test_layers_are_the_cpp_ones_and_networks_in_python_hold_them():
    # kl.nn's layers are kiln/nn.h's, bound as they are; they count as Modules, and a network
    # written in Python finds their parameters (the layers' own tensors: a step changes them).
    class Net(kl.nn.Module):
        def __init__(self):
            self.encoding = kl.nn.PositionalEncoding(2)
            self.mlp = kl.nn.Sequential(kl.nn.Linear(self.encoding.out_features(3), 4, seed=1),
                                        kl.nn.LeakyReLU(0.1), kl.nn.Linear(4, 2, bias=False, seed=2))

        def __call__(self, x):
            return self.mlp(self.encoding(x))

    net = Net()
    assert isinstance(kl.nn.ReLU(), kl.nn.Module) and type(kl.nn.Linear(1, 1)).__module__.startswith("kiln")
    params = net.parameters()
    assert [tuple(p.shape) for p in params] == [(15, 4), (4,), (4, 2)]
    assert net.encoding.n_frequencies == 2 and net.mlp.layers[1].slope == pytest.approx(0.1)
    x = kl.TensorXf(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
    before = net(x).numpy()
    opt = kl.nn.SGD(params, lr=0.1)
    kl.backward(net(x).sum())
    opt.step()
    assert not np.allclose(net(x).numpy(), before)


def test_layer_misuse_gives_clear_errors():
    class NoCall(kl.nn.Module):
        pass

    with pytest.raises(TypeError, match="abstract"):
        NoCall()
    with pytest.raises(ValueError, match="must not be negative"):
        kl.nn.Linear(-1, 2)
    with pytest.raises(ValueError, match="must not be negative"):
        kl.nn.PositionalEncoding(-3)
    with pytest.raises(TypeError):
        kl.nn.ReLU()("not a tensor")


def test_a_linear_layer_without_inputs_is_all_bias():
    # PyTorch's bound for no inputs is 0 (1 / sqrt(0) would be infinite).
    layer = kl.nn.Linear(0, 3, seed=2)
    assert layer.weight.shape == (0, 3) and np.abs(layer.bias.numpy()).max() == 0
