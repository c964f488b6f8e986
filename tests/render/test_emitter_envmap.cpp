// The environment map: importance sampling against its density (chi-square) on an image with
// a hot spot, radiance and density against values Mitsuba 3.9.1 printed (scalar_rgb) under a
// rotation, sample weights, MIS compensation, changed data, traverse() keys and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "chi2.h"
#include "plugin_test_support.h"

using namespace kiln;
using namespace kiln::render;
using namespace kiln::render::test;

namespace {

/// The 8 x 6 image Mitsuba was given: (1 + (3x + 5y + 7c) mod 11) / 8 (exact in binary) and
/// a hot spot (64, 32, 16) at pixel (5, 2).
float pixel(size_t x, size_t y, size_t c) {
  if (x == 5 && y == 2) return 64.0f / float(1 << c);
  return float(1 + (x * 3 + y * 5 + c * 7) % 11) / 8;
}

/// ScalarTransform4f().rotate([0, 1, 0], 30).rotate([1, 0, 0], 20) as Mitsuba printed it.
Matrix4d rotation() {
  return affine_rows(
      {0.866025388, 0.171010062, 0.469846338, 0, 0, 0.939692676, -0.342020124, 0, -0.5, 0.2961981, 0.813797712, 0});
}

/// An environment map of the test image (the file is removed once read).
std::shared_ptr<Emitter> environment(Parameters parameters = {}) {
  std::string path = write_test_image("envmap.exr", 8, 6, 3, pixel);
  parameters.emplace_back("filename", path);
  auto light = emitter("envmap", parameters);
  std::remove(path.c_str());
  return light;
}

/// The direction of pixel (x, y)'s centre in the map's own frame: u = (x + ½) / 8,
/// v = y / 5, as Mitsuba maps them (u = 0 looks along -z, v = 0 up along +y).
Array3f pixel_centre(size_t x, size_t y) {
  double theta = M_PI * double(y) / 5, phi = 2 * M_PI * (double(x) + 0.5) / 8;
  return Array3f(float(std::sin(phi) * std::sin(theta)), float(std::cos(theta)),
                 float(-std::cos(phi) * std::sin(theta)));
}

chi2::Chi2Result sampling_test(const Emitter& light, size_t samples = 1000000, size_t res = 32) {
  Array3f ref(0.5f, 2.0f, -1.0f);
  return chi2::chi2_test<Array3f>([&](const Array2f& u) { return light.sample_direction(ref, u, Bool(true)).first.d; },
                                  [&](const Array3f& d) { return light.pdf_direction(ref, towards(d), Bool(true)); },
                                  chi2::sphere_chart(), samples, res);
}

/// Directions (world space), radiance and density that mitsuba.load_dict({'type': 'envmap',
/// 'filename': <the image>, 'to_world': rotation(), 'scale': 2.5}) gave: the hot spot's
/// centre and a point near it, both sides of the u = 0 seam, near the south pole, and random.
struct MitsubaValue {
  std::array<float, 3> d, radiance;
  float pdf;
};
const std::vector<MitsubaValue> kMitsuba = {
    {{-0.537096024f, 0.165901557f, 0.827045679f}, {160, 80, 40}, 1.43515813f},
    {{-0.481203526f, -0.119348601f, 0.86844635f}, {77.8875351f, 39.2500153f, 19.6750088f}, 0.669145882f},
    {{-0.414541006f, 0.341345221f, -0.843587101f}, {2.3687501f, 1.84062505f, 1.58749998f}, 0.0280543361f},
    {{-0.502450585f, -0.275773942f, -0.819446266f}, {2.17499924f, 1.8531251f, 1.39375091f}, 0.0274061225f},
    {{-0.171414241f, -0.940557301f, -0.293204993f}, {1.84794545f, 0.603077114f, 2.77347112f}, 0.0344250202f},
    {{0.402417421f, 0.479138225f, 0.780055642f}, {1.72906268f, 2.00531268f, 2.45000052f}, 0.0291484874f},
    {{0.363536566f, 0.864299476f, 0.347602576f}, {2.08720112f, 2.00503778f, 1.72535717f}, 0.0356617346f},
    {{-0.790571153f, 0.549241662f, 0.270796835f}, {1.8936131f, 1.48811555f, 2.74127388f}, 0.0235041268f},
    {{-0.616361618f, 0.667057872f, 0.418487906f}, {13.7579193f, 8.10004616f, 4.90091991f}, 0.162323669f},
};

Array3f reference_directions() {
  std::vector<float> x, y, z;
  for (const MitsubaValue& r : kMitsuba) {
    x.push_back(r.d[0]);
    y.push_back(r.d[1]);
    z.push_back(r.d[2]);
  }
  return Array3f(Float::from(x), Float::from(y), Float::from(z));
}

void check_against_mitsuba() {
  auto light = environment({{"to_world", rotation()}, {"scale", 2.5}});
  Array3f d = reference_directions();
  Color3f radiance = light->eval(looking_along(d), Bool(true));
  Float pdf = light->pdf_direction(Array3f(0.0f, 0.0f, 0.0f), towards(d), Bool(true));
  for (size_t i = 0; i < kMitsuba.size(); ++i) {
    expect_color(radiance, i, kMitsuba[i].radiance, 2e-5f, "radiance");
    EXPECT_NEAR(pdf.read(i), kMitsuba[i].pdf, 2e-5f * kMitsuba[i].pdf) << "pdf, direction " << i;
  }
}

}  // namespace

