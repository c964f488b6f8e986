// Rendering with derivatives (`kr.render`): the image of a scene, connected to the scene
// parameters that carry derivatives.
//
// What an implementation guarantees:
// - Without parameters that carry derivatives, render() is the integrator's render.
// - With them (enable_grad() on values assigned through SceneParameters), the image is the
//   integrator's render at `seed` and `spp`, and its derivatives (forward and reverse) with
//   respect to those parameters come from a second render at `seed_grad` and `spp_grad`,
//   run only when a traversal reaches the image. Using other random numbers for the
//   derivatives keeps a loss that multiplies the image by its own derivative unbiased.
// - The gradient render differentiates the integrator's code by plain AD (detached
//   sampling: sampled directions, roulette and MIS weights carry no derivatives), with the
//   parameters set to fresh leaves through SceneParameters for its duration
//   (gradient_parameters.h): what plugins derive from them is derived again, with
//   derivatives. The scene is left as it was.
// - Float, Array3f and tensor parameters are differentiable, mesh normals and texture
//   coordinates included. A parameter carrying derivatives that render() cannot give
//   (flagged non-differentiable, or needing visibility terms) is a ValueError naming it,
//   never a silent zero.
#pragma once

#include <kiln/render/records.h>
#include <kiln/render/scene.h>

#include <cstdint>
#include <memory>
#include <optional>

namespace kiln::render {

struct RenderOptions {
  uint32_t seed = 0;
  uint32_t spp = 0;                   ///< 0: the sensor's sampler's count
  std::optional<uint32_t> seed_grad;  ///< derived from `seed` when empty (gradient_seed)
  std::optional<uint32_t> spp_grad;   ///< `spp` when empty
  /// Receives per-vertex records of this render and of its reverse-mode derivatives
  /// (records.h says which integrators record).
  std::shared_ptr<PathRecorder> recorder;
  /// Renders with this integrator instead of the scene's (Mitsuba's render(..., integrator=)).
  std::shared_ptr<const Integrator> integrator;
};

/// The seed of the gradient render when none is given: a hash of `seed`, so that it differs
/// from `seed` and from the seeds of nearby renders.
uint32_t gradient_seed(uint32_t seed);

/// Renders `scene` through `sensor` (see the guarantees above). The image keeps the scene
/// alive while it can still be differentiated; derivatives use the parameters' values at
/// the time of the render.
TensorXf render(const std::shared_ptr<Scene>& scene, const std::shared_ptr<const Sensor>& sensor,
                const RenderOptions& options);

}  // namespace kiln::render
