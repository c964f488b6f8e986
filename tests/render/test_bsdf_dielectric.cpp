// The smooth dielectric (`dielectric`): Mitsuba's numbers, lobe selection by the Fresnel
// reflectance, Snell's law, the eta² scaling of radiance, energy conservation, masks,
// flags, parameter names and every bad parameter.
#include <gtest/gtest.h>

#include "bsdf_test_support.h"

using namespace kiln;
using namespace kiln::render;
using namespace kiln::render::test;

namespace {

/// Printed by Mitsuba 3.9.1 (scalar_rgb) with scripts/mitsuba_bsdf_values.py.
const std::vector<BsdfReference>& mitsuba_references() {
  static const std::vector<BsdfReference> references = {
      // {'type': 'dielectric'}
      {"dielectric",
       {},
       TransportMode::Radiance,
       ~0u,
       {{{0, 0, 1}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.309426374, 0.206284249, 0.928279122}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{-0.824163384, 0.137360564, 0.549442256}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.937042571, -0.312347524, 0.156173762}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.240771706, -0.120385853, -0.963086825}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{-0.707106781, 0.565685425, -0.424264069}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0}},
       {{{0, 0, 1},
         0.3,
         {0.2, 0.7},
         true,
         {0, 0, -1},
         0.959463656,
         1.50418329,
         1,
         {0.441975832, 0.441975832, 0.441975832}},
        {{0, 0, 1},
         0.8,
         {0.6, 0.1},
         true,
         {0, 0, -1},
         0.959463656,
         1.50418329,
         1,
         {0.441975832, 0.441975832, 0.441975832}},
        {{0.309426374, 0.206284249, 0.928279122},
         0.3,
         {0.2, 0.7},
         true,
         {-0.20571056, -0.137140378, -0.968955994},
         0.959076226,
         1.50418329,
         1,
         {0.441975832, 0.441975832, 0.441975832}},
        {{0.309426374, 0.206284249, 0.928279122},
         0.8,
         {0.6, 0.1},
         true,
         {-0.20571056, -0.137140378, -0.968955994},
         0.959076226,
         1.50418329,
         1,
         {0.441975832, 0.441975832, 0.441975832}},
        {{-0.824163384, 0.137360564, 0.549442256},
         0.3,
         {0.2, 0.7},
         true,
         {0.547914207, -0.091319032, -0.83153522},
         0.924107313,
         1.50418329,
         1,
         {0.441975832, 0.441975832, 0.441975832}},
        {{-0.824163384, 0.137360564, 0.549442256},
         0.8,
         {0.6, 0.1},
         true,
         {0.547914207, -0.091319032, -0.83153522},
         0.924107313,
         1.50418329,
         1,
         {0.441975832, 0.441975832, 0.441975832}},
        {{0.937042571, -0.312347524, 0.156173762},
         0.3,
         {0.2, 0.7},
         true,
         {-0.937042594, 0.312347531, 0.156173766},
         0.425081968,
         1,
         0,
         {1, 1, 1}},
        {{0.937042571, -0.312347524, 0.156173762},
         0.8,
         {0.6, 0.1},
         true,
         {-0.622957766, 0.207652584, -0.754191041},
         0.574918032,
         1.50418329,
         1,
         {0.441975832, 0.441975832, 0.441975832}},
        {{0.240771706, -0.120385853, -0.963086825},
         0.3,
         {0.2, 0.7},
         true,
         {-0.362164795, 0.181082398, 0.914355457},
         0.958895802,
         0.664812624,
         1,
         {2.26256728, 2.26256728, 2.26256728}},
        {{0.240771706, -0.120385853, -0.963086825},
         0.8,
         {0.6, 0.1},
         true,
         {-0.362164795, 0.181082398, 0.914355457},
         0.958895802,
         0.664812624,
         1,
         {2.26256728, 2.26256728, 2.26256728}},
        {{-0.707106781, 0.565685425, -0.424264069},
         0.3,
         {0.2, 0.7},
         true,
         {0.707106769, -0.565685451, -0.424264073},
         1,
         1,
         0,
         {1, 1, 1}},
        {{-0.707106781, 0.565685425, -0.424264069},
         0.8,
         {0.6, 0.1},
         true,
         {0.707106769, -0.565685451, -0.424264073},
         1,
         1,
         0,
         {1, 1, 1}}}},
      // {'type': 'dielectric', 'int_ior': 'water'}
      {"dielectric",
       {{"int_ior", std::string("water")}},
       TransportMode::Importance,
       ~0u,
       {{{0, 0, 1}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.309426374, 0.206284249, 0.928279122}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{-0.824163384, 0.137360564, 0.549442256}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.937042571, -0.312347524, 0.156173762}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.240771706, -0.120385853, -0.963086825}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{-0.707106781, 0.565685425, -0.424264069}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0}},
       {{{0, 0, 1}, 0.3, {0.2, 0.7}, true, {0, 0, -1}, 0.979665518, 1.33263075, 1, {1, 1, 1}},
        {{0, 0, 1}, 0.8, {0.6, 0.1}, true, {0, 0, -1}, 0.979665518, 1.33263075, 1, {1, 1, 1}},
        {{0.309426374, 0.206284249, 0.928279122},
         0.3,
         {0.2, 0.7},
         true,
         {-0.232192129, -0.154794753, -0.960273623},
         0.979401529,
         1.33263075,
         1,
         {1, 1, 1}},
        {{0.309426374, 0.206284249, 0.928279122},
         0.8,
         {0.6, 0.1},
         true,
         {-0.232192129, -0.154794753, -0.960273623},
         0.979401529,
         1.33263075,
         1,
         {1, 1, 1}},
        {{-0.824163384, 0.137360564, 0.549442256},
         0.3,
         {0.2, 0.7},
         true,
         {0.618448436, -0.103074729, -0.779036045},
         0.952138007,
         1.33263075,
         1,
         {1, 1, 1}},
        {{-0.824163384, 0.137360564, 0.549442256},
         0.8,
         {0.6, 0.1},
         true,
         {0.618448436, -0.103074729, -0.779036045},
         0.952138007,
         1.33263075,
         1,
         {1, 1, 1}},
        {{0.937042571, -0.312347524, 0.156173762},
         0.3,
         {0.2, 0.7},
         true,
         {-0.937042594, 0.312347531, 0.156173766},
         0.385621548,
         1,
         0,
         {1, 1, 1}},
        {{0.937042571, -0.312347524, 0.156173762},
         0.8,
         {0.6, 0.1},
         true,
         {-0.703152478, 0.234384149, -0.671297729},
         0.614378452,
         1.33263075,
         1,
         {1, 1, 1}},
        {{0.240771706, -0.120385853, -0.963086825},
         0.3,
         {0.2, 0.7},
         true,
         {-0.32085979, 0.160429895, 0.933440566},
         0.979440749,
         0.750395417,
         1,
         {1, 1, 1}},
        {{0.240771706, -0.120385853, -0.963086825},
         0.8,
         {0.6, 0.1},
         true,
         {-0.32085979, 0.160429895, 0.933440566},
         0.979440749,
         0.750395417,
         1,
         {1, 1, 1}},
        {{-0.707106781, 0.565685425, -0.424264069},
         0.3,
         {0.2, 0.7},
         true,
         {0.707106769, -0.565685451, -0.424264073},
         1,
         1,
         0,
         {1, 1, 1}},
        {{-0.707106781, 0.565685425, -0.424264069},
         0.8,
         {0.6, 0.1},
         true,
         {0.707106769, -0.565685451, -0.424264073},
         1,
         1,
         0,
         {1, 1, 1}}}},
      // {'type': 'dielectric', 'int_ior': 1.7, 'ext_ior': 1.2, 'specular_reflectance': 0.8, 'specular_transmittance':
      // 0.6}
      {"dielectric",
       {{"int_ior", 1.7}, {"ext_ior", 1.2}, {"specular_reflectance", 0.8}, {"specular_transmittance", 0.6}},
       TransportMode::Radiance,
       ~0u,
       {{{0, 0, 1}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.309426374, 0.206284249, 0.928279122}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{-0.824163384, 0.137360564, 0.549442256}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.937042571, -0.312347524, 0.156173762}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{0.240771706, -0.120385853, -0.963086825}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0},
        {{-0.707106781, 0.565685425, -0.424264069}, {0.309426374, 0.206284249, 0.928279122}, {0, 0, 0}, 0}},
       {{{0, 0, 1},
         0.3,
         {0.2, 0.7},
         true,
         {0, 0, -1},
         0.970273495,
         1.41666663,
         1,
         {0.298961967, 0.298961967, 0.298961967}},
        {{0, 0, 1},
         0.8,
         {0.6, 0.1},
         true,
         {0, 0, -1},
         0.970273495,
         1.41666663,
         1,
         {0.298961967, 0.298961967, 0.298961967}},
        {{0.309426374, 0.206284249, 0.928279122},
         0.3,
         {0.2, 0.7},
         true,
         {-0.218418613, -0.145612419, -0.964930177},
         0.969942272,
         1.41666663,
         1,
         {0.298961967, 0.298961967, 0.298961967}},
        {{0.309426374, 0.206284249, 0.928279122},
         0.8,
         {0.6, 0.1},
         true,
         {-0.218418613, -0.145612419, -0.964930177},
         0.969942272,
         1.41666663,
         1,
         {0.298961967, 0.298961967, 0.298961967}},
        {{-0.824163384, 0.137360564, 0.549442256},
         0.3,
         {0.2, 0.7},
         true,
         {0.581762373, -0.0969603956, -0.807558775},
         0.938191533,
         1.41666663,
         1,
         {0.298961967, 0.298961967, 0.298961967}},
        {{-0.824163384, 0.137360564, 0.549442256},
         0.8,
         {0.6, 0.1},
         true,
         {0.581762373, -0.0969603956, -0.807558775},
         0.938191533,
         1.41666663,
         1,
         {0.298961967, 0.298961967, 0.298961967}},
        {{0.937042571, -0.312347524, 0.156173762},
         0.3,
         {0.2, 0.7},
         true,
         {-0.937042594, 0.312347531, 0.156173766},
         0.408514917,
         1,
         0,
         {0.800000012, 0.800000012, 0.800000012}},
        {{0.937042571, -0.312347524, 0.156173762},
         0.8,
         {0.6, 0.1},
         true,
         {-0.661441863, 0.220480621, -0.716856301},
         0.591485083,
         1.41666663,
         1,
         {0.298961967, 0.298961967, 0.298961967}},
        {{0.240771706, -0.120385853, -0.963086825},
         0.3,
         {0.2, 0.7},
         true,
         {-0.341093242, 0.170546621, 0.924429178},
         0.969902754,
         0.70588237,
         1,
         {1.20416665, 1.20416665, 1.20416665}},
        {{0.240771706, -0.120385853, -0.963086825},
         0.8,
         {0.6, 0.1},
         true,
         {-0.341093242, 0.170546621, 0.924429178},
         0.969902754,
         0.70588237,
         1,
         {1.20416665, 1.20416665, 1.20416665}},
        {{-0.707106781, 0.565685425, -0.424264069},
         0.3,
         {0.2, 0.7},
         true,
         {0.707106769, -0.565685451, -0.424264073},
         1,
         1,
         0,
         {0.800000012, 0.800000012, 0.800000012}},
        {{-0.707106781, 0.565685425, -0.424264069},
         0.8,
         {0.6, 0.1},
         true,
         {0.707106769, -0.565685451, -0.424264073},
         1,
         1,
         0,
         {0.800000012, 0.800000012, 0.800000012}}}},
  };
  return references;
}

