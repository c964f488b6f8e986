"""Control flow from Python: while_loop, if_stmt and dispatch in both modes (which must agree
bit for bit), over pytree states, with side effects and errors. The Recorder and
print_async: test_record.py."""

import dataclasses
import re

import numpy as np
import pytest

import kiln as kl
from checks import MODES, assert_same, in_both_modes

N = 37  # lanes: not a multiple of any packet width
TRIPS = [(lane * 5) % 13 for lane in range(N)]  # per-lane trip counts 0..12


def trips():
    return kl.UInt32(TRIPS)


# ---------------------------------------------------------------------------------------
# while_loop

def test_while_loop_per_lane_trip_counts():
    def run(mode):
        n = trips()
        return kl.while_loop((kl.zeros(kl.UInt32, N), kl.zeros(kl.Float, N)), lambda i, acc: i < n,
                             lambda i, acc: (i + 1, acc + kl.cast(kl.Float, i) * 0.5), mode=mode)

    i, acc = in_both_modes(run)
    t = np.array(TRIPS, np.uint32)
    assert_same(i, t)
    assert_same(acc, (t * (t - 1) / 2 * 0.5).astype(np.float32))


def test_while_loop_accepts_control_mode_values():
    for mode in (kl.ControlMode.Symbolic, kl.ControlMode.Evaluated, "Symbolic", "EVALUATED"):
        i = kl.while_loop(kl.zeros(kl.UInt32, 4), lambda i: i < 3, lambda i: i + 1, mode=mode)
        assert_same(i, np.full(4, 3, np.uint32))


