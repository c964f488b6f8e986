// An orthonormal frame (Mitsuba 3's Frame3f): the shading frame of a surface point, in which
// BSDFs work with the normal along +z.
//
// What an implementation guarantees:
// - Frame3f(n) completes a unit normal to a right-handed orthonormal basis without a
//   singularity (Duff et al.'s construction), continuous except across n.z = 0's sign.
// - to_local and to_world are exact inverses for unit frames (a rotation).
// - The trigonometric helpers take a unit vector in the local frame.
#pragma once

#include <kiln/render/common.h>

#include <tuple>

namespace kiln::render {

struct Frame3f {
  Array3f s, t, n;

  Frame3f() = default;
  Frame3f(const Array3f& s, const Array3f& t, const Array3f& n) : s(s), t(t), n(n) {}
  /// A frame around the unit normal `n`.
  explicit Frame3f(const Array3f& n);

  Array3f to_local(const Array3f& v) const { return Array3f(dot(v, s), dot(v, t), dot(v, n)); }
  Array3f to_world(const Array3f& v) const { return s * v.x + t * v.y + n * v.z; }

  auto fields() { return std::tie(s, t, n); }
  auto fields() const { return std::tie(s, t, n); }
};

/// Two unit vectors completing the unit vector `n` to an orthonormal basis.
std::pair<Array3f, Array3f> coordinate_system(const Array3f& n);

inline Float cos_theta(const Array3f& v) { return v.z; }
inline Float sin_theta_2(const Array3f& v) { return fma(v.x, v.x, v.y * v.y); }

/// The mirror direction of `v` about the normal +z.
inline Array3f reflect(const Array3f& v) { return Array3f(-v.x, -v.y, v.z); }

}  // namespace kiln::render
