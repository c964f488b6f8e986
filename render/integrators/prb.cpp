// Path replay backpropagation (Vicini et al. 2021; Mitsuba 3's `prb`). Its images are
// `path`'s (same parameters, same estimator). Its derivatives come from two passes over
// the same paths (the same random numbers): a primal pass estimates each path's radiance
// L, then a replay walks the path again and at each vertex differentiates that vertex
// alone, with the radiance still to come, L minus what the vertices before gave, standing
// in for the rest of the path. The replay is a sum loop (it only adds each vertex's term),
// so reverse mode runs it again instead of storing the path: memory does not grow with
// path length.
#include "integrators/path_tracer.h"

#include <kiln/render/integrator.h>
#include <kiln/render/plugin.h>
#include <kiln/render/scene.h>

#include <optional>

namespace kiln::render {
namespace {

/// What the replay carries: the path (no derivatives), the radiance still to come, and
/// the sum whose derivatives are the image's.
struct ReplayState {
  PathState path;
  Color3f remaining, sum;

  auto fields() { return std::tie(path, remaining, sum); }
  auto fields() const { return std::tie(path, remaining, sum); }
};

/// `s` without derivatives: the replay's path state must not depend on the parameters.
PathState detached(PathState s) {
  s.ray = Ray3f{detach(s.ray.o), detach(s.ray.d), detach(s.ray.maxt)};
  s.throughput = detach(s.throughput);
  s.result = detach(s.result);
  s.eta = detach(s.eta);
  s.prev_p = detach(s.prev_p);
  s.prev_bsdf_pdf = detach(s.prev_bsdf_pdf);
  return s;
}

/// Componentwise a / b where b is nonzero, else 0.
Color3f ratio(const Color3f& a, const Color3f& b) {
  auto one = [](const Float& x, const Float& y) { return select(y != 0.0f, x / select(y != 0.0f, y, 1.0f), 0.0f); };
  return Color3f(one(a.x, b.x), one(a.y, b.y), one(a.z, b.z));
}

/// value / detach(value) where value is nonzero, else 0: 1 or 0 in value, with value's
/// derivatives relative to itself.
Color3f relative(const Color3f& value) { return ratio(value, detach(value)); }

class PrbIntegrator : public SamplingIntegrator {
 public:
  explicit PrbIntegrator(const Properties& props) : SamplingIntegrator(props), tracer_(props) {}

  RaySample sample(const Scene& scene, PCG32& rng, const Ray3f& camera_ray, const Bool& active) const override {
    return tracer_.sample(scene, rng, camera_ray, active, "prb");
  }

  RaySample sample_for_derivatives(const Scene& scene, PCG32& rng, const Ray3f& camera_ray,
                                   const Bool& active) const override {
    if (tracer_.max_depth() == 0) return {Color3f(0.0f, 0.0f, 0.0f), Bool(false), {}};
    PathState primal;
    {
      GradScope no_derivatives = suspend_grad();
      primal = tracer_.trace(scene, rng, camera_ray, active, "prb_primal");
    }
    size_t lanes = camera_ray.o.x.size();
    ReplayState start{tracer_.start(scene, rng, camera_ray, active), detach(primal.result),
                      Color3f(zeros<Float>(lanes), zeros<Float>(lanes), zeros<Float>(lanes))};
    // The loop's state carries no derivatives (a sum loop): the first ray's (a camera's pose
    // or field of view) enter the body as a captured value, when it has any.
    std::optional<Ray3f> first_ray;
    if (grad_enabled(start.path.ray.o) || grad_enabled(start.path.ray.d)) first_ray = start.path.ray;
    auto [end] = while_loop(
        std::tuple(start), [](const ReplayState& s) { return s.path.active; },
        [this, &scene, first_ray](const ReplayState& s) { return std::tuple(replay(scene, s, first_ray)); },
        std::nullopt, "prb_replay", LoopDerivative{.max_iterations = 0, .sum_loop = true});
    rng = end.path.rng;
    return {select(primal.valid_ray, end.sum, Color3f(0.0f, 0.0f, 0.0f)), primal.valid_ray, {}};
  }

 private:
  /// One vertex of the replay: its own emission and emitter sample, and the radiance still
  /// to come scaled by the BSDF sample's weight relative to itself (value 1: the
  /// derivatives of eval / pdf with the direction and pdf held fixed; a delta lobe's weight
  /// for a delta sample).
  ReplayState replay(const Scene& scene, const ReplayState& s, const std::optional<Ray3f>& first_ray) const {
    VertexTerms t;
    PathState path = s.path;
    if (first_ray) {
      Bool first = path.depth == 0u;
      path.ray = Ray3f{select(first, first_ray->o, path.ray.o), select(first, first_ray->d, path.ray.d),
                       select(first, first_ray->maxt, path.ray.maxt)};
    }
    PathState next = tracer_.bounce(scene, path, &t);
    // The radiance leaving this vertex towards the previous one: what is still to come,
    // over the throughput that reached it.
    record_vertex(RecordingPass::Backward, s.path, t.si, t.wo, ratio(s.remaining, s.path.throughput),
                  s.path.active & t.si.is_valid());
    Color3f here = next.result - s.path.result;
    Color3f remaining = s.remaining - detach(here);
    auto [value_at_sample, pdf] = scene.bsdf_eval_pdf(BSDFContext(), t.si, t.wo, t.continuing & !t.delta);
    Color3f weight = select(t.delta, t.sample_weight, value_at_sample);
    Color3f onwards = select(t.continuing, remaining * relative(weight), Color3f(0.0f, 0.0f, 0.0f));
    return {detached(next), remaining, s.sum + here + onwards};
  }

  PathTracer tracer_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Integrator, "prb",
                     [](const Properties& p) { return std::make_shared<PrbIntegrator>(p); });

}  // namespace kiln::render
