"""Mitsuba's names for the array types of an RGB variant (`mi.Float`, `mi.Color3f`,
`mi.Point3f`, `mi.TensorXf`, ...), each the Kiln type that holds the same values. Kiln's
arrays also serve where Mitsuba has scalar types (`mi.ScalarPoint3f`): a width-1 array.

Points, vectors and normals are kl.Array3f that know their kind, because a transform applies
to each differently (`T @ mi.Point3f(...)` translates, `T @ mi.Vector3f(...)` does not);
arithmetic keeps the kind as Dr.Jit's does: the right operand's if it has one, else the
left's."""

import kiln as _kl

Float, Float32, Float64 = _kl.Float, _kl.Float, _kl.Float64
Int, Int32, Int64 = _kl.Int32, _kl.Int32, _kl.Int64
UInt, UInt32, UInt64 = _kl.UInt32, _kl.UInt32, _kl.UInt64
Bool = _kl.Bool
Mask = _kl.Bool



def _kinds_of(base):
    """The base class of geometric kinds of `base` (kl.Array2f or kl.Array3f)."""

    def keeping_kind(operator):
        native = getattr(base, operator)

        def apply(self, other):
            result = native(self, other)
            if result is NotImplemented:
                return result
            return (type(other) if isinstance(other, kind) else type(self))(result)

        return apply

    kind = type(f"_Kind{base.__name__[-2:]}", (base,), {"__doc__": f"A {base.__name__} with a geometric kind."})
    for operator in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
                     "__rtruediv__"):
        setattr(kind, operator, keeping_kind(operator))
    kind.__neg__ = lambda self: type(self)(base.__neg__(self))
    return kind


_Kind2f, _Kind3f = _kinds_of(_kl.Array2f), _kinds_of(_kl.Array3f)


class Point3f(_Kind3f):
    """A position: transforms translate it."""


class Vector3f(_Kind3f):
    """A direction or offset: transforms do not translate it."""


class Normal3f(_Kind3f):
    """A surface normal: transforms apply their inverse transpose."""


class Point2f(_Kind2f):
    """A 2D position (texture coordinates): 2D transforms translate it."""


class Vector2f(_Kind2f):
    """A 2D offset: 2D transforms do not translate it."""


Color3f = Spectrum = UnpolarizedSpectrum = _kl.Array3f
Point2i = Vector2i = _kl.Array2i
Point3i = Vector3i = _kl.Array3i
Point2u = Vector2u = _kl.Array2u
Point3u = Vector3u = _kl.Array3u
Vector4f = Point4f = _kl.Array4f
Matrix2f, Matrix3f, Matrix4f = _kl.Matrix2f, _kl.Matrix3f, _kl.Matrix4f
Quaternion4f = _kl.Quaternion4f
TensorXf, TensorXd, TensorXi, TensorXu, TensorXb = _kl.TensorXf, _kl.TensorXd, _kl.TensorXi, _kl.TensorXu, _kl.TensorXb
PCG32 = _kl.PCG32

ScalarFloat = float
ScalarInt32 = ScalarUInt32 = int
ScalarBool = bool
ScalarPoint2f, ScalarVector2f = Point2f, Vector2f
ScalarPoint3f, ScalarVector3f, ScalarNormal3f, ScalarColor3f = Point3f, Vector3f, Normal3f, Color3f
ScalarPoint2i = ScalarVector2i = _kl.Array2i
ScalarPoint2u = ScalarVector2u = _kl.Array2u
ScalarPoint3u = ScalarVector3u = _kl.Array3u
ScalarMatrix4f = _kl.Matrix4f
ScalarTensorXf = _kl.TensorXf

LogLevel = _kl.LogLevel
set_log_level = _kl.set_log_level

from kiln._kiln_render import Transform4f  # noqa: E402

_compose = Transform4f.__matmul__


def _transform(self, other):
    """T @ other: composition with a transform, else other transformed as its kind (a list
    or tuple of three numbers is a point, as in Mitsuba)."""
    if isinstance(other, Transform4f):
        return _compose(self, other)
    if isinstance(other, (list, tuple)):
        other = Point3f(other)
    for kind, apply in ((Point3f, Transform4f.apply_point), (Vector3f, Transform4f.apply_vector),
                        (Normal3f, Transform4f.apply_normal)):
        if isinstance(other, kind):
            return kind(apply(self, other))
    if isinstance(other, _kl.Array3f):
        raise TypeError("Transform4f @ kl.Array3f: say what it is, mi.Point3f(x), mi.Vector3f(x) or "
                        "mi.Normal3f(x) (each transforms differently; Kiln's functions return plain vectors)")
    return NotImplemented


Transform4f.__matmul__ = _transform
ScalarTransform4f = ProjectiveTransform4f = ScalarProjectiveTransform4f = Transform4f
