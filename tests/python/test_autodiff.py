"""Automatic differentiation from Python: every derivative rule of KILN_DIFF_TABLE against
finite differences in both modes (kl.check_grads), vectors and matrices, gathers and
scatters, broadcasting, pytrees, gradient scopes, CustomOp (with nested AD), what
traversals visit, and the errors."""

import dataclasses
import gc
import re

import numpy as np
import pytest

import kiln as kl

F64 = kl.Float64


def f64(values):
    return F64(np.asarray(values, dtype=np.float64))


N = 7
POSITIVE = f64(np.linspace(0.3, 2.5, N))      # log, sqrt, pow, rcp ...
SIGNED = f64(np.linspace(-1.7, 1.9, N))       # nonzero, distinct
UNIT = f64(np.linspace(-0.8, 0.85, N))        # asin, acos, erfinv
OTHER = f64(np.linspace(2.1, -1.3, N))        # distinct from SIGNED in every lane
MASK = kl.Bool([True, False, True, True, False, False, True])
INDEX = kl.UInt32([0, 3, 3, 1, 0, 4, 3])      # repeated indices: conflicting gathers/scatter_adds
DISTINCT = kl.UInt32([4, 0, 2])               # distinct indices: plain scatters


def scatter(target, value, index):
    t = F64(target)
    kl.scatter(t, value, index)
    return t


def scatter_add(target, value, index):
    t = F64(target)
    kl.scatter_add(t, value, index)
    return t


# One case per DiffOp: (function, inputs, options for check_grads).
CASES = {
    "Neg": (lambda x: -x, (SIGNED,), {}),
    "Abs": (kl.abs, (SIGNED,), {}),
    "Sqrt": (kl.sqrt, (POSITIVE,), {}),
    "Rcp": (kl.rcp, (POSITIVE,), {}),
    "Rsqrt": (kl.rsqrt, (POSITIVE,), {}),
    # Float32 in the middle: linear, so a large step is exact.
    "Cast": (lambda x: kl.cast(F64, kl.cast(kl.Float, x)) * 2, (SIGNED,), dict(eps=1e-2, rtol=1e-5, atol=1e-5)),
    "Add": (lambda a, b: a + b, (SIGNED, OTHER), {}),
    "Sub": (lambda a, b: a - b, (SIGNED, OTHER), {}),
    "Mul": (lambda a, b: a * b, (SIGNED, OTHER), {}),
    "Div": (lambda a, b: a / b, (SIGNED, POSITIVE), {}),
    "Mod": (lambda a, b: kl.fmod(a * 5, b), (SIGNED, POSITIVE), {}),
    "Min": (kl.min, (SIGNED, OTHER), {}),
    "Max": (kl.max, (SIGNED, OTHER), {}),
    "Fma": (kl.fma, (SIGNED, OTHER, POSITIVE), {}),
    "Select": (lambda a, b: kl.select(MASK, a, b), (SIGNED, OTHER), {}),
    "Exp": (kl.exp, (SIGNED,), {}),
    "Exp2": (kl.exp2, (SIGNED,), {}),
    "Expm1": (kl.expm1, (SIGNED,), {}),
    "Log": (kl.log, (POSITIVE,), {}),
    "Log1p": (kl.log1p, (POSITIVE,), {}),
    "Log2": (kl.log2, (POSITIVE,), {}),
    "Pow": (kl.pow, (POSITIVE, SIGNED), {}),
    "Sin": (kl.sin, (SIGNED,), {}),
    "Cos": (kl.cos, (SIGNED,), {}),
    "Tan": (kl.tan, (UNIT,), {}),
    "Asin": (kl.asin, (UNIT,), {}),
    "Acos": (kl.acos, (UNIT,), {}),
    "Atan": (kl.atan, (SIGNED,), {}),
    "Atan2": (kl.atan2, (SIGNED, OTHER), {}),
    "Sinh": (kl.sinh, (SIGNED,), {}),
    "Cosh": (kl.cosh, (SIGNED,), {}),
    "Tanh": (kl.tanh, (SIGNED,), {}),
    "Erf": (kl.erf, (SIGNED,), {}),
    "Erfinv": (kl.erfinv, (UNIT,), {}),
    "Cbrt": (kl.cbrt, (POSITIVE,), {}),
    "Gather": (lambda x: kl.gather(x, INDEX), (f64([1.5, -2.0, 3.0, 0.5, 4.0]),), {}),
    "Scatter": (lambda t, v: scatter(t, v, DISTINCT), (f64([1.0, 2.0, 3.0, 4.0, 5.0]), f64([-1.0, 7.0, 0.5])), {}),
    "ScatterAdd": (lambda t, v: scatter_add(t, v * v, INDEX), (f64([1.0, 2.0, 3.0, 4.0, 5.0]), SIGNED), {}),
    "Sum": (lambda x: kl.sum(x * x), (SIGNED,), {}),
    "Prod": (kl.prod, (POSITIVE,), {}),
    "ReduceMin": (lambda x: kl.min(x * x), (SIGNED,), {}),
    "ReduceMax": (lambda x: kl.max(x * x), (SIGNED,), {}),
    "PrefixSum": (lambda x: (kl.prefix_sum(x), kl.prefix_sum(x * x, exclusive=True)), (SIGNED,), {}),
    "BlockSum": (lambda x: kl.block_sum(x * x, 3), (SIGNED,), {}),
}


