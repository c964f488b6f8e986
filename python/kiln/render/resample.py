"""Separable image resampling (Mitsuba's Bitmap.resample), on the host in float64: each output
pixel is a weighted sum of the input pixels under a reconstruction filter centred on it, the
filter stretched by the reduction factor when shrinking, weights normalised per pixel
(kiln.resample's tables), lookups outside the image clamped to its border."""

import math

import numpy as np

import kiln as _kl
from kiln.resample import filter_table

_LANCZOS_LOBES = 2  # Mitsuba's default filter for resampling


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


def resample(values, width, height, rfilter=None, clamp=(-math.inf, math.inf)):
    """`values` (height, width, channels) resampled to `height` x `width`, as float64."""
    evaluate, radius = _filter_values(rfilter)
    result = values.astype(np.float64)
    for axis, size in ((1, width), (0, height)):
        indices, weights = filter_table(result.shape[axis], size, evaluate, radius, "nearest")
        taken = np.take(result, indices, axis=axis)  # the axis becomes (size, taps)
        shape = [1] * taken.ndim
        shape[axis], shape[axis + 1] = size, weights.shape[1]
        result = (taken * weights.reshape(shape)).sum(axis=axis + 1)
    return np.clip(result, clamp[0], clamp[1])
