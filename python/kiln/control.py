"""Control flow over Python values: while_loop, if_stmt, dispatch and print_async.

The C++ core (``kiln._kiln._while_loop`` ...) works on flat lists of plain arrays. This
module turns the values Python code passes around -- any nesting of tuples, lists, dicts
and dataclasses of Kiln arrays, vectors, matrices and PCG32 generators -- into such lists
(with tree.py) and rebuilds them on the way back, checking that a body returns what it was
given and naming the place (``state['depth']``) when it does not.

    i, total = kl.while_loop((i, total), lambda i, t: i < n,
                             lambda i, t: (i + 1, t + kl.cast(kl.Float, i)))
"""

from . import _kiln, autodiff as _autodiff
from ._kiln import Bool, Float, UInt32, ControlMode, zeros
from .tree import flatten, flatten_like, unflatten, describe

__all__ = ["while_loop", "if_stmt", "Registry", "dispatch", "print_async"]




class _Results:
    """The structure of what the functions of an if_stmt / dispatch return: set by the
    first call, checked against by the others."""

    def __init__(self, what):
        self.what = what
        self.node = None
        self.first = None

    def flatten(self, value, caller):
        out = []
        if self.node is None:
            self.node = flatten(value, "result", out, f"{self.what}: {caller}", allow_none=True)
            self.first = caller
        else:
            flatten_like(self.node, value, "result", out, f"{self.what} {caller}", f"as {self.first} returned")
        return out

    def rebuild(self, arrays):
        return unflatten(self.node, arrays)


def _mode(mode):
    """None, a ControlMode or 'symbolic' / 'evaluated' as the core takes it."""
    if mode is None or isinstance(mode, ControlMode):
        return mode
    if isinstance(mode, str):
        modes = {"symbolic": ControlMode.Symbolic, "evaluated": ControlMode.Evaluated}
        if mode.lower() in modes:
            return modes[mode.lower()]
        raise ValueError(f"kiln: mode must be 'symbolic' or 'evaluated' (or a kl.ControlMode), not {mode!r}")
    raise TypeError(f"kiln: mode must be None, a kl.ControlMode or 'symbolic' / 'evaluated', not {describe(mode)}")


def _title(statement, name):
    return f"{statement}('{name}')" if name else f"{statement}()"


def _as_args(args):
    return tuple(args) if isinstance(args, (tuple, list)) else (args,)


# ---------------------------------------------------------------------------------------
# The statements

def while_loop(state, cond, body, mode=None, name=None, max_iterations=None, sum_loop=False):
    """Runs ``body`` while ``cond`` holds, lane by lane, and returns the final state.

    ``state`` is any nesting of tuples, lists, dicts and dataclasses of Kiln values
    (arrays, vectors, matrices, PCG32). A tuple or list is spread: ``cond(*state)`` and
    ``body(*state)``; anything else is passed as one argument. ``cond`` returns a
    ``kl.Bool``; ``body`` returns the new state with the same structure and types (a bare
    value for a 1-tuple). Lanes whose condition is false keep their state.

    ``mode``: ``'symbolic'`` records one real loop into the kernel that uses the results
    (values inside the body cannot be read there: use print_async() or a Recorder);
    ``'evaluated'`` launches one kernel per iteration over the lanes still active. None
    follows ``kl.flag(kl.Flag.Symbolic)``. Both give the same results. ``name`` appears
    in logs and errors and never changes a kernel's identity.

    Derivatives: evaluated loops are differentiated like straight-line code (every
    iteration stays in the AD graph). A symbolic loop differentiates in forward mode as it
    is; reverse mode needs ``max_iterations=N`` (each lane's state is stored for up to N
    iterations; a lane that runs longer makes backward() raise) or ``sum_loop=True`` (the
    loop only accumulates into its differentiable state: it runs again, nothing stored).
    ``cond`` and ``body`` are called again when derivatives are computed.

    The state is per lane: an array the loop gathers from or scatters into is used from the
    enclosing scope, not passed as state (that raises ValueError in both modes). Traversals
    (backward(), forward() ...) start after the loop, not inside ``cond`` or ``body``.
    """
    what = _title("while_loop", name)
    if max_iterations is not None and (not isinstance(max_iterations, int) or max_iterations < 1):
        raise ValueError(f"kiln: {what}: max_iterations must be a positive int, not {max_iterations!r}")
    leaves = []
    node = flatten(state, "state", leaves, what)
    spread = isinstance(state, (tuple, list))

    def call(fn, arrays):
        value = unflatten(node, arrays)
        return fn(*value) if spread else fn(value)

    def cond_fn(arrays):
        active = call(cond, arrays)
        if type(active) is not Bool:
            raise TypeError(f"kiln: {what}: cond must return a kl.Bool array, not {describe(active)}")
        return active

    def body_fn(arrays):
        result = call(body, arrays)
        if spread and len(node.children) == 1 and not isinstance(result, (tuple, list)):
            result = (result,)
        out = []
        flatten_like(node, result, "state", out, f"{what} body", "the structure and types of the state")
        return out

    if _autodiff._DEFERRED:
        arrays = _deferred_while_loop(_autodiff._DEFERRED[-1], leaves, cond_fn, body_fn, _mode(mode), name,
                                      max_iterations, sum_loop)
    else:
        arrays = _kiln._while_loop(leaves, cond_fn, body_fn, _mode(mode), name or "", max_iterations or 0,
                                   bool(sum_loop))
    return unflatten(node, arrays)


