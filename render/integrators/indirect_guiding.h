// The guiding distribution of the indirect visibility term (Mitsuba's `guiding` setting of
// its projective integrators): a piecewise-constant density over the term's sample space
// [0, 1)³ (the pixel position over the window sampled, and the number that picks where on a
// silhouette), learned from the term's integrand at training samples, so that a render's
// samples go where silhouettes are seen from the points the camera sees and matter.
//
// What it guarantees:
// - Every point of [0, 1)³ keeps a density of at least kUniformShare (that share of the
//   samples is spread uniformly), so a region the training missed is still sampled: the
//   term stays unbiased (Mitsuba clamps such regions to zero, a bias it accepts).
// - sample() returns a point and its weight, one over its density.
// - The boxes' count varies with what the training found, the kernels that sample them do
//   not (a fixed capacity).
#pragma once

#include <kiln/random.h>
#include <kiln/render/common.h>
#include <kiln/render/distribution.h>
#include <kiln/render/properties.h>

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace kiln::render {

/// How the sample space is partitioned: not at all (uniform samples), a regular grid, or
/// an octree refined where the integrand's mass is.
enum class GuidingKind { None, Grid, Octree };

/// Mitsuba's settings: `guiding` and `guiding_rounds` (rounds of training samples, each four
/// times as many as the term's own). `guiding_proj` is read and checked; see
/// indirect_guiding.cpp.
struct GuidingSettings {
  GuidingKind kind = GuidingKind::Octree;
  uint32_t rounds = 1;
};

/// The settings of `props`, checked (a clear error naming the parameter otherwise).
GuidingSettings guiding_settings(const Properties& props);

class IndirectGuiding {
 public:
  /// The share of samples spread uniformly over the whole space, whatever the training found.
  static constexpr float kUniformShare = 0.3f;
  /// The most boxes a distribution has: a grid's cells, an octree's leaves.
  static constexpr size_t kCapacity = 8192;

  /// Uniform sampling (no guiding, or training that found nothing).
  IndirectGuiding() = default;
  /// A distribution of `kind` from training points in [0, 1)³ and the integrand's magnitude
  /// at each (non-negative; `points` and `masses` of one size).
  IndirectGuiding(GuidingKind kind, const std::vector<std::array<float, 3>>& points, const std::vector<float>& masses);

  /// Whether samples are uniform.
  bool uniform() const { return boxes_.size() == 0; }
  /// How many boxes partition the space (0 when uniform).
  size_t box_count() const { return boxes_.size(); }
  /// A point of [0, 1)³ per lane of `rng`, and its weight (one over its density).
  std::pair<Array3f, Float> sample(PCG32& rng) const;

 private:
  Float lower_[3], upper_[3];  ///< each box's corners
  Float rcp_density_;          ///< each box's volume over its probability
  DiscreteDistribution boxes_;
};

}  // namespace kiln::render
