"""Dr.Jit's dr.resample (and the older dr.upsample): a tensor resampled to a new shape, one
separable pass per axis whose size changes. Each output sample is a normalized weighted
sum of input samples under a reconstruction filter centred on it, the filter stretched by
the reduction factor when shrinking (Pillow's scheme, which Dr.Jit follows). The weights
are tabulated once per axis on the host; the sums are traced Kiln code (a gather per tap),
so resampling fuses into kernels and differentiates (the gathers' adjoints scatter-add)."""

import math

import numpy as np

from ._kiln import UInt32, arange, gather, zeros
from .tensor import TENSOR_TYPES


def _cubic(x, a=-0.5):
    x = np.abs(x)
    return np.where(x < 1.0, ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0,
                    np.where(x < 2.0, (((x - 5.0) * x + 8.0) * x - 4.0) * a, 0.0))


def _sinc(x):
    return np.sinc(x)  # sin(π x) / (π x)


FILTERS = {  # name: (radius, filter of the offset in input samples)
    "box": (0.5, lambda x: ((x > -0.5) & (x <= 0.5)).astype(np.float64)),
    "linear": (1.0, lambda x: np.maximum(1.0 - np.abs(x), 0.0)),
    "hamming": (1.0, lambda x: np.where(np.abs(x) < 1.0, _sinc(x) * (0.54 + 0.46 * np.cos(np.pi * x)), 0.0)),
    "cubic": (2.0, _cubic),
    "lanczos": (3.0, lambda x: np.where(np.abs(x) < 3.0, _sinc(x) * _sinc(x / 3.0), 0.0)),
    # standard deviation 1/2, shifted down to reach 0 at 4 of them
    "gaussian": (2.0, lambda x: np.maximum(np.exp(-2.0 * x * x) - math.exp(-8.0), 0.0)),
}
BOUNDARIES = ("zero", "nearest", "wrap", "reflect", "mirror")


def _boundary_index(index, size, boundary):
    """The input index a tap outside [0, size) reads (scipy.ndimage's names); -1: none."""
    if boundary in ("zero", "constant"):
        return np.where((index >= 0) & (index < size), index, -1)
    if boundary == "nearest":
        return np.clip(index, 0, size - 1)
    if boundary == "wrap":
        return np.mod(index, size)
    if boundary == "reflect":  # d c b a | a b c d | d c b a
        period = np.mod(index, 2 * size)
        return np.where(period < size, period, 2 * size - 1 - period)
    period = np.mod(index, max(2 * size - 2, 1))  # mirror: d c b | a b c d | c b a
    return np.where(period < size, period, 2 * size - 2 - period) if size > 1 else np.zeros_like(index)


def filter_table(source, target, evaluate, radius, boundary):
    """(indices, weights), each (target, taps): the input samples each of `target` output
    samples sums (of `source` input samples) and their normalized weights, for the filter
    `evaluate` (a NumPy function of offsets in input samples) of support `radius`. With the
    boundary "constant" (Mitsuba's Zero and One), taps outside keep their weight and have
    index -1: the caller gives the value they read."""
    scale = source / target
    stretch = max(scale, 1.0)
    reach = radius * stretch
    taps = int(math.ceil(2.0 * reach)) + 1
    centers = (np.arange(target) + 0.5) * scale
    first = np.floor(centers - reach + 0.5).astype(np.int64)
    index = first[:, None] + np.arange(taps)[None, :]
    weights = evaluate((index + 0.5 - centers[:, None]) / stretch)
    index = _boundary_index(index, source, boundary)
    if boundary != "constant":  # taps outside read nothing: their weight goes to the others
        weights = np.where(index >= 0, weights, 0.0)
    total = weights.sum(axis=1, keepdims=True)
    weights = np.where(total != 0.0, weights / np.where(total != 0.0, total, 1.0), 0.0)
    return (index if boundary == "constant" else np.maximum(index, 0)), weights


