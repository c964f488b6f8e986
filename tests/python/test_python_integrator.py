"""Integrators written in Python on kiln.render's scene interfaces (issue 18):
examples/python_integrator.py's path tracer, made of scene.ray_intersect, si.bsdf(),
sample / eval_pdf, emitter sampling, sensor.sample_ray, the sampler's generators and the
film's block, renders every test scene as the C++ `path` integrator does with the same seed,
in both modes, and differentiates like it; the interfaces' bad inputs raise."""

import sys
from pathlib import Path

import numpy as np
import pytest

import kiln as kl
import kiln.render as kr

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "tests" / "render"))

import python_integrator  # noqa: E402
import scenes  # noqa: E402

SPP, SEED, MAX_DEPTH = 4, 7, 5
# hide_emitters is the C++ integrator's option the Python one leaves out; aov is not a path
# tracer; a directionalarea light is seen by light paths only (a path tracer's image is black).
SKIPPED = {"hide_emitters", "aov", "directional_area"}


def path_scene(name, mode="symbolic"):
    description = scenes.SCENES[name](scenes.DATA_DIR)
    description["integrator"] = {"type": "path", "max_depth": MAX_DEPTH, "rr_depth": 3, "mode": mode}
    return kr.load_dict(description)


@pytest.mark.parametrize("name", sorted(set(scenes.SCENES) - SKIPPED))
def test_the_python_path_tracer_renders_what_the_cpp_one_does(name):
    scene = path_scene(name)
    ours = np.asarray(python_integrator.render(scene, SPP, seed=SEED, max_depth=MAX_DEPTH, rr_depth=3))
    theirs = np.asarray(kr.render(scene, spp=SPP, seed=SEED))
    assert ours.shape == theirs.shape and np.abs(theirs).max() > 0
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_evaluated_mode_and_derivatives_agree_with_the_cpp_path_integrator():
    key = "left.bsdf.reflectance.value"
    scene = path_scene("cornell_box", "evaluated")
    params = kr.traverse(scene)
    kl.enable_grad(params[key])
    params.update()
    ours = python_integrator.render(scene, SPP, seed=SEED, max_depth=MAX_DEPTH, rr_depth=3, mode="evaluated")
    kl.backward(kl.sum(ours))
    our_grad = np.asarray(kl.grad(params[key]))
    kl.clear_grad(params[key])
    theirs = kr.render(scene, params, spp=SPP, seed=SEED, seed_grad=SEED)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5, atol=1e-6)
    kl.backward(kl.sum(theirs))
    np.testing.assert_allclose(our_grad, np.asarray(kl.grad(params[key])), rtol=1e-4)
    assert np.abs(our_grad).max() > 0


def test_interfaces_answer_for_single_rays():
    scene = path_scene("cornell_box")
    sensor = scene.sensors()[0]
    ray, weight = sensor.sample_ray(kl.Array2f(kl.Float([0.5, 0.5]), kl.Float([0.5, 0.9])))
    si = scene.ray_intersect(ray)
    assert np.asarray(si.is_valid()).all() and np.asarray(si.t).min() > 0
    ctx = kr.BSDFContext()
    value, pdf = si.bsdf().eval_pdf(ctx, si, si.wi)
    np.testing.assert_allclose(np.asarray(si.bsdf().eval(ctx, si, si.wi)), np.asarray(value))
    np.testing.assert_allclose(np.asarray(si.bsdf().pdf(ctx, si, si.wi)), np.asarray(pdf))
    emitter = scene.emitters()[0]
    ds, radiance = emitter.sample_direction(si, kl.Array2f(0.3, 0.6))
    np.testing.assert_allclose(np.asarray(emitter.pdf_direction(si, ds)), np.asarray(ds.pdf), rtol=1e-5)
    assert np.asarray(ds.pdf).min() > 0 and np.asarray(radiance).max() > 0
    light = kr.Ray3f(kl.Array3f(0.0, 0.5, 0.0), kl.Array3f(0.0, 1.0, 0.0))
    lit = scene.ray_intersect(light)
    assert float(np.asarray(lit.emitter(scene).eval(lit))[0].max()) > 0  # the ceiling light, from below
    miss = scene.ray_intersect(kr.Ray3f(kl.Array3f(0.0, 0.0, 10.0), kl.Array3f(0.0, 0.0, 1.0)))
    assert not bool(np.asarray(miss.is_valid())[0]) and int(np.asarray(miss.shape)[0]) == 0


@pytest.mark.parametrize("call, error, words", [
    ("kr.BSDFContext(mode='sideways')", ValueError, ["radiance", "importance"]),
    ("sensor.sampler().rng(-1, 4)", ValueError, ["seed"]),
    ("sensor.sampler().rng(0, 0)", ValueError, ["size"]),
    ("scene.ray_intersect('ray')", TypeError, ["ray_intersect"]),
    ("kr.SurfaceInteraction3f().bsdf()", ValueError, ["scene.ray_intersect()"]),
    ("sensor.sample_ray(kl.Array2f(kl.Float([0.1, 0.2]), kl.Float([0.1, 0.2, 0.3])))", Exception, []),
])
def test_bad_interface_calls_raise(call, error, words):
    scene = path_scene("cornell_box")
    sensor = scene.sensors()[0]  # noqa: F841 (used by the calls)
    with pytest.raises(error) as raised:
        eval(call)
    for word in words:
        assert word in str(raised.value)


