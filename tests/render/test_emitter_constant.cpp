// The constant environment: its sampling against its density (chi-square), values Mitsuba
// 3.9.1 printed (scalar_rgb), traverse() keys and errors.
#include <gtest/gtest.h>

#include "chi2.h"
#include "plugin_test_support.h"

using namespace kiln;
using namespace kiln::render;
using namespace kiln::render::test;

TEST(EmitterConstant, SamplingMatchesItsDensity) {
  auto light = emitter("constant");
  Array3f ref(0.5f, -1.0f, 2.0f);
  auto r = chi2::chi2_test<Array3f>(
      [&](const Array2f& u) { return light->sample_direction(ref, u, Bool(true)).first.d; },
      [&](const Array3f& d) { return light->pdf_direction(ref, towards(d), Bool(true)); }, chi2::sphere_chart());
  EXPECT_TRUE(r.passed) << r.message;
}

namespace {

/// A scene whose shapes' bounding sphere has center (1, 0, 0) and radius 2√3 (Mitsuba:
/// a sphere of radius 2 at (1, 0, 0)), with mitsuba.load_dict({'type': 'constant',
/// 'radiance': rgb [0.5, 1, 2]}) in it, sampled with (0.3, 0.6) from two points.
void check_against_mitsuba() {
  auto light = emitter("constant", {{"radiance", Color3d{0.5, 1, 2}}});
  light->set_scene_bounds({1, 0, 0}, 3.46410155f);
  Array3f ref(Float{0, 10}, Float{0, 0}, Float{0, 0});
  auto [ds, weight] = light->sample_direction(ref, Array2f(0.3f, 0.6f), Bool(true));
  expect_color(ds.d, 0, {-0.302773744f, 0.931841195f, -0.200000048f}, 1e-6f, "d");
  expect_color(ds.p, 0, {-2.09786558f, 6.45656204f, -1.38576484f}, 1e-6f, "p");
  expect_color(ds.p, 1, {4.55007267f, 16.7731419f, -3.60000086f}, 1e-6f, "p");
  expect_color(ds.n, 0, {0.302773744f, -0.931841195f, 0.200000048f}, 1e-6f, "n");
  EXPECT_NEAR(ds.dist.read(0), 6.92882252f, 1e-6f);
  EXPECT_NEAR(ds.dist.read(1), 18.0f, 1e-6f);
  EXPECT_NEAR(ds.pdf.read(0), 0.0795774683f, 1e-9f);
  EXPECT_FALSE(ds.delta.read(0));
  expect_color(weight, 0, {6.28318548f, 12.566371f, 25.1327419f}, 1e-6f, "weight");
  EXPECT_NEAR(light->pdf_direction(ref, ds, Bool(true)).read(0), 0.0795774683f, 1e-9f);
  expect_color(light->eval(looking_along(Array3f(0.0f, 0.0f, 1.0f)), Bool(true)), 0, {0.5f, 1, 2}, 0, "eval");
}

}  // namespace

TEST(EmitterConstant, MatchesMitsuba) { check_against_mitsuba(); }

TEST(EmitterConstant, MatchesMitsubaOnTheInterpreter) { on_interpreter(check_against_mitsuba); }

TEST(EmitterConstant, WeightIsEvalOverPdf) {
  auto light = emitter("constant", {{"radiance", Color3d{0.25, 0.5, 3}}});
  Array3f ref(0.0f, 0.0f, 0.0f);
  PCG32 rng(64);
  auto [ds, weight] = light->sample_direction(ref, Array2f(rng.next_float32(), rng.next_float32()), Bool(true));
  Color3f expected = light->eval(looking_along(ds.d), Bool(true)) / light->pdf_direction(ref, ds, Bool(true));
  for (size_t i = 0; i < 64; ++i) expect_color(weight, i, lane(expected, i), 1e-6f, "weight");
}

TEST(EmitterConstant, FlagsKeysAndErrors) {
  auto light = emitter("constant");
  EXPECT_EQ(light->flags(), emitter_flags::kInfinite);
  EXPECT_TRUE(light->is_environment());
  EXPECT_EQ(parameter_keys(*light), (std::vector<std::string>{"radiance.value"}));
  EXPECT_THROW(emitter("constant", {{"radiance", Color3d{-1, 0, 0}}}), ValueError);
  EXPECT_THROW(emitter("constant", {{"radiance", std::shared_ptr<Object>(texture("checkerboard"))}}), ValueError);
}
