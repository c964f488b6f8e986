"""Random small scenes for the renderer's gradient fuzzer (tests/python/test_render_grad_fuzz.py).

`random_case(seed)` draws, from every plugin kiln.render has, a scene dict that
`kr.load_dict` reads: one to four shapes (rectangle, cube, sphere, disk, OBJ and PLY meshes)
with BSDFs (all ten, twosided and blendbsdf nesting others) whose colours are RGB values,
bitmaps or checkerboards, area lights on some shapes and other emitters (point, spot,
constant, directional, envmap); a perspective sensor with a small hdrfilm (RGB or RGBA,
sometimes a crop window) and a box, tent or gaussian filter; and an integrator (direct,
path, prb, aov around one of them, direct_projective or prb_projective) with random depths,
roulette, emitter settings and projective terms' samples.
With it comes how the control-flow mode is chosen (the global flag or the integrator's
`mode`, symbolic or evaluated) and the render's samples and seeds. The same seed gives the
same case in every process.

Plain Python: no Kiln import, like scenes.py.
"""

import numpy as np

import scenes

DATA_DIR = scenes.DATA_DIR
MESHES = [("obj", "torus.obj"), ("ply", "capsule_binary.ply"), ("ply", "terrain_ascii.ply")]
BITMAPS = ["texture.png", "texture.exr"]
# The ways the control-flow mode is set: the global flag, or the integrator's own `mode`
# (with the global flag set the other way, so that the integrator's must win).
MODES = [("flag", "symbolic"), ("flag", "evaluated"), ("integrator", "symbolic"), ("integrator", "evaluated")]
AOVS = ["dd:depth", "pos:position", "nn:sh_normal", "gn:geo_normal", "tc:uv", "alb:albedo"]


class Case:
    """One fuzz case: the scene dict, the mode choice and the render's settings."""

    def __init__(self, seed, scene, mode_by, mode, spp, render_seed, gradient_seed):
        self.seed = seed
        self.scene = scene
        self.mode_by = mode_by  # "flag" or "integrator"
        self.mode = mode        # "symbolic" or "evaluated"
        self.spp = spp
        self.render_seed = render_seed
        self.gradient_seed = gradient_seed

    def describe(self):
        integrator = self.scene["integrator"]
        shapes = [f"{k}:{v['type']}" for k, v in self.scene.items() if isinstance(v, dict) and "bsdf" in v]
        return (f"case {self.seed}: {integrator['type']} ({self.mode} by {self.mode_by}), spp {self.spp}, "
                f"shapes {shapes}")


def _uniform(rng, lo, hi):
    return float(rng.uniform(lo, hi))


def _rgb(rng, lo=0.05, hi=0.95):
    return {"type": "rgb", "value": [_uniform(rng, lo, hi) for _ in range(3)]}


def _colour(rng):
    """A reflectance-like texture: an RGB value, a scalar, a bitmap or a checkerboard."""
    kind = rng.choice(["rgb", "rgb", "float", "bitmap", "checkerboard"])
    if kind == "rgb":
        return _rgb(rng)
    if kind == "float":
        return _uniform(rng, 0.1, 0.9)
    to_uv = scenes.scale(_uniform(rng, 0.5, 4), _uniform(rng, 0.5, 4), 1)
    if kind == "bitmap":
        return {"type": "bitmap", "filename": str(DATA_DIR / rng.choice(BITMAPS)), "to_uv": to_uv,
                "filter_type": str(rng.choice(["bilinear", "nearest"])),
                "wrap_mode": str(rng.choice(["repeat", "mirror", "clamp"]))}
    return {"type": "checkerboard", "color0": _rgb(rng), "color1": _rgb(rng), "to_uv": to_uv}


