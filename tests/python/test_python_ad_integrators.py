"""Differentiable integrators written in Python (issue 29: Mitsuba's mi.ad.common contract,
as the radiance field tutorial writes one): an RBIntegrator subclass whose sample() calls
kl.backward_from inside its marching loop renders through kr.render, and the gradients of
its path replay equal plain reverse-mode AD of its primal render with the same random
numbers; its grid parameters are TensorXf behind mi.Texture3f, listed by traverse(),
optimized by kr.ad.Adam (state per key, reset by a new shape) and resampled through params."""

import numpy as np
import pytest

import kiln as kl
import kiln.render as kr

STEPS = 6


class GridEmitter(kr.ad.RBIntegrator):
    """Light emitted and absorbed in the unit cube, marched with a fixed step: a density
    grid and a color grid in 3D textures (the radiance field integrator in miniature)."""

    def __init__(self, props=None):
        super().__init__(props)
        self.bbox = kr.ScalarBoundingBox3f([0.0, 0.0, 0.0], [1.0, 1.0, 1.0])
        rng = np.random.default_rng(5)
        self.density = kr.Texture3f(kl.TensorXf(rng.uniform(0.5, 3.0, (4, 4, 4, 1)).astype(np.float32)))
        self.color = kr.Texture3f(kl.TensorXf(rng.uniform(0.1, 0.9, (4, 4, 4, 3)).astype(np.float32)))

    @kl.syntax
    def sample(self, mode, scene, sampler, ray, δL, state_in, active, **kwargs):
        primal = mode == kl.ADMode.Primal
        hit, mint, maxt = self.bbox.ray_intersect(ray)
        active = kl.Bool(active) & hit
        step = kl.Float(1.0 / STEPS)
        t = mint + sampler.next_1d(active) * step
        L = kl.Array3f(0.0) if primal else kl.Array3f(state_in)
        δL = kl.Array3f(0.0) if δL is None else kl.Array3f(δL)
        throughput = kl.Array3f(1.0)
        while active:
            p = kr.Point3f(ray(t))
            with kl.resume_grad(when=not primal):
                transmittance = kl.exp(-kl.maximum(self.density.eval(p)[0], 0.0) * step)
                emitted = throughput * (1.0 - transmittance) * kl.Array3f(self.color.eval(p))
            throughput = throughput * transmittance
            L = L + emitted if primal else L - emitted
            with kl.resume_grad(when=not primal):
                if not primal:
                    kl.backward_from(δL * (L * transmittance / kl.detach(transmittance) + emitted))
            t = t + step
            active = active & (t < maxt)
        return (L if primal else δL), kl.Bool(True), [], L

    def traverse(self, cb):
        cb.put("density", self.density.tensor(), kr.ParamFlags.Differentiable)
        cb.put("color", self.color.tensor(), kr.ParamFlags.Differentiable)

    def parameters_changed(self, keys):
        self.density.update_inplace()
        self.color.update_inplace()


kr.register_integrator("test_grid_emitter", lambda props: GridEmitter(props))


def sensor(angle, size=12):
    return kr.load_dict({
        "type": "perspective", "fov": 45,
        "to_world": kr.ScalarTransform4f().translate([0.5, 0.5, 0.5]).rotate([0, 1, 0], angle).look_at(
            target=[0, 0, 0], origin=[0, 0, 1.6], up=[0, 1, 0]),
        "film": {"type": "hdrfilm", "width": size, "height": size, "filter": {"type": "box"},
                 "pixel_format": "rgba"}})


def scene_with_grid():
    scene = kr.load_dict({"type": "scene", "integrator": {"type": "test_grid_emitter"}, "light": {"type": "constant"}})
    return scene, scene.integrator()


def weights(shape):
    return kl.TensorXf(np.random.default_rng(2).uniform(0.0, 1.0, shape).astype(np.float32))


def test_render_is_the_primal_pass_and_the_integrator_is_the_python_instance():
    scene, integrator = scene_with_grid()
    assert isinstance(integrator, GridEmitter)
    image = np.asarray(kr.render(scene, sensor=sensor(30.0), spp=2, seed=1))
    assert image.shape == (12, 12, 4) and np.all(image[..., 3] == 1.0)
    assert 0.05 < image[..., :3].mean() < 1.0  # light emitted by the grid reaches every pixel that sees it


