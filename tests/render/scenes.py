"""The scenes kiln.render is compared with Mitsuba 3 on, as Mitsuba-style scene dicts.

Each function takes the folder of the committed assets (tests/render/data) and returns a
dict that `mi.load_dict` and `kr.load_dict` both read (Mitsuba after `for_mitsuba`, which
turns the nested 4 x 4 lists of transforms into its transform objects). SCENES maps each
name to its function; scripts/render_references.py renders them with Mitsuba, and
tests/render/test_render_references.py renders them with kiln.render and compares.

Together the scenes use every plugin of issue 17 and its notable parameters (each
function's docstring says which it exercises). The images are small (32 x 32 to 64 x 64) and lit so that a few hundred
samples per pixel give a usable estimate: lights are close and large or delta lights, and no
caustic depends on hitting a small light.

Plain Python: no Mitsuba or Kiln import, so the test and the reference script share it.
"""

import math
from pathlib import Path

# --- Transforms as nested 4 x 4 lists (rows), as Mitsuba's Transform4f composes them -----


def matmul(*matrices):
    """The product of 4 x 4 matrices, left to right."""
    result = matrices[0]
    for m in matrices[1:]:
        result = [[sum(result[i][k] * m[k][j] for k in range(4)) for j in range(4)] for i in range(4)]
    return result


def translate(x, y, z):
    return [[1.0, 0.0, 0.0, x], [0.0, 1.0, 0.0, y], [0.0, 0.0, 1.0, z], [0.0, 0.0, 0.0, 1.0]]


def scale(x, y=None, z=None):
    y = x if y is None else y
    z = x if z is None else z
    return [[x, 0.0, 0.0, 0.0], [0.0, y, 0.0, 0.0], [0.0, 0.0, z, 0.0], [0.0, 0.0, 0.0, 1.0]]


def rotate(axis, degrees):
    """Rotation by `degrees` about `axis` (right-handed; the axis taken as given, as Mitsuba's rotate())."""
    x, y, z = axis
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    t = 1 - c
    return [[t * x * x + c, t * x * y - s * z, t * x * z + s * y, 0.0],
            [t * x * y + s * z, t * y * y + c, t * y * z - s * x, 0.0],
            [t * x * z - s * y, t * y * z + s * x, t * z * z + c, 0.0], [0.0, 0.0, 0.0, 1.0]]


def look_at(origin, target, up):
    """Camera-to-world: +z towards `target`, +y along `up`, +x to the left, as Mitsuba's look_at."""

    def normalize(v):
        n = math.sqrt(sum(a * a for a in v))
        return [a / n for a in v]

    def cross(a, b):
        return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]

    direction = normalize([t - o for t, o in zip(target, origin)])
    left = normalize(cross(up, direction))
    new_up = cross(direction, left)
    return [[left[i], new_up[i], direction[i], float(origin[i])] for i in range(3)] + [[0.0, 0.0, 0.0, 1.0]]


def rgb(r, g=None, b=None):
    return {"type": "rgb", "value": [r, r if g is None else g, r if b is None else b]}


def is_transform(value):
    """Whether `value` is a transform of these dicts (a nested 4 x 4 list)."""
    return isinstance(value, list) and len(value) == 4 and all(isinstance(r, list) and len(r) == 4 for r in value)


def for_mitsuba(scene, mi):
    """A copy of `scene` that Mitsuba's load_dict takes: transforms become mi.ScalarTransform4f."""
    if isinstance(scene, dict):
        return {key: for_mitsuba(value, mi) for key, value in scene.items()}
    if is_transform(scene):
        return mi.ScalarTransform4f(scene)
    return scene


# --- Building blocks ----------------------------------------------------------------------


