"""PyTorch interop with derivatives, in both directions (needs PyTorch; kiln imports this
module on the first call of kl.wrap_torch() or kl.torch_op()).

- ``kl.wrap_torch(fn)``: a Kiln function (Kiln values in and out) as a PyTorch function
  (tensors in and out) inside a ``torch.autograd.Function``. Tensors become Kiln values
  without a copy (DLPack) and back; torch's backward runs Kiln's reverse mode seeded
  with torch's gradients, forward-mode AD (dual tensors) runs Kiln's forward mode.
- ``kl.torch_op(fn)``: a PyTorch function as a Kiln function inside a ``kl.CustomOp``:
  Kiln's traversals call ``torch.autograd.grad`` on the graph that ``fn`` recorded
  (reverse mode; forward mode by the double-backward trick).

Tensors map to Kiln values by shape and dtype: 1-D (and 0-D) tensors to arrays of the
same dtype, (n, N) float32 to Array2f/3f/4f ((n, 3) float64 to Array3f64, int32 to
Array2i/3i), (n, N, N) float32 to Matrix2f/3f/4f, and other float32 / float64 shapes to
kl.TensorXf / TensorXd (a render's image, say). CPU tensors only.

    f = kl.wrap_torch(lambda x: kl.sin(x) * x)
    x = torch.linspace(0, 1, 100, requires_grad=True)
    f(x).sum().backward()           # x.grad from Kiln's reverse mode
"""

import torch

from . import _kiln, autodiff, tree
from ._kiln import Array2f, Array3f, Array4f, Array2i, Array3i, Array3f64, Matrix2f, Matrix3f, Matrix4f

__all__ = ["wrap_torch", "torch_op"]

_VECTOR_CLASSES = {(torch.float32, 2): Array2f, (torch.float32, 3): Array3f, (torch.float32, 4): Array4f,
                   (torch.float64, 3): Array3f64, (torch.int32, 2): Array2i, (torch.int32, 3): Array3i}
_MATRIX_CLASSES = {2: Matrix2f, 3: Matrix3f, 4: Matrix4f}
_TENSOR_CLASSES = {torch.float32: _kiln.TensorXf, torch.float64: _kiln.TensorXd}
# What crosses to torch (through DLPack): every Kiln array, vector and matrix, and the float
# tensors (torch's unsigned and boolean DLPack imports are partial).
_KILN_VALUES = (tree.ARRAYS + tuple(tree.VECTORS) + tuple(tree.MATRICES) +
                tuple(t for t in tree.TENSORS if t in tree.DIFFERENTIABLE))


def to_kiln(tensor, what="to_kiln()"):
    """The Kiln value over a CPU tensor's memory (copied first only when the tensor is not
    contiguous); detached from torch's autograd."""
    t = tensor.detach()
    if t.device.type != "cpu":
        raise ValueError(f"kiln: {what}: the tensor is on {t.device}; Kiln runs on the CPU (use .cpu())")
    t = t.contiguous()
    if t.ndim == 0:
        t = t.reshape(1)
    if t.ndim == 1:
        return _kiln.from_dlpack(t)
    if t.ndim == 2 and (t.dtype, t.shape[1]) in _VECTOR_CLASSES:
        return _VECTOR_CLASSES[t.dtype, t.shape[1]](t)
    if t.ndim == 3 and t.dtype == torch.float32 and t.shape[1] == t.shape[2] and t.shape[1] in _MATRIX_CLASSES:
        return _MATRIX_CLASSES[t.shape[1]](t)
    if t.dtype in _TENSOR_CLASSES:
        return _TENSOR_CLASSES[t.dtype](_kiln.from_dlpack(t.reshape(-1)), tuple(t.shape))
    raise TypeError(f"kiln: {what}: no Kiln type for a {t.dtype} tensor of shape {tuple(t.shape)}; Kiln takes "
                    "1-D tensors, (n, 2/3/4) float32 vectors, (n, N, N) float32 matrices and float32 / float64 "
                    "tensors of other shapes (kl.TensorXf / TensorXd)")