def test_every_derivative_rule_has_a_python_case():
    names = kl._kiln._diff_op_names()
    assert len(names) == len(set(names))
    missing = [name for name in names if name not in CASES]
    assert not missing, f"DiffOps without a Python gradient check: {missing}"
    unknown = [name for name in CASES if name not in names]
    assert not unknown, f"cases for unknown DiffOps: {unknown}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_derivative_rule(name):
    fn, inputs, options = CASES[name]
    kl.check_grads(fn, inputs, **options)


@pytest.mark.parametrize("name", ["Mul", "Div", "Sqrt", "Exp", "Sin", "Atan2", "Gather", "Sum", "PrefixSum"])
def test_derivative_rule_in_float32(name):
    fn, inputs, _ = CASES[name]
    to32 = tuple(kl.cast(kl.Float, x) for x in inputs)
    if name == "Gather":
        fn = lambda x: kl.gather(x, INDEX)  # noqa: E731
    kl.check_grads(fn, to32)


def test_operators_and_python_scalars():
    kl.check_grads(lambda x: (2.0 - x) * 3.0 / (x + 4.0) + x ** 2.0 + 2.0 ** x + abs(x), (SIGNED,))


def test_piecewise_constant_ops_stop_gradients():
    x = SIGNED * 1.0
    kl.enable_grad(x)
    for y in (kl.floor(x), kl.round(x), kl.trunc(x), kl.ceil(x)):
        assert not kl.grad_enabled(y)
    assert not kl.grad_enabled(x > 0)


# ---- vectors and matrices ----------------------------------------------------------------------

def vec3(seed, lanes=5):
    rng = np.random.default_rng(seed)
    return kl.Array3f64(np.ascontiguousarray(rng.uniform(-1, 1, (lanes, 3))))


def test_vector_geometry():
    kl.check_grads(lambda a, b: (kl.cross(a, b), kl.dot(a, b), kl.normalize(a), kl.norm(b)), (vec3(1), vec3(2)))


def test_vector_gather_and_scatter_add():
    flat = f64(np.linspace(-1, 1, 12))
    index = kl.UInt32([0, 2, 2, 3, 1])
    kl.check_grads(lambda f: kl.gather(kl.Array3f64, f, index) * 2.0, (flat,))

    def scatter_vectors(target, v):
        t = F64(target)
        kl.scatter_add(t, v * v, index)
        return t

    kl.check_grads(scatter_vectors, (flat, vec3(3)))


def matrix4(seed, lanes=4):
    rng = np.random.default_rng(seed)
    m = np.eye(4, dtype=np.float32) + rng.uniform(-0.3, 0.3, (lanes, 4, 4)).astype(np.float32)
    return kl.Matrix4f(np.ascontiguousarray(m))


def test_matrices():
    p = kl.Array3f(np.ascontiguousarray(np.random.default_rng(5).uniform(-1, 1, (4, 3)).astype(np.float32)))
    kl.check_grads(lambda m: (kl.inverse(m), kl.determinant(m)), (matrix4(1),))
    kl.check_grads(lambda m, n, p: (m @ n, kl.transform_point(m, p), kl.transpose(m) * 2.0), (matrix4(2), matrix4(3), p))


def test_vector_and_matrix_values_in_place():
    v = vec3(4)
    kl.enable_grad(v)
    assert kl.grad_enabled(v) and all(kl.grad_enabled(v[i]) for i in range(3))
    kl.backward(kl.sum(kl.squared_norm(v)))
    np.testing.assert_allclose(np.asarray(kl.grad(v)), 2 * np.asarray(v))
    assert type(kl.grad(v)) is kl.Array3f64

    m = matrix4(5)
    kl.enable_grad(m)
    kl.backward_from(kl.determinant(m), 1.0)
    g = np.asarray(kl.grad(m))
    mats = np.asarray(m).astype(np.float64)
    expected = np.linalg.det(mats)[:, None, None] * np.linalg.inv(mats).transpose(0, 2, 1)  # d det / dM
    np.testing.assert_allclose(g, expected, rtol=1e-4, atol=1e-5)


