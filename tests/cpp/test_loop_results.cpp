// What a kernel stores of the symbolic loops it runs. A pure loop's results are values like
// any other: stored when asked for, computed again where read later (a render's ray
// traversals keep nothing per ray that nobody reads). A loop with side effects stores every
// live result, so that reading one later does not run the side effects again.
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

/// Evaluates `value` alone; the one kernel that ran.
KernelLaunch evaluate(const Float& value) {
  kernel_history(true);
  eval(value);
  std::vector<KernelLaunch> launches = kernel_history(true);
  EXPECT_EQ(launches.size(), 1u);
  return launches.empty() ? KernelLaunch() : launches[0];
}

float expected_sum(uint32_t lane) {
  uint32_t n = lane % 7u;
  return float(n * (n - 1) / 2);
}

}  // namespace

TEST(LoopResults, APureLoopStoresOnlyWhatIsAskedFor) {
  auto [i, acc] = counting_loop(nullptr);
  Float doubled = acc * 2.0f;
  EXPECT_EQ(evaluate(doubled).outputs, 1u) << "i and acc are live, but only doubled was asked for";
  // i, read later, is computed again (a second kernel) and right.
  EXPECT_EQ(i.read(13), 6u);
  EXPECT_EQ(kernel_history(true).size(), 1u);
  EXPECT_EQ(doubled.read(13), 2.0f * expected_sum(13));
}

TEST(LoopResults, ALoopWithSideEffectsStoresEveryLiveResult) {
  UInt32 counter = zeros<UInt32>(1);
  auto [i, acc] = counting_loop(&counter);
  Float doubled = acc * 2.0f;
  EXPECT_EQ(evaluate(doubled).outputs, 3u) << "doubled, and the live results i and acc";
  EXPECT_EQ(i.read(13), 6u);
  EXPECT_EQ(acc.read(13), expected_sum(13));
  EXPECT_TRUE(kernel_history(true).empty()) << "the loop ran once";
  uint32_t iterations = 0;
  for (uint32_t lane = 0; lane < kLanes; ++lane) iterations += lane % 7u;
  EXPECT_EQ(counter.read(0), iterations);
}
