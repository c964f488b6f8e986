// Where a ray met a surface (Mitsuba 3's SurfaceInteraction3f), and rays leaving it.
//
// What an implementation guarantees:
// - Lanes with no hit have t = +inf, shape = 0, `wi` = -ray.d in world space with an
//   identity shading frame (so infinite emitters read the direction), and every other
//   field zero; is_valid() says which lanes hit.
// - `n` is the geometric normal (the side the shape's winding or flip_normals gives);
//   `sh_frame.n` the shading normal (interpolated vertex normals, else `n`).
// - `wi` points back along the incoming ray, in the shading frame (local coordinates).
// - Spawned rays start `kRayEpsilon · (1 + max |p|)` off the surface on the side they leave
//   towards, as Mitsuba offsets them, so they do not hit their own surface again.
#pragma once

#include <kiln/render/frame.h>
#include <kiln/render/ray.h>

#include <tuple>

namespace kiln::render {

struct SurfaceInteraction {
  Float t;
  Array3f p;
  Array3f n;   ///< geometric normal (unit, world space)
  Array2f uv;  ///< surface parametrization (texture coordinates)
  Frame3f sh_frame;
  Array3f dp_du, dp_dv;
  Array3f wi;         ///< incident direction (towards where the ray came from), local
  UInt32 shape;       ///< the shape's id in the scene (1-based), 0 where nothing was hit
  UInt32 prim_index;  ///< triangle (or primitive) index within the shape

  Bool is_valid() const;
  Array3f to_local(const Array3f& v) const { return sh_frame.to_local(v); }
  Array3f to_world(const Array3f& v) const { return sh_frame.to_world(v); }

  /// Completes what shapes leave to the scene: the shading frame's tangents from sh_frame.n
  /// and dp_du (Gram-Schmidt, as Mitsuba), and `wi` = -ray_d in local coordinates.
  void finalize(const Array3f& ray_d);
  /// `p` moved off the surface towards the side `d` points to.
  Array3f offset_p(const Array3f& d) const;
  /// A ray leaving in direction `d` (unit, world space), unbounded.
  Ray3f spawn_ray(const Array3f& d) const;
  /// A ray towards point `target`, ending just short of it (shadow rays).
  Ray3f spawn_ray_to(const Array3f& target) const;

  auto fields() { return std::tie(t, p, n, uv, sh_frame, dp_du, dp_dv, wi, shape, prim_index); }
  auto fields() const { return std::tie(t, p, n, uv, sh_frame, dp_du, dp_dv, wi, shape, prim_index); }
};

/// A point sampled on a surface (Mitsuba's PositionSample3f).
struct PositionSample3f {
  Array3f p, n;  ///< position and unit normal
  Array2f uv;
  Float pdf;   ///< density per unit area (or the discrete probability when `delta`)
  Bool delta;  ///< sampled from a delta distribution (a point light's position)

  auto fields() { return std::tie(p, n, uv, pdf, delta); }
  auto fields() const { return std::tie(p, n, uv, pdf, delta); }
};

/// The surface at a sampled point (Mitsuba's SurfaceInteraction3f(ps)): t = 0, the shading
/// frame around the normal, no incident direction; rays spawned from it leave the surface.
SurfaceInteraction surface_at(const PositionSample3f& ps);

/// A point sampled as seen from a reference point (Mitsuba's DirectionSample3f): the
/// position sample plus the direction and distance to it.
struct DirectionSample3f {
  Array3f p, n;
  Array2f uv;
  Float pdf;  ///< density per unit solid angle at the reference point (or discrete)
  Bool delta;
  Array3f d;       ///< unit direction from the reference point to `p`
  Float dist;      ///< distance from the reference point to `p` (+inf for infinite emitters)
  UInt32 emitter;  ///< the emitter's id in the scene (1-based)

  auto fields() { return std::tie(p, n, uv, pdf, delta, d, dist, emitter); }
  auto fields() const { return std::tie(p, n, uv, pdf, delta, d, dist, emitter); }
};

}  // namespace kiln::render
