"""Derivatives of kiln.render images with respect to scene parameters (issue 18's first part):
kr.render's gradient render (plain AD through the `direct` and `path` integrators, in
symbolic and evaluated mode, with its own seed).

With a fixed seed and paths shorter than Russian roulette's start, the image is a smooth
(polynomial) function of reflectances, texels and emitted radiance: the random numbers, the
sampled directions and which paths continue do not depend on them. So for a random
direction u in parameter space and random pixel weights v, the directional derivative of
L = <image, v> from reverse mode (<grad, u>) and from forward mode (<tangent image, v>)
must both equal the central difference (L(p + h u) - L(p - h u)) / 2h of renders at the
gradient render's seed (the primal image uses another seed). With roulette on, the image
is not smooth; there the two modes must still agree with each other and stay finite.
"""

import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import kiln as kl
import kiln.render as kr

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "render"))

import scenes  # noqa: E402

DATA_DIR = Path(scenes.DATA_DIR)

# How the control-flow mode is chosen, each way a user chooses it (issue 26): the
# integrator's `mode` ("symbolic", "evaluated"), the global flag set to evaluated ("flag"),
# and KILN_SYMBOLIC=0, which is read at start-up: "environment" runs only in the child
# process of test_kiln_symbolic_0_in_the_environment, which runs this file's mode tests again.
MODES = ["symbolic", "evaluated", "flag"] + (["environment"] if os.environ.get("KILN_SYMBOLIC") == "0" else [])
INTEGRATORS = {"direct": {"type": "direct"}, "path3": {"type": "path", "max_depth": 3},
               "prb3": {"type": "prb", "max_depth": 3}}
PARAMETERS = ["floor.bsdf.reflectance.data", "wall.bsdf.reflectance.value", "light.emitter.radiance.value",
              "lamp.intensity.value"]
SPP, SEED = 2, 3
PRIMAL_SEED = 40  # the primal image's seed; derivatives come from SEED (seed_grad)


@pytest.fixture(autouse=True)
def global_flag(request):
    """For the "flag" runs, the global flag is set to evaluated for the test."""
    mode = getattr(request.node, "callspec", None) and request.node.callspec.params.get("mode")
    saved = kl.flag(kl.Flag.Symbolic)
    if mode == "flag":
        kl.set_flag(kl.Flag.Symbolic, False)
    if mode == "environment":
        assert not saved, "KILN_SYMBOLIC=0 did not make evaluated mode the default"
    yield
    kl.set_flag(kl.Flag.Symbolic, saved)


def with_mode(integrator, mode):
    """The integrator dict with `mode` when the run chooses the mode that way."""
    return dict(integrator, mode=mode) if mode in ("symbolic", "evaluated") else dict(integrator)


def box_scene(integrator, mode):
    """A corner of a room: a textured floor (an EXR bitmap), a coloured wall, an area light
    and a point light, seen at 8 x 8."""
    T = kr.Transform4f

    def rect(to_world, bsdf, **extra):
        return dict({"type": "rectangle", "to_world": to_world, "bsdf": bsdf}, **extra)

    return {
        "type": "scene", "integrator": with_mode(integrator, mode),
        "sensor": {"type": "perspective", "fov": 50, "to_world": T().look_at([0, 0.2, 3.5], [0, 0, 0], [0, 1, 0]),
                   "film": {"type": "hdrfilm", "width": 8, "height": 8}},
        "floor": rect(T().translate([0, -1, 0]).rotate([1, 0, 0], -90),
                      {"type": "diffuse", "reflectance": {"type": "bitmap", "filename": str(DATA_DIR / "texture.exr")}}),
        "wall": rect(T().translate([0, 0, -1]), {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.6, 0.5, 0.4]}}),
        "light": rect(T().translate([0, 0.99, 0]).rotate([1, 0, 0], 90).scale([0.3, 0.3, 1]), {"type": "diffuse"},
                      emitter={"type": "area", "radiance": {"type": "rgb", "value": [8, 7, 6]}}),
        "lamp": {"type": "point", "position": [0.5, 0.5, 1.0], "intensity": {"type": "rgb", "value": [2, 2, 3]}},
    }


def as_numpy(value):
    """A parameter's values as a 2-D array: (3, n) for Array3f, (1, n) for Float."""
    array = np.asarray(value, dtype=np.float64)
    return array.reshape(-1, 3).T if isinstance(value, kl.Array3f) else array.reshape(1, -1)


