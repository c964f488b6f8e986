// Rays, and what the ray tracer reports before a shape turns a hit into an interaction
// (Mitsuba 3's Ray3f and PreliminaryIntersection3f).
#pragma once

#include <kiln/render/common.h>

#include <tuple>

namespace kiln::render {

/// PreliminaryIntersection::shape_index of a miss.
inline constexpr uint32_t kNoShape = ~0u;

/// A ray o + t·d for t in [0, maxt]; `d` need not be unit (t is in units of d).
struct Ray3f {
  Array3f o, d;
  Float maxt;

  Array3f operator()(const Float& t) const { return o + d * t; }
  auto fields() { return std::tie(o, d, maxt); }
  auto fields() const { return std::tie(o, d, maxt); }
};

/// The nearest hit along a ray: t = +inf and shape_index = ~0u on a miss.
struct PreliminaryIntersection {
  Float t;
  Array2f prim_uv;     ///< barycentrics (triangles) or the primitive's own parameters
  UInt32 prim_index;   ///< primitive within the shape
  UInt32 shape_index;  ///< position of the shape in the list the accelerator was built from

  Bool is_valid() const { return shape_index != UInt32(kNoShape); }
  auto fields() { return std::tie(t, prim_uv, prim_index, shape_index); }
  auto fields() const { return std::tie(t, prim_uv, prim_index, shape_index); }
};

}  // namespace kiln::render