def camera(width, height, origin, target, fov, rfilter=None, up=(0, 1, 0), **extra):
    """A perspective sensor with an hdrfilm (`extra` goes to the sensor, `film_*` to the film)."""
    film = {"type": "hdrfilm", "width": width, "height": height}
    film.update({key[len("film_"):]: value for key, value in extra.items() if key.startswith("film_")})
    if rfilter is not None:
        film["rfilter"] = rfilter
    sensor = {"type": "perspective", "fov": fov, "to_world": look_at(origin, target, up), "film": film,
              "sampler": {"type": "independent"}}
    sensor.update({key: value for key, value in extra.items() if not key.startswith("film_")})
    return sensor


def floor(height, size, bsdf):
    """A square rectangle facing +y at `height`."""
    return {"type": "rectangle", "to_world": matmul(translate(0, height, 0), rotate([1, 0, 0], -90), scale(size)),
            "bsdf": bsdf}


def diffuse(reflectance):
    return {"type": "diffuse", "reflectance": reflectance}


# Explicit complex indices of refraction (RGB), roughly gold, copper and aluminium.
GOLD = {"eta": rgb(0.17, 0.42, 1.37), "k": rgb(3.6, 2.35, 1.77)}
COPPER = {"eta": rgb(0.27, 0.68, 1.22), "k": rgb(3.61, 2.63, 2.29)}
ALUMINIUM = {"eta": rgb(1.66, 0.88, 0.52), "k": rgb(9.22, 6.27, 4.84)}

# --- The scenes -----------------------------------------------------------------------------


def cornell_box(data_dir):
    """The Cornell box: rectangles, two cubes, a ceiling light made of a flipped rectangle."""
    white, red, green = diffuse(rgb(0.73)), diffuse(rgb(0.63, 0.065, 0.05)), diffuse(rgb(0.14, 0.45, 0.091))
    return {
        "type": "scene",
        "integrator": {"type": "path", "max_depth": 6},
        "sensor": camera(48, 48, [0, 0, 3.9], [0, 0, 0], 39.3, {"type": "tent"}, fov_axis="smaller"),
        "floor": floor(-1, 1, white),
        "ceiling": {"type": "rectangle", "to_world": matmul(translate(0, 1, 0), rotate([1, 0, 0], 90)), "bsdf": white},
        "back": {"type": "rectangle", "to_world": translate(0, 0, -1), "bsdf": white},
        "left": {"type": "rectangle", "to_world": matmul(translate(-1, 0, 0), rotate([0, 1, 0], 90)), "bsdf": red},
        "right": {"type": "rectangle", "to_world": matmul(translate(1, 0, 0), rotate([0, 1, 0], -90)), "bsdf": green},
        # Faces +y as built; flip_normals turns it (and its emission) down into the box.
        "light": {"type": "rectangle", "flip_normals": True,
                  "to_world": matmul(translate(0, 0.99, 0), rotate([1, 0, 0], -90), scale(0.25)),
                  "bsdf": diffuse(0.0), "emitter": {"type": "area", "radiance": rgb(18.0, 13.0, 6.5)}},
        "tall_box": {"type": "cube", "bsdf": diffuse(0.73),
                     "to_world": matmul(translate(-0.33, -0.4, -0.3), rotate([0, 1, 0], 20), scale(0.28, 0.6, 0.28))},
        "short_box": {"type": "cube", "bsdf": diffuse(0.73),
                      "to_world": matmul(translate(0.35, -0.7, 0.3), rotate([0, 1, 0], -18), scale(0.3))},
    }


def rough_conductors(data_dir):
    """GGX, Beckmann and anisotropic GGX conductors under a point light and a dim sky."""
    return {
        "type": "scene",
        "integrator": {"type": "path", "max_depth": 2},
        "sensor": camera(48, 32, [0, 1.2, 4.2], [0, 0.35, 0], 30),
        "ggx": {"type": "sphere", "center": [-1.1, 0.45, 0], "radius": 0.45,
                "bsdf": {"type": "roughconductor", "distribution": "ggx", "alpha": 0.2, **ALUMINIUM}},
        "beckmann": {"type": "sphere", "center": [0, 0.45, 0], "radius": 0.45,
                     "bsdf": {"type": "roughconductor", "distribution": "beckmann", "alpha": 0.3, **GOLD}},
        "anisotropic": {"type": "sphere", "center": [1.1, 0.45, 0], "radius": 0.45,
                        "bsdf": {"type": "roughconductor", "distribution": "ggx", "alpha_u": 0.05, "alpha_v": 0.35,
                                 **COPPER}},
        "floor": floor(0, 3, diffuse(rgb(0.35, 0.4, 0.45))),
        "lamp": {"type": "point", "position": [0.5, 2.5, 2.5], "intensity": rgb(12.0)},
        "sky": {"type": "constant", "radiance": rgb(0.1)},
    }