def like(value, array):
    """`array` ((3, n) or (1, n)) as a Kiln value of value's type (and shape, for a tensor)."""
    if isinstance(value, kl.Array3f):
        return kl.Array3f(*(kl.Float(np.ascontiguousarray(row, dtype=np.float32)) for row in array))
    flat = kl.Float(np.ascontiguousarray(array[0], dtype=np.float32))
    return kl.TensorXf(flat, value.shape) if isinstance(value, kl.TensorXf) else flat


class Probe:
    """A scene, one of its parameters, a direction u in that parameter's space and pixel weights v."""

    def __init__(self, scene, key, rng):
        self.scene, self.key = kr.load_dict(scene), key
        self.params = kr.traverse(self.scene)
        self.base = as_numpy(self.params[key])
        self.u = rng.uniform(-0.5, 1.5, self.base.shape)  # mostly positive: effects add up
        image = np.asarray(self.render(self.base))
        self.v = rng.uniform(-0.5, 1.5, image.shape)

    def set(self, values):
        value = like(self.params[self.key], values)
        self.params[self.key] = value
        self.params.update()

    def render(self, values):
        self.set(values)
        return kr.render(self.scene, spp=SPP, seed=SEED)

    def finite_difference(self, h):
        plus = np.asarray(self.render(self.base + h * self.u), dtype=np.float64)
        minus = np.asarray(self.render(self.base - h * self.u), dtype=np.float64)
        return float(((plus - minus) * self.v).sum() / (2 * h))

    def differentiable_render(self):
        """The parameter at its base values with derivatives, and the image rendered with it."""
        value = like(self.params[self.key], self.base)
        kl.enable_grad(value)
        self.params[self.key] = value
        self.params.update()
        return value, kr.render(self.scene, self.params, spp=SPP, seed=PRIMAL_SEED, seed_grad=SEED)

    def reverse(self):
        """<u, J^T v>: backward from the image with v as its adjoint."""
        value, image = self.differentiable_render()
        kl.backward_from(image.array, kl.Float(np.ascontiguousarray(self.v.ravel(), dtype=np.float32)))
        gradient = as_numpy(kl.grad(value))
        assert np.isfinite(gradient).all(), f"{self.key}: non-finite gradient"
        return float((gradient * self.u).sum())

    def forward(self):
        """<J u, v>: forward from the parameter with u as its tangent."""
        value, image = self.differentiable_render()
        kl.forward_from(value, like(value, self.u))
        tangent = np.asarray(kl.grad(image), dtype=np.float64)
        assert np.isfinite(tangent).all(), f"{self.key}: non-finite tangent"
        return float((tangent * self.v).sum())


def check_close(what, value, expected, scale):
    assert abs(value - expected) <= 2e-3 * (abs(expected) + scale), f"{what}: {value} against {expected}"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("integrator", list(INTEGRATORS))
@pytest.mark.parametrize("key", PARAMETERS)
def test_image_derivatives_match_central_differences(mode, integrator, key):
    probe = Probe(box_scene(INTEGRATORS[integrator], mode), key, np.random.default_rng(7))
    h = 1e-2 * max(1.0, float(np.abs(probe.base).max()))
    fd = probe.finite_difference(h)
    # The difference's own error: its change with the step, and float32 rounding of the image.
    scale = abs(probe.finite_difference(2 * h) - fd) + 1e-6 * np.abs(probe.v).sum() / h
    assert abs(fd) > 10 * scale, f"{key}: the image hardly depends on it ({fd}); the check would be empty"
    check_close(f"{key} reverse", probe.reverse(), fd, scale)
    check_close(f"{key} forward", probe.forward(), fd, scale)


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
@pytest.mark.parametrize("integrator", list(INTEGRATORS))
def test_mesh_texture_coordinate_derivatives_match_central_differences(mode, integrator):
    """The floor's texture coordinates move its bilinear texture lookups. The floor's arrays
    are joined with the other rectangles', and the joined arrays carry the derivatives only
    when the gradient render's update() rebuilds them from the fresh leaves. The image is
    piecewise smooth in them (texel boundaries), so the tolerance is the difference's own
    change with the step, not the smooth parameters' 0.2%."""
    probe = Probe(box_scene(INTEGRATORS[integrator], mode), "floor.vertex_texcoords", np.random.default_rng(7))
    h = 1e-3
    fd = probe.finite_difference(h)
    scale = abs(probe.finite_difference(2 * h) - fd) + 1e-6 * np.abs(probe.v).sum() / h
    assert abs(fd) > 10 * scale, f"the image hardly depends on them ({fd}); the check would be empty"
    for what, value in [("reverse", probe.reverse()), ("forward", probe.forward())]:
        assert abs(value - fd) <= 2 * scale + 2e-3 * abs(fd), f"{what}: {value} against {fd} (scale {scale})"


