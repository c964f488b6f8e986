"""Automatic differentiation over Python values: enable_grad, grad, backward, forward,
the gradient scopes, CustomOp and check_grads.

The C++ core (``kiln._kiln.grad``, ``._backward_from`` ...) works per Kiln value (array,
vector, matrix) or on flat lists of arrays. The functions here take any nesting of
tuples, lists, dicts and dataclasses of Kiln values -- flattened and rebuilt with
tree.py -- and run one traversal for all of them.

    x = kl.Float([1, 2, 3])
    kl.enable_grad(x)
    loss = kl.sum(kl.sin(x) * x)
    kl.backward(loss)
    print(kl.grad(x))
"""

import atexit
import contextlib

from . import _kiln
from ._kiln import Float, Float64, SizeError
from .drjit_names import ADFlag, retain_graph_of
from .tree import flatten, flatten_like, unflatten, describe, kiln_values, array_paths, DIFFERENTIABLE

__all__ = ["enable_grad", "grad", "set_grad", "accumulate_grad", "clear_grad", "detach", "grad_enabled",
           "backward", "backward_from", "forward", "forward_from", "forward_to", "backward_to", "suspend_grad",
           "resume_grad", "isolate_grad", "deferred_backward", "CustomOp", "custom", "check_grads"]

_FLOAT_ARRAYS = (Float, Float64)
# Kiln values that can carry derivatives (float arrays, and the vectors, matrices and tensors of them).
FLOAT_VALUES = DIFFERENTIABLE


# ---------------------------------------------------------------------------------------
# Walking Python values

class _Tree:
    """A flattened value: its structure, its Kiln values and its arrays."""

    def __init__(self, value, path, what):
        self.value = value
        self.path = path
        self.what = what
        self.arrays = []
        self.node = flatten(value, path, self.arrays, what)

    def values(self):
        return kiln_values(self.node, self.value, self.path)

    def paths(self):
        return list(array_paths(self.node, self.path))

    def require_float(self):
        """TypeError naming the first value that cannot carry derivatives."""
        for path, value in self.values():
            if type(value) not in FLOAT_VALUES:
                raise TypeError(f"kiln: {self.what}: {path} is {describe(value)}; only Float and Float64 "
                                "arrays (and vectors and matrices of them) have gradients")
        return self

    def like(self, other, path, reference):
        """The arrays of `other`, which must have this structure; a Python number stands
        for that value in every array."""
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return [type(a)(float(other)) for a in self.arrays]
        out = []
        flatten_like(self.node, other, path, out, self.what, reference)
        return out

    def rebuild(self, arrays):
        return unflatten(self.node, arrays)


# ---------------------------------------------------------------------------------------
# Gradients of values

def enable_grad(*args):
    """Marks every Float / Float64 array inside ``args`` (arrays, vectors, matrices, any
    nesting of tuples, lists, dicts and dataclasses of them) as an input that gradients
    flow to. Works in place; values that already carry derivatives are left as they are."""
    tree = _Tree(args, "args", "enable_grad()").require_float()
    for _, value in tree.values():
        _kiln.enable_grad(value)


def grad(value):
    """The gradient accumulated for ``value`` (same structure; zeros where there is none)."""
    if type(value) in FLOAT_VALUES:
        return _kiln.grad(value)
    tree = _Tree(value, "value", "grad()").require_float()
    return tree.rebuild([_kiln.grad(a) for a in tree.arrays])


def set_grad(value, gradient):
    """Replaces the gradient of ``value`` (which must carry derivatives) by ``gradient``:
    the same structure, or a Python number for every lane."""
    tree = _Tree(value, "value", "set_grad()").require_float()
    for array, g in zip(tree.arrays, tree.like(gradient, "grad", "the structure of the value")):
        _kiln.set_grad(array, g)


def accumulate_grad(value, gradient):
    """Adds ``gradient`` (same structure, or a Python number) to the gradient of ``value``."""
    tree = _Tree(value, "value", "accumulate_grad()").require_float()
    for array, g in zip(tree.arrays, tree.like(gradient, "grad", "the structure of the value")):
        _kiln.accumulate_grad(array, g)


