"""The projective integrators' visibility terms (issue 30): kr.render with direct_projective
and prb_projective against central differences of <image, v> as shapes and the camera move,
where silhouettes seen by the camera move (primary visibility), and as occluders move shadows
(indirect visibility).

The objects are black in front of a white environment unless a case says otherwise, so the
image changes only where coverage does and the interior terms are (nearly) zero: the
visibility term is then the whole derivative. v is the pixel column, so moving sideways has a
large derivative (the object's area in pixels times its speed). The differences come from
1024 jittered samples per pixel with the box filter; the tolerance is 6% plus their spread.
The same cases without the term (sppp = 0, sppi = 0) are shown to fail the check.
"""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kiln as kl
import kiln.render as kr

T = kr.Transform4f
WIDTH, HEIGHT, FD_SPP, SPP = 32, 24, 1024, 64
BLACK = {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0, 0, 0]}}
RED = {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.8, 0.3, 0.2]}}
SHAPES = {
    "rectangle": {"type": "rectangle", "to_world": T().translate([0.2, 0.1, 0]).rotate([0, 1, 0], 30).scale(0.6)},
    "cube": {"type": "cube", "to_world": T().translate([0.2, 0.1, 0]).rotate([1, 1, 0], 30).scale(0.5)},
    "sphere": {"type": "sphere", "center": [0.2, 0.1, 0], "radius": 0.6},
    "disk": {"type": "disk", "to_world": T().translate([0.2, 0.1, 0]).rotate([0, 1, 0], 40).scale(0.6)},
}
COLUMN = np.broadcast_to(np.arange(float(WIDTH))[None, :, None], (HEIGHT, WIDTH, 3)).copy()


def scene_dict(shape, integrator, bsdf=BLACK, lamp=False):
    scene = {
        "type": "scene", "integrator": integrator,
        "sensor": {"type": "perspective", "fov": 45, "to_world": T().look_at([0, 0, 4], [0, 0, 0], [0, 1, 0]),
                   "film": {"type": "hdrfilm", "width": WIDTH, "height": HEIGHT, "rfilter": {"type": "box"}}},
        "obj": dict(SHAPES[shape], bsdf=bsdf),
        "env": {"type": "constant", "radiance": {"type": "rgb", "value": [1.0, 1.0, 1.0]}},
    }
    if lamp:
        scene["lamp"] = {"type": "point", "position": [1, 2, 3], "intensity": {"type": "rgb", "value": [10, 10, 10]}}
    return scene


class Motion:
    """The scene's `key` moved sideways by t: a mesh's vertices, or a transform (the shape's
    or the sensor's) composed with a translation."""

    def __init__(self, scene, key, spp=SPP):
        self.scene, self.params, self.key, self.spp = scene, kr.traverse(scene), key, spp
        start = self.params[key]
        self.start = start if isinstance(start, T) else np.array(start, dtype=np.float64).reshape(-1, 3)

    def place(self, t):
        if isinstance(self.start, T):
            shift = t if isinstance(t, kl.Float) else kl.Float(float(t))
            self.params[self.key] = T().translate(kl.Array3f(shift, kl.Float(0.0), kl.Float(0.0))) @ self.start
        else:
            p = [kl.Float(np.ascontiguousarray(self.start[:, k], dtype=np.float32)) for k in range(3)]
            p[0] = p[0] + (t if isinstance(t, kl.Float) else float(t))
            self.params[self.key] = kl.ravel(kl.Array3f(*p))
        self.params.update()

    def loss(self, t):
        self.place(t)
        return float((np.asarray(kr.render(self.scene, spp=FD_SPP, seed=3), dtype=np.float64) * COLUMN).sum())

    def central_difference(self, h):
        return (self.loss(h) - self.loss(-h)) / (2 * h)

    def derivatives(self):
        """(forward, reverse) derivative of <image, v> at t = 0."""
        t = kl.Float(0.0)
        kl.enable_grad(t)
        self.place(t)
        image = kr.render(self.scene, self.params, spp=self.spp, seed=5)
        kl.set_grad(t, kl.Float(1.0))
        forward = float((np.asarray(kl.forward_to(image), dtype=np.float64) * COLUMN).sum())
        t = kl.Float(0.0)
        kl.enable_grad(t)
        self.place(t)
        image = kr.render(self.scene, self.params, spp=self.spp, seed=5)
        kl.backward_from(image.array, kl.Float(np.ascontiguousarray(COLUMN.ravel(), dtype=np.float32)))
        return forward, float(np.asarray(kl.grad(t))[0])


