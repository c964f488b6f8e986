// Ray tracing through Accel, Embree's and the Kiln BVH: spheres, triangles and disks against
// analytic answers in double precision, misses, maxt, occlusion, several shapes, random rays
// against a brute-force reference, degenerate input — each through Embree's raw host
// functions and in kernels on the LLVM backend and the interpreter, for both accelerators;
// Embree's packet widths, inactive lanes, malformed shapes, updates and Embree's own errors.
#include "accel_reference.h"

#include <kiln/errors.h>

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <random>

using namespace kiln;
using namespace kiln::render;
using namespace kiln::render::testing;

namespace {
const AccelSphere kSphere = {{0.25, -0.5, 0.75}, 1.0};

/// Two triangles: one at z = 0, one tilted, five units along x.
AccelTriangles two_triangles() {
  return {{0, 0, 0, 1, 0, 0, 0, 1, 0, 5, 0, 2, 7, 0, 2.5f, 5, 2, 3}, {0, 1, 2, 3, 4, 5}};
}

/// Row-major 4×4 product.
std::array<double, 16> multiply(const std::array<double, 16>& a, const std::array<double, 16>& b) {
  std::array<double, 16> product{};
  for (int row = 0; row < 4; ++row) {
    for (int column = 0; column < 4; ++column) {
      for (int k = 0; k < 4; ++k) product[4 * row + column] += a[4 * row + k] * b[4 * k + column];
    }
  }
  return product;
}

/// translate(1, 2, 3) · rotate(30° about (1, 1, 0)) · scale(2, 0.75, 3): a disk stretched into
/// an ellipse, tilted and moved.
AccelDisk tilted_disk() {
  double c = std::cos(M_PI / 6), s = std::sin(M_PI / 6), k = 1 / std::sqrt(2.0);
  double x = k, y = k;  // the rotation axis; z = 0
  std::array<double, 16> rotation = {c + x * x * (1 - c),
                                     x * y * (1 - c),
                                     y * s,
                                     0,
                                     y * x * (1 - c),
                                     c + y * y * (1 - c),
                                     -x * s,
                                     0,
                                     -y * s,
                                     x * s,
                                     c,
                                     0,
                                     0,
                                     0,
                                     0,
                                     1};
  std::array<double, 16> scale = {2, 0, 0, 0, 0, 0.75, 0, 0, 0, 0, 3, 0, 0, 0, 0, 1};
  std::array<double, 16> translation = {1, 0, 0, 1, 0, 1, 0, 2, 0, 0, 1, 3, 0, 0, 0, 1};
  return {multiply(translation, multiply(rotation, scale))};
}

/// The world position of the disk's local point (x, y, 0).
std::array<float, 3> disk_point(const AccelDisk& disk, double x, double y) {
  const std::array<double, 16>& m = disk.to_world;
  return {float(m[0] * x + m[1] * y + m[3]), float(m[4] * x + m[5] * y + m[7]), float(m[8] * x + m[9] * y + m[11])};
}

/// A ray that reaches `target` at t = `t` along `d`.
HostRay ray_to(const std::array<float, 3>& target, const std::array<float, 3>& d, float t, float maxt = kInf) {
  return {{target[0] - t * d[0], target[1] - t * d[1], target[2] - t * d[2]}, d, maxt};
}

/// The distance from float(value) to the next float: the precision of a float result.
double float_ulp(double value) {
  float rounded = float(std::fabs(value));
  return std::nextafter(rounded, kInf) - rounded;
}

/// Checks one traced lane against the reference: shape and primitive exactly; t and uv to
/// float precision for spheres and disks (solved in double), to Embree's single-precision
/// test for triangles.
void expect_matches(const HostHit& got, const std::optional<ReferenceHit>& want, const ReferenceScene& scene,
                    const std::string& where) {
  if (!want) {
    EXPECT_EQ(got.t, kInf) << where;
    EXPECT_EQ(got.shape, kNoShape) << where;
    EXPECT_EQ(got.prim, 0u) << where;
    EXPECT_EQ(got.u, 0.0f) << where;
    EXPECT_EQ(got.v, 0.0f) << where;
    return;
  }
  ASSERT_EQ(got.shape, want->shape) << where;
  EXPECT_EQ(got.prim, want->prim) << where;
  if (std::holds_alternative<AccelTriangles>(scene.shapes[want->shape])) {
    EXPECT_NEAR(got.t, want->t, 1e-5 * (1 + want->t)) << where;
    EXPECT_NEAR(got.u, want->u, 1e-5) << where;
    EXPECT_NEAR(got.v, want->v, 1e-5) << where;
  } else {
    EXPECT_LE(std::fabs(got.t - want->t), float_ulp(want->t)) << where << ": t " << got.t << " vs " << want->t;
    EXPECT_LE(std::fabs(got.u - want->u), float_ulp(1.0)) << where;  // |uv| <= 1
    EXPECT_LE(std::fabs(got.v - want->v), float_ulp(1.0)) << where;
  }
}

/// Traces `rays` by `route` (all lanes active) and checks each against the reference.
void expect_all_match(const Tracer& tracer, const ReferenceScene& scene, const std::vector<HostRay>& rays) {
  std::unique_ptr<Accel> accel = make_accel(scene.shapes, tracer.kind);
  std::vector<HostHit> hits = intersect_by(tracer.route, *accel, rays, std::vector<bool>(rays.size(), true));
  for (size_t i = 0; i < rays.size(); ++i)
    expect_matches(hits[i], scene.trace(rays[i]), scene, "ray " + std::to_string(i));
}

class AccelRoutes : public ::testing::TestWithParam<Tracer> {};
class AccelKinds : public ::testing::TestWithParam<AccelKind> {};
}  // namespace