def _deferred_while_loop(deferred, leaves, cond_fn, body_fn, mode, name, max_iterations, sum_loop):
    """A while_loop inside kl.deferred_backward(): the backward_from() calls of its body add
    to a hidden state array, the loop's part of the deferred sum. The loop is traced with
    derivatives recorded so that this part carries them (a sum loop unless max_iterations
    asks to store iterations); cond and body run in the caller's recording state."""
    lanes = max((len(a) for a in leaves), default=1)
    recording = _kiln._grad_recording()
    enclosing = deferred.loop_total  # the enclosing loop's sum, when this loop is nested in one

    def in_callers_state(fn, arrays):
        with (_autodiff.resume_grad() if recording else _autodiff.suspend_grad()):
            return fn(arrays)

    def hidden_body(arrays):
        # The scope is active again whenever the body runs: also when reverse mode runs it
        # again after the scope ended.
        _autodiff._DEFERRED.append(deferred)
        saved = deferred.loop_total
        try:
            deferred.loop_total = arrays[-1]
            out = in_callers_state(body_fn, arrays[:-1])
            return out + [deferred.loop_total]
        finally:
            deferred.loop_total = saved
            _autodiff._DEFERRED.pop()

    with _autodiff.resume_grad():
        arrays = _kiln._while_loop(leaves + [zeros(Float, lanes)], lambda arrays: in_callers_state(cond_fn, arrays[:-1]),
                                   hidden_body, mode, name or "", max_iterations or 0,
                                   bool(sum_loop) or max_iterations is None)
    if enclosing is None:
        deferred.parts.append(arrays[-1])
    else:
        deferred.loop_total = enclosing + arrays[-1]
    return arrays[:-1]


def if_stmt(cond, true_fn, false_fn, args=(), mode=None, name=None):
    """Per lane, ``true_fn(*args)`` where ``cond`` (a ``kl.Bool``) holds and
    ``false_fn(*args)`` elsewhere; returns the selected results.

    ``args`` is a tuple (or list) of any nesting of Kiln values; a single value is passed
    as the only argument. Both functions return the same structure (any nesting of Kiln
    values, or None when they only have side effects). Pass per-lane data as ``args``
    rather than capturing it: in evaluated mode each branch runs on the compacted lanes
    that take it. Arrays the functions index (gather, scatter) come from the enclosing
    scope, not from ``args``. ``mode`` and ``name`` as for while_loop(): symbolic traces
    both branches once and masks them; evaluated runs each branch as its own kernel.
    """
    what = _title("if_stmt", name)
    if type(cond) is not Bool:
        raise TypeError(f"kiln: {what}: the condition must be a kl.Bool array, not {describe(cond)}")
    args = _as_args(args)
    leaves = []
    node = flatten(args, "args", leaves, what)
    results = _Results(what)

    def branch(fn, caller):
        return lambda arrays: results.flatten(fn(*unflatten(node, arrays)), caller)

    arrays = _kiln._if_stmt(cond, branch(true_fn, "true_fn"), branch(false_fn, "false_fn"), leaves,
                            _mode(mode), name or "")
    return results.rebuild(arrays)


