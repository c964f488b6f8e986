"""Mitsuba's `mi.ad` namespace: the optimizers of scene parameters (kr.Adam, kr.SGD)."""

from kiln._kiln_render import Adam, SGD  # noqa: F401