BSDFContext importance() {
  BSDFContext ctx;
  ctx.mode = TransportMode::Importance;
  return ctx;
}

}  // namespace

TEST(Dielectric, MatchesMitsuba) {
  for (const BsdfReference& reference : mitsuba_references()) expect_matches_mitsuba(reference);
}

TEST(Dielectric, MatchesMitsubaOnTheInterpreter) {
  on_interpreter([] { expect_matches_mitsuba(mitsuba_references()[0]); });
}

TEST(Dielectric, ReflectsWithTheFresnelProbabilityAndConservesEnergy) {
  std::shared_ptr<BSDF> glass = make_bsdf("dielectric", {{"int_ior", 1.5}, {"ext_ior", 1.0}});
  for (float z : {0.9f, 0.4f, -0.9f, -0.4f}) {
    Array3f wi = unit(0.6, 0.0, z / std::sqrt(1.0 - z * z) * 0.6);
    size_t n = 200000;
    PCG32 rng(n);
    Float sample1 = rng.next_float32();
    auto [bs, weight] = glass->sample(importance(), local_interaction(wi), sample1, Array2f(0.5f, 0.5f), Bool(true));
    double reflected = double(count(bs.sampled_component == 0u).item()) / double(n);
    double f = fresnel(wi.z, Float(1.5f)).reflectance.item();
    EXPECT_NEAR(reflected, f, 4 * std::sqrt(f * (1 - f) / double(n)) + 1e-6) << "cos " << z;
    // Importance is not scaled: every sample carries weight 1 (R + T = 1, nothing absorbed).
    EXPECT_EQ(min(weight.x).item(), 1.0f);
    EXPECT_EQ(max(weight.x).item(), 1.0f);
  }
}

