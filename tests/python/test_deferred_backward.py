"""kl.deferred_backward() (issue 29): backward_from() calls inside it, also in loop bodies
(symbolic or evaluated, as sum loops run again by reverse mode), add up to one traversal
whose gradients equal those of separate traversals; an exception drops the sum."""

import numpy as np
import pytest

import kiln as kl


def table():
    values = kl.Float([1.0, 2.0, 3.0, 4.0])
    kl.enable_grad(values)
    return values


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
def test_calls_inside_a_loop_body_add_up_to_one_traversal(mode):
    values = table()
    seed = kl.Float([1.0, 10.0, 100.0])
    with kl.deferred_backward():
        with kl.suspend_grad():
            def body(i, total):
                with kl.resume_grad():
                    v = kl.gather(values, i)
                    kl.backward_from(v * v, seed)  # d/dv = 2 v, per lane and iteration
                return i + 1, total + v

            i, total = kl.while_loop((kl.UInt32([0, 1, 2]), kl.zeros(kl.Float, 3)), lambda i, t: i < 4, body,
                                     mode=mode)
        with kl.resume_grad():
            kl.backward_from(kl.gather(values, kl.UInt32([3])), 1000.0)  # outside the loop, in the same sum
        assert np.all(np.asarray(kl.grad(values)) == 0)  # nothing traversed yet
    np.testing.assert_allclose(np.asarray(total), [10.0, 9.0, 7.0])
    # value k is read by lanes 0..min(k, 2), each time with 2 v times the lane's seed
    expected = [2 * 1 * 1, 2 * 2 * 11, 2 * 3 * 111, 2 * 4 * 111 + 1000]
    np.testing.assert_allclose(np.asarray(kl.grad(values)), expected)


def test_an_exception_drops_the_sum_and_scopes_nest():
    values = table()
    with pytest.raises(RuntimeError, match="stop"):
        with kl.deferred_backward():
            kl.backward_from(values * 3.0, 1.0)
            raise RuntimeError("stop")
    assert np.all(np.asarray(kl.grad(values)) == 0)
    with kl.deferred_backward():
        kl.backward_from(values * 2.0, 1.0)
        with kl.deferred_backward():
            kl.backward_from(values * 5.0, 1.0)
        np.testing.assert_allclose(np.asarray(kl.grad(values)), 5.0)  # the inner scope traversed on leaving
    np.testing.assert_allclose(np.asarray(kl.grad(values)), 7.0)


def test_outside_the_scope_a_traversal_inside_a_loop_is_still_an_error():
    values = table()

    def body(i):
        kl.backward_from(kl.gather(values, i), 1.0)
        return i + 1

    with pytest.raises(ValueError, match="cannot start inside a loop"):
        kl.while_loop(kl.UInt32([0]), lambda i: i < 2, body)
