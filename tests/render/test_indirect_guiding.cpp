// The indirect visibility term's guiding distribution (render/integrators/indirect_guiding.h):
// its samples' weights are one over their density (the mean weight is the space's volume, and
// weighted samples integrate a box's indicator to its volume), the samples crowd where the
// training found mass, and training that found nothing samples uniformly.
#include "integrators/indirect_guiding.h"

#include <gtest/gtest.h>

#include <kiln/math.h>

using namespace kiln;
using namespace kiln::render;

namespace {

using Corner = std::array<float, 3>;

/// Where the training finds mass: a small box (volume 0.001).
constexpr Corner kLower{0.1f, 0.5f, 0.7f}, kUpper{0.3f, 0.6f, 0.75f};

bool inside(const Corner& p) {
  for (int a = 0; a < 3; ++a)
    if (p[a] < kLower[a] || p[a] >= kUpper[a]) return false;
  return true;
}

/// Training points on a regular lattice with mass 1 in the box, 0 elsewhere.
IndirectGuiding trained(GuidingKind kind) {
  std::vector<Corner> points;
  std::vector<float> masses;
  constexpr int n = 40;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k) {
        Corner p{(i + 0.5f) / n, (j + 0.5f) / n, (k + 0.5f) / n};
        points.push_back(p);
        masses.push_back(inside(p) ? 1.0f : 0.0f);
      }
  return IndirectGuiding(kind, points, masses);
}

struct Moments {
  double weight = 0, weighted_box = 0, share_in_box = 0, weight_spread = 0;
};

Moments moments(const IndirectGuiding& guiding, size_t count) {
  PCG32 rng(count);
  auto [point, weight] = guiding.sample(rng);
  std::vector<float> x = point.x.to_vector(), y = point.y.to_vector(), z = point.z.to_vector(), w = weight.to_vector();
  Moments m;
  for (size_t i = 0; i < count; ++i) {
    Corner p{x[i], y[i], z[i]};
    for (float c : p) EXPECT_TRUE(c >= 0.0f && c < 1.0f) << c;
    m.weight += w[i];
    m.weight_spread += double(w[i]) * w[i];
    if (inside(p)) {
      m.weighted_box += w[i];
      m.share_in_box += 1;
    }
  }
  m.weight /= count;
  m.weighted_box /= count;
  m.share_in_box /= count;
  m.weight_spread = std::sqrt(m.weight_spread / count - m.weight * m.weight);
  return m;
}

class Guiding : public ::testing::TestWithParam<GuidingKind> {};

TEST_P(Guiding, WeightsAreOneOverTheDensity) {
  IndirectGuiding guiding = trained(GetParam());
  ASSERT_FALSE(guiding.uniform());
  EXPECT_LE(guiding.box_count(), IndirectGuiding::kCapacity);
  constexpr size_t count = 400000;
  Moments m = moments(guiding, count);
  // Within four standard errors of the weights' mean.
  double error = 4.0 * m.weight_spread / std::sqrt(double(count));
  EXPECT_NEAR(m.weight, 1.0, error);
  EXPECT_NEAR(m.weighted_box, 0.2 * 0.1 * 0.05, error);
  // Most samples go where the mass is (uniform sampling: 0.1%).
  EXPECT_GT(m.share_in_box, 0.2);
}

INSTANTIATE_TEST_SUITE_P(Kinds, Guiding, ::testing::Values(GuidingKind::Grid, GuidingKind::Octree));

TEST(Guiding, UniformWithoutMassOrWhenOff) {
  std::vector<Corner> points{{0.5f, 0.5f, 0.5f}, {0.1f, 0.2f, 0.3f}};
  EXPECT_TRUE(IndirectGuiding(GuidingKind::Octree, points, {0.0f, 0.0f}).uniform());
  EXPECT_TRUE(IndirectGuiding(GuidingKind::None, points, {1.0f, 2.0f}).uniform());
  EXPECT_TRUE(IndirectGuiding().uniform());
  Moments m = moments(IndirectGuiding(), 1000);
  EXPECT_DOUBLE_EQ(m.weight, 1.0);
}

}  // namespace
