// The warps of kiln.render against their densities: a chi-square goodness-of-fit test per
// pair on the JIT (and one on the reference interpreter), and negative controls that the
// test rejects a wrong density and one off by a few percent.
#include <kiln/render/warp.h>

#include <gtest/gtest.h>

#include "chi2.h"

using namespace kiln;
using namespace kiln::render;
using chi2::chi2_test;

namespace {
/// The chi-square test of a direction warp against its density, on the sphere's chart.
chi2::Chi2Result test_directions(const std::function<Array3f(const Array2f&)>& sample,
                                 const std::function<Float(const Array3f&)>& pdf, size_t samples = 1000000,
                                 size_t res = 32) {
  return chi2_test<Array3f>(sample, pdf, chi2::sphere_chart(), samples, res);
}
}  // namespace

TEST(Chi2, GammaQMatchesKnownValues) {
  EXPECT_NEAR(chi2::gamma_q(1.0, 2.0), std::exp(-2.0), 1e-12);
  EXPECT_NEAR(chi2::gamma_q(5.0, 18.307 / 2), 0.05, 1e-4);    // chi-square, 10 dof, 95th percentile
  EXPECT_NEAR(chi2::gamma_q(50.0, 124.342 / 2), 0.05, 1e-4);  // 100 dof
}

TEST(Warp, UniformDiskConcentric) {
  auto r = chi2_test<Array2f>(warp::square_to_uniform_disk_concentric, warp::square_to_uniform_disk_concentric_pdf,
                              chi2::disk_chart());
  EXPECT_TRUE(r.passed) << r.message;
}

TEST(Warp, UniformTriangle) {
  auto r =
      chi2_test<Array2f>(warp::square_to_uniform_triangle, warp::square_to_uniform_triangle_pdf, chi2::square_chart());
  EXPECT_TRUE(r.passed) << r.message;
}

TEST(Warp, UniformSphere) {
  auto r = test_directions(warp::square_to_uniform_sphere, warp::square_to_uniform_sphere_pdf);
  EXPECT_TRUE(r.passed) << r.message;
}

TEST(Warp, UniformHemisphere) {
  auto r = test_directions(warp::square_to_uniform_hemisphere, warp::square_to_uniform_hemisphere_pdf);
  EXPECT_TRUE(r.passed) << r.message;
}

TEST(Warp, CosineHemisphere) {
  auto r = test_directions(warp::square_to_cosine_hemisphere, warp::square_to_cosine_hemisphere_pdf);
  EXPECT_TRUE(r.passed) << r.message;
}

TEST(Warp, CosineHemisphereOnTheInterpreter) {
  set_flag(Flag::Interpreter, true);
  auto r = test_directions(warp::square_to_cosine_hemisphere, warp::square_to_cosine_hemisphere_pdf, 100000, 16);
  set_flag(Flag::Interpreter, false);
  EXPECT_TRUE(r.passed) << r.message;
}

TEST(Warp, UniformCone) {
  Float cos_cutoff(0.7f);
  auto r = test_directions([&](const Array2f& u) { return warp::square_to_uniform_cone(u, cos_cutoff); },
                           [&](const Array3f& v) { return warp::square_to_uniform_cone_pdf(v, cos_cutoff); });
  EXPECT_TRUE(r.passed) << r.message;
}

// Negative controls: the test must reject a density that does not match the samples.
TEST(Chi2, RejectsTheWrongDensity) {
  auto r = test_directions(warp::square_to_cosine_hemisphere, warp::square_to_uniform_hemisphere_pdf);
  EXPECT_FALSE(r.passed) << r.message;
}

TEST(Chi2, RejectsADensityOffByAFewPercent) {
  // 3% too high where x > 0 and 3% too low where x < 0: still integrates to one.
  auto skewed = [](const Array3f& v) {
    return warp::square_to_cosine_hemisphere_pdf(v) * select(v.x > 0.0f, Float(1.03f), Float(0.97f));
  };
  auto r = test_directions(warp::square_to_cosine_hemisphere, skewed);
  EXPECT_FALSE(r.passed) << r.message;
}

TEST(Chi2, RejectsSamplesWhereTheDensityIsZero) {
  auto r = test_directions(warp::square_to_uniform_sphere, warp::square_to_uniform_hemisphere_pdf);
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.message.find("where the density is zero"), std::string::npos) << r.message;
}
