// The spot light against values Mitsuba 3.9.1 printed (scalar_rgb): the falloff across the
// beam and the transition to the cutoff, a projected texture; traverse() keys and errors.
#include <gtest/gtest.h>

#include <cmath>

#include "plugin_test_support.h"

using namespace kiln;
using namespace kiln::render;
using namespace kiln::render::test;

namespace {

/// The texture the light projects: 5 x 3 pixels of (1 + (3x + 5y + 7c) mod 11) / 8 (exact
/// in binary), the image Mitsuba was given.
std::string projected_image() {
  return write_test_image("spot_texture.exr", 5, 3, 3,
                          [](size_t x, size_t y, size_t c) { return float(1 + (x * 3 + y * 5 + c * 7) % 11) / 8; });
}

/// mitsuba.load_dict({'type': 'spot', 'to_world': look_at(origin=[1, 2, 3], target=[1, 0, 3],
/// up=[0, 0, 1]), 'intensity': rgb [2, 3, 4], 'cutoff_angle': 30, 'beam_width': 20}), seen from
/// points 2 away at `angle` degrees off the axis (the light shines towards -y).
void check_falloff_against_mitsuba() {
  Matrix4d to_world = affine_rows({1, 0, 0, 1, 0, 0, -1, 2, 0, 1, 0, 3});
  auto light = emitter(
      "spot", {{"to_world", to_world}, {"intensity", Color3d{2, 3, 4}}, {"cutoff_angle", 30.0}, {"beam_width", 20.0}});
  struct Case {
    double angle;
    std::array<float, 3> weight;
  };
  std::vector<Case> cases = {{0, {0.5f, 0.75f, 1}},
                             {10, {0.500000119f, 0.750000179f, 1.00000024f}},
                             {19.9, {0.5f, 0.75f, 1}},
                             {20.1, {0.494999856f, 0.742499769f, 0.989999712f}},
                             {25, {0.250000238f, 0.375000358f, 0.500000477f}},
                             {29.9, {0.0050000404f, 0.00750006083f, 0.0100000808f}},
                             {30.1, {0, 0, 0}},
                             {45, {0, 0, 0}}};
  std::vector<float> x, y, z;
  for (const Case& c : cases) {
    double a = c.angle * M_PI / 180;
    x.push_back(float(1 + std::sin(a) * 2));
    y.push_back(float(2 - std::cos(a) * 2));
    z.push_back(3.0f);
  }
  Array3f ref(Float::from(x), Float::from(y), Float::from(z));
  auto [ds, weight] = light->sample_direction(ref, Array2f(0.3f, 0.6f), Bool(true));
  for (size_t i = 0; i < cases.size(); ++i)
    expect_color(weight, i, cases[i].weight, 2e-5f, "weight at " + std::to_string(cases[i].angle) + " degrees");
  expect_color(ds.p, 0, {1, 2, 3}, 1e-6f, "p");
  EXPECT_NEAR(ds.dist.read(0), 2.0f, 1e-6f);
}

}  // namespace

TEST(EmitterSpot, FalloffMatchesMitsuba) { check_falloff_against_mitsuba(); }

TEST(EmitterSpot, FalloffMatchesMitsubaOnTheInterpreter) { on_interpreter(check_falloff_against_mitsuba); }

TEST(EmitterSpot, FromXmlAsMitsubaReadsIt) {
  // The light of check_falloff_against_mitsuba() as a scene file gives it.
  auto light = from_xml<Emitter>(R"(<emitter type="spot">
      <rgb name="intensity" value="2, 3, 4"/>
      <float name="cutoff_angle" value="30"/>
      <float name="beam_width" value="20"/>
      <transform name="to_world"><lookat origin="1, 2, 3" target="1, 0, 3" up="0, 0, 1"/></transform>
    </emitter>)");
  double a = 25 * M_PI / 180;
  Array3f ref(float(1 + std::sin(a) * 2), float(2 - std::cos(a) * 2), 3.0f);
  Color3f weight = light->sample_direction(ref, Array2f(0.3f, 0.6f), Bool(true)).second;
  expect_color(weight, 0, {0.250000238f, 0.375000358f, 0.500000477f}, 2e-5f, "weight at 25 degrees");
}

