// The thin dielectric (`thindielectric`): Mitsuba's numbers, the internal reflections'
// series 2R / (1 + R), straight-through transmission (a null lobe), energy, flags,
// parameter names and every bad parameter.
#include <gtest/gtest.h>

#include "bsdf_test_support.h"

using namespace kiln;
using namespace kiln::render;
using namespace kiln::render::test;

namespace {

/// Printed by Mitsuba 3.9.1 (scalar_rgb) with scripts/mitsuba_bsdf_values.py.
const std::vector<BsdfReference>& mitsuba_references() {
  static const std::vector<BsdfReference> references = {
      // {'type': 'thindielectric'}
      {"thindielectric",
       {},
       TransportMode::Radiance,
       ~0u,
       {{{0, 0, 1}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.309426374, 0.206284249, 0.928279122}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{-0.824163384, 0.137360564, 0.549442256}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.937042571, -0.312347524, 0.156173762}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.240771706, -0.120385853, -0.963086825}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{-0.707106781, 0.565685425, -0.424264069}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0}},
       {{{0, 0, 1}, 0.3, {0.2, 0.7}, true, {0, 0, -1}, 0.922085643, 1, 1, {1, 1, 1}},
        {{0, 0, 1}, 0.8, {0.6, 0.1}, true, {0, 0, -1}, 0.922085643, 1, 1, {1, 1, 1}},
        {{0.309426374, 0.206284249, 0.928279122},
         0.3,
         {0.2, 0.7},
         true,
         {-0.309426367, -0.206284255, -0.928279102},
         0.921370268,
         1,
         1,
         {1, 1, 1}},
        {{0.309426374, 0.206284249, 0.928279122},
         0.8,
         {0.6, 0.1},
         true,
         {-0.309426367, -0.206284255, -0.928279102},
         0.921370268,
         1,
         1,
         {1, 1, 1}},
        {{-0.824163384, 0.137360564, 0.549442256},
         0.3,
         {0.2, 0.7},
         true,
         {0.824163377, -0.137360558, -0.549442232},
         0.858921409,
         1,
         1,
         {1, 1, 1}},
        {{-0.824163384, 0.137360564, 0.549442256},
         0.8,
         {0.6, 0.1},
         true,
         {0.824163377, -0.137360558, -0.549442232},
         0.858921409,
         1,
         1,
         {1, 1, 1}},
        {{0.937042571, -0.312347524, 0.156173762},
         0.3,
         {0.2, 0.7},
         true,
         {-0.937042594, 0.312347531, 0.156173766},
         0.596571982,
         1,
         0,
         {1, 1, 1}},
        {{0.937042571, -0.312347524, 0.156173762},
         0.8,
         {0.6, 0.1},
         true,
         {-0.937042594, 0.312347531, -0.156173766},
         0.403428018,
         1,
         1,
         {1, 1, 1}},
        {{0.240771706, -0.120385853, -0.963086825},
         0.3,
         {0.2, 0.7},
         true,
         {-0.240771711, 0.120385855, 0.963086843},
         0.921908498,
         1,
         1,
         {1, 1, 1}},
        {{0.240771706, -0.120385853, -0.963086825},
         0.8,
         {0.6, 0.1},
         true,
         {-0.240771711, 0.120385855, 0.963086843},
         0.921908498,
         1,
         1,
         {1, 1, 1}},
        {{-0.707106781, 0.565685425, -0.424264069},
         0.3,
         {0.2, 0.7},
         true,
         {0.707106769, -0.565685451, 0.424264073},
         0.785017133,
         1,
         1,
         {1, 1, 1}},
        {{-0.707106781, 0.565685425, -0.424264069},
         0.8,
         {0.6, 0.1},
         true,
         {0.707106769, -0.565685451, 0.424264073},
         0.785017133,
         1,
         1,
         {1, 1, 1}}}},
      // {'type': 'thindielectric', 'int_ior': 1.33, 'specular_transmittance': 0.5}
      {"thindielectric",
       {{"int_ior", 1.33}, {"specular_transmittance", 0.5}},
       TransportMode::Radiance,
       ~0u,
       {{{0, 0, 1}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.309426374, 0.206284249, 0.928279122}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{-0.824163384, 0.137360564, 0.549442256}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.937042571, -0.312347524, 0.156173762}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.240771706, -0.120385853, -0.963086825}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{-0.707106781, 0.565685425, -0.424264069}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0}},
       {{{0, 0, 1}, 0.3, {0.2, 0.7}, true, {0, 0, -1}, 0.960744143, 1, 1, {0.5, 0.5, 0.5}},
        {{0, 0, 1}, 0.8, {0.6, 0.1}, true, {0, 0, -1}, 0.960744143, 1, 1, {0.5, 0.5, 0.5}},
        {{0.309426374, 0.206284249, 0.928279122},
         0.3,
         {0.2, 0.7},
         true,
         {-0.309426367, -0.206284255, -0.928279102},
         0.960241795,
         1,
         1,
         {0.5, 0.5, 0.5}},
        {{0.309426374, 0.206284249, 0.928279122},
         0.8,
         {0.6, 0.1},
         true,
         {-0.309426367, -0.206284255, -0.928279102},
         0.960241795,
         1,
         1,
         {0.5, 0.5, 0.5}},
        {{-0.824163384, 0.137360564, 0.549442256},
         0.3,
         {0.2, 0.7},
         true,
         {0.824163377, -0.137360558, -0.549442232},
         0.909567833,
         1,
         1,
         {0.5, 0.5, 0.5}},
        {{-0.824163384, 0.137360564, 0.549442256},
         0.8,
         {0.6, 0.1},
         true,
         {0.824163377, -0.137360558, -0.549442232},
         0.909567833,
         1,
         1,
         {0.5, 0.5, 0.5}},
        {{0.937042571, -0.312347524, 0.156173762},
         0.3,
         {0.2, 0.7},
         true,
         {-0.937042594, 0.312347531, 0.156173766},
         0.555573583,
         1,
         0,
         {1, 1, 1}},
        {{0.937042571, -0.312347524, 0.156173762},
         0.8,
         {0.6, 0.1},
         true,
         {-0.937042594, 0.312347531, -0.156173766},
         0.444426417,
         1,
         1,
         {0.5, 0.5, 0.5}},
        {{0.240771706, -0.120385853, -0.963086825},
         0.3,
         {0.2, 0.7},
         true,
         {-0.240771711, 0.120385855, 0.963086843},
         0.96062094,
         1,
         1,
         {0.5, 0.5, 0.5}},
        {{0.240771706, -0.120385853, -0.963086825},
         0.8,
         {0.6, 0.1},
         true,
         {-0.240771711, 0.120385855, 0.963086843},
         0.96062094,
         1,
         1,
         {0.5, 0.5, 0.5}},
        {{-0.707106781, 0.565685425, -0.424264069},
         0.3,
         {0.2, 0.7},
         true,
         {0.707106769, -0.565685451, 0.424264073},
         0.842248917,
         1,
         1,
         {0.5, 0.5, 0.5}},
        {{-0.707106781, 0.565685425, -0.424264069},
         0.8,
         {0.6, 0.1},
         true,
         {0.707106769, -0.565685451, 0.424264073},
         0.842248917,
         1,
         1,
         {0.5, 0.5, 0.5}}}},
  };
  return references;
}

}  // namespace