TEST_P(AccelRoutes, SphereFromOutsideAndInside) {
  const std::array<float, 3> c = {0.25f, -0.5f, 0.75f};
  std::vector<HostRay> rays = {
      {{c[0], c[1], c[2] - 5}, {0, 0, 1}},                                 // outside, unit d: t = 4
      {{c[0], c[1], c[2] - 5}, {0, 0, 2}},                                 // non-unit d: t = 2
      {{c[0] + 3, c[1] + 0.2f, c[2]}, {-2, 0.1f, 0.05f}},                  // off-center
      {c, {0.3f, 0.4f, 1.2f}},                                             // from the center
      {{c[0] + 0.5f, c[1] + 0.2f, c[2] - 0.1f}, {-1, 0.5f, 0.25f}},        // inside, off-center
      {{c[0] + 600, c[1] - 800, c[2] + 300}, {-599.7f, 799.8f, -299.9f}},  // far away
  };
  ReferenceScene scene{{kSphere}};
  expect_all_match(GetParam(), scene, rays);
  // Far origins, aimed at random points of the sphere: t keeps float precision.
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> unit(-1, 1);
  std::vector<HostRay> far;
  for (int i = 0; i < 200; ++i) {
    std::array<float, 3> o = {1000 * unit(rng), 1000 * unit(rng), 1000 * unit(rng)};
    std::array<float, 3> target = {c[0] + 0.5f * unit(rng), c[1] + 0.5f * unit(rng), c[2] + 0.5f * unit(rng)};
    far.push_back({o, {target[0] - o[0], target[1] - o[1], target[2] - o[2]}});
  }
  expect_all_match(GetParam(), scene, far);
}

TEST_P(AccelRoutes, TrianglesGiveTBarycentricsAndPrimIndex) {
  ReferenceScene scene{{two_triangles()}};
  auto point = [](std::array<float, 3> p0, std::array<float, 3> p1, std::array<float, 3> p2, float u, float v) {
    std::array<float, 3> p;
    for (int i = 0; i < 3; ++i) p[i] = (1 - u - v) * p0[i] + u * p1[i] + v * p2[i];
    return p;
  };
  std::vector<HostRay> rays = {
      ray_to(point({0, 0, 0}, {1, 0, 0}, {0, 1, 0}, 0.2f, 0.3f), {-0.1f, -0.2f, -1}, 1.5f),
      ray_to(point({0, 0, 0}, {1, 0, 0}, {0, 1, 0}, 0.7f, 0.1f), {0, 0, 1}, 2),  // from below
      ray_to(point({5, 0, 2}, {7, 0, 2.5f}, {5, 2, 3}, 0.6f, 0.1f), {0.4f, -0.2f, 1.4f}, 3),
      ray_to(point({5, 0, 2}, {7, 0, 2.5f}, {5, 2, 3}, 0.05f, 0.9f), {-1, 0, 0}, 0.5f),
  };
  expect_all_match(GetParam(), scene, rays);
  std::unique_ptr<Accel> accel = make_accel(scene.shapes, GetParam().kind);
  std::vector<HostHit> hits = intersect_by(GetParam().route, *accel, rays, std::vector<bool>(rays.size(), true));
  EXPECT_NEAR(hits[0].t, 1.5f, 1e-6f);
  EXPECT_NEAR(hits[0].u, 0.2f, 1e-6f);
  EXPECT_NEAR(hits[0].v, 0.3f, 1e-6f);
  EXPECT_EQ(hits[2].prim, 1u);
  EXPECT_NEAR(hits[2].t, 3.0f, 1e-5f);
}

