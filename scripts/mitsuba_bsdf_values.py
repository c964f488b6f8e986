"""Prints the values Mitsuba 3.9 computes for kiln.render's BSDF tests, as C++ literals.

Usage (Mitsuba is not a dependency of Kiln; install it into a scratch environment):
    python3 -m venv /tmp/mi && /tmp/mi/bin/pip install mitsuba==3.9.1 drjit==1.5.0
    /tmp/mi/bin/python scripts/mitsuba_bsdf_values.py > values.txt

For each configuration below it evaluates eval() and pdf() at fixed direction pairs and
sample() at fixed random numbers (variant scalar_rgb, shading frame = the local frame), and
prints one `BsdfReference` initializer (tests/render/bsdf_test_support.h) that the
tests/render/test_bsdf_<plugin>.cpp files hold verbatim.
"""
import math

import mitsuba as mi

mi.set_variant("scalar_rgb")


def rgb(r, g, b):
    return {"type": "rgb", "value": [r, g, b]}


def unit(x, y, z):
    n = math.sqrt(x * x + y * y + z * z)
    return [float(mi.Float(c / n)) for c in (x, y, z)]


ABOVE = [unit(0, 0, 1), unit(0.3, 0.2, 0.9), unit(-0.6, 0.1, 0.4), unit(0.9, -0.3, 0.15)]
BELOW = [unit(0.2, -0.1, -0.8), unit(-0.5, 0.4, -0.3)]
SOME = [ABOVE[1], ABOVE[3], BELOW[0]]  # a few incident directions for the longer tables
SAMPLES = [(0.3, (0.2, 0.7)), (0.8, (0.6, 0.1)), (0.05, (0.9, 0.45)), (0.55, (0.35, 0.85))]


def cpp_float(v):
    return "%.9g" % v if v != 0 else "0"


def cpp_array(values):
    return "{" + ", ".join(cpp_float(v) for v in values) + "}"


def cpp_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return 'std::string("%s")' % value
    if isinstance(value, (int, float)):
        return "%r" % float(value)
    if isinstance(value, dict) and value["type"] == "rgb":
        return "Color3d{{{%s}}}" % ", ".join("%r" % float(v) for v in value["value"])
    if isinstance(value, dict):
        return "make_bsdf(%s)" % cpp_spec(value)
    raise TypeError(value)


def cpp_spec(spec):
    params = ", ".join('{"%s", %s}' % (k, cpp_value(v)) for k, v in spec.items() if k != "type")
    return '"%s", {%s}' % (spec["type"], params)


def reference(spec, wis, wos, importance=False, component=None, sample_points=SAMPLES, weight_from_eval=False):
    bsdf = mi.load_dict(spec)
    ctx = mi.BSDFContext(mi.TransportMode.Importance if importance else mi.TransportMode.Radiance)
    if component is not None:
        ctx.component = component
    si = mi.SurfaceInteraction3f()
    si.sh_frame = mi.Frame3f([0, 0, 1])
    si.uv = [0.5, 0.5]
    evals, samples = [], []
    for wi in wis:
        si.wi = wi
        for wo in wos:
            value = bsdf.eval(ctx, si, wo)
            pdf = bsdf.pdf(ctx, si, wo)
            evals.append("{%s, %s, %s, %s}" % (cpp_array(wi), cpp_array(wo), cpp_array(value), cpp_float(pdf)))
        for sample1, sample2 in sample_points:
            bs, weight = bsdf.sample(ctx, si, sample1, sample2)
            valid = any(w != 0 for w in weight)
            if valid and weight_from_eval:
                weight = bsdf.eval(ctx, si, bs.wo) / bsdf.pdf(ctx, si, bs.wo)
            samples.append("{%s, %s, %s, %s, %s, %s, %s, %d, %s}" % (
                cpp_array(wi), cpp_float(sample1), cpp_array(sample2), "true" if valid else "false",
                cpp_array(bs.wo), cpp_float(bs.pdf), cpp_float(bs.eta), bs.sampled_component, cpp_array(weight)))
    mode = "TransportMode::Importance" if importance else "TransportMode::Radiance"
    if weight_from_eval:
        print("    // sample() weights: eval() / pdf() at the sampled direction (Mitsuba's own weight drops")
        print("    // D / D_widened when it samples all normals; see roughdielectric.cpp)")
    comp = "~0u" if component is None else "%du" % component
    print("    // %s" % spec)
    print("    {%s, %s, %s,\n     {%s},\n     {%s}}," % (
        cpp_spec(spec).replace("{", "{", 1), mode, comp, ",\n      ".join(evals), ",\n      ".join(samples)))


def section(name):
    print("\n// ---- %s" % name)