METAL = {"type": "roughconductor", "alpha": 0.3, "eta": {"type": "rgb", "value": [0.2, 0.4, 1.2]},
         "k": {"type": "rgb", "value": [3.0, 2.5, 2.0]}}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("integrator", ["direct", "prb2"])
@pytest.mark.parametrize("key, bsdf", [
    ("wall.bsdf.alpha.value", {"type": "roughconductor", "alpha": 0.3}),
    ("wall.bsdf.eta.value", METAL),
    ("wall.bsdf.k.value", METAL),
])
def test_roughness_and_ior_derivatives_match_central_differences(mode, integrator, key, bsdf):
    # Lit by the point light only and one vertex deep, the image is the BSDF's eval towards
    # the light: smooth in roughness and index of refraction (which otherwise steer sampling,
    # so the image at a fixed seed is not smooth in them).
    integrators = {"direct": {"type": "direct"}, "prb2": {"type": "prb", "max_depth": 2}}
    scene = box_scene(integrators[integrator], mode)
    del scene["light"]
    scene["wall"]["bsdf"] = bsdf
    probe = Probe(scene, key, np.random.default_rng(11))
    h = 1e-2
    fd = probe.finite_difference(h)
    scale = abs(probe.finite_difference(2 * h) - fd) + 1e-6 * np.abs(probe.v).sum() / h
    assert abs(fd) > 10 * scale, f"{key}: the image hardly depends on it ({fd}); the check would be empty"
    check_close(f"{key} reverse", probe.reverse(), fd, scale)
    check_close(f"{key} forward", probe.forward(), fd, scale)


@pytest.mark.parametrize("mode", MODES)
def test_mirrors_and_sphere_lights_have_finite_tangents(mode):
    # A conductor with the default material "none" (eta 0) and a spherical area light both
    # take safe_sqrt(0); its derivative there was infinite, and the symbolic loop's zero
    # tangents turned it into NaN (found against Mitsuba's gradient references).
    scene = box_scene({"type": "prb", "max_depth": 4}, mode)
    scene["wall"]["bsdf"] = {"type": "conductor"}
    scene["bulb"] = {"type": "sphere", "center": [0.4, -0.6, 0.2], "radius": 0.2,
                     "emitter": {"type": "area", "radiance": {"type": "rgb", "value": [4, 4, 4]}}}
    probe = Probe(scene, "light.emitter.radiance.value", np.random.default_rng(5))
    value, image = probe.differentiable_render()
    kl.forward_from(value, like(value, probe.u))
    tangent = np.asarray(kl.grad(image))
    assert np.isfinite(tangent).all() and np.abs(tangent).max() > 0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", ["path", "prb"])
def test_paths_with_russian_roulette_have_finite_consistent_derivatives(mode, kind):
    """Roulette from the second vertex on, up to 8: a lane whose survival probability is 0
    once made 0 * inf = NaN in the adjoint of the division it selects away."""
    integrator = {"type": kind, "max_depth": 8, "rr_depth": 2}
    rng = np.random.default_rng(11)
    for key in ["wall.bsdf.reflectance.value", "floor.bsdf.reflectance.data"]:
        probe = Probe(box_scene(integrator, mode), key, rng)
        reverse, forward = probe.reverse(), probe.forward()
        assert abs(reverse) > 0
        check_close(f"{key} reverse against forward", reverse, forward, 1e-4 * abs(forward))


def test_every_mode_gives_the_same_gradients():
    grads = []
    for mode in MODES:
        saved = kl.flag(kl.Flag.Symbolic)
        kl.set_flag(kl.Flag.Symbolic, mode != "flag" and saved)
        try:
            probe = Probe(box_scene(INTEGRATORS["prb3"], mode), "wall.bsdf.reflectance.value", np.random.default_rng(5))
            grads.append(probe.reverse())
        finally:
            kl.set_flag(kl.Flag.Symbolic, saved)
    for mode, grad in zip(MODES[1:], grads[1:]):
        check_close(f"symbolic against {mode}", grad, grads[0], 1e-5 * abs(grads[0]))


