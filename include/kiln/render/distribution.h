// A discrete distribution over n items (Mitsuba 3's DiscreteDistribution): what area lights
// use to pick a triangle in proportion to its area, and environment maps a row or a texel.
//
// What an implementation guarantees:
// - Item i is drawn with probability weights[i] / sum(weights); items of zero weight are
//   never drawn (for samples in [0, 1)).
// - sample_reuse() returns the item and the sample rescaled to [0, 1) within the item's
//   interval, so one uniform number can drive a second choice.
// - The cumulative table is a Kiln array evaluated once: kernels read it as data, and its sum
//   and size as kernel parameters (opaque). The search's step count is part of a kernel's
//   shape, fixed by the capacity, so distributions rebuilt every render with a varying item
//   count (a silhouette's edges, the guiding's boxes) share their kernels from the first
//   render on.
#pragma once

#include <kiln/array.h>

#include <utility>
#include <vector>

namespace kiln::render {

class DiscreteDistribution {
 public:
  DiscreteDistribution() = default;
  /// Throws ValueError when a weight is negative or not finite, or all are zero. `capacity`
  /// (at least the number of weights; 0: that number) is the item count searched over.
  explicit DiscreteDistribution(const std::vector<float>& weights, size_t capacity = 0);

  size_t size() const { return size_; }
  /// The sum of the weights.
  float sum() const { return sum_; }
  /// 1 / sum(): the density of a uniform choice weighted by item measure (1 / total area).
  float normalization() const { return normalization_; }

  /// The probability of drawing item `index` (its weight over the sum).
  Float probability(const UInt32& index, const Bool& active = Bool(true)) const;
  /// The item whose cumulative interval holds `sample`.
  UInt32 sample(const Float& sample, const Bool& active = Bool(true)) const;
  /// The item and `sample` rescaled within its interval.
  std::pair<UInt32, Float> sample_reuse(const Float& sample, const Bool& active = Bool(true)) const;

 private:
  size_t size_ = 0, capacity_ = 0;
  float sum_ = 0, normalization_ = 0;
  Float probabilities_;  ///< weight / sum per item (kept: differences of the cdf lose precision)
  Float cdf_;            ///< capacity + 1 entries: 0, w0, w0 + w1, ..., sum, sum ... (in double, stored as float)
};

}  // namespace kiln::render