section("conductor")
for spec in [{"type": "conductor"}, {"type": "conductor", "material": "Au"},
             {"type": "conductor", "eta": rgb(0.2, 0.9, 1.1), "k": rgb(3.9, 2.4, 2.1), "specular_reflectance": rgb(0.9, 0.8, 0.7)}]:
    reference(spec, ABOVE + BELOW[:1], ABOVE[1:2], sample_points=SAMPLES[:1])

section("roughconductor")
for spec in [{"type": "roughconductor", "distribution": "ggx", "alpha": 0.3, "material": "Cu"},
             {"type": "roughconductor", "alpha": 0.2},
             {"type": "roughconductor", "distribution": "ggx", "alpha_u": 0.1, "alpha_v": 0.4, "eta": rgb(0.2, 0.9, 1.1),
              "k": rgb(3.9, 2.4, 2.1)},
             {"type": "roughconductor", "alpha_u": 0.3, "alpha_v": 0.1, "sample_visible": False},
             {"type": "roughconductor", "distribution": "ggx", "alpha": 0.25, "sample_visible": False,
              "specular_reflectance": 0.5}]:
    reference(spec, SOME, ABOVE + BELOW[:1])

section("dielectric")
for spec, importance in [({"type": "dielectric"}, False), ({"type": "dielectric", "int_ior": "water"}, True),
                         ({"type": "dielectric", "int_ior": 1.7, "ext_ior": 1.2, "specular_reflectance": 0.8,
                           "specular_transmittance": 0.6}, False)]:
    reference(spec, ABOVE + BELOW, ABOVE[1:2], importance, sample_points=SAMPLES[:2])

section("thindielectric")
for spec in [{"type": "thindielectric"}, {"type": "thindielectric", "int_ior": 1.33, "specular_transmittance": 0.5}]:
    reference(spec, ABOVE + BELOW, ABOVE[1:2], sample_points=SAMPLES[:2])

section("roughdielectric")
for spec, importance in [({"type": "roughdielectric", "distribution": "ggx", "alpha": 0.3}, False),
                         ({"type": "roughdielectric", "alpha": 0.2, "int_ior": 1.33}, True),
                         ({"type": "roughdielectric", "distribution": "ggx", "alpha_u": 0.2, "alpha_v": 0.5,
                           "specular_reflectance": 0.7, "specular_transmittance": 0.9}, False),
                         ({"type": "roughdielectric", "alpha": 0.3, "sample_visible": False}, False)]:
    reference(spec, SOME, ABOVE[1:3] + BELOW, importance, weight_from_eval=not spec.get("sample_visible", True))

section("plastic")
for spec in [{"type": "plastic"},
             {"type": "plastic", "diffuse_reflectance": rgb(0.2, 0.5, 0.8), "nonlinear": True, "int_ior": 1.6},
             {"type": "plastic", "specular_reflectance": 0.6}]:
    reference(spec, SOME, ABOVE + BELOW[:1])

section("roughplastic")
for spec in [{"type": "roughplastic"},
             {"type": "roughplastic", "distribution": "ggx", "alpha": 0.3, "diffuse_reflectance": rgb(0.2, 0.5, 0.8),
              "nonlinear": True},
             {"type": "roughplastic", "distribution": "ggx", "alpha": 0.2, "sample_visible": False,
              "int_ior": 1.7, "specular_reflectance": 0.6}]:
    reference(spec, SOME, ABOVE + BELOW[:1])

section("twosided")
for spec in [{"type": "twosided", "a": {"type": "diffuse", "reflectance": rgb(0.2, 0.4, 0.6)}},
             {"type": "twosided", "a": {"type": "roughconductor", "distribution": "ggx", "alpha": 0.3,
                                        "material": "Au"}},
             {"type": "twosided", "a": {"type": "diffuse", "reflectance": 0.8},
              "b": {"type": "roughplastic", "distribution": "ggx", "alpha": 0.3}}]:
    reference(spec, SOME + BELOW[1:], ABOVE[1:3] + BELOW)

section("blendbsdf")
for spec, component in [({"type": "blendbsdf", "weight": 0.3, "a": {"type": "diffuse"},
                          "b": {"type": "roughconductor", "distribution": "ggx", "alpha": 0.2}}, None),
                        ({"type": "blendbsdf", "weight": 0.6, "a": {"type": "roughplastic"},
                          "b": {"type": "conductor", "material": "Au"}}, None),
                        ({"type": "blendbsdf", "weight": 0.3, "a": {"type": "diffuse"},
                          "b": {"type": "roughconductor", "distribution": "ggx", "alpha": 0.2}}, 1)]:
    reference(spec, SOME, ABOVE + BELOW[:1], component=component)