def test_vector_with_a_constant_component():
    x = f64([1.0, 2.0])
    kl.enable_grad(x)
    v = kl.Array3f64(x, F64(0.0), x * x)    # y carries no derivatives
    kl.backward_from(v, kl.Array3f64(F64(1.0), F64(1.0), F64(1.0)))
    np.testing.assert_allclose(kl.grad(x).numpy(), [3.0, 5.0])


def test_seeds_of_a_repeated_value_add_up():
    s = f64([1.0, 2.0])
    kl.enable_grad(s)
    v = kl.Array3f64(s, s * 1.0, s)   # x and z share s's AD node
    kl.backward_from(v, kl.Array3f64(f64([1.0, 1.0]), f64([2.0, 2.0]), f64([4.0, 4.0])))
    np.testing.assert_allclose(kl.grad(s).numpy(), [7, 7])
    t = f64([1.0])
    kl.enable_grad(t)
    kl.backward_from((t, t), (f64([1.0]), f64([0.5])))
    assert kl.grad(t).item() == 1.5
    u = f64([1.0])
    kl.enable_grad(u)
    w = u * 3.0
    kl.forward_from((u, u), (f64([1.0]), f64([1.0])))
    assert kl.grad(w).item() == 6.0


# ---- gathers and scatters with conflicts, broadcasting -------------------------------------------

def test_gather_with_conflicting_indices_accumulates():
    source = f64([1.0, 2.0, 3.0, 4.0, 5.0])
    kl.enable_grad(source)
    y = kl.gather(source, INDEX)          # index 3 three times, 0 twice
    kl.backward_from(y, f64(np.arange(1, N + 1)))
    np.testing.assert_allclose(kl.grad(source).numpy(), [1 + 5, 4, 0, 2 + 3 + 7, 6])


def test_scatter_add_with_conflicting_indices():
    target = f64(np.zeros(5))
    value = f64(np.arange(1.0, N + 1))
    kl.enable_grad(target, value)
    t = F64(target)
    kl.scatter_add(t, value, INDEX)
    np.testing.assert_allclose(t.numpy(), [1 + 5, 4, 0, 2 + 3 + 7, 6])
    kl.backward_from(t, f64([10.0, 20.0, 30.0, 40.0, 50.0]))
    np.testing.assert_allclose(kl.grad(value).numpy(), [10, 40, 40, 20, 10, 50, 40])
    np.testing.assert_allclose(kl.grad(target).numpy(), [10, 20, 30, 40, 50])


def test_scatter_overwrite_blocks_the_old_value():
    target = f64([1.0, 2.0, 3.0, 4.0, 5.0])
    kl.enable_grad(target)
    t = scatter(target, f64([9.0, 9.0, 9.0]), DISTINCT)
    kl.backward_from(t, 1.0)
    np.testing.assert_allclose(kl.grad(target).numpy(), [0, 1, 0, 1, 0])


def test_broadcasting_sums_over_lanes():
    s = F64(0.7)
    kl.check_grads(lambda x, s: x * s + s * s, (SIGNED, s))
    kl.enable_grad(s)
    kl.backward(kl.sum(SIGNED * s))
    assert len(kl.grad(s)) == 1
    assert kl.grad(s).item() == pytest.approx(float(np.sum(SIGNED.numpy())))


def test_one_lane_seed_broadcasts():
    x = f64([1.0, 2.0, 3.0])
    kl.enable_grad(x)
    kl.backward_from(x * x, 1.0)
    np.testing.assert_allclose(kl.grad(x).numpy(), [2, 4, 6])


# ---- modes -------------------------------------------------------------------------------------

def test_forward_and_forward_to():
    x = f64([1.0, 2.0, 3.0])
    kl.enable_grad(x)
    y = kl.sin(x) * x
    kl.forward(x)
    xs = x.numpy()
    np.testing.assert_allclose(kl.grad(y).numpy(), np.cos(xs) * xs + np.sin(xs))

    a = f64([0.5, 1.5])
    kl.enable_grad(a)
    z = a * a * a
    kl.set_grad(a, 2.0)
    np.testing.assert_allclose(kl.forward_to(z).numpy(), 2 * 3 * a.numpy() ** 2)