def glass(data_dir):
    """Dielectric, rough dielectric and smooth conductor spheres, a thin pane, a checkered wall."""
    checker = {"type": "checkerboard", "color0": rgb(0.8, 0.75, 0.6), "color1": rgb(0.1, 0.15, 0.3),
               "to_uv": scale(5, 4, 1)}
    return {
        "type": "scene",
        "integrator": {"type": "path", "max_depth": 8},
        "sensor": camera(48, 32, [0, 0.6, 4], [0, 0.4, 0], 40),
        "wall": {"type": "rectangle", "to_world": matmul(translate(0, 1, -1.2), scale(3, 1.6, 1)),
                 "bsdf": diffuse(checker)},
        "floor": floor(0, 3, diffuse(0.5)),
        "dielectric": {"type": "sphere", "center": [-1.0, 0.45, 0.2], "radius": 0.45,
                       "bsdf": {"type": "dielectric", "int_ior": 1.5, "ext_ior": 1.0}},
        "rough_dielectric": {"type": "sphere", "center": [0.05, 0.45, 0], "radius": 0.45,
                             "bsdf": {"type": "roughdielectric", "distribution": "ggx", "alpha": 0.15,
                                      "int_ior": 1.33, "ext_ior": 1.0}},
        "mirror": {"type": "sphere", "center": [1.1, 0.4, 0.1], "radius": 0.4,
                   "bsdf": {"type": "conductor", **GOLD}},
        "pane": {"type": "rectangle", "to_world": matmul(translate(0.6, 0.3, 1.2), scale(0.5, 0.3, 1)),
                 "bsdf": {"type": "thindielectric", "int_ior": 1.7, "ext_ior": 1.0}},
        "sky": {"type": "constant", "radiance": rgb(0.9, 0.95, 1.0)},
    }


def plastics(data_dir):
    """Plastic, rough plastic, a blend and a two-sided sheet under a spot light and a dim sky."""
    return {
        "type": "scene",
        "integrator": {"type": "path", "max_depth": 4},
        "sensor": camera(48, 48, [0, 1.6, 3.6], [0, 0.3, 0], 42),
        "plastic": {"type": "sphere", "center": [-0.6, 0.4, 0.5], "radius": 0.4,
                    "bsdf": {"type": "plastic", "diffuse_reflectance": rgb(0.1, 0.25, 0.6), "int_ior": 1.9}},
        "rough_plastic": {"type": "sphere", "center": [0.6, 0.4, 0.5], "radius": 0.4,
                          "bsdf": {"type": "roughplastic", "distribution": "beckmann", "alpha": 0.2,
                                   "nonlinear": True, "diffuse_reflectance": rgb(0.6, 0.2, 0.1)}},
        "blend": {"type": "sphere", "center": [0, 0.35, -0.4], "radius": 0.35,
                  "bsdf": {"type": "blendbsdf", "weight": 0.3, "diffuse": diffuse(rgb(0.2, 0.6, 0.2)),
                           "metal": {"type": "roughconductor", "alpha": 0.15, **COPPER}}},
        # Seen from behind: without twosided its back would be black.
        "sheet": {"type": "rectangle",
                  "to_world": matmul(translate(-0.9, 0.5, -0.6), rotate([0, 1, 0], 160), scale(0.35, 0.5, 1)),
                  "bsdf": {"type": "twosided", "bsdf": diffuse(rgb(0.7, 0.7, 0.3))}},
        "floor": floor(0, 2.5, diffuse(0.45)),
        "spot": {"type": "spot", "to_world": look_at([0.5, 3.0, 2.0], [0, 0.2, 0], [0, 1, 0]),
                 "intensity": rgb(30.0), "cutoff_angle": 30, "beam_width": 22},
        "sky": {"type": "constant", "radiance": rgb(0.1)},
    }