def clear_grad(value):
    """Clears the gradients inside ``value``."""
    tree = _Tree(value, "value", "clear_grad()")
    for array in tree.arrays:
        _kiln.clear_grad(array)


def detach(value):
    """``value`` (same structure) without derivatives: the same nodes, no AD nodes."""
    if type(value) in FLOAT_VALUES:
        return _kiln.detach(value)
    tree = _Tree(value, "value", "detach()")
    return tree.rebuild([_kiln.detach(a) for a in tree.arrays])


def grad_enabled(value):
    """True when any array inside ``value`` carries derivatives."""
    return any(_kiln.grad_enabled(a) for a in _Tree(value, "value", "grad_enabled()").arrays)


# ---------------------------------------------------------------------------------------
# Traversals

def _carrying(tree, seeds=None):
    """The arrays of `tree` that carry derivatives (and their seeds); ValueError when none does."""
    keep = [k for k, a in enumerate(tree.arrays) if _kiln.grad_enabled(a)]
    if not keep:
        raise ValueError(f"kiln: {tree.what}: {tree.path} does not carry derivatives; call enable_grad() on it "
                         "(or on an input it is computed from) first")
    arrays = [tree.arrays[k] for k in keep]
    return arrays if seeds is None else (arrays, [seeds[k] for k in keep])


def backward(value, retain_graph=False):
    """Reverse mode from a one-lane ``value`` (a loss; or a structure of one-lane values,
    each with gradient 1): adjoints accumulate on the inputs, read them with grad().

    Frees the traversed part of the graph unless ``retain_graph`` (or Dr.Jit's flags in its
    place: kl.ADFlag.ClearNone keeps it). For values of more
    lanes use backward_from() with a seed: backward() raises kl.SizeError for them."""
    _kiln._check_traversal_allowed("backward()")
    retain_graph = retain_graph_of(retain_graph)
    if type(value) in _FLOAT_ARRAYS:
        _kiln.backward(value, retain_graph)
        return
    tree = _Tree(value, "y", "backward()").require_float()
    for path, array in zip(tree.paths(), tree.arrays):
        if len(array) != 1:
            raise SizeError(f"kiln: backward(): {path} has {len(array)} lanes; backward() needs one-lane values "
                            "such as a loss. Reduce it (kl.sum(y)) or pass the seed yourself: "
                            "kl.backward_from(y, seed)")
    arrays = _carrying(tree)
    _kiln._backward_from(arrays, [type(a)(1.0) for a in arrays], retain_graph)


def backward_from(value, seed=1.0, retain_graph=False):
    """Reverse mode from ``value`` whose gradient is ``seed`` (the same structure, each
    array one lane or as many as the value's; or a Python number; 1 when omitted, as in
    Dr.Jit): one traversal for all of them. Arrays that carry no derivatives are skipped.
    Inside ``deferred_backward()`` it only adds to that scope's sum."""
    tree = _Tree(value, "y", "backward_from()").require_float()
    if _DEFERRED:
        _DEFERRED[-1].add(tree, tree.like(seed, "seed", "the structure of y"))
        return
    _kiln._check_traversal_allowed("backward_from()")
    retain_graph = retain_graph_of(retain_graph)
    arrays, seeds = _carrying(tree, tree.like(seed, "seed", "the structure of y"))
    _kiln._backward_from(arrays, seeds, retain_graph)


def forward_from(value, seed):
    """Forward mode from ``value`` (inputs with gradients enabled) with tangent ``seed``
    (same structure, or a Python number); read the tangents of results with grad().
    Arrays that carry no derivatives are skipped."""
    _kiln._check_traversal_allowed("forward_from()")
    tree = _Tree(value, "x", "forward_from()").require_float()
    arrays, seeds = _carrying(tree, tree.like(seed, "seed", "the structure of x"))
    _kiln._forward_from(arrays, seeds)