def test_forward_to_again_gives_the_tangent_of_the_new_seeds():
    """forward_to() twice (a Jacobian column by column) returns J·u of the seeds set now; the
    target's earlier tangent is not added to (it was, found by the gradient fuzzer)."""
    a = f64([0.5, 1.5])
    kl.enable_grad(a)
    z = kl.sqrt(a * f64([1.0, 4.0]))
    expected = 0.5 * np.sqrt([1.0, 4.0]) / np.sqrt(a.numpy())
    for seed in (1.0, 1.0, -3.0):
        kl.set_grad(a, seed)
        np.testing.assert_allclose(kl.forward_to(z).numpy(), seed * expected)


def test_retain_graph_and_accumulation():
    x = f64([1.0, 2.0])
    kl.enable_grad(x)
    y = kl.sum(x * x)
    kl.backward(y, retain_graph=True)
    kl.backward(y)
    np.testing.assert_allclose(kl.grad(x).numpy(), [4, 8])
    kl.clear_grad(x)
    np.testing.assert_allclose(kl.grad(x).numpy(), [0, 0])
    with pytest.raises(ValueError, match="retain_graph"):
        kl.backward(y)
    kl.accumulate_grad(x, f64([1.0, 1.0]))
    kl.accumulate_grad(x, 0.5)
    np.testing.assert_allclose(kl.grad(x).numpy(), [1.5, 1.5])


def test_forward_twice_gives_the_same_tangents():
    # tangents restart at zero downstream of the sources (also a one-lane sum's)
    x, p = f64([1.0, 2.0]), f64([0.5])
    kl.enable_grad(x, p)
    y, total = (x * 3.0) ** 2, kl.sum(x * p)
    for _ in range(2):
        kl.forward(x)
        np.testing.assert_allclose(kl.grad(y).numpy(), [18, 36])
        np.testing.assert_allclose(kl.grad(total).numpy(), [1])


def test_forward_after_backward_freed_the_uses():
    x = f64([1.0, 2.0])
    kl.enable_grad(x)
    y = x * x  # a freed use that is still alive: its tangent could not be computed
    kl.backward(kl.sum(y))
    with pytest.raises(ValueError, match=r"forward\(\).*retain_graph"):
        kl.forward(x)
    z = kl.sin(x)  # a new use
    kl.forward(x)
    np.testing.assert_allclose(kl.grad(z).numpy(), np.cos([1.0, 2.0]))
    del y


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
def test_forward_ignores_gradients_left_on_loop_captures(mode):
    # backward() leaves an adjoint on theta, which the loop body reads from outside its
    # state; forward(x) must not take it for a tangent.
    x, theta = f64([0.3, 0.6, 0.9]), f64([0.8])
    kl.enable_grad(x, theta)
    _, y = kl.while_loop((kl.zeros(kl.UInt32, 3), kl.zeros(F64, 3)), lambda i, y: i < 3,
                         lambda i, y: (i + 1, y * theta + x), mode=mode, max_iterations=3)
    kl.backward(kl.sum(y), retain_graph=True)
    kl.forward(x)
    np.testing.assert_allclose(kl.grad(y).numpy(), [0.64 + 0.8 + 1] * 3)



_TRAVERSALS = {
    "backward_from()": lambda x, y: kl.backward_from(y, 1.0),
    "backward()": lambda x, y: kl.backward(kl.sum(y)),
    "forward()": lambda x, y: kl.forward(x),
    "forward_to()": lambda x, y: kl.forward_to(y),
}


@pytest.mark.parametrize("traversal", sorted(_TRAVERSALS))
def test_traversal_started_inside_a_statement_raises_in_both_modes(traversal):
    # Evaluated mode raised an internal error; symbolic mode ignored the condition.
    start = _TRAVERSALS[traversal]
    lane = kl.arange(kl.UInt32, 4)
    statements = {
        "while_loop('walk')": lambda x, y: kl.while_loop(
            lane * 0, lambda i: i < lane, lambda i: (start(x, y), i + 1)[1], mode=mode, name="walk"),
        "if_stmt()": lambda x, y: kl.if_stmt(lane < 2, lambda l: (start(x, y), l)[1], lambda l: l, lane, mode=mode),
        "dispatch()": lambda x, y: kl.dispatch(registry, lane % 2, lambda _, l: (start(x, y), l)[1], lane, mode=mode),
    }
    registry = kl.Registry()
    registry.add("only")
    for statement, run in statements.items():
        messages = []
        for mode in ("symbolic", "evaluated"):
            x = f64([1.0, 2.0, 3.0, 4.0])
            kl.enable_grad(x)
            y = x * x
            with pytest.raises(ValueError, match=re.escape(f"{traversal}: called inside {statement}")) as error:
                run(x, y)
            messages.append(str(error.value))
            kl.backward_from(y, 1.0)  # after the statement: the graph is intact
            np.testing.assert_allclose(kl.grad(x).numpy(), [2.0, 4.0, 6.0, 8.0])
        assert messages[0] == messages[1]