def like(value, tensor, what):
    """`tensor` as a Kiln value of `value`'s type (a gradient for it): a Kiln tensor of the
    tensor's shape for a Kiln tensor, else as to_kiln() maps it."""
    if isinstance(value, tree.TENSORS):
        return type(value)(_kiln.from_dlpack(tensor.detach().contiguous().reshape(-1)), tuple(tensor.shape))
    return to_kiln(tensor, what)


def to_torch(value):
    """A tensor sharing the (evaluated) memory of a Kiln value: (n,), (n, N) or (n, N, N)."""
    return torch.from_dlpack(value)


def _is_float_tensor(value):
    return isinstance(value, torch.Tensor) and value.is_floating_point()


def _as_tuple(result):
    return (tuple(result), True) if isinstance(result, (tuple, list)) else ((result,), False)


# ---------------------------------------------------------------------------------------
# Kiln inside torch

def wrap_torch(fn, name=None):
    """``fn`` (Kiln values in, a Kiln value or a tuple of them out) as a function of torch
    tensors that torch can differentiate, in reverse mode (``.backward()``,
    ``torch.autograd.grad``) and forward mode (``torch.autograd.forward_ad``). Arguments
    that are not tensors, and keyword arguments, are passed through unchanged. The Kiln graph
    lives as long as torch's does, so backward may run more than once (retain_graph=True in
    torch)."""
    label = name or getattr(fn, "__name__", "fn")

    class KilnFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, kwargs, *args):
            inputs = tuple(to_kiln(a, f"wrap_torch({label})") if isinstance(a, torch.Tensor) else a for a in args)
            ctx.differentiable = [k for k, a in enumerate(args) if _is_float_tensor(a)]
            ctx.shapes = [a.shape if isinstance(a, torch.Tensor) else None for a in args]
            ctx.dtypes = [a.dtype if isinstance(a, torch.Tensor) else None for a in args]
            for k in ctx.differentiable:
                autodiff.enable_grad(inputs[k])
            outputs, ctx.spread = _as_tuple(fn(*inputs, **kwargs))
            for k, value in enumerate(outputs):
                if type(value) not in _KILN_VALUES:
                    raise TypeError(f"kiln: wrap_torch({label}): output {k} is {tree.describe(value)}; fn must "
                                    "return a Kiln value or a tuple of them")
            ctx.inputs, ctx.outputs = inputs, outputs
            tensors = tuple(to_torch(value) for value in outputs)
            ctx.mark_non_differentiable(*[t for t in tensors if not t.is_floating_point()])
            return tensors if ctx.spread else tensors[0]

        @staticmethod
        def backward(ctx, *grad_outputs):
            ys, seeds = [], []
            for value, g in zip(ctx.outputs, grad_outputs):
                if g is not None and autodiff.grad_enabled(value):
                    ys.append(value)
                    seeds.append(like(value, g.to(to_torch(value).dtype), f"wrap_torch({label}).backward"))
            differentiable = [ctx.inputs[k] for k in ctx.differentiable]
            autodiff.clear_grad(differentiable)  # tangents or adjoints of an earlier traversal
            if ys:
                # The graph is kept for a second backward; it is freed with torch's graph (ctx).
                autodiff.backward_from(tuple(ys), tuple(seeds), retain_graph=True)
            grads = [None] * len(ctx.inputs)
            for k in ctx.differentiable:
                grads[k] = to_torch(autodiff.grad(ctx.inputs[k])).reshape(ctx.shapes[k])
            autodiff.clear_grad(differentiable)
            return (None, *grads)  # none for the keyword arguments

        @staticmethod
        def jvp(ctx, _kwargs_tangent, *grad_inputs):
            xs, seeds = [], []
            for k in ctx.differentiable:
                if grad_inputs[k] is not None:
                    xs.append(ctx.inputs[k])
                    seeds.append(like(ctx.inputs[k], grad_inputs[k].to(ctx.dtypes[k]), f"wrap_torch({label}).jvp"))
            differentiable = [ctx.inputs[k] for k in ctx.differentiable]
            autodiff.clear_grad(differentiable)
            if xs:
                autodiff.forward_from(tuple(xs), tuple(seeds))
            tangents = tuple(to_torch(autodiff.grad(v)) if autodiff.grad_enabled(v) else None for v in ctx.outputs)
            autodiff.clear_grad(differentiable)
            autodiff.clear_grad([v for v in ctx.outputs if autodiff.grad_enabled(v)])
            return tangents if ctx.spread else tangents[0]

    def call(*args, **kwargs):
        return KilnFunction.apply(kwargs, *args)

    call.__name__ = label
    call.__doc__ = fn.__doc__
    return call


