// Symbolic dispatch over alike instances (src/control/shared_bodies.h): instances whose
// bodies differ only in one-element values share one region of the kernel, with the same
// results as separate regions (evaluated mode is the reference); bodies that differ in
// anything else, or have side effects, keep regions of their own.
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include <memory>
#include <vector>

using namespace kiln;

namespace {

struct Shader {
  virtual ~Shader() = default;
  virtual Float shade(const Float& x, const UInt32& lane) const = 0;
};

/// x * gain + bias, with both as one-element arrays (what a scene parameter is).
struct Affine : Shader {
  Float gain, bias;
  Affine(float g, float b) : gain(opaque<Float>(g)), bias(opaque<Float>(b)) {}
  Float shade(const Float& x, const UInt32&) const override { return fma(x, gain, bias) * gain + sin(x * bias); }
};

/// The same arithmetic with its constant baked in as a literal.
struct Halved : Shader {
  float factor;
  explicit Halved(float f) : factor(f) {}
  Float shade(const Float& x, const UInt32&) const override { return x * factor + 1.0f; }
};

/// A lookup in an array of its own.
struct Table : Shader {
  Float values;
  explicit Table(std::vector<float> v) : values(Float::from(v.data(), v.size())) {}
  Float shade(const Float&, const UInt32& lane) const override { return gather(values, lane % 4u); }
};

/// Counts its lanes: a side effect.
struct Counting : Affine {
  UInt32* counts;
  Counting(float g, UInt32* c) : Affine(g, 0.0f), counts(c) {}
  Float shade(const Float& x, const UInt32& lane) const override {
    scatter_add(*counts, UInt32(1u) + lane * 0u, lane * 0u);
    return Affine::shade(x, lane);
  }
};

/// Traces something else each time (a literal that counts its traces).
struct Restless : Shader {
  mutable int traces = 0;
  Float shade(const Float& x, const UInt32&) const override { return x * float(traces++); }
};

struct Outcome {
  std::vector<float> values;
  size_t ops = 0;  ///< in the kernel that computed them
};

/// dispatch() of `instances` over 997 lanes (ids cycle through them and the null id).
Outcome run(const std::vector<const Shader*>& instances, ControlMode mode) {
  Registry<const Shader> registry;
  for (const Shader* s : instances) registry.add(s);
  UInt32 lane = arange<UInt32>(997);
  UInt32 ids = lane % uint32_t(instances.size() + 1);
  Float x = cast<float>(lane) * 0.01f;
  kernel_history(true);
  auto [y] = dispatch(
      registry, ids, [](const Shader& s, const Float& x, const UInt32& l) { return std::tuple(s.shade(x, l)); },
      std::tuple(x, lane), mode, "shaders");
  eval(y);
  Outcome out{y.to_vector(), 0};
  for (const KernelLaunch& launch : kernel_history()) out.ops = std::max(out.ops, launch.ops);
  return out;
}

void expect_same_values(const Outcome& symbolic, const Outcome& evaluated) {
  ASSERT_EQ(symbolic.values.size(), evaluated.values.size());
  for (size_t i = 0; i < symbolic.values.size(); ++i)
    EXPECT_EQ(symbolic.values[i], evaluated.values[i]) << "lane " << i;
}

TEST(SharedBodies, AlikeInstancesShareOneRegion) {
  Affine a(0.5f, 1.0f), b(2.0f, -3.0f), c(-1.25f, 0.25f), d(3.0f, 3.0f);
  Outcome one = run({&a}, ControlMode::Symbolic);
  Outcome four = run({&a, &b, &c, &d}, ControlMode::Symbolic);
  expect_same_values(four, run({&a, &b, &c, &d}, ControlMode::Evaluated));
  // One body, plus the per-lane selection of 2 values among 4 instances: far from 4 bodies.
  EXPECT_LT(four.ops, one.ops + 40) << "one instance: " << one.ops << " ops";
}

TEST(SharedBodies, ClassesAndDifferingStructureKeepTheirOwn) {
  Affine a(0.5f, 1.0f), b(2.0f, -3.0f);
  Halved h(0.5f), q(0.25f);                // literals differ: different bodies
  Table t({1, 2, 3, 4}), u({5, 6, 7, 8});  // different arrays: different bodies
  std::vector<const Shader*> mixed = {&h, &a, &t, &q, &b, &u};
  Outcome symbolic = run(mixed, ControlMode::Symbolic);
  expect_same_values(symbolic, run(mixed, ControlMode::Evaluated));
  Outcome alone = run({&a}, ControlMode::Symbolic);
  Outcome shared = run({&a, &b}, ControlMode::Symbolic);
  Outcome halves = run({&h, &q}, ControlMode::Symbolic), half = run({&h}, ControlMode::Symbolic);
  EXPECT_LT(shared.ops, 2 * alone.ops - 10);
  EXPECT_GE(halves.ops, 2 * half.ops - 10) << "bodies with different literals were merged";
}

TEST(SharedBodies, SideEffectsKeepSeparateRegions) {
  UInt32 counts = zeros<UInt32>(1);
  Counting a(0.5f, &counts), b(2.0f, &counts);
  Outcome symbolic = run({&a, &b}, ControlMode::Symbolic);
  uint32_t taken = 0;  // lanes with id 1 or 2 (of 0, 1, 2)
  for (uint32_t lane = 0; lane < 997; ++lane) taken += lane % 3 != 0;
  EXPECT_EQ(counts.to_vector()[0], taken);
  Outcome evaluated = run({&a, &b}, ControlMode::Evaluated);
  expect_same_values(symbolic, evaluated);
}

TEST(SharedBodies, ABodyThatReplaysDifferentlyKeepsItsRegions) {
  // Both trace x * 0 first, which makes them alike; replaying the first gives x * 1, which
  // is not the body they traced: the statement keeps their separate regions.
  Restless a, b;
  Outcome symbolic = run({&a, &b}, ControlMode::Symbolic);
  for (size_t i = 0; i < symbolic.values.size(); ++i) EXPECT_EQ(symbolic.values[i], 0.0f) << "lane " << i;
}

TEST(SharedBodies, InsideALoopAndWithTheInterpreter) {
  Affine a(0.5f, 1.0f), b(2.0f, -3.0f), c(-1.25f, 0.25f);
  Registry<const Shader> registry;
  for (const Shader* s : {&a, &b, &c}) registry.add(s);
  auto walk = [&](ControlMode mode) {
    UInt32 lane = arange<UInt32>(301);
    auto [x, i] = while_loop(
        std::tuple(cast<float>(lane) * 0.001f, lane * 0u), [](const Float&, const UInt32& i) { return i < 5u; },
        [&](const Float& x, const UInt32& i) {
          UInt32 ids = (lane + i) % 4u;
          auto [y] = dispatch(
              registry, ids, [](const Shader& s, const Float& x, const UInt32& l) { return std::tuple(s.shade(x, l)); },
              std::tuple(x, lane), mode);
          return std::tuple(y * 0.1f + x, i + 1u);
        },
        mode);
    eval(x);
    return x.to_vector();
  };
  std::vector<float> evaluated = walk(ControlMode::Evaluated);
  EXPECT_EQ(walk(ControlMode::Symbolic), evaluated);
  bool previous = flag(Flag::Interpreter);
  set_flag(Flag::Interpreter, true);
  std::vector<float> interpreted = walk(ControlMode::Symbolic);
  set_flag(Flag::Interpreter, previous);
  EXPECT_EQ(interpreted, evaluated);
}

}  // namespace
