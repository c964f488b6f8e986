"""mi.cornell_box(): the Cornell box scene as a dict, the one Mitsuba 3's function returns
(same shapes, transforms, colors, sensor and integrator), so that scripts starting from it
render the same image."""

from kiln.render.array_types import ScalarTransform4f as _T


def _rgb(r, g, b):
    return {"type": "rgb", "value": [r, g, b]}


def _rectangle(to_world, material):
    return {"type": "rectangle", "to_world": to_world, "bsdf": {"type": "ref", "id": material}}


def cornell_box():
    """A new dict describing the Cornell box (kr.load_dict(kr.cornell_box()) loads it)."""
    scene = {
        "type": "scene",
        "integrator": {"type": "path", "max_depth": 8},
        "sensor": {
            "type": "perspective", "fov_axis": "smaller", "near_clip": 0.001, "far_clip": 100.0,
            "focus_distance": 1000, "fov": 39.3077,
            "to_world": _T().look_at(origin=[0, 0, 3.90], target=[0, 0, 0], up=[0, 1, 0]),
            "sampler": {"type": "independent", "sample_count": 64},
            "film": {"type": "hdrfilm", "width": 256, "height": 256, "rfilter": {"type": "gaussian"},
                     "pixel_format": "rgb", "component_format": "float32"},
        },
    }
    for name, color in (("white", (0.885809, 0.698859, 0.666422)), ("green", (0.105421, 0.37798, 0.076425)),
                        ("red", (0.570068, 0.0430135, 0.0443706))):
        scene[name] = {"type": "diffuse", "reflectance": _rgb(*color)}
    light = _rectangle(_T().translate([0.0, 0.99, 0.01]).rotate([1, 0, 0], 90).scale([0.23, 0.19, 0.19]), "white")
    light["emitter"] = {"type": "area", "radiance": _rgb(18.387, 13.9873, 6.75357)}
    scene["light"] = light
    scene["floor"] = _rectangle(_T().translate([0.0, -1.0, 0.0]).rotate([1, 0, 0], -90), "white")
    scene["ceiling"] = _rectangle(_T().translate([0.0, 1.0, 0.0]).rotate([1, 0, 0], 90), "white")
    scene["back"] = _rectangle(_T().translate([0.0, 0.0, -1.0]), "white")
    scene["green-wall"] = _rectangle(_T().translate([1.0, 0.0, 0.0]).rotate([0, 1, 0], -90), "green")
    scene["red-wall"] = _rectangle(_T().translate([-1.0, 0.0, 0.0]).rotate([0, 1, 0], 90), "red")
    for name, to_world in (("small-box", _T().translate([0.335, -0.7, 0.38]).rotate([0, 1, 0], -17).scale(0.3)),
                           ("large-box", _T().translate([-0.33, -0.4, -0.28]).rotate([0, 1, 0], 18.25)
                            .scale([0.3, 0.61, 0.3]))):
        scene[name] = {"type": "cube", "to_world": to_world, "bsdf": {"type": "ref", "id": "white"}}
    return scene
