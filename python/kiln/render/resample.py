"""Separable image resampling (Mitsuba's Bitmap.resample), on the host in float64: each output
pixel is a weighted sum of the input pixels under a reconstruction filter centred on it, the
filter stretched by the reduction factor when shrinking, weights normalised per pixel
(kiln.resample's tables); lookups outside the image follow a boundary condition per axis
(Mitsuba's FilterBoundaryCondition)."""

import enum
import math

import numpy as np

import kiln as _kl
from kiln.resample import filter_table

_LANCZOS_LOBES = 2  # Mitsuba's default filter for resampling


class FilterBoundaryCondition(enum.IntEnum):
    """What a lookup outside an image reads (Mitsuba's values): the border pixel, the image
    repeated, mirrored (the border not repeated), zero or one."""

    Clamp = 0
    Repeat = 1
    Mirror = 2
    Zero = 3
    One = 4


# Each condition as kiln.resample's boundary and the value a constant one reads.
_TABLE_BOUNDARY = {FilterBoundaryCondition.Clamp: ("nearest", None), FilterBoundaryCondition.Repeat: ("wrap", None),
                   FilterBoundaryCondition.Mirror: ("mirror", None), FilterBoundaryCondition.Zero: ("constant", 0.0),
                   FilterBoundaryCondition.One: ("constant", 1.0)}


def boundary_conditions(bc):
    """`bc` (None, one FilterBoundaryCondition or a pair for x and y) as a pair; TypeError
    naming what was given otherwise."""
    pair = (FilterBoundaryCondition.Clamp,) * 2 if bc is None else bc
    if isinstance(pair, FilterBoundaryCondition):
        pair = (pair, pair)
    if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and
            all(isinstance(c, FilterBoundaryCondition) for c in pair)):
        raise TypeError(f"kiln.render: Bitmap.resample(): bc must be a mi.FilterBoundaryCondition or a pair of them "
                        f"(x, y), got {bc!r}")
    return tuple(pair)


def _lanczos(x):
    """The 2-lobe Lanczos windowed sinc."""
    x = np.abs(x) * math.pi
    with np.errstate(invalid="ignore", divide="ignore"):
        value = _LANCZOS_LOBES * np.sin(x) * np.sin(x / _LANCZOS_LOBES) / (x * x)
    return np.where(x < 1e-4, 1.0, np.where(x >= _LANCZOS_LOBES * math.pi, 0.0, value))


def _filter_values(rfilter):
    """The filter as (function of NumPy offsets, radius): Lanczos when None, else a
    kr.ReconstructionFilter evaluated by Kiln."""
    if rfilter is None:
        return _lanczos, float(_LANCZOS_LOBES)
    if not hasattr(rfilter, "eval") or not hasattr(rfilter, "radius"):
        raise TypeError(f"kiln.render: resample(): rfilter must be a reconstruction filter "
                        f"(kr.load_dict({{'type': 'box'}}) ...), got {type(rfilter).__name__}")

    def evaluate(offsets):
        values = rfilter.eval(_kl.Float(np.ascontiguousarray(offsets.ravel(), dtype=np.float32)))
        return np.asarray(values, dtype=np.float64).reshape(offsets.shape)

    return evaluate, float(rfilter.radius())


def resample(values, width, height, rfilter=None, bc=None, clamp=(-math.inf, math.inf)):
    """`values` (height, width, channels) resampled to `height` x `width`, as float64, with
    the boundary conditions `bc` (see boundary_conditions())."""
    evaluate, radius = _filter_values(rfilter)
    conditions = boundary_conditions(bc)
    result = values.astype(np.float64)
    for axis, size, condition in ((1, width, conditions[0]), (0, height, conditions[1])):
        boundary, outside = _TABLE_BOUNDARY[condition]
        indices, weights = filter_table(result.shape[axis], size, evaluate, radius, boundary)
        taken = np.take(result, np.maximum(indices, 0), axis=axis)  # the axis becomes (size, taps)
        shape = [1] * taken.ndim
        shape[axis], shape[axis + 1] = size, weights.shape[1]
        if outside is not None:
            taken = np.where(indices.reshape(shape) >= 0, taken, outside)
        result = (taken * weights.reshape(shape)).sum(axis=axis + 1)
    return np.clip(result, clamp[0], clamp[1])