def _resample_axis(values, shape, axis, target, evaluate, radius, boundary):
    """The flat array `values` of `shape` resampled to `target` samples along `axis`."""
    source = shape[axis]
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    index, weights = filter_table(source, target, evaluate, radius, boundary)
    index, weights = index.astype(np.uint32), weights.astype(np.float32)
    count = outer * target * inner
    lane = arange(UInt32, count)
    position = (lane // inner) % target
    base = (lane // (inner * target)) * (source * inner) + lane % inner
    result = zeros(type(values), count)
    for tap in range(index.shape[1]):
        column = gather(UInt32(np.ascontiguousarray(index[:, tap])), position)
        weight = gather(type(values)(np.ascontiguousarray(weights[:, tap])), position)
        result = result + weight * gather(values, base + column * inner)
    return result


def resample(source, shape, filter="cubic", filter_radius=None, boundary="zero", mode=None):
    """`source` (a Kiln tensor, or a 1D array) resampled to `shape` (same number of axes),
    Dr.Jit's dr.resample: `filter` is "box", "linear", "hamming", "cubic" (the default),
    "lanczos", "gaussian" or a callable of the offset in input samples (then give its
    `filter_radius`); `boundary` ("zero": taps outside are dropped and the weights
    renormalized; "nearest", "wrap", "reflect", "mirror" as in scipy.ndimage) says what
    taps past the edges read. `mode` is accepted for Dr.Jit's signature."""
    is_tensor = type(source) in TENSOR_TYPES
    source_shape = tuple(source.shape) if is_tensor else (len(source),)
    shape = tuple(int(n) for n in shape)
    if len(shape) != len(source_shape):
        raise ValueError(f"kiln: resample(): the source has {len(source_shape)} axes, the shape {shape} has "
                         f"{len(shape)}")
    if any(n < 1 for n in shape):
        raise ValueError(f"kiln: resample(): every size of the shape must be at least 1, got {shape}")
    if boundary not in BOUNDARIES:
        raise ValueError(f"kiln: resample(): boundary must be one of {', '.join(BOUNDARIES)}, got {boundary!r}")
    if callable(filter):
        if filter_radius is None or filter_radius <= 0:
            raise ValueError("kiln: resample(): a callable filter needs its filter_radius (> 0)")

        def evaluate(x):
            return np.vectorize(lambda v: float(filter(float(v))), otypes=[np.float64])(x)

        radius = float(filter_radius)
    elif filter in FILTERS:
        radius, evaluate = FILTERS[filter]
        if filter_radius is not None:
            radius = float(filter_radius)
    else:
        raise ValueError(f"kiln: resample(): filter must be one of {', '.join(FILTERS)} or a callable, "
                         f"got {filter!r}")
    values = source.array if is_tensor else source
    current = list(source_shape)
    for axis in reversed(range(len(shape))):
        if current[axis] != shape[axis]:
            values = _resample_axis(values, current, axis, shape[axis], evaluate, radius, boundary)
            current[axis] = shape[axis]
    return type(source)(values, shape) if is_tensor else values


def upsample(source, shape=None, scale_factor=None):
    """Dr.Jit's older dr.upsample of a tensor: nearest-neighbour upsampling by whole factors
    (`shape`, multiples of the source's leading sizes, or integer `scale_factor`s)."""
    if type(source) not in TENSOR_TYPES:
        raise TypeError("kiln: upsample(): the source must be a Kiln tensor (for a texture, upsample "
                        "texture.tensor() and set_tensor() the result)")
    if (shape is None) == (scale_factor is None):
        raise TypeError("kiln: upsample(): give either shape or scale_factor")
    sizes = list(source.shape)
    if shape is not None:
        target = list(shape) + sizes[len(shape):]
    else:
        factors = list(scale_factor) + [1] * (len(sizes) - len(scale_factor))
        if any(not isinstance(f, int) or f < 1 for f in factors):
            raise TypeError("kiln: upsample(): scale_factor must hold positive integers")
        target = [f * n for f, n in zip(factors, sizes)]
    if len(target) != len(sizes) or any(t % n for t, n in zip(target, sizes)):
        raise TypeError(f"kiln: upsample(): the target shape {tuple(target)} must be whole multiples of the "
                        f"source's {tuple(sizes)}")
    return resample(source, target, filter="box")
