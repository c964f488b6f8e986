"""Kiln: a just-in-time compiler for differentiable array programs.

Array code on ``kiln.Float``, ``kiln.Array3f`` ... is traced, fused into kernels, compiled
with LLVM to vectorized multi-core CPU code and cached (in memory and on disk). The C++
core does the work; this package adds only what is plain Python: ``repr``, the NumPy array
protocol, DLPack export, ``torch()``, (``tree.py``) the flattening of Python containers
of Kiln values into the C++ cores' flat lists of arrays, (``control.py``) control flow
over such containers: ``while_loop``, ``if_stmt``, ``dispatch``, ``print_async``,
(``record.py``) ``Recorder``, (``autodiff.py``) automatic differentiation over them:
``enable_grad``, ``grad``, ``backward``, ``forward``, the gradient scopes, ``CustomOp`` and
``check_grads``, and (``torch_interop.py``, imported on first use) ``wrap_torch`` and
``torch_op`` between Kiln's and PyTorch's autograd.

    import kiln as kl
    x = kl.linspace(kl.Float, 0, 1, 1_000_000)
    y = kl.sqrt(x) * 2 + 1          # traced, not computed
    print(kl.sum(y).item())         # one fused kernel
"""

from ._kiln import *  # noqa: F401,F403  (the whole C++ API)
from ._kiln import (Bool, Int32, UInt32, Int64, UInt64, Float, Float64, Array2f, Array3f,
                    Array4f, Array2u, Array3u, Array2i, Array3i, Array3f64, Matrix2f, Matrix3f,
                    Matrix4f)
from .control import while_loop, if_stmt, Registry, dispatch, print_async  # noqa: F401
from .record import Recorder  # noqa: F401
from .autodiff import (enable_grad, grad, set_grad, accumulate_grad, clear_grad, detach,  # noqa: F401
                       grad_enabled, backward, backward_from, backward_to, forward, forward_from, forward_to,
                       suspend_grad, resume_grad, isolate_grad, deferred_backward, CustomOp, custom, check_grads)
from .drjit_names import (ADFlag, ADMode, pi, two_pi, four_pi, inv_pi, inv_two_pi, inv_four_pi,  # noqa: F401
                          sqrt_two, inv_sqrt_two, e, inf, nan, deg2rad, rad2deg, maximum, minimum, square, sqr, slice,
                          sum, prod, mean, zeros, ones, full, empty, unravel, gather, scatter)
from .syntax import syntax  # noqa: F401
from .spherical_harmonics import sh_eval  # noqa: F401
from .resample import resample, upsample  # noqa: F401
from .tensor import TENSOR_TYPES, tensor  # noqa: F401  (also adds indexing, numpy(), DLPack and repr)
from .map import chunked_map, checkpoint  # noqa: F401
from . import nn  # noqa: F401
from . import tree as _tree
from ._kiln import _is_gpu_memory
import contextlib as _contextlib

__version__ = "0.1.0"

ARRAY_TYPES = _tree.ARRAYS
VECTOR_TYPES = tuple(_tree.VECTORS)
MATRIX_TYPES = tuple(_tree.MATRICES)

_REPR_LIMIT = 20  # elements shown before "..."
_DLPACK_CPU = (1, 0)  # (kDLCPU, device 0)
_DLPACK_CUDA = (2, 0)  # (kDLCUDA, device 0)


def _format(values):
    """Nested lists of NumPy scalars, each printed at its own precision; long outer axes
    show their ends."""
    if values.ndim == 0:
        return str(values)
    if len(values) > _REPR_LIMIT:
        half = _REPR_LIMIT // 2
        items = [_format(v) for v in values[:half]] + ["..."] + [_format(v) for v in values[-half:]]
    else:
        items = [_format(v) for v in values]
    return "[" + ", ".join(items) + "]"


def _repr(self):
    """``Float([0, 0.5, 1])``; long arrays show their ends and their size."""
    values = self.numpy()
    size = f", size={len(values)}" if len(values) > _REPR_LIMIT else ""
    return f"{type(self).__name__}({_format(values)}{size})"


_numpy_layout = "lanes"


def numpy_layout():
    """How np.array() lays out a vector's or matrix's values (see set_numpy_layout)."""
    return _numpy_layout