def textures(data_dir):
    """Four textured panels (PNG/EXR bitmaps, filters, wrap modes, a checkerboard): direct light."""
    data_dir = Path(data_dir)

    def panel(x, y, texture):
        return {"type": "rectangle", "to_world": matmul(translate(x, y, 0), scale(0.48)),
                "bsdf": diffuse(texture)}

    return {
        "type": "scene",
        "integrator": {"type": "direct", "emitter_samples": 2, "bsdf_samples": 1},
        "sensor": camera(48, 48, [0, 0, 3], [0, 0, 0], 38),
        "png_bilinear": panel(-0.5, 0.5, {"type": "bitmap", "filename": str(data_dir / "texture.png"),
                                           "to_uv": scale(2, 2, 1)}),
        "exr_nearest_mirror": panel(0.5, 0.5, {"type": "bitmap", "filename": str(data_dir / "texture.exr"),
                                                "filter_type": "nearest", "wrap_mode": "mirror",
                                                "to_uv": matmul(translate(0.2, 0.1, 0), scale(2.5, 2.5, 1))}),
        "checkerboard": panel(-0.5, -0.5, {"type": "checkerboard", "color0": rgb(0.9, 0.8, 0.1),
                                           "color1": 0.1, "to_uv": scale(6, 3, 1)}),
        "png_nearest_clamp": panel(0.5, -0.5, {"type": "bitmap", "filename": str(data_dir / "texture.png"),
                                               "filter_type": "nearest", "wrap_mode": "clamp",
                                               "to_uv": matmul(translate(-0.25, -0.25, 0), scale(1.5, 1.5, 1))}),
        "sun": {"type": "directional", "direction": [-0.3, -0.4, -1.0], "irradiance": rgb(2.0, 1.9, 1.7)},
        "sky": {"type": "constant", "radiance": rgb(0.25)},
    }


def meshes(data_dir):
    """OBJ (smooth and face normals), ASCII and binary PLY meshes, a disk; sun and point light."""
    data_dir = Path(data_dir)
    png = {"type": "bitmap", "filename": str(data_dir / "texture.png")}
    return {
        "type": "scene",
        "integrator": {"type": "path", "max_depth": 3},
        "sensor": camera(48, 48, [0, 2.2, 3.6], [0, 0.2, 0], 45),
        "torus_smooth": {"type": "obj", "filename": str(data_dir / "torus.obj"), "bsdf": diffuse(png),
                         "to_world": matmul(translate(-0.75, 0.45, 0.2), rotate([1, 0, 0], 30), scale(0.45))},
        "torus_faceted": {"type": "obj", "filename": str(data_dir / "torus.obj"), "face_normals": True,
                          "bsdf": {"type": "roughplastic", "alpha": 0.25, "diffuse_reflectance": rgb(0.2, 0.5, 0.7)},
                          "to_world": matmul(translate(0.75, 0.45, 0.2), rotate([0, 0, 1], -30), scale(0.45))},
        "terrain": {"type": "ply", "filename": str(data_dir / "terrain_ascii.ply"),
                    "bsdf": diffuse({"type": "checkerboard", "color0": 0.2, "color1": 0.7, "to_uv": scale(4, 4, 1)}),
                    "to_world": matmul(translate(0, 0.05, -0.6), scale(1.6, 1, 0.8))},
        "capsule": {"type": "ply", "filename": str(data_dir / "capsule_binary.ply"), "bsdf": diffuse(png),
                    "to_world": matmul(translate(0, 0.45, 0.9), rotate([0, 1, 0], 40), scale(0.55, 0.8, 0.55))},
        "disk": {"type": "disk", "to_world": matmul(translate(0, 0, 0), rotate([1, 0, 0], -90), scale(2.2)),
                 "bsdf": diffuse(rgb(0.5, 0.45, 0.4))},
        "sun": {"type": "directional", "direction": [0.4, -1.0, -0.3], "irradiance": rgb(1.6)},
        "lamp": {"type": "point", "position": [-1.0, 1.8, 1.8], "intensity": rgb(3.0, 2.5, 2.0)},
    }


