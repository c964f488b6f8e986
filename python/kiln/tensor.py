"""The plain-Python side of Kiln's tensors (kl.TensorXf ... TensorXb, bound from tensor.h):
NumPy-style indexing and assignment to indexed parts, NumPy/DLPack import and export, and
repr. Everything else is the C++ class."""

from . import _kiln
from ._kiln import TensorXf, TensorXd, TensorXu, TensorXi, TensorXb
from .tree import TENSORS

__all__ = ["tensor"]

_TENSOR_OF_ARRAY = {_kiln.Float: TensorXf, _kiln.Float64: TensorXd, _kiln.UInt32: TensorXu, _kiln.Int32: TensorXi,
                    _kiln.Bool: TensorXb}

TENSOR_TYPES = TENSORS
_END = 2 ** 63 - 1  # an open slice bound (Tensor.slice clamps it to the axis)


def _getitem(self, key):
    """t[i], t[a:b:c], t[i, :, 1:3], t[..., 0]: integers drop their axis, slices keep it."""
    keys = key if isinstance(key, tuple) else (key,)
    if sum(k is Ellipsis for k in keys) > 1:
        raise IndexError("kiln: Tensor[]: at most one ... per index")
    if Ellipsis in keys:
        at = keys.index(Ellipsis)
        fill = self.ndim - (len(keys) - 1)
        keys = keys[:at] + (slice(None),) * max(fill, 0) + keys[at + 1:]
    if len(keys) > self.ndim:
        raise IndexError(f"kiln: Tensor[]: {len(keys)} indices for a tensor of {self.ndim} axes")
    result, axis = self, 0
    for k in keys:
        if isinstance(k, slice):
            step = 1 if k.step is None else k.step
            if step == 0:
                raise ValueError("kiln: Tensor[]: slice step cannot be zero")
            start = k.start if k.start is not None else (0 if step > 0 else _END)
            stop = k.stop if k.stop is not None else (_END if step > 0 else -_END - 1)
            result = result.slice(axis, start, stop, step)
            axis += 1
        elif isinstance(k, int):
            n = result.shape[axis]
            if not -n <= k < n:
                raise IndexError(f"kiln: Tensor[]: index {k} is out of range for axis {axis} of {n}")
            result = result.slice(axis, k % n, k % n + 1)
            result = result.reshape(list(result.shape[:axis] + result.shape[axis + 1:]))
        else:
            raise TypeError(f"kiln: Tensor[]: indices are ints, slices and ..., got {type(k).__name__}")
    return result


def _setitem(self, key, value):
    """t[i, a:b, ...] = value: the elements t[key] selects take `value` (a number, or a tensor
    of the selection's shape or of one element), a scatter into a copy the tensor then
    refers to (kl.Tensor.assign: derivatives flow as through any scatter)."""
    positions = TensorXu(_kiln.arange(_kiln.UInt32, self.size()), list(self.shape))[key]
    array = type(self.array)(self.array)
    if isinstance(value, TENSOR_TYPES):
        if value.size() not in (1, positions.size()):
            raise ValueError(f"kiln: Tensor[] = value: the value has shape {value.shape}, the selection "
                             f"{positions.shape}")
        values = type(array)(value.array)
    else:
        values = type(array)(value)
    _kiln.scatter(array, values, positions.array)
    self.assign(type(self)(array, list(self.shape)))


def _numpy(self):
    """The elements (evaluated now) as a NumPy array of this shape, sharing Kiln's memory."""
    return self.array.numpy().reshape(self.shape)


def _array(self, dtype=None, copy=None):
    out = _numpy(self)
    if dtype is not None:
        out = out.astype(dtype)
    return out.copy() if copy else out


def tensor(values):
    """The Kiln tensor over a NumPy array or a DLPack tensor (PyTorch, JAX ...) on the CPU,
    without a copy when it is C-contiguous; the class follows the dtype (float32 → TensorXf,
    float64 → TensorXd, uint32 → TensorXu, int32 → TensorXi, bool → TensorXb)."""
    import numpy as np

    host = np.from_dlpack(values) if hasattr(values, "__dlpack__") and not isinstance(values, np.ndarray) \
        else np.asarray(values)
    flat = _kiln.from_dlpack(np.ascontiguousarray(host).reshape(-1))
    cls = _TENSOR_OF_ARRAY.get(type(flat))
    if cls is None:
        raise TypeError(f"kiln: tensor(): dtype {host.dtype} has no Kiln tensor class; use float32/64, uint32, "
                        "int32 or bool")
    return cls(flat, list(host.shape))


def _dlpack(self, **kwargs):
    """DLPack export of the evaluated memory with this shape (no copy: a GPU's memory as CUDA memory)."""
    return self.array._export(list(self.shape)).__dlpack__(**kwargs)


def _dlpack_device(self):
    """CUDA for tensors in a GPU's memory, else the host (as the tensor's array says)."""
    return self.array.__dlpack_device__()


def _torch(self):
    """A PyTorch tensor of this shape sharing the memory (needs PyTorch)."""
    import torch

    return torch.from_dlpack(self)


def _repr(self):
    import numpy as np

    body = np.array2string(_numpy(self), threshold=20, edgeitems=3, separator=", ")
    return f"{type(self).__name__}(shape={self.shape}, {body})"


for _cls in TENSOR_TYPES:
    _cls.__array_ufunc__ = None  # NumPy's operators defer to Kiln's: np_array * t is a Kiln tensor
    _cls.__getitem__ = _getitem
    _cls.__setitem__ = _setitem
    _cls.numpy = _numpy
    _cls.__array__ = _array
    _cls.__repr__ = _repr
    _cls.__dlpack__ = _dlpack
    _cls.__dlpack_device__ = _dlpack_device
    _cls.torch = _torch
    _cls.T = property(lambda self: self.transpose())