TEST(ThinDielectric, MatchesMitsuba) {
  for (const BsdfReference& reference : mitsuba_references()) expect_matches_mitsuba(reference);
}

TEST(ThinDielectric, MatchesMitsubaOnTheInterpreter) {
  on_interpreter([] { expect_matches_mitsuba(mitsuba_references()[1]); });
}

TEST(ThinDielectric, SumsTheInternalReflectionsAndConservesEnergy) {
  std::shared_ptr<BSDF> sheet = make_bsdf("thindielectric", {{"int_ior", 1.5}, {"ext_ior", 1.0}});
  for (Array3f wi : {unit(0.3, 0.1, 0.9), unit(0.8, 0.0, -0.3)}) {
    size_t n = 200000;
    PCG32 rng(n);
    Float sample1 = rng.next_float32();
    auto [bs, weight] = sheet->sample({}, local_interaction(wi), sample1, Array2f(0.5f, 0.5f), Bool(true));
    double r = fresnel(abs(wi.z), Float(1.5f)).reflectance.item();
    double expected = 2 * r / (1 + r);
    double reflected = double(count(bs.sampled_component == 0u).item()) / double(n);
    EXPECT_NEAR(reflected, expected, 4 * std::sqrt(expected * (1 - expected) / double(n)));
    EXPECT_EQ(min(weight.y).item(), 1.0f);
    EXPECT_EQ(max(weight.y).item(), 1.0f);
    // Transmission goes straight through, without refraction.
    BSDFContext through;
    through.type_mask = bsdf_flags::kNull;
    auto [bs_t, weight_t] = sheet->sample(through, local_interaction(wi), Float(0.5f), Array2f(0.5f, 0.5f), Bool(true));
    for (size_t c = 0; c < 3; ++c) EXPECT_EQ(bs_t.wo[c].item(), -wi[c].item());
    EXPECT_NEAR(weight_t.x.item(), 1 - expected, 1e-6);
    EXPECT_EQ(bs_t.sampled_type.item(), bsdf_flags::kNull);
    EXPECT_EQ(bs_t.eta.item(), 1.0f);
  }
}

TEST(ThinDielectric, FlagsAndParameterNames) {
  using namespace bsdf_flags;
  std::shared_ptr<BSDF> sheet = make_bsdf("thindielectric", {{"specular_transmittance", 0.5}});
  EXPECT_EQ(sheet->flags(0), kDeltaReflection | kFrontSide | kBackSide);
  EXPECT_EQ(sheet->flags(1), kNull | kFrontSide | kBackSide);
  EXPECT_EQ(parameter_keys(*sheet), (std::vector<std::string>{"eta", "specular_transmittance.value"}));
}

TEST(ThinDielectric, RejectsBadParameters) {
  expect_error<ValueError>([] { make_bsdf("thindielectric", {{"int_ior", std::string("jelly")}}); },
                           {"thindielectric", "'int_ior'", "test: int_ior", "\"jelly\""});
  expect_error<ValueError>([] { make_bsdf("thindielectric", {{"int_ior", -1.5}}); }, {"'int_ior'", "positive"});
  expect_error<TypeError>([] { make_bsdf("thindielectric", {{"ext_ior", Color3d{{{1, 1, 1}}}}}); }, {"'ext_ior'"});
  expect_error<ValueError>([] { make_bsdf("thindielectric", {{"thickness", 0.1}}); }, {"thindielectric", "thickness"});
}