TEST(Dielectric, RefractsBySnellAndScalesRadiance) {
  std::shared_ptr<BSDF> glass = make_bsdf("dielectric", {{"int_ior", 1.5}, {"ext_ior", 1.0}});
  BSDFContext transmit_only;
  transmit_only.type_mask = bsdf_flags::kDeltaTransmission;
  Array3f wi = unit(0.48, -0.36, 0.8);
  auto [bs, weight] = glass->sample(transmit_only, local_interaction(wi), Float(0.5f), Array2f(0.5f, 0.5f), Bool(true));
  EXPECT_NEAR(bs.wo.x.item(), -wi.x.item() / 1.5f, 1e-6);
  EXPECT_NEAR(bs.wo.y.item(), -wi.y.item() / 1.5f, 1e-6);
  EXPECT_NEAR(norm(bs.wo).item(), 1.0f, 1e-6);
  EXPECT_NEAR(bs.eta.item(), 1.5f, 1e-6);
  EXPECT_EQ(bs.pdf.item(), 1.0f) << "one enabled lobe is taken with probability 1";
  double t = 1 - fresnel(wi.z, Float(1.5f)).reflectance.item();
  EXPECT_NEAR(weight.x.item(), t / (1.5 * 1.5), 1e-6) << "radiance entering glass is compressed: T / eta²";
  auto [bs_i, weight_i] = glass->sample(BSDFContext{TransportMode::Importance, bsdf_flags::kDeltaTransmission},
                                        local_interaction(wi), Float(0.5f), Array2f(0.5f, 0.5f), Bool(true));
  EXPECT_NEAR(weight_i.x.item(), t, 1e-6);
}

