"""Real spherical harmonics (Dr.Jit's dr.sh_eval): the basis functions up to a degree,
evaluated at unit directions as traced Kiln code (so they fuse into kernels and
differentiate), in Dr.Jit's convention: index l(l+1) + m; for m > 0, √2 Re Y_l^m, for m < 0,
√2 Im Y_l^|m|, for m = 0, Y_l^0, with the Condon-Shortley phase.

The associated Legendre functions are evaluated divided by sin^m θ (polynomials in z, by
the standard three-term recurrences), and sin^m θ (cos mφ, sin mφ) as the real and
imaginary parts of (x + i y)^m, so no trigonometric function is evaluated."""

import math

from ._kiln import Array3f, Float

MAX_DEGREE = 9


def _normalization(l, m):
    """N_l^m = sqrt((2l + 1) / 4π · (l - m)! / (l + m)!)."""
    return math.sqrt((2 * l + 1) / (4 * math.pi) * math.factorial(l - m) / math.factorial(l + m))


def sh_eval(d, order):
    """The (order + 1)² real spherical harmonics at the unit direction(s) `d` (a kl.Array3f
    or three components), as a list of kl.Float; `order` is at most 9, as in Dr.Jit."""
    if not isinstance(order, int) or not 0 <= order <= MAX_DEGREE:
        raise ValueError(f"kiln: sh_eval(): order must be an integer between 0 and {MAX_DEGREE}, got {order!r}")
    d = d if isinstance(d, Array3f) else Array3f(d)
    x, y, z = d.x, d.y, d.z
    out = [None] * (order + 1) ** 2
    cos_m, sin_m = Float(1.0) + 0.0 * x, 0.0 * x  # (x + i y)^m, from m = 0
    diagonal = 1.0  # Q_m^m = (-1)^m (2m - 1)!!
    for m in range(order + 1):
        if m > 0:
            cos_m, sin_m = x * cos_m - y * sin_m, x * sin_m + y * cos_m
            diagonal *= -(2 * m - 1)
        # Q_l^m for l = m, m + 1, ... (P_l^m / sin^m θ)
        before, current = None, Float(diagonal) + 0.0 * z
        for l in range(m, order + 1):
            if l == m + 1:
                before, current = current, z * (2 * m + 1) * current
            elif l > m + 1:
                before, current = current, (z * (2 * l - 1) * current - (l + m - 1) * before) / (l - m)
            scale = _normalization(l, m)
            if m == 0:
                out[l * (l + 1)] = scale * current
            else:
                out[l * (l + 1) + m] = (math.sqrt(2.0) * scale) * current * cos_m
                out[l * (l + 1) - m] = (math.sqrt(2.0) * scale) * current * sin_m
    return out
