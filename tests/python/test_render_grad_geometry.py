"""Interior derivatives with respect to geometry and envmap texels (issue 30): kr.render
against central differences of <image, v> in scenes where nothing becomes visible or hidden
as the parameter moves, so the interior terms are the whole derivative.

The floor is a mesh larger than the view, lit by a point light and a constant or textured
environment; it moves rigidly (a common shift along its normal plus a tilt), so it stays
planar and no ray starts or stops hitting it. Sampled directions depend on the floor's frame
(cosine sampling about its normal), so a central difference at one seed is not the
derivative of the estimator's expectation; many samples per pixel make both converge to the
derivative of the image (the envmap's texels, which also steer its sampling, need 512), and
the tolerance is 2% plus the differences' own spread.
"""

import os
import sys
from pathlib import Path

import numpy as np
import pytest

import kiln as kl
import kiln.render as kr

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "render"))

import scenes  # noqa: E402

DATA_DIR = Path(scenes.DATA_DIR)
SPP, SEED, PRIMAL_SEED = 64, 5, 41
INTEGRATORS = {"direct": {"type": "direct"}, "path3": {"type": "path", "max_depth": 3},
               "prb3": {"type": "prb", "max_depth": 3}, "ptracer3": {"type": "ptracer", "max_depth": 3}}


def floor_scene(integrator, mode, environment=None):
    T = kr.Transform4f
    return {
        "type": "scene", "integrator": dict(integrator, mode=mode),
        "sensor": {"type": "perspective", "fov": 40, "to_world": T().look_at([0, 2.5, 1.5], [0, 0, 0], [0, 1, 0]),
                   "film": {"type": "hdrfilm", "width": 12, "height": 10}},
        "floor": {"type": "rectangle", "to_world": T().rotate([1, 0, 0], -90).scale([6, 6, 1]),
                  "bsdf": {"type": "diffuse", "reflectance": {"type": "bitmap", "filename": str(DATA_DIR / "texture.exr")}}},
        "lamp": {"type": "point", "position": [0.4, 1.2, 0.3], "intensity": {"type": "rgb", "value": [3, 2.5, 2]}},
    } | ({"env": environment} if environment else {})


CONSTANT = {"type": "constant", "radiance": {"type": "rgb", "value": [0.4, 0.5, 0.6]}}
ENVMAP = {"type": "envmap", "filename": str(DATA_DIR / "envmap.exr")}


def rigid_motion(positions):
    """A direction in vertex space: every vertex moves along y by a shift plus a tilt."""
    p = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
    u = np.zeros_like(p)
    u[:, 1] = 0.3 + 0.05 * p[:, 0] - 0.04 * p[:, 2]
    return u.ravel()


class Probe:
    """<image, v> of a scene as a function of one parameter moved along u."""

    def __init__(self, scene_dict, key, direction, spp=SPP):
        self.spp = spp
        self.scene = kr.load_dict(scene_dict)
        self.params, self.key = kr.traverse(self.scene), key
        self.tensor_shape = getattr(self.params[key], "shape", None)
        self.base = np.asarray(self.params[key], dtype=np.float64).ravel()
        self.u = direction(self.base)
        self.v = np.random.default_rng(3).uniform(0.5, 1.5, np.asarray(self.render(self.base)).shape)

    def value(self, flat):
        array = kl.Float(np.ascontiguousarray(flat, dtype=np.float32))
        return kl.TensorXf(array, self.tensor_shape) if self.tensor_shape is not None else array

    def render(self, flat):
        self.params[self.key] = self.value(flat)
        self.params.update()
        return kr.render(self.scene, spp=self.spp, seed=SEED)

    def loss(self, flat):
        return float((np.asarray(self.render(flat), dtype=np.float64) * self.v).sum())

    def central_difference(self, h):
        return (self.loss(self.base + h * self.u) - self.loss(self.base - h * self.u)) / (2 * h)

    def with_derivatives(self):
        value = self.value(self.base)
        kl.enable_grad(value)
        self.params[self.key] = value
        self.params.update()
        return value, kr.render(self.scene, self.params, spp=self.spp, seed=PRIMAL_SEED, seed_grad=SEED)

    def forward(self):
        value, image = self.with_derivatives()
        kl.forward_from(value, self.value(self.u))
        return float((np.asarray(kl.grad(image), dtype=np.float64) * self.v).sum())

    def reverse(self):
        value, image = self.with_derivatives()
        kl.backward_from(image.array, kl.Float(np.ascontiguousarray(self.v.ravel(), dtype=np.float32)))
        return float((np.asarray(kl.grad(value), dtype=np.float64).ravel() * self.u).sum())


