// Affine transforms: the elementary matrices with their exact inverses, and composition.
#include <kiln/math.h>
#include <kiln/render/common.h>
#include <kiln/render/transform.h>
#include <kiln/vector_math.h>

namespace kiln::render {
namespace {

/// The 4 x 4 matrix with linear part `rows` (row-major 3 x 3) and translation `t`.
Matrix4f affine(const Float (&rows)[9], const Array3f& t) {
  return Matrix4f(rows[0], rows[1], rows[2], t.x, rows[3], rows[4], rows[5], t.y, rows[6], rows[7], rows[8], t.z, 0.0f,
                  0.0f, 0.0f, 1.0f);
}

}  // namespace

Transform4f::Transform4f() : matrix_(Matrix4f::identity()), inverse_(Matrix4f::identity()) {}

Transform4f::Transform4f(const Matrix4f& matrix) : matrix_(matrix), inverse_(kiln::inverse(matrix)) {}

Transform4f::Transform4f(const Matrix4f& matrix, const Matrix4f& inverse) : matrix_(matrix), inverse_(inverse) {}

Transform4f Transform4f::operator*(const Transform4f& other) const {
  return Transform4f(matrix_ * other.matrix_, other.inverse_ * inverse_);
}

Transform4f Transform4f::translate(const Array3f& offset) const {
  Float one(1.0f), zero(0.0f);
  Float identity[9] = {one, zero, zero, zero, one, zero, zero, zero, one};
  return *this * Transform4f(affine(identity, offset), affine(identity, -offset));
}

Transform4f Transform4f::scale(const Array3f& factors) const {
  Float zero(0.0f);
  Float forward[9] = {factors.x, zero, zero, zero, factors.y, zero, zero, zero, factors.z};
  Array3f inverse = rcp(factors);
  Float backward[9] = {inverse.x, zero, zero, zero, inverse.y, zero, zero, zero, inverse.z};
  return *this * Transform4f(affine(forward, Array3f(zero)), affine(backward, Array3f(zero)));
}

Transform4f Transform4f::rotate(const Array3f& axis, const Float& angle_degrees) const {
  Float angle = angle_degrees * kDegreesToRadians;
  Float s = sin(angle), c = cos(angle), one_minus_c = 1.0f - c;
  const Float &x = axis.x, &y = axis.y, &z = axis.z;
  // Rodrigues: c·I + (1 - c)·a·aᵀ + s·[a]×
  Float rows[9] = {c + x * x * one_minus_c,     x * y * one_minus_c - z * s, x * z * one_minus_c + y * s,
                   y * x * one_minus_c + z * s, c + y * y * one_minus_c,     y * z * one_minus_c - x * s,
                   z * x * one_minus_c - y * s, z * y * one_minus_c + x * s, c + z * z * one_minus_c};
  Float transposed[9] = {rows[0], rows[3], rows[6], rows[1], rows[4], rows[7], rows[2], rows[5], rows[8]};
  Array3f zero(Float(0.0f));
  return *this * Transform4f(affine(rows, zero), affine(transposed, zero));
}

Transform4f Transform4f::look_at(const Array3f& origin, const Array3f& target, const Array3f& up) const {
  Array3f direction = normalize(target - origin);
  Array3f left = normalize(cross(up, direction));
  Array3f new_up = cross(direction, left);
  // Columns: left, new_up, direction; the frame is orthonormal, so the inverse's linear
  // part is the transpose and its translation is -(frameᵀ · origin).
  Float columns[9] = {left.x, new_up.x, direction.x, left.y, new_up.y, direction.y, left.z, new_up.z, direction.z};
  Float rows[9] = {left.x, left.y, left.z, new_up.x, new_up.y, new_up.z, direction.x, direction.y, direction.z};
  Array3f back(-dot(left, origin), -dot(new_up, origin), -dot(direction, origin));
  return *this * Transform4f(affine(columns, origin), affine(rows, back));
}

Array3f Transform4f::apply_point(const Array3f& p) const { return transform_point(matrix_, p); }

Array3f Transform4f::apply_vector(const Array3f& v) const { return transform_vector(matrix_, v); }

Array3f Transform4f::apply_normal(const Array3f& n) const { return transform_vector(transpose(inverse_), n); }

Transform4f Transform4f::from_rows(const std::array<double, 16>& rows) {
  Matrix4f matrix;
  for (size_t r = 0; r < 4; ++r)
    for (size_t c = 0; c < 4; ++c) matrix(r, c) = Float(float(rows[r * 4 + c]));
  Transform4f transform(matrix);
  transform.make_opaque();
  return transform;
}

std::array<double, 16> Transform4f::to_rows() const {
  std::array<double, 16> rows;
  for (size_t r = 0; r < 4; ++r)
    for (size_t c = 0; c < 4; ++c) rows[r * 4 + c] = matrix_(r, c).read(0);
  return rows;
}

void Transform4f::make_opaque() {
  // One kernel evaluates all 32 entries; make_opaque() then finds them evaluated.
  kiln::eval(matrix_, inverse_);
  kiln::make_opaque(matrix_, inverse_);
}

}  // namespace kiln::render