def forward(value, flags=ADFlag.Default):
    """Forward mode from ``value`` with tangent 1 on every lane. ``flags`` (Dr.Jit's) are
    accepted for Dr.Jit's signature and change nothing here."""
    _kiln._check_traversal_allowed("forward()")
    forward_from(value, 1.0)


def forward_to(value, flags=ADFlag.Default):
    """Forward mode into ``value`` from every node on the way whose gradient was set
    (set_grad()); returns the tangent of ``value`` (same structure). ``flags`` as for
    forward()."""
    _kiln._check_traversal_allowed("forward_to()")
    tree = _Tree(value, "y", "forward_to()").require_float()
    arrays = _carrying(tree)
    _kiln._forward_to(arrays)
    return tree.rebuild([_kiln.grad(a) for a in tree.arrays])


def backward_to(value, retain_graph=False):
    """Reverse mode into ``value`` from every node computed from it whose gradient was set
    (set_grad()); returns the adjoint of ``value`` (same structure): the mirror of
    forward_to(). Only paths that start at ``value`` are visited; other inputs get nothing."""
    tree = _Tree(value, "x", "backward_to()").require_float()
    arrays = _carrying(tree)
    _kiln._backward_to(arrays, retain_graph)
    return tree.rebuild([_kiln.grad(a) for a in tree.arrays])


# ---------------------------------------------------------------------------------------
# Scopes

class _GradScope(contextlib.ContextDecorator):
    def __init__(self, enter, leave):
        self._enter = enter
        self._leave = leave

    def __enter__(self):
        self._enter()
        return self

    def __exit__(self, exc_type, exc, traceback):
        self._leave(exc_type is None)
        return False


def _recording_scope(enabled, when):
    if not when:  # Dr.Jit's `when=False`: a scope that changes nothing
        return contextlib.nullcontext()
    return _GradScope(lambda: _kiln._push_recording(enabled), lambda _: _kiln._pop_recording())


def suspend_grad(when=True):
    """``with kl.suspend_grad():`` operations inside record no derivatives (also a decorator);
    with ``when=False`` (Dr.Jit's keyword) the scope changes nothing."""
    return _recording_scope(False, when)


def resume_grad(when=True):
    """``with kl.resume_grad():`` turns recording back on inside a suspend_grad() scope;
    ``when=False`` as for suspend_grad()."""
    return _recording_scope(True, when)


def isolate_grad():
    """``with kl.isolate_grad():`` traversals started inside stop at nodes created before
    the scope; what reached them propagates further when the scope ends (unless it ends
    with an exception: then it is dropped)."""
    return _GradScope(_kiln._push_isolation, _kiln._pop_isolation)


class _DeferredSum:
    """What backward_from() adds to inside deferred_backward(): the terms <seed, y> per lane
    of its calls outside loops (`parts`, each of its own width), and inside the body of a
    loop that loop's running sum (`loop_total`, carried as hidden state: control.py)."""

    def __init__(self):
        self.parts = []
        self.loop_total = None

    def add(self, tree, seeds):
        with resume_grad():
            for array, seed in zip(tree.arrays, seeds):
                if _kiln.grad_enabled(array):
                    term = Float(array * seed) if type(array) is not Float else array * seed
                    if self.loop_total is None:
                        self.parts.append(term)
                    else:
                        self.loop_total = self.loop_total + term


_DEFERRED = []  # the deferred_backward() scopes, innermost last


@contextlib.contextmanager
def deferred_backward(retain_graph=False):
    """``with kl.deferred_backward():`` backward_from(y, seed) inside it, also in the body of
    a while_loop, does not traverse: it adds <seed, y> per lane to a sum, and leaving the
    scope runs one traversal from that sum. A loop traced inside carries its part of the
    sum as hidden state and becomes a sum loop (reverse mode runs it again instead of
    storing its iterations). This is how code written for Dr.Jit that calls
    dr.backward_from at every step of a loop (Mitsuba's path replay integrators) runs on
    Kiln, whose traversals cannot start inside a loop. An exception inside the scope drops
    the sum."""
    deferred = _DeferredSum()
    _DEFERRED.append(deferred)
    try:
        yield deferred
    finally:
        _DEFERRED.pop()
    parts = [part for part in deferred.parts if _kiln.grad_enabled(part)]
    if parts:
        _kiln._check_traversal_allowed("deferred_backward()")
        _kiln._backward_from(parts, [Float(1.0)] * len(parts), retain_graph_of(retain_graph))