def agrees(motion, h=0.05, rtol=0.06):
    fd = motion.central_difference(h)
    spread = abs(motion.central_difference(2 * h) - fd)
    assert abs(fd) > 20 * spread, f"the image hardly depends on {motion.key} ({fd})"
    forward, reverse = motion.derivatives()
    assert forward == pytest.approx(reverse, rel=1e-4, abs=1e-3)
    return abs(forward - fd) <= rtol * abs(fd) + 2 * spread, (forward, fd)


def key_of(shape):
    return "obj.vertex_positions" if shape in ("rectangle", "cube") else "obj.to_world"


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_moving_silhouettes_match_central_differences(shape, mode):
    scene = kr.load_dict(scene_dict(shape, {"type": "direct_projective", "mode": mode}))
    ok, (derivative, fd) = agrees(Motion(scene, key_of(shape)))
    assert ok, f"{shape}: {derivative} against {fd}"


@pytest.mark.parametrize("shape", ["cube", "sphere"])
def test_visibility_term_left_out_fails_the_check(shape):
    """What the check catches: direct_projective without its visibility term (sppp = 0) is
    direct's derivative, zero here."""
    scene = kr.load_dict(scene_dict(shape, {"type": "direct_projective", "sppp": 0}))
    ok, (derivative, fd) = agrees(Motion(scene, key_of(shape)))
    assert not ok and abs(derivative) < 0.05 * abs(fd)


def test_shaded_cube_interior_and_creases():
    """A lit cube: its visible sides shade differently, so the creases between them (where its
    vertices are split) move discontinuities too, and the interior term is not zero."""
    scene = kr.load_dict(scene_dict("cube", {"type": "direct_projective"}, bsdf=RED, lamp=True))
    ok, (derivative, fd) = agrees(Motion(scene, "obj.vertex_positions"))
    assert ok, f"{derivative} against {fd}"


def test_flat_shaded_mesh_creases():
    """A lit mesh with face normals (the blob, 2,562 vertices): shading jumps across every edge,
    so every edge the camera sees is a crease that moves a discontinuity. Creases hidden just
    behind the silhouette must not count (the rays either side of them meet the surface in
    front, within a grazing ray's tolerance of them): they doubled the silhouette's term."""
    blob = {"type": "ply", "filename": str(Path(__file__).resolve().parents[1] / "render" / "data" / "blob.ply"),
            "face_normals": True, "to_world": T().translate([0.2, 0.1, 0]).scale(0.8), "bsdf": RED}
    scene = scene_dict("sphere", {"type": "direct_projective"}, lamp=True)
    scene["obj"] = blob
    ok, (derivative, fd) = agrees(Motion(kr.load_dict(scene), "obj.vertex_positions"))
    assert ok, f"{derivative} against {fd}"


def test_prb_projective_sphere():
    scene = kr.load_dict(scene_dict("sphere", {"type": "prb_projective", "max_depth": 3}, bsdf=RED, lamp=True))
    ok, (derivative, fd) = agrees(Motion(scene, "obj.to_world"))
    assert ok, f"{derivative} against {fd}"


def test_camera_translation_moves_silhouettes():
    """Beyond Mitsuba: the camera's pose gets the visibility term too (static shapes then
    have moving silhouettes)."""
    scene = kr.load_dict(scene_dict("sphere", {"type": "direct_projective"}))
    ok, (derivative, fd) = agrees(Motion(scene, "sensor.to_world"))
    assert ok, f"{derivative} against {fd}"


def shadow_scene(occluder, integrator):
    """An occluder above a white floor under an area light, out of the camera's view: only
    its shadow moves in the image."""
    shapes = {"sphere": {"type": "sphere", "center": [0.2, 0.8, 0], "radius": 0.3},
              "cube": {"type": "cube", "to_world": T().translate([0.2, 0.8, 0]).rotate([0, 1, 0], 30).scale(0.25)}}
    return {
        "type": "scene", "integrator": integrator,
        "sensor": {"type": "perspective", "fov": 14, "to_world": T().look_at([0, 3, 3], [0.3, 0, 0.6], [0, 1, 0]),
                   "film": {"type": "hdrfilm", "width": WIDTH, "height": HEIGHT, "rfilter": {"type": "box"}}},
        "floor": {"type": "rectangle", "to_world": T().rotate([1, 0, 0], -90).scale(4), "bsdf": {"type": "diffuse"}},
        "obj": dict(shapes[occluder], bsdf=RED),
        "light": {"type": "rectangle", "to_world": T().translate([0, 3, 0]).rotate([1, 0, 0], 90),
                  "emitter": {"type": "area", "radiance": {"type": "rgb", "value": [4, 4, 4]}}},
    }


