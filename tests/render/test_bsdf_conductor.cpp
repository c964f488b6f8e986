// The smooth conductor (`conductor`): Mitsuba's numbers, a lossless mirror by default,
// the material presets, flags and parameter names, and every bad parameter.
#include <gtest/gtest.h>

#include "bsdf_test_support.h"

using namespace kiln;
using namespace kiln::render;
using namespace kiln::render::test;

namespace {

/// Printed by Mitsuba 3.9.1 (scalar_rgb) with scripts/mitsuba_bsdf_values.py.
const std::vector<BsdfReference>& mitsuba_references() {
  static const std::vector<BsdfReference> references = {
      // {'type': 'conductor'}
      {"conductor",
       {},
       TransportMode::Radiance,
       ~0u,
       {{{0, 0, 1}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.309426374, 0.206284249, 0.928279122}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{-0.824163384, 0.137360564, 0.549442256}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.937042571, -0.312347524, 0.156173762}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.240771706, -0.120385853, -0.963086825}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0}},
       {{{0, 0, 1}, 0.3, {0.2, 0.7}, true, {0, 0, 1}, 1, 1, 0, {1, 1, 1}},
        {{0.309426374, 0.206284249, 0.928279122},
         0.3,
         {0.2, 0.7},
         true,
         {-0.309426367, -0.206284255, 0.928279102},
         1,
         1,
         0,
         {1, 1, 1}},
        {{-0.824163384, 0.137360564, 0.549442256},
         0.3,
         {0.2, 0.7},
         true,
         {0.824163377, -0.137360558, 0.549442232},
         1,
         1,
         0,
         {1, 1, 1}},
        {{0.937042571, -0.312347524, 0.156173762},
         0.3,
         {0.2, 0.7},
         true,
         {-0.937042594, 0.312347531, 0.156173766},
         1,
         1,
         0,
         {1, 1, 1}},
        {{0.240771706, -0.120385853, -0.963086825}, 0.3, {0.2, 0.7}, false, {0, 0, 0}, 0, 0, 0, {0, 0, 0}}}},
      // {'type': 'conductor', 'material': 'Au'}
      {"conductor",
       {{"material", std::string("Au")}},
       TransportMode::Radiance,
       ~0u,
       {{{0, 0, 1}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.309426374, 0.206284249, 0.928279122}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{-0.824163384, 0.137360564, 0.549442256}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.937042571, -0.312347524, 0.156173762}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.240771706, -0.120385853, -0.963086825}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0}},
       {{{0, 0, 1}, 0.3, {0.2, 0.7}, true, {0, 0, 1}, 1, 1, 0, {0.966679275, 0.80200994, 0.324121475}},
        {{0.309426374, 0.206284249, 0.928279122},
         0.3,
         {0.2, 0.7},
         true,
         {-0.309426367, -0.206284255, 0.928279102},
         1,
         1,
         0,
         {0.966606736, 0.801890135, 0.324674904}},
        {{-0.824163384, 0.137360564, 0.549442256},
         0.3,
         {0.2, 0.7},
         true,
         {0.824163377, -0.137360558, 0.549442232},
         1,
         1,
         0,
         {0.963110745, 0.802491963, 0.359277964}},
        {{0.937042571, -0.312347524, 0.156173762},
         0.3,
         {0.2, 0.7},
         true,
         {-0.937042594, 0.312347531, 0.156173766},
         1,
         1,
         0,
         {0.964924157, 0.884724498, 0.617435813}},
        {{0.240771706, -0.120385853, -0.963086825}, 0.3, {0.2, 0.7}, false, {0, 0, 0}, 0, 0, 0, {0, 0, 0}}}},
      // {'type': 'conductor', 'eta': {'type': 'rgb', 'value': [0.2, 0.9, 1.1]}, 'k': {'type': 'rgb', 'value':
      // [3.9, 2.4, 2.1]}, 'specular_reflectance': {'type': 'rgb', 'value': [0.9, 0.8, 0.7]}}
      {"conductor",
       {{"eta", Color3d{{{0.2, 0.9, 1.1}}}},
        {"k", Color3d{{{3.9, 2.4, 2.1}}}},
        {"specular_reflectance", Color3d{{{0.9, 0.8, 0.7}}}}},
       TransportMode::Radiance,
       ~0u,
       {{{0, 0, 1}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.309426374, 0.206284249, 0.928279122}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{-0.824163384, 0.137360564, 0.549442256}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.937042571, -0.312347524, 0.156173762}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.240771706, -0.120385853, -0.963086825}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0}},
       {{{0, 0, 1}, 0.3, {0.2, 0.7}, true, {0, 0, 1}, 1, 1, 0, {0.856756747, 0.492636114, 0.3507936}},
        {{0.309426374, 0.206284249, 0.928279122},
         0.3,
         {0.2, 0.7},
         true,
         {-0.309426367, -0.206284255, 0.928279102},
         1,
         1,
         0,
         {0.856666267, 0.492595762, 0.350922793}},
        {{-0.824163384, 0.137360564, 0.549442256},
         0.3,
         {0.2, 0.7},
         true,
         {0.824163377, -0.137360558, 0.549442232},
         1,
         1,
         0,
         {0.852374971, 0.496353716, 0.362471044}},
        {{0.937042571, -0.312347524, 0.156173762},
         0.3,
         {0.2, 0.7},
         true,
         {-0.937042594, 0.312347531, 0.156173766},
         1,
         1,
         0,
         {0.85578835, 0.607600451, 0.494329065}},
        {{0.240771706, -0.120385853, -0.963086825}, 0.3, {0.2, 0.7}, false, {0, 0, 0}, 0, 0, 0, {0, 0, 0}}}},
  };
  return references;
}

}  // namespace

