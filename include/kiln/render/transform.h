// Affine transforms of kiln.render's scenes (Mitsuba 3's AffineTransform4f): a 4 x 4 matrix
// per lane together with its inverse, so points, vectors and normals map both ways without
// inverting per use. Every entry is a Kiln array, so a transform can carry gradients.
//
// What an implementation guarantees:
// - Chaining multiplies on the right, as Mitsuba's Python API does:
//   Transform4f().translate(t).rotate(a, 30) is Translate(t) · Rotate(a, 30), which rotates
//   first. (Mitsuba's XML applies its elements in order, i.e. multiplies on the left; the
//   scene loader composes them that way.)
// - rotate() takes degrees and uses the axis as given (Mitsuba does not normalize it); its
//   inverse is the transpose, exact for a unit axis.
// - look_at() maps +z to the viewing direction, +y to the up vector made orthogonal, and
//   x to their left-handed complement (cross(up, direction)), the camera frame Mitsuba uses.
#pragma once

#include <kiln/matrix.h>

#include <array>

namespace kiln::render {

class Transform4f {
 public:
  /// The identity (one lane).
  Transform4f();
  /// A transform with the given matrix; its inverse is computed (adjugate / determinant).
  explicit Transform4f(const Matrix4f& matrix);
  /// A transform whose inverse is already known.
  Transform4f(const Matrix4f& matrix, const Matrix4f& inverse);

  const Matrix4f& matrix() const { return matrix_; }
  const Matrix4f& inverse_matrix() const { return inverse_; }
  /// The inverse transform (matrix and inverse swapped: no computation).
  Transform4f inverse() const { return Transform4f(inverse_, matrix_); }

  /// This transform composed with `other` applied first: matrix() · other.matrix().
  Transform4f operator*(const Transform4f& other) const;

  /// This · Translate(offset).
  Transform4f translate(const Array3f& offset) const;
  /// This · Scale(factors) (a zero factor gives non-finite inverse entries).
  Transform4f scale(const Array3f& factors) const;
  /// This · Rotate(axis, angle in degrees), counterclockwise about `axis` (right-handed).
  Transform4f rotate(const Array3f& axis, const Float& angle_degrees) const;
  /// This · LookAt(origin, target, up): a camera at `origin` looking at `target`.
  Transform4f look_at(const Array3f& origin, const Array3f& target, const Array3f& up) const;

  /// The point p mapped (with the homogeneous divide).
  Array3f apply_point(const Array3f& p) const;
  /// The direction v mapped (linear part only).
  Array3f apply_vector(const Array3f& v) const;
  /// The normal n mapped by the inverse transpose, which keeps it perpendicular to mapped
  /// tangents; not normalized.
  Array3f apply_normal(const Array3f& n) const;

  /// The transform with row-major matrix `rows` (as a scene file gives it), its inverse
  /// computed once and every entry made opaque: kernels read the entries as parameters,
  /// so a new value compiles nothing.
  static Transform4f from_rows(const std::array<double, 16>& rows);
  /// Makes every entry of matrix and inverse opaque (evaluating pending work).
  void make_opaque();
  /// The matrix of lane 0 as host values, row-major (what from_rows() takes).
  std::array<double, 16> to_rows() const;

 private:
  Matrix4f matrix_, inverse_;
};

/// The identity as rows for from_rows() (a `to_world` or `to_uv` that was not given).
inline constexpr std::array<double, 16> kIdentityRows = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

}  // namespace kiln::render
