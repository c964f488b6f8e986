// What the particle tracer samples: emitters' sample_ray() (chi-square tests of the ray
// directions of area, point and spot lights and environment maps and of the ray origins of
// area and directional area lights against their densities; the weights against the
// emitted power), and the
// perspective sensor's sample_direction() (the inverse of its sample_ray(), refused outside
// the crop window, its importance integrating to 1 over the crop's directions).
#include <gtest/gtest.h>

#include <cstdio>

#include <kiln/render/sensor.h>
#include <kiln/render/shape.h>
#include <kiln/render/warp.h>

#include "chi2.h"
#include "plugin_test_support.h"

using namespace kiln;
using namespace kiln::render;
using namespace kiln::render::test;

namespace {

/// A rectangle scaled to 2 x 1 (area 8 over its [-2, 2] x [-1, 1] extent), turned 90° about x
/// so that its normal is +y, then moved to (0.5, 1, -0.3).
constexpr Matrix4d kPanel{2, 0, 0, 0.5, 0, 0, 1, 1, 0, -1, 0, -0.3, 0, 0, 0, 1};
constexpr float kPanelArea = 8.0f;

/// An emitter `plugin` on the panel, wired as a scene wires it (the shape kept alive).
struct PanelLight {
  std::shared_ptr<kiln::render::Shape> shape;
  std::shared_ptr<Emitter> light;
};

PanelLight panel_light(const std::string& plugin) {
  auto light = emitter(plugin, {{"radiance", Color3d{{1, 2, 3}}}});
  PanelLight panel{
      create<kiln::render::Shape>(PluginKind::Shape, "rectangle",
                                  {{"to_world", kPanel}, {"emitter", std::static_pointer_cast<Object>(light)}}),
      light};
  light->set_shape(panel.shape.get());
  return panel;
}

/// Random 2D samples for the dimension a test holds fixed.
Array2f other_samples(size_t n) {
  PCG32 rng(n, 7);
  return Array2f(rng.next_float32(), rng.next_float32());
}

/// The chi-square test of where the panel light's rays start, in the panel's [0, 1]² chart.
void expect_uniform_origins(const PanelLight& panel) {
  std::function<Array2f(const Array2f&)> sample = [&](const Array2f& u) {
    Ray3f ray = panel.light->sample_ray(u, other_samples(u.x.size()), Bool(true)).first;
    // World (x, z) back to the rectangle's local [-1, 1]² (x = 2 s + 0.5, z = -t - 0.3).
    return Array2f(((ray.o.x - 0.5f) * 0.5f + 1.0f) * 0.5f, ((-ray.o.z - 0.3f) + 1.0f) * 0.5f);
  };
  std::function<Float(const Array2f&)> density = [](const Array2f& p) { return Float(1.0f) + 0.0f * p.x; };
  auto r = chi2::chi2_test<Array2f>(sample, density, chi2::square_chart());
  EXPECT_TRUE(r.passed) << r.message;
}

/// The chi-square test of the rays' directions (turned by `to_chart`) against `density`.
void expect_directions(const Emitter& light, const std::function<Array3f(const Array3f&)>& to_chart,
                       const std::function<Float(const Array3f&)>& density) {
  std::function<Array3f(const Array2f&)> sample = [&](const Array2f& u) {
    return to_chart(light.sample_ray(other_samples(u.x.size()), u, Bool(true)).first.d);
  };
  auto r = chi2::chi2_test<Array3f>(sample, density, chi2::sphere_chart());
  EXPECT_TRUE(r.passed) << r.message;
}

/// The first lane's weight.
std::array<float, 3> first_weight(const Emitter& light) {
  return lane(light.sample_ray(Array2f(0.3f, 0.6f), Array2f(0.2f, 0.9f), Bool(true)).second);
}

}  // namespace

TEST(LightPaths, AreaLightRaysAreCosineDistributedAboutTheNormal) {
  PanelLight panel = panel_light("area");
  // The panel's normal is +y: turn it onto +z, where the density is cos θ / π.
  expect_directions(
      *panel.light, [](const Array3f& d) { return Array3f(d.x, -d.z, d.y); },
      [](const Array3f& d) { return max(d.z, Float(0.0f)) * (1.0f / kPi); });
  expect_uniform_origins(panel);
  // Radiance · area · π: the panel's power, the same for every ray.
  std::array<float, 3> weight = first_weight(*panel.light);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(weight[c], float(c + 1) * kPanelArea * kPi, 1e-3f);
}