class Registry:
    """Instances (any Python objects, e.g. materials) that dispatch() calls by id.

    Ids start at 1 and are never reused; 0 and the ids of removed instances are null
    (their lanes are inactive in dispatch() and get zeros).
    """

    def __init__(self):
        self._instances = []

    def add(self, instance):
        """Registers ``instance`` and returns its id (1, 2, ...)."""
        if instance is None:
            raise ValueError("kiln: Registry.add(): None cannot be registered (it marks removed ids)")
        self._instances.append(instance)
        return len(self._instances)

    def remove(self, id):
        """Unregisters the instance ``id`` (unknown ids are ignored)."""
        if 1 <= id <= len(self._instances):
            self._instances[id - 1] = None

    def get(self, id):
        """The instance ``id``, or None when it is null, removed or unknown."""
        return self._instances[id - 1] if 1 <= id <= len(self._instances) else None

    def ids(self):
        """The ids of the registered instances, in increasing order."""
        return [i + 1 for i, instance in enumerate(self._instances) if instance is not None]

    def __len__(self):
        return len(self.ids())


def dispatch(registry, ids, fn, *args, mode=None, name=None):
    """Per lane, ``fn(registry.get(ids[lane]), *args)``: a polymorphic call.

    ``ids`` is a ``kl.UInt32`` of instance ids; lanes with null, removed or unknown ids are
    inactive and get zeros. ``args`` are any nestings of Kiln values (pass per-lane data
    here rather than capturing it); ``fn`` returns the same structure for every instance.
    Symbolic: each instance's code is traced once into the kernel and selected per lane;
    evaluated: one kernel per instance over its compacted lanes.
    """
    what = _title("dispatch", name)
    if not isinstance(registry, Registry):
        raise TypeError(f"kiln: {what}: the first argument must be a kl.Registry, not {describe(registry)}")
    if type(ids) is not UInt32:
        raise TypeError(f"kiln: {what}: instance ids must be a kl.UInt32 array, not {describe(ids)}")
    leaves = []
    node = flatten(args, "args", leaves, what)
    results = _Results(what)

    def call(id, arrays):
        return results.flatten(fn(registry.get(id), *unflatten(node, arrays)), f"instance {id}")

    arrays = _kiln._dispatch(ids, registry.ids(), call, leaves, _mode(mode), name or "")
    return results.rebuild(arrays)


def print_async(fmt, values=(), active=True):
    """Prints ``fmt`` once per lane where ``active`` holds, each ``{}`` replaced by the
    lane's value of the next array, from inside the kernel that computes the values (also
    inside symbolic loops and calls).

    ``values`` is one Kiln value or a tuple/list of them; vectors and matrices give one
    array per component (one ``{}`` each). The lines are written to stdout after that
    kernel ran, grouped by lane in lane order and, within a lane, in program order.

    A field may carry a format specification as in ``str.format``:
    ``[[fill]align][sign][#][0][width][.precision][type]`` with type ``e E f F g G %`` for
    floats, ``d x X o b`` (or a float type) for integers, none for Bool: ``"{:.3f}"``,
    ``"{:>8}"``, ``"{:#x}"``. ``{{`` and ``}}`` print braces. A field that does not fit its
    value raises ValueError here, not when printing.
    """
    values = _as_args(values)
    leaves = []
    flatten(values, "values", leaves, "print_async()")
    if active is True:
        active = None
    elif type(active) is not Bool:
        active = Bool(active)
    _kiln._print_async(fmt, leaves, active)