@pytest.mark.parametrize("symbolic", [True, False])
def test_path_replay_gradients_equal_plain_reverse_mode(symbolic):
    scene, integrator = scene_with_grid()
    camera = sensor(40.0)
    adjoint = weights((12, 12, 4))
    params = kr.traverse(integrator)
    assert sorted(params.keys()) == ["color", "density"]
    for key in params.keys():
        kl.enable_grad(params[key])
    params.update()
    previous = kl.flag(kl.Flag.Symbolic)
    kl.set_flag(kl.Flag.Symbolic, symbolic)
    try:
        image = kr.render(scene, params, sensor=camera, spp=2, seed=3, seed_grad=3)
        kl.backward(kl.sum(image * adjoint, axis=None))
        replayed = {key: np.asarray(kl.grad(params[key])) for key in params.keys()}

        # The oracle: reverse mode through the primal pass itself (an evaluated loop keeps
        # every iteration in the graph), with the render's camera samples.
        kl.set_flag(kl.Flag.Symbolic, False)
        for key in params.keys():
            kl.clear_grad(params[key])
        samples = kr.camera_samples(camera, 3, 2)
        L, valid, _, _ = integrator.sample(kl.ADMode.Primal, scene, kr.LaneSampler(samples.rng), samples.ray, None,
                                           None, samples.active)
        L = L * samples.weight
        reference = kr.develop_samples(camera.film(), samples, [L.x, L.y, L.z, kl.full(kl.Float, 1.0, kl.width(L.x))])
        kl.backward(kl.sum(reference * adjoint, axis=None))
    finally:
        kl.set_flag(kl.Flag.Symbolic, previous)
    for key in params.keys():
        plain = np.asarray(kl.grad(params[key]))
        assert np.abs(plain).max() > 0, key
        np.testing.assert_allclose(replayed[key], plain, rtol=2e-3, atol=1e-6 * np.abs(plain).max())


def test_an_optimization_of_the_grids_converges_with_tensor_adam():
    scene, integrator = scene_with_grid()
    cameras = [sensor(angle) for angle in (0.0, 120.0, 240.0)]
    targets = [kr.render(scene, sensor=camera, spp=8, seed=9) for camera in cameras]
    params = kr.traverse(integrator)
    params["density"] = kl.full(kl.TensorXf, 1.0, shape=(4, 4, 4, 1))
    params["color"] = kl.full(kl.TensorXf, 0.5, shape=(4, 4, 4, 3))
    params.update()
    opt = kr.ad.Adam(lr=0.05, params={"density": params["density"], "color": params["color"]})
    params.update(opt)
    losses = []
    for iteration in range(60):
        camera = iteration % 3
        image = kr.render(scene, params, sensor=cameras[camera], spp=2, seed=iteration)
        loss = kl.mean(kl.square(image - targets[camera]), axis=None)
        kl.backward(loss)
        losses.append(float(np.asarray(loss)))
        opt.step()
        opt["density"] = kl.maximum(opt["density"], 0.0)
        params.update(opt)
    assert np.mean(losses[-6:]) < 0.25 * np.mean(losses[:3]), losses


def test_a_new_shape_through_params_resamples_the_texture_and_resets_adam():
    scene, integrator = scene_with_grid()
    params = kr.traverse(integrator)
    assert integrator.density.tensor() is integrator.density.tensor()
    opt = kr.ad.Adam(lr=0.1, params={"density": params["density"]})
    kl.set_grad(opt["density"], kl.full(kl.TensorXf, 2.0, shape=(4, 4, 4, 1)))
    before = np.asarray(opt["density"]).copy()
    opt.step()
    np.testing.assert_allclose(np.asarray(opt["density"]), before - 0.1, atol=1e-5)  # Adam's first step: lr · sign
    opt["density"] = kl.full(kl.TensorXf, 1.0, shape=(8, 8, 8, 1))  # a new shape: a fresh state
    kl.set_grad(opt["density"], kl.full(kl.TensorXf, -3.0, shape=(8, 8, 8, 1)))
    opt.step()
    np.testing.assert_allclose(np.asarray(opt["density"]), 1.1, atol=1e-5)
    params.update(opt)
    assert integrator.density.shape == (8, 8, 8, 1) and tuple(params["density"].shape) == (8, 8, 8, 1)
    assert kr.render(scene, sensor=sensor(0.0), spp=1).shape == (12, 12, 4)


def test_python_ad_integrator_misuse_is_reported():
    class NoSample(kr.ad.RBIntegrator):
        pass

    kr.register_integrator("test_no_ad_sample", lambda props: NoSample(props))
    scene = kr.load_dict({"type": "scene", "integrator": {"type": "test_no_ad_sample"}})
    with pytest.raises(TypeError, match=r"NoSample.sample\(\) is missing"):
        kr.render(scene, sensor=sensor(0.0), spp=1)
    with pytest.raises(ValueError, match="max_depth"):
        kr.load_dict({"type": "test_grid_emitter", "max_depth": -3})
    with pytest.raises(ValueError, match="rr_depth"):
        GridEmitter(_props(rr_depth=0))
    scene, integrator = scene_with_grid()
    with pytest.raises(TypeError, match="recorder"):
        kr.render(scene, sensor=sensor(0.0), spp=1, recorder=kr.PathRecorder(4))
    with pytest.raises(IndexError, match="sensor"):
        kr.render(scene, sensor=3, spp=1)
    params = kr.traverse(integrator)
    kl.enable_grad(params["density"])
    params.update()
    image = kr.render(scene, params, sensor=sensor(0.0), spp=1)
    with pytest.raises(NotImplementedError, match="forward-mode derivatives"):
        kl.forward(params["density"])
    assert kl.grad_enabled(image)


def _props(**values):
    props = kr.Properties("test_grid_emitter")
    for key, value in values.items():
        props[key] = value
    return props
