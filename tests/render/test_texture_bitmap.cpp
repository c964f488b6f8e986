// The bitmap texture against values Mitsuba 3.9.1 printed (scalar_rgb): every filter and wrap
// mode inside and outside [0, 1]², to_uv, gray images, 8-bit PNG and JPEG with and without
// `raw`; its mean, traverse() keys, changed data and errors.
#include <gtest/gtest.h>

#include <cstdio>

#include "jpeg_sample.h"
#include "plugin_test_support.h"

using namespace kiln;
using namespace kiln::render;
using namespace kiln::render::test;

namespace {

using Rgb = std::array<float, 3>;

/// The 5 x 3 image Mitsuba was given: (1 + (3x + 5y + 7c) mod 11) / 8, exact in binary.
float pixel(size_t x, size_t y, size_t c) { return float(1 + (x * 3 + y * 5 + c * 7) % 11) / 8; }

/// A bitmap texture of a temporary file written by `write` (removed once read).
std::shared_ptr<Texture> bitmap(const std::string& path, Parameters parameters = {}) {
  parameters.emplace_back("filename", path);
  auto result = texture("bitmap", parameters);
  std::remove(path.c_str());
  return result;
}
std::shared_ptr<Texture> test_bitmap(Parameters parameters = {}) {
  return bitmap(write_test_image("bitmap.exr", 5, 3, 3, pixel), std::move(parameters));
}

const std::vector<float> kU = {0.5f, 0.1f, 0.93f, -0.3f, 1.45f, 2.7f, -1.2f};
const std::vector<float> kV = {0.5f, 0.2f, 0.85f, 0.4f, -0.2f, 1.6f, -0.9f};

void expect_colors(const Color3f& actual, const std::vector<Rgb>& expected, const std::string& what) {
  for (size_t i = 0; i < expected.size(); ++i) expect_color(actual, i, expected[i], 2e-6f, what);
}

/// eval() at kU, kV for one filter and wrap mode, against Mitsuba's values.
void check_mode(const std::string& filter, const std::string& wrap, const std::vector<Rgb>& expected) {
  auto t = test_bitmap({{"filter_type", filter}, {"wrap_mode", wrap}});
  expect_colors(t->eval(at_uv(kU, kV), Bool(true)), expected, filter + " " + wrap);
}

void check_filters_and_wraps() {
  check_mode("bilinear", "repeat",
             {{0.125f, 1, 0.5f},
              {0.1875f, 0.924999952f, 0.5625f},
              {0.308437586f, 0.987500072f, 0.487500042f},
              {0.724999964f, 1.1875f, 0.6875f},
              {0.628124952f, 0.540624976f, 0.96874994f},
              {0.687500119f, 1.14999986f, 0.649999857f},
              {0.725000024f, 0.912500024f, 0.412500024f}});
  check_mode("bilinear", "mirror",
             {{0.125f, 1, 0.5f},
              {0.1875f, 0.924999952f, 0.5625f},
              {0.125f, 1, 0.5f},
              {0.9375f, 0.849999964f, 0.349999964f},
              {0.893749952f, 0.53125f, 0.959374964f},
              {0.725000143f, 1.18749988f, 0.687499881f},
              {0.625f, 0.8125f, 0.3125f}});
  check_mode("bilinear", "clamp",
             {{0.125f, 1, 0.5f},
              {0.1875f, 0.924999952f, 0.5625f},
              {0.125f, 1, 0.5f},
              {0.5625f, 0.474999964f, 0.9375f},
              {0.25f, 1.125f, 0.625f},
              {0.125f, 1, 0.5f},
              {0.125f, 1, 0.5f}});
  check_mode("nearest", "repeat",
             {{0.125f, 1, 0.5f},
              {0.125f, 1, 0.5f},
              {0.125f, 1, 0.5f},
              {0.5f, 1.375f, 0.875f},
              {0.75f, 0.25f, 1.125f},
              {0.5f, 1.375f, 0.875f},
              {0.25f, 1.125f, 0.625f}});
  check_mode("nearest", "mirror",
             {{0.125f, 1, 0.5f},
              {0.125f, 1, 0.5f},
              {0.125f, 1, 0.5f},
              {1.125f, 0.625f, 0.125f},
              {0.875f, 0.375f, 1.25f},
              {0.5f, 1.375f, 0.875f},
              {0.125f, 1, 0.5f}});
  check_mode("nearest", "clamp",
             {{0.125f, 1, 0.5f},
              {0.125f, 1, 0.5f},
              {0.125f, 1, 0.5f},
              {0.75f, 0.25f, 1.125f},
              {0.25f, 1.125f, 0.625f},
              {0.125f, 1, 0.5f},
              {0.125f, 1, 0.5f}});
}

}  // namespace

