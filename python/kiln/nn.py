"""kl.nn: small networks over kl.TensorXf. The layers (Linear, ReLU, LeakyReLU, Sigmoid, Exp,
PositionalEncoding) and the optimizers are C++'s (kiln/nn.h), bound as they are: layers are
callables on tensors whose leading axes are rows (a batch, or the sample points of a
chunk); Linear is a matmul (OpenBLAS) plus a broadcast bias. Each optimizer step evaluates
every new parameter and moment in one kl.eval() (one kernel per distinct parameter size) and
makes each parameter a fresh AD leaf, so the graph never grows across steps. Python adds
Module, the base of networks written in Python, and Sequential."""

import abc

from . import _kiln
from ._kiln import TensorXf
from ._kiln import _nn

Linear, ReLU, LeakyReLU, Sigmoid, Exp = _nn.Linear, _nn.ReLU, _nn.LeakyReLU, _nn.Sigmoid, _nn.Exp
PositionalEncoding = _nn.PositionalEncoding

__all__ = ["Module", "Linear", "ReLU", "LeakyReLU", "Sigmoid", "Exp", "Sequential", "PositionalEncoding",
           "SGD", "Adam"]

_LAYERS = (Linear, ReLU, LeakyReLU, Sigmoid, Exp, PositionalEncoding)


class Module(abc.ABC):
    """A layer or a network: call it on a tensor. parameters() lists every TensorXf
    parameter of this module and of the modules it holds (attributes, lists, tuples). The
    C++ layers count as Modules."""

    def parameters(self):
        found, seen = [], set()

        def visit(value):
            if isinstance(value, TensorXf) and id(value) not in seen:
                seen.add(id(value))
                found.append(value)
            elif isinstance(value, _LAYERS):
                for item in value.parameters():
                    visit(item)
            elif isinstance(value, Module):
                for item in vars(value).values():
                    visit(item)
            elif isinstance(value, (list, tuple)):
                for item in value:
                    visit(item)

        for item in vars(self).values():
            visit(item)
        return found

    @abc.abstractmethod
    def __call__(self, x):
        """The module applied to x."""


for _layer in _LAYERS:
    Module.register(_layer)
del _layer


class Sequential(Module):
    """The layers (any callables: C++ layers, Modules, functions) applied in order."""

    def __init__(self, *layers):
        self.layers = list(layers)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


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