TEST(Conductor, MatchesMitsuba) {
  for (const BsdfReference& reference : mitsuba_references()) expect_matches_mitsuba(reference);
}

TEST(Conductor, MatchesMitsubaOnTheInterpreter) {
  on_interpreter([] { expect_matches_mitsuba(mitsuba_references()[1]); });
}

TEST(Conductor, DefaultIsALosslessMirror) {
  std::shared_ptr<BSDF> mirror = make_bsdf("conductor");
  for (Array3f wi : {unit(0, 0, 1), unit(0.3, -0.4, 0.5), unit(0.9, 0.2, 0.05)}) {
    Albedo a = albedo(*mirror, wi, {}, 1024);
    for (double value : a.by_sampling) EXPECT_NEAR(value, 1.0, 1e-6);
    for (double value : a.by_integration) EXPECT_EQ(value, 0.0) << "a delta lobe has no density";
  }
}

TEST(Conductor, ReflectsNothingFromBelowOrWhenItsLobeIsMasked) {
  std::shared_ptr<BSDF> gold = make_bsdf("conductor", {{"material", std::string("Au")}});
  Albedo below = albedo(*gold, unit(0.2, 0.1, -0.7), {}, 1024);
  for (double value : below.by_sampling) EXPECT_EQ(value, 0.0);
  BSDFContext glossy_only;
  glossy_only.type_mask = bsdf_flags::kGlossy;
  Albedo masked = albedo(*gold, unit(0.2, 0.1, 0.7), glossy_only, 1024);
  for (double value : masked.by_sampling) EXPECT_EQ(value, 0.0);
}

TEST(Conductor, PresetsHoldMitsubasValues) {
  // A few of Mitsuba's materials (the whole table is in conductor_ior.cpp).
  std::shared_ptr<BSDF> silver = make_bsdf("conductor", {{"material", std::string("Ag")}});
  std::vector<std::string> keys = parameter_keys(*silver);
  EXPECT_EQ(keys, (std::vector<std::string>{"eta.value", "k.value", "specular_reflectance.value"}));
  // Normal incidence: F = ((n - 1)² + k²) / ((n + 1)² + k²) per channel.
  auto [bs, weight] =
      silver->sample({}, local_interaction(unit(0, 0, 1)), Float(0.5f), Array2f(0.5f, 0.5f), Bool(true));
  const double eta[3] = {0.155276194, 0.116727956, 0.138387635}, k[3] = {4.82835436, 3.12222242, 2.14690113};
  for (size_t c = 0; c < 3; ++c) {
    double expected = ((eta[c] - 1) * (eta[c] - 1) + k[c] * k[c]) / ((eta[c] + 1) * (eta[c] + 1) + k[c] * k[c]);
    EXPECT_NEAR(weight[c].item(), expected, 1e-5);
  }
}

TEST(Conductor, FlagsAndComponents) {
  std::shared_ptr<BSDF> bsdf = make_bsdf("conductor");
  EXPECT_EQ(bsdf->component_count(), 1u);
  EXPECT_EQ(bsdf->flags(), bsdf_flags::kDeltaReflection | bsdf_flags::kFrontSide);
}

TEST(Conductor, RejectsBadParameters) {
  expect_error<ValueError>([] { make_bsdf("conductor", {{"material", std::string("au")}}); },
                           {"conductor", "'material'", "test: material", "\"au\"", "\"Au\""});
  expect_error<ValueError>([] { make_bsdf("conductor", {{"material", std::string("Au")}, {"eta", 1.5}}); },
                           {"conductor", "'eta'", "test: eta", "material"});
  expect_error<ValueError>([] { make_bsdf("conductor", {{"material", std::string("Cu")}, {"k", 1.5}}); },
                           {"conductor", "'k'", "test: k", "material"});
  expect_error<TypeError>([] { make_bsdf("conductor", {{"eta", std::string("gold")}}); },
                          {"conductor", "'eta'", "test: eta"});
  expect_error<TypeError>([] { make_bsdf("conductor", {{"material", 3.0}}); }, {"conductor", "'material'"});
  expect_error<ValueError>([] { make_bsdf("conductor", {{"alpha", 0.1}}); }, {"conductor", "alpha"});
}