TEST(EmitterSpot, DefaultsMatchMitsuba) {
  // Mitsuba's defaults: cutoff 20 degrees, beam 15, intensity 1, shining along +z.
  auto light = emitter("spot");
  std::vector<float> x, z;
  for (double degrees : {0.0, 14.0, 15.5, 19.0}) {
    x.push_back(float(std::sin(degrees * M_PI / 180)));
    z.push_back(float(std::cos(degrees * M_PI / 180)));
  }
  Array3f ref(Float::from(x), Float(0.0f), Float::from(z));
  Color3f weight = light->sample_direction(ref, Array2f(0.3f, 0.6f), Bool(true)).second;
  std::vector<float> expected = {1, 1, 0.899999142f, 0.1999989f};
  for (size_t i = 0; i < expected.size(); ++i)
    expect_color(weight, i, {expected[i], expected[i], expected[i]}, 2e-5f, "default spot");
}

TEST(EmitterSpot, ProjectedTextureMatchesMitsuba) {
  // mitsuba.load_dict({'type': 'spot', 'cutoff_angle': 40, 'texture': {'type': 'bitmap',
  // 'filename': <the image>, 'filter_type': 'nearest'}}).
  std::string path = projected_image();
  auto image = texture("bitmap", {{"filename", path}, {"filter_type", std::string("nearest")}});
  auto light = emitter("spot", {{"cutoff_angle", 40.0}, {"texture", std::shared_ptr<Object>(image)}});
  std::remove(path.c_str());
  EXPECT_EQ(light->flags(), emitter_flags::kDeltaPosition | emitter_flags::kSpatiallyVarying);
  EXPECT_EQ(light->flags(), 17u);  // Mitsuba's EmitterFlags value
  Array3f ref(Float{0, 0.5f, -0.9f, 1.2f, 0.2f}, Float{0, 0.3f, 0.6f, -0.1f, -1.0f}, Float{2, 2, 2, 2, 1.5f});
  Color3f weight = light->sample_direction(ref, Array2f(0.3f, 0.6f), Bool(true)).second;
  std::vector<std::array<float, 3>> expected = {{0.03125f, 0.25f, 0.125f},
                                                {0.115207359f, 0.316820234f, 0.201612875f},
                                                {0.0725338459f, 0.241779476f, 0.145067692f},
                                                {0.143671915f, 0.0615736768f, 0.205245599f},
                                                {0.153974086f, 0.0659888983f, 0.219962984f}};
  for (size_t i = 0; i < expected.size(); ++i) expect_color(weight, i, expected[i], 2e-5f, "textured spot");
  EXPECT_EQ(parameter_keys(*light), (std::vector<std::string>{"intensity.value", "texture.data", "texture.to_uv",
                                                              "cutoff_angle", "beam_width", "to_world"}));
}

TEST(EmitterSpot, IsADeltaLight) {
  auto light = emitter("spot");
  EXPECT_EQ(light->flags(), emitter_flags::kDeltaPosition);
  auto [ds, weight] = light->sample_direction(Array3f(0.0f, 0.0f, 1.0f), Array2f(0.5f, 0.5f), Bool(true));
  EXPECT_TRUE(ds.delta.read(0));
  EXPECT_EQ(light->pdf_direction(Array3f(0.0f, 0.0f, 1.0f), ds, Bool(true)).read(0), 0.0f);
  EXPECT_EQ(parameter_keys(*light),
            (std::vector<std::string>{"intensity.value", "texture.value", "cutoff_angle", "beam_width", "to_world"}));
}

TEST(EmitterSpot, Errors) {
  auto spot_error = [](const Parameters& parameters, const std::string& fragment) {
    expect_error<ValueError>([&] { emitter("spot", parameters); }, {fragment});
  };
  spot_error({{"cutoff_angle", -5.0}}, "'cutoff_angle' (test:cutoff_angle) is -5.000000 degrees");
  spot_error({{"cutoff_angle", 180.0}}, "less than 180");
  spot_error({{"cutoff_angle", 20.0}, {"beam_width", 25.0}}, "'beam_width' (test:beam_width) is 25");
  spot_error({{"beam_width", -1.0}}, "'beam_width'");
  spot_error({{"intensity", -1.0}}, "must not be negative");
  spot_error({{"texture", 0.5}}, "'texture' (test:texture) must vary over the surface");
  std::string path = projected_image();
  auto image = texture("bitmap", {{"filename", path}});
  std::remove(path.c_str());
  spot_error({{"cutoff_angle", 95.0}, {"texture", std::shared_ptr<Object>(image)}}, "less than 90");
}

TEST(EmitterSpot, ChangedAnglesAreChecked) {
  auto light = emitter("spot");
  float_parameter(*light, "beam_width") = Float(30.0f);  // wider than the cutoff (20)
  expect_error<ValueError>([&] { light->parameters_changed({"beam_width"}); },
                           {"emitter 'spot' (test): 'beam_width' is 30.000000 degrees"});
}
