// The discrete distribution: its choices against its weights (a Pearson chi-square test), with
// and without a search capacity, zero weights never drawn, kernels shared across item counts
// of one capacity, and its errors.
#include <kiln/render/distribution.h>

#include <gtest/gtest.h>

#include <cmath>

#include "chi2.h"
#include "expect_error.h"

using namespace kiln;
using namespace kiln::render;

namespace {

const std::vector<float> kWeights = {0, 1, 2, 0.5f, 3, 0, 1, 4, 0.25f};

/// Uniform numbers in [0, 1) on a stratified grid, shuffled so neighbours are unrelated.
Float uniform_samples(uint32_t count) {
  UInt32 i = arange<UInt32>(count);
  return cast<float>(i * 2654435761u % count) * (1.0f / float(count)) + 0.5f / float(count);
}

/// The p-value of the item counts against the weights (items of zero weight must be empty:
/// a sample there returns p = 0).
double chi2_p_value(const DiscreteDistribution& distribution, const std::vector<float>& weights, uint32_t count) {
  UInt32 index = distribution.sample(uniform_samples(count));
  std::vector<double> counts(weights.size() + 1, 0.0);
  for (uint32_t i : index.to_vector()) counts[std::min<size_t>(i, weights.size())] += 1;
  double total = 0.0;
  for (float w : weights) total += w;
  double statistic = 0.0;
  int dof = -1;
  for (size_t i = 0; i < weights.size(); ++i) {
    double expected = count * weights[i] / total;
    if (expected == 0.0) {
      if (counts[i] > 0) return 0.0;
      continue;
    }
    statistic += (counts[i] - expected) * (counts[i] - expected) / expected;
    ++dof;
  }
  if (counts.back() > 0) return 0.0;  // an index past the items
  return chi2::gamma_q(dof / 2.0, statistic / 2.0);
}

}  // namespace

TEST(DiscreteDistribution, ChoicesFollowTheWeights) {
  EXPECT_GT(chi2_p_value(DiscreteDistribution(kWeights), kWeights, 1000003), 0.01);
}

TEST(DiscreteDistribution, ChoicesFollowTheWeightsWithACapacityBeyondTheItems) {
  for (size_t capacity : {9, 10, 16, 17, 1000})
    EXPECT_GT(chi2_p_value(DiscreteDistribution(kWeights, capacity), kWeights, 1000003), 0.01)
        << "capacity " << capacity;
}

TEST(DiscreteDistribution, SamplesAtTheEndsDrawTheFirstAndLastItemsOfWeight) {
  DiscreteDistribution distribution(kWeights, 64);
  std::vector<uint32_t> index = distribution.sample(Float{0.0f, 0x1.fffffep-1f, 1.0f}).to_vector();
  EXPECT_EQ(index[0], 1u);
  EXPECT_EQ(index[1], 8u);
  EXPECT_EQ(index[2], 8u);  // 1 itself (outside [0, 1)) stays on the last item
}

TEST(DiscreteDistribution, ReusedSamplesAreUniformWithinTheirItem) {
  DiscreteDistribution distribution({1, 3}, 8);
  auto [index, reused] = distribution.sample_reuse(Float{0.125f, 0.5f, 0.625f});
  EXPECT_EQ(index.to_vector(), (std::vector<uint32_t>{0, 1, 1}));
  std::vector<float> u = reused.to_vector();
  EXPECT_NEAR(u[0], 0.5f, 1e-6f);
  EXPECT_NEAR(u[1], 1.0f / 3.0f, 1e-6f);
  EXPECT_NEAR(u[2], 0.5f, 1e-6f);
}

TEST(DiscreteDistribution, ItemCountsOfOneCapacityShareTheirKernel) {
  Float u = uniform_samples(1000);
  auto launch = [&](const std::vector<float>& weights) {
    UInt32 index = DiscreteDistribution(weights, 4096).sample(u);
    kernel_history(true);
    eval(index);
    return kernel_history().back();
  };
  launch(std::vector<float>(700, 1.0f));
  launch(std::vector<float>(1500, 2.0f));  // literals changed: generalized once
  KernelLaunch third = launch(std::vector<float>(3000, 0.5f));
  EXPECT_EQ(third.source, KernelSource::Memory) << third.reason;
}

TEST(DiscreteDistribution, RefusesBadWeights) {
  kiln::render::test::expect_error<ValueError>([] { DiscreteDistribution(std::vector<float>{}); }, {"no weights"});
  kiln::render::test::expect_error<ValueError>([] { DiscreteDistribution({1, -1}); }, {"weight 1 is -1"});
  kiln::render::test::expect_error<ValueError>([] { DiscreteDistribution({1, NAN}); }, {"weight 1 is nan"});
  kiln::render::test::expect_error<ValueError>([] { DiscreteDistribution({0, 0}); }, {"every weight is zero"});
}

TEST(DiscreteDistribution, ProbabilitiesAreTheWeightsOverTheirSum) {
  DiscreteDistribution distribution(kWeights, 64);
  std::vector<float> p = distribution.probability(arange<UInt32>(kWeights.size())).to_vector();
  for (size_t i = 0; i < kWeights.size(); ++i) EXPECT_NEAR(p[i], kWeights[i] / 11.75f, 1e-7f) << "item " << i;
}
