// The elementary transforms of Mitsuba's `<transform>` children as double matrices.
#include "scene/matrix4d.h"

#include <cmath>
#include <numbers>

namespace kiln::render::matrix4d {
namespace {

Vector3d subtract(const Vector3d& a, const Vector3d& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }

Vector3d cross(const Vector3d& a, const Vector3d& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

/// `v` / |v| (NaN entries for a zero vector, which look_at() reports).
Vector3d normalize(const Vector3d& v) {
  double length = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  return {v[0] / length, v[1] / length, v[2] / length};
}

/// A unit vector orthogonal to the unit vector `n` (Duff et al. 2017, "Building an
/// Orthonormal Basis, Revisited": the first vector of their basis).
Vector3d orthogonal(const Vector3d& n) {
  double sign = std::copysign(1.0, n[2]);
  double a = -1.0 / (sign + n[2]);
  double b = n[0] * n[1] * a;
  return {1.0 + sign * n[0] * n[0] * a, sign * b, -sign * n[0]};
}

/// The affine matrix with linear part `linear` (row-major 3 x 3) and translation `t`.
Matrix4d affine(const std::array<double, 9>& linear, const Vector3d& t) {
  return {linear[0], linear[1], linear[2], t[0], linear[3], linear[4], linear[5], t[1],
          linear[6], linear[7], linear[8], t[2], 0.0,       0.0,       0.0,       1.0};
}

}  // namespace

Matrix4d identity() { return affine({1, 0, 0, 0, 1, 0, 0, 0, 1}, {0, 0, 0}); }

Matrix4d multiply(const Matrix4d& a, const Matrix4d& b) {
  Matrix4d product{};
  for (int row = 0; row < 4; ++row)
    for (int column = 0; column < 4; ++column)
      for (int k = 0; k < 4; ++k) product[row * 4 + column] += a[row * 4 + k] * b[k * 4 + column];
  return product;
}

Matrix4d translate(const Vector3d& offset) { return affine({1, 0, 0, 0, 1, 0, 0, 0, 1}, offset); }

Matrix4d scale(const Vector3d& factors) {
  return affine({factors[0], 0, 0, 0, factors[1], 0, 0, 0, factors[2]}, {0, 0, 0});
}

Matrix4d rotate(const Vector3d& axis, double angle_degrees) {
  double angle = angle_degrees * (std::numbers::pi / 180.0);
  double s = std::sin(angle), c = std::cos(angle), one_minus_c = 1.0 - c;
  double x = axis[0], y = axis[1], z = axis[2];
  // Rodrigues' formula c·I + (1 - c)·a·aᵀ + s·[a]×, with the axis as given.
  return affine({c + x * x * one_minus_c, x * y * one_minus_c - z * s, x * z * one_minus_c + y * s,
                 y * x * one_minus_c + z * s, c + y * y * one_minus_c, y * z * one_minus_c - x * s,
                 z * x * one_minus_c - y * s, z * y * one_minus_c + x * s, c + z * z * one_minus_c},
                {0, 0, 0});
}

Matrix4d look_at(const Vector3d& origin, const Vector3d& target, const Vector3d& up) {
  Vector3d direction = normalize(subtract(target, origin));
  bool up_is_zero = up[0] == 0 && up[1] == 0 && up[2] == 0;
  Vector3d left = normalize(cross(up_is_zero ? orthogonal(direction) : up, direction));
  Vector3d new_up = cross(direction, left);
  // Columns: left, new_up, direction; the camera sits at `origin`.
  return affine({left[0], new_up[0], direction[0], left[1], new_up[1], direction[1], left[2], new_up[2], direction[2]},
                origin);
}

}  // namespace kiln::render::matrix4d