# ---------------------------------------------------------------------------------------
# CustomOp

class CustomOp:
    """An operation whose derivatives you write. Subclass it and call
    ``kl.custom(MyOp, *args)``:

    - ``eval(self, *args)`` computes the outputs (any structure of Kiln values) from the
      inputs, with gradients suspended and the inputs detached; state saved on ``self``
      (the inputs, say) lives as long as the outputs' derivatives do.
    - ``forward(self, *grad_inputs)`` maps one tangent per input (same structure as the
      input; zeros where there is none) to the output tangents (the structure eval()
      returned; a tuple of outputs is returned as a tuple).
    - ``backward(self, *grad_outputs)`` maps the output adjoints (spread when eval()
      returned a tuple; zeros where there is none) to one adjoint per input: a tuple, or a
      bare value when there is one input. None stands for a zero gradient.

    Both callbacks may use AD themselves (nested traversals)."""

    def eval(self, *args):
        raise NotImplementedError(f"kiln: {self.name()} defines no eval()")

    def forward(self, *grad_inputs):
        raise NotImplementedError(f"kiln: {self.name()} defines no forward(): it supports reverse mode only")

    def backward(self, *grad_outputs):
        raise NotImplementedError(f"kiln: {self.name()} defines no backward(): it supports forward mode only")

    def name(self):
        """The name errors use (the class name)."""
        return type(self).__name__


def _spread(value):
    return type(value) is tuple


def _array_count(node):
    return sum(1 for _ in array_paths(node, ""))


def _grads_like(node, value, path, out, what, reference):
    """flatten_like() for a gradient a CustomOp returned: None anywhere inside stands for
    zeros (no gradient, 0 for the core)."""
    kind = node.kind
    if value is None:
        out.extend([None] * _array_count(node))
    elif kind in ("tuple", "list") and isinstance(value, (tuple, list)) and len(value) == len(node.children):
        for i, (child, item) in enumerate(zip(node.children, value)):
            _grads_like(child, item, f"{path}[{i}]", out, what, reference)
    elif kind == "dict" and isinstance(value, dict) and set(value) == set(node.keys):
        for key, child in zip(node.keys, node.children):
            _grads_like(child, value[key], f"{path}[{key!r}]", out, what, reference)
    elif kind == "dataclass" and type(value) is node.type:
        for key, child in zip(node.keys, node.children):
            _grads_like(child, getattr(value, key), f"{path}.{key}", out, what, reference)
    else:  # a Kiln value, or the error for a mismatch
        flatten_like(node, value, path, out, what, reference)


class _Side:
    """One side of a CustomOp (its inputs or its outputs): the structure, and the type and
    size of each array, to give missing gradients as zeros and check returned ones."""

    def __init__(self, tree, spread):
        self.node = tree.node
        self.spread = spread  # a tuple whose items are passed as separate arguments
        self.leaves = [(type(a), len(a)) for a in tree.arrays]

    def positions(self):
        return len(self.node.children)

    def values(self, grads):
        """The gradients the C++ core passed (None: zero) as Python values of this structure."""
        arrays = [g if g is not None else _kiln.zeros(cls, size) for g, (cls, size) in zip(grads, self.leaves)]
        return unflatten(self.node, arrays)

    def flatten(self, value, what, reference):
        """The arrays of a returned gradient (None where there is none)."""
        out = []
        _grads_like(self.node, value, "result", out, what, reference)
        return out


