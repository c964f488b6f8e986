"""kl.chunked_map and kl.checkpoint (map.h in C++): memory-bounded differentiation. The
inputs are flattened into plain arrays for the C++ core (src/control/chunked_map.cpp),
which runs fn chunk by chunk and recomputes each chunk in reverse mode; this module only
slices the structure: tensors and arrays of the mapped inputs get the chunk's rows, and
fn's results are checked and flattened the same way."""

from . import _kiln
from .tree import flatten, unflatten, Node, describe

__all__ = ["chunked_map", "checkpoint"]

_ITEM_BYTES = {_kiln.Float: 4, _kiln.Float64: 8, _kiln.UInt32: 4, _kiln.Int32: 4, _kiln.Bool: 1, _kiln.UInt64: 8,
               _kiln.Int64: 8}


def _rows_and_width(node, array, title, path):
    if node.kind == "tensor":
        if not node.template:
            raise _kiln.SizeError(f"kiln: {title}: {path} is a 0-d tensor; it has no rows to map over")
        rows = node.template[0]
        return rows, (len(array) // rows if rows else 0)
    if node.kind == "array":
        return len(array), 1
    raise TypeError(f"kiln: {title}: mapped inputs are tensors and arrays, {path} is {describe(node.type)}")


def _leaves(node):
    if node.kind in ("tensor", "array"):
        yield node
    else:
        for child in node.children:
            yield from _leaves(child)


def _with_rows(node, rows):
    """The structure `node` with every tensor's leading extent set to `rows`."""
    if node.kind == "tensor":
        return Node("tensor", node.type, template=(rows,) + tuple(node.template[1:]))
    if not node.children:
        return node
    return Node(node.kind, node.type, node.keys, tuple(_with_rows(c, rows) for c in node.children),
                 node.template)


def _flat_outputs(result, count, title, layout):
    out = []
    node = flatten(result, "fn's result", out, title)
    for leaf, array in zip(_leaves(node), out):
        rows = leaf.template[0] if leaf.kind == "tensor" and leaf.template else len(array)
        if rows != count:
            raise _kiln.SizeError(f"kiln: {title}: fn returned an output with {rows} rows for a chunk of {count}; "
                                  "each output needs one row per input row (a leading axis of the chunk's size)")
    if not all(leaf.kind in ("tensor", "array") for leaf in _leaves(node)):
        raise TypeError(f"kiln: {title}: fn must return tensors or arrays (or containers of them)")
    layout[0] = node
    return out


def chunked_map(fn, inputs, chunk_size=None, chunk_bytes=None, broadcast=(), name=None):
    """fn(*rows of inputs, *broadcast) over consecutive chunks of the inputs' leading axis,
    joined along it. `inputs`: a tensor or array, or a tuple/list of them, all with the same
    number of rows; `broadcast`: values passed whole (parameters, scene data). Give
    chunk_size (rows) or chunk_bytes (bytes of input rows per chunk). Reverse mode recomputes
    each chunk instead of storing it and accumulates the gradients of broadcast values (and of
    differentiable arrays fn reads from a closure) in place."""
    title = f"chunked_map('{name}')" if name else "chunked_map()"
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    broadcast = tuple(broadcast) if isinstance(broadcast, (tuple, list)) else (broadcast,)
    mapped, whole = [], []
    mapped_node = flatten(inputs, "inputs", mapped, title)
    whole_node = flatten(broadcast, "broadcast", whole, title)
    shapes = [_rows_and_width(leaf, a, title, f"inputs[{i}]")
              for i, (leaf, a) in enumerate(zip(_leaves(mapped_node), mapped))]
    rows = {r for r, _ in shapes}
    if len(rows) != 1:
        raise _kiln.SizeError(f"kiln: {title}: the mapped inputs have {sorted(rows)} rows; every mapped input needs "
                              "the same leading extent")
    (total,) = rows
    if (chunk_size is None) == (chunk_bytes is None):
        raise ValueError(f"kiln: {title}: give exactly one of chunk_size (rows per chunk) and chunk_bytes")
    if chunk_bytes is not None:
        row_bytes = sum(w * _ITEM_BYTES[type(a)] for (_, w), a in zip(shapes, mapped)) or 1
        chunk_size = max(1, int(chunk_bytes) // row_bytes)
    if not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"kiln: {title}: chunk_size must be a positive int, got {chunk_size!r}")
    layout = [None]

    def run(m, w, count):
        args = unflatten(_with_rows(mapped_node, count), m) + unflatten(whole_node, w)
        return _flat_outputs(fn(*args), count, title, layout)

    joined = _kiln._chunked_map(run, mapped, [w for _, w in shapes], total, whole, chunk_size, title)
    return unflatten(_with_rows(layout[0], total), joined)


def checkpoint(fn):
    """fn as a function whose intermediates are recomputed in reverse mode instead of kept
    (the result is the same as fn's)."""
    def wrapped(*args):
        flat = []
        node = flatten(args, "args", flat, "checkpoint()")
        layout = [None]

        def run(m, w, count):
            result = fn(*unflatten(node, w))
            out = []
            layout[0] = flatten(result, "fn's result", out, "checkpoint()")
            return out

        joined = _kiln._chunked_map(run, [], [], 1, flat, 1, "checkpoint()")
        return unflatten(layout[0], joined)

    wrapped.__wrapped__ = fn
    return wrapped
