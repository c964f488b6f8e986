"""BSDFs written in Python (issue 29: Mitsuba's mi.register_bsdf contract): a kr.BSDF
subclass registered by name loads from dicts, renders inside the C++ path tracer's kernels
as the C++ plugin it mirrors does (same seed, same image), lists its parameters through
traverse(cb) so kr.traverse changes them and renders differentiate them, and every misuse
raises a clear error instead of crashing."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kiln as kl
import kiln.render as kr

F = kr.BSDFFlags


class PyDiffuse(kr.BSDF):
    """render/bsdfs/diffuse.cpp with a constant reflectance, written as Mitsuba's Python BSDFs are."""

    def __init__(self, props):
        kr.BSDF.__init__(self, props)
        self.reflectance = kl.Array3f(props["reflectance"]) if "reflectance" in props else kl.Array3f(0.5)
        self.m_components = [F.DiffuseReflection | F.FrontSide]
        self.m_flags = F.DiffuseReflection | F.FrontSide

    def lit(self, si, wo, active):
        return active & (kr.Frame3f.cos_theta(si.wi) > 0.0) & (kr.Frame3f.cos_theta(wo) > 0.0)

    def sample(self, ctx, si, sample1, sample2, active):
        bs = kr.BSDFSample3f()
        bs.wo = kr.warp.square_to_cosine_hemisphere(sample2)
        bs.pdf = kr.warp.square_to_cosine_hemisphere_pdf(bs.wo)
        bs.eta = kl.Float(1.0)
        bs.sampled_type = kl.UInt32(+F.DiffuseReflection)
        bs.sampled_component = kl.UInt32(0)
        valid = active & (kr.Frame3f.cos_theta(si.wi) > 0.0) & (bs.pdf > 0.0)
        bs.pdf = kl.select(valid, bs.pdf, kl.Float(0.0))
        return bs, kl.select(valid, self.reflectance, kl.Array3f(0.0))

    def eval(self, ctx, si, wo, active):
        value = self.reflectance * (kr.Frame3f.cos_theta(wo) / kl.pi)
        return kl.select(self.lit(si, wo, active), value, kl.Array3f(0.0))

    def pdf(self, ctx, si, wo, active):
        return kl.select(self.lit(si, wo, active), kr.warp.square_to_cosine_hemisphere_pdf(wo), kl.Float(0.0))

    def traverse(self, cb):
        cb.put("reflectance", self.reflectance, kr.ParamFlags.Differentiable)

    def parameters_changed(self, keys):
        self.changed = list(keys)


class PyGlass(kr.BSDF):
    """The custom_plugin tutorial's BSDF: Fresnel-weighted choice of mirror reflection and refraction."""

    def __init__(self, props):
        kr.BSDF.__init__(self, props)
        self.eta = props["eta"] if "eta" in props else 1.33
        reflection = F.DeltaReflection | F.FrontSide | F.BackSide
        transmission = F.DeltaTransmission | F.FrontSide | F.BackSide
        self.m_components = [reflection, transmission]
        self.m_flags = reflection | transmission

    def sample(self, ctx, si, sample1, sample2, active):
        cos_theta_i = kr.Frame3f.cos_theta(si.wi)
        r_i, cos_theta_t, eta_it, eta_ti = kr.fresnel(cos_theta_i, self.eta)
        selected_r = (sample1 <= r_i) & active
        bs = kr.BSDFSample3f()
        bs.pdf = kl.select(selected_r, r_i, 1.0 - r_i)
        bs.sampled_component = kl.select(selected_r, kl.UInt32(0), kl.UInt32(1))
        bs.sampled_type = kl.select(selected_r, kl.UInt32(+F.DeltaReflection), kl.UInt32(+F.DeltaTransmission))
        bs.wo = kl.select(selected_r, kr.reflect(si.wi), kr.refract(si.wi, cos_theta_t, eta_ti))
        bs.eta = kl.select(selected_r, kl.Float(1.0), eta_it)
        return bs, kl.select(selected_r, kl.Array3f(1.0), kl.Array3f(1.0) * kl.square(eta_ti))

    def eval(self, ctx, si, wo, active):
        return 0.0

    def pdf(self, ctx, si, wo, active):
        return 0.0


kr.register_bsdf("test_pydiffuse", lambda props: PyDiffuse(props))
kr.register_bsdf("test_pyglass", lambda props: PyGlass(props))


