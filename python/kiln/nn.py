"""kl.nn: small networks over kl.TensorXf. Layers are callables on tensors whose leading
axes are rows (a batch, or the sample points of a chunk); Linear is a matmul (OpenBLAS)
plus a broadcast bias. The optimizers are C++'s (kiln::nn::SGD, Adam): each step evaluates
every new parameter and moment in one kl.eval() (one kernel per distinct parameter size)
and makes each parameter a fresh AD leaf, so the graph never grows across steps."""

import math

from . import _kiln
from .autodiff import enable_grad
from ._kiln import TensorXf, Float

__all__ = ["Module", "Linear", "ReLU", "LeakyReLU", "Sigmoid", "Exp", "Sequential", "PositionalEncoding",
           "SGD", "Adam"]


def _scalar(value):
    return TensorXf(Float(float(value)), [])


class Module:
    """A layer or a network: call it on a tensor. parameters() lists every TensorXf
    parameter of this module and of the modules it holds (attributes, lists, tuples)."""

    def parameters(self):
        found, seen = [], set()

        def visit(value):
            if isinstance(value, TensorXf) and id(value) not in seen:
                seen.add(id(value))
                found.append(value)
            elif isinstance(value, Module):
                for item in vars(value).values():
                    visit(item)
            elif isinstance(value, (list, tuple)):
                for item in value:
                    visit(item)

        for item in vars(self).values():
            visit(item)
        return found

    def __call__(self, x):
        raise NotImplementedError


class Linear(Module):
    """x @ weight + bias, with weight (in_features, out_features) initialized uniformly in
    ±1/sqrt(in_features) (PyTorch's default) from `seed`, and the bias likewise (C++'s
    kiln::nn::Linear draws them). Without a seed, each layer takes the next of the
    process-wide seeds 0, 1, 2, ... (shared with C++): layers start different, and a program
    that builds the same layers in the same order starts the same every run."""

    def __init__(self, in_features, out_features, bias=True, seed=None):
        self.weight, bias_values = _kiln._linear_init(in_features, out_features, seed)
        self.bias = bias_values if bias else None
        enable_grad(self.weight)
        if bias:
            enable_grad(self.bias)

    def __call__(self, x):
        y = _kiln.matmul(x, self.weight)
        return y + self.bias if self.bias is not None else y


class ReLU(Module):
    def __call__(self, x):
        return _kiln.max(x, _scalar(0.0))


class LeakyReLU(Module):
    def __init__(self, slope=0.01):
        self.slope = float(slope)

    def __call__(self, x):
        return _kiln.select(x > 0.0, x, x * self.slope)


class Sigmoid(Module):
    def __call__(self, x):
        return 1.0 / (1.0 + _kiln.exp(-x))


class Exp(Module):
    def __call__(self, x):
        return _kiln.exp(x)


class Sequential(Module):
    def __init__(self, *layers):
        self.layers = list(layers)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class PositionalEncoding(Module):
    """NeRF's encoding of the last axis: (x, sin(2^k π x), cos(2^k π x) for k < n_frequencies),
    concatenated along it: d inputs become d * (1 + 2 n_frequencies) (or 2 d n without x)."""

    def __init__(self, n_frequencies, include_input=True):
        self.n_frequencies = int(n_frequencies)
        self.include_input = include_input

    def out_features(self, in_features):
        return in_features * (2 * self.n_frequencies + (1 if self.include_input else 0))

    def __call__(self, x):
        parts = [x] if self.include_input else []
        for k in range(self.n_frequencies):
            scaled = x * float(2.0 ** k * math.pi)
            parts += [_kiln.sin(scaled), _kiln.cos(scaled)]
        return _kiln.concatenate(parts, axis=x.ndim - 1)


class SGD(_kiln._SGD):
    """p ← p − lr · grad(p) (kiln::nn::SGD). The parameters (TensorXf) become AD leaves;
    step() updates them in place, zero_grad() clears their gradients, lr can be changed
    between steps."""

    def __init__(self, params, lr):
        self.params = list(params)  # the tensors the C++ optimizer updates through pointers
        super().__init__(self.params, lr)


class Adam(_kiln._Adam):
    """Adam (Kingma & Ba) with bias correction (kiln::nn::Adam); the parameters, step(),
    zero_grad() and lr as for SGD."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)  # the tensors the C++ optimizer updates through pointers
        super().__init__(self.params, lr, tuple(betas), eps)