TEST(Dielectric, ReflectsTotallyBeyondTheCriticalAngle) {
  std::shared_ptr<BSDF> glass = make_bsdf("dielectric");
  Array3f wi = unit(0.9, 0.0, -0.3);  // inside, 18° from the surface: beyond asin(1/1.5)
  auto [bs, weight] = glass->sample({}, local_interaction(wi), Float(0.999f), Array2f(0.5f, 0.5f), Bool(true));
  EXPECT_EQ(bs.sampled_component.item(), 0u);
  EXPECT_EQ(bs.pdf.item(), 1.0f);
  EXPECT_EQ(weight.x.item(), 1.0f);
  EXPECT_NEAR(bs.wo.z.item(), wi.z.item(), 0) << "mirrored back inside";
}

TEST(Dielectric, EvalAndPdfAreZeroAndComponentsSelect) {
  std::shared_ptr<BSDF> glass = make_bsdf("dielectric");
  Albedo a = albedo(*glass, unit(0.3, 0.2, 0.9), {}, 4096);
  for (double value : a.by_integration) EXPECT_EQ(value, 0.0);
  BSDFContext second;
  second.component = 1;
  auto [bs, weight] =
      glass->sample(second, local_interaction(unit(0, 0, 1)), Float(0.0f), Array2f(0.5f, 0.5f), Bool(true));
  EXPECT_EQ(bs.sampled_component.item(), 1u);
  EXPECT_EQ(bs.sampled_type.item(), bsdf_flags::kDeltaTransmission);
  BSDFContext none;
  none.type_mask = bsdf_flags::kGlossy;
  EXPECT_EQ(glass->sample(none, local_interaction(unit(0, 0, 1)), Float(0.5f), Array2f(0.5f, 0.5f), Bool(true))
                .first.pdf.item(),
            0.0f);
}

TEST(Dielectric, FlagsAndParameterNames) {
  using namespace bsdf_flags;
  std::shared_ptr<BSDF> glass = make_bsdf("dielectric");
  EXPECT_EQ(glass->component_count(), 2u);
  EXPECT_EQ(glass->flags(0), kDeltaReflection | kFrontSide | kBackSide);
  EXPECT_EQ(glass->flags(1), kDeltaTransmission | kFrontSide | kBackSide | kNonSymmetric);
  EXPECT_EQ(parameter_keys(*glass), std::vector<std::string>{"eta"});
  EXPECT_NEAR(float_parameter(*glass, "eta")->item(), 1.5046f / 1.000277f, 1e-6);
  std::shared_ptr<BSDF> tinted =
      make_bsdf("dielectric", {{"specular_reflectance", 0.5}, {"specular_transmittance", 0.5}});
  EXPECT_EQ(parameter_keys(*tinted),
            (std::vector<std::string>{"eta", "specular_reflectance.value", "specular_transmittance.value"}));
}

TEST(Dielectric, RejectsBadParameters) {
  expect_error<ValueError>([] { make_bsdf("dielectric", {{"int_ior", std::string("glass")}}); },
                           {"dielectric", "'int_ior'", "test: int_ior", "\"glass\"", "bk7"});
  expect_error<ValueError>([] { make_bsdf("dielectric", {{"ext_ior", -1.0}}); },
                           {"dielectric", "'ext_ior'", "test: ext_ior", "positive"});
  expect_error<TypeError>([] { make_bsdf("dielectric", {{"int_ior", true}}); }, {"dielectric", "'int_ior'"});
  expect_error<TypeError>([] { make_bsdf("dielectric", {{"specular_transmittance", std::string("clear")}}); },
                          {"dielectric", "'specular_transmittance'"});
  expect_error<ValueError>([] { make_bsdf("dielectric", {{"alpha", 0.1}}); }, {"dielectric", "alpha"});
}
