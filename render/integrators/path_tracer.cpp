// The shared path tracer (see path_tracer.h): multiple importance sampling of emitters and
// BSDFs (power heuristic), Russian roulette from `rr_depth` on, at most `max_depth` vertices.
// Sampling decisions carry no derivatives (detached sampling): sampled directions, roulette
// probabilities and MIS weights; values along the sampled path do.
#include "integrators/path_tracer.h"

#include "core/parameter_checks.h"
#include "integrators/path_tools.h"

#include <kiln/render/scene.h>

namespace kiln::render {

void record_vertex(RecordingPass pass, const PathState& s, const SurfaceInteraction& si, const Array3f& wo,
                   const Color3f& radiance, const Bool& active) {
  VertexRecording* recording = vertex_recording();
  if (!recording || recording->pass != pass) return;
  GradScope no_derivatives = suspend_grad();
  Color3f throughput = detach(s.throughput);
  recording->records->append(active, recording->pixel, recording->sample, s.depth, detach(si.p), detach(si.sh_frame.n),
                             detach(si.to_world(si.wi)), detach(si.to_world(wo)), throughput, detach(radiance),
                             recording->ray_adjoint * throughput);
}

PathTracer::PathTracer(const Properties& props) {
  max_depth_ = max_depth_parameter(props);
  rr_depth_ = rr_depth_parameter(props);
  hide_emitters_ = props.get_bool("hide_emitters", false);
}

PathState PathTracer::start(const Scene& scene, const PCG32& rng, const Ray3f& camera_ray, const Bool& active) const {
  size_t lanes = camera_ray.o.x.size();
  PathState s;
  s.ray = hide_emitters_ ? skip_area_emitters(scene, camera_ray, active) : camera_ray;
  s.throughput = Color3f(1.0f, 1.0f, 1.0f) + Color3f(zeros<Float>(lanes), zeros<Float>(lanes), zeros<Float>(lanes));
  s.result = Color3f(zeros<Float>(lanes), zeros<Float>(lanes), zeros<Float>(lanes));
  s.eta = full<Float>(1.0f, lanes);
  s.depth = zeros<UInt32>(lanes);
  s.valid_ray = full<Bool>(!hide_emitters_ && scene.environment() != 0, lanes);
  s.prev_p = Array3f(zeros<Float>(lanes), zeros<Float>(lanes), zeros<Float>(lanes));
  s.prev_bsdf_pdf = full<Float>(1.0f, lanes);
  s.prev_bsdf_delta = full<Bool>(true, lanes);
  s.active = active & full<Bool>(true, lanes);
  s.rng = rng;
  return s;
}

PathState PathTracer::trace(const Scene& scene, const PCG32& rng, const Ray3f& camera_ray, const Bool& active,
                            const char* name) const {
  auto [end] = while_loop(
      std::tuple(start(scene, rng, camera_ray, active)), [](const PathState& s) { return s.active; },
      [&](const PathState& s) { return std::tuple(bounce(scene, s)); }, std::nullopt, name,
      LoopDerivative{.max_iterations = max_depth_ == ~0u ? 0 : max_depth_});
  return end;
}

RaySample PathTracer::sample(const Scene& scene, PCG32& rng, const Ray3f& camera_ray, const Bool& active,
                             const char* name) const {
  if (max_depth_ == 0) return {Color3f(0.0f, 0.0f, 0.0f), Bool(false), {}};
  PathState end = trace(scene, rng, camera_ray, active, name);
  rng = end.rng;
  return {select(end.valid_ray, end.result, Color3f(0.0f, 0.0f, 0.0f)), end.valid_ray, {}};
}

PathState PathTracer::bounce(const Scene& scene, const PathState& s) const {
  return shade(scene, s, scene.ray_intersect(s.ray, s.active), nullptr);
}

PathState PathTracer::shade(const Scene& scene, const PathState& s, const SurfaceInteraction& si,
                            VertexTerms* terms) const {
  PathState next = s;
  BSDFContext ctx;
  Bool hit = si.is_valid();

  // Emission found by the previous BSDF sample (or seen by the camera), weighted
  // against the emitter sampling that could have found it too.
  DirectionSample3f found = scene.hit_direction_sample(si, s.prev_p);
  Float emitter_pdf =
      select(s.prev_bsdf_delta, Float(0.0f), scene.pdf_emitter_direction(s.prev_p, found, !s.prev_bsdf_delta));
  Color3f emitted = scene.eval_emitter(si, s.active & (s.prev_bsdf_pdf > 0.0f));
  next.result = s.result + s.throughput * emitted * mis_weight(s.prev_bsdf_pdf, emitter_pdf);

  Bool continuing = s.active & hit & (s.depth + 1u < UInt32(max_depth_));
  next.valid_ray = s.valid_ray | (s.active & hit & (found.emitter != 0u) & Bool(!hide_emitters_));

  // Emitter sampling, where the BSDF has a smooth lobe.
  Bool smooth = (scene.bsdf_flags(si) & UInt32(bsdf_flags::kSmooth)) != 0u;
  Bool sample_emitter = continuing & smooth;
  auto [ds, emitter_weight] = scene.sample_emitter_direction(si, next_2d(next.rng), true, sample_emitter);
  sample_emitter = sample_emitter & (ds.pdf != 0.0f);
  Array3f wo = si.to_local(ds.d);

  // The BSDF towards the emitter sample, and a BSDF sample to continue with.
  Float sample1 = next.rng.next_float32();
  Array2f sample2 = next_2d(next.rng);
  auto [bsdf_value, bsdf_pdf, bs, bsdf_weight] = scene.bsdf_eval_pdf_sample(ctx, si, wo, sample1, sample2, continuing);
  Float emitter_mis = select(ds.delta, Float(1.0f), mis_weight(ds.pdf, bsdf_pdf));
  next.result =
      select(sample_emitter, next.result + s.throughput * bsdf_value * emitter_weight * emitter_mis, next.result);

  Array3f direction = continuation_direction(si, bs);
  next.ray = si.spawn_ray(direction);
  Array3f sampled = si.to_local(direction);  // what prb's replay evaluates the BSDF at
  next.prev_bsdf_delta = (bs.sampled_type & UInt32(bsdf_flags::kDelta)) != 0u;
  if (terms) {
    *terms = VertexTerms{continuing, sampled, next.prev_bsdf_delta, bsdf_weight};
  } else if (grad_enabled(bsdf_weight) || grad_enabled(si.sh_frame.n)) {
    // The sampled direction stays fixed in world space: the weight's derivatives are the
    // BSDF's value's there over a density that is a sampling decision (the weight a sampler
    // returns differentiates the density too, with a roughness or a frame turning under the
    // direction, and may have cancelled the cosine). Path replay, which asks for `terms`,
    // weighs on its own.
    Bool smooth_sample = continuing & !next.prev_bsdf_delta;
    Color3f value = scene.bsdf_eval_pdf(ctx, si, sampled, smooth_sample).first;
    bsdf_weight = select(smooth_sample, detach(bsdf_weight) * relative(value), bsdf_weight);
  }
  next.throughput = s.throughput * bsdf_weight;
  next.eta = s.eta * bs.eta;
  next.valid_ray = next.valid_ray | (s.active & hit & ((bs.sampled_type & UInt32(bsdf_flags::kNull)) == 0u));
  next.prev_p = si.p;
  next.prev_bsdf_pdf = bs.pdf;
  Color3f unknown(0.0f, 0.0f, 0.0f);
  record_vertex(RecordingPass::Render, s, si, sampled, unknown, s.active & hit);

  // Russian roulette once the path is rr_depth vertices long. The survival probability
  // is a sampling decision: derivatives treat it as a constant (detached), and the
  // scale is 1 where roulette is off, so no 1/0 reaches a derivative through a select.
  next.depth = select(hit, s.depth + 1u, s.depth);
  Float throughput_max = detach(max(max(next.throughput.x, next.throughput.y), next.throughput.z));
  Float rr_probability = min(throughput_max * detach(next.eta * next.eta), Float(0.95f));
  Bool rr_active = next.depth >= UInt32(rr_depth_);
  Bool rr_continue = next.rng.next_float32() < rr_probability;
  next.throughput = next.throughput * select(rr_active & (rr_probability > 0.0f), 1.0f / rr_probability, Float(1.0f));
  next.active = continuing & ((!rr_active) | rr_continue) & (throughput_max != 0.0f);
  return next;
}

}  // namespace kiln::render