TEST_P(AccelRoutes, DiskUnderNonUniformToWorld) {
  AccelDisk disk = tilted_disk();
  ReferenceScene scene{{disk}};
  std::array<float, 3> d = {0.45f, -0.3f, 1.5f}, back = {-0.45f, 0.3f, -1.5f};
  std::vector<HostRay> rays = {
      ray_to(disk_point(disk, 0.3, -0.4), d, 2),    ray_to(disk_point(disk, -0.9, 0.3), d, 0.75f),
      ray_to(disk_point(disk, 0.3, -0.4), back, 3),  // from the other side
      ray_to(disk_point(disk, 0.8, 0.7), d, 2),      // inside the world-space circle of
      ray_to(disk_point(disk, 0.0, 1.05), back, 1),  // radius 2, outside the ellipse
  };
  expect_all_match(GetParam(), scene, rays);
  std::unique_ptr<Accel> accel = make_accel(scene.shapes, GetParam().kind);
  std::vector<HostHit> hits = intersect_by(GetParam().route, *accel, rays, std::vector<bool>(rays.size(), true));
  EXPECT_NEAR(hits[0].t, 2.0f, 1e-6f);
  EXPECT_NEAR(hits[0].u, 0.3f, 1e-6f);
  EXPECT_NEAR(hits[0].v, -0.4f, 1e-6f);
  EXPECT_EQ(hits[3].shape, kNoShape);
  EXPECT_EQ(hits[4].shape, kNoShape);
}

TEST_P(AccelRoutes, MissesAndMaxt) {
  ReferenceScene scene{{kSphere}};
  std::unique_ptr<Accel> accel = make_accel(scene.shapes, GetParam().kind);
  std::array<float, 3> below = {0.25f, -0.5f, -4.25f};  // t = 4 along +z
  std::vector<HostRay> rays = {{below, {0, 0, -1}},
                               {below, {0, 0, 1}, 3.9f},
                               {below, {0, 0, 1}, 4.1f},
                               {below, {1, 0, 0}},
                               {below, {0, 0, 2}, 1.9f}};
  std::vector<HostHit> hits = intersect_by(GetParam().route, *accel, rays, std::vector<bool>(rays.size(), true));
  for (size_t i : {0, 1, 3, 4}) expect_matches(hits[i], std::nullopt, scene, "miss " + std::to_string(i));
  EXPECT_EQ(hits[2].t, 4.0f);
  EXPECT_EQ(hits[2].shape, 0u);
  std::vector<uint8_t> occluded = occluded_by(GetParam().route, *accel, rays, std::vector<bool>(rays.size(), true));
  EXPECT_EQ(occluded, (std::vector<uint8_t>{0, 0, 1, 0, 0}));
}

TEST_P(AccelRoutes, SeveralShapesGiveTheirIndexAndTheClosestWins) {
  AccelDisk disk = tilted_disk();
  AccelSphere small = {{1.0, 2.0, 6.0}, 0.5};  // above the disk's center (1, 2, 3)
  ReferenceScene scene{{two_triangles(), kSphere, AccelTriangles{}, disk, AccelSphere{{9, 9, 9}, 0.0}, small}};
  std::vector<HostRay> rays = {
      ray_to({0.2f, 0.7f, 0}, {0, 0, -1}, 1),                   // mesh, shape 0
      {{0.25f, -0.5f, -4.25f}, {0, 0, 1}},                      // sphere, shape 1
      ray_to(disk_point(disk, 0.5, 0.2), {0.1f, 0.1f, -1}, 1),  // disk, shape 3
      {{1, 2, 9}, {0, 0, -1}},                                  // the small sphere (5) before the disk
      {{1, 2, 0}, {0, 0, 1}},                                   // the disk before the small sphere
      {{9, 9, 0}, {0, 0, 1}},                                   // through the zero-radius sphere's center
  };
  std::unique_ptr<Accel> accel = make_accel(scene.shapes, GetParam().kind);
  std::vector<HostHit> hits = intersect_by(GetParam().route, *accel, rays, std::vector<bool>(rays.size(), true));
  std::vector<uint32_t> shapes;
  for (const HostHit& hit : hits) shapes.push_back(hit.shape);
  EXPECT_EQ(shapes, (std::vector<uint32_t>{0, 1, 3, 5, 3, kNoShape}));
  for (size_t i = 0; i < rays.size(); ++i) expect_matches(hits[i], scene.trace(rays[i]), scene, std::to_string(i));
  std::vector<uint8_t> occluded = occluded_by(GetParam().route, *accel, rays, std::vector<bool>(rays.size(), true));
  EXPECT_EQ(occluded, (std::vector<uint8_t>{1, 1, 1, 1, 1, 0}));
}