class _CustomBridge:
    """What the C++ core calls back (bind_autodiff.cpp's PythonCustomOp): converts the
    lists of component gradients to and from the user's structures."""

    def __init__(self, op, inputs, outputs):
        self.op = op
        self.inputs = inputs
        self.outputs = outputs

    def _count(self, result, side, method, expected, what):
        if not isinstance(result, (tuple, list)) or len(result) != expected:
            got = len(result) if isinstance(result, (tuple, list)) else 1
            raise ValueError(f"kiln: {self.op.name()}.{method}() returned {got} gradients, expected {expected} "
                             f"(one per {side}; None where there is none)")

    def forward_grads(self, grads):
        what = f"{self.op.name()}.forward()"
        result = self.op.forward(*self.inputs.values(grads))
        if self.outputs.spread and result is not None:
            self._count(result, "output", "forward", self.outputs.positions(), what)
        return self.outputs.flatten(result, what, "the structure eval() returned")

    def backward_grads(self, grads):
        what = f"{self.op.name()}.backward()"
        outputs = self.outputs.values(grads)
        result = self.op.backward(*outputs) if self.outputs.spread else self.op.backward(outputs)
        expected = self.inputs.positions()
        if expected == 1 and type(result) is not tuple:
            result = (result,)
        self._count(result, "input", "backward", expected, what)
        return self.inputs.flatten(result, what, "the structure of the inputs")


# At exit, AD nodes that outlive the modules must not keep Python CustomOps (and through
# them the modules that define them) alive: see bind_autodiff.cpp.
atexit.register(_kiln._release_custom_ops)


def custom(op, *args):
    """Runs the CustomOp ``op`` (a subclass or an instance) on ``args`` and returns the
    outputs of its eval(), connected to the inputs' derivatives through its forward() and
    backward(). The instance is kept alive while the outputs' derivatives are."""
    instance = op() if isinstance(op, type) else op
    if not isinstance(instance, CustomOp):
        raise TypeError(f"kiln: custom(): the first argument must be a kl.CustomOp subclass or instance, "
                        f"not {describe(op)}")
    what = f"custom({instance.name()})"
    inputs = _Tree(args, "args", what)
    with suspend_grad():
        result = instance.eval(*detach(args))
    outputs = _Tree(result, "result", f"{instance.name()}.eval()")
    bridge = _CustomBridge(instance, _Side(inputs, True), _Side(outputs, _spread(result)))
    connected = _kiln._custom(bridge, instance.name(), inputs.arrays, outputs.arrays)
    return outputs.rebuild(connected)


# ---------------------------------------------------------------------------------------
# Gradient checks

def check_grads(f, inputs, modes=("fwd", "rev"), eps=None, rtol=None, atol=None, seed=0):
    """Checks the derivatives of ``f(*inputs)`` against central finite differences in
    float64 (C++'s check_grads, grad_check.h), along a random direction ``u`` of the float
    inputs (``|u_i| <= max(1, |x_i|)``):

    - ``"fwd"``: the forward-mode tangent J·u of every output lane;
    - ``"rev"``: ⟨Jᵀv, u⟩ from reverse mode against ⟨v, J·u⟩ from the differences, for a
      random output direction ``v``;
    - both: forward and reverse agree (⟨v, J·u⟩ = ⟨Jᵀv, u⟩).

    ``inputs`` is a tuple of arguments (any structure of Kiln values; non-float arrays
    such as indices pass through unchanged). Defaults: eps 1e-6, rtol 1e-5, atol 1e-8 when
    every float input is Float64, else eps 1e-3, rtol/atol 1e-2. Raises AssertionError with
    one line per failed check, naming the mode, the output, the values and the tolerance."""
    modes = (modes,) if isinstance(modes, str) else tuple(modes)
    for mode in modes:
        if mode not in ("fwd", "rev"):
            raise ValueError(f"kiln: check_grads(): unknown mode {mode!r}; use 'fwd' and/or 'rev'")
    args = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    tree = _Tree(args, "inputs", "check_grads()")

    def flat_f(arrays):
        result = f(*tree.rebuild([type(a)(a) for a in arrays]))  # copies: f may scatter into its inputs
        return _Tree(result, "output", "check_grads(): f").arrays

    ok, message = _kiln._check_grads(flat_f, tree.arrays, "fwd" in modes, "rev" in modes, eps, rtol, atol, seed)
    if not ok:
        raise AssertionError(message.rstrip("\n"))
