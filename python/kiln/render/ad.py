"""Mitsuba's `mi.ad` namespace: the optimizers of scene parameters (kr.Adam, kr.SGD), the large
steps parameterization of vertex positions (LargeSteps), the
contract of differentiable integrators written in Python (`mi.ad.common`, also reachable as
`mi.ad.integrators.common` and `mi.python.ad.integrators.common`) and the ray batch loader
(`mi.ad.loaders.RayDataLoader`)."""

from types import SimpleNamespace

from kiln._kiln_render import Adam, LargeSteps, SGD  # noqa: F401
from kiln.render import ad_integrators as common
from kiln.render.ad_integrators import ADIntegrator, RBIntegrator  # noqa: F401
from kiln.render.ray_loader import RayDataLoader  # noqa: F401

integrators = SimpleNamespace(common=common)
loaders = SimpleNamespace(RayDataLoader=RayDataLoader)