TEST_P(AccelRoutes, RandomRaysMatchBruteForce) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> unit(-1, 1);
  AccelTriangles mesh;
  for (int i = 0; i < 90; ++i) mesh.positions.push_back(2 * unit(rng));
  for (uint32_t i = 0; i < 90 / 3; ++i) mesh.faces.push_back(i);
  ReferenceScene scene{{mesh}};
  for (int i = 0; i < 3; ++i) {
    scene.shapes.push_back(AccelSphere{{2.0 * unit(rng), 2.0 * unit(rng), 2.0 * unit(rng)}, 0.5 + 0.3 * unit(rng)});
  }
  for (int i = 0; i < 2; ++i) {
    AccelDisk disk{};
    for (int k = 0; k < 12; ++k) disk.to_world[k] = unit(rng);
    disk.to_world[15] = 1;
    scene.shapes.push_back(disk);
  }
  std::vector<HostRay> rays;
  for (int i = 0; i < 20000; ++i) {
    // Most rays aim at a point among the shapes; some go anywhere; half stop early.
    std::array<float, 3> o = {4 * unit(rng), 4 * unit(rng), 4 * unit(rng)};
    std::array<float, 3> target = {2 * unit(rng), 2 * unit(rng), 2 * unit(rng)};
    HostRay ray{o, {target[0] - o[0], target[1] - o[1], target[2] - o[2]}, kInf};
    if (i % 4 == 3) ray.d = {unit(rng), unit(rng), unit(rng)};
    if (i % 2) ray.maxt = 1.2f + unit(rng);
    rays.push_back(ray);
  }
  std::unique_ptr<Accel> accel = make_accel(scene.shapes, GetParam().kind);
  std::vector<HostHit> hits = intersect_by(GetParam().route, *accel, rays, std::vector<bool>(rays.size(), true));
  std::vector<uint8_t> occluded = occluded_by(GetParam().route, *accel, rays, std::vector<bool>(rays.size(), true));
  size_t compared = 0, hit_count = 0;
  for (size_t i = 0; i < rays.size(); ++i) {
    bool ambiguous = false;
    std::optional<ReferenceHit> want = scene.trace(rays[i], &ambiguous);
    if (ambiguous) continue;
    ++compared;
    hit_count += want.has_value();
    expect_matches(hits[i], want, scene, "random ray " + std::to_string(i));
    EXPECT_EQ(occluded[i], want.has_value()) << "random ray " << i;
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(compared, 19000u);  // few rays come close enough to an edge to be skipped
  EXPECT_GT(hit_count, 8000u);
}