def test_kiln_symbolic_0_in_the_environment():
    """The mode tests again with evaluated mode chosen by KILN_SYMBOLIC=0 (a child process:
    the variable is read at start-up). Before issue 26 every gradient render failed there."""
    import subprocess
    env = dict(os.environ, KILN_SYMBOLIC="0")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", __file__, "-k",
                          "environment and not kiln_symbolic_0"], capture_output=True, text=True, timeout=900,
                         env=env, cwd=Path(__file__).parent)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    passed = re.search(r"(\d+) passed", run.stdout)
    assert passed and int(passed.group(1)) >= 20, run.stdout[-3000:]


def grad_enabled_scene(mode="evaluated", key="wall.bsdf.reflectance.value"):
    scene = kr.load_dict(box_scene(INTEGRATORS["path3"], mode))
    params = kr.traverse(scene)
    value = params[key]
    kl.enable_grad(value)
    params[key] = value
    params.update()
    return scene, params, value


def test_the_primal_image_ignores_seed_grad_and_the_gradient_follows_it():
    scene, params, value = grad_enabled_scene()
    plain = np.asarray(kr.render(scene, spp=SPP, seed=PRIMAL_SEED, seed_grad=1))
    assert np.array_equal(plain, np.asarray(kr.render(scene, spp=SPP, seed=PRIMAL_SEED, seed_grad=2)))
    grads = {}
    for seed_grad in (1, 2, None):
        kl.clear_grad(value)
        image = kr.render(scene, spp=SPP, seed=PRIMAL_SEED, seed_grad=seed_grad)
        kl.backward(kl.sum(image.array))
        grads[seed_grad] = np.asarray(kl.grad(value))
    assert not np.array_equal(grads[1], grads[2])  # other random numbers, another estimate
    # None derives a seed from `seed` that is not `seed` itself.
    kl.clear_grad(value)
    kl.backward(kl.sum(kr.render(scene, spp=SPP, seed=PRIMAL_SEED, seed_grad=PRIMAL_SEED).array))
    assert not np.array_equal(grads[None], np.asarray(kl.grad(value)))


def test_spp_grad_sets_the_gradient_renders_sample_count():
    scene, params, value = grad_enabled_scene()
    kl.backward(kl.sum(kr.render(scene, spp=1, seed=0, seed_grad=SEED, spp_grad=SPP).array))
    with_spp_grad = np.asarray(kl.grad(value))
    kl.clear_grad(value)
    kl.backward(kl.sum(kr.render(scene, spp=SPP, seed=0, seed_grad=SEED).array))
    assert np.allclose(with_spp_grad, np.asarray(kl.grad(value)), rtol=1e-5)


def test_the_scene_keeps_the_users_values_after_backward():
    scene, params, value = grad_enabled_scene()
    image = kr.render(scene, spp=SPP, seed=0)
    kl.backward(kl.sum(image.array))
    # The parameter is still the user's array (its gradient is where the user reads it), and
    # a second backward through a new render accumulates onto it.
    first = np.asarray(kl.grad(params["wall.bsdf.reflectance.value"]))
    assert np.array_equal(first, np.asarray(kl.grad(value)))
    kl.backward(kl.sum(kr.render(scene, spp=SPP, seed=0).array))
    assert np.allclose(np.asarray(kl.grad(value)), 2 * first, rtol=1e-5)


def test_a_render_without_derivatives_is_not_connected():
    scene = kr.load_dict(box_scene(INTEGRATORS["direct"], "symbolic"))
    assert not kl.grad_enabled(kr.render(scene, spp=1))


def launches_of(render):
    kl.kernel_history(True)
    np.asarray(render())
    return [(entry["size"], entry["ops"]) for entry in kl.kernel_history()]


def test_other_live_derivatives_leave_the_primal_render_alone():
    # A network's weights (any array with derivatives) alive in the process must not make a
    # render without differentiable parameters record the path loop's trajectory (one more
    # kernel and max_depth x lanes x state of memory); nor the primal render of one with them.
    scene = kr.load_dict(box_scene({"type": "path", "max_depth": 4}, "symbolic"))
    alone = launches_of(lambda: kr.render(scene, spp=SPP, seed=0))
    weights = kl.Float([1.0, 2.0])
    kl.enable_grad(weights)
    assert launches_of(lambda: kr.render(scene, spp=SPP, seed=0)) == alone
    params = kr.traverse(scene)
    kl.enable_grad(params["wall.bsdf.reflectance.value"])
    params.update()
    assert launches_of(lambda: kr.render(scene, params, spp=SPP, seed=0)) == alone