TEST(LightPaths, DirectionalAreaLightRaysLeaveAlongTheNormal) {
  PanelLight panel = panel_light("directionalarea");
  expect_uniform_origins(panel);
  auto [ray, weight] = panel.light->sample_ray(other_samples(1000), other_samples(1000), Bool(true));
  for (float y : ray.d.y.to_vector()) ASSERT_FLOAT_EQ(y, 1.0f);
  for (float x : ray.d.x.to_vector()) ASSERT_NEAR(x, 0.0f, 1e-6f);
  for (float w : weight.z.to_vector()) ASSERT_NEAR(w, 3.0f * kPanelArea, 1e-4f);
  // A delta direction: never found by camera paths or emitter sampling.
  EXPECT_EQ(panel.light->flags(), emitter_flags::kSurface | emitter_flags::kDeltaDirection);
  auto [ds, towards] = panel.light->sample_direction(Array3f(0.5f, 0.0f, -0.3f), Array2f(0.5f, 0.5f), Bool(true));
  EXPECT_EQ(ds.pdf.item(), 0.0f);
  EXPECT_EQ(lane(towards), (std::array<float, 3>{0.0f, 0.0f, 0.0f}));
}

TEST(LightPaths, PointLightRaysAreUniformOverTheSphere) {
  auto light = emitter("point", {{"position", Vector3d{{1, 2, 3}}}, {"intensity", Color3d{{1, 2, 3}}}});
  expect_directions(
      *light, [](const Array3f& d) { return d; }, [](const Array3f& d) { return Float(0.25f / kPi) + 0.0f * d.x; });
  auto [ray, weight] = light->sample_ray(Array2f(0.3f, 0.6f), Array2f(0.2f, 0.9f), Bool(true));
  EXPECT_EQ(lane(Color3f(ray.o.x, ray.o.y, ray.o.z)), (std::array<float, 3>{1.0f, 2.0f, 3.0f}));
  EXPECT_NEAR(lane(weight)[2], 12.0f * kPi, 1e-4f);
}

TEST(LightPaths, SpotLightRaysFillItsCone) {
  // Pointing along +x: a cone of 30° about it, turned onto the chart's equator by the identity.
  Matrix4d along_x{0, 0, 1, 0, 0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 0, 1};
  auto light = emitter("spot", {{"to_world", along_x}, {"cutoff_angle", 30.0}, {"beam_width", 30.0}});
  float cos_cutoff = std::cos(30.0f * kDegreesToRadians);
  expect_directions(
      *light, [](const Array3f& d) { return d; },
      [&](const Array3f& d) {
        return select(d.x > cos_cutoff, Float(1.0f / (2.0f * kPi * (1.0f - cos_cutoff))), Float(0.0f));
      });
  // Within the beam: the intensity (1) over the cone's density.
  EXPECT_NEAR(first_weight(*light)[0], 2.0f * kPi * (1.0f - cos_cutoff), 1e-4f);
}

TEST(LightPaths, InfiniteLightsEnterTheSceneBoundsWithTheirPower) {
  auto sun = emitter("directional", {{"direction", Vector3d{{0, -1, 0}}}, {"irradiance", Color3d{{2, 2, 2}}}});
  sun->set_scene_bounds({0.0f, 1.0f, 0.0f}, 3.0f);
  auto [ray, weight] = sun->sample_ray(other_samples(1000), Array2f(0.5f, 0.5f), Bool(true));
  // From the disk of radius ~3 facing the light, 3 above the center, going down.
  for (float y : ray.o.y.to_vector()) ASSERT_NEAR(y, 4.0f, 1e-3f);
  for (float dy : ray.d.y.to_vector()) ASSERT_NEAR(dy, -1.0f, 1e-6f);
  // (The sphere is enlarged by a relative kRayEpsilon, as Mitsuba's.)
  EXPECT_NEAR(lane(weight)[0], 2.0f * kPi * 9.0f, 0.05f);
  auto sky = emitter("constant", {{"radiance", Color3d{{1, 1, 1}}}});
  sky->set_scene_bounds({0.0f, 0.0f, 0.0f}, 2.0f);
  Array2f position = other_samples(1000);
  auto [in, sky_weight] = sky->sample_ray(position, Array2f(position.y, position.x), Bool(true));
  // Every ray starts on the sphere and heads inwards.
  for (float r : norm(in.o).to_vector()) ASSERT_NEAR(r, 2.0f, 1e-3f);
  for (float inward : dot(in.o, in.d).to_vector()) ASSERT_LE(inward, 1e-5f);
  EXPECT_NEAR(lane(sky_weight)[0], 4.0f * kPi * kPi * 4.0f, 0.1f);
}