def _bsdf(rng, depth=0, reflecting=False):
    """A random BSDF; twosided and blendbsdf nest others (at most two levels); with
    `reflecting`, one that transmits nothing (what twosided nests)."""
    kinds = ["diffuse", "diffuse", "conductor", "roughconductor", "plastic", "roughplastic"]
    if not reflecting:
        kinds += ["dielectric", "roughdielectric", "thindielectric"]
    if depth < 2:
        kinds += ["blendbsdf"] + ([] if reflecting else ["twosided"])
    kind = str(rng.choice(kinds))
    if kind == "diffuse":
        return {"type": "diffuse", "reflectance": _colour(rng)}
    if kind in ("conductor", "roughconductor"):
        bsdf = {"type": kind, "eta": _rgb(rng, 0.2, 1.6), "k": _rgb(rng, 1.5, 4.0)}
        if rng.random() < 0.3:
            bsdf["specular_reflectance"] = _colour(rng)
        if kind == "roughconductor":
            bsdf["distribution"] = str(rng.choice(["ggx", "beckmann"]))
            bsdf["alpha"] = _uniform(rng, 0.05, 0.6)
        return bsdf
    if kind in ("dielectric", "roughdielectric", "thindielectric"):
        bsdf = {"type": kind, "int_ior": _uniform(rng, 1.2, 1.8), "ext_ior": 1.0}
        if kind == "roughdielectric":
            bsdf["alpha"] = _uniform(rng, 0.05, 0.5)
        return bsdf
    if kind in ("plastic", "roughplastic"):
        bsdf = {"type": kind, "diffuse_reflectance": _colour(rng), "int_ior": _uniform(rng, 1.3, 1.9),
                "nonlinear": bool(rng.random() < 0.3)}
        if kind == "roughplastic":
            bsdf["alpha"] = _uniform(rng, 0.05, 0.5)
        return bsdf
    if kind == "twosided":
        return {"type": "twosided", "bsdf": _bsdf(rng, depth + 1, reflecting=True)}
    return {"type": "blendbsdf", "weight": _uniform(rng, 0.1, 0.9), "a": _bsdf(rng, depth + 1, reflecting),
            "b": _bsdf(rng, depth + 1, reflecting)}


def _placement(rng):
    """A transform that keeps a unit-sized shape roughly in view of the camera."""
    axis = rng.normal(size=3)
    axis = list(axis / np.linalg.norm(axis))
    return scenes.matmul(scenes.translate(_uniform(rng, -0.9, 0.9), _uniform(rng, -0.3, 0.9), _uniform(rng, -0.8, 0.6)),
                         scenes.rotate(axis, _uniform(rng, 0, 360)), scenes.scale(_uniform(rng, 0.2, 0.6)))


def _shape(rng):
    kind = str(rng.choice(["rectangle", "cube", "sphere", "sphere", "disk", "mesh"]))
    if kind == "mesh":
        kind, filename = MESHES[rng.integers(len(MESHES))]
        shape = {"type": kind, "filename": str(DATA_DIR / filename), "to_world": _placement(rng)}
        if kind == "obj" and rng.random() < 0.3:
            shape["face_normals"] = True
    elif kind == "sphere" and rng.random() < 0.5:
        shape = {"type": "sphere", "center": [_uniform(rng, -0.8, 0.8), _uniform(rng, 0, 0.8), _uniform(rng, -0.6, 0.4)],
                 "radius": _uniform(rng, 0.15, 0.45)}
    else:
        shape = {"type": kind, "to_world": _placement(rng)}
    if rng.random() < 0.8:
        shape["bsdf"] = _bsdf(rng)
    if rng.random() < 0.25:
        shape["emitter"] = {"type": "area", "radiance": _rgb(rng, 0.5, 6.0)}
    if kind in ("rectangle", "disk") and rng.random() < 0.2:
        shape["flip_normals"] = True
    return shape


def _emitter(rng, environment):
    """A point, spot, directional or (when `environment`) constant or envmap emitter: a scene
    has at most one environment emitter."""
    kind = str(rng.choice(["point", "spot", "directional"] + (["constant", "envmap"] if environment else [])))
    if kind == "point":
        return {"type": "point", "position": [_uniform(rng, -1.5, 1.5), _uniform(rng, 1, 2.5), _uniform(rng, 0.5, 2.5)],
                "intensity": _rgb(rng, 1.0, 8.0)}
    if kind == "spot":
        origin = [_uniform(rng, -1.5, 1.5), _uniform(rng, 1.5, 3), _uniform(rng, 0.5, 2.5)]
        cutoff = _uniform(rng, 15, 50)
        return {"type": "spot", "to_world": scenes.look_at(origin, [0, 0.2, 0], [0, 1, 0]),
                "intensity": _rgb(rng, 5.0, 30.0), "cutoff_angle": cutoff, "beam_width": cutoff * _uniform(rng, 0.4, 0.9)}
    if kind == "constant":
        return {"type": "constant", "radiance": _rgb(rng, 0.05, 0.6)}
    if kind == "directional":
        d = [_uniform(rng, -0.6, 0.6), -1.0, _uniform(rng, -0.6, 0.3)]
        return {"type": "directional", "direction": d, "irradiance": _rgb(rng, 0.5, 2.5)}
    return {"type": "envmap", "filename": str(DATA_DIR / "envmap.exr"), "scale": _uniform(rng, 0.3, 1.5),
            "to_world": scenes.rotate([0, 1, 0], _uniform(rng, 0, 360))}