def test_detach():
    x = f64([1.0, 2.0])
    kl.enable_grad(x)
    y = kl.detach(x) * x
    kl.backward_from(y, 1.0)
    np.testing.assert_allclose(kl.grad(x).numpy(), [1, 2])
    assert not kl.grad_enabled(kl.detach((x, [x]))[1][0])


# ---- pytrees -----------------------------------------------------------------------------------

@dataclasses.dataclass
class Params:
    scale: kl.Float64
    offset: kl.Array3f64


def test_pytrees():
    params = Params(f64([2.0]), vec3(7, lanes=3))
    data = {"a": f64([1.0, 2.0, 3.0]), "b": [f64([0.5, 0.25, 1.0])]}
    kl.enable_grad(params, data)
    assert kl.grad_enabled(params) and kl.grad_enabled(data["b"])
    loss = kl.sum(kl.squared_norm(params.offset * params.scale) + data["a"] * data["b"][0])
    kl.backward(loss)
    g = kl.grad((params, data))
    assert isinstance(g[0], Params) and type(g[0].offset) is kl.Array3f64 and isinstance(g[1]["b"], list)
    off = np.asarray(params.offset)
    np.testing.assert_allclose(np.asarray(g[0].offset), 2 * off * 4)
    np.testing.assert_allclose(g[0].scale.numpy(), [2 * 2.0 * np.sum(off ** 2)])
    np.testing.assert_allclose(g[1]["a"].numpy(), data["b"][0].numpy())


def test_check_grads_over_pytrees():
    def f(p, d):
        return {"y": p.offset * p.scale + kl.Array3f64(d["a"], d["a"], d["b"][0]), "z": (kl.exp(p.scale),)}

    kl.check_grads(f, (Params(f64([0.5]), vec3(8, lanes=3)), {"a": f64([1.0, 2.0, 3.0]), "b": [f64([1.0, 0.5, 2.0])]}))


def test_pytree_backward_of_several_losses_and_seeds():
    x = f64([1.0, 2.0])
    kl.enable_grad(x)
    kl.backward((kl.sum(x), kl.sum(x * x)))
    np.testing.assert_allclose(kl.grad(x).numpy(), [3, 5])
    y = f64([1.0, 2.0])
    kl.enable_grad(y)
    kl.backward_from({"p": y * 2.0, "q": y * y}, {"p": f64([1.0, 1.0]), "q": f64([0.0, 1.0])})
    np.testing.assert_allclose(kl.grad(y).numpy(), [2, 6])


class Wrong(kl.CustomOp):
    """x·x whose derivatives say 3x instead of 2x."""

    def eval(self, x):
        self.x = x
        return x * x

    def forward(self, dx):
        return 3.0 * self.x * dx

    def backward(self, g):
        return 3.0 * self.x * g


def test_check_grads_finds_wrong_derivatives():
    with pytest.raises(AssertionError, match="forward mode.*finite differences"):
        kl.check_grads(lambda x: kl.custom(Wrong, x), (POSITIVE,))
    with pytest.raises(AssertionError, match="reverse mode"):
        kl.check_grads(lambda x: kl.custom(Wrong, x), (POSITIVE,), modes=("rev",))
    with pytest.raises(ValueError, match="unknown mode"):
        kl.check_grads(kl.sin, (POSITIVE,), modes=("backward",))


def test_check_grads_float32_inputs_indices_and_errors():
    # Float inputs take the float32 defaults; indices pass through; non-float outputs are skipped.
    index = kl.UInt32([2, 0, 1])
    kl.check_grads(lambda x, i: (kl.gather(x * x, i), i), (kl.Float([0.5, 1.0, 2.0]), index))
    with pytest.raises(AssertionError, match=r"rtol 0.01 .*eps 0.001"):
        kl.check_grads(lambda x: kl.custom(Wrong, x), (kl.Float(np.linspace(0.3, 2.5, 8).astype(np.float32)),))
    with pytest.raises(ValueError, match="hold no Float or Float64 array"):
        kl.check_grads(lambda i: i, (index,))
    with pytest.raises(ValueError, match="f returned no Float or Float64 array"):
        kl.check_grads(lambda x: index, (POSITIVE,))


# ---- scopes ------------------------------------------------------------------------------------

