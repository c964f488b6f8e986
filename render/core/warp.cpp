// Warps from the unit square to the disk, sphere, hemisphere, cone and triangle, with their
// densities.
#include <kiln/math.h>
#include <kiln/render/common.h>
#include <kiln/render/warp.h>

namespace kiln::render::warp {
namespace {

/// The direction with cos θ = z and azimuth phi.
Array3f from_z_and_phi(const Float& z, const Float& phi) {
  Float r = safe_sqrt(1.0f - z * z);
  auto [s, c] = sincos(phi);
  return Array3f(r * c, r * s, z);
}

}  // namespace

Array2f square_to_uniform_disk_concentric(const Array2f& sample) {
  Float x = 2.0f * sample.x - 1.0f, y = 2.0f * sample.y - 1.0f;
  // Squares around the origin map to circles: |x| >= |y| to the wedges around the x axis.
  Bool near_y_axis = abs(x) < abs(y);
  Float r = select(near_y_axis, y, x);
  Float other = select(near_y_axis, x, y);
  Float phi = (0.25f * kPi) * other / r;
  phi = select(near_y_axis, 0.5f * kPi - phi, phi);
  phi = select(r == 0.0f, Float(0.0f), phi);
  auto [s, c] = sincos(phi);
  return Array2f(r * c, r * s);
}

Float square_to_uniform_disk_concentric_pdf(const Array2f& p) {
  return select(p.x * p.x + p.y * p.y <= 1.0f, Float(1.0f / kPi), Float(0.0f));
}

Array3f square_to_uniform_sphere(const Array2f& sample) {
  return from_z_and_phi(1.0f - 2.0f * sample.y, (2.0f * kPi) * sample.x);
}

Float square_to_uniform_sphere_pdf(const Array3f& v) { return full<Float>(1.0f / (4.0f * kPi), v.size()); }

Array3f square_to_uniform_hemisphere(const Array2f& sample) {
  return from_z_and_phi(sample.y, (2.0f * kPi) * sample.x);
}

Float square_to_uniform_hemisphere_pdf(const Array3f& v) {
  return select(v.z >= 0.0f, Float(1.0f / (2.0f * kPi)), Float(0.0f));
}

Array3f square_to_cosine_hemisphere(const Array2f& sample) {
  Array2f p = square_to_uniform_disk_concentric(sample);
  return Array3f(p.x, p.y, safe_sqrt(1.0f - p.x * p.x - p.y * p.y));
}

Float square_to_cosine_hemisphere_pdf(const Array3f& v) { return select(v.z >= 0.0f, v.z * (1.0f / kPi), Float(0.0f)); }

Array3f square_to_uniform_cone(const Array2f& sample, const Float& cos_cutoff) {
  Float z = (1.0f - sample.y) + sample.y * cos_cutoff;
  return from_z_and_phi(z, (2.0f * kPi) * sample.x);
}

Float square_to_uniform_cone_pdf(const Array3f& v, const Float& cos_cutoff) {
  Float density = rcp((2.0f * kPi) * (1.0f - cos_cutoff));
  return select(v.z >= cos_cutoff, density, Float(0.0f));
}

Array2f square_to_uniform_triangle(const Array2f& sample) {
  // Folding the square onto the triangle would be cheaper but discontinuous; the square
  // root keeps neighbouring samples neighbours.
  Float t = safe_sqrt(1.0f - sample.x);
  return Array2f(1.0f - t, t * sample.y);
}

Float square_to_uniform_triangle_pdf(const Array2f& p) {
  return select((p.x >= 0.0f) & (p.y >= 0.0f) & (p.x + p.y <= 1.0f), Float(2.0f), Float(0.0f));
}

}  // namespace kiln::render::warp
