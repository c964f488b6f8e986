"""Mitsuba's `mitsuba.scalar_rgb` module in Kiln: kiln.render's names, with the scalar types
under the names that variant gives them (`from kiln.render.scalar_rgb import Transform4f`
is kr.ScalarTransform4f, as `from mitsuba.scalar_rgb import Transform4f` is Mitsuba's)."""

from kiln.render import *  # noqa: F401,F403
import kiln.render as _kr

globals().update({name[len("Scalar"):]: getattr(_kr, name) for name in dir(_kr) if name.startswith("Scalar")})