def test_suspend_and_resume():
    x = f64([1.0, 2.0])
    kl.enable_grad(x)
    with kl.suspend_grad():
        assert not kl.grad_enabled(x * 2.0)
        with kl.resume_grad():
            assert kl.grad_enabled(x * 2.0)
        assert not kl.grad_enabled(x * 2.0)
    assert kl.grad_enabled(x * 2.0)

    @kl.suspend_grad()
    def plain(v):
        return v * v

    assert not kl.grad_enabled(plain(x))
    assert kl._kiln._grad_recording()


def test_scopes_are_balanced_after_exceptions():
    with pytest.raises(RuntimeError):
        with kl.suspend_grad():
            raise RuntimeError("inside")
    assert kl._kiln._grad_recording()


def test_isolate_grad_postpones_propagation():
    x = f64([1.0, 2.0])
    kl.enable_grad(x)
    a = x * 3.0
    with kl.isolate_grad():
        y = kl.sum(a * a)
        kl.backward(y)
        np.testing.assert_allclose(kl.grad(x).numpy(), [0, 0])  # stopped at a
    np.testing.assert_allclose(kl.grad(x).numpy(), 2 * 3 * 3 * x.numpy())


# ---- what a traversal visits -------------------------------------------------------------------

def test_traversals_visit_only_the_requested_paths():
    x = f64([1.0, 2.0, 3.0])
    y = f64([4.0, 5.0, 6.0])
    kl.enable_grad(x, y)
    loss = kl.sum(kl.sin(x * 2.0))          # x -> mul -> sin -> sum
    other = kl.exp(kl.exp(kl.exp(y * x)))   # unrelated to loss
    kl.backward(loss)
    stats = kl.last_traversal()
    assert (stats.nodes, stats.edges) == (4, 3)
    assert repr(stats) == "TraversalStats(nodes=4, edges=3)"

    kl.set_grad(x, 1.0)
    kl.forward_to(other)                    # x, y -> mul -> exp -> exp -> exp
    assert (kl.last_traversal().nodes, kl.last_traversal().edges) == (6, 5)
    kl.forward(y)                           # y and everything computed from it
    assert (kl.last_traversal().nodes, kl.last_traversal().edges) == (5, 4)


def test_graph_is_freed():
    gc.collect()
    before = kl._kiln._ad_counts()
    x = f64([1.0, 2.0])
    kl.enable_grad(x)
    y = kl.sum(kl.exp(x) * x)
    assert kl._kiln._ad_counts()[0] > before[0]
    kl.backward(y)
    del x, y
    gc.collect()
    assert kl._kiln._ad_counts() == before


# ---- errors ------------------------------------------------------------------------------------

def test_backward_of_many_lanes_needs_a_seed():
    x = f64([1.0, 2.0])
    kl.enable_grad(x)
    with pytest.raises(kl.SizeError, match="backward_from"):
        kl.backward(x * x)
    with pytest.raises(kl.SizeError, match=r"y\[1\] has 2 lanes"):
        kl.backward((kl.sum(x), x * x))


def test_integer_arrays_have_no_gradients():
    for value in (kl.UInt32([1, 2]), kl.Int32([1]), kl.Array3u(kl.UInt32(1), kl.UInt32(2), kl.UInt32(3))):
        with pytest.raises(TypeError, match="Float and Float64"):
            kl.enable_grad(value)
        with pytest.raises(TypeError, match="Float and Float64"):
            kl.grad(value)
    with pytest.raises(TypeError, match=r"args\[0\]\['i'\] is kl.UInt32"):
        kl.enable_grad({"x": f64([1.0]), "i": kl.UInt32([1])})
    # the C++ functions behind them
    with pytest.raises(TypeError, match="only Float and Float64"):
        kl._kiln.enable_grad(kl.UInt32([1, 2]))
    with pytest.raises(TypeError, match="only Float and Float64"):
        kl._kiln.grad(kl.Int64([1]))
    with pytest.raises(TypeError):
        kl.enable_grad(1.5)


