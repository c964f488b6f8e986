// Discrete distributions: a cumulative table searched per lane.
#include <kiln/construct.h>
#include <kiln/errors.h>
#include <kiln/render/distribution.h>
#include <kiln/search.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace kiln::render {

DiscreteDistribution::DiscreteDistribution(const std::vector<float>& weights, size_t capacity)
    : size_(weights.size()), capacity_(std::max(capacity, weights.size())) {
  if (weights.empty()) throw ValueError("kiln.render: DiscreteDistribution: no weights");
  if (capacity_ > UINT32_MAX)
    throw ValueError("kiln.render: DiscreteDistribution: " + std::to_string(capacity_) + " items; at most 4294967295");
  std::vector<float> cdf{0.0f};
  double total = 0.0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (!(weights[i] >= 0.0f) || !std::isfinite(weights[i]))
      throw ValueError("kiln.render: DiscreteDistribution: weight " + std::to_string(i) + " is " +
                       std::to_string(weights[i]) + "; weights must be finite and not negative");
    total += weights[i];
    cdf.push_back(float(total));
  }
  if (!(total > 0.0)) throw ValueError("kiln.render: DiscreteDistribution: every weight is zero");
  sum_ = float(total);
  normalization_ = float(1.0 / total);
  cdf.resize(capacity_ + 1, sum_);
  std::vector<float> probabilities(weights.size());
  for (size_t i = 0; i < weights.size(); ++i) probabilities[i] = float(double(weights[i]) / total);
  probabilities_ = Float::from(probabilities.data(), probabilities.size());
  cdf_ = Float::from(cdf.data(), cdf.size());
}

Float DiscreteDistribution::probability(const UInt32& index, const Bool& active) const {
  return gather(probabilities_, index, active);
}

UInt32 DiscreteDistribution::sample(const Float& sample, const Bool& active) const {
  Float target = sample * opaque<Float>(sum_);
  // The first item whose upper cumulative bound exceeds the target; zero-weight items
  // have equal bounds and are skipped, as are the entries past the last item (all `sum`).
  UInt32 index =
      binary_search(0, uint32_t(capacity_), [&](const UInt32& i) { return gather(cdf_, i + 1u, active) <= target; });
  return min(index, opaque<UInt32>(uint32_t(size_ - 1)));
}

std::pair<UInt32, Float> DiscreteDistribution::sample_reuse(const Float& sample, const Bool& active) const {
  UInt32 index = this->sample(sample, active);
  Float lower = gather(cdf_, index, active), upper = gather(cdf_, index + 1u, active);
  Float reused = (sample * opaque<Float>(sum_) - lower) / (upper - lower);
  return {index, min(max(reused, Float(0.0f)), Float(0x1.fffffep-1f))};
}

}  // namespace kiln::render
