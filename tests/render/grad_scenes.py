"""The cases of the gradient references: forward-mode derivative images of kiln.render
compared with Mitsuba 3's (issues 18 and 30).

A case is a scene with an integrator and one traverse() key of that scene (the same in Mitsuba
and kiln.render), differentiated along a tangent: 1 in every component (an RGB value's (1, 1,
1)), or the one TANGENTS gives (geometry and envmap texels). The `prb` cases use scenes of
tests/render/scenes.py at a small max_depth (short paths keep the derivative images' noise
low), their interior terms being all that Mitsuba's prb computes too:

  cornell_box    the red wall (colour bleeding) and the ceiling light, seen directly
  film_crop      the ball and a panel light seen directly (RGBA film, crop, gaussian filter)
  disk_light     a rough plastic floor's diffuse reflectance and a tilted disk light
  hide_emitters  the ball and a spherical light hidden from the camera, roulette from depth 2
  meshes         the capsule (a textured PLY mesh) moved up, under a point light and the sun
  envmap         a block of the environment map's texels brightened

The projective cases (issue 30) use the scenes below, where silhouettes move, with Mitsuba's
direct_projective or prb_projective:

  silhouette     a blob (data/blob.ply, examples/scenes/blob_mesh.py) moved right in front of a
                 wall under a spherical lamp: its silhouette (primary visibility) and its
                 shadow on the wall
  shadow         the blob moved right above a floor under a panel light, out of view: only its
                 shadow moves (indirect visibility)
  turntable      the blob turned about the vertical under the environment map: its silhouette
                 and its shading

Their references are central differences of Mitsuba's images (CENTRAL_DIFFERENCES: the step),
not Mitsuba's derivative images: those disagree with Mitsuba's own central differences. Its
silhouette sampling treats edges where a mesh's vertices are split (its cube, the capsule's and
the torus's seams) as open boundaries, which makes its derivatives 2 to 6 times too large; on
the blob, whose vertices are shared, the columns along its silhouette are still 35-40% too
large, where Kiln's agree with the differences within their noise.

scripts/render_grad_references.py renders the references with Mitsuba,
tests/python/test_render_grad_references.py the derivative images with kiln.render.
Plain Python: no Mitsuba or Kiln import, like scenes.py.
"""

import scenes

# Case name -> (integrator, the keys differentiated one at a time). A case's scene is the one
# of its name (a `_suffix` names another integrator on the same scene).
CASES = {
    "cornell_box": ({"type": "prb", "max_depth": 4}, ["left.bsdf.reflectance.value", "light.emitter.radiance.value"]),
    "film_crop": ({"type": "prb", "max_depth": 3},
                  ["ball.bsdf.reflectance.value", "panel_left.emitter.radiance.value"]),
    # Direct light only, as the scene's own `direct` integrator. With max_depth 3 the floor
    # seen at grazing angles in the gold ball has heavy-tailed derivative estimates (in
    # Mitsuba as in Kiln): 16 renders of 32 spp mostly miss the rare large samples, and an
    # unbiased renderer failed 1 seed set in 20.
    "disk_light": ({"type": "prb", "max_depth": 2},
                   ["floor.bsdf.diffuse_reflectance.value", "light.emitter.radiance.value"]),
    "hide_emitters": ({"type": "prb", "max_depth": 4, "rr_depth": 2, "hide_emitters": True},
                      ["ball.bsdf.reflectance.value", "bulb.emitter.radiance.value"]),
    # Direct light only: Kiln's prb holds each segment's ray fixed, so beyond the first
    # vertex it lacks the terms by which a moving vertex moves the next (docs/scope.md).
    "meshes": ({"type": "prb", "max_depth": 2}, ["capsule.vertex_positions"]),
    "envmap": ({"type": "prb", "max_depth": 3}, ["environment.data"]),
    "silhouette": ({"type": "direct_projective"}, ["blob.vertex_positions"]),
    "silhouette_prb": ({"type": "prb_projective", "max_depth": 2}, ["blob.vertex_positions"]),
    "shadow": ({"type": "direct_projective"}, ["blob.vertex_positions"]),
    "turntable": ({"type": "direct_projective"}, ["blob.vertex_positions"]),
}

# Keys whose tangent is not 1 everywhere: a name TANGENTS' function `tangent` knows.
TANGENTS = {"capsule.vertex_positions": "move_up", "environment.data": "first_rows"}
# The projective cases' references: central differences of Mitsuba's images with this step.
CENTRAL_DIFFERENCES = {"silhouette": 0.005, "silhouette_prb": 0.005, "shadow": 0.005, "turntable": 0.005}
# The projective cases' tangents.
CASE_TANGENTS = {"silhouette": "move_right", "silhouette_prb": "move_right", "shadow": "move_right",
                 "turntable": "turn_y"}