def box(left, spp=8):
    description = kr.cornell_box()
    description["red"] = left  # the red wall's material
    description["sensor"]["film"].update(width=48, height=48)
    description["sensor"]["sampler"]["sample_count"] = spp
    return kr.load_dict(description)


RED = [0.63, 0.065, 0.05]


def test_a_python_diffuse_renders_what_the_cpp_one_does():
    ours = box({"type": "test_pydiffuse", "reflectance": RED})
    theirs = box({"type": "diffuse", "reflectance": {"type": "rgb", "value": RED}})
    a, b = np.asarray(kr.render(ours, seed=3)), np.asarray(kr.render(theirs, seed=3))
    assert a.max() > 0
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_a_python_delta_bsdf_renders_what_dielectric_does():
    def sphere_scene(bsdf):
        return kr.load_dict({
            "type": "scene",
            "integrator": {"type": "path", "max_depth": 6},
            "light": {"type": "constant", "radiance": {"type": "rgb", "value": [1.0, 0.8, 0.6]}},
            "floor": {"type": "rectangle", "to_world": kr.ScalarTransform4f().translate([0, 0, -1]).scale(3),
                      "bsdf": {"type": "diffuse"}},
            "sphere": {"type": "sphere", "bsdf": bsdf},
            "sensor": {"type": "perspective",
                       "to_world": kr.ScalarTransform4f().look_at(origin=[0, -5, 5], target=[0, 0, 0], up=[0, 0, 1]),
                       "film": {"type": "hdrfilm", "width": 64, "height": 64}},
        })

    a = np.asarray(kr.render(sphere_scene({"type": "test_pyglass", "eta": 1.33}), spp=64, seed=1))
    b = np.asarray(kr.render(sphere_scene({"type": "dielectric", "int_ior": 1.33, "ext_ior": 1.0}), spp=64, seed=1))
    # The same estimator with the same random numbers up to the lobe choice's rounding.
    assert np.mean(np.abs(a - b)) < 2e-3 * np.mean(b)


def test_loaded_object_is_the_python_instance_and_its_parameters_are_traversed():
    bsdf = kr.load_dict({"type": "test_pydiffuse", "reflectance": [0.2, 0.3, 0.4]})
    assert isinstance(bsdf, PyDiffuse) and bsdf.plugin == "test_pydiffuse"
    assert int(bsdf.m_flags) == int(F.DiffuseReflection | F.FrontSide) and bsdf.component_count() == 1
    scene = box(bsdf)
    params = kr.traverse(scene)
    key = "red.reflectance"
    np.testing.assert_allclose(np.asarray(params[key]).ravel(), [0.2, 0.3, 0.4], rtol=1e-6)
    before = np.asarray(kr.render(scene, seed=1))
    params[key] = kl.Array3f(0.9, 0.1, 0.1)
    params.update()
    assert bsdf.changed == ["reflectance"]
    np.testing.assert_allclose(np.asarray(bsdf.reflectance).ravel(), [0.9, 0.1, 0.1], rtol=1e-6)
    assert not np.allclose(before, np.asarray(kr.render(scene, seed=1)))


def test_render_derivatives_reach_a_python_bsdfs_parameter():
    grads = []
    for left in ({"type": "test_pydiffuse", "reflectance": RED},
                 {"type": "diffuse", "reflectance": {"type": "rgb", "value": RED}}):
        scene = box(left, spp=4)
        params = kr.traverse(scene)
        key = "red.reflectance" if "red.reflectance" in params else "red.reflectance.value"
        kl.enable_grad(params[key])
        params.update()
        kl.backward(kl.sum(kr.render(scene, params, seed=2, seed_grad=2), axis=None))
        grads.append(np.asarray(kl.grad(params[key])).ravel())
    assert np.abs(grads[0]).max() > 0
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-3)