def envmap(data_dir):
    """A rotated HDR environment map with a bright sun over a diffuse and a rough metal sphere."""
    data_dir = Path(data_dir)
    return {
        "type": "scene",
        "integrator": {"type": "path", "max_depth": 4},
        "sensor": camera(32, 32, [0, 0.9, 3.2], [0, 0.4, 0], 45),
        "matte": {"type": "sphere", "center": [-0.55, 0.45, 0], "radius": 0.45, "bsdf": diffuse(rgb(0.7, 0.6, 0.5))},
        "metal": {"type": "sphere", "center": [0.55, 0.45, 0], "radius": 0.45,
                  "bsdf": {"type": "roughconductor", "distribution": "ggx", "alpha": 0.1, **ALUMINIUM}},
        "floor": floor(0, 2, diffuse(0.4)),
        "environment": {"type": "envmap", "filename": str(data_dir / "envmap.exr"), "scale": 1.2,
                        "to_world": rotate([0, 1, 0], 60)},
    }


def aov(data_dir):
    """Depth, position, shading normal, uv and albedo AOVs beside a path-traced image (box filter)."""
    data_dir = Path(data_dir)
    return {
        "type": "scene",
        "integrator": {"type": "aov", "aovs": "dd:depth,pos:position,nn:sh_normal,tc:uv,alb:albedo",
                       "image": {"type": "path", "max_depth": 3}},
        "sensor": camera(32, 32, [0.3, 1.2, 3.2], [0, 0.3, 0], 40, {"type": "box"}),
        "ball": {"type": "sphere", "center": [-0.5, 0.4, 0], "radius": 0.4,
                 "bsdf": diffuse({"type": "bitmap", "filename": str(data_dir / "texture.png")})},
        "torus": {"type": "obj", "filename": str(data_dir / "torus.obj"), "bsdf": diffuse(rgb(0.3, 0.6, 0.4)),
                  "to_world": matmul(translate(0.6, 0.3, 0.1), rotate([1, 0, 0], 50), scale(0.35))},
        "floor": floor(0, 1.5, diffuse({"type": "checkerboard", "color0": 0.2, "color1": 0.6,
                                        "to_uv": scale(3, 3, 1)})),
        "lamp": {"type": "point", "position": [0.5, 2.0, 1.5], "intensity": rgb(6.0)},
    }


def film_crop(data_dir):
    """Film and camera options: a crop window, RGBA, an explicit gaussian filter, vertical fov,
    a principal point offset and clip planes (the far plane cuts the back wall). Bright panels
    with straight edges show the reconstruction filter."""
    panel_light = {"type": "area", "radiance": rgb(1.5, 1.2, 0.8)}
    return {
        "type": "scene",
        "integrator": {"type": "path", "max_depth": 2},
        "sensor": camera(64, 64, [0, 0, 4], [0, 0, 0], 35, {"type": "gaussian", "stddev": 0.5},
                         fov_axis="y", near_clip=1.0, far_clip=5.2, principal_point_offset_x=0.08,
                         principal_point_offset_y=-0.05, film_crop_offset_x=10, film_crop_offset_y=14,
                         film_crop_width=44, film_crop_height=40, film_pixel_format="rgba"),
        "panel_left": {"type": "rectangle", "to_world": matmul(translate(-0.62, 0.2, 0), scale(0.33, 0.47, 1)),
                       "emitter": panel_light},
        "panel_right": {"type": "rectangle", "to_world": matmul(translate(0.41, 0.33, 0.3), scale(0.27, 0.23, 1)),
                        "emitter": panel_light},
        "ball": {"type": "sphere", "center": [0.35, -0.45, 0.4], "radius": 0.3, "bsdf": diffuse(rgb(0.8, 0.5, 0.3))},
        # Tilted so that its right part lies beyond the far clip plane (alpha 0 there).
        "back_wall": {"type": "rectangle", "to_world": matmul(translate(0, 0, -1.0), rotate([0, 1, 0], 35), scale(2.5)),
                      "bsdf": diffuse(0.5)},
        "lamp": {"type": "point", "position": [1.2, 0.8, 2.5], "intensity": rgb(5.0)},
    }