def tangent(key, values, case=None):
    """The tangent of `key` for its flat values (a NumPy array) in `case`: 1 everywhere, or every
    vertex moved up (0, 1, 0) or right (1, 0, 0), or turned about the vertical axis through the
    origin ((z, 0, -x): a rotation's velocity), or the first eighth of the texels (rows near
    the top)."""
    kind = CASE_TANGENTS.get(case, TANGENTS.get(key))
    if kind is None:
        return [1.0] * len(values)
    if kind in ("move_up", "move_right"):
        axis = 1 if kind == "move_up" else 0
        return [1.0 if k % 3 == axis else 0.0 for k in range(len(values))]
    if kind == "turn_y":
        out = [0.0] * len(values)
        for k in range(0, len(values), 3):
            out[k], out[k + 2] = float(values[k + 2]), -float(values[k])
        return out
    return [1.0 if k < len(values) // 8 else 0.0 for k in range(len(values))]


def silhouette(data_dir):
    """The blob before a wall, lit by a spherical lamp (its silhouette and shadow move)."""
    return {
        "type": "scene",
        "sensor": scenes.camera(32, 32, [0, 0.5, 3.0], [0, 0.45, 0], 40, film_sample_border=True),
        "blob": {"type": "ply", "filename": str(data_dir / "blob.ply"), "bsdf": scenes.diffuse(scenes.rgb(0.3, 0.3, 0.75)),
                 "to_world": scenes.matmul(scenes.translate(0, 0.45, 0.3), scenes.scale(0.4))},
        "wall": {"type": "rectangle", "to_world": scenes.matmul(scenes.translate(0, 0.5, -0.4), scenes.scale(2.5)),
                 "bsdf": scenes.diffuse(scenes.rgb(0.6, 0.55, 0.5))},
        "lamp": {"type": "sphere", "center": [1.2, 1.8, 2.2], "radius": 0.3,
                 "emitter": {"type": "area", "radiance": scenes.rgb(30.0)}},
    }


def shadow(data_dir):
    """The blob above a floor under a panel light, out of the camera's view (its shadow moves)."""
    return {
        "type": "scene",
        "sensor": scenes.camera(32, 32, [0, 3.0, 3.0], [0.2, 0, 0.6], 16, film_sample_border=True),
        "floor": scenes.floor(0, 4, scenes.diffuse(0.6)),
        "blob": {"type": "ply", "filename": str(data_dir / "blob.ply"), "bsdf": scenes.diffuse(0.3),
                 "to_world": scenes.matmul(scenes.translate(0.2, 0.8, 0), scenes.scale(0.35))},
        "panel": {"type": "rectangle",
                  "to_world": scenes.matmul(scenes.translate(0, 3, 0), scenes.rotate([1, 0, 0], 90)),
                  "emitter": {"type": "area", "radiance": scenes.rgb(4.0)}},
    }


def turntable(data_dir):
    """The blob turning about the vertical under the environment map."""
    return {
        "type": "scene",
        "sensor": scenes.camera(32, 32, [0, 0.6, 3.0], [0, 0, 0], 40, film_sample_border=True),
        "blob": {"type": "ply", "filename": str(data_dir / "blob.ply"), "bsdf": scenes.diffuse(scenes.rgb(0.7, 0.6, 0.5)),
                 "to_world": scenes.scale(0.6)},
        "environment": {"type": "envmap", "filename": str(data_dir / "envmap.exr"), "scale": 1.2},
    }


PROJECTIVE_SCENES = {f.__name__: f for f in [silhouette, shadow, turntable]}

# The derivative images' channels: RGB. (Mitsuba's gradient render puts the pixel coverage,
# not a derivative, in the alpha channel of an RGBA film; the derivative of alpha is 0.)
CHANNELS = ["R", "G", "B"]


def case_names():
    """Every case as (reference name, case name, key); the reference name is `<case>-<key>`."""
    return [(f"{case}-{key}", case, key) for case, (_, keys) in CASES.items() for key in keys]


def scene_name(case):
    """The scene a case renders (its name, less a `_suffix` naming another integrator)."""
    return case if case in scenes.SCENES or case in PROJECTIVE_SCENES else case.rsplit("_", 1)[0]


def scene(case):
    """The scene dict of the case, with the case's integrator."""
    name = scene_name(case)
    description = (PROJECTIVE_SCENES.get(name) or scenes.SCENES[name])(scenes.DATA_DIR)
    description["integrator"] = dict(CASES[case][0])
    return description