def _integrator(rng, inner_only=False):
    kinds = ["direct", "path", "prb"] + ([] if inner_only else ["aov", "direct_projective", "prb_projective"])
    kind = str(rng.choice(kinds))
    if kind == "direct":
        return {"type": "direct", "emitter_samples": int(rng.integers(1, 3)), "bsdf_samples": int(rng.integers(0, 3)),
                "hide_emitters": bool(rng.random() < 0.2)}
    if kind in ("path", "prb", "prb_projective"):
        integrator = {"type": kind, "max_depth": int(rng.choice([1, 2, 3, 4, 6, -1])),
                      "rr_depth": int(rng.integers(1, 6)), "hide_emitters": bool(rng.random() < 0.2)}
        return _projective_samples(rng, integrator) if kind == "prb_projective" else integrator
    if kind == "direct_projective":
        return _projective_samples(rng, {"type": kind, "hide_emitters": bool(rng.random() < 0.2)})
    count = int(rng.integers(1, 4))
    aovs = ",".join(str(a) for a in rng.choice(AOVS, size=count, replace=False))
    return {"type": "aov", "aovs": aovs, "image": _integrator(rng, inner_only=True)}


def _projective_samples(rng, integrator):
    """A projective integrator's samples per pixel of each term, some left to the render's spp
    and some 0 (the term left out)."""
    for term in ("sppc", "sppp", "sppi"):
        if rng.random() < 0.4:
            integrator[term] = int(rng.choice([0, 1, 2, 4]))
    return integrator


def _sensor(rng):
    width, height = int(rng.integers(3, 10)), int(rng.integers(3, 10))
    film = {"type": "hdrfilm", "width": width, "height": height,
            "pixel_format": str(rng.choice(["rgb", "rgba"])),
            "rfilter": {"type": str(rng.choice(["box", "tent", "gaussian"]))}}
    if film["rfilter"]["type"] == "gaussian" and rng.random() < 0.5:
        film["rfilter"]["stddev"] = _uniform(rng, 0.3, 0.7)
    if rng.random() < 0.3:
        cw, ch = int(rng.integers(1, width + 1)), int(rng.integers(1, height + 1))
        film.update(crop_offset_x=int(rng.integers(0, width - cw + 1)), crop_offset_y=int(rng.integers(0, height - ch + 1)),
                    crop_width=cw, crop_height=ch)
    origin = [_uniform(rng, -0.8, 0.8), _uniform(rng, 0.4, 1.6), _uniform(rng, 2.8, 4.0)]
    return {"type": "perspective", "fov": _uniform(rng, 30, 60), "to_world": scenes.look_at(origin, [0, 0.3, 0], [0, 1, 0]),
            "film": film, "sampler": {"type": "independent"}}


def random_case(seed):
    """The fuzz case of `seed`."""
    rng = np.random.default_rng([seed, 0x6B696C6E])
    scene = {"type": "scene", "integrator": _integrator(rng), "sensor": _sensor(rng)}
    for k in range(int(rng.integers(1, 5))):
        scene[f"shape{k}"] = _shape(rng)
    if rng.random() < 0.7:
        scene["floor"] = scenes.floor(float(rng.uniform(-0.4, 0)), 3, _bsdf(rng))
    lit = any("emitter" in v for v in scene.values() if isinstance(v, dict))
    for k in range(int(rng.integers(0 if lit else 1, 3))):
        environment = not any(v.get("type") in ("constant", "envmap") for v in scene.values() if isinstance(v, dict))
        scene[f"light{k}"] = _emitter(rng, environment)
    mode_by, mode = MODES[rng.integers(len(MODES))]
    return Case(seed, scene, mode_by, mode, spp=int(rng.integers(1, 5)), render_seed=int(rng.integers(0, 1000)),
                gradient_seed=int(rng.integers(0, 1000)))


if __name__ == "__main__":  # prints a case: python tests/render/fuzz_scenes.py SEED
    import json
    import sys

    case = random_case(int(sys.argv[1]))
    print(case.describe())
    print(json.dumps(case.scene, indent=1, default=str))
