// Derivatives through control flow: every construct (while_loop with a stored trajectory
// or as a sum loop, if_stmt, dispatch, a loop around a dispatch, and a two-bounce path
// tracer with three materials) checked with check_grads() in forward and reverse mode,
// in symbolic and evaluated mode, on the JIT and on the reference interpreter; and the
// errors of symbolic reverse mode.
#include "autodiff_test_support.h"

#include "../../bench/path_workload.h"

namespace kiln::test {
namespace {

using ControlAutodiff = AutodiffTest;

constexpr size_t kLanes = 12;
using Array3d = Array3<Float64>;
namespace path = ::bench::path;

/// Per-lane iteration counts 1..4: lanes leave the loop at different times (evaluated
/// loops compact them).
UInt32 iteration_counts() {
  std::vector<uint32_t> counts;
  for (size_t i = 0; i < kLanes; ++i) counts.push_back(uint32_t(1 + (i * 7) % 4));
  return UInt32::from(counts);
}

TEST_F(ControlAutodiff, WhileLoopWithTrajectory) {
  for_each_run([] {
    auto f = [](const Float64& x, const Float64& theta) {
      UInt32 count = iteration_counts();
      auto [i, y] = while_loop(
          std::make_tuple(zeros<UInt32>(kLanes), x), [count](const UInt32& i, const Float64&) { return i < count; },
          [theta](const UInt32& i, const Float64& y) { return std::make_tuple(i + 1u, y * theta + sin(y)); },
          std::nullopt, "trajectory", LoopDerivative{4, false});
      return y;
    };
    KILN_EXPECT_GRADS(check_grads(f, std::make_tuple(domain_array(kLanes, {0.2, 0.9}, 0), Float64(0.8))));
  });
}

TEST_F(ControlAutodiff, WhileLoopWithVectorStateAndCapturedArray) {
  for_each_run([] {
    auto f = [](const Array3d& p, const Float64& scale) {
      Float64 per_lane = scale * domain_array(kLanes, {0.5, 1.0}, 0.3);  // a captured per-lane array
      auto [i, q] = while_loop(
          std::make_tuple(zeros<UInt32>(kLanes), p), [](const UInt32& i, const Array3d&) { return i < 3u; },
          [per_lane](const UInt32& i, const Array3d& q) {
            return std::make_tuple(i + 1u, Array3d{q.y * per_lane, q.z + q.x * q.x, cos(q.x)});
          },
          std::nullopt, "vector", LoopDerivative{3, false});
      return q;
    };
    Array3d p{domain_array(kLanes, {-0.5, 0.5}, 0), domain_array(kLanes, {-0.5, 0.5}, 0.4),
              domain_array(kLanes, {-0.5, 0.5}, 0.7)};
    KILN_EXPECT_GRADS(check_grads(f, std::make_tuple(p, Float64(0.9))));
  });
}

TEST_F(ControlAutodiff, SumLoop) {
  for_each_run([] {
    // acc accumulates f(i, x, theta); i never depends on the inputs.
    auto f = [](const Float64& x, const Float64& theta) {
      UInt32 count = iteration_counts();
      auto [i, acc] = while_loop(
          std::make_tuple(zeros<UInt32>(kLanes), x * 0.5), [count](const UInt32& i, const Float64&) { return i < count; },
          [x, theta](const UInt32& i, const Float64& acc) {
            Float64 k = cast<double>(i);
            return std::make_tuple(i + 1u, acc + sin(x * k) * theta * theta + k);
          },
          std::nullopt, "sum", LoopDerivative{0, true});
      return acc;
    };
    KILN_EXPECT_GRADS(check_grads(f, std::make_tuple(domain_array(kLanes, {-1, 1}, 0), Float64(1.3))));
  });
}

TEST_F(ControlAutodiff, IfStmt) {
  for_each_run([] {
    auto f = [](const Float64& x, const Float64& theta) {
      return if_stmt(
          x > 0.0, [theta](const Float64& v) { return v * theta * theta; },
          [theta](const Float64& v) { return exp(v * theta); }, std::make_tuple(x), std::nullopt, "if");
    };
    KILN_EXPECT_GRADS(check_grads(f, std::make_tuple(domain_array(kLanes, {0.1, 1.0, true}, 0), Float64(0.7))));
  });
}

/// Two materials with a differentiable parameter each; dispatch calls them by id.
struct Shader {
  virtual ~Shader() = default;
  virtual Float64 shade(const Float64& x) const = 0;
};
struct Scaling final : Shader {
  Float64 k;
  Float64 shade(const Float64& x) const override { return x * k + k * k; }
};
struct Waving final : Shader {
  Float64 k;
  Float64 shade(const Float64& x) const override { return sin(x * k); }
};

UInt32 shader_ids() {  // 0 is a null id: its lanes are inactive and get zeros
  std::vector<uint32_t> ids;
  for (size_t i = 0; i < kLanes; ++i) ids.push_back(uint32_t(i % 3));
  return UInt32::from(ids);
}

TEST_F(ControlAutodiff, Dispatch) {
  for_each_run([] {
    auto scaling = std::make_shared<Scaling>();
    auto waving = std::make_shared<Waving>();
    auto registry = std::make_shared<Registry<Shader>>();
    registry->add(scaling.get());
    registry->add(waving.get());
    auto f = [=](const Float64& x, const Float64& a, const Float64& b) {
      scaling->k = a;
      waving->k = b;
      return dispatch(*registry, shader_ids(), [](const Shader& s, const Float64& v) { return s.shade(v); },
                      std::make_tuple(x), std::nullopt, "shaders");
    };
    KILN_EXPECT_GRADS(
        check_grads(f, std::make_tuple(domain_array(kLanes, {-1, 1}, 0), Float64(0.6), Float64(1.7))));
  });
}

TEST_F(ControlAutodiff, LoopAroundDispatch) {
  for_each_run([] {
    auto scaling = std::make_shared<Scaling>();
    auto waving = std::make_shared<Waving>();
    auto registry = std::make_shared<Registry<Shader>>();
    registry->add(scaling.get());
    registry->add(waving.get());
    auto f = [=](const Float64& x, const Float64& a, const Float64& b) {
      scaling->k = a;
      waving->k = b;
      UInt32 count = iteration_counts();
      auto [i, y] = while_loop(
          std::make_tuple(zeros<UInt32>(kLanes), x), [count](const UInt32& i, const Float64&) { return i < count; },
          [registry](const UInt32& i, const Float64& y) {
            UInt32 id = (i + arange<UInt32>(kLanes)) % 2u + 1u;
            Float64 shaded = dispatch(*registry, id, [](const Shader& s, const Float64& v) { return s.shade(v); },
                                      std::make_tuple(y), std::nullopt, "shader");
            return std::make_tuple(i + 1u, shaded * 0.5 + y * 0.25);
          },
          std::nullopt, "bounces", LoopDerivative{4, false});
      return y;
    };
    KILN_EXPECT_GRADS(
        check_grads(f, std::make_tuple(domain_array(kLanes, {-1, 1}, 0), Float64(0.6), Float64(1.1))));
  });
}

// A small path tracer: two bounces, the material drawn per bounce from the lane's
// generator, diffuse (albedo), glossy (roughness) and emitter (strength) as in
// bench/path_workload.h, with the three parameters as the inputs.
struct Surface {
  using Bounce = std::tuple<PCG32, Array3d, Array3d, Array3d>;
  virtual ~Surface() = default;
  virtual Bounce bounce(PCG32 rng, Array3d throughput, Array3d radiance, Array3d direction) const = 0;
};
struct Diffuse final : Surface {
  Float64 albedo;
  Bounce bounce(PCG32 rng, Array3d t, Array3d l, Array3d d) const override {
    Float64 u1 = rng.next_float64(), u2 = rng.next_float64();
    path::diffuse_bounce(d, t, albedo, u1, u2);
    return {rng, t, l, d};
  }
};
struct Glossy final : Surface {
  Float64 roughness;
  Bounce bounce(PCG32 rng, Array3d t, Array3d l, Array3d d) const override {
    Float64 u1 = rng.next_float64(), u2 = rng.next_float64(), u3 = rng.next_float64();
    path::glossy_bounce(d, t, roughness, u1, u2, u3);
    return {rng, t, l, d};
  }
};
struct Emitter final : Surface {
  Float64 strength;
  Bounce bounce(PCG32 rng, Array3d t, Array3d l, Array3d d) const override {
    path::emit<Float64>(l, t, strength);
    return {rng, t, l, d};
  }
};
struct Scene {
  Diffuse diffuse;
  Glossy glossy;
  Emitter emitter;
  Registry<Surface> registry;
  Scene() {
    registry.add(&diffuse);
    registry.add(&glossy);
    registry.add(&emitter);
  }
};

Float64 render(const std::shared_ptr<Scene>& scene, const Float64& albedo, const Float64& roughness,
               const Float64& strength) {
  scene->diffuse.albedo = albedo;
  scene->glossy.roughness = roughness;
  scene->emitter.strength = strength;
  size_t n = 64;
  UInt32 lane = arange<UInt32>(n);
  Array3d direction = path::normalize3<Float64>(
      Array3d{(cast<double>(lane % 8u) + 0.5) / 4.0 - 1.0, (cast<double>(lane / 8u) + 0.5) / 4.0 - 1.0, Float64(1.0)});
  using State = std::tuple<PCG32, Array3d, Array3d, Array3d, UInt32>;
  State initial{PCG32(n), Array3d(full<Float64>(1.0, n)), Array3d(zeros<Float64>(n)), direction, zeros<UInt32>(n)};
  auto more = [](const PCG32&, const Array3d&, const Array3d&, const Array3d&, const UInt32& depth) {
    return depth < 2u;
  };
  auto step = [scene](const PCG32& r, const Array3d& t, const Array3d& l, const Array3d& d, const UInt32& depth) {
    PCG32 g = r;
    UInt32 material = path::draw_material<Float64, UInt32>(g.next_float64());
    auto [g2, t2, l2, d2] = dispatch(
        scene->registry, material,
        [](const Surface& s, const PCG32& a, const Array3d& b, const Array3d& c, const Array3d& e) {
          return s.bounce(a, b, c, e);
        },
        std::make_tuple(g, t, l, d), std::nullopt, "material");
    return State{g2, t2, l2, d2, depth + 1u};
  };
  State final = while_loop(initial, more, step, std::nullopt, "bounce", LoopDerivative{2, false});
  const Array3d& radiance = std::get<2>(final);
  return radiance.x + radiance.y + radiance.z;
}

TEST_F(ControlAutodiff, TwoBouncePathTracer) {
  for_each_run([] {
    auto scene = std::make_shared<Scene>();
    auto f = [scene](const Float64& albedo, const Float64& roughness, const Float64& strength) {
      return render(scene, albedo, roughness, strength);
    };
    KILN_EXPECT_GRADS(check_grads(f, std::make_tuple(Float64(0.7), Float64(0.3), Float64(3.0))));
  });
}

TEST_F(ControlAutodiff, PathTracerGradientIsNotZero) {
  // Guards the check above against a vacuous pass: every parameter matters.
  auto scene = std::make_shared<Scene>();
  Float64 albedo(0.7), roughness(0.3), strength(3.0);
  enable_grad(albedo, roughness, strength);
  backward(sum(render(scene, albedo, roughness, strength)));
  for (const Float64* g : {&albedo, &roughness, &strength}) EXPECT_NE(grad(*g).item(), 0.0);
}

// ---- errors -------------------------------------------------------------------------------

/// A symbolic loop of up to 10 iterations (lane 1 runs 10, lane 0 runs 5).
Float64 ten_iterations(const Float64& theta, LoopDerivative derivative, const std::string& name) {
  auto [i, y] = while_loop(
      std::make_tuple(UInt32::from(std::vector<uint32_t>{5, 0}), full<Float64>(1.0, 2)),
      [](const UInt32& i, const Float64&) { return i < 10u; },
      [theta](const UInt32& i, const Float64& y) { return std::make_tuple(i + 1u, y * theta); },
      ControlMode::Symbolic, name, derivative);
  return y;
}

TEST_F(ControlAutodiff, TrajectoryOverflowRaises) {
  Float64 theta(1.1);
  enable_grad(theta);
  Float64 y = sum(ten_iterations(theta, LoopDerivative{4, false}, "short"));
  try {
    backward(y);
    FAIL() << "backward() through a loop that outran its trajectory did not raise";
  } catch (const ValueError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("while_loop('short')"), std::string::npos) << message;
    EXPECT_NE(message.find("10 iterations"), std::string::npos) << message;
    EXPECT_NE(message.find("max_iterations=4"), std::string::npos) << message;
  }
}

TEST_F(ControlAutodiff, TrajectoryThatFitsMatchesEvaluatedMode) {
  Float64 theta(1.1);
  enable_grad(theta);
  backward(sum(ten_iterations(theta, LoopDerivative{10, false}, "fits")));
  EXPECT_NEAR(grad(theta).item(), 10 * std::pow(1.1, 9) + 5 * std::pow(1.1, 4), 1e-9);
}

TEST_F(ControlAutodiff, SymbolicReverseWithoutTrajectoryRaises) {
  Float64 theta(1.1);
  enable_grad(theta);
  Float64 y = sum(ten_iterations(theta, {}, "plain"));
  try {
    backward(y);
    FAIL() << "reverse mode through a symbolic loop without max_iterations or sum_loop did not raise";
  } catch (const ValueError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("while_loop('plain')"), std::string::npos) << message;
    EXPECT_NE(message.find("max_iterations"), std::string::npos) << message;
  }
  // Forward mode needs nothing.
  Float64 theta2(1.1);
  enable_grad(theta2);
  Float64 y2 = sum(ten_iterations(theta2, {}, "plain"));
  forward(theta2);
  EXPECT_NEAR(grad(y2).item(), 10 * std::pow(1.1, 9) + 5 * std::pow(1.1, 4), 1e-9);
}

TEST_F(ControlAutodiff, TrajectoryTooLargeToIndexRaises) {
  Float64 theta(1.1);
  enable_grad(theta);
  auto huge = [&] {
    return while_loop(
        std::make_tuple(zeros<UInt32>(1 << 16), full<Float64>(1.0, 1 << 16)),
        [](const UInt32& i, const Float64&) { return i < 3u; },
        [theta](const UInt32& i, const Float64& y) { return std::make_tuple(i + 1u, y * theta); },
        ControlMode::Symbolic, "huge", LoopDerivative{size_t(1) << 20, false});
  };
  EXPECT_THROW(huge(), SizeError);
}

}  // namespace
}  // namespace kiln::test
