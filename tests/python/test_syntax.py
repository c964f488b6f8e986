"""@kl.syntax (Dr.Jit's @dr.syntax, issue 29): while loops and if statements whose conditions
are Kiln arrays become kl.while_loop / kl.if_stmt; Python conditions keep Python's meaning.
Each result is checked against the same computation written with NumPy."""

import numpy as np
import pytest

import kiln as kl


@kl.syntax
def doublings(x, n):
    i = kl.UInt32(0)
    while i < n:
        x = x * 2.0
        i += 1
    return x


def test_array_condition_runs_a_loop_per_lane():
    result = doublings(kl.Float([1.0, 3.0, 5.0]), kl.UInt32([0, 1, 4]))
    assert result.numpy().tolist() == [1.0, 6.0, 80.0]


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
def test_both_control_flow_modes(mode):
    kl.set_flag(kl.Flag.Symbolic, mode == "symbolic")
    assert doublings(kl.Float([1.0, 2.0]), kl.UInt32([2, 3])).numpy().tolist() == [4.0, 16.0]


@kl.syntax
def mixed(x, limit):
    k = 0
    while k < 3:  # a Python condition: an ordinary loop
        x = x + 1.0
        k += 1
    if x > limit:  # an array condition: both branches, per lane
        x = x * 10.0
        tag = kl.UInt32(1)
    else:
        x = -x
        tag = kl.UInt32(2)
    if k == 3:  # a Python condition again
        x = x + 0.5
    return x, tag


def test_python_and_array_conditions_in_one_function():
    x, tag = mixed(kl.Float([1.0, 2.0]), 4.0)
    values = np.array([1.0, 2.0]) + 3.0
    expected = np.where(values > 4.0, values * 10.0, -values) + 0.5
    assert np.allclose(x.numpy(), expected) and tag.numpy().tolist() == [2, 1]


@kl.syntax
def ambient_occlusion_like(rng, count):
    hits = kl.Float([0.0] * 4)
    i = kl.UInt32(0)
    while i < count:
        hits[rng.next_float32() < 0.25] += 1.0  # a masked update of loop state
        i += 1
    return hits


def test_generators_and_masked_updates_carry_through_the_loop():
    hits = ambient_occlusion_like(kl.PCG32(4), 2000).numpy()
    assert np.all(np.abs(hits / 2000 - 0.25) < 0.04), hits
    # The generator passed in advanced in place, as its methods advance it in Python.
    rng = kl.PCG32(4)
    ambient_occlusion_like(rng, 10)
    reference = kl.PCG32(4)
    for _ in range(10):
        reference.next_float32()
    assert np.array_equal(rng.state.numpy(), reference.state.numpy())


def test_a_variable_assigned_in_one_branch_only_is_an_error():
    @kl.syntax
    def one_sided(x):
        if x > 1.0:
            y = x * 2.0
        return x

    with pytest.raises(ValueError, match="y must hold a Kiln value after both branches"):
        one_sided(kl.Float([0.0, 2.0]))


def test_closures_defaults_and_methods():
    scale = 3.0

    @kl.syntax
    def scaled(x, factor=2.0):
        while x < 10.0:
            x = x * factor * scale
        return x

    assert scaled(kl.Float([1.0, 20.0])).numpy().tolist() == [36.0, 20.0]

    class Integrator:
        steps = 2

        @kl.syntax
        def run(self, x):
            i = kl.UInt32(0)
            while i < self.steps:
                x += 1.0
                i += 1
            return x

    assert Integrator().run(kl.Float([0.0])).numpy().tolist() == [2.0]


def test_a_python_value_changed_under_an_array_condition_is_an_error():
    @kl.syntax
    def counts(x):
        n = 0
        while x < 5.0:
            x = x + 1.0
            n += 1
        return n

    with pytest.raises(ValueError, match="'n' changes"):
        counts(kl.Float([1.0, 2.0]))


def test_loops_with_break_stay_python_loops():
    @kl.syntax
    def first_above(values, limit):
        found = None
        for v in values:
            while True:
                if v > limit:
                    found = v
                break
        return found

    assert first_above([1, 5, 9], 4) == 9


def test_print_code_and_source_errors(capsys):
    @kl.syntax(print_code=True)
    def shown(x):
        while x < 1.0:
            x = x + 1.0
        return x

    assert "run_while" in capsys.readouterr().out
    with pytest.raises(ValueError, match="cannot read the source"):
        kl.syntax(eval("lambda x: x"))
