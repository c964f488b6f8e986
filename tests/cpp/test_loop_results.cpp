// What a kernel stores of the symbolic loops it runs. A pure loop stores the results an
// array or a pending value reads once the kernel is done; those read later only through
// values computed from them in the kernel are computed again there, and the kernel that
// runs the loop a second time stores all that is still read; the results read only inside
// the kernel are never stored (a render's ray traversals keep nothing per ray that nobody
// reads). A loop with side effects stores every live result, so that reading one later
// does not run the side effects again.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

using namespace kiln;

namespace {

constexpr size_t kLanes = 1000;

/// i counts to lane % 7 while acc sums i; `counter` (when given) counts the iterations.
std::tuple<UInt32, Float> counting_loop(UInt32* counter) {
  UInt32 lane = arange<UInt32>(kLanes);
  return while_loop(
      std::tuple(zeros<UInt32>(kLanes), zeros<Float>(kLanes)),
      [&](const UInt32& i, const Float&) { return i < lane % 7u; },
      [&](const UInt32& i, const Float& acc) {
        if (counter) scatter_add(*counter, UInt32(1u), UInt32(0u));
        return std::tuple(i + 1u, acc + cast<float>(i));
      },
      ControlMode::Symbolic);
}

float expected_sum(uint32_t lane) {
  uint32_t n = lane % 7u;
  return float(n * (n - 1) / 2);
}

/// Evaluates `value` and returns the one launch that did it.
KernelLaunch evaluate_in_one_launch(const Float& value) {
  kernel_history(true);
  eval(value);
  std::vector<KernelLaunch> launches = kernel_history(true);
  if (launches.size() != 1) throw std::runtime_error(std::to_string(launches.size()) + " launches, not 1");
  return launches[0];
}

}  // namespace

TEST(LoopResults, APureLoopReadOnlyInItsKernelStoresNothingElse) {
  Float doubled;
  {
    auto [i, acc] = counting_loop(nullptr);
    doubled = acc * 2.0f + cast<float>(i);
  }
  EXPECT_EQ(evaluate_in_one_launch(doubled).outputs, 1u) << "i and acc are read by doubled alone";
  EXPECT_EQ(doubled.read(13), 2.0f * expected_sum(13) + 6.0f);
}

TEST(LoopResults, APureLoopStoresTheResultsReadLater) {
  auto [i, acc] = counting_loop(nullptr);
  Float doubled = acc * 2.0f;
  EXPECT_EQ(evaluate_in_one_launch(doubled).outputs, 3u) << "doubled, and i and acc, which arrays hold";
  EXPECT_EQ(i.read(13), 6u);
  EXPECT_EQ(acc.read(13), expected_sum(13));
  EXPECT_TRUE(kernel_history(true).empty()) << "the loop ran once";
}

TEST(LoopResults, APureLoopStoresAResultAPendingValueReads) {
  Float doubled;
  UInt32 tripled;
  {
    auto [i, acc] = counting_loop(nullptr);
    doubled = acc * 2.0f + cast<float>(i);
    tripled = i * 3u;  // left pending: it reads i after the kernel
  }
  EXPECT_EQ(evaluate_in_one_launch(doubled).outputs, 2u) << "doubled, and i (for tripled); not acc";
  EXPECT_EQ(doubled.read(13), 2.0f * expected_sum(13) + 6.0f);
  kernel_history(true);
  EXPECT_EQ(tripled.read(13), 18u);
  std::vector<KernelLaunch> later = kernel_history(true);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].ir().find("LoopBegin"), std::string::npos) << "the loop ran once:\n" << later[0].ir();
}

TEST(LoopResults, APureLoopReadThroughKeptValuesRunsAtMostTwice) {
  Float doubled, tripled, quadrupled;
  {
    auto [i, acc] = counting_loop(nullptr);
    Float scaled = cast<float>(i) * 3.0f;
    doubled = acc * 2.0f + scaled;
    tripled = scaled + 1.0f;  // pending: they read i through scaled
    quadrupled = scaled * 4.0f / 3.0f;
  }
  EXPECT_EQ(evaluate_in_one_launch(doubled).outputs, 1u) << "i is read later only through scaled";
  KernelLaunch second = evaluate_in_one_launch(tripled);
  EXPECT_NE(second.ir().find("LoopBegin"), std::string::npos) << "the loop runs again";
  EXPECT_EQ(second.outputs, 2u) << "tripled, and i for quadrupled this time";
  KernelLaunch third = evaluate_in_one_launch(quadrupled);
  EXPECT_EQ(third.ir().find("LoopBegin"), std::string::npos) << "not a third time:\n" << third.ir();
  EXPECT_EQ(doubled.read(13), 2.0f * expected_sum(13) + 18.0f);
  EXPECT_EQ(tripled.read(13), 19.0f);
  EXPECT_EQ(quadrupled.read(13), 24.0f);
}

TEST(LoopResults, ALoopWithSideEffectsStoresEveryLiveResult) {
  UInt32 counter = zeros<UInt32>(1);
  auto [i, acc] = counting_loop(&counter);
  Float doubled = acc * 2.0f;
  EXPECT_EQ(evaluate_in_one_launch(doubled).outputs, 3u) << "doubled, and the live results i and acc";
  EXPECT_EQ(i.read(13), 6u);
  EXPECT_EQ(acc.read(13), expected_sum(13));
  EXPECT_TRUE(kernel_history(true).empty()) << "the loop ran once";
  uint32_t iterations = 0;
  for (uint32_t lane = 0; lane < kLanes; ++lane) iterations += lane % 7u;
  EXPECT_EQ(counter.read(0), iterations);
}
