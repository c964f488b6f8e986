// The pinhole camera against Mitsuba 3.9's perspective sensor (values printed by
// mi.load_dict({'type': 'perspective', ...}).sample_ray and ProjectiveTransform4f).
#include <kiln/render/camera.h>

#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::render;

namespace {
Array3f vec(float x, float y, float z) { return Array3f(Float(x), Float(y), Float(z)); }
void expect_vec(const Array3f& v, float x, float y, float z, size_t lane = 0) {
  EXPECT_NEAR(v.x.read(lane), x, 2e-5f);
  EXPECT_NEAR(v.y.read(lane), y, 2e-5f);
  EXPECT_NEAR(v.z.read(lane), z, 2e-5f);
}
}  // namespace

TEST(Camera, PerspectiveMatrixMatchesMitsuba) {
  // mi.ProjectiveTransform4f().perspective(fov=40, near=0.01, far=100)
  Matrix4f m = perspective_matrix(Float(40.0f), 0.01f, 100.0f);
  float expected[16] = {2.74748f, 0, 0, 0, 0, 2.74748f, 0, 0, 0, 0, 1.0001f, -0.010001f, 0, 0, 1, 0};
  for (size_t i = 0; i < 16; ++i) EXPECT_NEAR(m.entries[i].item(), expected[i], 2e-5f) << i;
}

TEST(Camera, FieldOfViewAxes) {
  // fov 40 along y on a 64 x 48 film: Mitsuba's x_fov is 51.774009704589844.
  EXPECT_NEAR(x_fov_from(Float(40.0f), FovAxis::Y, 64, 48).item(), 51.77401f, 1e-4f);
  EXPECT_NEAR(x_fov_from(Float(40.0f), FovAxis::X, 64, 48).item(), 40.0f, 1e-5f);
  EXPECT_NEAR(x_fov_from(Float(40.0f), FovAxis::Larger, 64, 48).item(), 40.0f, 1e-5f);
  EXPECT_NEAR(x_fov_from(Float(40.0f), FovAxis::Smaller, 64, 48).item(), 51.77401f, 1e-4f);
  // Diagonal: tan(x/2) = tan(20°) · 64 / 80.
  float diagonal = 2.0f * std::atan(std::tan(20.0f * 3.14159265f / 180.0f) * 0.8f) * 180.0f / 3.14159265f;
  EXPECT_NEAR(x_fov_from(Float(40.0f), FovAxis::Diagonal, 64, 48).item(), diagonal, 1e-4f);
}

TEST(Camera, RaysMatchMitsubasSampleRay) {
  // perspective, fov 40 along x, near 0.01, far 100, 64 x 48 film,
  // to_world = look_at(origin=[1, 2, 3], target=[0, 0, 0], up=[0, 0, 1])
  Transform4f to_world = Transform4f().look_at(vec(1, 2, 3), vec(0, 0, 0), vec(0, 0, 1));
  Array2f film(Float({0.5f, 0.0f, 1.0f, 0.25f}), Float({0.5f, 0.0f, 1.0f, 0.75f}));
  CameraRays rays = pinhole_rays(to_world, Float(40.0f), 64.0f / 48.0f, 0.01f, 100.0f, film);
  expect_vec(rays.origin, 0.997327f, 1.99465f, 2.99198f, 0);
  expect_vec(rays.direction, -0.267261f, -0.534522f, -0.801784f, 0);
  expect_vec(rays.origin, 0.999604f, 1.99107f, 2.99361f, 1);
  expect_vec(rays.direction, -0.0360426f, -0.812882f, -0.581313f, 1);
  expect_vec(rays.origin, 0.995051f, 1.99824f, 2.99035f, 2);
  expect_vec(rays.direction, -0.450492f, -0.160188f, -0.878292f, 2);
  expect_vec(rays.origin, 0.999445f, 1.99482f, 2.99117f, 3);
  expect_vec(rays.direction, -0.0541644f, -0.505123f, -0.861346f, 3);
  EXPECT_NEAR(rays.max_distance.read(0), 99.99f, 1e-3f);  // straight ahead: far - near
}

TEST(Camera, YAxisFovRayMatchesMitsuba) {
  // fov 40 along y, identity to_world, film position (0.1, 0.2): Mitsuba gives
  // direction (0.354642, 0.199486, 0.913474).
  Float x_fov = x_fov_from(Float(40.0f), FovAxis::Y, 64, 48);
  Array2f film(Float(0.1f), Float(0.2f));
  CameraRays rays = pinhole_rays(Transform4f(), x_fov, 64.0f / 48.0f, 0.01f, 10000.0f, film);
  expect_vec(rays.direction, 0.354642f, 0.199486f, 0.913474f);
}