@pytest.mark.parametrize("call, error, words", [
    ("kr.render(scene, 4)", TypeError, ["params", "spp="]),
    ("kr.render(scene, spp_grad=-1)", ValueError, ["spp_grad", "1 and 2^24"]),
    ("kr.render(scene, seed_grad=-1)", ValueError, ["seed_grad"]),
    ("kr.render(scene, seed_grad=2**32)", ValueError, ["seed_grad"]),
])
def test_bad_gradient_arguments_raise(call, error, words):
    scene = kr.load_dict(box_scene(INTEGRATORS["direct"], "symbolic"))
    with pytest.raises(error) as raised:
        eval(call, {"kr": kr, "scene": scene})
    for word in words:
        assert word in str(raised.value)


def test_backward_after_the_scene_is_gone(tmp_path):
    """The image keeps what its gradient render needs alive (run apart: a dangling scene
    would crash the process, not fail the test)."""
    import subprocess
    import textwrap
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import gc, numpy as np, kiln as kl, kiln.render as kr
        from test_render_grad import grad_enabled_scene
        scene, params, value = grad_enabled_scene("symbolic")
        image = kr.render(scene, spp=1, seed=0)
        del scene, params
        gc.collect()
        kl.backward(kl.sum(image.array))
        assert np.isfinite(np.asarray(kl.grad(value))).all() and np.abs(np.asarray(kl.grad(value))).sum() > 0
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "ok" in run.stdout, run.stderr[-2000:]


def test_reverse_mode_through_an_unbounded_symbolic_path_loop_says_what_to_set():
    scene = kr.load_dict(box_scene({"type": "path"}, "symbolic"))
    params = kr.traverse(scene)
    value = params["wall.bsdf.reflectance.value"]
    kl.enable_grad(value)
    params["wall.bsdf.reflectance.value"] = value
    params.update()
    image = kr.render(scene, spp=1)
    with pytest.raises(ValueError) as raised:
        kl.backward(kl.sum(image.array))
    for word in ["integrator 'path'", "max_depth", "-1", "prb", "evaluated"]:
        assert word in str(raised.value)
    # prb, which the message suggests, needs no bound: its replay stores nothing.
    prb_scene = kr.load_dict(box_scene({"type": "prb"}, "symbolic"))
    prb_params = kr.traverse(prb_scene)
    prb_params["wall.bsdf.reflectance.value"] = value
    prb_params.update()
    kl.backward(kl.sum(kr.render(prb_scene, spp=1).array))
    assert np.isfinite(np.asarray(kl.grad(value))).all() and np.abs(np.asarray(kl.grad(value))).sum() > 0
    # Forward mode stores nothing, so it works.
    image = kr.render(scene, spp=1)
    kl.forward_from(value, kl.Array3f(1.0, 0.0, 0.0))
    assert np.abs(np.asarray(kl.grad(image))).sum() > 0


@pytest.mark.parametrize("mode", MODES)
def test_path_replay_gives_the_gradients_of_ad_through_the_path_loop(mode):
    """With diffuse surfaces both differentiate the same estimator along the same paths, so
    prb (each vertex alone, the rest of the path from the primal pass) must equal AD through
    the whole path, roulette included."""
    for key in ["wall.bsdf.reflectance.value", "floor.bsdf.reflectance.data", "light.emitter.radiance.value"]:
        grads = []
        for kind in ["path", "prb"]:
            probe = Probe(box_scene({"type": kind, "max_depth": 6, "rr_depth": 3}, mode), key,
                          np.random.default_rng(3))
            grads.append(probe.reverse())
        check_close(f"{key}: prb against path", grads[1], grads[0], 1e-5 * abs(grads[0]))


