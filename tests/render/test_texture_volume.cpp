// The `volume` texture over a `gridvolume` (issue 29, the tutorials' LEGO scene): .vol files
// round-trip; trilinear reads reproduce a linear function exactly between texel centers,
// at texel centers the stored values, through `to_world` and the file's box
// (`use_grid_bbox`); traverse() lists the grid as a tensor whose new value (also a new
// resolution) the volume reads after parameters_changed(); bad files and parameters raise
// errors naming them.
#include <gtest/gtest.h>

#include <kiln/render/parameters.h>
#include <kiln/render/volume.h>

#include <fstream>

#include "plugin_test_support.h"

using namespace kiln;
using namespace kiln::render;
using namespace kiln::render::test;

namespace {

/// A grid of n³ texels whose channel c holds (c + 1) · f at its center, f(p) = p.x + 2 p.y +
/// 4 p.z with p the texel center in [0, 1]³.
VolumeGrid linear_grid(size_t n, size_t channels) {
  VolumeGrid grid{n, n, n, channels, {0, 0, 0}, {1, 1, 1}, {}};
  for (size_t z = 0; z < n; ++z)
    for (size_t y = 0; y < n; ++y)
      for (size_t x = 0; x < n; ++x)
        for (size_t c = 0; c < channels; ++c)
          grid.values.push_back(float(c + 1) * ((x + 0.5f) + 2 * (y + 0.5f) + 4 * (z + 0.5f)) / float(n));
  return grid;
}

float linear(float x, float y, float z) { return x + 2 * y + 4 * z; }

std::string written(const VolumeGrid& grid, const std::string& name) {
  std::string path = temp_path(name);
  write_volume_grid(grid, path);
  return path;
}

std::shared_ptr<Texture> volume_texture(const std::string& path, Parameters extra = {}) {
  extra.emplace_back("filename", path);
  auto volume = create<Volume>(PluginKind::Volume, "gridvolume", extra);
  return texture("volume", {{"volume", std::shared_ptr<Object>(volume)}});
}

SurfaceInteraction at_points(const std::vector<float>& x, const std::vector<float>& y, const std::vector<float>& z) {
  SurfaceInteraction si;
  si.p = Array3f(Float::from(x), Float::from(y), Float::from(z));
  return si;
}

}  // namespace

TEST(TextureVolume, FilesRoundTrip) {
  VolumeGrid grid = linear_grid(3, 3);
  grid.box_min = {-1, 0, 2};
  VolumeGrid back = read_volume_grid(written(grid, "round.vol"));
  EXPECT_EQ(back.size_x, 3u);
  EXPECT_EQ(back.channels, 3u);
  EXPECT_EQ(back.box_min, grid.box_min);
  EXPECT_EQ(back.values, grid.values);
}

TEST(TextureVolume, TrilinearReadsOfALinearFunction) {
  auto t = volume_texture(written(linear_grid(4, 3), "linear.vol"));
  // Between the outermost texel centers (1/8 .. 7/8) trilinear interpolation is exact.
  std::vector<float> x = {0.125f, 0.5f, 0.3f, 0.875f}, y = {0.125f, 0.5f, 0.7f, 0.2f}, z = {0.125f, 0.5f, 0.4f, 0.6f};
  Color3f value = t->eval(at_points(x, y, z), Bool(true));
  for (size_t i = 0; i < x.size(); ++i) {
    float f = linear(x[i], y[i], z[i]);
    expect_color(value, i, {f, 2 * f, 3 * f}, 1e-5f, "trilinear");
  }
  EXPECT_NEAR(t->eval_1(at_points({0.5f}, {0.5f}, {0.5f}), Bool(true)).read(0), 2 * linear(0.5f, 0.5f, 0.5f), 1e-5f);
  // Clamped outside: the border texels' values.
  expect_color(t->eval(at_points({-3.0f}, {0.125f}, {0.125f}), Bool(true)), 0,
               {linear(0.125f, 0.125f, 0.125f), 2 * linear(0.125f, 0.125f, 0.125f), 3 * linear(0.125f, 0.125f, 0.125f)},
               1e-5f, "clamped");
  EXPECT_NEAR(t->mean().read(0), 2 * linear(0.5f, 0.5f, 0.5f), 1e-5f);
}

