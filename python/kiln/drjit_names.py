"""Dr.Jit's names for what Kiln does, so that scripts written with `import drjit as dr` run with
`import kiln as dr` (issue 29): constants, ADFlag/ADMode, slice, maximum/minimum, square, sum,
prod and mean taking what Dr.Jit's take (Python sequences, and vectors reduced over their
components), and the constructors taking a type first (zeros, unravel ...) returning a
Python subclass of a Kiln type (kiln.render's Point3f) as that subclass. Kiln's own spellings stay as they are; where both exist, both work."""

import enum
import functools
import math
import operator

from . import _kiln
from .tensor import TENSOR_TYPES
from .tree import ARRAYS as _ARRAYS

pi = math.pi
two_pi = 2.0 * math.pi
four_pi = 4.0 * math.pi
inv_pi = 1.0 / math.pi
inv_two_pi = 0.5 / math.pi
inv_four_pi = 0.25 / math.pi
sqrt_two = math.sqrt(2.0)
inv_sqrt_two = 1.0 / math.sqrt(2.0)
e = math.e
inf = math.inf
nan = math.nan


class ADFlag(enum.IntFlag):
    """Dr.Jit's traversal flags. Kiln keeps or frees a traversed graph as a whole: a flag
    set that clears edges frees it (Kiln's default), ClearNone keeps it (retain_graph)."""

    ClearNone = 0
    ClearEdges = 1
    ClearInput = 2
    ClearInterior = 4
    ClearVertices = ClearInput | ClearInterior
    AllowNoGrad = 8
    Default = ClearEdges | ClearVertices


class ADMode(enum.Enum):
    """Dr.Jit's differentiation modes (CustomOp and integrators receive them)."""

    Primal = 0
    Forward = 1
    Backward = 2


def retain_graph_of(flags):
    """Kiln's retain_graph for Dr.Jit's `flags` (a bool stays what it is)."""
    if isinstance(flags, bool):
        return flags
    return not (ADFlag(flags) & ADFlag.ClearEdges)


def deg2rad(value):
    return value * (math.pi / 180.0)


def rad2deg(value):
    return value * (180.0 / math.pi)


def _pair(native, a, b, python):
    """native(a, b) for Kiln values (a Python number beside a tensor becomes one of its
    type, as Kiln's tensor functions take tensors only), python(a, b) for numbers."""
    if not (_is_kiln(a) or _is_kiln(b)):
        return python(a, b)
    if isinstance(a, (int, float)) and type(b) in TENSOR_TYPES:
        a = type(b)(a)
    elif isinstance(b, (int, float)) and type(a) in TENSOR_TYPES:
        b = type(a)(b)
    return native(a, b)


def maximum(a, b):
    """Elementwise maximum (Dr.Jit's name for Kiln's two-argument max)."""
    return _pair(_kiln.max, a, b, lambda x, y: x if x > y else y)


def minimum(a, b):
    """Elementwise minimum (Dr.Jit's name for Kiln's two-argument min)."""
    return _pair(_kiln.min, a, b, lambda x, y: x if x < y else y)


def square(value):
    """value * value, for Kiln values and anything else that multiplies (a NumPy array), as
    Dr.Jit's square."""
    return _kiln.square(value) if _is_kiln(value) else value * value


sqr = square  # Dr.Jit's older name


def slice(value, index=0):
    """Lane `index` of `value` on the host: a Python number for an array, the vector of
    one lane for a vector (Dr.Jit's dr.slice)."""
    if isinstance(value, (int, float, bool)):
        return value
    if isinstance(value, _ARRAYS):
        lanes = value.numpy()
        return lanes[index if len(lanes) > 1 else 0].item()  # one lane stands for every lane
    if hasattr(value, "__len__") and hasattr(value, "x"):
        return type(value)(*[slice(value[i], index) for i in range(len(value))])
    raise TypeError(f"slice(): expected a Kiln array or vector, got {type(value).__name__}")


def _is_kiln(value):
    return type(value).__module__.startswith("kiln")


def _vector_components(value):
    """The components of a Kiln vector (Array3f ...), or None for anything else."""
    if _is_kiln(value) and hasattr(value, "x") and hasattr(value, "__len__") and not isinstance(value, _ARRAYS):
        return [value[i] for i in range(len(value))]
    return None