# ---------------------------------------------------------------------------------------
# torch inside Kiln

class TorchOp(autodiff.CustomOp):
    """kl.CustomOp running a PyTorch function (torch_op()): eval converts the inputs to
    tensors (no copy), runs ``fn`` with torch's autograd on and keeps its graph."""

    def __init__(self, fn, label):
        self.fn = fn
        self.label = label

    def name(self):
        return f"torch_op({self.label})"

    def eval(self, *args):
        self.tensors = [to_torch(a) if type(a) in _KILN_VALUES else a for a in args]
        self.differentiable = [k for k, t in enumerate(self.tensors) if _is_float_tensor(t)]
        for k in self.differentiable:
            self.tensors[k] = self.tensors[k].detach().requires_grad_(True)
        with torch.enable_grad():
            result = self.fn(*self.tensors)
        self.results, self.spread = _as_tuple(result)
        outputs = tuple(to_kiln(r, self.name()) for r in self.results)
        return outputs if self.spread else outputs[0]

    def backward(self, *grad_outputs):
        pairs = [(r, to_torch(g).reshape(r.shape)) for r, g in zip(self.results, grad_outputs) if r.requires_grad]
        grads = [None] * len(self.tensors)
        wanted = [self.tensors[k] for k in self.differentiable]
        if pairs and wanted:
            found = torch.autograd.grad([r for r, _ in pairs], wanted, [g for _, g in pairs], retain_graph=True,
                                        allow_unused=True)
            for k, g in zip(self.differentiable, found):
                grads[k] = None if g is None else to_kiln(g, self.name())
        return tuple(grads)

    def forward(self, *grad_inputs):
        # J·t by the double-backward trick on the graph eval() kept: with w a dummy adjoint,
        # Jᵀw is linear in w and its derivative along t is J·t. Unlike torch.func.jvp this
        # neither re-runs fn nor needs a dual level (there may be one already: wrap_torch).
        results = [r for r in self.results if r.requires_grad]
        wanted = [self.tensors[k] for k in self.differentiable]
        tangents = [torch.zeros_like(r) for r in self.results]
        if results and wanted:
            dummies = [torch.zeros_like(r, requires_grad=True) for r in results]
            with torch.enable_grad():
                vjps = torch.autograd.grad(results, wanted, dummies, create_graph=True, retain_graph=True,
                                           allow_unused=True)
            pairs = [(v, to_torch(grad_inputs[k]).reshape(v.shape)) for k, v in zip(self.differentiable, vjps)
                     if v is not None and v.requires_grad]
            if pairs:
                found = torch.autograd.grad([v for v, _ in pairs], dummies, [t for _, t in pairs], allow_unused=True)
                found = iter(found)
                tangents = [next(found) if r.requires_grad else t for r, t in zip(self.results, tangents)]
                tangents = [torch.zeros_like(r) if t is None else t for r, t in zip(self.results, tangents)]
        converted = tuple(to_kiln(t, self.name()) for t in tangents)
        return converted if self.spread else converted[0]


def torch_op(fn, name=None):
    """``fn`` (tensors in, a tensor or a tuple of them out) as a Kiln function (Kiln values
    in and out) whose derivatives come from torch's autograd: torch.autograd.grad on the
    graph ``fn`` recorded, in reverse mode and (differentiating that again) forward mode."""
    label = name or getattr(fn, "__name__", "fn")

    def call(*args):
        return autodiff.custom(TorchOp(fn, label), *args)

    call.__name__ = label
    call.__doc__ = fn.__doc__
    return call