def test_single_state_values_and_one_tuples():
    def run(mode):
        n = trips()
        bare = kl.while_loop(kl.zeros(kl.UInt32, N), lambda i: i < n, lambda i: i + 2, mode=mode)
        (one,) = kl.while_loop((kl.zeros(kl.UInt32, N),), lambda i: i < n, lambda i: i + 1, mode=mode)
        [listed] = kl.while_loop([kl.zeros(kl.UInt32, N)], lambda i: i < n, lambda i: [i + 3], mode=mode)
        return bare, one, listed

    bare, one, listed = in_both_modes(run)
    t = np.array(TRIPS, np.uint32)
    assert_same(bare, t + t % 2)
    assert_same(one, t)
    assert_same(listed, (t + 2) // 3 * 3)


def test_nested_loops_with_per_lane_trip_counts():
    def run(mode):
        def outer_body(i, n, total):
            # Sized like the state: evaluated loops run the body on the lanes still active.
            _, total = kl.while_loop((kl.zeros(kl.UInt32, len(total)), total), lambda j, t: j < i,
                                     lambda j, t: (j + 1, t + j), mode=mode)
            return i + 1, n, total

        i, _, total = kl.while_loop((kl.zeros(kl.UInt32, N), trips(), kl.zeros(kl.UInt32, N)),
                                    lambda i, n, t: i < n, outer_body, mode=mode)
        return i, total

    i, total = in_both_modes(run)
    expected = [sum(j for k in range(t) for j in range(k)) for t in TRIPS]
    assert_same(i, np.array(TRIPS, np.uint32))
    assert_same(total, np.array(expected, np.uint32))


def test_side_effects_under_masks():
    def run(mode):
        visits = kl.zeros(kl.UInt32, 16)
        even = kl.zeros(kl.UInt32, 16)

        def body(i, n):
            kl.scatter_add(visits, kl.UInt32(1), i)
            kl.scatter_add(even, kl.UInt32(1), i, active=i % 2 == 0)
            return i + 1, n

        kl.while_loop((kl.zeros(kl.UInt32, N), trips()), lambda i, n: i < n, body, mode=mode)
        return visits, even

    visits, even = in_both_modes(run)
    expected = np.array([sum(t > k for t in TRIPS) for k in range(16)], np.uint32)
    assert_same(visits, expected)
    assert_same(even, np.where(np.arange(16) % 2 == 0, expected, 0).astype(np.uint32))


def test_gathers_see_scatters_of_the_same_iteration():
    def run(mode):
        slots = kl.zeros(kl.UInt32, N)

        def body(i, lane, seen):
            kl.scatter_add(slots, kl.UInt32(1), lane)
            return i + 1, lane, seen + kl.gather(slots, lane)

        state = (kl.zeros(kl.UInt32, N), kl.arange(kl.UInt32, N), kl.zeros(kl.UInt32, N))
        return kl.while_loop(state, lambda i, lane, s: i < lane, body, mode=mode)[2], slots

    seen, slots = in_both_modes(run)
    lane = np.arange(N, dtype=np.uint32)
    assert_same(seen, lane * (lane + 1) // 2)
    assert_same(slots, lane)



def test_scatters_and_gathers_index_captured_buffers_in_both_modes():
    # Lanes finish at different iterations (the evaluated loop compacts them); the buffers
    # the body indexes are captured, so every lane reads and writes all of them.
    def run(mode):
        slots = kl.zeros(kl.UInt32, 16)
        table = kl.arange(kl.Float, N) * 10.0
        lane = kl.arange(kl.UInt32, N)

        def body(i, acc):
            kl.scatter_add(slots, kl.UInt32(1), (lane * 5) % 16)
            return i + 1, acc + kl.gather(table, (lane * 11 + i) % N)

        state = (kl.zeros(kl.UInt32, N), kl.zeros(kl.Float, N))
        i, acc = kl.while_loop(state, lambda i, acc: i < trips(), body, mode=mode)
        mirror = kl.if_stmt(lane % 5 == 1, lambda l: kl.gather(table, N - 1 - l), lambda l: kl.Float(-1.0), lane,
                            mode=mode)
        return slots, acc, mirror

    slots, acc, mirror = in_both_modes(run)
    expected_slots = np.zeros(16, np.uint32)
    expected_acc = np.zeros(N, np.float32)
    for lane, t in enumerate(TRIPS):
        expected_slots[(lane * 5) % 16] += t
        for i in range(t):
            expected_acc[lane] += ((lane * 11 + i) % N) * 10.0
    assert_same(slots, expected_slots)
    assert_same(acc, expected_acc)
    lane = np.arange(N)
    assert_same(mirror, np.where(lane % 5 == 1, (N - 1 - lane) * 10.0, -1.0).astype(np.float32))


def _index_state_buffer(mode):
    """scatter_add(buf, 1, idx) in a loop over (buf, i, idx): the state is per lane."""
    def body(buf, i, idx):
        kl.scatter_add(buf, kl.UInt32(1), idx)
        return buf, i + 1, idx

    state = (kl.zeros(kl.UInt32, N), kl.zeros(kl.UInt32, N), (kl.arange(kl.UInt32, N) * 7) % N)
    kl.while_loop(state, lambda buf, i, idx: i < trips(), body, mode=mode, name="fill")


def _index_branch_argument(mode):
    table = kl.arange(kl.Float, N) * 10.0
    lane = kl.arange(kl.UInt32, N)
    kl.if_stmt(lane < 3, lambda t, l: kl.gather(t, N - 1 - l), lambda t, l: t, (table, lane), mode=mode)


def _index_call_argument(mode):
    registry = kl.Registry()
    registry.add("only")
    lane = kl.arange(kl.UInt32, N)
    kl.dispatch(registry, lane % 2, lambda _, x, l: kl.gather(x, (l + 1) % N), kl.cast(kl.Float, lane), lane,
                mode=mode)


def _state_buffer_of_another_size(mode):
    buf = kl.zeros(kl.UInt32, 16)
    kl.while_loop((kl.zeros(kl.UInt32, N), buf), lambda i, b: i < trips(), lambda i, b: (i + 1, b), mode=mode,
                  name="fill")


@pytest.mark.parametrize("program, message", [
    (_index_state_buffer, "while_loop('fill'): the loop scatters into state[0]"),
    (_state_buffer_of_another_size, "while_loop('fill') state: arrays of 37 and 16 lanes"),
    (_index_branch_argument, "if_stmt(): a function gathers from args[0]"),
    (_index_call_argument, "dispatch(): a function gathers from args[0]"),
])
def test_indexing_per_lane_state_or_arguments_raises_in_both_modes(program, message):
    # Evaluated statements used to compact these arrays and index the wrong memory.
    messages = []
    for mode in MODES:
        with pytest.raises(ValueError, match=re.escape(message)) as error:
            program(mode)
        assert "from the enclosing scope" in str(error.value)
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_wide_types_in_loop_state():
    def run(mode):
        state = (kl.zeros(kl.Int64, N) - 3, kl.zeros(kl.UInt64, N), kl.zeros(kl.Float64, N), trips())
        return kl.while_loop(state, lambda a, b, c, n: b < kl.cast(kl.UInt64, n),
                             lambda a, b, c, n: (a * 2, b + 1, c + 0.1, n), mode=mode)[:3]

    a, b, c = in_both_modes(run)
    t = np.array(TRIPS)
    assert_same(a, (-3 * 2 ** t).astype(np.int64))
    assert_same(b, t.astype(np.uint64))


@dataclasses.dataclass
class Walker:
    position: kl.Array3f
    steps: kl.UInt32
    extra: dict


@pytest.mark.parametrize("kind", ["tuple", "list", "dict", "dataclass", "Array3f", "Matrix2f", "PCG32"])
def test_pytree_states(kind):
    def run(mode):
        n = trips()
        zero = kl.zeros(kl.UInt32, N)
        if kind == "tuple":
            state, cond = (zero, kl.Array2f(kl.zeros(kl.Float, N))), lambda i, v: i < n
            body = lambda i, v: (i + 1, v + kl.Array2f(kl.Float(1.0), kl.cast(kl.Float, i)))  # noqa: E731
        elif kind == "list":
            state, cond = [zero, [kl.zeros(kl.Int32, N)]], lambda i, v: i < n
            body = lambda i, v: [i + 1, [v[0] - 2]]  # noqa: E731
        elif kind == "dict":
            state, cond = {"depth": zero, "value": kl.zeros(kl.Float64, N)}, lambda s: s["depth"] < n
            body = lambda s: {"value": s["value"] + 0.25, "depth": s["depth"] + 1}  # noqa: E731
        elif kind == "dataclass":
            state = Walker(kl.Array3f(kl.zeros(kl.Float, N)), zero, {"flag": kl.zeros(kl.Bool, N)})

            def body(w):
                w.position = w.position + kl.Array3f(kl.Float(1.0), kl.Float(2.0), kl.Float(-1.0))
                w.extra = {"flag": ~w.extra["flag"]}
                w.steps = w.steps + 1
                return w

            cond = lambda w: w.steps < n  # noqa: E731
        elif kind == "Array3f":
            state = kl.Array3f(kl.cast(kl.Float, zero), kl.cast(kl.Float, n), kl.zeros(kl.Float, N))
            cond = lambda v: v.x < v.y  # noqa: E731
            body = lambda v: kl.Array3f(v.x + 1.0, v.y, v.z + v.x)  # noqa: E731
        elif kind == "Matrix2f":
            one, nil = kl.Float(1.0), kl.Float(0.0)
            step = kl.Matrix2f(one, one, nil, one)
            state, cond = (zero, kl.Matrix2f.identity()), lambda i, m: i < n
            body = lambda i, m: (i + 1, m @ step)  # noqa: E731
        else:
            state, cond = (zero, kl.PCG32(N), kl.zeros(kl.Float, N)), lambda i, rng, acc: i < n

            def body(i, rng, acc):
                return i + 1, rng, acc + rng.next_float32()

        return kl.while_loop(state, cond, body, mode=mode)

    result = in_both_modes(run)
    t = np.array(TRIPS)
    if kind == "dict":
        assert_same(result["value"], t * 0.25)
    elif kind == "dataclass":
        assert isinstance(result, Walker)
        assert_same(result.position, np.stack([t, 2 * t, -t], axis=1).astype(np.float32))
        assert_same(result.extra["flag"], t % 2 == 1)
    elif kind == "Matrix2f":
        m = np.zeros((N, 2, 2), np.float32)
        m[:, 0, 0] = m[:, 1, 1] = 1
        m[:, 0, 1] = t
        assert_same(result[1], m)
    elif kind == "PCG32":
        # The same draws unrolled with masks: lane i draws TRIPS[i] numbers.
        rng, acc = kl.PCG32(N), kl.zeros(kl.Float, N)
        for k in range(max(TRIPS)):
            active = trips() > k
            acc = kl.select(active, acc + rng.next_float32(active), acc)
        assert_same(result[2], acc.numpy())
        assert_same(result[1].state, rng.state.numpy())


def test_size_one_state_values_become_per_lane():
    def run(mode):
        n = trips()
        return kl.while_loop((kl.zeros(kl.UInt32, N), kl.Float(1.0)), lambda i, x: i < n,
                             lambda i, x: (i + 1, x * 2.0), mode=mode)

    i, x = in_both_modes(run)
    assert_same(x, np.exp2(np.array(TRIPS, np.float32)))


def test_loop_name_does_not_change_kernel_identity():
    def run(name):
        n = kl.UInt32([3, 1, 4, 1, 5, 9, 2])
        i, acc = kl.while_loop((kl.zeros(kl.UInt32, 7), kl.zeros(kl.Float, 7)), lambda i, a: i < n,
                               lambda i, a: (i + 1, a + 1.5), mode="symbolic", name=name)
        kl.eval(i, acc)
        return acc

    kl.kernel_history(clear=True)
    first = run("bounces")
    first_launches = kl.kernel_history(clear=True)
    second = run("another name")
    second_launches = kl.kernel_history(clear=True)
    assert_same(second, first.numpy())
    assert [r["hash"] for r in second_launches] == [r["hash"] for r in first_launches]
    assert all(r["source"] == "memory" for r in second_launches), second_launches


def test_symbolic_flag_sets_the_default_mode():
    def read_inside():
        def body(i):
            i.numpy()  # only possible when the body runs on the host
            return i + 1

        return kl.while_loop(kl.zeros(kl.UInt32, 4), lambda i: i < 2, body)

    kl.set_flag(kl.Flag.Symbolic, False)
    assert_same(read_inside(), np.full(4, 2, np.uint32))
    kl.set_flag(kl.Flag.Symbolic, True)
    with pytest.raises(ValueError, match="inside its body"):
        read_inside()


# ---------------------------------------------------------------------------------------
# if_stmt

def test_if_stmt_both_modes():
    def run(mode):
        x = kl.arange(kl.Float, N)
        lane = kl.arange(kl.UInt32, N)
        return kl.if_stmt(lane % 3 == 0, lambda x, k: (x * 2.0, {"k": k + 1}),
                          lambda x, k: (x - 1.0, {"k": k * 3}), (x, lane), mode=mode)

    x, k = in_both_modes(run)
    lane = np.arange(N)
    assert_same(x, np.where(lane % 3 == 0, lane * 2.0, lane - 1.0).astype(np.float32))
    assert_same(k["k"], np.where(lane % 3 == 0, lane + 1, lane * 3).astype(np.uint32))


def test_if_stmt_single_argument_and_vector_result():
    def run(mode):
        v = kl.Array3f(kl.arange(kl.Float, N), kl.Float(1.0), kl.Float(2.0))
        return kl.if_stmt(v.x > 10.0, lambda v: v * 2.0, lambda v: -v, v, mode=mode)

    result = in_both_modes(run)
    assert isinstance(result, kl.Array3f)
    x = np.arange(N, dtype=np.float32)
    expected = np.stack([x, np.ones(N, np.float32), np.full(N, 2, np.float32)], axis=1)
    assert_same(result, np.where((x > 10)[:, None], expected * 2, -expected))


@pytest.mark.parametrize("value", [True, False])
def test_if_stmt_with_a_size_one_condition(value):
    def run(mode):
        return kl.if_stmt(kl.Bool(value), lambda x: x + 1, lambda x: x + 2, (kl.arange(kl.UInt32, N),), mode=mode)

    assert_same(in_both_modes(run), np.arange(N, dtype=np.uint32) + (1 if value else 2))


def test_if_stmt_inside_a_loop():
    def run(mode):
        def body(i, n, acc):
            acc = kl.if_stmt(i % 2 == 0, lambda a, i: a + i, lambda a, i: a * 2, (acc, i), mode=mode)
            return i + 1, n, acc

        return kl.while_loop((kl.zeros(kl.UInt32, N), trips(), kl.zeros(kl.UInt32, N)), lambda i, n, a: i < n,
                             body, mode=mode)[2]

    expected = []
    for t in TRIPS:
        acc = 0
        for i in range(t):
            acc = acc + i if i % 2 == 0 else acc * 2
        expected.append(acc)
    assert_same(in_both_modes(run), np.array(expected, np.uint32))


def test_if_stmt_one_sided_side_effects():
    def run(mode):
        counts = kl.zeros(kl.UInt32, 8)
        lane = kl.arange(kl.UInt32, N)

        def record(slot):
            kl.scatter_add(counts, kl.UInt32(1), slot)
            return slot + 100

        result = kl.if_stmt(lane % 2 == 1, record, lambda slot: slot, (lane % 8,), mode=mode)
        return result, counts

    result, counts = in_both_modes(run)
    lane = np.arange(N)
    assert_same(result, np.where(lane % 2 == 1, lane % 8 + 100, lane % 8).astype(np.uint32))
    assert_same(counts, np.bincount(lane[lane % 2 == 1] % 8, minlength=8).astype(np.uint32))


def test_if_stmt_with_side_effects_only():
    def run(mode):
        counts = kl.zeros(kl.UInt32, 4)
        lane = kl.arange(kl.UInt32, N)
        result = kl.if_stmt(lane < 10, lambda s: kl.scatter_add(counts, kl.UInt32(1), s), lambda s: None,
                            (lane % 4,), mode=mode)
        assert result is None
        return counts

    counts = in_both_modes(run)
    assert_same(counts, np.bincount(np.arange(10) % 4, minlength=4).astype(np.uint32))


# ---------------------------------------------------------------------------------------
# dispatch

class Gain:
    def __init__(self, k):
        self.k = k

    def apply(self, x, lane):
        return x * float(self.k) + 1.0, lane + self.k


@pytest.mark.parametrize("count", [1, 3, 50])
def test_dispatch_over_instances_with_null_ids(count):
    registry = kl.Registry()
    ids_of = [registry.add(Gain(k)) for k in range(1, count + 1)]
    assert ids_of == list(range(1, count + 1))
    if count >= 3:
        registry.remove(2)
        assert registry.get(2) is None and 2 not in registry.ids()
    lane = np.arange(N)
    ids = (lane * 7) % (count + 2)  # includes 0 (null) and count + 1 (out of range)

    def run(mode):
        return kl.dispatch(registry, kl.UInt32(ids.astype(np.uint32)), lambda g, x, i: g.apply(x, i),
                           kl.arange(kl.Float, N), kl.arange(kl.UInt32, N), mode=mode)

    x, k = in_both_modes(run)
    valid = np.isin(ids, registry.ids())
    assert_same(x, np.where(valid, lane * ids + 1.0, 0).astype(np.float32))
    assert_same(k, np.where(valid, lane + ids, 0).astype(np.uint32))


def test_loops_inside_dispatch_inside_loops():
    class Material:
        def __init__(self, steps, gain):
            self.steps, self.gain = steps, gain

        def shade(self, value, bounce, mode):
            # A per-lane inner loop: bounce + steps iterations.
            _, value = kl.while_loop((bounce - bounce, value), lambda j, v: j < bounce + self.steps,
                                     lambda j, v: (j + 1, v + self.gain), mode=mode)
            return value

    registry = kl.Registry()
    for steps, gain in [(1, 1), (2, 10), (0, 100)]:
        registry.add(Material(steps, gain))

    def run(mode):
        def body(bounce, depth, material, value):
            value = kl.dispatch(registry, material, lambda m, v, b: m.shade(v, b, mode), value, bounce, mode=mode)
            return bounce + 1, depth, material % 3 + 1, value

        state = (kl.zeros(kl.UInt32, N), trips() % 5, kl.UInt32([lane % 4 for lane in range(N)]),
                 kl.zeros(kl.UInt32, N))
        return kl.while_loop(state, lambda b, d, m, v: b < d, body, mode=mode)[3]

    value = in_both_modes(run)
    expected = []
    for lane in range(N):
        material, total = lane % 4, 0
        for bounce in range(TRIPS[lane] % 5):
            if material:
                steps, gain = [(1, 1), (2, 10), (0, 100)][material - 1]
                total += (bounce + steps) * gain
            else:
                total = 0  # null ids give zeros
            material = material % 3 + 1
        expected.append(total)
    assert_same(value, np.array(expected, np.uint32))


def test_registry():
    registry = kl.Registry()
    a, b = object(), object()
    assert registry.add(a) == 1 and registry.add(b) == 2
    registry.remove(1)
    registry.remove(7)  # unknown ids are ignored
    assert registry.get(1) is None and registry.get(2) is b and registry.get(0) is None
    assert registry.ids() == [2] and len(registry) == 1
    assert registry.add(a) == 3


# ---------------------------------------------------------------------------------------
# Errors

def test_non_kiln_leaves_name_their_path():
    ok = kl.zeros(kl.UInt32, 3)
    cases = [
        ({"depth": 0, "x": ok}, r"state\['depth'\] is int; wrap it in a Kiln array such as kl.UInt32\(0\)"),
        ((ok, 1.5), r"state\[1\] is float; wrap it in a Kiln array such as kl.Float\(1.5\)"),
        ((ok, [ok, None]), r"state\[1\]\[1\] is None"),
        ({"x": ok, "a": np.zeros(3, np.float32)}, r"state\['a'\] is a NumPy array; wrap it in a Kiln array such as kl.Float"),
        (Walker(kl.Array3f(kl.Float(0.0)), ok, {"n": 2}), r"state.extra\['n'\] is int"),
    ]
    for state, message in cases:
        with pytest.raises(TypeError, match=message):
            kl.while_loop(state, lambda *s: kl.Bool(False), lambda *s: s)


@pytest.mark.parametrize("mode", MODES)
def test_body_with_another_structure_names_the_path(mode):
    n = kl.UInt32([1, 2, 3])
    state = {"depth": kl.zeros(kl.UInt32, 3), "x": kl.zeros(kl.Float, 3)}
    wrong = [
        (lambda s: {"depth": s["depth"] + 1, "x": kl.cast(kl.UInt32, s["x"])},
         r"body returned kl.UInt32 at state\['x'\], expected kl.Float"),
        (lambda s: {"depth": s["depth"] + 1}, r"body returned a dict with keys \['depth'\] at state"),
        (lambda s: {"depth": s["depth"] + 1, "x": 2.0}, r"returned float at state\['x'\].*kl.Float\(2.0\)"),
        (lambda s: (s["depth"], s["x"]), r"returned a tuple of 2 at state, expected a dict"),
    ]
    for body, message in wrong:
        with pytest.raises(TypeError, match=message):
            kl.while_loop(state, lambda s: s["depth"] < n, body, mode=mode)
    with pytest.raises(TypeError, match=r"false_fn returned kl.Float at result\[1\], expected kl.UInt32"):
        kl.if_stmt(n > 1, lambda a: (a, a), lambda a: (a, kl.cast(kl.Float, a)), (n,), mode=mode)
    registry = kl.Registry()
    registry.add(kl.UInt32)
    registry.add(kl.Float)
    with pytest.raises(TypeError, match=r"instance 2 returned kl.Float at result, expected kl.UInt32"):
        kl.dispatch(registry, n, lambda cls, a: a if cls is kl.UInt32 else kl.cast(kl.Float, a), n, mode=mode)


class Boom(Exception):
    pass


@pytest.mark.parametrize("mode", MODES)
def test_exceptions_in_callbacks_propagate(mode):
    def boom(*args):
        raise Boom("from the body")

    lane = kl.arange(kl.UInt32, 5)
    with pytest.raises(Boom, match="from the body"):
        kl.while_loop(lane, lambda i: i < 3, boom, mode=mode)
    with pytest.raises(Boom):
        kl.while_loop(lane, boom, lambda i: i + 1, mode=mode)
    with pytest.raises(Boom):
        kl.if_stmt(lane < 2, lambda i: i, boom, (lane,), mode=mode)
    registry = kl.Registry()
    registry.add("instance")
    with pytest.raises(Boom):
        kl.dispatch(registry, lane % 2, boom, lane, mode=mode)
    # Kiln is still usable: the same loop runs.
    result = kl.while_loop(lane, lambda i: i < 3, lambda i: i + 1, mode=mode)
    assert_same(result, np.array([3, 3, 3, 3, 4], np.uint32))
    assert_same(lane * 2, np.arange(5, dtype=np.uint32) * 2)


def test_reading_a_symbolic_value_inside_the_body_raises():
    def body(i):
        i.numpy()
        return i + 1

    with pytest.raises(ValueError, match="inside its body"):
        kl.while_loop(kl.zeros(kl.UInt32, 3), lambda i: i < 2, body, mode="symbolic")
    result = kl.while_loop(kl.zeros(kl.UInt32, 3), lambda i: i < 2, body, mode="evaluated")
    assert_same(result, np.full(3, 2, np.uint32))


def test_values_of_a_symbolic_body_do_not_leave_it():
    kept = []

    def body(i):
        kept.append(i * 2)
        return i + 1

    kl.while_loop(kl.zeros(kl.UInt32, 3), lambda i: i < 2, body, mode="symbolic")
    with pytest.raises(ValueError, match="part of the loop state"):
        kept[0] + 1


def test_bad_arguments():
    lane = kl.arange(kl.UInt32, 3)
    with pytest.raises(ValueError, match="mode must be"):
        kl.while_loop(lane, lambda i: i < 2, lambda i: i + 1, mode="fast")
    with pytest.raises(TypeError, match="cond must return a kl.Bool"):
        kl.while_loop(lane, lambda i: True, lambda i: i + 1)
    with pytest.raises(TypeError, match="condition must be a kl.Bool"):
        kl.if_stmt(lane, lambda: None, lambda: None)
    with pytest.raises(TypeError, match="kl.UInt32"):
        kl.dispatch(kl.Registry(), kl.Int32([1]), lambda o: None)
    with pytest.raises(ValueError, match=re.escape("state[0] has no value")):
        kl.while_loop((kl.UInt32(),), lambda i: i < 2, lambda i: i + 1)


def test_statements_inside_a_symbolic_one_inherit_it_and_evaluated_ones_are_refused():
    """With evaluated the default, an if_stmt without mode= in a symbolic loop is symbolic;
    mode=kl.ControlMode.Evaluated there says why it cannot be."""
    saved = kl.flag(kl.Flag.Symbolic)
    kl.set_flag(kl.Flag.Symbolic, False)
    try:
        i = kl.arange(kl.UInt32, 4)
        branch = lambda i, mode=None: kl.if_stmt(i > 1, lambda v: (v * 2,), lambda v: (v + 1,), (i,), mode=mode)[0]  # noqa: E731
        (out,) = kl.while_loop((i,), lambda i: i < 8, lambda i: (branch(i),), mode=kl.ControlMode.Symbolic)
        assert list(out.numpy()) == [8, 8, 8, 12]
        with pytest.raises(ValueError, match=r"if_stmt\(\): mode=evaluated inside while_loop\(\), which is symbolic"):
            kl.while_loop((i,), lambda i: i < 8, lambda i: (branch(i, kl.ControlMode.Evaluated),),
                          mode=kl.ControlMode.Symbolic)
    finally:
        kl.set_flag(kl.Flag.Symbolic, saved)
