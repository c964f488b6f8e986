// Path replay backpropagation (Vicini et al. 2021; Mitsuba 3's `prb`). Its images are
// `path`'s (same parameters, same estimator). Its derivatives come from two passes over
// the same paths (the same random numbers): a primal pass estimates each path's radiance
// L, then a replay walks the path again and at each vertex differentiates that vertex
// alone, with the radiance still to come, L minus what the vertices before gave, standing
// in for the rest of the path. The replay is a sum loop (it only adds each vertex's term),
// so reverse mode runs it again instead of storing the path: memory does not grow with
// path length. Where geometry (or the camera) moves, the replay differentiates each vertex in
// the area form, as Mitsuba's prb does, but with the vertices after the first as material
// points of their surfaces (Mitsuba's slide along rays from where the vertex before was,
// which misses a term where a surface sees itself nearby: the inside of a sphere): each
// moves with its surface, and the directions between them follow, with the change of
// measure from solid angle to area. The first vertex slides along its camera ray.
#include "integrators/path_tools.h"
#include "integrators/path_tracer.h"

#include <kiln/render/integrator.h>
#include <kiln/render/plugin.h>
#include <kiln/render/scene.h>

#include <optional>

namespace kiln::render {
namespace {

/// What the replay carries: the path (no derivatives) and what its ray finds, the ray that
/// found the previous vertex and what it found, the radiance still to come, and the sum
/// whose derivatives are the image's.
struct ReplayState {
  PathState path;
  PreliminaryIntersection hit;
  Ray3f previous_ray;
  PreliminaryIntersection previous_hit;
  Color3f remaining, sum;

  auto fields() { return std::tie(path, hit, previous_ray, previous_hit, remaining, sum); }
  auto fields() const { return std::tie(path, hit, previous_ray, previous_hit, remaining, sum); }
};

Ray3f detached(const Ray3f& ray) { return Ray3f{detach(ray.o), detach(ray.d), detach(ray.maxt)}; }

/// `s` without derivatives: the replay's path state must not depend on the parameters.
PathState detached(PathState s) {
  s.ray = detached(s.ray);
  s.throughput = detach(s.throughput);
  s.result = detach(s.result);
  s.eta = detach(s.eta);
  s.prev_p = detach(s.prev_p);
  s.prev_bsdf_pdf = detach(s.prev_bsdf_pdf);
  return s;
}

/// `si`'s incident direction (`ray_d` the ray's that found it) following the previous
/// vertex, where `active`: that vertex, found again by `ray` (what found it: `hit`; a material
/// point where `previous_follows`), and this one move, and the direction between them
/// follows.
Array3f incident_from_previous(const Scene& scene, const SurfaceInteraction& si, const Array3f& ray_d, const Ray3f& ray,
                               const PreliminaryIntersection& hit, const Bool& previous_follows, const Bool& active) {
  Array3f previous = scene.compute_surface_interaction(ray, hit, active, previous_follows).p;
  Array3f towards = normalize(select(active, previous - si.p, -ray_d));
  return select(active, si.to_local(-ray_d + (towards - detach(towards))), si.wi);
}

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
    PathState path = tracer_.start(scene, rng, camera_ray, active);
    // The loop's state carries no derivatives (a sum loop): the first ray's (a camera's pose
    // or field of view) enter the body as a captured value, when it has any.
    std::optional<Ray3f> first_ray;
    if (grad_enabled(path.ray.o) || grad_enabled(path.ray.d)) first_ray = path.ray;
    bool moving = first_ray || scene.geometry_has_derivatives();
    Float zero = zeros<Float>(lanes);
    PreliminaryIntersection hit =
        moving ? scene.ray_intersect_preliminary(detached(path.ray), path.active)
               : PreliminaryIntersection{zero, Array2f(zero, zero), zeros<UInt32>(lanes), zeros<UInt32>(lanes)};
    ReplayState start{path, hit, detached(path.ray), hit, detach(primal.result), Color3f(zero, zero, zero)};
    auto [end] = while_loop(
        std::tuple(start), [](const ReplayState& s) { return s.path.active; },
        [this, &scene, first_ray, moving](const ReplayState& s) {
          return std::tuple(replay(scene, s, first_ray, moving));
        },
        std::nullopt, "prb_replay", LoopDerivative{.max_iterations = 0, .sum_loop = true});
    rng = end.path.rng;
    return {select(primal.valid_ray, end.sum, Color3f(0.0f, 0.0f, 0.0f)), primal.valid_ray, {}};
  }

 private:
  /// One vertex of the replay: its own emission and emitter sample, and the radiance still
  /// to come scaled by the BSDF sample's value relative to itself (value 1: the derivatives
  /// of eval with the density held fixed, in the area form where the vertex moves; a delta
  /// lobe's weight for a delta sample). Where geometry or the camera `moving`, it also finds
  /// what the next ray meets, for the area form here and the next vertex.
  ReplayState replay(const Scene& scene, const ReplayState& s, const std::optional<Ray3f>& first_ray,
                     bool moving) const {
    PathState path = s.path;
    Ray3f previous_ray = s.previous_ray;
    if (first_ray) {
      auto on_first = [](const Bool& first, const Ray3f& a, const Ray3f& b) {
        return Ray3f{select(first, a.o, b.o), select(first, a.d, b.d), select(first, a.maxt, b.maxt)};
      };
      path.ray = on_first(path.depth == 0u, *first_ray, path.ray);
      previous_ray = on_first(path.depth == 1u, *first_ray, previous_ray);
    }
    SurfaceInteraction si = moving ? scene.compute_surface_interaction(path.ray, s.hit, path.active, path.depth > 0u)
                                   : scene.ray_intersect(path.ray, path.active);
    if (moving)
      si.wi = incident_from_previous(scene, si, detach(path.ray.d), previous_ray, s.previous_hit, path.depth > 1u,
                                     path.active & si.is_valid() & (path.depth > 0u));
    VertexTerms t;
    PathState next = tracer_.shade(scene, path, si, &t);
    // The radiance leaving this vertex towards the previous one: what is still to come,
    // over the throughput that reached it.
    record_vertex(RecordingPass::Backward, s.path, si, t.wo, ratio(s.remaining, s.path.throughput),
                  s.path.active & si.is_valid());
    Color3f here = next.result - s.path.result;
    Color3f remaining = s.remaining - detach(here);

    // Where nothing moves, the hits carried stay as they are (the loop does not update them).
    ReplayState result{detached(next), s.hit, s.previous_ray, s.previous_hit, remaining, s.sum};
    Bool smooth = t.continuing & !t.delta;
    Color3f smooth_weight;
    if (moving) {
      Ray3f next_ray = detached(next.ray);
      {
        GradScope no_derivatives = suspend_grad();
        result.hit = scene.ray_intersect_preliminary(next_ray, next.active);
      }
      SurfaceInteraction found =
          scene.compute_surface_interaction(next_ray, result.hit, next.active & smooth, Bool(true));
      smooth_weight = area_form_relative(scene, si, found, next_ray.d, smooth);
      result.previous_ray = detached(path.ray);
      result.previous_hit = s.hit;
    } else {
      smooth_weight = relative(scene.bsdf_eval_pdf(BSDFContext(), si, t.wo, smooth).first);
    }
    Color3f weight = select(t.delta, relative(t.sample_weight), smooth_weight);
    result.sum = s.sum + here + select(t.continuing, remaining * weight, Color3f(0.0f, 0.0f, 0.0f));
    return result;
  }

  PathTracer tracer_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Integrator, "prb",
                     [](const Properties& p) { return std::make_shared<PrbIntegrator>(p); });

}  // namespace kiln::render