TEST(LightPaths, EnvironmentMapRaysFollowItsImportanceAndEnterTheBounds) {
  // A map brighter towards one corner, turned 90° about x (so its zenith is -z in the
  // world): the rays' directions are opposite those sample_direction() gives, with its
  // density; they start on the disk of the bounding sphere's radius facing the map, outside
  // the sphere; the weight is the radiance times π r² over that density.
  std::string path = write_test_image("light_paths_envmap.exr", 16, 8, 3, [](size_t x, size_t y, size_t c) {
    return 0.05f + float(x * x + 3 * y) / 40.0f + 0.1f * float(c);
  });
  Matrix4d turn{1, 0, 0, 0, 0, 0, -1, 0, 0, 1, 0, 0, 0, 0, 0, 1};
  auto envmap = emitter("envmap", {{"filename", path}, {"to_world", turn}});
  std::remove(path.c_str());
  envmap->set_scene_bounds({0.0f, 1.0f, 0.0f}, 2.0f);
  Array3f anywhere(0.0f, 1.0f, 0.0f);
  expect_directions(
      *envmap, [](const Array3f& d) { return d; },
      [&](const Array3f& d) {
        DirectionSample3f ds;
        ds.d = -d;
        return envmap->pdf_direction(anywhere, ds, Bool(true));
      });
  Array2f position = other_samples(1000);
  auto [ray, weight] = envmap->sample_ray(position, Array2f(position.y, position.x), Bool(true));
  Array3f from_center = ray.o - Array3f(0.0f, 1.0f, 0.0f);
  // (The sphere is enlarged by a relative kRayEpsilon, as Mitsuba's.)
  for (float along : dot(from_center, ray.d).to_vector()) ASSERT_NEAR(along, -2.0f, 1e-3f);
  for (float across : norm(from_center + ray.d * 2.0f).to_vector()) ASSERT_LE(across, 2.0f + 1e-3f);
  DirectionSample3f ds;
  ds.d = -ray.d;
  Float pdf = envmap->pdf_direction(anywhere, ds, Bool(true));
  SurfaceInteraction seen{};
  seen.wi = ray.d;  // eval() reads the radiance arriving along -wi
  Color3f expected = envmap->eval(seen, Bool(true)) * (kPi * 4.0f) / pdf;
  std::vector<float> got = weight.y.to_vector(), want = expected.y.to_vector();
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 2e-3f * want[i]) << i;
}

TEST(LightPaths, SensorConnectionsInvertCameraRays) {
  Matrix4d turned_and_moved{0, 0, 1, 0.5, 0, 1, 0, -1, -1, 0, 0, 2, 0, 0, 0, 1};
  auto sensor = create<Sensor>(PluginKind::Sensor, "perspective",
                               {{"fov", 50.0}, {"principal_point_offset_x", 0.05}, {"to_world", turned_and_moved}});
  PCG32 rng(4096, 3);
  Array2f film(rng.next_float32(), rng.next_float32());
  Ray3f ray = sensor->sample_ray(film, Bool(true)).first;
  Array3f seen = ray.o + ray.d * 2.5f;
  auto [ds, weight] = sensor->sample_direction(seen, Bool(true));
  std::vector<float> u = ds.uv.x.to_vector(), v = ds.uv.y.to_vector(), fu = film.x.to_vector(), fv = film.y.to_vector(),
                     pdf = ds.pdf.to_vector();
  for (size_t i = 0; i < u.size(); ++i) {
    ASSERT_NEAR(u[i], fu[i], 2e-4f) << i;
    ASSERT_NEAR(v[i], fv[i], 2e-4f) << i;
    ASSERT_EQ(pdf[i], 1.0f) << i;
  }
  // Behind the camera, or outside the field of view: not seen.
  Array3f behind = ray.o - ray.d * 2.5f;
  EXPECT_EQ(max(sensor->sample_direction(behind, Bool(true)).first.pdf).item(), 0.0f);
}

TEST(LightPaths, SensorImportanceIntegratesToOneOverTheCrop) {
  for (auto crop : {std::array<int64_t, 4>{0, 0, 64, 48}, std::array<int64_t, 4>{10, 4, 30, 20}}) {
    Properties film(PluginKind::Film, "hdrfilm", "", "test");
    film.set("width", int64_t(64));
    film.set("height", int64_t(48));
    film.set("crop_offset_x", crop[0]);
    film.set("crop_offset_y", crop[1]);
    film.set("crop_width", crop[2]);
    film.set("crop_height", crop[3]);
    auto sensor = create<Sensor>(PluginKind::Sensor, "perspective", {{"fov", 60.0}, {"film", create_object(film)}});
    // ∫ importance dω over the hemisphere ahead (+z, camera space is world space here), from
    // points at distance 1: their weight · dist² is the importance.
    size_t n = 1 << 22;
    PCG32 rng(n, 11);
    Array3f d = warp::square_to_uniform_hemisphere(Array2f(rng.next_float32(), rng.next_float32()));
    Float weight = sensor->sample_direction(d, Bool(true)).second.x;
    double integral = double(sum(weight).item()) * 2.0 * M_PI / double(n);
    EXPECT_NEAR(integral, 1.0, 0.01) << crop[2] << " x " << crop[3];
  }
}
