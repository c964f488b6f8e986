"""Nested Python values as flat lists of arrays, and back: the C++ cores (control flow,
AD, chunked_map) take flat lists of plain arrays, and Python code passes any nesting of
tuples, lists, dicts and dataclasses of Kiln arrays, vectors, matrices, tensors and PCG32
generators. flatten() writes a value's arrays and returns its structure (a Node);
unflatten() rebuilds a value of that structure; flatten_like() checks that a value has a
given structure, naming the place (``state['depth']``) and the fix when it does not.
control.py, autodiff.py, map.py and record.py use these names."""

import copy
import dataclasses

from ._kiln import Float, Float64, PCG32, _VALUE_CLASSES

# Kiln's value classes as the C++ binding lists them (binding.h): the arrays; the vector and
# matrix classes, each with (component class, number of arrays); the tensors; and those
# that can carry derivatives (float arrays, and the vectors, matrices and tensors of them).
ARRAYS = _VALUE_CLASSES["arrays"]
VECTORS = _VALUE_CLASSES["vectors"]
MATRICES = _VALUE_CLASSES["matrices"]
TENSORS = _VALUE_CLASSES["tensors"]
DIFFERENTIABLE = _VALUE_CLASSES["differentiable"]
_NUMPY_CLASSES = {"float32": "Float", "float64": "Float64", "uint32": "UInt32", "int32": "Int32",
                  "bool": "Bool", "uint64": "UInt64", "int64": "Int64"}


class Node:
    """The structure of a flattened value: its kind, class, keys and children (no arrays)."""

    __slots__ = ("kind", "type", "keys", "children", "template")

    def __init__(self, kind, type_, keys=None, children=(), template=None):
        self.kind = kind          # "array", "vector", "matrix", "pcg32", "tensor", "none", "tuple", "list", "dict", "dataclass"
        self.type = type_
        self.keys = keys          # dict keys / dataclass field names
        self.children = children
        self.template = template  # a dataclass instance to copy when rebuilding; a tensor's shape


def type_name(type_):
    """How an error message names a class: 'kl.Float' for Kiln's, else its name."""
    return f"kl.{type_.__name__}" if type_.__module__.startswith("kiln") else type_.__name__


def describe(value):
    """How an error message names a value: 'kl.Float', 'a tuple of 2', 'int'."""
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return f"a tuple of {len(value)}"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return f"a dict with keys {list(value)}"
    return "None" if value is None else type_name(type(value))


def _describe_node(node):
    if node.kind in ("tuple", "list") and node.type in (tuple, list):
        return f"a {node.kind} of {len(node.children)}"
    if node.kind == "dict":
        return f"a dict with keys {list(node.keys)}"
    return "None" if node.kind == "none" else type_name(node.type)


def _wrap_hint(value, expected=None):
    """How to turn a non-Kiln value into a Kiln one, for error messages."""
    if expected is not None and expected.kind == "array" and isinstance(value, (bool, int, float)):
        if expected.type in (Float, Float64):
            value = float(value)
        return f"wrap it in a Kiln array such as kl.{expected.type.__name__}({value!r})"
    if isinstance(value, bool):
        return f"wrap it in a Kiln array such as kl.Bool({value})"
    if isinstance(value, int):
        return f"wrap it in a Kiln array such as kl.{'UInt32' if value >= 0 else 'Int32'}({value})"
    if isinstance(value, float):
        return f"wrap it in a Kiln array such as kl.Float({value!r})"
    if type(value).__module__ == "numpy" and hasattr(value, "dtype"):
        return f"wrap it in a Kiln array such as kl.{_NUMPY_CLASSES.get(str(value.dtype), 'Float')}(array)"
    if value is None:
        return "give it a Kiln value such as kl.Float(0.0)"
    return ("control flow carries Kiln arrays, vectors, matrices and PCG32, inside tuples, lists, dicts "
            "and dataclasses")


def _kind_of(value):
    return "a NumPy array" if type(value).__module__ == "numpy" else describe(value)


def _not_kiln(path, value, what):
    """The TypeError for a value that is not a Kiln value, with the wrapping to use."""
    return TypeError(f"kiln: {what}: {path} is {_kind_of(value)}; {_wrap_hint(value)}")


def leaf_arrays(value):
    """(kind, arrays) of a Kiln value, or None when `value` is not one."""
    cls = type(value)
    if cls in ARRAYS:
        return "array", [value]
    if cls in VECTORS:
        return "vector", [value[i] for i in range(len(value))]
    if cls in MATRICES:
        n = len(value)
        return "matrix", [value[r, c] for r in range(n) for c in range(n)]
    if cls is PCG32:
        return "pcg32", [value.state, value.inc]
    if cls in TENSORS:
        return "tensor", [value.array]
    return None


def add_arrays(arrays, path, what, out):
    for array in arrays:
        if array.index == 0:
            raise ValueError(f"kiln: {what}: {path} has no value (default-constructed); assign it first")
    out.extend(arrays)