def backward_peak_bytes(kind, depth, mode):
    """Peak array memory of a render and its backward pass through the Cornell box (closed,
    so paths run to max_depth)."""
    scene_dict = scenes.cornell_box(DATA_DIR)
    scene_dict["integrator"] = with_mode({"type": kind, "max_depth": depth, "rr_depth": 1000}, mode)
    scene_dict["sensor"]["film"].update(width=32, height=32)
    scene = kr.load_dict(scene_dict)
    params = kr.traverse(scene)
    value = params["floor.bsdf.reflectance.value"]
    kl.enable_grad(value)
    params["floor.bsdf.reflectance.value"] = value
    params.update()
    kl.flush_memory_cache()
    kl.reset_peak_memory()
    base = kl.memory_stats().current_bytes
    image = kr.render(scene, spp=4, seed=0)
    kl.backward(kl.sum(image.array))
    assert np.isfinite(np.asarray(kl.grad(value))).all()
    return kl.memory_stats().peak_bytes - base


@pytest.mark.parametrize("mode", MODES)
def test_path_replay_memory_does_not_grow_with_path_length(mode):
    """prb's peak at max_depth 2, 8 and 32 stays within 1.2x; AD through path, which stores
    every vertex, grows (the control: if it did not, the measurement would show nothing)."""
    prb = [backward_peak_bytes("prb", depth, mode) for depth in (2, 8, 32)]
    path = [backward_peak_bytes("path", depth, mode) for depth in (2, 8, 32)]
    assert max(prb) <= 1.2 * min(prb), f"prb peaks {prb}"
    assert path[2] >= 3 * path[0], f"path peaks {path}: the control did not grow"
    assert prb[2] < path[2] / 2


@pytest.mark.parametrize("key, words", [
    ("sensor.near_clip", ["not differentiable"]),
])
def test_derivatives_render_cannot_give_are_an_error_not_zeros(key, words):
    scene = kr.load_dict(box_scene(INTEGRATORS["direct"], "symbolic"))
    params = kr.traverse(scene)
    value = params[key]
    kl.enable_grad(value)
    params[key] = value
    params.update()
    with pytest.raises(ValueError) as raised:
        kr.render(scene, spp=1)
    for word in [key, "carries derivatives", "kl.detach", *words]:
        assert word in str(raised.value)


# ---- defects the gradient fuzzer found (tests/python/test_render_grad_fuzz.py) -------------

def forward_and_reverse(scene_dict, key, spp=SPP):
    """<J u, v> and <u, J^T v> at equal seeds for a random u and v (Probe's, without the
    finite differences)."""
    scene = kr.load_dict(scene_dict)
    params = kr.traverse(scene)
    value = params[key]
    kl.enable_grad(value)
    params.update()
    image = kr.render(scene, params, spp=spp, seed=PRIMAL_SEED, seed_grad=SEED)
    rng = np.random.default_rng(2)
    u = rng.uniform(-0.5, 1.5, as_numpy(value).shape)
    v = rng.uniform(-0.5, 1.5, np.asarray(image).shape)
    kl.set_grad(value, like(value, u))
    forward = float((np.asarray(kl.forward_to(image), dtype=np.float64) * v).sum())
    kl.clear_grad(value)
    kl.backward_from(image, kl.TensorXf(v.astype(np.float32)))
    reverse = float((as_numpy(kl.grad(value)) * u).sum())
    return forward, reverse


@pytest.mark.parametrize("integrator", ["direct", "path3", "prb3"])
def test_plastics_sampling_weight_stays_detached(integrator):
    """Its specular sampling weight was computed from the diffuse reflectance with its
    derivatives, so reverse mode differentiated the lobe choice and forward mode did not."""
    scene = box_scene(INTEGRATORS[integrator], "symbolic")
    scene["wall"]["bsdf"] = {"type": "plastic", "diffuse_reflectance": {"type": "rgb", "value": [0.6, 0.5, 0.4]}}
    forward, reverse = forward_and_reverse(scene, "wall.bsdf.diffuse_reflectance.value")
    assert forward != 0
    check_close("forward against reverse", forward, reverse, 1e-4 * abs(reverse))


@pytest.mark.parametrize("mode", MODES)
def test_parameters_that_do_not_reach_the_image_have_zero_derivatives(mode):
    """A spot light's default texture is not used, and a wall behind the camera is never
    seen: their derivatives are zeros, not an error from the gradient render."""
    scene = box_scene(INTEGRATORS["prb3"], mode)
    scene["spot"] = {"type": "spot", "to_world": kr.Transform4f().look_at([0, 0.5, 1], [0, -1, 0], [0, 1, 0]),
                     "intensity": {"type": "rgb", "value": [3, 3, 3]}}
    scene["behind"] = {"type": "rectangle", "to_world": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 9], [0, 0, 0, 1]],
                       "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.5, 0.5, 0.5]}}}
    for key in ["spot.texture.value", "behind.bsdf.reflectance.value"]:
        forward, reverse = forward_and_reverse(scene, key)
        assert forward == 0 and reverse == 0, key


