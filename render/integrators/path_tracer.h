// The unidirectional path tracer that `path` and `prb` share: the state a path carries, its
// start, and one vertex (emission found, emitter sampling, BSDF sampling, roulette), with
// what path replay needs from that vertex.
#pragma once

#include <kiln/random.h>
#include <kiln/render/integrator.h>
#include <kiln/render/interaction.h>
#include <kiln/render/properties.h>
#include <kiln/render/ray.h>

#include "core/recording.h"

namespace kiln::render {

class Scene;

/// Everything a path carries from one vertex to the next.
struct PathState {
  Ray3f ray;
  Color3f throughput, result;
  Float eta;
  UInt32 depth;
  Bool valid_ray;        ///< the path hit something visible (the film's alpha)
  Array3f prev_p;        ///< the previous vertex, for the MIS weight of emission found
  Float prev_bsdf_pdf;   ///< the density with which the previous BSDF sample was drawn
  Bool prev_bsdf_delta;  ///< the previous BSDF sample came from a delta lobe
  Bool active;
  PCG32 rng;

  auto fields() {
    return std::tie(ray, throughput, result, eta, depth, valid_ray, prev_p, prev_bsdf_pdf, prev_bsdf_delta, active,
                    rng);
  }
  auto fields() const {
    return std::tie(ray, throughput, result, eta, depth, valid_ray, prev_p, prev_bsdf_pdf, prev_bsdf_delta, active,
                    rng);
  }
};

/// What path replay needs from a vertex besides the next state.
struct VertexTerms {
  Bool continuing;        ///< the path goes on from this vertex (before roulette)
  Array3f wo;             ///< the BSDF sample's direction, local
  Bool delta;             ///< ... drawn from a delta lobe
  Color3f sample_weight;  ///< eval / pdf of the BSDF sample (delta: the lobe's weight)
};

/// Appends vertex `si` of paths `s` (where `active`) to the render's recording, if one was
/// asked for in `pass`: `wo` (local) the direction sampled on, `radiance` what leaves the
/// vertex towards the previous one (zero where unknown).
void record_vertex(RecordingPass pass, const PathState& s, const SurfaceInteraction& si, const Array3f& wo,
                   const Color3f& radiance, const Bool& active);

class PathTracer {
 public:
  /// Reads `max_depth` (-1: unbounded), `rr_depth` (5) and `hide_emitters` (false).
  explicit PathTracer(const Properties& props);

  uint32_t max_depth() const { return max_depth_; }
  /// The state of paths starting along `camera_ray`.
  PathState start(const Scene& scene, const PCG32& rng, const Ray3f& camera_ray, const Bool& active) const;
  /// One vertex: the next state (its `result` adds this vertex's emission and emitter
  /// sample).
  PathState bounce(const Scene& scene, const PathState& s) const;
  /// bounce() at `si`, what s.ray found (path replay finds it itself); `terms`, when given,
  /// receives what path replay needs.
  PathState shade(const Scene& scene, const PathState& s, const SurfaceInteraction& si, VertexTerms* terms) const;
  /// Runs start() and bounce() to the end: the final state. `name` names the loop.
  PathState trace(const Scene& scene, const PCG32& rng, const Ray3f& camera_ray, const Bool& active,
                  const char* name) const;
  /// A camera ray's sample: trace() to the end, the radiance (0 where nothing visible was
  /// hit) and its validity; `rng` is advanced. Black and invalid for max_depth 0.
  RaySample sample(const Scene& scene, PCG32& rng, const Ray3f& camera_ray, const Bool& active, const char* name) const;

 private:
  uint32_t max_depth_ = ~0u, rr_depth_ = 5;
  bool hide_emitters_ = false;
};

}  // namespace kiln::render
