// Discrete distributions: a cumulative table searched per lane, and alias tables.
#include <kiln/construct.h>
#include <kiln/errors.h>
#include <kiln/math.h>
#include <kiln/render/distribution.h>
#include <kiln/search.h>

#include <cmath>
#include <string>

namespace kiln::render {

namespace {

/// The sum of `weights`; ValueError naming `what` unless they are finite, not negative and
/// not all zero.
double checked_sum(const std::vector<float>& weights, const char* what) {
  if (weights.empty()) throw ValueError(std::string("kiln.render: ") + what + ": no weights");
  double total = 0.0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (!(weights[i] >= 0.0f) || !std::isfinite(weights[i]))
      throw ValueError(std::string("kiln.render: ") + what + ": weight " + std::to_string(i) + " is " +
                       std::to_string(weights[i]) + "; weights must be finite and not negative");
    total += weights[i];
  }
  if (!(total > 0.0)) throw ValueError(std::string("kiln.render: ") + what + ": every weight is zero");
  return total;
}

}  // namespace

DiscreteDistribution::DiscreteDistribution(const std::vector<float>& weights) : size_(weights.size()) {
  double total = checked_sum(weights, "DiscreteDistribution");
  std::vector<float> cdf{0.0f};
  double running = 0.0;
  for (float weight : weights) cdf.push_back(float(running += weight));
  sum_ = float(total);
  normalization_ = float(1.0 / total);
  cdf_ = Float::from(cdf.data(), cdf.size());
}

UInt32 DiscreteDistribution::sample(const Float& sample, const Bool& active) const {
  Float target = sample * sum_;
  // The first item whose upper cumulative bound exceeds the target; zero-weight items
  // have equal bounds and are skipped.
  UInt32 index =
      binary_search(0, uint32_t(size_), [&](const UInt32& i) { return gather(cdf_, i + 1u, active) <= target; });
  return min(index, UInt32(uint32_t(size_ - 1)));
}

std::pair<UInt32, Float> DiscreteDistribution::sample_reuse(const Float& sample, const Bool& active) const {
  UInt32 index = this->sample(sample, active);
  Float lower = gather(cdf_, index, active), upper = gather(cdf_, index + 1u, active);
  Float reused = (sample * sum_ - lower) / (upper - lower);
  return {index, min(max(reused, Float(0.0f)), Float(0x1.fffffep-1f))};
}

AliasTable::AliasTable(const std::vector<float>& weights) : size_(weights.size()) {
  double total = checked_sum(weights, "AliasTable");
  size_t n = weights.size();
  // Vose: items scaled to mean 1; each short one is topped up by a long one, its alias.
  std::vector<double> scaled(n);
  std::vector<float> threshold(n, 1.0f), probability(n);
  std::vector<uint32_t> alias(n), small, large;
  for (size_t i = 0; i < n; ++i) {
    scaled[i] = weights[i] * double(n) / total;
    probability[i] = float(weights[i] / total);
    alias[i] = uint32_t(i);
    (scaled[i] < 1.0 ? small : large).push_back(uint32_t(i));
  }
  while (!small.empty() && !large.empty()) {
    uint32_t s = small.back(), l = large.back();
    small.pop_back();
    threshold[s] = float(scaled[s]);
    alias[s] = l;
    scaled[l] -= 1.0 - scaled[s];
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // What is left holds 1 up to rounding: kept whole.
  threshold_ = Float::from(threshold.data(), n);
  probability_ = Float::from(probability.data(), n);
  alias_ = UInt32::from(alias.data(), n);
}

std::tuple<UInt32, Float, Float> AliasTable::sample(const Array2f& sample) const {
  UInt32 last = opaque<UInt32>(uint32_t(size_ - 1));
  UInt32 column = min(cast<uint32_t>(sample.x * opaque<Float>(float(size_))), last);
  Float threshold = gather(threshold_, column);
  Bool keep = sample.y < threshold;
  UInt32 item = select(keep, column, gather(alias_, column));
  Float reused = select(keep, sample.y / threshold, (sample.y - threshold) / (1.0f - threshold));
  return {item, min(max(reused, Float(0.0f)), Float(0x1.fffffep-1f)), gather(probability_, item)};
}

}  // namespace kiln::render