TEST_P(AccelRoutes, DegenerateShapesAndRaysMiss) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  // Face 0 is fine; 1 has zero area; 2 a NaN vertex; 3 a vertex past Embree's 1.8e18.
  AccelTriangles mesh{{0, 0, 0, 1, 0, 0, 0,   1, 0,  //
                       3, 0, 0, 4, 1, 0, 5,   2, 0,  //
                       6, 0, 0, 7, 0, 0, nan, 1, 0, 9, 0, 0, 10, 0, 0, 9, 1e30f, 0},
                      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}};
  AccelTriangles vertices_only{{0, 0, 5, 1, 0, 5, 0, 1, 5}, {}};
  AccelDisk flattened{{1, 2, 0, 20, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}};  // y axis = 2 x axis
  std::unique_ptr<Accel> accel =
      make_accel({mesh, vertices_only, AccelTriangles{}, AccelSphere{{20, 20, -3}, 0}, flattened}, GetParam().kind);
  std::array<float, 3> down = {0, 0, -1};
  std::vector<HostRay> rays = {
      ray_to({0.2f, 0.2f, 0}, down, 1),     // face 0: the one hit
      ray_to({4, 1, 0}, down, 1),           // on the zero-area face's segment
      ray_to({6.6f, 0.3f, 0}, down, 1),     // inside what the NaN face's other vertices span
      ray_to({9.2f, 0.1f, 0}, down, 1),     // inside the face with the huge vertex
      ray_to({0.2f, 0.2f, 5}, down, 1, 2),  // the faceless mesh's vertices
      {{20, 20, 0}, {0, 0, -1}},            // through the zero-radius sphere's center
      {{21, 0, 5}, {0, 0, -1}},             // through the flattened disk's segment
      {{nan, 0.2f, 1}, down},               // rays Embree cannot trace, aimed at face 0:
      {{0.2f, 0.2f, 1}, {0, nan, -1}},
      {{0.2f, 0.2f, 1}, {0, 0, -kInf}},
      {{0.2f, 0.2f, 2e18f}, down},
      {{0.2f, 0.2f, 1}, {0, 0, 0}},
      {{0.2f, 0.2f, 1}, down, nan},
      {{0.2f, 0.2f, 1}, down, -1},
  };
  std::vector<HostHit> hits = intersect_by(GetParam().route, *accel, rays, std::vector<bool>(rays.size(), true));
  std::vector<uint8_t> occluded = occluded_by(GetParam().route, *accel, rays, std::vector<bool>(rays.size(), true));
  EXPECT_EQ(hits[0].shape, 0u);
  EXPECT_EQ(occluded[0], 1);
  for (size_t i = 1; i < rays.size(); ++i) {
    EXPECT_EQ(hits[i].shape, kNoShape) << "ray " << i;
    EXPECT_EQ(hits[i].t, kInf) << "ray " << i;
    EXPECT_EQ(occluded[i], 0) << "ray " << i;
  }
}

TEST_P(AccelRoutes, AnEmptySceneMissesEverything) {
  std::unique_ptr<Accel> accel = make_accel({}, GetParam().kind);
  std::vector<HostRay> rays = {{{0, 0, 0}, {0, 0, 1}}, {{1, 2, 3}, {-1, 0, 0}, 5}};
  std::vector<HostHit> hits = intersect_by(GetParam().route, *accel, rays, {true, true});
  for (size_t i = 0; i < rays.size(); ++i) expect_matches(hits[i], std::nullopt, ReferenceScene{}, std::to_string(i));
  EXPECT_EQ(occluded_by(GetParam().route, *accel, rays, {true, true}), (std::vector<uint8_t>{0, 0}));
}

