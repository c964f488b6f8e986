"""Mitsuba's Transform3f: a 2D homogeneous transform (a kl.Matrix3f and its inverse), chained
as Transform4f is (`Transform3f().translate([0.5, 0]).scale(2)`), applied to Point2f
(translated, divided by w) and Vector2f (linear part only)."""

import math

import numpy as np

import kiln as _kl
from kiln.render.array_types import Point2f, Vector2f

_IDENTITY = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))


def _two(value, what):
    """A 2D vector's components as Kiln values: a number gives both, else two components."""
    if isinstance(value, (int, float)):
        return value, value
    components = [value[i] for i in range(len(value))] if hasattr(value, "__len__") else None
    if components is None or len(components) != 2:
        raise TypeError(f"kiln.render: Transform3f.{what}(): expected two components or a number, got {value!r}")
    return components


class Transform3f:
    """A 2D transform: `Transform3f()` is the identity; `Transform3f(m)` takes a kl.Matrix3f,
    a 3 x 3 nested list or NumPy array, a number (that times the identity) or three numbers
    (row i filled with the i-th, as Dr.Jit broadcasts them)."""

    def __init__(self, matrix=None, inverse=None):
        if matrix is None:
            matrix = _kl.Matrix3f(_IDENTITY)
        elif isinstance(matrix, (int, float)):
            matrix = _kl.Matrix3f(float(matrix))
        elif not isinstance(matrix, _kl.Matrix3f):
            rows = np.asarray(matrix, dtype=np.float64)
            if rows.shape == (3,):
                rows = np.repeat(rows[:, None], 3, axis=1)
            if rows.shape != (3, 3):
                raise ValueError(f"kiln.render: Transform3f(): expected a 3 x 3 matrix, got shape {rows.shape}")
            matrix = _kl.Matrix3f(rows.tolist())
        self.matrix = matrix
        self.inverse_matrix = inverse if inverse is not None else _kl.inverse(matrix)

    def _then(self, matrix, inverse):
        """This · (matrix, inverse)."""
        return Transform3f(self.matrix * matrix, inverse * self.inverse_matrix)

    def translate(self, v):
        x, y = _two(v, "translate")
        return self._then(_kl.Matrix3f(1, 0, x, 0, 1, y, 0, 0, 1), _kl.Matrix3f(1, 0, -x, 0, 1, -y, 0, 0, 1))

    def scale(self, v):
        x, y = _two(v, "scale")
        return self._then(_kl.Matrix3f(x, 0, 0, 0, y, 0, 0, 0, 1), _kl.Matrix3f(1.0 / x, 0, 0, 0, 1.0 / y, 0, 0, 0, 1))

    def rotate(self, angle):
        """Counter-clockwise by `angle` degrees."""
        c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        return self._then(_kl.Matrix3f(c, -s, 0, s, c, 0, 0, 0, 1), _kl.Matrix3f(c, s, 0, -s, c, 0, 0, 0, 1))

    def inverse(self):
        return Transform3f(self.inverse_matrix, self.matrix)

    def __matmul__(self, other):
        if isinstance(other, Transform3f):
            return Transform3f(self.matrix * other.matrix, other.inverse_matrix * self.inverse_matrix)
        if isinstance(other, (list, tuple)):
            other = Point2f(*other)
        if isinstance(other, Vector2f):
            m = self.matrix
            return Vector2f(m[0, 0] * other.x + m[0, 1] * other.y, m[1, 0] * other.x + m[1, 1] * other.y)
        if isinstance(other, Point2f):
            h = self.matrix @ _kl.Array3f(other.x, other.y, 1.0)
            return Point2f(h.x / h.z, h.y / h.z)
        if isinstance(other, _kl.Array2f):
            raise TypeError("Transform3f @ kl.Array2f: say what it is, mi.Point2f(x) or mi.Vector2f(x)")
        return NotImplemented

    def __repr__(self):
        return "Transform3f(" + repr(self.matrix)[len("Matrix3f("):]
