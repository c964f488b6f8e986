"""The cases of the gradient references: forward-mode derivative images of kiln.render's `prb`
compared with Mitsuba 3's `prb` (issue 18).

A case is a scene of tests/render/scenes.py with its integrator replaced by `prb` at a small
max_depth (short paths keep the derivative images' noise low), and one traverse() key of
that scene (the same in Mitsuba and kiln.render), differentiated along a tangent: 1 in every
component (an RGB value's (1, 1, 1)), or the one TANGENTS gives (issue 30: geometry and
envmap texels, interior terms, which is all Mitsuba's prb computes too). The scenes:

  cornell_box    the red wall (colour bleeding) and the ceiling light, seen directly
  film_crop      the ball and a panel light seen directly (RGBA film, crop, gaussian filter)
  disk_light     a rough plastic floor's diffuse reflectance and a tilted disk light
  hide_emitters  the ball and a spherical light hidden from the camera, roulette from depth 2
  meshes         the capsule (a textured PLY mesh) moved up, under a point light and the sun
  envmap         a block of the environment map's texels brightened

scripts/render_grad_references.py renders the references with Mitsuba,
tests/python/test_render_grad_references.py the derivative images with kiln.render.
Plain Python: no Mitsuba or Kiln import, like scenes.py.
"""

import scenes

# Scene name -> (prb's parameters, the keys differentiated one at a time).
CASES = {
    "cornell_box": ({"max_depth": 4}, ["left.bsdf.reflectance.value", "light.emitter.radiance.value"]),
    "film_crop": ({"max_depth": 3}, ["ball.bsdf.reflectance.value", "panel_left.emitter.radiance.value"]),
    # Direct light only, as the scene's own `direct` integrator. With max_depth 3 the floor
    # seen at grazing angles in the gold ball has heavy-tailed derivative estimates (in
    # Mitsuba as in Kiln): 16 renders of 32 spp mostly miss the rare large samples, and an
    # unbiased renderer failed 1 seed set in 20.
    "disk_light": ({"max_depth": 2}, ["floor.bsdf.diffuse_reflectance.value", "light.emitter.radiance.value"]),
    "hide_emitters": ({"max_depth": 4, "rr_depth": 2, "hide_emitters": True},
                      ["ball.bsdf.reflectance.value", "bulb.emitter.radiance.value"]),
    # Direct light only: Kiln's prb holds each segment's ray fixed, so beyond the first
    # vertex it lacks the terms by which a moving vertex moves the next (docs/scope.md).
    "meshes": ({"max_depth": 2}, ["capsule.vertex_positions"]),
    "envmap": ({"max_depth": 3}, ["environment.data"]),
}

# Keys whose tangent is not 1 everywhere: a name TANGENTS' function `tangent` knows.
TANGENTS = {"capsule.vertex_positions": "move_up", "environment.data": "first_rows"}


def tangent(key, values):
    """The tangent of `key` for its flat values (a NumPy array): 1 everywhere, or every
    vertex moved up (0, 1, 0), or the first eighth of the texels (rows near the top)."""
    kind = TANGENTS.get(key)
    if kind is None:
        return [1.0] * len(values)
    if kind == "move_up":
        return [1.0 if k % 3 == 1 else 0.0 for k in range(len(values))]
    return [1.0 if k < len(values) // 8 else 0.0 for k in range(len(values))]

# The derivative images' channels: RGB. (Mitsuba's gradient render puts the pixel coverage,
# not a derivative, in the alpha channel of an RGBA film; the derivative of alpha is 0.)
CHANNELS = ["R", "G", "B"]


def case_names():
    """Every case as (reference name, scene name, key); the reference name is `<scene>-<key>`."""
    return [(f"{scene}-{key}", scene, key) for scene, (_, keys) in CASES.items() for key in keys]


def scene(name):
    """The scene dict of scenes.py's `name` with the case's prb integrator."""
    description = scenes.SCENES[name](scenes.DATA_DIR)
    description["integrator"] = {"type": "prb", **CASES[name][0]}
    return description