TEST_P(AccelRoutes, InactiveLanes) {
  std::unique_ptr<Accel> accel = make_accel({kSphere}, GetParam().kind);
  std::vector<HostRay> rays(6, HostRay{{0.25f, -0.5f, -4.25f}, {0, 0, 1}});
  std::vector<bool> active = {true, false, true, false, false, true};
  std::vector<HostHit> hits = intersect_by(GetParam().route, *accel, rays, active);
  std::vector<uint8_t> occluded = occluded_by(GetParam().route, *accel, rays, active);
  for (size_t i = 0; i < rays.size(); ++i) {
    if (active[i]) {
      EXPECT_EQ(hits[i].t, 4.0f) << i;
      EXPECT_EQ(occluded[i], 1) << i;
    } else {  // misses, from Accel's queries and the host functions alike
      expect_matches(hits[i], std::nullopt, ReferenceScene{{kSphere}}, "inactive " + std::to_string(i));
      EXPECT_EQ(occluded[i], 0) << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Routes, AccelRoutes,
                         ::testing::Values(Tracer{AccelKind::Embree, Route::Raw},
                                           Tracer{AccelKind::Embree, Route::Llvm},
                                           Tracer{AccelKind::Embree, Route::Interpreter},
                                           Tracer{AccelKind::Kiln, Route::Llvm},
                                           Tracer{AccelKind::Kiln, Route::Interpreter}),
                         [](const ::testing::TestParamInfo<Tracer>& info) { return tracer_name(info.param); });

TEST(Accel, EveryPacketWidth) {
  AccelDisk disk = tilted_disk();
  ReferenceScene scene{{kSphere, two_triangles(), disk}};
  std::unique_ptr<Accel> accel = make_accel(scene.shapes);
  std::vector<HostRay> pattern = {
      {{0.25f, -0.5f, -4.25f}, {0, 0, 1}},
      ray_to({0.2f, 0.7f, 0}, {0, 0, -1}, 2),
      ray_to(disk_point(disk, 0.1, 0.5), {0.2f, 0.1f, 1}, 1),
      {{0.25f, -0.5f, -4.25f}, {0, 0, -1}},
      ray_to({5.5f, 0.5f, 2.4f}, {0, 0, 1}, 3),
      {{std::numeric_limits<float>::quiet_NaN(), 0, 0}, {0, 0, 1}},
      {{0.25f, -0.5f, -4.25f}, {0, 0, 1}, 2},
  };
  for (uint32_t width : {1u, 4u, 8u, 16u, 5u, 3u, 37u}) {
    std::vector<HostRay> rays;
    std::vector<bool> active;
    for (uint32_t lane = 0; lane < width; ++lane) {
      rays.push_back(pattern[(lane + width) % pattern.size()]);
      active.push_back(width == 1 || lane % 4 != 2);
    }
    std::vector<HostHit> hits = intersect_by(Route::Raw, *accel, rays, active);
    std::vector<uint8_t> occluded = occluded_by(Route::Raw, *accel, rays, active);
    for (uint32_t lane = 0; lane < width; ++lane) {
      std::string where = "width " + std::to_string(width) + ", lane " + std::to_string(lane);
      if (active[lane]) {
        std::optional<ReferenceHit> want = scene.trace(rays[lane]);
        expect_matches(hits[lane], want, scene, where);
        EXPECT_EQ(occluded[lane], want.has_value()) << where;
      } else {  // a miss
        expect_matches(hits[lane], std::nullopt, scene, where);
        EXPECT_EQ(occluded[lane], 0) << where;
      }
    }
  }
}

TEST_P(AccelKinds, MalformedShapesAreValueErrors) {
  auto expect_error = [this](std::vector<AccelGeometry> shapes, const std::string& fragment) {
    try {
      make_accel(std::move(shapes), GetParam());
      ADD_FAILURE() << "no error; expected one mentioning: " << fragment;
    } catch (const ValueError& error) {
      EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
    }
  };
  float inf = kInf;
  double nan = std::numeric_limits<double>::quiet_NaN();
  expect_error({kSphere, AccelTriangles{{0, 0, 0, 1}, {}}},
               "shape 1 (triangle mesh): positions holds 4 floats, which is not 3 (x, y, z) per vertex");
  expect_error({AccelTriangles{{0, 0, 0, 1, 0, 0, 0, 1, 0}, {0, 1}}},
               "shape 0 (triangle mesh): faces holds 2 indices, which is not 3 per triangle");
  expect_error({AccelTriangles{{0, 0, 0, 1, 0, 0, 0, 1, 0}, {0, 1, 2, 2, 1, 3}}},
               "shape 0 (triangle mesh): face 1 refers to vertex 3, but the mesh has 3 vertices");
  expect_error({AccelSphere{{0, 0, 0}, -1}}, "shape 0 (sphere): radius is -1; it must be finite and >= 0");
  expect_error({AccelSphere{{0, 0, 0}, nan}}, "shape 0 (sphere): radius is nan");
  expect_error({AccelSphere{{0, 0, 0}, inf}}, "shape 0 (sphere): radius is inf");
  expect_error({kSphere, kSphere, AccelSphere{{0, inf, 0}, 1}},
               "shape 2 (sphere): center component 1 is inf; it must be finite");
  AccelDisk disk = tilted_disk();
  disk.to_world[6] = nan;
  expect_error({disk}, "shape 0 (disk): to_world[1][2] is nan; it must be finite");
  disk = tilted_disk();
  disk.to_world[14] = 0.5;
  expect_error({disk}, "shape 0 (disk): to_world's last row is (0, 0, 0.5, 1); an affine transform's is (0, 0, 0, 1)");
}

TEST_P(AccelKinds, UpdateMeshPositions) {
  AccelTriangles mesh = two_triangles();
  std::unique_ptr<Accel> accel = make_accel({kSphere, mesh, AccelTriangles{{0, 0, 0}, {}}}, GetParam());
  std::vector<HostRay> rays = {ray_to({0.2f, 0.7f, 0}, {0, 0, -1}, 2), ray_to({0.2f, 0.7f, 0}, {0, 0, -1}, 1),
                               ray_to({5.5f, 0.5f, 2.375f}, {0, 0, 1}, 3)};
  std::vector<bool> active(rays.size(), true);
  auto traced = [&] {
    std::vector<std::pair<float, uint32_t>> found;
    for (const HostHit& hit : intersect_by(Route::Llvm, *accel, rays, active)) found.push_back({hit.t, hit.shape});
    return found;
  };
  using Found = std::vector<std::pair<float, uint32_t>>;
  EXPECT_EQ(traced(), (Found{{2.0f, 1}, {1.0f, 1}, {3.0f, 1}}));
  // The first triangle moves down by one.
  std::vector<float> moved = mesh.positions;
  for (int vertex = 0; vertex < 3; ++vertex) moved[3 * vertex + 2] = -1;
  accel->update_mesh_positions(1, moved);
  EXPECT_EQ(traced(), (Found{{3.0f, 1}, {2.0f, 1}, {3.0f, 1}}));
  // A NaN vertex makes its triangle unhittable; the other one stays.
  moved[0] = std::numeric_limits<float>::quiet_NaN();
  accel->update_mesh_positions(1, moved);
  EXPECT_EQ(traced(), (Found{{kInf, kNoShape}, {kInf, kNoShape}, {3.0f, 1}}));
  // ... until it is finite again.
  moved[0] = 0;
  accel->update_mesh_positions(1, moved);
  EXPECT_EQ(traced(), (Found{{3.0f, 1}, {2.0f, 1}, {3.0f, 1}}));
  accel->update_mesh_positions(2, {1, 2, 3});  // a mesh without faces takes positions too
}

TEST_P(AccelKinds, UpdateErrors) {
  std::unique_ptr<Accel> accel = make_accel({kSphere, two_triangles()}, GetParam());
  auto expect_error = [&](size_t shape, std::vector<float> positions, const std::string& fragment) {
    try {
      accel->update_mesh_positions(shape, positions);
      ADD_FAILURE() << "no error; expected one mentioning: " << fragment;
    } catch (const ValueError& error) {
      EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
    }
  };
  expect_error(2, {}, "update_mesh_positions: shape index 2 is out of range: the accel has 2 shapes");
  expect_error(0, {}, "shape 0 (sphere) is not a triangle mesh");
  expect_error(1, {1, 2, 3},
               "shape 1 (triangle mesh): got 3 floats; the mesh has 6 vertices, so it takes 18 (x, y, z per vertex)");
}

INSTANTIATE_TEST_SUITE_P(Kinds, AccelKinds, ::testing::Values(AccelKind::Embree, AccelKind::Kiln),
                         [](const ::testing::TestParamInfo<AccelKind>& info) {
                           return std::string(info.param == AccelKind::Embree ? "Embree" : "Kiln");
                         });

TEST(Accel, EmbreeErrorsBecomeKilnErrors) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "limits the address space, which AddressSanitizer's shadow memory does not allow";
#else
  // Embree fails to allocate a mesh of 12 MB when the address space may grow by 4 MB only.
  make_accel({kSphere});  // the device exists before the limit
  AccelTriangles mesh;
  mesh.positions.assign(3 << 20, 0.0f);
  mesh.faces.assign(3 << 20, 0);
  std::vector<AccelGeometry> shapes = {std::move(mesh)};
  long pages = 0;
  FILE* statm = std::fopen("/proc/self/statm", "r");
  ASSERT_TRUE(statm && std::fscanf(statm, "%ld", &pages) == 1);
  std::fclose(statm);
  rlimit original;
  ASSERT_EQ(getrlimit(RLIMIT_AS, &original), 0);
  rlimit limited = original;
  limited.rlim_cur = rlim_t(pages) * rlim_t(sysconf(_SC_PAGESIZE)) + (4 << 20);
  std::string message;
  ASSERT_EQ(setrlimit(RLIMIT_AS, &limited), 0);
  try {
    make_accel(std::move(shapes));
  } catch (const InternalError& error) {
    message = error.what();
  } catch (const std::exception& error) {
    message = std::string("not an InternalError: ") + error.what();
  }
  setrlimit(RLIMIT_AS, &original);
  EXPECT_NE(message.find("kiln.render: Embree could not allocate a mesh's vertices: out of memory"), std::string::npos)
      << message;
#endif
}