def test_properties_as_mitsubas():
    seen = {}

    class Probe(PyDiffuse):
        def __init__(self, props):
            seen.update(keys=sorted(props.keys()), has=props.has_property("flag"), name=props.plugin_name(),
                        number=props["number"], text=props.get("text"), missing=props.get("nope", 7))
            props["flag"]  # read: otherwise the loader reports it unread
            seen["props"] = props
            super().__init__(props)

    kr.register_bsdf("test_probe", lambda props: Probe(props))
    kr.load_dict({"type": "test_probe", "number": 2.5, "text": "hi", "flag": True})
    assert seen["keys"] == ["flag", "number", "text"] and seen["has"] and seen["name"] == "test_probe"
    assert seen["number"] == 2.5 and seen["text"] == "hi" and seen["missing"] == 7
    with pytest.raises(ValueError, match="constructor"):
        seen["props"]["number"]  # kept past the constructor
    own = kr.Properties("test_probe")
    own["width"] = 3
    assert "width" in own and own["width"] == 3
    with pytest.raises(KeyError):
        own["height"]


def test_an_unread_parameter_is_reported_as_for_cpp_plugins():
    with pytest.raises(ValueError, match="typo"):
        kr.load_dict({"type": "test_pydiffuse", "typo": 1.0})


def test_registering_again_replaces_and_kinds_do_not_mix():
    class Other(PyDiffuse):
        pass

    kr.register_bsdf("test_replaced", lambda props: PyDiffuse(props))
    kr.register_bsdf("test_replaced", lambda props: Other(props))
    assert type(kr.load_dict({"type": "test_replaced"})) is Other
    with pytest.raises(ValueError, match="integrator"):
        kr.register_bsdf("path", lambda props: PyDiffuse(props))
    with pytest.raises(TypeError, match="callable"):
        kr.register_bsdf("test_not_callable", 3)
    kr.register_bsdf("test_not_a_bsdf", lambda props: 42)
    with pytest.raises(TypeError, match="not a .*BSDF"):
        kr.load_dict({"type": "test_not_a_bsdf"})

    class Forgot(kr.BSDF):
        def __init__(self, props):  # without kr.BSDF.__init__(self, props)
            self.tint = 1

    kr.register_bsdf("test_forgot_init", lambda props: Forgot(props))
    with pytest.raises(TypeError, match=r"did not call .*BSDF.__init__\(self, props\)"):
        kr.load_dict({"type": "test_forgot_init"})


class Broken(PyDiffuse):
    pass


@pytest.mark.parametrize("method, result, message", [
    ("sample", lambda *a: 1.0, "must return a pair"),
    ("sample", lambda *a: (1.0, 2.0), "BSDFSample3f"),
    ("eval", lambda *a: "red", "Array3f"),
    ("pdf", lambda *a: "x", "Float"),
])
def test_wrong_results_raise_naming_the_method(method, result, message):
    cls = type("Broken_" + method, (PyDiffuse,), {method: result})
    kr.register_bsdf("test_broken", lambda props: cls(props))
    with pytest.raises(TypeError, match=message):
        kr.render(box({"type": "test_broken"}, spp=1))


def test_errors_inside_python_methods_and_missing_methods_reach_the_caller():
    def fails(self, ctx, si, wo, active):
        raise RuntimeError("my eval fails")

    cls = type("Failing", (PyDiffuse,), {"eval": fails})
    kr.register_bsdf("test_failing", lambda props: cls(props))
    with pytest.raises(RuntimeError, match="my eval fails"):
        kr.render(box({"type": "test_failing"}, spp=1))

    class NoPdf(kr.BSDF):
        def __init__(self, props):
            kr.BSDF.__init__(self, props)
            self.m_components = [F.DiffuseReflection]

        def sample(self, *args):
            return PyDiffuse.sample(self, *args)

        def eval(self, *args):
            return 0.0

    kr.register_bsdf("test_no_pdf", lambda props: NoPdf(props))
    with pytest.raises(TypeError, match="pdf.* is missing"):
        kr.render(box({"type": "test_no_pdf"}, spp=1))
    with pytest.raises(TypeError, match="only a BSDF written in Python"):
        kr.load_dict({"type": "diffuse"}).m_flags = 3


def test_traverse_callback_takes_arrays_held_by_the_plugin_only():
    class FloatAttribute(PyDiffuse):
        def traverse(self, cb):
            cb.put("roughness", 0.5, kr.ParamFlags.Differentiable)

    kr.register_bsdf("test_float_attribute", lambda props: FloatAttribute(props))
    with pytest.raises(TypeError, match="kl.Float"):
        kr.traverse(kr.load_dict({"type": "test_float_attribute"}))


