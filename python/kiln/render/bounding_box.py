"""Mitsuba's axis-aligned bounding boxes (mi.BoundingBox3f, mi.ScalarBoundingBox3f): a box
from `min` to `max` (empty when min > max), with the queries scripts and integrators written
in Python use -- above all ray_intersect(), the slab test, traced as Kiln code."""

import math

import kiln as _kl

from .array_types import Point3f, Vector3f


class BoundingBox3f:
    """BoundingBox3f() is empty; BoundingBox3f(p) holds the point p; BoundingBox3f(min, max)
    spans min to max (points or three numbers each)."""

    def __init__(self, min=None, max=None):
        if min is None and max is None:
            min, max = [math.inf] * 3, [-math.inf] * 3
        elif max is None:
            max = min
        elif min is None:
            raise TypeError("kiln.render: BoundingBox3f(): give min with max")
        self.min, self.max = Point3f(min), Point3f(max)

    def valid(self):
        """Whether min <= max along every axis."""
        return all(float(low[0]) <= float(high[0]) for low, high in zip(self.min, self.max))

    def center(self):
        return Point3f((self.min + self.max) * 0.5)

    def extents(self):
        return Vector3f(self.max - self.min)

    def contains(self, p, strict=False):
        """Whether the point(s) p lie inside (on the boundary too unless strict)."""
        p = Point3f(p)
        if strict:
            inside = (p.x > self.min.x) & (p.y > self.min.y) & (p.z > self.min.z)
            return inside & (p.x < self.max.x) & (p.y < self.max.y) & (p.z < self.max.z)
        inside = (p.x >= self.min.x) & (p.y >= self.min.y) & (p.z >= self.min.z)
        return inside & (p.x <= self.max.x) & (p.y <= self.max.y) & (p.z <= self.max.z)

    def expand(self, other):
        """Grows the box to hold a point or another box."""
        low, high = (other.min, other.max) if isinstance(other, BoundingBox3f) else (Point3f(other),) * 2
        self.min = Point3f(_kl.minimum(self.min, low))
        self.max = Point3f(_kl.maximum(self.max, high))

    def ray_intersect(self, ray):
        """(hit, mint, maxt) per ray, as Mitsuba's: the ray parameters where the ray's line
        enters and leaves the box (mint < 0 when the origin is inside, both < 0 when the box
        lies behind it; ray.maxt is not considered) and whether the line meets the box. A
        direction parallel to a slab meets it only when the origin lies strictly between its
        planes."""
        o, d = ray.o, ray.d
        hit = _kl.Bool(True)
        mint, maxt = _kl.Float(-math.inf), _kl.Float(math.inf)
        for axis in range(3):
            origin, direction = o[axis], d[axis]
            low, high = self.min[axis], self.max[axis]
            inverse = 1.0 / direction  # ±inf for a parallel direction
            near, far = (low - origin) * inverse, (high - origin) * inverse
            mint = _kl.maximum(mint, _kl.minimum(near, far))
            maxt = _kl.minimum(maxt, _kl.maximum(near, far))
            hit = hit & ((direction != 0.0) | ((origin > low) & (origin < high)))
        return hit & (maxt >= mint), mint, maxt

    def __repr__(self):
        return f"BoundingBox3f[min={self.min}, max={self.max}]"


ScalarBoundingBox3f = BoundingBox3f
