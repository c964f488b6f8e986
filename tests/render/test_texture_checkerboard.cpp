// The checkerboard texture against values Mitsuba 3.9.1 printed (scalar_rgb), its mean,
// traverse() keys and parameter types.
#include <gtest/gtest.h>

#include "plugin_test_support.h"

using namespace kiln;
using namespace kiln::render;
using namespace kiln::render::test;

namespace {

/// mitsuba.load_dict({'type': 'checkerboard', 'color0': rgb [0.9, 0.1, 0.2], 'to_uv':
/// scale([3, 2, 1])}).eval() at six uvs.
void check_against_mitsuba() {
  auto t = texture("checkerboard",
                   {{"color0", Color3d{0.9, 0.1, 0.2}}, {"to_uv", affine_rows({3, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1, 0})}});
  Color3f value =
      t->eval(at_uv({0.1f, 0.2f, 0.1f, 0.2f, -0.1f, 0.7f}, {0.1f, 0.1f, 0.3f, 0.3f, 0.1f, -0.4f}), Bool(true));
  std::array<float, 3> first = {0.9f, 0.1f, 0.2f}, second = {0.2f, 0.2f, 0.2f};
  std::vector<std::array<float, 3>> expected = {first, second, second, first, second, first};
  for (size_t i = 0; i < expected.size(); ++i) expect_color(value, i, expected[i], 1e-7f, "checkerboard");
  EXPECT_NEAR(t->mean().read(0), 0.3f, 1e-7f);
}

}  // namespace

TEST(TextureCheckerboard, MatchesMitsuba) { check_against_mitsuba(); }

TEST(TextureCheckerboard, MatchesMitsubaOnTheInterpreter) { on_interpreter(check_against_mitsuba); }

TEST(TextureCheckerboard, DefaultsAndScalarValues) {
  // Mitsuba's defaults: color0 0.4, color1 0.2. eval_1 gives the same square's value as eval
  // (Mitsuba 3.9.1's eval_1 swaps the two colors; see the report of this change).
  auto t = texture("checkerboard");
  SurfaceInteraction si = at_uv({0.1f, 0.6f}, {0.1f, 0.1f});
  expect_color(t->eval(si, Bool(true)), 0, {0.4f, 0.4f, 0.4f}, 1e-7f, "color0");
  expect_color(t->eval(si, Bool(true)), 1, {0.2f, 0.2f, 0.2f}, 1e-7f, "color1");
  Float scalar = t->eval_1(si, Bool(true));
  EXPECT_NEAR(scalar.read(0), 0.4f, 1e-7f);
  EXPECT_NEAR(scalar.read(1), 0.2f, 1e-7f);
  expect_color(t->eval(si, Bool(false)), 0, {0, 0, 0}, 0, "inactive");
  EXPECT_FALSE(t->is_constant());
}

TEST(TextureCheckerboard, NestedTexturesAndKeys) {
  auto inner = texture("checkerboard", {{"to_uv", affine_rows({4, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1, 0})}});
  auto t = texture("checkerboard", {{"color1", std::shared_ptr<Object>(inner)}});
  EXPECT_EQ(parameter_keys(*t), (std::vector<std::string>{"to_uv", "color0.value", "color1.to_uv",
                                                          "color1.color0.value", "color1.color1.value"}));
  // uv (0.6, 0.1) shows color1, the inner board, which is at its own square (2, 0): color0.
  expect_color(t->eval(at_uv({0.6f}, {0.1f}), Bool(true)), 0, {0.4f, 0.4f, 0.4f}, 1e-7f, "nested");
}

TEST(TextureCheckerboard, Errors) {
  EXPECT_THROW(texture("checkerboard", {{"color0", std::string("red")}}), TypeError);
  EXPECT_THROW(texture("checkerboard", {{"to_uv", 2.0}}), TypeError);
}
