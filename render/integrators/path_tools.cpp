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

Array2f next_2d(PCG32& rng) {
  Float x = rng.next_float32();
  return Array2f(x, rng.next_float32());
}

Ray3f skip_area_emitters(const Scene& scene, const Ray3f& ray, const Bool& active) {
  auto [skipped, running] = while_loop(
      std::tuple(ray, active), [](const Ray3f&, const Bool& running) { return running; },
      [&scene](const Ray3f& r, const Bool& running) {
        SurfaceInteraction si = scene.ray_intersect(r, running);
        Bool on_emitter = running & si.is_valid() & (scene.hit_direction_sample(si, r.o).emitter != 0u);
        Ray3f next = si.spawn_ray(r.d);
        next.maxt = r.maxt - si.t;
        return std::tuple(Ray3f{select(on_emitter, next.o, r.o), r.d, select(on_emitter, next.maxt, r.maxt)},
                          on_emitter);
      },
      std::nullopt, "skip_area_emitters");
  return skipped;
}

}  // namespace kiln::render