TEST(TextureBitmap, FiltersAndWrapModesMatchMitsuba) { check_filters_and_wraps(); }

TEST(TextureBitmap, FiltersAndWrapModesMatchMitsubaOnTheInterpreter) { on_interpreter(check_filters_and_wraps); }

TEST(TextureBitmap, ToUvMatchesMitsuba) {
  // to_uv = translate([0.25, -0.5, 0]) @ rotate([0, 0, 1], 30) @ scale([2, 3, 1]).
  Matrix4d to_uv = affine_rows({1.73205078, -1.5, 0, 0.25, 1, 2.59807611, 0, -0.5, 0, 0, 1, 0});
  auto t = test_bitmap({{"to_uv", to_uv}});
  Color3f value = t->eval(at_uv({kU[0], kU[1], kU[2], kU[3]}, {kV[0], kV[1], kV[2], kV[3]}), Bool(true));
  expect_colors(value,
                {{0.691734076f, 0.927297115f, 0.700962007f},
                 {0.322433412f, 1.0258652f, 0.525865197f},
                 {0.545322359f, 0.849567592f, 0.675448179f},
                 {0.31802848f, 0.893702924f, 0.647553802f}},
                "to_uv");
}

TEST(TextureBitmap, FromXmlAsMitsubaReadsIt) {
  // The to_uv of ToUvMatchesMitsuba as a scene file gives it (steps apply in order).
  std::string path = write_test_image("bitmap_xml.exr", 5, 3, 3, pixel);
  auto t = from_xml<Texture>(R"(<texture type="bitmap">
      <string name="filename" value=")" +
                             path + R"("/>
      <transform name="to_uv">
        <scale x="2" y="3"/><rotate z="1" angle="30"/><translate x="0.25" y="-0.5"/>
      </transform>
    </texture>)");
  std::remove(path.c_str());
  expect_color(t->eval(at_uv({kU[1]}, {kV[1]}), Bool(true)), 0, {0.322433412f, 1.0258652f, 0.525865197f}, 2e-6f,
               "to_uv from XML");
}

TEST(TextureBitmap, LuminanceAndMeanMatchMitsuba) {
  auto t = test_bitmap();
  Float value = t->eval_1(at_uv({kU[0], kU[1], kU[2]}, {kV[0], kV[1], kV[2]}), Bool(true));
  EXPECT_NEAR(value.read(0), 0.777828336f, 1e-6f);
  EXPECT_NEAR(value.read(1), 0.741993845f, 1e-6f);
  EXPECT_NEAR(value.read(2), 0.80699873f, 1e-6f);
  EXPECT_NEAR(t->mean().read(0), 0.776915729f, 1e-6f);
  EXPECT_FALSE(t->is_constant());
}

TEST(TextureBitmap, GrayImagesStayOneChannel) {
  auto t = bitmap(write_test_image("bitmap_gray.exr", 5, 3, 1, pixel));
  SurfaceInteraction si = at_uv({0.1f}, {0.2f});
  expect_color(t->eval(si, Bool(true)), 0, {0.1875f, 0.1875f, 0.1875f}, 1e-6f, "gray");
  EXPECT_NEAR(t->eval_1(si, Bool(true)).read(0), 0.1875f, 1e-6f);
  EXPECT_NEAR(t->mean().read(0), 0.675000012f, 1e-6f);
}

namespace {

/// A 3 x 2 PNG of the 8-bit sRGB codes (37x + 91y + 53c + 20) mod 256, which Mitsuba read.
std::string png_path() {
  return write_test_image("bitmap.png", 3, 2, 3, [](size_t x, size_t y, size_t c) {
    return srgb_to_linear(float((37 * x + 91 * y + 53 * c + 20) % 256) / 255.0f);
  });
}

}  // namespace

TEST(TextureBitmap, EightBitPngIsDecodedFromSrgbUnlessRaw) {
  std::vector<float> u = {0.1f, 0.5f, 0.8f}, v = {0.2f, 0.5f, 0.9f};
  auto decoded = bitmap(png_path());
  expect_colors(decoded->eval(at_uv(u, v), Bool(true)),
                {{0.0476044118f, 0.147288263f, 0.31002894f},
                 {0.168526664f, 0.370002627f, 0.67867732f},
                 {0.357823521f, 0.662986577f, 0.246900111f}},
                "sRGB decoded");
  auto raw = bitmap(png_path(), {{"raw", true}});
  expect_colors(raw->eval(at_uv(u, v), Bool(true)),
                {{0.17215687f, 0.380000025f, 0.567764699f},
                 {0.40196079f, 0.609803975f, 0.817647099f},
                 {0.603921592f, 0.811764777f, 0.387137204f}},
                "raw");
}

