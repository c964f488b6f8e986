// Double-precision 3-vectors for the geometry the host does on meshes between renders (edge
// lists, the bounds of the edge tree).
#pragma once

#include <array>
#include <cmath>

namespace kiln::render::host {

using Vec = std::array<double, 3>;

/// a + s b.
inline Vec add(const Vec& a, const Vec& b, double s = 1.0) {
  return {a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2]};
}
inline Vec minus(const Vec& a, const Vec& b) { return add(a, b, -1.0); }
inline Vec scaled(const Vec& a, double s) { return {a[0] * s, a[1] * s, a[2] * s}; }
inline double dot(const Vec& a, const Vec& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
inline Vec cross(const Vec& a, const Vec& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
inline double length(const Vec& a) { return std::sqrt(dot(a, a)); }
inline Vec unit(const Vec& a) { return scaled(a, 1.0 / length(a)); }

}  // namespace kiln::render::host
