// The area light on every shape kind: sample_direction() against pdf_direction() with a
// chi-square test over the directions from a reference point (the sphere's cone sampling
// from outside and its surface sampling from inside; area sampling of a disk under
// non-uniform scaling, of a rectangle and of a cube mesh), and the weight radiance / pdf.
#include <gtest/gtest.h>

#include <functional>

#include <kiln/render/accel.h>
#include <kiln/render/shape.h>
#include <kiln/render/warp.h>

#include "chi2.h"
#include "plugin_test_support.h"

using namespace kiln;
using namespace kiln::render;
using namespace kiln::render::test;

namespace {

/// A shape of `plugin` with an area light of radiance (1, 2, 3), wired as a scene wires it.
struct Lit {
  std::shared_ptr<kiln::render::Shape> shape;
  std::shared_ptr<Emitter> light;
  std::unique_ptr<Accel> accel;
};

Lit lit_shape(const std::string& plugin, Parameters parameters) {
  auto light = emitter("area", {{"radiance", Color3d{{1, 2, 3}}}});
  parameters.emplace_back("emitter", std::static_pointer_cast<Object>(light));
  Lit lit{create<kiln::render::Shape>(PluginKind::Shape, plugin, parameters), light, nullptr};
  lit.light->set_shape(lit.shape.get());
  lit.accel = make_accel({lit.shape->accel_geometry()});
  return lit;
}

/// The density pdf_direction() gives the direction `d` from `ref`: the light's point the
/// ray meets (zero where it meets none).
Float density_towards(const Lit& lit, const Array3f& ref, const Array3f& d) {
  Ray3f ray{ref, d, Float(kInfinity)};
  PreliminaryIntersection hit = lit.accel->intersect(ray);
  Bool found = hit.is_valid();
  SurfaceInteraction si = lit.shape->compute_surface_interaction(ray, hit, found, Bool(false));
  DirectionSample3f ds;
  ds.p = si.p;
  ds.n = si.sh_frame.n;
  ds.uv = si.uv;
  ds.d = d;
  ds.dist = hit.t;
  ds.pdf = Float(0.0f);
  ds.delta = Bool(false);
  ds.emitter = UInt32(0u);
  return select(found, lit.light->pdf_direction(ref, ds, found), Float(0.0f));
}

/// The chi-square test of the light's sampling from `ref`. Every light here lies around +z
/// as seen from `ref` and fills a wide solid angle: a density that drops to zero at the
/// light's outline is integrated over the bins it crosses less exactly than a smooth one,
/// so the outline should cross few bins, and away from the chart's poles (the directions
/// are turned so that +z falls on its equator). Samples the light gives no weight (points
/// facing away, as on a cube's far side) are not counted: the density then integrates to
/// the share of those that are.
void expect_sampling_matches_density(const Lit& lit, const Array3f& ref) {
  auto to_chart = [](const Array3f& d) { return Array3f(d.z, d.y, -d.x); };
  auto from_chart = [](const Array3f& c) { return Array3f(-c.z, c.y, c.x); };
  std::function<std::pair<Array3f, Bool>(const Array2f&)> sample = [&](const Array2f& u) {
    auto [ds, weight] = lit.light->sample_direction(ref, u, Bool(true));
    return std::pair(to_chart(ds.d), weight.x != 0.0f);
  };
  std::function<Float(const Array3f&)> density = [&](const Array3f& c) {
    return density_towards(lit, ref, from_chart(c));
  };
  auto r = chi2::chi2_test<Array3f>(sample, density, chi2::sphere_chart());
  EXPECT_TRUE(r.passed) << r.message;
}

constexpr Matrix4d kTiltedScale{2, 0, 0, 0.3, 0, 0.5, -0.6, 0.2, 0, 0.4, 0.8, 3, 0, 0, 0, 1};
/// 0.6 in front of the disk and rectangle that kTiltedScale and flip_normals place (their
/// front normal is (0, 0.8, -1) / 1.28), so they fill a wide solid angle.
const Array3f kInFront(0.3f, 0.575f, 2.531f);

}  // namespace

TEST(EmitterArea, SphereFromOutsideSamplesItsCone) {
  expect_sampling_matches_density(lit_shape("sphere", {{"center", Vector3d{{0.5, -0.2, 2.2}}}, {"radius", 1.5}}),
                                  Array3f(0.0f, 0.0f, 0.0f));
}

TEST(EmitterArea, SphereFromInsideSamplesItsSurface) {
  // From inside, the light faces away unless its normals point inwards.
  expect_sampling_matches_density(
      lit_shape("sphere", {{"center", Vector3d{{0.1, 0.2, 0.3}}}, {"radius", 2.0}, {"flip_normals", true}}),
      Array3f(0.5f, 0.0f, -0.4f));
}

TEST(EmitterArea, DiskUnderNonUniformScaling) {
  expect_sampling_matches_density(lit_shape("disk", {{"to_world", kTiltedScale}, {"flip_normals", true}}), kInFront);
}

TEST(EmitterArea, RectangleAndCubeMeshes) {
  expect_sampling_matches_density(lit_shape("rectangle", {{"to_world", kTiltedScale}, {"flip_normals", true}}),
                                  kInFront);
  // 0.3 local units in front of the cube's -z face.
  expect_sampling_matches_density(lit_shape("cube", {{"to_world", kTiltedScale}}), Array3f(0.3f, 0.98f, 1.96f));
}

TEST(EmitterArea, WeightIsRadianceOverDensity) {
  Lit lit = lit_shape("sphere", {{"center", Vector3d{{0, 0, 3}}}, {"radius", 1.0}});
  PCG32 rng(1000);
  Array2f u(rng.next_float32(), rng.next_float32());
  Array3f ref(0.0f, 0.0f, 0.0f);
  auto [ds, weight] = lit.light->sample_direction(ref, u, Bool(true));
  std::vector<float> pdf = ds.pdf.to_vector(), w = weight.y.to_vector();
  std::vector<float> density = lit.light->pdf_direction(ref, ds, Bool(true)).to_vector();
  for (size_t i = 0; i < pdf.size(); ++i) {
    ASSERT_GT(pdf[i], 0.0f) << i;
    EXPECT_NEAR(w[i] * pdf[i], 2.0f, 2e-4f) << i;
    EXPECT_NEAR(density[i], pdf[i], 1e-4f * pdf[i]) << i;
  }
}