@pytest.mark.parametrize("occluder", ["sphere", "cube"])
def test_moving_shadows_match_central_differences(occluder):
    """The indirect term: 1024 samples per pixel of it (its integrand is zero almost
    everywhere, so it needs more than the others; guided as by default, octree)."""
    settings = {"type": "direct_projective", "sppc": 16, "sppp": 16, "sppi": 1024}
    scene = kr.load_dict(shadow_scene(occluder, settings))
    ok, (derivative, fd) = agrees(Motion(scene, key_of(occluder), spp=0), rtol=0.06)
    assert ok, f"{occluder}: {derivative} against {fd}"
    without = kr.load_dict(shadow_scene(occluder, dict(settings, sppi=0)))
    ok, (derivative, fd) = agrees(Motion(without, key_of(occluder)))
    assert not ok and abs(derivative) < 0.05 * abs(fd)


def test_images_are_the_interior_integrators():
    for projective, interior in [({"type": "direct_projective"}, {"type": "direct"}),
                                 ({"type": "prb_projective", "max_depth": 4}, {"type": "prb", "max_depth": 4})]:
        a = kr.render(kr.load_dict(scene_dict("cube", projective, bsdf=RED, lamp=True)), spp=4, seed=2)
        b = kr.render(kr.load_dict(scene_dict("cube", interior, bsdf=RED, lamp=True)), spp=4, seed=2)
        assert np.array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("settings, message", [
    ({"guiding": "kdtree"}, "guiding"),
    ({"sppc": -1}, "sppc"),
    ({"sppp": 1 << 30}, "sppp"),
    ({"guiding_rounds": 0}, "guiding_rounds"),
    ({"guiding_rounds": 65}, "guiding_rounds"),
    ({"guiding_proj": "yes"}, "guiding_proj"),
    ({"project_seed": "camera"}, "project_seed"),
    ({"unknown": 1}, "unknown"),
])
def test_bad_parameters_raise(settings, message):
    with pytest.raises((ValueError, TypeError), match=message):
        kr.load_dict(scene_dict("sphere", dict({"type": "direct_projective"}, **settings)))


def test_sensor_without_projection_raises_cleanly():
    """A sensor light cannot reach (pixel_batch) is refused with a clear error, in a
    subprocess so that a crash fails the test."""
    code = """
import kiln as kl, kiln.render as kr
view = {"type": "perspective", "film": {"type": "hdrfilm", "width": 4, "height": 4}}
d = {"type": "scene", "integrator": {"type": "direct_projective"},
     "sensor": {"type": "pixel_batch", "film": {"type": "hdrfilm", "width": 4, "height": 1}, "view": view},
     "obj": {"type": "sphere", "center": [0, 0, 3], "radius": 0.5},
     "env": {"type": "constant"}}
scene = kr.load_dict(d)
params = kr.traverse(scene)
shift = kl.Float(0.0)
kl.enable_grad(shift)
params["obj.to_world"] = kr.Transform4f().translate(kl.Array3f(shift, kl.Float(0.0), kl.Float(0.0)))
params.update()
try:
    image = kr.render(scene, params, spp=1)
    kl.backward_from(image.array, kl.Float([1.0] * 12))
except ValueError as error:
    print("ValueError:", error)
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "ValueError" in result.stdout and "direct_projective" in result.stdout


def test_changing_silhouettes_compile_no_new_kernels(tmp_path):
    """As a mesh is optimized its silhouette gains and loses edges every iteration; the
    renders (and their derivatives) after the first two compile nothing (story 1): a
    smooth sphere's few silhouette edges grow to hundreds as its vertices are jittered."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "scenes"))
    import blob_mesh
    points, faces = blob_mesh.icosphere(3)
    blob_mesh.write_ply(tmp_path / "sphere.ply", points, faces)
    scene = kr.load_dict(dict(scene_dict("sphere", {"type": "direct_projective"}),
                              obj={"type": "ply", "filename": str(tmp_path / "sphere.ply"), "bsdf": BLACK}))
    params = kr.traverse(scene)
    jitter = np.random.default_rng(1).normal(size=points.shape)
    compiled = []
    for amount in [0.0, 0.002, 0.01, 0.03, 0.06, 0.0]:
        params["obj.vertex_positions"] = kl.Float(np.ascontiguousarray(points + amount * jitter, np.float32).ravel())
        params.update()
        kl.enable_grad(params["obj.vertex_positions"])
        image = kr.render(scene, params, spp=4, seed=1)
        kl.backward_from(image.array, kl.full(kl.Float, 1.0, kl.width(image.array)))
        kl.grad(params["obj.vertex_positions"]).numpy()
        history = kl.kernel_history(clear=True)
        compiled.append([(launch["source"], launch["reason"]) for launch in history
                         if launch["source"] in ("compiled", "generalized")])
    assert not any(compiled[2:]), compiled[2:]