def set_numpy_layout(layout):
    """'lanes' (Kiln's default): np.array(v) of a vector is (lanes, N), of a matrix (lanes, N,
    N), as .numpy() gives them and the constructors read them; 'components' (Dr.Jit's):
    (N, lanes) and (N, N, lanes), a view of the same memory. kiln.render.set_variant picks
    'components', which Mitsuba scripts expect (np.array(color)[0] is the red channel)."""
    global _numpy_layout
    if layout not in ("lanes", "components"):
        raise ValueError(f"kiln: set_numpy_layout(): 'lanes' or 'components', not {layout!r}")
    _numpy_layout = layout


def _array(self, dtype=None, copy=None):
    """The NumPy array protocol: shares Kiln's memory unless a dtype change or a copy is asked."""
    result = self.numpy()
    if _numpy_layout == "components" and result.ndim > 1:
        result = result.transpose(tuple(range(1, result.ndim)) + (0,))
    if dtype is not None and result.dtype != dtype:
        return result.astype(dtype)
    return result.copy() if copy else result


def _dlpack(self, **kwargs):
    """DLPack export of the evaluated memory (no copy); keyword arguments as in the standard."""
    return self._export().__dlpack__(**kwargs)


def _dlpack_device(self):
    """CUDA for arrays in a GPU's memory, else the host (the emulated device's memory is the host's)."""
    return _DLPACK_CUDA if _is_gpu_memory(self.device) else _DLPACK_CPU


def _device(self):
    """'cpu' or 'cuda': where the value's arrays are."""
    arrays = []
    _tree.flatten(self, "value", arrays, "device")
    return arrays[0].device if arrays else default_device()


def _to(self, device):
    """The value with its arrays on ``device`` ('cpu' or 'cuda'): copies where they are elsewhere."""
    arrays = []
    structure = _tree.flatten(self, "value", arrays, "to()")
    return _tree.unflatten(structure, [a.to(device) for a in arrays])


@_contextlib.contextmanager
def device_scope(device):
    """``with kl.device_scope("cuda"):`` creates new arrays on ``device``, then restores the
    previous default device (kl.set_device changes it for good)."""
    previous = default_device()
    set_device(device)
    try:
        yield
    finally:
        set_device(previous)


def wrap_torch(fn):
    """A PyTorch-differentiable version of the Kiln function ``fn`` (tensors in and out,
    zero-copy): see kiln.torch_interop. Needs PyTorch."""
    from .torch_interop import wrap_torch as wrap

    return wrap(fn)


def torch_op(fn):
    """A Kiln-differentiable version of the PyTorch function ``fn`` (Kiln values in and
    out): see kiln.torch_interop. Needs PyTorch."""
    from .torch_interop import torch_op as wrap

    return wrap(fn)


def wrap(source, target):
    """Dr.Jit 1.x's decorator for mixing frameworks: ``@kl.wrap(source='torch',
    target='drjit')`` makes a Kiln function callable from PyTorch code (wrap_torch), and
    ``@kl.wrap(source='drjit', target='torch')`` a PyTorch function callable from Kiln code
    (torch_op). 'kiln' may stand for 'drjit'; PyTorch is the only other framework."""
    def framework(name):
        if name in ("drjit", "kiln"):
            return "kiln"
        if name == "torch":
            return "torch"
        raise ValueError(f"kiln: wrap(): '{name}' is not a framework Kiln wraps (accepted: 'drjit' or 'kiln', 'torch')")

    pair = (framework(source), framework(target))
    if pair == ("torch", "kiln"):
        return wrap_torch
    if pair == ("kiln", "torch"):
        return torch_op
    raise ValueError(f"kiln: wrap(): source and target must differ, one of them 'torch', got {source!r}, {target!r}")


def _torch(self):
    """A PyTorch tensor sharing the memory (needs PyTorch)."""
    import torch

    return torch.from_dlpack(self)


for _type in ARRAY_TYPES + VECTOR_TYPES + MATRIX_TYPES:
    _type.__array_ufunc__ = None  # NumPy's operators defer to Kiln's: np_array * x is a Kiln value
    _type.__repr__ = _repr
    _type.__array__ = _array
    _type.__dlpack__ = _dlpack
    _type.__dlpack_device__ = _dlpack_device
    _type.torch = _torch
for _type in VECTOR_TYPES + MATRIX_TYPES + TENSOR_TYPES:
    _type.device = property(_device)
    _type.to = _to
del _type
