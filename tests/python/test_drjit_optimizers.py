"""kr.SGD / kr.Adam (mi.ad.SGD / mi.ad.Adam) with Dr.Jit 1.5's optimizer options (issue 29):
momentum and Nesterov's, mask_updates, per-key learning rates, UniformAdam and AMSGrad,
reset() of every key, update(). Each expected value is the update rule of drjit/opt.py
worked out by hand here."""

import math

import numpy as np
import pytest

import kiln as kl
import kiln.render as kr


def step_with_gradient(opt, key, gradient):
    """One step of `opt` after a backward pass giving `key` the gradient `gradient`."""
    value = opt[key]
    kl.backward(kl.sum(value * kl.Float(np.asarray(gradient, dtype=np.float32))))
    opt.step()
    return opt[key].numpy()


def test_sgd_momentum_and_nesterov():
    for nesterov, expected in ((False, [1.0 - 0.1 * 2.0, 0.8 - 0.1 * (0.5 * 2.0 + 2.0)]),
                               (True, [1.0 - 0.1 * (0.5 * 2.0 + 2.0), 0.7 - 0.1 * (0.5 * 3.0 + 2.0)])):
        opt = kr.SGD(lr=0.1, momentum=0.5, nesterov=nesterov)
        opt["x"] = kl.Float([1.0])
        first = step_with_gradient(opt, "x", [2.0])
        second = step_with_gradient(opt, "x", [2.0])
        assert np.allclose([first[0], second[0]], expected, atol=1e-6), (nesterov, first, second)


def test_sgd_argument_errors():
    with pytest.raises(ValueError, match="momentum"):
        kr.SGD(lr=0.1, momentum=-1.0)
    with pytest.raises(ValueError, match="Nesterov"):
        kr.SGD(lr=0.1, nesterov=True)
    with pytest.raises(TypeError):
        kr.SGD(0.1, None, 0.9)  # Dr.Jit's options are keyword-only


def test_mask_updates_keeps_lanes_without_gradient():
    def two_steps(mask_updates):
        opt = kr.Adam(lr=0.1, mask_updates=mask_updates)
        opt["x"] = kl.Float([1.0, 1.0])
        first = step_with_gradient(opt, "x", [1.0, 1.0])
        return first, step_with_gradient(opt, "x", [1.0, 0.0])

    first, masked = two_steps(True)
    assert np.allclose(first, 0.9, atol=1e-5)
    assert masked[1] == first[1]  # no gradient: value (and moments) kept
    # Without the mask the first step's momentum moves the lane on.
    _, unmasked = two_steps(False)
    assert unmasked[1] < first[1] - 1e-3 and masked[0] == pytest.approx(unmasked[0])


def test_per_key_learning_rates():
    opt = kr.SGD(lr=0.25)
    opt["x"] = kl.Float([1.0])
    opt["y"] = kl.Array3f(1.0, 1.0, 1.0)
    opt.set_learning_rate({"x": 0.125})
    opt.set_learning_rate(y=0.5)
    assert opt.learning_rate() == 0.25 and opt.learning_rate("x") == 0.125 and opt.learning_rate("y") == 0.5
    kl.backward(opt["x"] + kl.sum(opt["y"].x + opt["y"].y + opt["y"].z))
    opt.step()
    assert opt["x"].numpy()[0] == pytest.approx(0.875)
    assert np.allclose(np.asarray(opt["y"]).ravel(), 0.5)
    opt.set_learning_rate(x=None)
    opt.set_learning_rate(0.5)
    assert opt.learning_rate("x") is None and opt.learning_rate() == 0.5 and opt.lr == 0.5
    with pytest.raises(TypeError, match="number or a mapping"):
        opt.set_learning_rate("fast")
    with pytest.raises(ValueError, match="no parameter 'z'"):
        opt.set_learning_rate(z=0.1)


def test_uniform_adam_scales_every_lane_by_the_largest_second_moment():
    opt = kr.Adam(lr=0.1, uniform=True)
    opt["x"] = kl.Float([0.0, 0.0])
    after = step_with_gradient(opt, "x", [1.0, 4.0])
    # m = 0.1 g, v = 0.001 g^2, bias-corrected: lr * g / max|g| per lane.
    assert np.allclose(after, [-0.1 * 1.0 / 4.0, -0.1], atol=1e-6)


def test_amsgrad_keeps_the_largest_second_moment():
    def second_step(amsgrad):
        opt = kr.Adam(lr=0.1, amsgrad=amsgrad, beta_1=0.0, beta_2=0.5)
        opt["x"] = kl.Float([0.0])
        assert step_with_gradient(opt, "x", [10.0])[0] == pytest.approx(-0.1)
        return step_with_gradient(opt, "x", [1.0])[0]

    scale = 0.1 * math.sqrt(1 - 0.5 ** 2)
    # v: 0.5 * 100 = 50 after the first step, 0.5 * 50 + 0.5 * 1 = 25.5 after the second.
    assert second_step(True) == pytest.approx(-0.1 - scale / math.sqrt(50.0), rel=1e-5)
    assert second_step(False) == pytest.approx(-0.1 - scale / math.sqrt(25.5), rel=1e-5)
    with pytest.raises(ValueError, match="exclude each other"):
        kr.Adam(lr=0.1, uniform=True, amsgrad=True)


def test_reset_of_every_key_and_update():
    opt = kr.Adam(lr=0.1)
    opt.update({"x": kl.Float([0.0])}, y=kl.Float([0.0]))
    assert opt.keys() == ["x", "y"] and len(opt.values()) == 2
    kl.backward(opt["x"] + opt["y"])
    opt.step()
    opt.reset()
    after = step_with_gradient(opt, "x", [1.0])
    assert after[0] == pytest.approx(-0.2, abs=1e-5)  # a first step again after the reset