def test_fresnel_reflect_refract_and_flags_as_mitsuba():
    r, cos_t, eta_it, eta_ti = kr.fresnel(kl.Float(1.0), kl.Float(1.5))
    np.testing.assert_allclose(float(r[0]), (0.5 / 2.5) ** 2, rtol=1e-5)
    assert float(cos_t[0]) == pytest.approx(-1.0) and float(eta_it[0]) == pytest.approx(1.5)
    wi = kl.Array3f(0.6, 0.0, 0.8)
    np.testing.assert_allclose(np.asarray(kr.reflect(wi)).ravel(), [-0.6, 0.0, 0.8], rtol=1e-6)
    _, cos_t, _, eta_ti = kr.fresnel(kl.Float(0.8), kl.Float(1.5))
    out = np.asarray(kr.refract(wi, cos_t, eta_ti)).ravel()
    assert out[2] < 0 and np.linalg.norm(out) == pytest.approx(1.0, rel=1e-5)
    assert out[0] == pytest.approx(-0.6 / 1.5, rel=1e-5)  # Snell: sin θt = sin θi / eta
    assert int(F.DeltaReflection) == 32 and int(F.BackSide) == 2048 and +F.Diffuse == 6
    assert int(kl.UInt32(+F.DeltaTransmission)[0]) == 64


def test_a_script_holding_a_python_plugin_in_a_scene_exits_cleanly():
    # A scene in a script's globals that holds a plugin of that script is a cycle through
    # C++; exiting must neither crash (a release after the interpreter) nor print leaks.
    script = textwrap.dedent("""
        import sys
        sys.path.insert(0, %r)
        import kiln.render as kr
        from test_python_plugins import box
        scene = box({"type": "test_pydiffuse"}, spp=1)
        image = kr.render(scene)
        params = kr.traverse(scene)
        print("rendered")
    """) % str(__import__("pathlib").Path(__file__).parent)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "rendered" in done.stdout and "leak" not in done.stderr and "Fatal" not in done.stderr


REBINDING_PLUGIN = '''
import numpy as np
import kiln as kl
import kiln.render as kr

class Rebinding(kr.BSDF):
    """Rebinds its attribute in parameters_changed (a fresh object each time)."""

    def __init__(self, props):
        kr.BSDF.__init__(self, props)
        self.reflectance = kl.Array3f(0.5)
        self.m_components = [kr.BSDFFlags.DiffuseReflection | kr.BSDFFlags.FrontSide]
        self.m_flags = self.m_components[0]

    def sample(self, ctx, si, sample1, sample2, active):
        bs = kr.BSDFSample3f()
        bs.wo = kr.warp.square_to_cosine_hemisphere(sample2)
        bs.pdf = kr.warp.square_to_cosine_hemisphere_pdf(bs.wo)
        bs.eta = kl.Float(1.0)
        bs.sampled_type = kl.UInt32(+kr.BSDFFlags.DiffuseReflection)
        bs.sampled_component = kl.UInt32(0)
        return bs, self.reflectance

    def eval(self, ctx, si, wo, active):
        return self.reflectance * (kr.Frame3f.cos_theta(wo) / kl.pi)

    def pdf(self, ctx, si, wo, active):
        return kr.warp.square_to_cosine_hemisphere_pdf(wo)

    def traverse(self, cb):
        cb.put("reflectance", self.reflectance, kr.ParamFlags.Differentiable)

    def parameters_changed(self, keys):
        self.reflectance = kl.Array3f(self.reflectance.x * 1.0, self.reflectance.y, self.reflectance.z)

kr.register_bsdf("rebinding", lambda props: Rebinding(props))
description = kr.cornell_box()
description["red"] = {"type": "rebinding"}
description["sensor"]["film"].update(width=16, height=16)
scene = kr.load_dict(description)
params = kr.traverse(scene)
for value in (0.2, 0.4, 0.6):
    params["red.reflectance"] = kl.Array3f(value)
    params.update()
    params.update()
    print(np.asarray(kr.render(scene, spp=2)).mean() > 0)
print("done")
'''


def test_a_plugin_that_rebinds_its_attributes_leaves_the_parameters_valid():
    # kr.traverse keeps the objects a Python plugin put (as Mitsuba's SceneParameters): after
    # the plugin rebinds its attribute, the parameters refer to the old, still alive object.
    # In a subprocess with Python's debug allocator, so that a read of freed memory shows.
    done = subprocess.run([sys.executable, "-c", REBINDING_PLUGIN], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONMALLOC="debug"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["True", "True", "True", "done"], done.stdout
