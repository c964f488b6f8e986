"""Optimizing scene parameters (issue 18): kr.SGD / kr.Adam in Mitsuba's style
(opt[key] = params[key]; params.update(opt); opt.step()), whose update rule is kl.nn's, and
params[key] handing out the scene's own arrays so kl.enable_grad(params[key]) works as in
Mitsuba."""

import numpy as np
import pytest

import kiln as kl
import kiln.render as kr

KEY = "wall.bsdf.reflectance.value"


def small_scene():
    """A wall lit by a point light, 8 x 8, direct lighting only."""
    T = kr.Transform4f
    return kr.load_dict({
        "type": "scene", "integrator": {"type": "direct"},
        "sensor": {"type": "perspective", "fov": 40, "to_world": T().look_at([0, 0, 3], [0, 0, 0], [0, 1, 0]),
                   "film": {"type": "hdrfilm", "width": 8, "height": 8}},
        "wall": {"type": "rectangle", "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.2, 0.5, 0.8]}}},
        "lamp": {"type": "point", "position": [0, 0, 2], "intensity": {"type": "rgb", "value": [3, 3, 3]}},
    })


def numpy_adam(p, gradients, lr, beta_1, beta_2, eps):
    """Adam with bias correction, step by step, in float64."""
    m = v = np.zeros_like(p)
    for t, g in enumerate(gradients, start=1):
        m = beta_1 * m + (1 - beta_1) * g
        v = beta_2 * v + (1 - beta_2) * g * g
        p = p - lr * np.sqrt(1 - beta_2 ** t) / (1 - beta_1 ** t) * m / (np.sqrt(v) + eps)
    return p


def take_steps(opt, key, gradients):
    for g in gradients:
        kl.set_grad(opt[key], kl.Float(g.astype(np.float32)))
        opt.step()
    return np.asarray(opt[key], dtype=np.float64)


def test_adam_steps_are_adams_and_kl_nn_takes_the_same_ones():
    rng = np.random.default_rng(1)
    start = rng.uniform(0, 1, 5)
    gradients = [rng.normal(size=5) for _ in range(4)]
    opt = kr.Adam(lr=0.1, beta_1=0.8, beta_2=0.95, epsilon=1e-4, params={"x": kl.Float(start.astype(np.float32))})
    ours = take_steps(opt, "x", gradients)
    np.testing.assert_allclose(ours, numpy_adam(start, gradients, 0.1, 0.8, 0.95, 1e-4), rtol=1e-5, atol=1e-6)

    tensor = kl.TensorXf(start.astype(np.float32))
    nn_adam = kl.nn.Adam([tensor], lr=0.1, betas=(0.8, 0.95), eps=1e-4)
    for g in gradients:
        kl.set_grad(tensor, kl.TensorXf(g.astype(np.float32)))
        nn_adam.step()
    np.testing.assert_array_equal(tensor.numpy(), ours.astype(np.float32))  # one implementation


def test_sgd_moves_each_component_of_an_rgb_value():
    opt = kr.SGD(lr=0.5)
    opt["c"] = kl.Array3f(1.0, 2.0, 3.0)
    kl.set_grad(opt["c"], kl.Array3f(1.0, -2.0, 4.0))
    opt.step()
    np.testing.assert_allclose(np.asarray(opt["c"]).ravel(), [0.5, 3.0, 1.0])
    assert kl.grad_enabled(opt["c"]) and isinstance(opt["c"], kl.Array3f)


def test_sgd_moves_a_2d_value_which_params_update_refuses():
    """A 2D value (the pose tutorial's translation, mi.Point2f): optimized like the others;
    no scene parameter holds one, so params.update(opt) says so instead of guessing."""
    opt = kr.SGD(lr=0.5)
    opt["t"] = kr.Point2f(0.1, -0.25)
    kl.set_grad(opt["t"], kl.Array2f(1.0, -2.0))
    opt.step()
    np.testing.assert_allclose(np.asarray(opt["t"]).ravel(), [-0.4, 0.75])
    assert kl.grad_enabled(opt["t"]) and isinstance(opt["t"], kl.Array2f)
    params = kr.traverse(kr.load_dict({"type": "scene", "obj": {"type": "sphere"}}))
    opt = kr.SGD(lr=0.5)
    opt["obj.to_world"] = kl.Array2f(1.0, 2.0)
    with pytest.raises(TypeError, match="2D vector"):
        params.update(opt)


def test_putting_back_a_clamped_value_keeps_the_state_a_new_size_resets_it():
    rng = np.random.default_rng(2)
    gradients = [rng.normal(size=3) for _ in range(3)]
    start = np.full(3, 0.5)
    kept = kr.Adam(lr=0.05, params={"x": kl.Float(start.astype(np.float32))})
    take_steps(kept, "x", gradients[:2])
    kept["x"] = kl.Float(kept["x"])  # same size (e.g. clamped): Adam's moments and step count stay
    expected = numpy_adam(start, gradients, 0.05, 0.9, 0.999, 1e-8)
    np.testing.assert_allclose(take_steps(kept, "x", gradients[2:]), expected, rtol=1e-5)

    restarted = kr.Adam(lr=0.05, params={"x": kl.Float(start.astype(np.float32))})
    take_steps(restarted, "x", gradients[:2])
    restarted.reset("x")
    middle = np.asarray(restarted["x"], dtype=np.float64)
    np.testing.assert_allclose(take_steps(restarted, "x", gradients[2:]),
                               numpy_adam(middle, gradients[2:], 0.05, 0.9, 0.999, 1e-8), rtol=1e-5)
    restarted["x"] = kl.Float([1.0, 2.0])  # another size: a fresh start
    assert np.asarray(take_steps(restarted, "x", [np.array([1.0, -1.0])])).tolist() == pytest.approx([0.95, 2.05])


def test_an_inverse_rendering_loop_recovers_a_reflectance():
    scene = small_scene()
    params = kr.traverse(scene)
    target = kr.render(scene, spp=16, seed=0)
    truth = np.asarray(params[KEY]).ravel().copy()
    params[KEY] = kl.Array3f(0.5, 0.5, 0.5)
    params.update()
    opt = kr.Adam(lr=0.05)
    opt[KEY] = params[KEY]
    params.update(opt)
    losses = []
    for it in range(60):
        image = kr.render(scene, params, spp=4, seed=it + 1)
        loss = kl.mean(kl.square(image - target))
        kl.backward(loss)
        losses.append(float(np.asarray(loss)))
        opt.step()
        opt[KEY] = kl.clip(opt[KEY], 0.0, 1.0)
        params.update(opt)
    assert np.mean(losses[-10:]) < 0.15 * losses[0]  # down to the noise of 4 spp
    np.testing.assert_allclose(np.asarray(params[KEY]).ravel(), truth, atol=0.03)


def test_enable_grad_on_params_item_differentiates_the_scene():
    # Mitsuba's idiom: params[key] is the scene's own array; update() sees it changed.
    scene = small_scene()
    params = kr.traverse(scene)
    kl.enable_grad(params[KEY])
    params.update()
    kl.backward(kl.sum(kr.render(scene, params, spp=2, seed=0)))
    via_item = np.asarray(kl.grad(params[KEY]))

    value = kl.detach(params[KEY])  # a value without derivatives, made a new leaf
    kl.enable_grad(value)
    params[KEY] = value
    params.update()
    kl.backward(kl.sum(kr.render(scene, params, spp=2, seed=0)))
    np.testing.assert_allclose(via_item, np.asarray(kl.grad(value)), rtol=1e-6)
    assert via_item.min() > 0


def test_params_update_takes_a_mapping_and_checks_keys_first():
    scene = small_scene()
    params = kr.traverse(scene)
    params.update({KEY: [0.1, 0.2, 0.3]})
    np.testing.assert_allclose(np.asarray(params[KEY]).ravel(), [0.1, 0.2, 0.3], rtol=1e-6)
    opt = kr.SGD(lr=1.0, params={KEY: kl.Array3f(0.9, 0.9, 0.9), "no.such.key": kl.Float(1.0)})
    with pytest.raises(ValueError, match="no parameter 'no.such.key'"):
        params.update(opt)
    np.testing.assert_allclose(np.asarray(params[KEY]).ravel(), [0.1, 0.2, 0.3], rtol=1e-6)  # unchanged
    with pytest.raises(TypeError, match="kr.SGD, kr.Adam or a mapping"):
        params.update(42)


def test_bad_optimizer_use_raises():
    opt = kr.Adam(lr=0.1)
    with pytest.raises(KeyError):
        opt["missing"]
    with pytest.raises(KeyError):
        del opt["missing"]
    with pytest.raises(TypeError, match=r"optimizer\['x'\]: the value must be a kl.Float, a kl.Array2f, a kl.Array3f, a kl.TensorXf or a number"):
        opt["x"] = "red"
    with pytest.raises(ValueError, match="betas must lie in"):
        kr.Adam(lr=0.1, beta_1=1.0)
    with pytest.raises(ValueError, match="eps must be positive"):
        kr.Adam(lr=0.1, epsilon=0.0)
    with pytest.raises(TypeError, match="params must be a mapping"):
        kr.SGD(lr=0.1, params=[1, 2])
    opt["x"] = 2.0
    opt.step()  # no gradient yet: nothing moves
    assert float(np.asarray(opt["x"])[0]) == 2.0
    assert list(opt) == ["x"] and len(opt) == 1 and "x" in opt
    del opt["x"]
    assert len(opt) == 0
    opt.step()
