// The point light against values Mitsuba 3.9.1 printed (scalar_rgb), its traverse() keys and
// its errors.
#include <gtest/gtest.h>

#include "plugin_test_support.h"

using namespace kiln;
using namespace kiln::render;
using namespace kiln::render::test;

namespace {

/// sample_direction() from two reference points as Mitsuba computes it: mitsuba.load_dict(
/// {'type': 'point', 'position': [1, 2, 3], 'intensity': rgb [1, 2, 3]}).sample_direction().
void check_against_mitsuba() {
  auto light = emitter("point", {{"position", Vector3d{1, 2, 3}}, {"intensity", Color3d{1, 2, 3}}});
  Array3f ref(Float{0.0f, 2.0f}, Float{0.0f, -1.0f}, Float{0.0f, 0.5f});
  auto [ds, weight] = light->sample_direction(ref, Array2f(0.3f, 0.6f), Bool(true));
  expect_color(ds.d, 0, {0.267261237f, 0.534522474f, 0.801783681f}, 1e-6f, "d");
  expect_color(ds.d, 1, {-0.248069465f, 0.744208395f, 0.620173693f}, 1e-6f, "d");
  EXPECT_NEAR(ds.dist.read(0), 3.7416575f, 1e-6f);
  EXPECT_NEAR(ds.dist.read(1), 4.03112888f, 1e-6f);
  expect_color(weight, 0, {0.0714285672f, 0.142857134f, 0.214285702f}, 1e-6f, "weight");
  expect_color(weight, 1, {0.0615384579f, 0.123076916f, 0.184615374f}, 1e-6f, "weight");
  expect_color(ds.p, 0, {1, 2, 3}, 0, "p");
  EXPECT_EQ(ds.pdf.read(0), 1.0f);
  EXPECT_TRUE(ds.delta.read(0));
}

}  // namespace

TEST(EmitterPoint, MatchesMitsuba) { check_against_mitsuba(); }

TEST(EmitterPoint, MatchesMitsubaOnTheInterpreter) { on_interpreter(check_against_mitsuba); }

TEST(EmitterPoint, PositionFromToWorld) {
  // Mitsuba: to_world = translate([-1, 0.5, 2]) @ rotate([0, 1, 0], 30), intensity 5: the
  // light sits at the translation; the weight from the origin is 5 / 5.25.
  Matrix4d to_world = affine_rows({0.866025, 0, 0.5, -1, 0, 1, 0, 0.5, -0.5, 0, 0.866025, 2});
  auto light = emitter("point", {{"to_world", to_world}, {"intensity", 5.0}});
  auto [ds, weight] = light->sample_direction(Array3f(0.0f, 0.0f, 0.0f), Array2f(0.3f, 0.6f), Bool(true));
  expect_color(ds.p, 0, {-1, 0.5f, 2}, 0, "p");
  expect_color(weight, 0, {0.952380896f, 0.952380896f, 0.952380896f}, 1e-6f, "weight");
}

TEST(EmitterPoint, IsADeltaLightWithoutDensityOrRadiance) {
  auto light = emitter("point");
  EXPECT_EQ(light->flags(), emitter_flags::kDeltaPosition);
  EXPECT_FALSE(light->is_environment());
  Array3f d(0.0f, 0.0f, 1.0f);
  EXPECT_EQ(light->pdf_direction(Array3f(1.0f, 1.0f, 1.0f), towards(d), Bool(true)).read(0), 0.0f);
  expect_color(light->eval(looking_along(d), Bool(true)), 0, {0, 0, 0}, 0, "eval");
  // Inactive lanes get no weight.
  auto [ds, weight] = light->sample_direction(Array3f(1.0f, 1.0f, 1.0f), Array2f(0.5f, 0.5f), Bool(false));
  expect_color(weight, 0, {0, 0, 0}, 0, "inactive weight");
}

TEST(EmitterPoint, TraverseKeysAreMitsubas) {
  auto light = emitter("point", {{"intensity", Color3d{1, 2, 3}}});
  EXPECT_EQ(parameter_keys(*light), (std::vector<std::string>{"position", "intensity.value"}));
}

TEST(EmitterPoint, Errors) {
  Matrix4d identity = affine_rows({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0});
  expect_error<ValueError>([&] { emitter("point", {{"position", Vector3d{0, 0, 0}}, {"to_world", identity}}); },
                           {"'position' (test:position) and 'to_world' exclude each other"});
  expect_error<ValueError>([] { emitter("point", {{"intensity", Color3d{1, -2, 3}}}); },
                           {"emitter 'point' (test): 'intensity' (test:intensity) must not be negative"});
  expect_error<ValueError>([] { emitter("point", {{"intensity", -1.0}}); }, {"must not be negative"});
  auto checker = texture("checkerboard");
  expect_error<ValueError>([&] { emitter("point", {{"intensity", std::shared_ptr<Object>(checker)}}); },
                           {"must not vary over the surface, as a 'checkerboard' texture does"});
  EXPECT_THROW(emitter("point", {{"position", 1.0}}), TypeError);
}