TEST(EmitterEnvmap, SamplingMatchesItsDensity) {
  auto r = sampling_test(*environment({{"to_world", rotation()}}));
  EXPECT_TRUE(r.passed) << r.message;
}

TEST(EmitterEnvmap, SamplingFollowsTheHotSpot) {
  // Sampling in proportion to luminance: about half of all samples go to the hot spot's
  // neighbourhood, which a uniform sampler would hit a few times in a thousand.
  auto light = environment();
  PCG32 rng(100000);
  auto [ds, weight] =
      light->sample_direction(Array3f(0.0f, 0.0f, 0.0f), Array2f(rng.next_float32(), rng.next_float32()), Bool(true));
  Array3f spot = pixel_centre(5, 2);  // the hot spot
  std::vector<float> cosines = dot(ds.d, spot).to_vector();
  size_t near = 0;
  for (float c : cosines) near += c > std::cos(0.4);
  EXPECT_GT(near, cosines.size() / 3) << near << " of " << cosines.size();
}

TEST(EmitterEnvmap, SamplingMatchesItsDensityOnTheInterpreter) {
  on_interpreter([] {
    auto r = sampling_test(*environment({{"to_world", rotation()}}), 100000, 16);
    EXPECT_TRUE(r.passed) << r.message;
  });
}

TEST(EmitterEnvmap, RadianceAndDensityMatchMitsuba) { check_against_mitsuba(); }

TEST(EmitterEnvmap, RadianceAndDensityMatchMitsubaOnTheInterpreter) { on_interpreter(check_against_mitsuba); }

TEST(EmitterEnvmap, FromXmlAsMitsubaReadsIt) {
  // The map of check_against_mitsuba() as a scene file gives it: the rotations in XML order.
  std::string path = write_test_image("envmap_xml.exr", 8, 6, 3, pixel);
  auto light = from_xml<Emitter>(R"(<emitter type="envmap">
      <string name="filename" value=")" +
                                 path + R"("/>
      <float name="scale" value="2.5"/>
      <transform name="to_world"><rotate x="1" angle="20"/><rotate y="1" angle="30"/></transform>
    </emitter>)");
  std::remove(path.c_str());
  const MitsubaValue& hot = kMitsuba[0];
  Array3f d(hot.d[0], hot.d[1], hot.d[2]);
  expect_color(light->eval(looking_along(d), Bool(true)), 0, hot.radiance, 2e-5f, "radiance");
  EXPECT_NEAR(light->pdf_direction(Array3f(0.0f, 0.0f, 0.0f), towards(d), Bool(true)).read(0), hot.pdf,
              2e-5f * hot.pdf);
}

TEST(EmitterEnvmap, WeightIsEvalOverPdfAndPdfMatchesPdfDirection) {
  auto light = environment({{"to_world", rotation()}, {"scale", 2.5}});
  light->set_scene_bounds({1, 2, 3}, 4);
  Array3f ref(0.5f, -1.0f, 2.0f);
  PCG32 rng(256);
  auto [ds, weight] = light->sample_direction(ref, Array2f(rng.next_float32(), rng.next_float32()), Bool(true));
  Float pdf = light->pdf_direction(ref, ds, Bool(true));
  Color3f radiance = light->eval(looking_along(ds.d), Bool(true));
  for (size_t i = 0; i < 256; ++i) {
    ASSERT_NEAR(ds.pdf.read(i), pdf.read(i), 1e-4f * pdf.read(i)) << "sample " << i;
    std::array<float, 3> r = lane(radiance, i);
    expect_color(weight, i, {r[0] / pdf.read(i), r[1] / pdf.read(i), r[2] / pdf.read(i)}, 1e-4f, "weight");
  }
  // Sampled points lie twice the bounding sphere's radius away (the reference point is inside).
  EXPECT_NEAR(ds.dist.read(0), 2 * 4 * (1 + kRayEpsilon), 1e-5f);
  EXPECT_FALSE(ds.delta.read(0));
}