def hide_emitters(data_dir):
    """hide_emitters and a short rr_depth: the sky and the spherical area light are hidden."""
    return {
        "type": "scene",
        "integrator": {"type": "path", "max_depth": 5, "rr_depth": 2, "hide_emitters": True},
        "sensor": camera(32, 32, [0, 1.0, 3.0], [0, 0.4, 0], 45),
        "bulb": {"type": "sphere", "to_world": matmul(translate(0.5, 1.0, -0.3), scale(0.2)),
                 "emitter": {"type": "area", "radiance": rgb(8.0, 7.0, 5.0)}},
        "ball": {"type": "sphere", "center": [-0.35, 0.35, 0], "radius": 0.35, "bsdf": diffuse(rgb(0.6, 0.6, 0.6))},
        "floor": floor(0, 2, diffuse(rgb(0.5, 0.4, 0.3))),
        "sky": {"type": "constant", "radiance": rgb(0.3, 0.4, 0.6)},
    }


def disk_light(data_dir):
    """A tilted disk area light, direct lighting with several emitter samples, a scaled sphere."""
    return {
        "type": "scene",
        "integrator": {"type": "direct", "emitter_samples": 3, "bsdf_samples": 2},
        "sensor": camera(32, 32, [0, 1.4, 3.0], [0, 0.2, 0], 42),
        "light": {"type": "disk", "to_world": matmul(translate(-0.6, 1.6, 0.6), rotate([1, 0, 0], 60), scale(0.4)),
                  "emitter": {"type": "area", "radiance": rgb(15.0)}},
        "floor": floor(0, 1.6, {"type": "roughplastic", "distribution": "ggx", "alpha": 0.3,
                                "diffuse_reflectance": rgb(0.4, 0.45, 0.5)}),
        "ball": {"type": "sphere", "to_world": matmul(translate(0.3, 0.45, 0), scale(0.45)),
                 "bsdf": {"type": "roughconductor", "distribution": "beckmann", "alpha": 0.25, **GOLD}},
    }


def particle_tracer(data_dir):
    """ptracer: a glass sphere focusing a spot light's caustic onto a diffuse floor, a visible
    rectangular area light, a point light and a dim sky; a crop of the film with a gaussian
    filter, several passes."""
    return {
        "type": "scene",
        "integrator": {"type": "ptracer", "max_depth": 6, "rr_depth": 3, "samples_per_pass": 16},
        "sensor": camera(48, 40, [0, 1.6, 3.2], [0, 0.3, 0], 40, {"type": "gaussian"}, film_crop_offset_x=4,
                         film_crop_offset_y=2, film_crop_width=40, film_crop_height=36),
        "floor": floor(0, 1.8, diffuse(rgb(0.6, 0.55, 0.5))),
        "back": {"type": "rectangle", "to_world": matmul(translate(0, 1, -1.2), scale(1.8, 1, 1)),
                 "bsdf": diffuse(rgb(0.3, 0.4, 0.5))},
        "ball": {"type": "sphere", "center": [0.1, 0.45, 0.1], "radius": 0.4,
                 "bsdf": {"type": "dielectric", "int_ior": 1.5}},
        "spot": {"type": "spot", "to_world": look_at([0.25, 2.2, 0.4], [0.1, 0.45, 0.1], [0, 0, 1]),
                 "intensity": rgb(14.0, 12.0, 9.0), "cutoff_angle": 15, "beam_width": 10},
        "panel": {"type": "rectangle", "to_world": matmul(translate(-0.9, 0.8, -0.6), rotate([0, 1, 0], 40),
                                                          scale(0.25, 0.35, 1)),
                  "emitter": {"type": "area", "radiance": rgb(3.0, 2.5, 2.0)}},
        "lamp": {"type": "point", "position": [0.9, 1.2, 0.8], "intensity": rgb(0.8, 0.9, 1.0)},
        "sky": {"type": "constant", "radiance": rgb(0.05, 0.06, 0.08)},
    }