TEST(TextureBitmap, JpegMatchesMitsuba) {
  std::string path = temp_path("bitmap.jpg");
  write_jpeg_sample(path);
  auto t = bitmap(path, {{"filter_type", std::string("nearest")}});
  // Mitsuba's values; JPEG decoders may round a code differently, hence 1/255 in sRGB.
  Color3f value = t->eval(at_uv({0.1f, 0.6f}, {0.2f, 0.8f}), Bool(true));
  std::vector<Rgb> expected = {{0.00699539902f, 0.0212190114f, 0.1247719f}, {0.262250572f, 0.223227888f, 0.783537626f}};
  for (size_t i = 0; i < 2; ++i) {
    Rgb got = lane(value, i);
    for (size_t c = 0; c < 3; ++c)
      EXPECT_NEAR(linear_to_srgb(got[c]), linear_to_srgb(expected[i][c]), 1.01f / 255) << i << ", " << c;
  }
}

TEST(TextureBitmap, KeysAndChangedData) {
  auto t = test_bitmap();
  EXPECT_EQ(parameter_keys(*t), (std::vector<std::string>{"data", "to_uv"}));
  TensorXf& data = parameter<TensorXf>(*t, "data");
  ASSERT_EQ(data.shape(), (kiln::Shape{3, 5, 3}));
  data = TensorXf(full<Float>(2.0f, 45), {3, 5, 3});
  t->parameters_changed({"data"});
  expect_color(t->eval(at_uv({0.3f}, {0.7f}), Bool(true)), 0, {2, 2, 2}, 1e-6f, "changed data");
  EXPECT_NEAR(t->mean().read(0), 2.0f, 1e-6f);
  // Another resolution is a new image; two channels are refused, the texture left as it was.
  data = TensorXf(full<Float>(3.0f, 4 * 6), {2, 4, 3});
  t->parameters_changed({"data"});
  expect_color(t->eval(at_uv({0.9f}, {0.1f}), Bool(true)), 0, {3, 3, 3}, 1e-6f, "new resolution");
  data = TensorXf(full<Float>(1.0f, 8), {2, 2, 2});
  expect_error<ValueError>([&] { t->parameters_changed({"data"}); },
                           {"'data' must be a tensor of shape (height, width, channels) with 1 or 3 channels, got "
                            "(2, 2, 2)"});
  EXPECT_EQ(data.shape(), (kiln::Shape{2, 4, 3}));
}

TEST(TextureBitmap, GradientsReachTheData) {
  auto t = test_bitmap();
  Float& data = parameter<TensorXf>(*t, "data").array();
  enable_grad(data);
  // uv (0.5, 0.5) is pixel (2, 1)'s centre: the gradient of its red channel is 1 there only.
  Color3f value = t->eval(at_uv({0.5f}, {0.5f}), Bool(true));
  backward(value.x);
  std::vector<float> gradient = grad(data).to_vector();
  for (size_t i = 0; i < gradient.size(); ++i) EXPECT_EQ(gradient[i], i == (1 * 5 + 2) * 3 ? 1.0f : 0.0f) << i;
}

TEST(TextureBitmap, Errors) {
  expect_error<FileError>([] { texture("bitmap", {{"filename", std::string("/nonexistent/wood.png")}}); },
                          {"texture 'bitmap' (test): 'filename' (test:filename): /nonexistent/wood.png: cannot be "
                           "opened"});
  expect_error<FileError>([] { texture("bitmap", {{"filename", std::string("wood.tga")}}); },
                          {"unknown image format (accepted: .png, .jpg, .jpeg, .exr, .hdr)"});
  expect_error<ValueError>([] { texture("bitmap"); }, {"filename"});  // required
  expect_error<ValueError>([] { test_bitmap({{"filter_type", std::string("trilinear")}}); },
                           {"'filter_type' (test:filter_type) is \"trilinear\"; accepted: \"bilinear\", \"nearest\""});
  expect_error<ValueError>([] { test_bitmap({{"wrap_mode", std::string("wrap")}}); },
                           {"'wrap_mode' (test:wrap_mode) is \"wrap\"; accepted: \"repeat\", \"mirror\", \"clamp\""});
  EXPECT_THROW(test_bitmap({{"raw", 1.0}}), TypeError);
  std::string path = temp_path("broken.png");
  std::ofstream(path) << "not a png";
  expect_error<FileError>([&] { texture("bitmap", {{"filename", path}}); }, {"is not a PNG file"});
  std::remove(path.c_str());
  path = temp_path("broken.jpg");
  std::ofstream(path) << "not a jpeg";
  expect_error<FileError>([&] { texture("bitmap", {{"filename", path}}); }, {"could not be read as JPEG"});
  std::remove(path.c_str());
}
