"""kl.nn: small networks over kl.TensorXf. Layers are callables on tensors whose leading
axes are rows (a batch, or the sample points of a chunk); Linear is a matmul (OpenBLAS)
plus a broadcast bias. Optimizers update parameters in place: each step evaluates every
new parameter and moment in one kl.eval() (one kernel per distinct parameter size) and
makes each parameter a fresh AD leaf, so the graph never grows across steps."""

import math

from . import _kiln
from .autodiff import enable_grad, grad, clear_grad, detach, suspend_grad
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


class _Optimizer:
    def __init__(self, params, lr):
        self.params = list(params)
        self.lr = float(lr)
        for p in self.params:
            if not isinstance(p, TensorXf):
                raise TypeError(f"kiln: {type(self).__name__}(): parameters are TensorXf, got {type(p).__name__}")
            enable_grad(p)

    def zero_grad(self):
        for p in self.params:
            clear_grad(p)

    def _commit(self, updates):
        """Evaluates every (tensor, new value) together, then assigns: parameters become fresh
        AD leaves (their gradients start from zero)."""
        _kiln.eval([new.array for _, new in updates])
        for target, new in updates:
            target.assign(detach(new))
        for p in self.params:
            enable_grad(p)


class SGD(_Optimizer):
    """p ← p − lr · grad(p)."""

    def step(self):
        with suspend_grad():
            self._commit([(p, TensorXf(p.array - grad(p).array * self.lr, list(p.shape))) for p in self.params])


class Adam(_Optimizer):
    """Adam (Kingma & Ba) with bias correction."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        super().__init__(params, lr)
        self.beta1, self.beta2 = (float(b) for b in betas)
        self.eps = float(eps)
        self.t = 0
        self.m = [TensorXf(_kiln.zeros(Float, p.size()), list(p.shape)) for p in self.params]
        self.v = [TensorXf(_kiln.zeros(Float, p.size()), list(p.shape)) for p in self.params]

    def step(self):
        with suspend_grad():
            self._adam_step()

    def _adam_step(self):
        self.t += 1
        # The step size changes every step: an opaque value, so the update kernel is compiled once.
        scale = _kiln.opaque(Float, self.lr * math.sqrt(1 - self.beta2 ** self.t) / (1 - self.beta1 ** self.t))
        updates = []
        for p, m, v in zip(self.params, self.m, self.v):
            g = grad(p).array
            m_new = m.array * self.beta1 + g * (1 - self.beta1)
            v_new = v.array * self.beta2 + g * g * (1 - self.beta2)
            p_new = p.array - scale * m_new / (_kiln.sqrt(v_new) + self.eps)
            shape = list(p.shape)
            updates += [(m, TensorXf(m_new, shape)), (v, TensorXf(v_new, shape)), (p, TensorXf(p_new, shape))]
        self._commit(updates)