def directional_area(data_dir):
    """A directionalarea light with a textured radiance (a nearest-filtered PNG) shining straight
    down through a glass lens (a flattened sphere) onto a diffuse floor: only the ptracer sees
    it, as in Mitsuba's caustics tutorial."""
    pattern = {"type": "bitmap", "filename": str(Path(data_dir) / "texture.png"), "filter_type": "nearest"}
    return {
        "type": "scene",
        "integrator": {"type": "ptracer", "max_depth": 5},
        "sensor": camera(40, 40, [0, 1.3, 2.0], [0, 0.1, -0.1], 50, {"type": "gaussian"}),
        "floor": floor(0, 1.5, diffuse(rgb(0.8))),
        "lens": {"type": "sphere", "to_world": matmul(translate(0.0, 1.1, 0.0), scale(0.6, 0.25, 0.6)),
                 "bsdf": {"type": "dielectric", "int_ior": 1.5}},
        # Faces -y (down) once flipped, emitting along its normal only.
        "emitter_shape": {"type": "rectangle", "flip_normals": True,
                          "to_world": matmul(translate(0, 2.0, 0), rotate([1, 0, 0], -90), scale(0.8)),
                          "bsdf": diffuse(0.0),
                          "emitter": {"type": "directionalarea", "radiance": pattern}},
    }


def mesh_attributes(data_dir):
    """The mesh_attribute texture on a PLY's attributes: vertex colors (r g b) as a diffuse
    reflectance, a face attribute (shade_0) scaled and as a blendbsdf's weight (eval_1), a
    prefixed vertex color (tint_r ...); a sphere without attributes beside them."""
    ply = str(Path(data_dir) / "terrain_attributes.ply")

    def attribute(name, scale=1.0):
        return {"type": "mesh_attribute", "name": name, "scale": scale}

    return {
        "type": "scene",
        "integrator": {"type": "path", "max_depth": 3},
        "sensor": camera(48, 40, [0, 3.2, 3.0], [0, 0, 0.1], 45),
        "colors": {"type": "ply", "filename": ply, "bsdf": diffuse(attribute("vertex_color")),
                   "to_world": matmul(translate(-0.8, 0, -0.5), scale(0.7))},
        "shades": {"type": "ply", "filename": ply, "bsdf": diffuse(attribute("face_shade", 1.2)),
                   "to_world": matmul(translate(0.8, 0, -0.5), scale(0.7))},
        "blend": {"type": "ply", "filename": ply,
                  "bsdf": {"type": "blendbsdf", "weight": attribute("face_shade"),
                           "bsdf_0": diffuse(attribute("vertex_tint_color")),
                           "bsdf_1": {"type": "roughconductor", "alpha": 0.3}},
                  "to_world": matmul(translate(0, 0, 0.7), scale(0.7))},
        "ball": {"type": "sphere", "to_world": matmul(translate(0.9, 0.3, 0.6), scale(0.3)),
                 "bsdf": diffuse(rgb(0.7, 0.3, 0.2))},
        "sun": {"type": "directional", "direction": [0.3, -1.0, -0.4], "irradiance": rgb(1.8)},
        "sky": {"type": "constant", "radiance": rgb(0.3)},
    }


SCENES = {f.__name__: f for f in [cornell_box, rough_conductors, glass, plastics, textures, meshes, envmap, aov,
                                  film_crop, hide_emitters, disk_light, particle_tracer, directional_area,
                                  mesh_attributes]}

DATA_DIR = Path(__file__).resolve().parent / "data"