def _reduction(native, combine, average=False):
    """`native` (Kiln's reduction over lanes) also taking Python sequences (reduced on the
    host) and vectors (reduced over their components, per lane), as Dr.Jit's does."""

    @functools.wraps(native)
    def reduce(value, *args, **kwargs):
        if isinstance(value, (list, tuple)) and not args and not kwargs:
            total = functools.reduce(combine, value)
            return total / len(value) if average else total
        components = _vector_components(value) if not args and not kwargs else None
        if components is not None:
            total = functools.reduce(combine, components)
            return total * (1.0 / len(components)) if average else total
        return native(value, *args, **kwargs)

    return reduce


sum = _reduction(_kiln.sum, operator.add)
prod = _reduction(_kiln.prod, operator.mul)
mean = _reduction(_kiln.mean, operator.add, average=True)


def _dr_constructor(native, value_first=False, records=False):
    """`native(type, ...)` (Kiln's zeros, full, unravel ...) also taking what Dr.Jit's takes:
    a Python subclass of a Kiln type (kiln.render's Point3f: the result is made one, sharing
    the components), a tensor type with a shape (`dr.full(TensorXf, value, (h, w, c))`,
    `value_first` for full's argument order) and, with `records`, kiln.render's records
    (kr.SurfaceInteraction3f: its default value, one lane of zeros that broadcasts); the
    size or shape may be given as the keyword `shape`."""

    @functools.wraps(native)
    def construct(cls, *args, **kwargs):
        if "shape" in kwargs:  # Dr.Jit's keyword for the size or shape argument
            args = (*args, kwargs.pop("shape"))
        module = getattr(cls, "__module__", None)
        if module == "kiln._kiln":
            if cls in TENSOR_TYPES and args and not kwargs:
                value, shape = (args[0], args[1] if len(args) > 1 else None) if value_first else (None, args[0])
                if isinstance(shape, (tuple, list)):
                    shape = [int(n) for n in shape]
                    count = functools.reduce(operator.mul, shape, 1)
                    array_type = type(cls().array)
                    flat = native(array_type, value, count) if value_first else native(array_type, count)
                    return cls(flat, shape)
        elif records and module == "kiln._kiln_render":
            return cls()
        elif isinstance(cls, type):
            base = next((c for c in cls.__mro__ if c.__module__ == "kiln._kiln"), None)
            if base is not None:
                return cls(native(base, *args, **kwargs))
        return native(cls, *args, **kwargs)

    return construct


zeros = _dr_constructor(_kiln.zeros, records=True)
ones = _dr_constructor(_kiln.ones)
full = _dr_constructor(_kiln.full, value_first=True)
empty = _dr_constructor(_kiln.empty)
unravel = _dr_constructor(_kiln.unravel)


def gather(dtype_or_source, *args, mode=None, **kwargs):
    """Kiln's gather(source, index, active) and Dr.Jit's gather(dtype, source, index, active):
    the type first names the result (the source's own type, also a vector gathered
    component by component; a vector type over a flat source; or a Python subclass of
    either, such as kiln.render's Point3f). `mode` (Dr.Jit's memory access hint) changes
    nothing."""
    if not isinstance(dtype_or_source, type):
        return _kiln.gather(dtype_or_source, *args, **kwargs)
    base = next((c for c in dtype_or_source.__mro__ if c.__module__ == "kiln._kiln"), dtype_or_source)
    source, rest = (args[0], args[1:]) if args else (None, ())
    components = _vector_components(source) if source is not None else None
    if components is not None and isinstance(source, base):  # a vector of arrays, per component
        result = base(*[_kiln.gather(c, *rest, **kwargs) for c in components])
    elif isinstance(source, base):  # Dr.Jit's spelling of a plain gather
        result = _kiln.gather(source, *rest, **kwargs)
    else:
        result = _kiln.gather(base, *args, **kwargs)
    return result if base is dtype_or_source else dtype_or_source(result)


def scatter(target, value, index, active=None, mode=None, **kwargs):
    """target[index] = value on active lanes (Kiln's scatter), also with Dr.Jit's operands: an
    index given as a Python list or NumPy array, a value as a list. `mode` (Dr.Jit's memory
    access hint) changes nothing."""
    if _is_sequence(index):
        index = _kiln.UInt32(index)
    if _is_sequence(value):
        value = type(target)(value)
    return _kiln.scatter(target, value, index, active, **kwargs)


def _is_sequence(value):
    """A Python list or tuple, or a NumPy array: what Dr.Jit takes where an array goes."""
    return isinstance(value, (list, tuple)) or (hasattr(value, "__array__") and not _is_kiln(value))