def test_aov_differentiates_its_nested_integrators_estimators():
    """An aov around prb differentiated its nested integrator's sample(), not prb's replay,
    so symbolic reverse mode asked for a trajectory; now its colour channels have prb's
    gradients."""
    key = "wall.bsdf.reflectance.value"
    plain = box_scene({"type": "prb", "max_depth": 3}, "symbolic")
    wrapped = box_scene({"type": "aov", "aovs": "dd:depth", "image": {"type": "prb", "max_depth": 3}}, "symbolic")
    grads = []
    for scene_dict in (plain, wrapped):
        scene = kr.load_dict(scene_dict)
        params = kr.traverse(scene)
        kl.enable_grad(params[key])
        params.update()
        image = kr.render(scene, params, spp=SPP, seed=PRIMAL_SEED, seed_grad=SEED)
        kl.backward(kl.sum(image[..., :3]))
        grads.append(as_numpy(kl.grad(params[key])))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5)


def test_the_gradient_render_keeps_the_mode_of_the_primal_render():
    """Rendered with evaluated mode the default, differentiated after the flag went back to
    symbolic: the gradient render is evaluated too (so `path` with max_depth -1, which
    symbolic reverse mode refuses, differentiates), with the same gradients as in symbolic
    mode with a bound."""
    key = "wall.bsdf.reflectance.value"
    saved = kl.flag(kl.Flag.Symbolic)
    try:
        kl.set_flag(kl.Flag.Symbolic, False)
        scene = kr.load_dict(box_scene({"type": "path", "max_depth": -1, "rr_depth": 100}, "flag"))
        params = kr.traverse(scene)
        kl.enable_grad(params[key])
        params.update()
        image = kr.render(scene, params, spp=SPP, seed=PRIMAL_SEED, seed_grad=SEED)
        kl.set_flag(kl.Flag.Symbolic, True)
        kl.backward(kl.sum(image))
        evaluated = as_numpy(kl.grad(params[key]))
    finally:
        kl.set_flag(kl.Flag.Symbolic, saved)
    bounded = kr.load_dict(box_scene({"type": "path", "max_depth": 100, "rr_depth": 100}, "symbolic"))
    params = kr.traverse(bounded)
    kl.enable_grad(params[key])
    params.update()
    kl.backward(kl.sum(kr.render(bounded, params, spp=SPP, seed=PRIMAL_SEED, seed_grad=SEED)))
    np.testing.assert_allclose(evaluated, as_numpy(kl.grad(params[key])), rtol=1e-4)


def test_scene_parameters_say_which_are_differentiable():
    """params.flags(key), as Mitsuba's: what the fuzzer picks parameters by."""
    params = kr.traverse(kr.load_dict(box_scene(INTEGRATORS["direct"], "symbolic")))
    assert params.flags("wall.bsdf.reflectance.value") == kr.ParamFlags.Differentiable
    assert params.flags("floor.vertex_positions") & kr.ParamFlags.Discontinuous
    assert params.flags("sensor.near_clip") & kr.ParamFlags.NonDifferentiable
    assert params.flags("sensor.x_fov") & kr.ParamFlags.Discontinuous
    with pytest.raises(ValueError, match="no parameter 'nope'"):
        params.flags("nope")


@pytest.mark.parametrize("integrator", ["path3", "direct_projective"])
def test_a_render_stores_nothing_per_sample(integrator):
    # A render's ray traversals and calls are symbolic loops whose results its splats read:
    # the kernel that runs them stores none, the samples being gone before the splats run
    # (the primal render of a differentiable scene included).
    chosen = {"type": "direct_projective", "sppi": 0} if integrator == "direct_projective" else INTEGRATORS[integrator]
    scene = kr.load_dict(box_scene(chosen, "symbolic"))
    params = kr.traverse(scene)
    kl.enable_grad(params["wall.bsdf.reflectance.value"])
    params.update()
    kl.kernel_history(True)
    kr.render(scene, params, spp=SPP, seed=0)
    per_sample = [entry for entry in kl.kernel_history(True) if entry["size"] == 8 * 8 * SPP]
    assert len(per_sample) == 1 and per_sample[0]["outputs"] == 0, per_sample
