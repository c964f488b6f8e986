// Warps: maps from uniform samples on [0, 1)² to points and directions with a known density,
// the building blocks of BSDF and emitter sampling (Mitsuba 3's mitsuba/core/warp.h names).
//
// What an implementation guarantees:
// - Each `square_to_X` is paired with `square_to_X_pdf`, the density of its output with
//   respect to the output's measure: area for the disk, solid angle for directions. The
//   density is zero outside the warp's support. tests/render/test_warp.cpp checks every pair
//   with a chi-square goodness-of-fit test.
// - Directions are unit vectors in the local frame: z is the normal (or the cone's axis).
// - Every function is traced from Kiln arrays, so it runs in kernels and differentiates.
#pragma once

#include <kiln/vector.h>

namespace kiln::render::warp {

/// Uniform on the unit disk (Shirley and Chiu's concentric map: low distortion, continuous).
Array2f square_to_uniform_disk_concentric(const Array2f& sample);
/// 1/π inside the unit disk, 0 outside.
Float square_to_uniform_disk_concentric_pdf(const Array2f& p);

/// Uniform on the unit sphere.
Array3f square_to_uniform_sphere(const Array2f& sample);
/// 1/(4π) for every direction.
Float square_to_uniform_sphere_pdf(const Array3f& v);

/// Uniform on the upper hemisphere (z >= 0).
Array3f square_to_uniform_hemisphere(const Array2f& sample);
/// 1/(2π) for z >= 0, 0 below.
Float square_to_uniform_hemisphere_pdf(const Array3f& v);

/// Cosine-weighted on the upper hemisphere (Malley's method on the concentric disk).
Array3f square_to_cosine_hemisphere(const Array2f& sample);
/// cos θ / π for z >= 0, 0 below.
Float square_to_cosine_hemisphere_pdf(const Array3f& v);

/// Uniform in the cone of directions around +z with cos θ >= cos_cutoff.
Array3f square_to_uniform_cone(const Array2f& sample, const Float& cos_cutoff);
/// 1 / (2π (1 - cos_cutoff)) inside the cone, 0 outside.
Float square_to_uniform_cone_pdf(const Array3f& v, const Float& cos_cutoff);

/// Uniform on the triangle (0, 0), (1, 0), (0, 1): barycentrics (b1, b2) of a triangle.
Array2f square_to_uniform_triangle(const Array2f& sample);
/// 2 inside the triangle, 0 outside.
Float square_to_uniform_triangle_pdf(const Array2f& p);

}  // namespace kiln::render::warp