TEST(TextureVolume, ToWorldTheFilesBoxAndNearest) {
  VolumeGrid grid = linear_grid(4, 1);
  grid.box_min = {1, 1, 1};
  grid.box_max = {3, 3, 3};
  std::string path = written(grid, "box.vol");
  // to_world scales the unit cube by 2: world (1, 1, 1) is the grid's center.
  auto scaled = volume_texture(path, {{"to_world", affine_rows({2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0})}});
  expect_color(scaled->eval(at_points({1.0f}, {1.0f}, {1.0f}), Bool(true)), 0,
               {linear(0.5f, 0.5f, 0.5f), linear(0.5f, 0.5f, 0.5f), linear(0.5f, 0.5f, 0.5f)}, 1e-5f, "to_world");
  auto boxed = volume_texture(path, {{"use_grid_bbox", true}});
  float f = linear(0.375f, 0.625f, 0.5f);
  expect_color(boxed->eval(at_points({1.75f}, {2.25f}, {2.0f}), Bool(true)), 0, {f, f, f}, 1e-5f, "use_grid_bbox");
  auto nearest = volume_texture(path, {{"filter_type", std::string("nearest")}});
  float texel = linear(0.375f, 0.125f, 0.875f);  // the texel (1, 0, 3) holds f at its center
  expect_color(nearest->eval(at_points({0.3f}, {0.2f}, {0.9f}), Bool(true)), 0, {texel, texel, texel}, 1e-5f,
               "nearest");
}

TEST(TextureVolume, TheGridIsATensorParameter) {
  auto t = volume_texture(written(linear_grid(2, 1), "param.vol"));
  EXPECT_EQ(parameter_keys(*t), (std::vector<std::string>{"volume.data", "volume.to_world"}));
  SceneParameters params(*t);
  params.set("volume.data", TensorXf::full(0.25f, {3, 3, 3, 1}));
  params.update();
  expect_color(t->eval(at_points({0.1f}, {0.5f}, {0.9f}), Bool(true)), 0, {0.25f, 0.25f, 0.25f}, 1e-6f, "new data");
  params.set("volume.data", TensorXf::full(0.25f, {3, 3, 3, 2}));
  EXPECT_THROW(params.update(), ValueError);
}

TEST(TextureVolume, ConstantsAndErrors) {
  auto constant = texture("volume", {{"volume", Color3d{0.2, 0.4, 0.6}}});
  expect_color(constant->eval(at_points({5.0f}, {0.0f}, {0.0f}), Bool(true)), 0, {0.2f, 0.4f, 0.6f}, 1e-6f, "constant");
  EXPECT_TRUE(constant->is_constant());

  auto bytes = [](const std::string& name, const std::string& content) {
    std::string path = temp_path(name);
    std::ofstream(path, std::ios::binary) << content;
    return path;
  };
  expect_error<FileError>([&] { read_volume_grid(bytes("magic.vol", std::string(60, 'x'))); }, {"VOL"});
  VolumeGrid grid = linear_grid(2, 1);
  std::string good = written(grid, "good.vol");
  std::ifstream in(good, std::ios::binary);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string version = content, encoding = content;
  version[3] = 2;
  encoding[4] = 2;
  expect_error<FileError>([&] { read_volume_grid(bytes("version.vol", version)); }, {"version 2"});
  expect_error<FileError>([&] { read_volume_grid(bytes("encoding.vol", encoding)); }, {"encoding 2"});
  expect_error<FileError>([&] { read_volume_grid(bytes("short.vol", content.substr(0, content.size() - 4))); },
                          {"announces 8 values"});
  expect_error<FileError>([&] { volume_texture(temp_path("missing.vol")); }, {"missing.vol"});
  VolumeGrid two = linear_grid(2, 2);
  expect_error<ValueError>([&] { volume_texture(written(two, "two.vol")); }, {"1 or 3"});
  expect_error<ValueError>([&] { volume_texture(good, {{"filter_type", std::string("cubic")}}); }, {"filter_type"});
  expect_error<ValueError>([&] { volume_texture(good, {{"wrap_mode", std::string("edge")}}); }, {"wrap_mode"});
}