def check(probe, h, rtol):
    fd = probe.central_difference(h)
    spread = abs(probe.central_difference(2 * h) - fd)
    assert abs(fd) > 20 * spread, f"the image hardly depends on {probe.key} ({fd}); the check would be empty"
    for what, value in [("forward", probe.forward()), ("reverse", probe.reverse())]:
        assert abs(value - fd) <= rtol * abs(fd) + 2 * spread, f"{probe.key} {what}: {value} against {fd}"


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
@pytest.mark.parametrize("integrator", list(INTEGRATORS))
def test_vertex_position_derivatives_match_central_differences(mode, integrator):
    """The particle tracer's light paths leave the point light only: an environment's would
    start on the scene's bounding sphere, which moves with the floor (a change of sampling,
    zero in expectation but not at one seed)."""
    environment = None if integrator.startswith("ptracer") else CONSTANT
    probe = Probe(floor_scene(INTEGRATORS[integrator], mode, environment), "floor.vertex_positions", rigid_motion)
    check(probe, h=1e-3, rtol=0.02)


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
@pytest.mark.parametrize("integrator", ["direct", "prb3"])
def test_vertex_position_derivatives_under_an_envmap(mode, integrator):
    """The floor tilts under a textured environment: BSDF samples that leave the scene keep
    their world direction, along which the turning floor's BSDF changes; their density is a
    sampling decision, without derivatives. (`path`, plain AD, differentiates that density:
    docs/scope.md.)"""
    probe = Probe(floor_scene(INTEGRATORS[integrator], mode, ENVMAP), "floor.vertex_positions", rigid_motion)
    check(probe, h=1e-3, rtol=0.02)


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
@pytest.mark.parametrize("integrator", ["direct", "path3", "prb3"])
def test_envmap_texel_derivatives_match_central_differences(mode, integrator):
    """A block of texels brightened; the envmap's sampling distribution stays detached."""

    def block(texels):
        u = np.zeros_like(texels)
        u.reshape(-1)[: u.size // 4] = 1.0
        return u

    probe = Probe(floor_scene(INTEGRATORS[integrator], mode, ENVMAP), "env.data", block, spp=512)
    check(probe, h=1e-2, rtol=0.02)


def placed_scene(shape, integrator, mode):
    """A disk larger than the view as the floor, or the camera and a lamp inside a large
    sphere (normals flipped inwards): the shape moves without showing or hiding anything."""
    T = kr.Transform4f
    scene = floor_scene(integrator, mode, None if integrator["type"] == "ptracer" else CONSTANT)
    del scene["floor"]
    bsdf = {"type": "diffuse", "reflectance": {"type": "bitmap", "filename": str(DATA_DIR / "texture.exr")}}
    if shape == "disk":
        scene["shape"] = {"type": "disk", "to_world": T().rotate([1, 0, 0], -90).scale(6), "bsdf": bsdf}
    else:
        scene.pop("env", None)
        scene["shape"] = {"type": "sphere", "center": [0, 0.5, 0], "radius": 4, "flip_normals": True, "bsdf": bsdf}
    return scene


# Inside the sphere every path meets it again: its moving first vertex moves the directions
# to the next (path replay's area form, with the change of measure). The particle tracer is
# left out: its light paths' splats cross the film's edge as the shapes move, a visibility
# term central differences see (the hit recomputation it would check is the one the
# camera's paths use).
ANALYTIC_CASES = [(shape, integrator) for shape in ["disk", "sphere"] for integrator in ["direct", "path3", "prb3"]]


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
@pytest.mark.parametrize("shape, integrator", ANALYTIC_CASES)
def test_analytic_shape_transform_derivatives_match_central_differences(mode, integrator, shape):
    """A disk's or sphere's to_world moved (a shift and a turn given as numbers): the hit is
    solved again along the ray, differentiably."""
    scene = kr.load_dict(placed_scene(shape, INTEGRATORS[integrator], mode))
    params = kr.traverse(scene)
    start = params["shape.to_world"]

    def place(theta):
        shift = kl.Array3f(kl.Float(0.0), theta[0], theta[1])
        params["shape.to_world"] = kr.Transform4f().translate(shift).rotate([0, 0, 1], theta[2]) @ start
        params.update()

    base, u = np.zeros(3), np.array([0.3, 0.2, 2.0])
    place([kl.Float(0.0)] * 3)
    v = np.random.default_rng(6).uniform(0.5, 1.5, np.asarray(kr.render(scene, spp=SPP, seed=SEED)).shape)

    def loss(theta):
        place([kl.Float(float(c)) for c in theta])
        return float((np.asarray(kr.render(scene, spp=SPP, seed=SEED), dtype=np.float64) * v).sum())

    def with_derivatives():
        theta = [kl.Float(0.0) for _ in range(3)]
        for component in theta:
            kl.enable_grad(component)
        place(theta)
        return theta, kr.render(scene, params, spp=SPP, seed=PRIMAL_SEED, seed_grad=SEED)

    theta, image = with_derivatives()
    for component, direction in zip(theta, u):
        kl.set_grad(component, kl.Float(float(direction)))
    forward = float((np.asarray(kl.forward_to(image), dtype=np.float64) * v).sum())
    theta, image = with_derivatives()
    kl.backward_from(image.array, kl.Float(np.ascontiguousarray(v.ravel(), dtype=np.float32)))
    reverse = float(sum(float(np.asarray(kl.grad(c))[0]) * d for c, d in zip(theta, u)))
    h = 1e-2
    fd = (loss(base + h * u) - loss(base - h * u)) / (2 * h)
    spread = abs((loss(base + 2 * h * u) - loss(base - 2 * h * u)) / (4 * h) - fd)
    assert abs(fd) > 20 * spread, f"the image hardly depends on the {shape}'s to_world ({fd})"
    for what, value in [("forward", forward), ("reverse", reverse)]:
        assert abs(value - fd) <= 0.02 * abs(fd) + 2 * spread, f"{shape} to_world {what}: {value} against {fd}"


def test_vertex_position_derivatives_reach_a_mesh_in_a_joined_pool():
    """Two rectangles of one layout share joined arrays; the wall's vertices still get
    derivatives (the joined arrays are rebuilt from the gradient render's leaves)."""
    scene_dict = floor_scene(INTEGRATORS["direct"], "evaluated", CONSTANT)
    scene_dict["wall"] = {"type": "rectangle", "to_world": kr.Transform4f().translate([0, 0, -2]).scale([3, 3, 1])}
    scene = kr.load_dict(scene_dict)
    params = kr.traverse(scene)
    kl.enable_grad(params["floor.vertex_positions"])
    params.update()
    image = kr.render(scene, params, spp=4)
    kl.backward(kl.mean(image))
    gradient = np.asarray(kl.grad(params["floor.vertex_positions"]))
    assert np.isfinite(gradient).all() and np.abs(gradient).max() > 0


def test_vertex_normals_follow_new_positions_with_their_derivatives():
    """As in Mitsuba: new positions without new normals give normals computed from them (the
    caustics tutorial's lens refracts through them); normals set with them are kept."""
    scene = kr.load_dict({"type": "scene", "torus": {"type": "obj", "filename": str(DATA_DIR / "torus.obj")}})
    params = kr.traverse(scene)
    positions = np.asarray(params["torus.vertex_positions"]).reshape(-1, 3)
    # The file's normals are its own; the same positions written give computed ones.
    params["torus.vertex_positions"] = kl.Float(np.ascontiguousarray(positions.ravel(), dtype=np.float32))
    params.update()
    loaded = np.asarray(params["torus.vertex_normals"]).reshape(-1, 3)
    # Rotated a quarter turn about z: (x, y, z) -> (-y, x, z); the normals turn with them.
    rotated = np.stack([-positions[:, 1], positions[:, 0], positions[:, 2]], axis=1)
    value = kl.Float(np.ascontiguousarray(rotated.ravel(), dtype=np.float32))
    kl.enable_grad(value)
    params["torus.vertex_positions"] = value
    params.update()
    normals = params["torus.vertex_normals"]
    assert kl.grad_enabled(normals)
    expected = np.stack([-loaded[:, 1], loaded[:, 0], loaded[:, 2]], axis=1)
    np.testing.assert_allclose(np.asarray(normals).reshape(-1, 3), expected, atol=2e-4)
    # Both written in one update: the normals given are kept.
    params["torus.vertex_positions"] = kl.Float(np.ascontiguousarray(positions.ravel(), dtype=np.float32))
    params["torus.vertex_normals"] = kl.Float(np.ascontiguousarray(expected.ravel(), dtype=np.float32))
    params.update()
    np.testing.assert_allclose(np.asarray(params["torus.vertex_normals"]).reshape(-1, 3), expected, atol=1e-6)


def camera_setter(params, key):
    """Sets the camera from 4 numbers: x_fov, or a pose change (a shift along x and z and a
    turn about y in degrees, after the scene's transform)."""
    base = params[key] if key == "sensor.to_world" else None

    def set_camera(theta):
        if base is None:
            params[key] = theta
        else:
            shift = kl.Array3f(theta[0], kl.Float(0.0), theta[1])
            params[key] = base @ kr.Transform4f().translate(shift).rotate([0, 1, 0], theta[2])
        params.update()

    return set_camera


# The particle tracer's pose check is left out: a turning camera moves light paths' splats
# across the film's edge, where they are dropped, a visibility term central differences see.
# Inside the sphere, the camera's moving first vertices move the directions to the next
# (prb's area form), and the frame turns under the directions `path` samples (whose density
# it once differentiated: 12% off here).
CAMERA_CASES = [(key, integrator, "floor") for key in ["sensor.to_world", "sensor.x_fov"] for integrator in INTEGRATORS
                if (key, integrator) != ("sensor.to_world", "ptracer3")]
CAMERA_CASES += [("sensor.to_world", integrator, "sphere") for integrator in ["path3", "prb3"]]


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
@pytest.mark.parametrize("key, integrator, room", CAMERA_CASES)
def test_camera_derivatives_match_central_differences(mode, integrator, key, room):
    """Beyond Mitsuba, which does not differentiate the camera: pose (a shift and a turn
    given as numbers with derivatives, through Transform4f.translate and .rotate) and field
    of view."""
    spp = SPP
    if room == "sphere":
        spp = 256  # every path meets the sphere again: the derivatives' own noise is larger
        scene = kr.load_dict(placed_scene("sphere", INTEGRATORS[integrator], mode))
    else:
        environment = None if integrator.startswith("ptracer") else CONSTANT
        scene = kr.load_dict(floor_scene(INTEGRATORS[integrator], mode, environment))
    params = kr.traverse(scene)
    set_camera = camera_setter(params, key)
    base = np.array([40.0]) if key == "sensor.x_fov" else np.array([0.0, 0.0, 0.0])
    u = np.array([1.0]) if key == "sensor.x_fov" else np.array([0.2, -0.1, 1.0])
    as_kiln = (lambda x: [kl.Float(float(c)) for c in x]) if base.size > 1 else (lambda x: kl.Float(float(x[0])))
    set_camera(as_kiln(base))
    v = np.random.default_rng(4).uniform(0.5, 1.5, np.asarray(kr.render(scene, spp=spp, seed=SEED)).shape)

    def loss(theta):
        set_camera(as_kiln(theta))
        return float((np.asarray(kr.render(scene, spp=spp, seed=SEED), dtype=np.float64) * v).sum())

    def central_difference(h):
        return (loss(base + h * u) - loss(base - h * u)) / (2 * h)

    def with_derivatives():
        theta = as_kiln(base)
        for component in (theta if isinstance(theta, list) else [theta]):
            kl.enable_grad(component)
        set_camera(theta)
        return theta, kr.render(scene, params, spp=spp, seed=PRIMAL_SEED, seed_grad=SEED)

    theta, image = with_derivatives()
    components = theta if isinstance(theta, list) else [theta]
    for component, direction in zip(components, u):
        kl.set_grad(component, kl.Float(float(direction)))
    forward = float((np.asarray(kl.forward_to(image), dtype=np.float64) * v).sum())
    theta, image = with_derivatives()
    components = theta if isinstance(theta, list) else [theta]
    kl.backward_from(image.array, kl.Float(np.ascontiguousarray(v.ravel(), dtype=np.float32)))
    reverse = float(sum(float(np.asarray(kl.grad(c))[0]) * d for c, d in zip(components, u)))

    h = 1e-2
    fd = central_difference(h)
    spread = abs(central_difference(2 * h) - fd)
    assert abs(fd) > 20 * spread, f"the image hardly depends on {key} ({fd}); the check would be empty"
    for what, value in [("forward", forward), ("reverse", reverse)]:
        assert abs(value - fd) <= 0.02 * abs(fd) + 2 * spread, f"{key} {what}: {value} against {fd}"
