"""Mitsuba's names for the array types of an RGB variant (`mi.Float`, `mi.Color3f`,
`mi.Point3f`, `mi.TensorXf`, ...), each the Kiln type that holds the same values. Kiln's
arrays also serve where Mitsuba has scalar types (`mi.ScalarPoint3f`): a width-1 array."""

import kiln as _kl

Float, Float32, Float64 = _kl.Float, _kl.Float, _kl.Float64
Int, Int32, Int64 = _kl.Int32, _kl.Int32, _kl.Int64
UInt, UInt32, UInt64 = _kl.UInt32, _kl.UInt32, _kl.UInt64
Bool = _kl.Bool
Mask = _kl.Bool

Point2f = Vector2f = _kl.Array2f
Point3f = Vector3f = Normal3f = Color3f = Spectrum = UnpolarizedSpectrum = _kl.Array3f
Point2i = Vector2i = _kl.Array2i
Point3i = Vector3i = _kl.Array3i
Point2u = Vector2u = _kl.Array2u
Point3u = Vector3u = _kl.Array3u
Vector4f = Point4f = _kl.Array4f
Matrix2f, Matrix3f, Matrix4f = _kl.Matrix2f, _kl.Matrix3f, _kl.Matrix4f
Quaternion4f = _kl.Quaternion4f
TensorXf, TensorXd, TensorXi, TensorXu, TensorXb = _kl.TensorXf, _kl.TensorXd, _kl.TensorXi, _kl.TensorXu, _kl.TensorXb
Texture1f, Texture2f, Texture3f = _kl.Texture1f, _kl.Texture2f, _kl.Texture3f
PCG32 = _kl.PCG32

ScalarFloat = float
ScalarInt32 = ScalarUInt32 = int
ScalarBool = bool
ScalarPoint2f = ScalarVector2f = _kl.Array2f
ScalarPoint3f = ScalarVector3f = ScalarNormal3f = ScalarColor3f = _kl.Array3f
ScalarPoint2i = ScalarVector2i = _kl.Array2i
ScalarPoint2u = ScalarVector2u = _kl.Array2u
ScalarPoint3u = ScalarVector3u = _kl.Array3u
ScalarMatrix4f = _kl.Matrix4f
ScalarTensorXf = _kl.TensorXf

LogLevel = _kl.LogLevel
set_log_level = _kl.set_log_level

from kiln._kiln_render import Transform4f  # noqa: E402

ScalarTransform4f = Transform4f
