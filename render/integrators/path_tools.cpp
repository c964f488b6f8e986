// Shared integrator pieces (see path_tools.h).
#include "integrators/path_tools.h"

#include "core/parameter_checks.h"

#include <kiln/control.h>
#include <kiln/render/scene.h>

namespace kiln::render {

uint32_t max_depth_parameter(const Properties& props) {
  int64_t depth = props.get_int("max_depth", -1);
  if (depth < -1)
    throw_parameter_error(props, "max_depth", "must be -1 (unbounded) or at least 0, got " + std::to_string(depth));
  return depth == -1 ? ~0u : uint32_t(std::min<int64_t>(depth, ~0u - 1));
}

uint32_t rr_depth_parameter(const Properties& props) {
  int64_t depth = props.get_int("rr_depth", 5);
  if (depth <= 0) throw_parameter_error(props, "rr_depth", "must be positive, got " + std::to_string(depth));
  return uint32_t(std::min<int64_t>(depth, ~0u));
}

Float mis_weight(const Float& pdf_a, const Float& pdf_b) {
  Float a = detach(pdf_a), b = detach(pdf_b);
  Float a2 = a * a;
  Float weight = a2 / (a2 + b * b);
  return select(isfinite(weight), weight, Float(0.0f));
}

Array3f continuation_direction(const SurfaceInteraction& si, const BSDFSample3f& bs) {
  Array3f direction = si.to_world(bs.wo);
  if (!grad_enabled(direction)) return direction;  // no select in renders without derivatives
  Bool delta = (bs.sampled_type & UInt32(bsdf_flags::kDelta)) != 0u;
  return select(delta, direction, detach(direction));
}

Color3f ratio(const Color3f& a, const Color3f& b) {
  auto one = [](const Float& x, const Float& y) { return select(y != 0.0f, x / select(y != 0.0f, y, 1.0f), 0.0f); };
  return Color3f(one(a.x, b.x), one(a.y, b.y), one(a.z, b.z));
}

Color3f relative(const Color3f& value) { return ratio(value, detach(value)); }

Color3f area_form_relative(const Scene& scene, const SurfaceInteraction& si, const SurfaceInteraction& found,
                           const Array3f& direction, const Bool& active) {
  Bool on_surface = active & found.is_valid();
  Array3f to_found = found.p - si.p;
  Float distance2 = select(on_surface, dot(to_found, to_found), Float(1.0f));
  Array3f towards = select(on_surface, to_found * rsqrt(distance2), direction);
  Color3f value = scene.bsdf_eval_pdf(BSDFContext(), si, si.to_local(towards), active).first;
  Float area = norm(cross(found.dp_du, found.dp_dv));
  Float area_change = select(detach(area) > 0.0f, area / detach(area), Float(1.0f));
  Float jacobian = select(on_surface, abs(dot(found.n, towards)) / distance2 * area_change, Float(1.0f));
  return relative(value * jacobian);
}

Array2f next_2d(PCG32& rng) {
  Float x = rng.next_float32();
  return Array2f(x, rng.next_float32());
}

Ray3f skip_area_emitters(const Scene& scene, const Ray3f& ray, const Bool& active) {
  // Where the ray starts again is a visibility decision, traced without derivatives (reverse
  // mode of a symbolic loop would need its trajectory); the direction, which may carry
  // them, is the ray's.
  Ray3f detached{detach(ray.o), detach(ray.d), detach(ray.maxt)};
  auto [origin, maxt, skipped] = [&] {
    GradScope suspended = suspend_grad();
    auto [end_origin, end_maxt, moved, running] = while_loop(
        std::tuple(detached.o, detached.maxt, Bool(false) & active, active),
        [](const Array3f&, const Float&, const Bool&, const Bool& running) { return running; },
        [&](const Array3f& o, const Float& t_max, const Bool& skipped, const Bool& running) {
          Ray3f r{o, detached.d, t_max};
          SurfaceInteraction si = scene.ray_intersect(r, running);
          Bool on_emitter = running & si.is_valid() & (scene.hit_direction_sample(si, r.o).emitter != 0u);
          Ray3f next = si.spawn_ray(r.d);
          return std::tuple(select(on_emitter, next.o, o), select(on_emitter, t_max - si.t, t_max),
                            skipped | on_emitter, on_emitter);
        },
        std::nullopt, "skip_area_emitters");
    return std::tuple(end_origin, end_maxt, moved);
  }();
  return Ray3f{select(skipped, origin, ray.o), ray.d, select(skipped, maxt, ray.maxt)};
}

}  // namespace kiln::render
