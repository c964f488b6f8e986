// Surface interactions: validity and the rays that leave them.
#include <kiln/math.h>
#include <kiln/render/interaction.h>

namespace kiln::render {

Bool SurfaceInteraction::is_valid() const { return t != Float(kInfinity); }

void SurfaceInteraction::finalize(const Array3f& ray_d) {
  const Array3f& normal = sh_frame.n;
  Array3f tangent = dp_du - normal * dot(normal, dp_du);
  Float length2 = squared_norm(tangent);
  // A degenerate parametrization (dp_du zero or along the normal) gets any tangent.
  auto [fallback_s, fallback_t] = coordinate_system(normal);
  Bool usable = length2 > 1e-20f;
  sh_frame.s = select(usable, tangent * rsqrt(length2), fallback_s);
  sh_frame.t = select(usable, cross(normal, sh_frame.s), fallback_t);
  wi = to_local(-ray_d);
}

Array3f SurfaceInteraction::offset_p(const Array3f& d) const {
  Float magnitude = (1.0f + max(max(abs(p.x), abs(p.y)), abs(p.z))) * kRayEpsilon;
  magnitude = select(dot(n, d) >= 0.0f, magnitude, -magnitude);
  return p + n * magnitude;
}

Ray3f SurfaceInteraction::spawn_ray(const Array3f& d) const { return Ray3f{offset_p(d), d, Float(kInfinity)}; }

Ray3f SurfaceInteraction::spawn_ray_to(const Array3f& target) const {
  Array3f origin = offset_p(target - p);
  Array3f d = target - origin;
  Float dist = norm(d);
  return Ray3f{origin, d / dist, dist * (1.0f - kShadowEpsilon)};
}

SurfaceInteraction surface_at(const PositionSample3f& ps) {
  SurfaceInteraction si;
  Float zero(0.0f);
  si.t = zero;
  si.p = ps.p;
  si.n = ps.n;
  si.uv = ps.uv;
  si.sh_frame = Frame3f(ps.n);
  si.dp_du = si.dp_dv = si.wi = Array3f(zero, zero, zero);
  si.shape = si.prim_index = UInt32(0u);
  return si;
}

}  // namespace kiln::render