def test_set_grad_errors():
    x = f64([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="does not carry derivatives"):
        kl.set_grad(x, 1.0)
    kl.enable_grad(x)
    with pytest.raises(kl.SizeError, match="2 lanes but the array has 3"):
        kl.set_grad(x, f64([1.0, 2.0]))
    with pytest.raises(TypeError, match="expected kl.Float64"):
        kl.set_grad(x, kl.Float([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match="expected a tuple of 2"):
        kl.set_grad((x, x), (x,))
    with pytest.raises(ValueError, match="does not carry derivatives"):
        kl.backward_from(f64([1.0]), 1.0)


def test_scatter_min_has_no_derivative():
    t = f64([1.0, 2.0])
    kl.enable_grad(t)
    with pytest.raises(ValueError, match="scatter_add"):
        kl.scatter_reduce(kl.ReduceOp.Min, t, f64([0.5]), kl.UInt32([0]))


class WrongCount(kl.CustomOp):
    def eval(self, a, b):
        return a * b

    def backward(self, g):
        return (g,)


class Raising(kl.CustomOp):
    def eval(self, x):
        return x * 2.0

    def forward(self, dx):
        raise KeyError("forward failed")

    def backward(self, g):
        raise RuntimeError("backward failed")


def test_custom_op_returning_the_wrong_number_of_gradients():
    a, b = f64([1.0]), f64([2.0])
    kl.enable_grad(a, b)
    with pytest.raises(ValueError, match=r"WrongCount.backward\(\) returned 1 gradients, expected 2"):
        kl.backward(kl.custom(WrongCount, a, b))
    y = kl.custom(WrongCount, a, b)
    with pytest.raises(NotImplementedError, match="reverse mode only"):
        kl.forward(a)
    del y


def test_core_checks_the_number_of_gradients():
    class Bridge:
        def forward_grads(self, grads):
            return []

        def backward_grads(self, grads):
            return [grads[0]]  # two inputs

    a, b = f64([1.0]), f64([2.0])
    kl.enable_grad(a, b)
    (y,) = kl._kiln._custom(Bridge(), "Bridged", [a, b], [f64([3.0])])
    with pytest.raises(ValueError, match=r"Bridged.backward\(\) returned 1 gradients, expected 2"):
        kl.backward(y)
    z = kl._kiln._custom(Bridge(), "Bridged", [a, b], [f64([3.0])])[0]
    with pytest.raises(ValueError, match=r"Bridged.forward\(\) returned 0 gradients, expected 1"):
        kl.forward(a)
    del z


def test_core_checks_the_lane_count_of_gradients():
    class Bridge:
        def forward_grads(self, grads):
            return [f64([1.0, 2.0])]

        def backward_grads(self, grads):
            return [f64([1.0, 2.0])]  # the input has 3 lanes

    x = f64([1.0, 2.0, 3.0])
    kl.enable_grad(x)
    (y,) = kl._kiln._custom(Bridge(), "Bridged", [x], [f64([3.0, 4.0, 5.0])])
    with pytest.raises(ValueError, match=r"Bridged.backward\(\) returned a gradient of 2 lanes for input 0, which has 3"):
        kl.backward_from(y, 1.0)
    z = kl._kiln._custom(Bridge(), "Bridged", [x], [f64([3.0, 4.0, 5.0])])[0]
    with pytest.raises(ValueError, match=r"Bridged.forward\(\) returned a gradient of 2 lanes for output 0, which has 3"):
        kl.forward(x)
    del y, z


def test_exceptions_in_callbacks_propagate():
    x = f64([1.0, 2.0])
    kl.enable_grad(x)
    y = kl.custom(Raising, x)
    with pytest.raises(RuntimeError, match="backward failed"):
        kl.backward_from(y, 1.0)
    with pytest.raises(KeyError, match="forward failed"):
        kl.forward(x)
    # the graph and the scopes still work
    assert kl._kiln._grad_recording()
    z = f64([3.0])
    kl.enable_grad(z)
    kl.backward(z * z)
    assert kl.grad(z).item() == 6.0


def test_custom_op_errors():
    with pytest.raises(TypeError, match="CustomOp subclass"):
        kl.custom(lambda x: x, f64([1.0]))

    class BadGrad(kl.CustomOp):
        def eval(self, x):
            return x

        def backward(self, g):
            return 1.0  # not a Kiln value

    x = f64([1.0])
    kl.enable_grad(x)
    with pytest.raises(TypeError, match="BadGrad.backward"):
        kl.backward(kl.custom(BadGrad, x))


def test_custom_op_outputs_alive_at_exit(tmp_path):
    """Globals holding custom op outputs whose class lives in __main__ (a cycle through the
    C++ graph that Python's collector cannot see) do not leak at exit."""
    import os
    import subprocess
    import sys

    script = tmp_path / "script.py"
    script.write_text(
        "import kiln as kl\n"
        "class Twice(kl.CustomOp):\n"
        "    def eval(self, x):\n"
        "        return x * 2.0\n"
        "    def backward(self, g):\n"
        "        return g * 2.0\n"
        "x = kl.Float64([1.0, 2.0])\n"
        "kl.enable_grad(x)\n"
        "y = kl.custom(Twice, x)\n"
        "print(y.numpy().sum())\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "6.0"
    assert "leaked" not in done.stderr, done.stderr


def test_exception_in_eval_restores_recording():
    class FailingEval(kl.CustomOp):
        def eval(self, x):
            raise ArithmeticError("eval failed")

    x = f64([1.0])
    kl.enable_grad(x)
    with pytest.raises(ArithmeticError, match="eval failed"):
        kl.custom(FailingEval, x)
    assert kl._kiln._grad_recording()


class Polar(kl.CustomOp):
    """A dict output (one structure, not spread), an integer output and a vector input."""

    def eval(self, v):
        self.v = v
        return {"r": kl.norm(v), "quadrant": kl.select(v.x > 0, kl.UInt32(0), kl.UInt32(1))}

    def forward(self, dv):
        return {"r": kl.dot(self.v, dv) / kl.norm(self.v), "quadrant": None}

    def backward(self, g):
        assert type(g["quadrant"]) is kl.UInt32  # zeros: integer outputs carry no gradient
        return self.v * (g["r"] / kl.norm(self.v))


def test_custom_op_with_structured_outputs():
    kl.check_grads(lambda v: kl.custom(Polar, v)["r"] * 2.0, (vec3(9),))
    out = kl.custom(Polar, vec3(9))
    assert type(out["quadrant"]) is kl.UInt32


def test_backward_to_collects_from_every_node_with_a_gradient():
    x, w = f64([1.0, 2.0]), f64([5.0, 7.0])
    kl.enable_grad(x)
    kl.enable_grad(w)
    a = x * 3.0
    y, z = a * x, w * x  # y = 3x², z = wx
    kl.set_grad(y, f64([1.0, 1.0]))
    kl.set_grad(z, f64([1.0, 0.0]))
    assert kl.backward_to(x).numpy().tolist() == [11.0, 12.0]
    assert kl.last_traversal().nodes == 4  # x, a, y, z: not w
    assert kl.grad(w).numpy().tolist() == [0.0, 0.0]
    q = f64([1.0, 2.0])
    kl.enable_grad(q)
    v = kl.Array3f64(q * 2.0, q, q)
    length2 = kl.squared_norm(v)  # kept alive: its gradient is where the traversal starts
    kl.set_grad(length2, f64([1.0, 1.0]))
    assert kl.backward_to(v)[0].numpy().tolist() == [4.0, 8.0]  # d|v|²/dv.x = 2 v.x
    with pytest.raises(ValueError, match="does not carry derivatives"):
        kl.backward_to(f64([1.0]))


def _gather_loop_backward(table_size, lanes=8):
    """Reverse mode of a symbolic loop whose branch gathers from a captured table; returns
    the table's gradient and the (size, ops) of the kernels the backward pass launched."""
    table = kl.Float(np.linspace(1.0, 2.0, table_size, dtype=np.float32))
    kl.enable_grad(table)
    lane = kl.arange(kl.UInt32, lanes)

    def body(i, y):
        looked_up = kl.if_stmt(i % 2 == 0, lambda i: kl.gather(table, (i * 3 + lane) % table_size),
                               lambda i: kl.zeros(kl.Float, lanes), i)
        return i + 1, y + looked_up

    _, y = kl.while_loop((kl.zeros(kl.UInt32, lanes), kl.zeros(kl.Float, lanes)), lambda i, y: i < 4, body,
                         max_iterations=4)
    kl.eval(y)
    kl.kernel_history(clear=True)
    kl.backward(kl.sum(y))
    gradient = kl.grad(table).numpy()
    return gradient, [(entry["ops"]) for entry in kl.kernel_history()]


def test_a_table_only_gathered_from_takes_one_gradient_path_whatever_its_size():
    # A captured table as large as the loop has lanes was accumulated lane by lane as well
    # (with zeros): the same program then had kernels of another shape (story 1 compiled
    # again when a crop's sample count equalled a texture's size).
    for size in (8, 9):
        gradient, _ = _gather_loop_backward(size)
        expected = np.zeros(size)
        for i in (0, 2):
            np.add.at(expected, (i * 3 + np.arange(8)) % size, 1.0)
        np.testing.assert_array_equal(gradient, expected)
    assert _gather_loop_backward(8)[1] == _gather_loop_backward(9)[1]


def test_scattering_into_constants_launches_only_the_scatter():
    # zeros() and full() targets are filled when the scatter is recorded, not by a kernel of
    # their own (which would group with any pending work of the same size).
    for fill in (0.0, 2.5):
        target = kl.full(kl.Float, fill, 6)
        kl.kernel_history(clear=True)
        kl.scatter_add(target, kl.Float([1.0, 2.0, 3.0]), kl.UInt32([0, 5, 0]))
        np.testing.assert_array_equal(target.numpy(), np.array([4, 0, 0, 0, 0, 2], np.float32) + fill)
        assert len(kl.kernel_history()) == 1
