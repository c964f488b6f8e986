// The continuous 2D distribution: its sampling against its density (chi-square), its
// density against Mitsuba 3.9.1's Hierarchical2D on the same grid, zero grids and errors.
#include <kiln/render/distribution_2d.h>

#include <gtest/gtest.h>

#include <cmath>

#include "chi2.h"
#include "plugin_test_support.h"

using namespace kiln;
using namespace kiln::render;

namespace {

/// A 4 x 3 grid with zeros and a peak.
const std::vector<float> kGrid = {0, 1, 2, 0.5f, 3, 0, 1, 4, 0.25f, 2, 0, 1};

chi2::Chi2Result sampling_test(const ContinuousDistribution2D& distribution, size_t samples = 1000000,
                               size_t res = 32) {
  return chi2::chi2_test<Array2f>([&](const Array2f& u) { return distribution.sample(u, Bool(true)).first; },
                                  [&](const Array2f& p) { return distribution.eval(p, Bool(true)); },
                                  chi2::square_chart(), samples, res);
}

}  // namespace

TEST(Distribution2D, SamplingMatchesItsDensity) {
  auto r = sampling_test(ContinuousDistribution2D(kGrid, 4, 3));
  EXPECT_TRUE(r.passed) << r.message;
}

TEST(Distribution2D, SamplingMatchesItsDensityOnALargerGrid) {
  std::vector<float> grid(17 * 9);
  for (size_t i = 0; i < grid.size(); ++i) grid[i] = float((i * 7919) % 13) * (i % 5 == 0 ? 0.0f : 1.0f);
  grid[40] = 200;  // a hot spot
  auto r = sampling_test(ContinuousDistribution2D(grid, 17, 9));
  EXPECT_TRUE(r.passed) << r.message;
}

TEST(Distribution2D, SamplingMatchesItsDensityOnTheInterpreter) {
  kiln::render::test::on_interpreter([] {
    auto r = sampling_test(ContinuousDistribution2D(kGrid, 4, 3), 100000, 16);
    EXPECT_TRUE(r.passed) << r.message;
  });
}

TEST(Distribution2D, DensityMatchesMitsubasHierarchical2D) {
  // mitsuba.Hierarchical2D0(the grid as a 3 x 4 array).eval(p)
  ContinuousDistribution2D distribution(kGrid, 4, 3);
  Array2f p(Float{0, 0.5f, 0.2f, 0.9f, 1, 0.33f}, Float{0, 0.5f, 0.7f, 0.1f, 1, 0.99f});
  std::vector<float> expected = {0, 0.40336135f, 1.00033617f, 1.11327744f, 0.806722701f, 1.56782532f};
  Float pdf = distribution.eval(p, Bool(true));
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(pdf.read(i), expected[i], 1e-6f) << "point " << i;
}

TEST(Distribution2D, SampleReturnsTheDensityOfItsPoint) {
  ContinuousDistribution2D distribution(kGrid, 4, 3);
  PCG32 rng(1000);
  auto [p, pdf] = distribution.sample(Array2f(rng.next_float32(), rng.next_float32()), Bool(true));
  std::vector<float> expected = distribution.eval(p, Bool(true)).to_vector(), got = pdf.to_vector();
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_GT(got[i], 0.0f) << "sample " << i;
    ASSERT_NEAR(got[i], expected[i], 1e-6f) << "sample " << i;
  }
  // Inactive lanes have no density.
  EXPECT_EQ(distribution.eval(Array2f(0.5f, 0.5f), Bool(false)).read(0), 0.0f);
}

TEST(Distribution2D, AllZeroGridHasNoDensity) {
  ContinuousDistribution2D distribution(std::vector<float>(6, 0.0f), 3, 2);
  auto [p, pdf] = distribution.sample(Array2f(Float{0.25f, 0.9f}, Float{0.5f, 0.1f}), Bool(true));
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(pdf.read(i), 0.0f);
    EXPECT_TRUE(std::isfinite(p.x.read(i)) && std::isfinite(p.y.read(i)));
  }
}

TEST(Distribution2D, Errors) {
  EXPECT_THROW(ContinuousDistribution2D(std::vector<float>(3, 1.0f), 3, 1), ValueError);
  EXPECT_THROW(ContinuousDistribution2D(std::vector<float>(5, 1.0f), 3, 2), ValueError);
  EXPECT_THROW(ContinuousDistribution2D({1, 2, -1, 3}, 2, 2), ValueError);
  EXPECT_THROW(ContinuousDistribution2D({1, 2, NAN, 3}, 2, 2), ValueError);
  EXPECT_THROW(ContinuousDistribution2D({1, 2, INFINITY, 3}, 2, 2), ValueError);
}