def test_a_python_integrator_records_the_vertices_the_cpp_one_records():
    scene = path_scene("cornell_box")
    ours = kl.Recorder(python_integrator.RECORD_FIELDS, 1 << 16)
    python_integrator.render(scene, SPP, seed=SEED, max_depth=MAX_DEPTH, rr_depth=3, recorder=ours)
    theirs = kr.PathRecorder(1 << 16)
    kr.render(scene, spp=SPP, seed=SEED, recorder=theirs)
    a, b = ours.numpy(), theirs.render.numpy()
    assert ours.count() == theirs.render.count() > 0
    order_a = np.lexsort((a["depth"], a["lane"]))
    order_b = np.lexsort((b["depth"], b["pixel"] * SPP + b["sample"]))
    np.testing.assert_array_equal(a["lane"][order_a], (b["pixel"] * SPP + b["sample"])[order_b])
    for name in ("depth", "p", "n", "wi", "throughput"):
        np.testing.assert_allclose(a[name][order_a], b[name][order_b], rtol=1e-5, atol=1e-6, err_msg=name)


# The same tracer as a plugin (Mitsuba's mi.register_integrator contract): the C++ render
# loop, film and derivatives around a sample() written in Python.
kr.register_integrator("test_python_path", lambda props: python_integrator.PathIntegrator(props))


def plugin_scene(name):
    description = scenes.SCENES[name](scenes.DATA_DIR)
    description["integrator"] = {"type": "test_python_path", "max_depth": MAX_DEPTH, "rr_depth": 3}
    return kr.load_dict(description)


@pytest.mark.parametrize("name", ["cornell_box", "glass", "envmap"])
def test_a_python_sampling_integrator_plugin_renders_what_path_does(name):
    scene = plugin_scene(name)
    assert isinstance(scene.integrator(), python_integrator.PathIntegrator)
    ours = np.asarray(kr.render(scene, spp=SPP, seed=SEED))
    theirs = np.asarray(kr.render(path_scene(name), spp=SPP, seed=SEED))
    assert np.abs(theirs).max() > 0
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_a_python_sampling_integrator_plugin_differentiates_like_path():
    key = "left.bsdf.reflectance.value"
    grads = []
    for scene in (plugin_scene("cornell_box"), path_scene("cornell_box")):
        params = kr.traverse(scene)
        kl.enable_grad(params[key])
        params.update()
        kl.backward(kl.sum(kr.render(scene, params, spp=SPP, seed=SEED, seed_grad=SEED), axis=None))
        grads.append(np.asarray(kl.grad(params[key])))
    assert np.abs(grads[0]).max() > 0
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-4)


class _Constant(kr.SamplingIntegrator):
    result = None

    def sample(self, scene, sampler, ray, medium=None, active=True):
        return type(self).result(sampler)

    def aov_names(self):
        return ["u"]


@pytest.mark.parametrize("result, error, message", [
    (lambda sampler: (kl.Array3f(1.0), kl.Bool(True)), TypeError, r"must return \(radiance, valid, aovs\)"),
    (lambda sampler: (kl.Array3f(1.0), kl.Bool(True), []), ValueError, "returned 0 AOVs, but aov_names"),
    (lambda sampler: ("red", kl.Bool(True), [sampler.next_1d()]), TypeError, "radiance"),
])
def test_python_sampling_integrator_results_are_checked(result, error, message):
    cls = type("Wrong", (_Constant,), {"result": staticmethod(result)})
    kr.register_integrator("test_wrong", lambda props: cls(props))
    description = scenes.SCENES["cornell_box"](scenes.DATA_DIR)
    description["integrator"] = {"type": "test_wrong"}
    with pytest.raises(error, match=message):
        kr.render(kr.load_dict(description), spp=1)


def test_an_aov_from_a_python_sampling_integrator_and_a_missing_sample():
    cls = type("Uniform", (_Constant,), {"result": staticmethod(
        lambda sampler: (kl.Array3f(0.0), kl.Bool(True), [sampler.next_1d()]))})
    kr.register_integrator("test_uniform", lambda props: cls(props))
    description = scenes.SCENES["cornell_box"](scenes.DATA_DIR)
    description["integrator"] = {"type": "test_uniform"}
    image = np.asarray(kr.render(kr.load_dict(description), spp=4))
    assert image.shape[-1] == 4 and abs(image[..., 3].mean() - 0.5) < 0.05  # uniform numbers average 1/2

    class NoSample(kr.SamplingIntegrator):
        pass

    kr.register_integrator("test_no_sample", lambda props: NoSample(props))
    description["integrator"] = {"type": "test_no_sample"}
    with pytest.raises(TypeError, match=r"NoSample.sample\(\) is missing"):
        kr.render(kr.load_dict(description), spp=1)