def _is_dataclass(value):
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def flatten(value, path, out, what, allow_none=False):
    """Appends the arrays inside `value` to `out` and returns its structure."""
    leaf = leaf_arrays(value)
    if leaf is not None:
        add_arrays(leaf[1], path, what, out)
        return Node(leaf[0], type(value), template=value.shape if leaf[0] == "tensor" else None)
    if isinstance(value, (tuple, list)):
        children = tuple(flatten(v, f"{path}[{i}]", out, what) for i, v in enumerate(value))
        return Node("list" if isinstance(value, list) else "tuple", type(value), children=children)
    if isinstance(value, dict):
        keys = tuple(value)
        children = tuple(flatten(value[k], f"{path}[{k!r}]", out, what) for k in keys)
        return Node("dict", type(value), keys, children)
    if _is_dataclass(value):
        keys = tuple(f.name for f in dataclasses.fields(value))
        children = tuple(flatten(getattr(value, k), f"{path}.{k}", out, what) for k in keys)
        return Node("dataclass", type(value), keys, children, template=value)
    if value is None and allow_none:
        return Node("none", type(None))
    raise _not_kiln(path, value, what)


def flatten_like(node, value, path, out, what, reference):
    """Appends the arrays inside `value`, which must have the structure `node`, to `out`."""
    def mismatch():
        message = f"kiln: {what} returned {_kind_of(value)} at {path}, expected {_describe_node(node)} ({reference})"
        kiln_or_container = (leaf_arrays(value) is not None or isinstance(value, (tuple, list, dict))
                             or _is_dataclass(value))
        if not kiln_or_container and node.kind != "none":
            message += "; " + _wrap_hint(value, node)
        return TypeError(message)

    if node.kind in ("array", "vector", "matrix", "pcg32", "tensor"):
        if type(value) is not node.type:
            raise mismatch()
        add_arrays(leaf_arrays(value)[1], path, what, out)
    elif node.kind == "none":
        if value is not None:
            raise mismatch()
    elif node.kind in ("tuple", "list"):
        plain = node.type in (tuple, list)
        if not (isinstance(value, (tuple, list)) and (plain or type(value) is node.type)):
            raise mismatch()
        if len(value) != len(node.children):
            raise mismatch()
        for i, (child, v) in enumerate(zip(node.children, value)):
            flatten_like(child, v, f"{path}[{i}]", out, what, reference)
    elif node.kind == "dict":
        if not isinstance(value, dict):
            raise mismatch()
        if set(value) != set(node.keys):
            raise mismatch()
        for k, child in zip(node.keys, node.children):
            flatten_like(child, value[k], f"{path}[{k!r}]", out, what, reference)
    else:  # dataclass
        if type(value) is not node.type:
            raise mismatch()
        for k, child in zip(node.keys, node.children):
            flatten_like(child, getattr(value, k), f"{path}.{k}", out, what, reference)


def _build(node, arrays):
    """The value of structure `node` over `arrays` (an iterator)."""
    kind = node.kind
    if kind == "array":
        return next(arrays)
    if kind == "vector":
        return node.type(*[next(arrays) for _ in range(VECTORS[node.type][1])])
    if kind == "matrix":
        return node.type(*[next(arrays) for _ in range(MATRICES[node.type][1])])
    if kind == "pcg32":
        rng = PCG32(1)
        rng.state = next(arrays)
        rng.inc = next(arrays)
        return rng
    if kind == "tensor":
        return node.type(next(arrays), list(node.template))
    if kind == "none":
        return None
    children = [_build(child, arrays) for child in node.children]
    if kind == "list":
        return node.type(children) if node.type is not list else children
    if kind == "tuple":
        if node.type is tuple:
            return tuple(children)
        return node.type(*children) if hasattr(node.type, "_fields") else node.type(children)
    if kind == "dict":
        return node.type(zip(node.keys, children))
    result = copy.copy(node.template)
    for k, child in zip(node.keys, children):
        object.__setattr__(result, k, child)
    return result


def unflatten(node, arrays):
    """The value of structure `node` over the list `arrays` (what flatten() wrote)."""
    return _build(node, iter(arrays))


def kiln_values(node, value, path):
    """(path, Kiln value) for each array, vector, matrix or PCG32 inside `value`, whose
    structure `node` is (flatten()'s), in flattening order."""
    kind = node.kind
    if kind in ("array", "vector", "matrix", "pcg32", "tensor"):
        yield path, value
    elif kind in ("tuple", "list"):
        for i, (child, item) in enumerate(zip(node.children, value)):
            yield from kiln_values(child, item, f"{path}[{i}]")
    elif kind == "dict":
        for key, child in zip(node.keys, node.children):
            yield from kiln_values(child, value[key], f"{path}[{key!r}]")
    elif kind == "dataclass":
        for key, child in zip(node.keys, node.children):
            yield from kiln_values(child, getattr(value, key), f"{path}.{key}")


def array_paths(node, path):
    """The path of each array flatten() writes for structure `node` (vector components
    as `.x`, matrix entries as `[r, c]`), for error messages."""
    kind = node.kind
    if kind in ("array", "tensor"):
        yield path
    elif kind == "vector":
        yield from (f"{path}.{c}" for c in "xyzw"[:VECTORS[node.type][1]])
    elif kind == "matrix":
        n = {4: 2, 9: 3, 16: 4}[MATRICES[node.type][1]]
        yield from (f"{path}[{r}, {c}]" for r in range(n) for c in range(n))
    elif kind == "pcg32":
        yield from (f"{path}.state", f"{path}.inc")
    elif kind in ("tuple", "list"):
        for i, child in enumerate(node.children):
            yield from array_paths(child, f"{path}[{i}]")
    elif kind in ("dict", "dataclass"):
        for key, child in zip(node.keys, node.children):
            yield from array_paths(child, f"{path}[{key!r}]" if kind == "dict" else f"{path}.{key}")
