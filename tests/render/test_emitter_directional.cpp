// The directional light against values Mitsuba 3.9.1 printed (scalar_rgb), traverse() keys
// and errors.
#include <gtest/gtest.h>

#include "plugin_test_support.h"

using namespace kiln;
using namespace kiln::render;
using namespace kiln::render::test;

namespace {

/// mitsuba.load_dict({'type': 'directional', 'direction': [1, -1, -0.5], 'irradiance': rgb
/// [3, 2, 1]}) in a scene whose bounding sphere has center (1, 0, 0) and radius 2√3.
void check_against_mitsuba() {
  auto light = emitter("directional", {{"direction", Vector3d{1, -1, -0.5}}, {"irradiance", Color3d{3, 2, 1}}});
  light->set_scene_bounds({1, 0, 0}, 3.46410155f);
  Array3f ref(Float{0, 10}, Float{0, 0}, Float{0, 0});
  auto [ds, weight] = light->sample_direction(ref, Array2f(0.3f, 0.6f), Bool(true));
  expect_color(ds.d, 0, {-0.666666687f, 0.666666687f, 0.333333343f}, 1e-6f, "d");
  expect_color(ds.n, 0, {0.666666687f, -0.666666687f, -0.333333343f}, 1e-6f, "n");
  expect_color(ds.p, 0, {-4.61921501f, 4.61921501f, 2.30960751f}, 1e-6f, "p");
  expect_color(ds.p, 1, {-2.00000048f, 12, 6}, 1e-6f, "p");
  EXPECT_NEAR(ds.dist.read(0), 6.92882252f, 1e-6f);
  EXPECT_NEAR(ds.dist.read(1), 18.0f, 1e-6f);
  EXPECT_EQ(ds.pdf.read(0), 1.0f);
  EXPECT_TRUE(ds.delta.read(0));
  expect_color(weight, 0, {3, 2, 1}, 0, "weight");
  EXPECT_EQ(light->pdf_direction(ref, ds, Bool(true)).read(0), 0.0f);
  expect_color(light->eval(looking_along(ds.d), Bool(true)), 0, {0, 0, 0}, 0, "eval");
}

}  // namespace

TEST(EmitterDirectional, MatchesMitsuba) { check_against_mitsuba(); }

TEST(EmitterDirectional, MatchesMitsubaOnTheInterpreter) { on_interpreter(check_against_mitsuba); }

TEST(EmitterDirectional, DirectionFromToWorld) {
  // Mitsuba: to_world = rotate([1, 0, 0], 60); an empty scene (no set_scene_bounds: the
  // unit sphere) sampled from the origin.
  Matrix4d to_world = affine_rows({1, 0, 0, 0, 0, 0.5, -0.866025448, 0, 0, 0.866025448, 0.5, 0});
  auto light = emitter("directional", {{"to_world", to_world}});
  auto [ds, weight] = light->sample_direction(Array3f(0.0f, 0.0f, 0.0f), Array2f(0.3f, 0.6f), Bool(true));
  expect_color(ds.d, 0, {0, 0.866025448f, -0.49999997f}, 1e-6f, "d");
  expect_color(ds.p, 0, {0, 1.7320509f, -0.99999994f}, 1e-6f, "p");
  EXPECT_NEAR(ds.dist.read(0), 2.0f, 1e-6f);
}

TEST(EmitterDirectional, FlagsKeysAndErrors) {
  auto light = emitter("directional");
  EXPECT_EQ(light->flags(), emitter_flags::kInfinite | emitter_flags::kDeltaDirection);
  EXPECT_FALSE(light->is_environment());
  EXPECT_EQ(parameter_keys(*light), (std::vector<std::string>{"irradiance.value", "to_world"}));
  Matrix4d identity = affine_rows({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0});
  expect_error<ValueError>([&] { emitter("directional", {{"direction", Vector3d{0, 0, 1}}, {"to_world", identity}}); },
                           {"'direction' (test:direction) and 'to_world' exclude each other"});
  expect_error<ValueError>([] { emitter("directional", {{"direction", Vector3d{0, 0, 0}}}); },
                           {"must be a nonzero finite vector"});
  EXPECT_THROW(emitter("directional", {{"irradiance", -2.0}}), ValueError);
}
