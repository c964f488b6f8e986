"""kiln.render: a physically based renderer on Kiln that reads Mitsuba 3 scenes.

    import kiln.render as kr
    scene = kr.load_file("scene.xml")          # or kr.load_dict({...}) in Mitsuba's format
    image = kr.render(scene, spp=64)           # kl.TensorXf (height, width, channels)
    kr.write_image(image, "out.exr")
    params = kr.traverse(scene)                # Mitsuba's keys: 'sensor.film.size', ...
    params['sensor.film.size'] = (128, 96); params.update()

The classes and functions are C++ (kiln._kiln_render); this module imports them and adds
PathRecorder's Python face (kl.Recorder views of its records).
"""

try:
    from kiln._kiln_render import *  # noqa: F401,F403
    from kiln._kiln_render import _PathRecorder
except ImportError as error:
    raise ImportError(
        "kiln.render is not available: Kiln was built without it (the renderer needs OpenEXR, "
        "libpng, Embree 3, pugixml and tinyobjloader at build time; scripts/bootstrap.sh installs them). "
        f"Import error: {error}"
    ) from error


from kiln.render.mitsuba_variants import variants, variant, set_variant  # noqa: E402,F401
from kiln.render.array_types import *  # noqa: E402,F401,F403
from kiln.render.bitmap import Bitmap, Struct  # noqa: E402,F401
from kiln.render.resample import FilterBoundaryCondition  # noqa: E402,F401
from kiln.render.cornell_box import cornell_box  # noqa: E402,F401
from kiln.render.transform3f import Transform3f, Transform3f as ScalarTransform3f  # noqa: E402,F401
from kiln.render.textures import Texture1f, Texture2f, Texture3f  # noqa: E402,F401
from kiln.render.bounding_box import BoundingBox3f, ScalarBoundingBox3f  # noqa: E402,F401
from kiln.render.logger import Log, Logger, logger  # noqa: E402,F401
from kiln.render import ad, util  # noqa: E402,F401
from kiln.render import ad_integrators as _ad_integrators  # noqa: E402
from kiln._kiln_render import render as _render  # noqa: E402
from types import SimpleNamespace as _SimpleNamespace  # noqa: E402

python = _SimpleNamespace(ad=ad)  # Mitsuba's module path mi.python.ad.integrators.common
from kiln import Array3f as _Array3f, UInt32 as _UInt32  # noqa: E402
from kiln.record import Recorder as _Recorder  # noqa: E402

_PATH_RECORD_TYPES = {"pixel": _UInt32, "sample": _UInt32, "depth": _UInt32}


class PathRecorder(_PathRecorder):
    """Per-ray, per-vertex records of kr.render(..., recorder=rec) and of its backward pass
    (story 2), up to `capacity` vertices per pass. `rec.render` and `rec.backward` are
    kl.Recorder views: `rec.render.numpy()` gives every field as a NumPy view of the
    records' memory (no copy), `rec.render['p']` a Kiln value. The fields: pixel (in the crop
    window, row-major), sample, depth, p, n (shading normal), wi, wo (world directions
    towards the previous vertex and onwards), throughput, radiance (leaving towards wi) and
    adjoint (dL x throughput); radiance and adjoint are zero in the render pass. `path` and
    `prb` record while rendering, `prb`'s replay during backward."""

    FIELDS = {name: _PATH_RECORD_TYPES.get(name, _Array3f) for name in _PathRecorder.field_names}

    @property
    def render(self):
        """The records appended while rendering."""
        return _Recorder._over(self._render_core, self.FIELDS)

    @property
    def backward(self):
        """The records appended by prb's replay during reverse mode."""
        return _Recorder._over(self._backward_core, self.FIELDS)


def render(scene, params=None, sensor=0, integrator=None, seed=0, seed_grad=None, spp=None, spp_grad=None,
           recorder=None):
    chosen = integrator if integrator is not None or not isinstance(scene, Scene) else scene.integrator()
    if isinstance(chosen, _ad_integrators.ADIntegrator):
        if recorder is not None:
            raise TypeError("kiln.render: render(): `recorder` records the C++ integrators' paths; "
                            f"{type(chosen).__name__} is written in Python")
        return _ad_integrators.render(chosen, scene, params, sensor, seed, seed_grad, spp or 0, spp_grad or 0)
    return _render(scene, params, sensor, integrator, seed, seed_grad, spp, spp_grad, recorder)


render.__doc__ = _render.__doc__ + (" An integrator written in Python on kr.ad.ADIntegrator renders through its "
                                    "own render() and differentiates the values of `params` that carry derivatives.")
