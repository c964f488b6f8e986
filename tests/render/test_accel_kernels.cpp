// Accel traced from inside Kiln kernels, for both accelerators: rays bouncing through a stack
// of layers in a while_loop (symbolic and evaluated, on the LLVM backend and the
// interpreter), and one compiled kernel serving every Accel: the scene is a launch
// parameter, never baked.
#include "accel_reference.h"

#include <kiln/construct.h>
#include <kiln/control.h>

#include <gtest/gtest.h>

#include <random>

using namespace kiln;
using namespace kiln::render;
using namespace kiln::render::testing;

namespace {
constexpr int kLayers = 5;

/// Squares [-1, 1]² at z = 1 ... kLayers, two triangles each: layer k is faces 2k and 2k+1.
AccelTriangles layers() {
  AccelTriangles mesh;
  for (uint32_t k = 0; k < kLayers; ++k) {
    float z = float(k + 1);
    for (auto [x, y] : {std::pair(-1.0f, -1.0f), {1.0f, -1.0f}, {1.0f, 1.0f}, {-1.0f, 1.0f}}) {
      mesh.positions.insert(mesh.positions.end(), {x, y, z});
    }
    mesh.faces.insert(mesh.faces.end(), {4 * k, 4 * k + 1, 4 * k + 2, 4 * k, 4 * k + 2, 4 * k + 3});
  }
  return mesh;
}

/// Rays starting below the layers, heading up at a slant (d not unit), away from the
/// squares' edges; `expected_layers` gets how many layers each crosses before leaving the
/// squares' column (the first ones: a line that leaves a square never comes back).
std::vector<HostRay> slanted_rays(size_t count, std::vector<uint32_t>& expected_layers) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> unit(-1, 1);
  std::vector<HostRay> rays;
  while (rays.size() < count) {
    float scale = 1.5f + unit(rng) / 2;
    HostRay ray{{0.9f * unit(rng), 0.9f * unit(rng), 0}, {0.4f * unit(rng), 0.4f * unit(rng), 1}};
    uint32_t crossed = 0;
    bool near_an_edge = false;
    for (int k = 1; k <= kLayers; ++k) {
      float x = ray.o[0] + k * ray.d[0], y = ray.o[1] + k * ray.d[1];
      near_an_edge |= std::fabs(std::fabs(x) - 1) < 1e-3f || std::fabs(std::fabs(y) - 1) < 1e-3f;
      if (std::fabs(x) < 1 && std::fabs(y) < 1 && crossed == uint32_t(k - 1)) ++crossed;
    }
    if (near_an_edge) continue;
    for (float& component : ray.d) component *= scale;
    rays.push_back(ray);
    expected_layers.push_back(crossed);
  }
  return rays;
}
}  // namespace

class AccelKernels : public ::testing::TestWithParam<AccelKind> {};

TEST_P(AccelKernels, RaysStepThroughLayersInAWhileLoop) {
  std::unique_ptr<Accel> accel = make_accel({layers()}, GetParam());
  std::vector<uint32_t> expected;
  std::vector<HostRay> rays = slanted_rays(100, expected);
  for (Route route : {Route::Llvm, Route::Interpreter}) {
    for (ControlMode mode : {ControlMode::Symbolic, ControlMode::Evaluated}) {
      SCOPED_TRACE(route_name(route) + (mode == ControlMode::Symbolic ? ", symbolic" : ", evaluated"));
      BackendScope backend(route);
      auto [ray, active] = to_kiln(rays, std::vector<bool>(rays.size(), true));
      // Each iteration traces from just past the previous hit; a lane stops at its first miss.
      auto [o, count, layer_sum, more] = while_loop(
          std::tuple(ray.o, zeros<UInt32>(rays.size()), zeros<UInt32>(rays.size()), active),
          [](const Array3f&, const UInt32&, const UInt32&, const Bool& more) { return more; },
          [&, d = ray.d](const Array3f& o, const UInt32& count, const UInt32& layer_sum, const Bool&) {
            PreliminaryIntersection hit = accel->intersect(Ray3f{o, d, Float(kInf)});
            Bool found = hit.is_valid();
            Array3f next(o.x + d.x * (hit.t + 1e-3f), o.y + d.y * (hit.t + 1e-3f), o.z + d.z * (hit.t + 1e-3f));
            return std::tuple(next, count + select(found, UInt32(1u), UInt32(0u)),
                              layer_sum + select(found, hit.prim_index / 2u, UInt32(0u)), found);
          },
          mode, "layers");
      std::vector<uint32_t> counts = count.to_vector(), sums = layer_sum.to_vector();
      for (size_t i = 0; i < rays.size(); ++i) {
        ASSERT_EQ(counts[i], expected[i]) << "ray " << i;
        EXPECT_EQ(sums[i], expected[i] * (expected[i] - 1) / 2) << "ray " << i;  // layers 0, 1, ...
      }
    }
  }
}

TEST_P(AccelKernels, ASecondAccelReusesTheCompiledKernel) {
  // Embree's scene is a host call's context; the Kiln BVH's arrays are the kernel's inputs
  // and its node count a launch parameter, so scenes with the same kinds of shapes share it.
  AccelTriangles more_layers = layers();
  more_layers.positions.insert(more_layers.positions.end(), {-1, -1, 9, 1, -1, 9, 1, 1, 9});
  more_layers.faces.insert(more_layers.faces.end(), {20, 21, 22});
  ReferenceScene first{{AccelSphere{{0, 0, 0}, 1}}};
  if (GetParam() == AccelKind::Kiln) first.shapes.insert(first.shapes.begin(), layers());
  ReferenceScene second{{more_layers, AccelSphere{{0.2, 0.1, 8}, 2}}};
  std::unique_ptr<Accel> first_accel = make_accel(first.shapes, GetParam()),
                         second_accel = make_accel(second.shapes, GetParam());
  std::vector<uint32_t> unused;
  std::vector<HostRay> rays = slanted_rays(256, unused);
  for (HostRay& ray : rays) ray.o[2] = -10;
  std::vector<bool> active(rays.size(), true);
  auto check = [&](const Accel& accel, const ReferenceScene& scene) {
    std::vector<HostHit> hits = intersect_by(Route::Llvm, accel, rays, active);
    for (size_t i = 0; i < rays.size(); ++i) {
      bool ambiguous = false;
      std::optional<ReferenceHit> want = scene.trace(rays[i], &ambiguous);
      if (ambiguous) continue;
      ASSERT_EQ(hits[i].shape, want ? want->shape : kNoShape) << "ray " << i;
      if (want) EXPECT_NEAR(hits[i].t, want->t, 1e-5 * want->t) << "ray " << i;
    }
  };
  check(*first_accel, first);
  size_t compiles = cache_stats().compiles;
  check(*second_accel, second);
  check(*first_accel, first);
  EXPECT_EQ(cache_stats().compiles, compiles);
}

INSTANTIATE_TEST_SUITE_P(Kinds, AccelKernels, ::testing::Values(AccelKind::Embree, AccelKind::Kiln),
                         [](const ::testing::TestParamInfo<AccelKind>& info) {
                           return std::string(accel_kind_name(info.param));
                         });
