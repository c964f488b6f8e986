// Derivatives through control flow: every construct (while_loop with a stored trajectory
// or as a sum loop, if_stmt, dispatch, a loop around a dispatch, and a two-bounce path
// tracer with three materials) checked with check_grads() in forward and reverse mode,
// in symbolic and evaluated mode, on the JIT and on the reference interpreter; their
// combinations (nested statements, generators and one-lane entries in the state, captured
// arrays, compaction, CustomOps in a body); forward after backward; and the errors of
// symbolic reverse mode.
#include "autodiff_test_support.h"

#include "../../bench/ad_scene.h"

#include <array>

namespace kiln::test {
namespace {

using ControlAutodiff = AutodiffTest;

constexpr size_t kLanes = 12;
using Array3d = Array3<Float64>;

/// Per-lane iteration counts 1..4: lanes leave the loop at different times (evaluated
/// loops compact them).
UInt32 iteration_counts() {
  std::vector<uint32_t> counts;
  for (size_t i = 0; i < kLanes; ++i) counts.push_back(uint32_t(1 + (i * 7) % 4));
  return UInt32::from(counts);
}

/// y after `step(i, y)` has run count[lane] times on each lane (i = 0, 1, ...): a
/// while_loop over (i, y) in the run's mode.
template <typename Step>
Float64 iterate(const UInt32& count, const Float64& y0, Step step, const char* name, LoopDerivative derivative) {
  auto [i, y] = while_loop(
      std::make_tuple(zeros<UInt32>(count.size()), y0), [count](const UInt32& i, const Float64&) { return i < count; },
      [step](const UInt32& i, const Float64& y) { return std::make_tuple(i + 1u, step(i, y)); }, std::nullopt, name,
      derivative);
  return y;
}

TEST_F(ControlAutodiff, WhileLoopWithTrajectory) {
  for_each_run([] {
    auto f = [](const Float64& x, const Float64& theta) {
      return iterate(
          iteration_counts(), x, [theta](const UInt32& i, const Float64& y) { return y * theta + sin(y); },
          "trajectory", LoopDerivative{4, false});
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
          std::make_tuple(zeros<UInt32>(kLanes), x * 0.5),
          [count](const UInt32& i, const Float64&) { return i < count; },
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

/// The two shaders and their registry (kept alive by the functions that use them:
/// derivatives call the shaders again).
struct Shaders {
  Scaling scaling;
  Waving waving;
  Registry<Shader> registry;
  Shaders() {
    registry.add(&scaling);
    registry.add(&waving);
  }
};

UInt32 shader_ids() {  // 0 is a null id: its lanes are inactive and get zeros
  std::vector<uint32_t> ids;
  for (size_t i = 0; i < kLanes; ++i) ids.push_back(uint32_t(i % 3));
  return UInt32::from(ids);
}

TEST_F(ControlAutodiff, Dispatch) {
  for_each_run([] {
    auto shaders = std::make_shared<Shaders>();
    auto f = [shaders](const Float64& x, const Float64& a, const Float64& b) {
      shaders->scaling.k = a;
      shaders->waving.k = b;
      return dispatch(
          shaders->registry, shader_ids(), [](const Shader& s, const Float64& v) { return s.shade(v); },
          std::make_tuple(x), std::nullopt, "shaders");
    };
    KILN_EXPECT_GRADS(check_grads(f, std::make_tuple(domain_array(kLanes, {-1, 1}, 0), Float64(0.6), Float64(1.7))));
  });
}

TEST_F(ControlAutodiff, LoopAroundDispatch) {
  for_each_run([] {
    auto shaders = std::make_shared<Shaders>();
    auto f = [shaders](const Float64& x, const Float64& a, const Float64& b) {
      shaders->scaling.k = a;
      shaders->waving.k = b;
      UInt32 count = iteration_counts();
      auto [i, y] = while_loop(
          std::make_tuple(zeros<UInt32>(kLanes), x), [count](const UInt32& i, const Float64&) { return i < count; },
          [shaders](const UInt32& i, const Float64& y) {
            UInt32 id = (i + arange<UInt32>(kLanes)) % 2u + 1u;
            Float64 shaded = dispatch(
                shaders->registry, id, [](const Shader& s, const Float64& v) { return s.shade(v); }, std::make_tuple(y),
                std::nullopt, "shader");
            return std::make_tuple(i + 1u, shaded * 0.5 + y * 0.25);
          },
          std::nullopt, "bounces", LoopDerivative{4, false});
      return y;
    };
    KILN_EXPECT_GRADS(check_grads(f, std::make_tuple(domain_array(kLanes, {-1, 1}, 0), Float64(0.6), Float64(1.1))));
  });
}

/// acc += shade(material of the iteration, x_i), count[lane] times: a sum loop around a
/// dispatch whose shaders' parameters a and b are captured, one lane each (prb's replay
/// loop around the scene's BSDF calls, in small). Evaluated, the dispatch runs each shader
/// on its compacted lanes inside the loop's lanes, also when the loop's adjoint runs again.
/// `seen` (when given) receives the default mode wherever a shader is traced.
Float64 sum_loop_around_dispatch(const std::shared_ptr<Shaders>& shaders, const Float64& a, const Float64& b,
                                 std::vector<ControlMode>* seen = nullptr) {
  shaders->scaling.k = a;
  shaders->waving.k = b;
  UInt32 count = iteration_counts();
  auto [i, acc] = while_loop(
      std::make_tuple(zeros<UInt32>(kLanes), zeros<Float64>(kLanes)),
      [count](const UInt32& i, const Float64&) { return i < count; },
      [shaders, seen](const UInt32& i, const Float64& acc) {
        UInt32 lane = arange<UInt32>(kLanes);
        UInt32 id = (i + lane) % 2u + 1u;
        Float64 x = cast<double>(lane) * 0.1 - cast<double>(i) * 0.3;
        Float64 shaded = dispatch(
            shaders->registry, id,
            [seen](const Shader& s, const Float64& v) {
              if (seen) seen->push_back(default_mode());
              return s.shade(v);
            },
            std::make_tuple(x), std::nullopt, "shader");
        return std::make_tuple(i + 1u, acc + shaded);
      },
      std::nullopt, "accumulate", LoopDerivative{0, true});
  return acc;
}

TEST_F(ControlAutodiff, SumLoopAroundDispatch) {
  for_each_run([] {
    auto shaders = std::make_shared<Shaders>();
    auto f = [shaders](const Float64& a, const Float64& b) { return sum_loop_around_dispatch(shaders, a, b); };
    KILN_EXPECT_GRADS(check_grads(f, std::make_tuple(Float64(0.6), Float64(1.7))));
  });
}

/// d(sum of the loop's results)/d(a, b) in reverse and forward mode, the statement traced
/// with the default `traced_in` (a ControlModeScope) and the traversals run with the global
/// flag set to `flag_then`; every trace of a shader, primal or derivative, must see the
/// mode the statement was traced in.
std::array<double, 4> gradients_traced_in(ControlMode traced_in, ControlMode flag_then) {
  bool saved = flag(Flag::Symbolic);
  auto shaders = std::make_shared<Shaders>();
  auto seen = std::make_shared<std::vector<ControlMode>>();
  Float64 a(0.6), b(1.7);
  enable_grad(a, b);
  Float64 y;
  {
    ControlModeScope scope(traced_in);
    y = sum_loop_around_dispatch(shaders, a, b, seen.get());
  }
  set_flag(Flag::Symbolic, flag_then == ControlMode::Symbolic);
  Float64 total = sum(y);
  backward(total, /*retain_graph=*/true);
  std::array<double, 4> out{grad(a).read(0), grad(b).read(0), 0, 0};
  clear_grad(a);
  clear_grad(b);
  set_grad(a, Float64(1.0));
  set_grad(b, Float64(0.0));
  out[2] = forward_to(total).read(0);
  set_grad(a, Float64(0.0));
  set_grad(b, Float64(1.0));
  out[3] = forward_to(total).read(0);
  set_flag(Flag::Symbolic, saved);
  EXPECT_GT(seen->size(), 2u);
  for (ControlMode mode : *seen) EXPECT_EQ(mode, traced_in) << "a shader traced in the other mode";
  return out;
}

TEST_F(ControlAutodiff, DerivativesKeepTheModeTheirStatementWasTracedIn) {
  // Issue 26: derivative statements read the global flag when a traversal reached them, so
  // a render traced evaluated and differentiated after the flag changed (or the reverse)
  // traced its calls in the other mode, and evaluated calls inside an evaluated loop's
  // adjoint gathered with the loop's mask (a SizeError).
  std::array<double, 4> reference = gradients_traced_in(ControlMode::Symbolic, ControlMode::Symbolic);
  for (ControlMode traced_in : {ControlMode::Symbolic, ControlMode::Evaluated})
    for (ControlMode flag_then : {ControlMode::Symbolic, ControlMode::Evaluated}) {
      std::array<double, 4> g = gradients_traced_in(traced_in, flag_then);
      for (size_t k = 0; k < 4; ++k)
        EXPECT_NEAR(g[k], reference[k], 1e-9 * std::abs(reference[k]))
            << "traced " << (traced_in == ControlMode::Symbolic ? "symbolic" : "evaluated") << ", flag then "
            << (flag_then == ControlMode::Symbolic ? "symbolic" : "evaluated") << ", derivative " << k;
    }
  EXPECT_NE(reference[0], 0.0);
  EXPECT_NEAR(reference[0], reference[2], 1e-9 * std::abs(reference[0]));  // reverse and forward mode agree
  EXPECT_NEAR(reference[1], reference[3], 1e-9 * std::abs(reference[1]));
}

// The two-bounce path tracer of bench/ad_scene.h over 64 lanes: the material drawn per
// bounce from the lane's generator, diffuse albedo, glossy roughness and emitter strength as
// the inputs.
using Scene = ::bench::ad_scene::Scene<Float64>;
Float64 render(const std::shared_ptr<Scene>& scene, const Float64& albedo, const Float64& roughness,
               const Float64& strength) {
  return ::bench::ad_scene::render(scene, albedo, roughness, strength, 64);
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

/// A loop of up to 10 iterations (lane 1 runs 10, lane 0 runs 5) in the run's mode.
Float64 ten_iterations_with(const Float64& theta) {
  auto [i, y] = while_loop(
      std::make_tuple(UInt32::from(std::vector<uint32_t>{5, 0}), full<Float64>(1.0, 2)),
      [](const UInt32& i, const Float64&) { return i < 10u; },
      [theta](const UInt32& i, const Float64& y) { return std::make_tuple(i + 1u, y * theta); }, std::nullopt, "ten",
      LoopDerivative{10, false});
  return y;
}

// ---- combinations: nesting, mixed state, captures, compaction ----------------------------

TEST_F(ControlAutodiff, LoopInsideALoopBody) {
  for_each_run([] {
    auto f = [](const Float64& x, const Float64& theta) {
      UInt32 count = iteration_counts();
      auto [i, y] = while_loop(
          std::make_tuple(zeros<UInt32>(kLanes), x), [count](const UInt32& i, const Float64&) { return i < count; },
          [theta](const UInt32& i, const Float64& y) {
            auto [j, z] = while_loop(
                std::make_tuple(i, y), [](const UInt32& j, const Float64&) { return j < 3u; },
                [theta](const UInt32& j, const Float64& z) {
                  return std::make_tuple(j + 1u, sin(z) * theta + z * 0.5);
                },
                std::nullopt, "inner", LoopDerivative{3, false});
            return std::make_tuple(i + 1u, z * theta);
          },
          std::nullopt, "outer", LoopDerivative{4, false});
      return y;
    };
    KILN_EXPECT_GRADS(check_grads(f, std::make_tuple(domain_array(kLanes, {0.2, 0.9}, 0), Float64(0.8))));
  });
}

TEST_F(ControlAutodiff, SumLoopInsideALoopBody) {
  for_each_run([] {
    auto f = [](const Float64& x, const Float64& theta) {
      auto [i, y] = while_loop(
          std::make_tuple(zeros<UInt32>(kLanes), x), [](const UInt32& i, const Float64&) { return i < 2u; },
          [theta](const UInt32& i, const Float64& y) {
            auto [j, acc] = while_loop(
                std::make_tuple(zeros<UInt32>(kLanes), zeros<Float64>(kLanes)),
                [](const UInt32& j, const Float64&) { return j < 3u; },
                [theta, y](const UInt32& j, const Float64& acc) {
                  return std::make_tuple(j + 1u, acc + sin(y * cast<double>(j + 1u)) * theta);
                },
                std::nullopt, "inner sum", LoopDerivative{0, true});
            return std::make_tuple(i + 1u, y * 0.5 + acc);
          },
          std::nullopt, "outer", LoopDerivative{2, false});
      return y;
    };
    KILN_EXPECT_GRADS(check_grads(f, std::make_tuple(domain_array(kLanes, {0.2, 0.9}, 0), Float64(0.8))));
  });
}

TEST_F(ControlAutodiff, GeneratorAndUnchangedIntegersInTheState) {
  for_each_run([] {
    auto f = [](const Float64& x, const Float64& theta) {
      using State = std::tuple<PCG32, UInt32, UInt32, Float64>;
      UInt32 count = iteration_counts();
      State initial{PCG32(kLanes), zeros<UInt32>(kLanes), arange<UInt32>(kLanes), x};
      State final = while_loop(
          initial, [count](const PCG32&, const UInt32& i, const UInt32&, const Float64&) { return i < count; },
          [theta](const PCG32& r, const UInt32& i, const UInt32& lane, const Float64& y) {
            PCG32 g = r;
            Float64 u = g.next_float64();
            return State{g, i + 1u, lane, y * (u + theta) + cast<double>(lane) * 0.01};  // lane passes unchanged
          },
          std::nullopt, "rng", LoopDerivative{4, false});
      return std::get<3>(final);
    };
    KILN_EXPECT_GRADS(check_grads(f, std::make_tuple(domain_array(kLanes, {0.2, 0.9}, 0), Float64(0.6))));
  });
}

TEST_F(ControlAutodiff, IfStmtInsideALoop) {
  for_each_run([] {
    auto f = [](const Float64& x, const Float64& theta) {
      UInt32 count = iteration_counts();
      auto [i, y] = while_loop(
          std::make_tuple(zeros<UInt32>(kLanes), x), [count](const UInt32& i, const Float64&) { return i < count; },
          [theta](const UInt32& i, const Float64& y) {
            Float64 z = if_stmt(
                y > 0.0, [theta](const Float64& v) { return v * theta - 0.3; },
                [theta](const Float64& v) { return sin(v + theta); }, std::make_tuple(y), std::nullopt, "sign");
            return std::make_tuple(i + 1u, z);
          },
          std::nullopt, "loop", LoopDerivative{4, false});
      return y;
    };
    KILN_EXPECT_GRADS(check_grads(f, std::make_tuple(domain_array(kLanes, {0.1, 1.0, true}, 0), Float64(0.7))));
  });
}

/// An instance whose result does not depend on anything differentiable.
struct Constant final : Shader {
  Float64 shade(const Float64&) const override { return Float64(0.25); }
};

TEST_F(ControlAutodiff, DispatchWithAConstantInstance) {
  for_each_run([] {
    struct Instances {
      Constant constant;
      Scaling scaling;
      Registry<Shader> registry;
      Instances() {
        registry.add(&constant);
        registry.add(&scaling);
      }
    };
    auto instances = std::make_shared<Instances>();
    auto f = [instances](const Float64& x, const Float64& a) {
      instances->scaling.k = a;
      return dispatch(
          instances->registry, shader_ids(), [](const Shader& s, const Float64& v) { return s.shade(v); },
          std::make_tuple(x), std::nullopt, "constant or scaling");
    };
    KILN_EXPECT_GRADS(check_grads(f, std::make_tuple(domain_array(kLanes, {-1, 1}, 0), Float64(0.6))));
  });
}

TEST_F(ControlAutodiff, OneLaneStateEntryBesideManyLanes) {
  for_each_run([] {
    auto f = [](const Float64& x, const Float64& s0, const Float64& theta) {
      UInt32 count = iteration_counts();
      auto [i, y, s] = while_loop(
          std::make_tuple(zeros<UInt32>(kLanes), x, s0),
          [count](const UInt32& i, const Float64&, const Float64&) { return i < count; },
          [theta](const UInt32& i, const Float64& y, const Float64& s) {
            return std::make_tuple(i + 1u, y * s + theta, s * theta + y * 0.1);
          },
          std::nullopt, "one lane", LoopDerivative{4, false});
      return std::make_tuple(y, s);
    };
    KILN_EXPECT_GRADS(check_grads(f, std::make_tuple(domain_array(kLanes, {0.2, 0.9}, 0), Float64(0.5), Float64(0.7))));
  });
}

TEST_F(ControlAutodiff, OneLaneCounterBesideManyLanes) {
  for_each_run([] {
    // The counter starts as one lane (a broadcast) while y has kLanes; so does the condition.
    auto f = [](const Float64& x, const Float64& theta) {
      auto [i, y] = while_loop(
          std::make_tuple(UInt32(0u), x), [](const UInt32& i, const Float64&) { return i < 3u; },
          [theta](const UInt32& i, const Float64& y) { return std::make_tuple(i + 1u, y * theta + sin(y)); },
          std::nullopt, "one-lane counter", LoopDerivative{3, false});
      return y;
    };
    KILN_EXPECT_GRADS(check_grads(f, std::make_tuple(domain_array(kLanes, {0.2, 0.9}, 0), Float64(0.8))));
  });
}

TEST_F(ControlAutodiff, CapturedPerLaneInput) {
  for_each_run([] {
    // x is read by the body from outside the state: its gradient is per lane.
    auto f = [](const Float64& x, const Float64& theta) {
      UInt32 count = iteration_counts();
      auto [i, y] = while_loop(
          std::make_tuple(zeros<UInt32>(kLanes), zeros<Float64>(kLanes)),
          [count](const UInt32& i, const Float64&) { return i < count; },
          [x, theta](const UInt32& i, const Float64& y) { return std::make_tuple(i + 1u, y * theta + x * x); },
          std::nullopt, "captured", LoopDerivative{4, false});
      return y;
    };
    KILN_EXPECT_GRADS(check_grads(f, std::make_tuple(domain_array(kLanes, {0.2, 0.9}, 0), Float64(0.7))));
  });
}

TEST_F(ControlAutodiff, LanesFinishingAtVeryDifferentTimes) {
  for_each_run([] {
    // 1 to 40 iterations: evaluated loops compact the state several times.
    constexpr size_t kMany = 64;
    std::vector<uint32_t> counts;
    for (size_t lane = 0; lane < kMany; ++lane) counts.push_back(uint32_t(1 + (lane * lane * 7) % 40));
    auto f = [counts](const Float64& x, const Float64& theta) {
      UInt32 count = UInt32::from(counts);
      auto [i, y] = while_loop(
          std::make_tuple(zeros<UInt32>(kMany), x), [count](const UInt32& i, const Float64&) { return i < count; },
          [theta](const UInt32& i, const Float64& y) { return std::make_tuple(i + 1u, y * theta + 0.1 * sin(y)); },
          std::nullopt, "staggered", LoopDerivative{40, false});
      return y;
    };
    KILN_EXPECT_GRADS(check_grads(f, std::make_tuple(domain_array(kMany, {0.2, 0.9}, 0), Float64(0.9))));
  });
}

TEST_F(ControlAutodiff, CapturedTableGatheredInALoop) {
  for_each_run([] {
    // The body reads a 5-entry table (not of the loop's lanes) at per-lane indices.
    auto f = [](const Float64& x, const Float64& table) {
      UInt32 count = iteration_counts();
      auto [i, y] = while_loop(
          std::make_tuple(zeros<UInt32>(kLanes), x), [count](const UInt32& i, const Float64&) { return i < count; },
          [table](const UInt32& i, const Float64& y) {
            UInt32 entry = (i + arange<UInt32>(kLanes)) % 5u;
            return std::make_tuple(i + 1u, y * 0.5 + gather(table, entry) * y);
          },
          std::nullopt, "table", LoopDerivative{4, false});
      return y;
    };
    KILN_EXPECT_GRADS(
        check_grads(f, std::make_tuple(domain_array(kLanes, {0.2, 0.9}, 0), domain_array(5, {0.1, 0.6}, 0.5))));
  });
}

TEST_F(ControlAutodiff, CapturedTableOfTheLoopsLanesGatheredInALoop) {
  // A table with as many entries as the loop has lanes, read at permuted indices: its
  // gradient is a scatter buffer that accumulates over the iterations by itself (it must
  // not also be carried lane by lane).
  for_each_run([] {
    auto f = [](const Float64& x, const Float64& table) {
      UInt32 count = iteration_counts();
      auto [i, y] = while_loop(
          std::make_tuple(zeros<UInt32>(kLanes), x), [count](const UInt32& i, const Float64&) { return i < count; },
          [table](const UInt32& i, const Float64& y) {
            UInt32 entry = (i * 5u + arange<UInt32>(kLanes) * 7u) % uint32_t(kLanes);
            return std::make_tuple(i + 1u, y * 0.5 + gather(table, entry) * y + gather(table, entry / 2u));
          },
          std::nullopt, "table", LoopDerivative{4, false});
      return y;
    };
    KILN_EXPECT_GRADS(
        check_grads(f, std::make_tuple(domain_array(kLanes, {0.2, 0.9}, 0), domain_array(kLanes, {0.1, 0.6}, 0.5))));
  });
}

TEST_F(ControlAutodiff, CapturedTableGatheredInABranch) {
  for_each_run([] {
    auto f = [](const Float64& x, const Float64& table) {
      UInt32 entry = arange<UInt32>(kLanes) % 5u;
      return if_stmt(
          x > 0.0, [table](const Float64& v, const UInt32& e) { return v * gather(table, e); },
          [](const Float64& v, const UInt32&) { return v * v; }, std::make_tuple(x, entry), std::nullopt, "table");
    };
    KILN_EXPECT_GRADS(
        check_grads(f, std::make_tuple(domain_array(kLanes, {0.1, 1.0, true}, 0), domain_array(5, {0.1, 0.6}, 0.5))));
  });
}

TEST_F(ControlAutodiff, CapturedTablesGatheredInABranchInsideALoop) {
  // A texture read by a material inside a path loop: the branch's adjoint writes scatter
  // buffers inside the loop's adjoint, which must reach the tables as they are. Two
  // tables: 5 entries, and as many as the loop has lanes.
  for_each_run([] {
    auto f = [](const Float64& x, const Float64& small, const Float64& wide) {
      UInt32 count = iteration_counts();
      auto [i, y] = while_loop(
          std::make_tuple(zeros<UInt32>(kLanes), x), [count](const UInt32& i, const Float64&) { return i < count; },
          [small, wide](const UInt32& i, const Float64& y) {
            UInt32 entry = (i + arange<UInt32>(kLanes)) % 5u;
            UInt32 permuted = (i * 5u + arange<UInt32>(kLanes) * 7u) % uint32_t(kLanes);
            Float64 next = if_stmt(
                (i + arange<UInt32>(kLanes)) % 3u != 0u,
                [small, wide](const Float64& v, const UInt32& e, const UInt32& p) {
                  return v * gather(small, e) + gather(wide, p) * v;
                },
                [small](const Float64& v, const UInt32& e, const UInt32&) { return v * 0.5 + gather(small, e); },
                std::make_tuple(y, entry, permuted), std::nullopt, "material");
            return std::make_tuple(i + 1u, next);
          },
          std::nullopt, "path", LoopDerivative{4, false});
      return y;
    };
    KILN_EXPECT_GRADS(
        check_grads(f, std::make_tuple(domain_array(kLanes, {0.2, 0.9}, 0), domain_array(5, {0.1, 0.6}, 0.5),
                                       domain_array(kLanes, {0.1, 0.6}, 0.2))));
  });
}

TEST_F(ControlAutodiff, TrajectoryOverflowInsideAnotherLoopRaisesWhenEvaluated) {
  // The inner loop's derivative is traced inside the outer one's: its iteration counts
  // are checked once the kernel has run, and the gradient's evaluation raises.
  Float64 theta(0.9);
  enable_grad(theta);
  auto [i, y] = while_loop(
      std::make_tuple(zeros<UInt32>(kLanes), full<Float64>(1.0, kLanes)),
      [](const UInt32& i, const Float64&) { return i < 2u; },
      [theta](const UInt32& i, const Float64& y) {
        auto [j, z] = while_loop(
            std::make_tuple(zeros<UInt32>(kLanes), y), [](const UInt32& j, const Float64&) { return j < 5u; },
            [theta](const UInt32& j, const Float64& z) { return std::make_tuple(j + 1u, z * theta); },
            ControlMode::Symbolic, "inner", LoopDerivative{3, false});
        return std::make_tuple(i + 1u, z);
      },
      ControlMode::Symbolic, "outer", LoopDerivative{2, false});
  Float64 loss = sum(y);
  try {
    backward(loss);
    eval(grad(theta));
    FAIL() << "the inner loop outran its trajectory without an error";
  } catch (const ValueError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("while_loop('inner')"), std::string::npos) << message;
    EXPECT_NE(message.find("max_iterations=3"), std::string::npos) << message;
  }
}

/// y = x² with hand-written derivatives, used inside a loop body.
struct Square : CustomOp<std::tuple<Float64>, std::tuple<Float64>> {
  Float64 x;
  Outputs eval(const Inputs& in) override {
    x = std::get<0>(in);
    return {x * x};
  }
  Outputs forward(const Inputs& dx) override { return {2.0 * x * std::get<0>(dx)}; }
  Inputs backward(const Outputs& dy) override { return {2.0 * x * std::get<0>(dy)}; }
};

TEST_F(ControlAutodiff, CustomOpInsideALoopBody) {
  for_each_run([] {
    auto f = [](const Float64& x, const Float64& theta) {
      UInt32 count = iteration_counts();
      auto [i, y] = while_loop(
          std::make_tuple(zeros<UInt32>(kLanes), x), [count](const UInt32& i, const Float64&) { return i < count; },
          [theta](const UInt32& i, const Float64& y) {
            return std::make_tuple(i + 1u, std::get<0>(custom(std::make_shared<Square>(), y * theta)) * 0.5 + y);
          },
          std::nullopt, "custom", LoopDerivative{4, false});
      return y;
    };
    KILN_EXPECT_GRADS(check_grads(f, std::make_tuple(domain_array(kLanes, {0.2, 0.9}, 0), Float64(0.7))));
  });
}

TEST_F(ControlAutodiff, BackwardTwiceWithRetainGraph) {
  for_each_run([] {
    Float64 theta(1.1);
    enable_grad(theta);
    Float64 y = sum(ten_iterations_with(theta));
    backward(y, /*retain_graph=*/true);
    double once = grad(theta).item();
    EXPECT_NEAR(once, 10 * std::pow(1.1, 9) + 5 * std::pow(1.1, 4), 1e-9);
    backward(y);
    EXPECT_NEAR(grad(theta).item(), 2 * once, 1e-9);
  });
}

// A forward traversal from x must not take the gradient another traversal left on a
// captured array (theta: an adjoint from backward()) for a tangent: only what the
// traversal reaching the statement passes counts, as in straight-line code.
TEST_F(ControlAutodiff, ForwardIgnoresGradientsLeftOnCapturesOfALoop) {
  for_each_run([] {
    Float64 x = domain_array(kLanes, {0.2, 0.9}, 0), theta(0.8);
    enable_grad(x, theta);
    auto [i, y] = while_loop(  // y = x (θ² + θ + 1) after 3 iterations
        std::make_tuple(zeros<UInt32>(kLanes), zeros<Float64>(kLanes)),
        [](const UInt32& i, const Float64&) { return i < 3u; },
        [x, theta](const UInt32& i, const Float64& y) { return std::make_tuple(i + 1u, y * theta + x); }, std::nullopt,
        "captures", LoopDerivative{3, false});
    backward(sum(y), /*retain_graph=*/true);  // leaves adjoints on x and theta
    forward(x);
    std::vector<double> tangent = host(grad(y));
    for (size_t lane = 0; lane < kLanes; ++lane) EXPECT_NEAR(tangent[lane], 0.64 + 0.8 + 1, 1e-12) << lane;
  });
}

TEST_F(ControlAutodiff, ForwardIgnoresGradientsLeftOnCapturesOfABranch) {
  for_each_run([] {
    Float64 x = domain_array(kLanes, {0.1, 1.0, true}, 0), theta(0.8);
    enable_grad(x, theta);
    Float64 y = if_stmt(
        x > 0.0, [theta](const Float64& v) { return v * theta; }, [](const Float64& v) { return v * 2.0; },
        std::make_tuple(x), std::nullopt, "captures");
    backward(sum(y), /*retain_graph=*/true);
    forward(x);
    std::vector<double> tangent = host(grad(y)), lanes = host(x);
    for (size_t lane = 0; lane < kLanes; ++lane) EXPECT_NEAR(tangent[lane], lanes[lane] > 0 ? 0.8 : 2.0, 1e-12) << lane;
  });
}

// ---- errors -------------------------------------------------------------------------------

/// A symbolic loop of up to 10 iterations (lane 1 runs 10, lane 0 runs 5).
Float64 ten_iterations(const Float64& theta, LoopDerivative derivative, const std::string& name) {
  auto [i, y] = while_loop(
      std::make_tuple(UInt32::from(std::vector<uint32_t>{5, 0}), full<Float64>(1.0, 2)),
      [](const UInt32& i, const Float64&) { return i < 10u; },
      [theta](const UInt32& i, const Float64& y) { return std::make_tuple(i + 1u, y * theta); }, ControlMode::Symbolic,
      name, derivative);
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

// A traversal started inside a function of a loop, branch or call raised an internal error
// when evaluated and silently ignored the condition when symbolic (one traversal at trace
// time, for every lane): every mode now raises the same error naming the statement.
TEST_F(ControlAutodiff, TraversalStartedInsideAStatementRaises) {
  const std::vector<std::pair<std::string, std::function<void(const Float64&, const Float64&)>>> starts = {
      {"backward_from()", [](const Float64& y, const Float64&) { backward_from(y, full<Float64>(1.0, kLanes)); }},
      {"backward()", [](const Float64& y, const Float64&) { backward(sum(y)); }},
      {"forward_from()", [](const Float64&, const Float64& x) { forward_from(x, full<Float64>(1.0, kLanes)); }},
      {"forward()", [](const Float64&, const Float64& x) { forward(x); }},
      {"forward_to()", [](const Float64& y, const Float64&) { (void)forward_to(y); }},
  };
  using Statement = std::function<void(const std::function<void()>&)>;
  const std::vector<std::pair<std::string, Statement>> statements = {
      {"while_loop('walk')",
       [](const std::function<void()>& start) {
         while_loop(
             std::make_tuple(zeros<UInt32>(kLanes)), [](const UInt32& i) { return i < iteration_counts(); },
             [&](const UInt32& i) {
               start();
               return std::make_tuple(i + 1u);
             },
             std::nullopt, "walk");
       }},
      {"if_stmt('half')",
       [](const std::function<void()>& start) {
         if_stmt(
             arange<UInt32>(kLanes) < 6u,
             [&](const UInt32& l) {
               start();
               return l;
             },
             [](const UInt32& l) { return l; }, std::make_tuple(arange<UInt32>(kLanes)), std::nullopt, "half");
       }},
  };
  for (const auto& [traversal, start] : starts) {
    for (const auto& [statement, run] : statements) {
      SCOPED_TRACE(traversal + " in " + statement);
      std::string first;
      for_each_run([&] {
        Float64 x = arange<Float64>(kLanes) + 1.0;
        enable_grad(x);
        Float64 y = x * x;
        std::string message = "NO EXCEPTION";
        try {
          run([&] { start(y, x); });
        } catch (const ValueError& e) {
          message = e.what();
        }
        EXPECT_NE(message.find("kiln: " + traversal + ": called inside " + statement), std::string::npos) << message;
        if (first.empty()) first = message;
        EXPECT_EQ(message, first) << "the modes disagree";
        // The graph is intact: the traversal after the statement gives dy/dx = 2x.
        backward_from(y, full<Float64>(1.0, kLanes));
        EXPECT_DOUBLE_EQ(grad(x).read(kLanes - 1), 2.0 * kLanes);
      });
    }
  }
}

}  // namespace
}  // namespace kiln::test