TEST(EmitterEnvmap, MisCompensationMatchesMitsuba) {
  // mitsuba.load_dict({'type': 'envmap', 'filename': <the image>, 'mis_compensation': True})
  auto light = environment({{"mis_compensation", true}});
  // The first three reference directions, taken in the map's own frame (no to_world here).
  std::vector<float> x, y, z;
  for (size_t i = 0; i < 3; ++i) {
    x.push_back(kMitsuba[i].d[0]);
    y.push_back(kMitsuba[i].d[1]);
    z.push_back(kMitsuba[i].d[2]);
  }
  Float pdf = light->pdf_direction(Array3f(0.0f, 0.0f, 0.0f),
                                   towards(Array3f(Float::from(x), Float::from(y), Float::from(z))), Bool(true));
  EXPECT_NEAR(pdf.read(0), 0.366938442f, 1e-4f);
  EXPECT_NEAR(pdf.read(1), 0.091142647f, 1e-4f);
  EXPECT_NEAR(pdf.read(2), 0.0f, 1e-6f);  // below the mean: never sampled
  auto r = sampling_test(*light);
  EXPECT_TRUE(r.passed) << r.message;
}

TEST(EmitterEnvmap, ChangedDataRebuildsTheDistribution) {
  auto light = environment();
  Float& stored = float_parameter(*light, "data");
  ASSERT_EQ(stored.size(), 8u * 6 * 3);
  // Move the hot spot to pixel (1, 4).
  std::vector<float> data = stored.to_vector();
  for (size_t c = 0; c < 3; ++c) {
    data[(2 * 8 + 5) * 3 + c] = 0.5f;
    data[(4 * 8 + 1) * 3 + c] = 100.0f;
  }
  stored = Float::from(data);
  light->parameters_changed({"data"});
  Array3f spot = pixel_centre(1, 4), old_spot = pixel_centre(5, 2);
  expect_color(light->eval(looking_along(spot), Bool(true)), 0, {100, 100, 100}, 1e-4f, "new hot spot");
  // Sampling follows: the new hot spot is now far likelier than the old one.
  Float pdf = light->pdf_direction(Array3f(0.0f, 0.0f, 0.0f), towards(spot), Bool(true));
  Float old_pdf = light->pdf_direction(Array3f(0.0f, 0.0f, 0.0f), towards(old_spot), Bool(true));
  EXPECT_GT(pdf.read(0), 50 * old_pdf.read(0));
  auto r = sampling_test(*light);
  EXPECT_TRUE(r.passed) << r.message;
  data[7] = NAN;
  stored = Float::from(data);
  expect_error<ValueError>([&] { light->parameters_changed({"data"}); },
                           {"emitter 'envmap' (test): 'data' holds nan; every value must be finite"});
}

TEST(EmitterEnvmap, FlagsAndKeys) {
  auto light = environment();
  EXPECT_EQ(light->flags(), emitter_flags::kInfinite | emitter_flags::kSpatiallyVarying);
  EXPECT_EQ(light->flags(), 20u);  // Mitsuba's EmitterFlags value
  EXPECT_TRUE(light->is_environment());
  EXPECT_EQ(parameter_keys(*light), (std::vector<std::string>{"scale", "data", "to_world"}));
}

TEST(EmitterEnvmap, SmallAndGrayImages) {
  // A 1 x 1 gray image is padded to 2 x 3 (Mitsuba's minimum) and read as gray RGB.
  std::string path = write_test_image("envmap_gray.exr", 1, 1, 1, [](size_t, size_t, size_t) { return 0.75f; });
  auto light = emitter("envmap", {{"filename", path}});
  std::remove(path.c_str());
  Array3f d(Float{0, 1, 0.3f}, Float{1, 0, -0.8f}, Float{0, 0, 0.5f});
  Color3f radiance = light->eval(looking_along(normalize(d)), Bool(true));
  for (size_t i = 0; i < 3; ++i) expect_color(radiance, i, {0.75f, 0.75f, 0.75f}, 1e-6f, "gray");
  auto r = sampling_test(*light, 200000, 16);
  EXPECT_TRUE(r.passed) << r.message;
}

TEST(EmitterEnvmap, Errors) {
  expect_error<FileError>([] { emitter("envmap", {{"filename", std::string("/nonexistent/sky.exr")}}); },
                          {"emitter 'envmap' (test): 'filename' (test:filename): /nonexistent/sky.exr"});
  expect_error<FileError>([] { emitter("envmap", {{"filename", std::string("sky.tga")}}); },
                          {"unknown image format (accepted: .png, .jpg, .jpeg, .exr, .hdr)"});
  expect_error<ValueError>([] { emitter("envmap"); }, {"filename"});  // required
  expect_error<ValueError>([] { environment({{"scale", -1.0}}); },
                           {"'scale' (test:scale) must be a finite number >= 0, got -1"});
  std::string path =
      write_test_image("envmap_inf.exr", 4, 4, 3, [](size_t x, size_t, size_t) { return x == 2 ? INFINITY : 1.0f; });
  expect_error<ValueError>([&] { emitter("envmap", {{"filename", path}}); },
                           {"'filename' (test:filename) names an image holding inf"});
  std::remove(path.c_str());
}
