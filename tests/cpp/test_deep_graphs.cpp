// Graphs far deeper than any call stack: every walk over the IR or the AD graph (freeing,
// scheduling, verifying, printing, traversals) must be iterative. Its own test binary, so
// a stack overflow fails this test and not the rest of the suite.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include "ir/verify.h"

using namespace kiln;

namespace {
constexpr size_t kMillion = 1000000;

/// `x + 1 + 1 + ...` (`steps` dependent additions) on a one-lane evaluated array.
Float chain(Float x, size_t steps) {
  for (size_t i = 0; i < steps; ++i) x = x + 1.f;
  return x;
}

/// Runs the test body on the interpreter (a million-statement kernel interprets in about a
/// second; LLVM would spend minutes compiling it), restoring the flag afterwards.
class DeepGraphs : public ::testing::Test {
 protected:
  void SetUp() override { set_flag(Flag::Interpreter, true); }
  void TearDown() override {
    set_flag(Flag::Interpreter, false);
    EXPECT_EQ(detail::verify_ir(), "");
  }
};
}  // namespace

TEST_F(DeepGraphs, MillionNodeChainIsFreedWithoutEvaluation) {
  size_t before = live_nodes();
  {
    Float x = chain(Float::from({0.f}), kMillion);
    EXPECT_GE(live_nodes(), before + kMillion);
  }
  EXPECT_EQ(live_nodes(), before);
}

TEST_F(DeepGraphs, MillionNodeChainEvaluates) {
  Float x = chain(Float::from({2.f}), kMillion);
  eval(x);
  EXPECT_EQ(x.read(0), 2.f + float(kMillion));
}

TEST_F(DeepGraphs, MillionNodeChainPrints) {
  Float x = chain(Float::from({0.f}), kMillion);
  EXPECT_GT(graphviz(x).size(), kMillion);
  EXPECT_GT(ir_listing().size(), kMillion);
}

TEST_F(DeepGraphs, MillionNodeChainDifferentiates) {
  Float x = Float::from({1.f});
  enable_grad(x);
  Float y = x;
  for (size_t i = 0; i < kMillion; ++i) y = y * 1.f;
  backward(y);
  EXPECT_EQ(grad(x).read(0), 1.f);
}

TEST(DeepGraphsLlvm, FiftyThousandStepChainOnAThousandLanes) {
  // The reported crash: x = x + 1.0 fifty thousand times on arange(1000), then eval.
  Float x = arange<Float>(1000);
  for (int i = 0; i < 50000; ++i) x = x + 1.f;
  eval(x);
  EXPECT_EQ(x.read(999), 999.f + 50000.f);
}
