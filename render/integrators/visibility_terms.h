// The visibility terms of the projective integrators (projective.cpp): the derivatives an
// image has because silhouettes move, which no pixel's interior derivative contains. Each
// returns an image whose values are zero and whose derivatives are the term.
#pragma once

#include "integrators/indirect_guiding.h"

#include <kiln/render/integrator.h>

namespace kiln::render {

/// Primary visibility, `spp` samples per pixel of the crop window (0: none): the silhouettes
/// the camera sees, moving with shapes and with the camera (pose and field of view). The
/// radiance on either side is `radiance`'s along camera rays (a sampling integrator's
/// sample(), its image's estimator).
TensorXf primary_visibility(const Scene& scene, const Sensor& sensor, const SamplingIntegrator& radiance, uint32_t seed,
                            uint32_t spp);

/// Indirect visibility, `spp` samples per pixel (0: none): the silhouettes of moving shapes
/// seen from the points the camera sees (the first vertices of paths), which move shadows
/// and what those points see. The radiance arriving on either side is `arriving`'s along
/// rays leaving those points (the rest of the path: emission alone for direct light). The
/// boundary moves with the silhouette and with the point seen (a receiver that moves, or
/// the camera); `area_form` says how the interior terms hold the far end of a segment from
/// the point (`direct`'s: fixed where it is; `prb`'s: its direction fixed), which decides how
/// the point's motion moves the boundary. Silhouettes of shapes that do not move are sampled
/// only when the camera moves: a moving receiver's shadows from static occluders are not part
/// of the term. Each shape's samples are drawn from a distribution `guiding` learns from
/// training samples of the term (indirect_guiding.h).
TensorXf indirect_visibility(const Scene& scene, const Sensor& sensor, const SamplingIntegrator& arriving,
                             bool area_form, const GuidingSettings& guiding, uint32_t seed, uint32_t spp);

}  // namespace kiln::render
